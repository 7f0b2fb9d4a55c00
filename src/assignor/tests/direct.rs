//! Tests of the direct choice of extras (`homogeneous/direct.rs`): on large homogeneous joins,
//! leaves and random claims it is taken, and whenever it is, the objective values equal the
//! flow's; with a planted fault (nothing kept above q, no bound check), the oracle catches
//! what it lets through.

use super::super::homogeneous::{Route, direct_skip_bound_check};
use super::super::uniform::assign_with;
use super::super::*;
use super::homogeneous::{random_homogeneous, routes};
use super::oracle::{Rng, checked_against_flow, score};

/// Random homogeneous specs of at least 16 members (where the direct construction is tried),
/// with claims of every kind in turn (random, a join, a leave).
fn large_specs(seed: u64, count: usize) -> Vec<GroupSpec> {
    let mut rng = Rng(seed);
    let mut specs = Vec::new();
    while specs.len() < count {
        let kind = specs.len() as u64 % 3;
        let spec = random_homogeneous(&mut rng, 72, 10, kind);
        if spec.members.len() >= 16 {
            specs.push(spec);
        }
    }
    specs
}

#[test]
fn the_direct_construction_is_taken_and_optimal_on_large_groups() {
    let mut direct = [0usize; 3];
    for (case, spec) in large_specs(41, 150).iter().enumerate() {
        checked_against_flow(case, spec);
        if routes(spec).contains(&Route::Direct) {
            direct[case % 3] += 1;
        }
    }
    println!("direct route taken (random claims, joins, leaves, of 50 each): {direct:?}");
    // Joins and leaves of a stable assignment are what it is for.
    assert!(
        direct[1] >= 35 && direct[2] >= 30,
        "direct taken {direct:?}"
    );
}

#[test]
fn a_direct_construction_without_its_bound_check_is_caught() {
    let specs = large_specs(43, 150);
    let mut caught = 0;
    direct_skip_bound_check(true);
    for spec in &specs {
        let fast = UniformV2.assign(spec).unwrap();
        let flow = assign_with(spec, false).unwrap();
        if score(spec, &fast) != score(spec, &flow) {
            caught += 1;
        }
    }
    direct_skip_bound_check(false);
    println!(
        "unchecked direct constructions caught: {caught} of {}",
        specs.len()
    );
    // 64 of 150 measured.
    assert!(
        caught >= 30,
        "only {caught} suboptimal choices let through were caught"
    );
}
