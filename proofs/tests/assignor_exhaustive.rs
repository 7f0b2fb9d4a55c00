//! Small-scope exhaustive proof of the uniform-v2 assignor: every group of every family in
//! `enumerate::families` is assigned, and all six properties are checked against the
//! brute-force oracle (determinism with one reordering per group, rotating through all of
//! them). `REBALANCE_EXHAUSTIVE=deep` selects larger bounds for manual runs, `quick` smaller
//! ones (for mutation testing).

use std::time::Instant;

use rebalance::{Assignment, Assignor, GroupSpec, SpecError};
use rebalance_proofs::assignor::enumerate::{self, Depth, Scope};
use rebalance_proofs::assignor::{Oracle, REORDERINGS, check_assignor};

fn assign(spec: &GroupSpec) -> Result<Assignment, SpecError> {
    rebalance::UniformV2.assign(spec)
}

/// Runs one family on `threads` threads; panics with the first failing group.
fn run(scope: &Scope, threads: u64) -> u64 {
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|shard| {
                s.spawn(move || {
                    let mut n = 0u64;
                    enumerate::for_each(scope, (shard, threads), |spec| {
                        let i = (n % REORDERINGS.len() as u64) as usize;
                        let report =
                            check_assignor(spec, assign, &REORDERINGS[i..=i], Some(Oracle::Brute));
                        assert!(
                            report.is_ok(),
                            "uniform-v2 fails on this group:\n{}\n{report}",
                            spec.to_json()
                        );
                        n += 1;
                    })
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("shard")).sum()
    })
}

#[test]
fn uniform_v2_satisfies_all_six_properties_on_every_small_group() {
    let depth = Depth::from_env();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get() as u64);
    let mut total = 0;
    let start = Instant::now();
    for scope in enumerate::families(depth) {
        let family_start = Instant::now();
        let expected = enumerate::count(&scope);
        let checked = run(&scope, threads);
        assert_eq!(checked, expected, "{}: enumeration lost groups", scope.name);
        println!(
            "{}: {checked} groups, {:.1}s",
            scope.describe(),
            family_start.elapsed().as_secs_f64()
        );
        total += checked;
    }
    println!(
        "exhaustive ({depth:?}): {total} distinct groups checked in {:.1}s on {threads} threads",
        start.elapsed().as_secs_f64()
    );
}
