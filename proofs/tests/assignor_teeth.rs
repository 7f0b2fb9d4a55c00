//! The checker has teeth: for each property, a deliberately broken output (or assignor) is
//! named by the right [`Violation`], with the right partition, members and numbers.

use rebalance::{Assignment, AssignmentMap, GroupSpec, SpecError, TopicPartition};
use rebalance_proofs::assignor::{
    Oracle, Violation, check, check_determinism, check_fixed_point, check_with, oracle_assignment,
};

fn spec(json: &str) -> GroupSpec {
    GroupSpec::from_json(json).expect("test spec is valid")
}

fn output(json: &str) -> Assignment {
    Assignment::from_json(&format!("{{\"assignment\": {json}}}")).expect("test output parses")
}

/// The reference's example: A, B and C all subscribe to T1, T2 and T3 of three partitions.
fn example() -> GroupSpec {
    spec(
        r#"{"topics": [{"name": "T1", "partitions": 3}, {"name": "T2", "partitions": 3},
                       {"name": "T3", "partitions": 3}],
            "members": [{"id": "A", "subscriptions": ["T1", "T2", "T3"]},
                        {"id": "B", "subscriptions": ["T1", "T2", "T3"]},
                        {"id": "C", "subscriptions": ["T1", "T2", "T3"]}]}"#,
    )
}

const SPREAD: &str = r#"{"A": {"T1": [0], "T2": [0], "T3": [0]},
                         "B": {"T1": [1], "T2": [1], "T3": [1]},
                         "C": {"T1": [2], "T2": [2], "T3": [2]}}"#;

fn tp(topic: &str, p: i32) -> TopicPartition {
    TopicPartition::new(topic, p)
}

#[test]
fn a_correct_output_passes() {
    let report = check(&example(), &output(SPREAD));
    assert!(report.is_ok(), "{report}");
    assert_eq!(report.to_string(), "");
}

#[test]
fn duplicated_partition_is_named() {
    let out = output(
        r#"{"A": {"T1": [0, 2], "T2": [0], "T3": [0]}, "B": {"T1": [1], "T2": [1], "T3": [1]},
            "C": {"T1": [2], "T2": [2], "T3": [2]}}"#,
    );
    let report = check(&example(), &out);
    assert_eq!(
        report.violations,
        vec![Violation::Duplicate {
            partition: tp("T1", 2),
            members: vec!["A".into(), "C".into()]
        }]
    );
    assert_eq!(report.to_string(), "T1-2 assigned to A and C\n");
}

#[test]
fn dropped_partition_is_named() {
    let out = output(
        r#"{"A": {"T2": [0], "T3": [0]}, "B": {"T1": [1], "T2": [1], "T3": [1]},
            "C": {"T1": [2], "T2": [2], "T3": [2]}}"#,
    );
    let report = check(&example(), &out);
    assert_eq!(
        report.violations,
        vec![Violation::Unassigned {
            partition: tp("T1", 0)
        }]
    );
    assert_eq!(report.to_string(), "T1-0 unassigned\n");
}

#[test]
fn partition_given_to_a_non_subscriber_is_named() {
    let s = spec(
        r#"{"topics": [{"name": "T1", "partitions": 2}, {"name": "T2", "partitions": 2}],
            "members": [{"id": "A", "subscriptions": ["T1", "T2"]},
                        {"id": "B", "subscriptions": ["T1"]}]}"#,
    );
    let out = output(r#"{"A": {"T1": [0], "T2": [0]}, "B": {"T1": [1], "T2": [1]}}"#);
    let report = check(&s, &out);
    assert_eq!(
        report.violations,
        vec![Violation::NotSubscribed {
            partition: tp("T2", 1),
            member: "B".into()
        }]
    );
    assert_eq!(
        report.to_string(),
        "T2-1 assigned to B, which does not subscribe to T2\n"
    );
}

#[test]
fn missing_unknown_and_out_of_range_entries_are_named() {
    let out = output(
        r#"{"A": {"T1": [0, 3], "T2": [0], "T3": [0], "T9": [0]},
            "B": {"T1": [1], "T2": [1], "T3": [1]}, "Z": {}}"#,
    );
    let report = check(&example(), &out);
    let v = &report.violations;
    assert!(
        v.contains(&Violation::MissingMember { member: "C".into() }),
        "{report}"
    );
    assert!(
        v.contains(&Violation::UnknownMember { member: "Z".into() }),
        "{report}"
    );
    assert!(
        v.contains(&Violation::UnknownTopic {
            member: "A".into(),
            topic: "T9".into()
        }),
        "{report}"
    );
    assert!(
        v.contains(&Violation::OutOfRange {
            member: "A".into(),
            topic: "T1".into(),
            partition: 3,
            partitions: 3
        }),
        "{report}"
    );
    assert!(
        v.contains(&Violation::Unassigned {
            partition: tp("T1", 2)
        }),
        "{report}"
    );
    assert!(
        report
            .to_string()
            .contains("member C missing from the output")
    );
}

#[test]
fn unspread_output_is_named() {
    // uniform-v1's output for the reference example: balanced totals, no spread.
    let out = output(r#"{"A": {"T1": [0, 1, 2]}, "B": {"T2": [0, 1, 2]}, "C": {"T3": [0, 1, 2]}}"#);
    let report = check(&example(), &out);
    assert_eq!(report.violations.len(), 9, "{report}");
    assert!(report.violations.contains(&Violation::Spread {
        member: "A".into(),
        topic: "T1".into(),
        count: 3,
        min: 1,
        max: 1
    }));
    assert!(
        report
            .to_string()
            .contains("A has 3 partitions of T1, spread allows 1..=1")
    );
    assert!(
        report
            .to_string()
            .contains("B has 0 partitions of T1, spread allows 1..=1")
    );
}

#[test]
fn an_extra_partition_on_the_wrong_member_breaks_local_balance() {
    // A takes the spare partition of T1 although B has three fewer partitions.
    let s = spec(
        r#"{"topics": [{"name": "T1", "partitions": 3}, {"name": "T2", "partitions": 2}],
            "members": [{"id": "A", "subscriptions": ["T1", "T2"]},
                        {"id": "B", "subscriptions": ["T1"]}]}"#,
    );
    let out = output(r#"{"A": {"T1": [0, 1], "T2": [0, 1]}, "B": {"T1": [2]}}"#);
    let report = check(&s, &out);
    assert_eq!(
        report.violations,
        vec![
            Violation::LocalBalance {
                partition: tp("T1", 0),
                from: "A".into(),
                from_load: 4,
                to: "B".into(),
                to_load: 1
            },
            Violation::Balance {
                sum_load_sq: 17,
                optimum: 13
            }
        ]
    );
}

#[test]
fn balance_suboptimal_output_without_a_local_move_is_named() {
    // No single move helps (every move is to a member one partition lighter), but the chain
    // T1 A→B, T2 B→C reaches loads 2, 2, 2.
    let s = spec(
        r#"{"topics": [{"name": "T0", "partitions": 2}, {"name": "T1", "partitions": 1},
                       {"name": "T2", "partitions": 3}],
            "members": [{"id": "A", "subscriptions": ["T0", "T1"]},
                        {"id": "B", "subscriptions": ["T1", "T2"]},
                        {"id": "C", "subscriptions": ["T2"]}]}"#,
    );
    let out = output(r#"{"A": {"T0": [0, 1], "T1": [0]}, "B": {"T2": [0, 1]}, "C": {"T2": [2]}}"#);
    for oracle in [Oracle::Brute, Oracle::Flow] {
        let report = check_with(&s, &out, Some(oracle));
        assert_eq!(
            report.violations,
            vec![Violation::Balance {
                sum_load_sq: 14,
                optimum: 12
            }]
        );
        assert_eq!(report.to_string(), "Σload² 14, optimum 12\n");
    }
}

fn racks() -> GroupSpec {
    spec(
        r#"{"rack_aware": true,
            "topics": [{"name": "T1", "partitions": 2, "replica_racks": [["r1"], ["r2"]]}],
            "members": [{"id": "A", "rack": "r1", "subscriptions": ["T1"],
                         "owned": [{"topic": "T1", "partitions": [1]}], "generation": 3},
                        {"id": "B", "rack": "r2", "subscriptions": ["T1"],
                         "owned": [{"topic": "T1", "partitions": [0]}], "generation": 3}]}"#,
    )
}

#[test]
fn rack_suboptimal_output_is_named() {
    // Keeping both previous owners is worth less than aligning both partitions.
    let out = output(r#"{"A": {"T1": [1]}, "B": {"T1": [0]}}"#);
    for oracle in [Oracle::Brute, Oracle::Flow] {
        let report = check_with(&racks(), &out, Some(oracle));
        assert_eq!(
            report.violations,
            vec![Violation::Rack {
                aligned: 0,
                optimum: 2
            }]
        );
    }
    assert!(check(&racks(), &output(r#"{"A": {"T1": [0]}, "B": {"T1": [1]}}"#)).is_ok());
}

#[test]
fn partition_moved_for_no_reason_is_named() {
    let mut s = racks();
    s.rack_aware = false;
    let out = output(r#"{"A": {"T1": [0]}, "B": {"T1": [1]}}"#);
    for oracle in [Oracle::Brute, Oracle::Flow] {
        let report = check_with(&s, &out, Some(oracle));
        assert_eq!(
            report.violations,
            vec![Violation::Sticky {
                retained: 0,
                optimum: 2
            }]
        );
        assert_eq!(report.to_string(), "retained 0, optimum 2\n");
    }
}

#[test]
fn stale_and_conflicting_claims_give_no_previous_owner() {
    // A's claim of T1-0 is stale (generation 1 < 3); B and C conflict on T1-1 at generation 3.
    let s = spec(
        r#"{"topics": [{"name": "T1", "partitions": 3}],
            "members": [
              {"id": "A", "subscriptions": ["T1"], "generation": 1,
               "owned": [{"topic": "T1", "partitions": [0, 1, 2]}]},
              {"id": "B", "subscriptions": ["T1"], "generation": 3,
               "owned": [{"topic": "T1", "partitions": [0, 1]}]},
              {"id": "C", "subscriptions": ["T1"], "generation": 3,
               "owned": [{"topic": "T1", "partitions": [1, 7]}, {"topic": "T9", "partitions": [0]}]}]}"#,
    );
    // Previous owners: T1-0 → B, T1-1 → none, T1-2 → A. Best: retain both.
    let good = output(r#"{"A": {"T1": [2]}, "B": {"T1": [0]}, "C": {"T1": [1]}}"#);
    assert!(check(&s, &good).is_ok());
    // Giving T1-0 to A (stale claimant) loses B's retention.
    let stale = output(r#"{"A": {"T1": [0]}, "B": {"T1": [2]}, "C": {"T1": [1]}}"#);
    assert_eq!(
        check(&s, &stale).violations,
        vec![Violation::Sticky {
            retained: 0,
            optimum: 2
        }]
    );
}

type AssignFn = fn(&GroupSpec) -> Result<Assignment, SpecError>;

/// A broken assignor: round-robin over the partitions in the order members are listed.
fn order_dependent(spec: &GroupSpec) -> Result<Assignment, SpecError> {
    let mut out = AssignmentMap::new();
    for m in &spec.members {
        out.insert(m.member_id(), Default::default());
    }
    let mut next = 0;
    for t in &spec.topics {
        let subs: Vec<_> = spec
            .members
            .iter()
            .filter(|m| m.subscriptions.contains(&t.name))
            .collect();
        for p in 0..t.partitions as i32 {
            if subs.is_empty() {
                break;
            }
            let m = subs[next % subs.len()];
            next += 1;
            let entry = out.get_mut(&m.member_id()).expect("inserted");
            entry.entry(t.name.clone()).or_default().push(p);
        }
    }
    Ok(Assignment::from(out))
}

/// A broken assignor: optimal, but shifted by the highest generation, so it never settles.
fn restless(spec: &GroupSpec) -> Result<Assignment, SpecError> {
    let shift = spec
        .members
        .iter()
        .map(|m| m.generation)
        .max()
        .unwrap_or(0)
        .max(0) as usize;
    let mut fresh = spec.clone();
    fresh.members.iter_mut().for_each(|m| m.owned.clear());
    let base = oracle_assignment(&fresh)?.to_map();
    let ids: Vec<_> = base.keys().cloned().collect();
    let mut out = AssignmentMap::new();
    for (i, id) in ids.iter().enumerate() {
        let from = &ids[(i + shift) % ids.len()];
        out.insert(id.clone(), base[from].clone());
    }
    Ok(Assignment::from(out))
}

#[test]
fn nondeterministic_assignor_is_named() {
    let report = check_determinism(&example(), order_dependent as AssignFn);
    assert!(!report.is_ok());
    assert!(
        report.violations.iter().any(|v| matches!(
            v,
            Violation::Nondeterministic { reordering: "members reversed", member, .. } if member == "A"
        )),
        "{report}"
    );
    // The oracle's own assignment is deterministic: the check can pass.
    assert!(check_determinism(&example(), oracle_assignment).is_ok());
}

#[test]
fn assignor_that_is_not_a_fixed_point_is_named() {
    let report = check_fixed_point(&example(), restless as AssignFn);
    assert!(
        matches!(report.violations.as_slice(), [Violation::NotFixedPoint { member, .. }] if member == "A"),
        "{report}"
    );
    assert!(report.to_string().starts_with("not a fixed point"));
    assert!(check_fixed_point(&example(), oracle_assignment).is_ok());
    assert!(check_fixed_point(&racks(), oracle_assignment).is_ok());
}

#[test]
fn the_exhaustive_harness_catches_the_baselines() {
    use rebalance::{Assignor, Range, UniformV1};
    use rebalance_proofs::assignor::enumerate;
    use rebalance_proofs::assignor::{REORDERINGS, check_assignor};

    let structure = &enumerate::families(enumerate::Depth::Quick)[0];
    for assignor in [&UniformV1 as &dyn Assignor, &Range] {
        let mut first_failure = None;
        enumerate::for_each(structure, (0, 1), |spec| {
            if first_failure.is_none() {
                let report = check_assignor(
                    spec,
                    |s| assignor.assign(s),
                    &REORDERINGS,
                    Some(Oracle::Brute),
                );
                if !report.is_ok() {
                    first_failure = Some(report);
                }
            }
        });
        let report = first_failure.unwrap_or_else(|| panic!("{} passed", assignor.name()));
        assert!(
            report
                .violations
                .iter()
                .any(|v| matches!(v, Violation::Spread { .. } | Violation::Balance { .. })),
            "{}: {report}",
            assignor.name()
        );
    }
}
