//! Property-based proofs of the uniform-v2 assignor on groups too large for brute force, with
//! the min-cost-flow oracle:
//!
//! - random groups of up to 300 members and up to 4,800 partitions, and a few with thousands
//!   of partitions, satisfy all six properties;
//! - sequences of events (joins, leaves, subscription changes, new partitions, rack moves),
//!   each assignment becoming the next one's previous assignment at generation + 1: every step
//!   satisfies all six properties, and a step with no event changes nothing.
//!
//! `PROPTEST_CASES` overrides the case counts.

use proptest::prelude::*;
use rebalance::{Assignment, Assignor, GroupSpec, SpecError};
use rebalance_proofs::assignor::generate::{self, Bounds, Event, SplitMix64};
use rebalance_proofs::assignor::{Oracle, REORDERINGS, check_assignor, with_owned};

fn assign(spec: &GroupSpec) -> Result<Assignment, SpecError> {
    rebalance::UniformV2.assign(spec)
}

fn bounds() -> impl Strategy<Value = Bounds> {
    (1u32..=300, 1u32..=12, 0u32..=400, 0u32..=4).prop_map(
        |(members, topics, partitions, racks)| Bounds {
            members,
            topics,
            partitions,
            racks,
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn large_groups_satisfy_all_six_properties(bounds in bounds(), seed in any::<u64>()) {
        let spec = generate::spec(&mut SplitMix64(seed), &bounds);
        let report = check_assignor(&spec, assign, &REORDERINGS, Some(Oracle::Flow));
        prop_assert!(report.is_ok(), "{report}\n{}", spec.to_json());
    }

    #[test]
    fn thousands_of_partitions_satisfy_all_six_properties(
        members in 200u32..=300,
        topics in 6u32..=10,
        partitions in 500u32..=900,
        racks in 1u32..=4,
        seed in any::<u64>(),
    ) {
        let bounds = Bounds { members, topics, partitions, racks };
        let spec = generate::spec(&mut SplitMix64(seed), &bounds);
        let report = check_assignor(&spec, assign, &REORDERINGS[..1], Some(Oracle::Flow));
        prop_assert!(report.is_ok(), "{report}\n{}", spec.to_json());
    }

    #[test]
    fn event_sequences_keep_all_six_properties(
        members in 1u32..=40,
        topics in 1u32..=6,
        partitions in 0u32..=40,
        racks in 0u32..=3,
        seed in any::<u64>(),
        steps in 1usize..=12,
    ) {
        let bounds = Bounds { members, topics, partitions, racks };
        let mut choices = SplitMix64(seed);
        let mut spec = generate::spec(&mut choices, &bounds);
        let mut previous: Option<Assignment> = None;
        for step in 0..steps {
            // The first step assigns the generated group; each later one applies an event.
            let mut event = None;
            if let Some(prev) = &previous {
                let next = generate::event(&mut choices, &bounds, topics, step as u32);
                spec = with_owned(&spec, prev);
                generate::apply(&mut spec, &next, racks);
                event = Some(next);
            }
            let i = step % REORDERINGS.len();
            let report = check_assignor(&spec, assign, &REORDERINGS[i..=i], Some(Oracle::Flow));
            prop_assert!(report.is_ok(), "step {step} ({event:?}): {report}\n{}", spec.to_json());
            let output = assign(&spec).map_err(|e| TestCaseError::fail(e.to_string()))?;
            if let (Some(Event::Nothing), Some(prev)) = (&event, &previous) {
                prop_assert_eq!(&output, prev, "step {} changed nothing but moved partitions", step);
            }
            previous = Some(output);
        }
    }
}
