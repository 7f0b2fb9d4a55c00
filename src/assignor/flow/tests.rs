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

/// Presets for `edges`: the reference's optimum, a maximum flow optimal for random other
/// costs (often with negative cycles to cancel), an optimum for smaller supplies (a flow of
/// less value, so that phases follow the warm start) and arbitrary numbers within capacity.
fn proposals(seed: &mut u64, nodes: usize, edges: &[Spec]) -> Vec<Vec<i32>> {
    let mut below = |n: u64| {
        *seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (*seed >> 33) % n
    };
    let recosted: Vec<Spec> = edges
        .iter()
        .map(|&(u, v, cap, c, convex)| {
            let c = c.map(|_| below(3) as i8 - 1);
            (u, v, cap, c, convex.map(|_| below(4) as i64))
        })
        .collect();
    let smaller: Vec<Spec> = edges
        .iter()
        .map(|&(u, v, cap, c, convex)| {
            let cap = if u == 0 {
                below(cap as u64 + 1) as i32
            } else {
                cap
            };
            (u, v, cap, c, convex)
        })
        .collect();
    let arbitrary = edges.iter().map(|e| below(e.2 as u64 + 1) as i32).collect();
    vec![
        reference(nodes, edges).1,
        reference(nodes, &recosted).1,
        reference(nodes, &smaller).1,
        arbitrary,
    ]
}

/// The certification with its distances packed finds, edge for edge, the flows it finds
/// with them kept as costs, cancellations and the phases after a partial warm start
/// included.
#[test]
fn packed_and_unpacked_certifications_find_the_same_flows() {
    use super::{CANCELLED, CERTIFIED};
    let mut seed = 0x9ac4_ed00_5eed_0001_u64;
    let (certified, cancelled) = (CERTIFIED.with(|c| c.get()), CANCELLED.with(|c| c.get()));
    let mut partial = 0;
    for case in 0..600 {
        let (nodes, edges) = network(&mut seed, 6);
        let (value, _) = reference(nodes, &edges);
        for (kind, preset) in proposals(&mut seed, nodes, &edges).iter().enumerate() {
            let packed = solve_with(nodes, &edges, preset, Planted::None);
            let unpacked = solve_with(nodes, &edges, preset, Planted::Unpacked);
            assert_eq!(packed, unpacked, "case {case}, proposal {kind}");
            assert_eq!(packed.0, value, "case {case}, proposal {kind}");
            partial += usize::from(kind == 2 && preset.iter().any(|&x| x != 0));
        }
    }
    let certified = CERTIFIED.with(|c| c.get()) - certified;
    let cancelled = CANCELLED.with(|c| c.get()) - cancelled;
    assert!(certified > 1500, "only {certified} warm starts certified");
    assert!(cancelled > 500, "only {cancelled} cycles cancelled");
    assert!(partial > 300, "only {partial} partial proposals");
}

/// Where every cost lies in the last component alone (no convex edge), the certification
/// with its distances kept as that component finds, edge for edge, the flows it finds with
/// them kept as costs.
#[test]
fn last_component_and_unpacked_certifications_find_the_same_flows() {
    use super::{CANCELLED, CERTIFIED, Network};
    let mut seed = 0x1a57_c0de_5eed_0002_u64;
    let (certified, cancelled) = (CERTIFIED.with(|c| c.get()), CANCELLED.with(|c| c.get()));
    for case in 0..600 {
        let (nodes, edges) = network(&mut seed, 6);
        // Each cost's components summed into the last; a convex edge's base decides its cost.
        let edges: Vec<Spec> = edges
            .iter()
            .map(|&(u, v, cap, c, convex)| {
                let last = match convex {
                    Some(b) => b as i8 - 2,
                    None => c.iter().sum::<i8>(),
                };
                (u, v, cap, [0, 0, 0, last], None)
            })
            .collect();
        let mut net = Network::new(nodes);
        for &(u, v, cap, c, _) in &edges {
            net.edge(u, v, cap, c);
        }
        let _ = net.lay_out();
        assert!(net.last_only, "case {case}");
        let (value, _) = reference(nodes, &edges);
        for (kind, preset) in proposals(&mut seed, nodes, &edges).iter().enumerate() {
            let last = solve_with(nodes, &edges, preset, Planted::None);
            let unpacked = solve_with(nodes, &edges, preset, Planted::Unpacked);
            assert_eq!(last, unpacked, "case {case}, proposal {kind}");
            assert_eq!(last.0, value, "case {case}, proposal {kind}");
        }
    }
    let certified = CERTIFIED.with(|c| c.get()) - certified;
    let cancelled = CANCELLED.with(|c| c.get()) - cancelled;
    assert!(certified > 2500, "only {certified} warm starts certified");
    assert!(cancelled > 3000, "only {cancelled} cycles cancelled");
}

/// Packing is one to one on costs with components in (−2³¹, 2³¹), adds as the costs add and
/// orders them lexicographically.
#[test]
fn packing_keeps_sums_and_the_lexicographic_order() {
    use super::certify::{Dist, Packed};
    use super::{Cost, add, less};
    let mut seed = 0x0ac4_0000_1234_5678_u64;
    let edge = (1i64 << 31) - 1;
    let mut draw = || -> Cost {
        let mut c = [0i64; 4];
        for x in &mut c {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            *x = match seed % 4 {
                0 => (seed >> 8) as i64 % 3 - 1,
                1 => [edge, -edge, 0][(seed >> 8) as usize % 3],
                _ => ((seed >> 8) % (1 << 31)) as i64 - (1 << 30),
            };
        }
        c
    };
    for _ in 0..20_000 {
        let (a, b) = (draw(), draw());
        assert_eq!(Packed::of(a).cost(), a);
        assert_eq!(
            Packed::of(a).below(&Packed::of(b)),
            less(&a, &b),
            "{a:?} {b:?}"
        );
        assert_eq!(Packed::of(a) == Packed::of(b), a == b);
        let half = a.map(|x| x / 2);
        let other = b.map(|x| x / 2);
        assert_eq!(
            Packed::of(half).plus(other),
            Packed::of(add(half, other)),
            "{half:?} {other:?}"
        );
        let small = b.map(|x| (x % 128) as i8);
        assert_eq!(
            Packed::of(half).plus_fixed(small).cost(),
            add(half, small.map(i64::from))
        );
    }
}

/// A network whose convex costs could carry a distance out of the packed range is certified
/// with costs, and still finds the reference's optimum.
#[test]
fn large_convex_costs_are_certified_unpacked() {
    use super::certify::packable;
    use super::{CERTIFIED, Network};
    let big = 1i64 << 40;
    let edges: Vec<Spec> = vec![
        (0, 1, 3, [0; 4], None),
        (1, 2, 2, [0, 0, 0, -1], None),
        (1, 2, 2, [0; 4], Some(big)),
        (0, 2, 1, [0; 4], None),
    ];
    let mut net = Network::new(3);
    for &(u, v, cap, c, convex) in &edges {
        match convex {
            None => net.edge(u, v, cap, c),
            Some(b) => net.convex_edge(u, v, cap, b),
        };
    }
    let _ = net.lay_out();
    assert!(!packable(&net));
    let (value, optimum) = reference(3, &edges);
    let certified = CERTIFIED.with(|c| c.get());
    assert_eq!(
        solve_with(3, &edges, &optimum, Planted::None),
        (value, optimum)
    );
    assert_eq!(CERTIFIED.with(|c| c.get()), certified + 1);
}

/// The reverse costs of the lay-out, negated four bytes at once, are those negated one by
/// one (wrapping), for every value of a component in every lane.
#[test]
fn negated_costs_are_negated_lane_by_lane() {
    for x in i8::MIN..=i8::MAX {
        for lane in 0..4 {
            let mut c = [3, -1, 0, 127];
            c[lane] = x;
            assert_eq!(super::layout::negated(c), c.map(i8::wrapping_neg), "{c:?}");
        }
    }
}
