//! The pool of buffers ([`pool`](super::pool)): a solve on a thread that has solved larger
//! networks before, whose buffers it reuses, finds the same flow as on a fresh thread.

use super::Planted;
use super::pool::KEEP_CONTENTS;
use crate::assignor::flow_reference;
use crate::assignor::flow_reference::tests::Spec;
use crate::assignor::tests::warm::{reference, solve_with};

/// A random network in the assignor's shape with layers of 1 to `widest` nodes.
fn network(seed: &mut u64, widest: u64) -> (usize, Vec<Spec>) {
    flow_reference::tests::random_network(
        &mut |n| {
            // xorshift64*: any fixed sequence will do.
            *seed ^= *seed >> 12;
            *seed ^= *seed << 25;
            *seed ^= *seed >> 27;
            (seed.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) % n
        },
        widest,
    )
}

/// The solver's flow on `edges` with `presets` proposed (value, per-edge flows), or `None`
/// if it panicked.
fn solve(nodes: usize, edges: &[Spec], presets: &[i32]) -> Option<(i64, Vec<i32>)> {
    std::panic::catch_unwind(|| solve_with(nodes, edges, presets, Planted::None)).ok()
}

/// On one thread, alternately a large network and a small one, each solved cold and warm
/// (the reference's flow proposed); returns how many small solves differ from the reference
/// (cold) or from the same solve on a fresh thread (warm). With `keep_contents`, the planted
/// fault: buffers go back to the pool without being emptied.
fn small_after_large(keep_contents: bool) -> usize {
    std::thread::spawn(move || {
        KEEP_CONTENTS.with(|k| k.set(keep_contents));
        let mut seed = 0x5eed_0f90_01c0_ffee_u64;
        let mut wrong = 0;
        for _ in 0..60 {
            let (nodes, edges) = network(&mut seed, 40);
            let (_, optimum) = reference(nodes, &edges);
            let _ = solve(nodes, &edges, &[]);
            let _ = solve(nodes, &edges, &optimum);
            let (nodes, edges) = network(&mut seed, 5);
            let cold = reference(nodes, &edges);
            if solve(nodes, &edges, &[]).as_ref() != Some(&cold) {
                wrong += 1;
            }
            let (e, o) = (edges.clone(), cold.1.clone());
            let fresh = std::thread::spawn(move || solve(nodes, &e, &o))
                .join()
                .ok()
                .flatten();
            assert!(fresh.is_some(), "a fresh thread's solve panicked");
            if solve(nodes, &edges, &cold.1) != fresh {
                wrong += 1;
            }
        }
        wrong
    })
    .join()
    .unwrap_or(usize::MAX)
}

#[test]
fn reused_buffers_give_the_flows_of_a_fresh_thread() {
    assert_eq!(small_after_large(false), 0);
}

/// The test above has teeth: buffers given back with their contents spoil later solves.
#[test]
fn buffers_reused_with_their_contents_are_caught() {
    let wrong = small_after_large(true);
    assert!(wrong >= 60, "only {wrong} of 120 spoiled solves caught");
}
