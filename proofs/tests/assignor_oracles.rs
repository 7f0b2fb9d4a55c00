//! The two oracles agree: brute force and the min-cost flow find the same lexicographic optimum
//! on random tiny groups, and the flow's own assignment passes the checker with either oracle.

use rebalance_proofs::assignor::generate::{self, Bounds, SplitMix64};
use rebalance_proofs::assignor::{
    Oracle, Problem, brute, check_with, flow, optimum_of, oracle_assignment,
};

#[test]
fn brute_force_and_flow_agree_on_tiny_groups() {
    let mut checked = 0;
    for seed in 0..20_000u64 {
        let spec = generate::spec(&mut SplitMix64(seed), &Bounds::TINY);
        let brute = optimum_of(&spec, Some(Oracle::Brute)).expect("valid spec");
        let flow = optimum_of(&spec, Some(Oracle::Flow)).expect("valid spec");
        assert_eq!(
            brute.0,
            flow.0,
            "seed {seed}: oracles disagree on\n{}",
            spec.to_json()
        );
        let output = oracle_assignment(&spec).expect("valid spec");
        for oracle in [Oracle::Brute, Oracle::Flow] {
            let report = check_with(&spec, &output, Some(oracle));
            assert!(
                report.is_ok(),
                "seed {seed}: flow's assignment fails the {oracle:?} check:\n{report}\n{}",
                spec.to_json()
            );
        }
        checked += 1;
    }
    println!("brute force and flow agree on {checked} random tiny groups");
}

#[test]
fn brute_force_and_flow_agree_on_wider_groups() {
    // Up to 4 members and 5 partitions per topic: still within brute force's reach.
    let bounds = Bounds {
        members: 4,
        topics: 2,
        partitions: 5,
        racks: 3,
    };
    let mut checked = 0;
    for seed in 0..3_000u64 {
        let spec = generate::spec(&mut SplitMix64(seed), &bounds);
        let problem = Problem::from_spec(&spec).expect("valid spec");
        let Some((brute, _)) = brute::optimum(&problem) else {
            continue;
        };
        let (flow, _) = flow::optimum(&problem);
        assert_eq!(
            brute,
            flow,
            "seed {seed}: oracles disagree on\n{}",
            spec.to_json()
        );
        checked += 1;
    }
    assert!(checked > 1_000, "only {checked} groups were small enough");
}
