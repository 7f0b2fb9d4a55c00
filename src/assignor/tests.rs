//! Unit tests of the assignors: the reference example, the baselines, every objective against
//! a brute-force optimum on small groups, determinism, the fixed point and bad input.

use std::collections::BTreeMap;

use super::*;
use crate::ids::MemberId;

mod aligned;
mod aligned_floored;
mod aligned_floors;
mod aligned_flow;
mod aligned_fresh;
mod blocked;
mod classes;
mod direct;
mod homogeneous;
mod lean;
mod mutation;
mod oracle;
mod overlap;
mod overlap_counts;
mod overlap_floors;
mod overlap_racked;
mod quick;
mod settled;
pub(super) mod warm;

pub(crate) use oracle::Rng;
use oracle::{brute_force, feed_back, medium_spec, permuted, random_spec, score};

/// Defines, inside a test-only `tally` module, `N` thread-local counters and one planted-fault
/// flag with `add(k)`, `get()`, `plant(on)` and `planted()`; the module's docs say what is
/// counted and what the fault is.
macro_rules! counts_and_fault {
    ($n:literal) => {
        thread_local! {
            static COUNTS: std::cell::Cell<[usize; $n]> =
                const { std::cell::Cell::new([0; $n]) };
            static PLANTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        }

        /// Counts one event of kind `k` on this thread.
        pub(crate) fn add(k: usize) {
            crate::assignor::tests::bump(&COUNTS, k);
        }

        /// The counts so far on this thread.
        pub(crate) fn get() -> [usize; $n] {
            COUNTS.with(std::cell::Cell::get)
        }

        /// Plants this module's fault on this thread (`true`) or removes it.
        pub(crate) fn plant(on: bool) {
            PLANTED.with(|c| c.set(on));
        }

        /// Whether the fault is planted on this thread.
        pub(crate) fn planted() -> bool {
            PLANTED.with(std::cell::Cell::get)
        }
    };
}
pub(crate) use counts_and_fault;

/// Adds one to counter `k` of a thread-local array of counters: the tallies through which
/// tests see which steps of the assignor ran.
pub(crate) fn bump<const N: usize>(
    counts: &'static std::thread::LocalKey<std::cell::Cell<[usize; N]>>,
    k: usize,
) {
    counts.with(|c| {
        let mut v = c.get();
        v[k] += 1;
        c.set(v);
    });
}

fn topic(name: &str, partitions: i64) -> TopicSpec {
    TopicSpec {
        name: name.into(),
        partitions,
        replica_racks: None,
    }
}

fn member(id: &str, subs: &[&str]) -> MemberSpec {
    MemberSpec {
        id: id.into(),
        rack: None,
        subscriptions: subs.iter().map(|s| (*s).into()).collect(),
        owned: Vec::new(),
        generation: -1,
    }
}

fn reference() -> GroupSpec {
    GroupSpec {
        rack_aware: false,
        topics: vec![topic("T1", 3), topic("T2", 3), topic("T3", 3)],
        members: ["A", "B", "C"]
            .iter()
            .map(|id| member(id, &["T1", "T2", "T3"]))
            .collect(),
    }
}

fn parts(a: &Assignment, m: &str) -> Vec<(String, i32)> {
    a.member(m)
        .iter()
        .flat_map(|ts| ts.iter())
        .flat_map(|(t, ps)| ps.iter().map(move |&p| (t.to_owned(), p)))
        .collect()
}

fn tp(list: &[(&str, i32)]) -> Vec<(String, i32)> {
    list.iter().map(|&(t, p)| (t.to_owned(), p)).collect()
}

#[test]
fn reference_example_spreads_every_topic() {
    let a = UniformV2.assign(&reference()).unwrap();
    assert_eq!(parts(&a, "A"), tp(&[("T1", 0), ("T2", 0), ("T3", 0)]));
    assert_eq!(parts(&a, "B"), tp(&[("T1", 1), ("T2", 1), ("T3", 1)]));
    assert_eq!(parts(&a, "C"), tp(&[("T1", 2), ("T2", 2), ("T3", 2)]));
}

#[test]
fn uniform_v1_reproduces_the_reference_left_column() {
    let a = UniformV1.assign(&reference()).unwrap();
    assert_eq!(parts(&a, "A"), tp(&[("T1", 0), ("T1", 1), ("T1", 2)]));
    assert_eq!(parts(&a, "B"), tp(&[("T2", 0), ("T2", 1), ("T2", 2)]));
    assert_eq!(parts(&a, "C"), tp(&[("T3", 0), ("T3", 1), ("T3", 2)]));
    // Valid but not spread: the score refuses it, so the objective check can fail.
    assert_eq!(score(&reference(), &a), None);
}

#[test]
fn range_gives_contiguous_ranges_per_topic() {
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T1", 5), topic("T2", 2)],
        members: vec![member("B", &["T1", "T2"]), member("A", &["T1"])],
    };
    let a = Range.assign(&spec).unwrap();
    assert_eq!(parts(&a, "A"), tp(&[("T1", 0), ("T1", 1), ("T1", 2)]));
    assert_eq!(
        parts(&a, "B"),
        tp(&[("T1", 3), ("T1", 4), ("T2", 0), ("T2", 1)])
    );
}

#[test]
fn uniform_v2_is_optimal_on_random_small_groups() {
    let mut rng = Rng(7);
    for case in 0..400 {
        let spec = random_spec(&mut rng, 4096);
        let a = UniformV2.assign(&spec).unwrap();
        let got = score(&spec, &a).unwrap_or_else(|| panic!("case {case}: invalid {spec:?}"));
        let best = brute_force(&spec);
        assert_eq!(got, best, "case {case}: {}", spec.to_json());
    }
}

#[test]
fn the_optimality_check_can_fail() {
    // The baselines ignore spread, racks or owners: on random groups the brute-force
    // comparison must catch them, or it would prove nothing about uniform-v2.
    let mut rng = Rng(11);
    let mut caught = 0;
    for _ in 0..100 {
        let spec = random_spec(&mut rng, 1024);
        let best = brute_force(&spec);
        for assignor in [&UniformV1 as &dyn Assignor, &Range] {
            let a = assignor.assign(&spec).unwrap();
            if score(&spec, &a) != Some(best) {
                caught += 1;
            }
        }
    }
    assert!(
        caught > 20,
        "only {caught} suboptimal baseline results caught"
    );
}

#[test]
fn output_does_not_depend_on_input_order() {
    let mut rng = Rng(3);
    for _ in 0..200 {
        let spec = medium_spec(&mut rng);
        let permuted = permuted(&mut rng, &spec);
        for name in ASSIGNOR_NAMES {
            let assignor = assignor_by_name(name).unwrap();
            assert_eq!(
                assignor.assign(&spec).unwrap(),
                assignor.assign(&permuted).unwrap(),
                "{name}: {}",
                spec.to_json()
            );
        }
    }
}

#[test]
fn uniform_v2_output_is_a_fixed_point() {
    let mut rng = Rng(5);
    for _ in 0..200 {
        let spec = medium_spec(&mut rng);
        let a = UniformV2.assign(&spec).unwrap();
        let again = UniformV2.assign(&feed_back(&spec, &a)).unwrap();
        assert_eq!(a, again, "{}", spec.to_json());
    }
}

#[test]
fn uniform_v2_is_valid_and_spread_on_medium_groups() {
    let mut rng = Rng(9);
    for _ in 0..200 {
        let spec = medium_spec(&mut rng);
        let a = UniformV2.assign(&spec).unwrap();
        assert!(score(&spec, &a).is_some(), "{}", spec.to_json());
        assert_eq!(a.len(), spec.members.len());
    }
}

fn with_owned(mut m: MemberSpec, topic: &str, parts: &[i32], generation: i32) -> MemberSpec {
    m.owned.push(OwnedPartitions {
        topic: topic.into(),
        partitions: parts.to_vec(),
    });
    m.generation = generation;
    m
}

#[test]
fn spread_beats_stickiness() {
    // A owned all four partitions; spread forces two to move to B.
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T", 4)],
        members: vec![
            with_owned(member("A", &["T"]), "T", &[0, 1, 2, 3], 1),
            member("B", &["T"]),
        ],
    };
    let a = UniformV2.assign(&spec).unwrap();
    assert_eq!(parts(&a, "A"), tp(&[("T", 0), ("T", 1)]));
    assert_eq!(parts(&a, "B"), tp(&[("T", 2), ("T", 3)]));
    // Keeping all four is refused by the spread check.
    let mut sticky = a.to_map();
    sticky.insert(
        MemberId::from("A"),
        BTreeMap::from([("T".into(), vec![0, 1, 2, 3])]),
    );
    sticky.insert(MemberId::from("B"), BTreeMap::new());
    assert_eq!(score(&spec, &Assignment::from(sticky)), None);
}

#[test]
fn balance_uses_the_shared_member_least() {
    // B shares both topics with A and C: balance gives B one of each, not two of each.
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T1", 3), topic("T2", 3)],
        members: vec![
            member("A", &["T1"]),
            member("B", &["T1", "T2"]),
            member("C", &["T2"]),
        ],
    };
    let a = UniformV2.assign(&spec).unwrap();
    let load = |m: &str| parts(&a, m).len();
    assert_eq!((load("A"), load("B"), load("C")), (2, 2, 2));
    // Range gives B two of each (loads 1, 4, 1), a worse Σ load².
    let r = Range.assign(&spec).unwrap();
    assert!(score(&spec, &r).unwrap().0 > score(&spec, &a).unwrap().0);
}

#[test]
fn rack_alignment_beats_stickiness_only_when_enabled() {
    let mut a_member = with_owned(member("A", &["T"]), "T", &[0], 1);
    a_member.rack = Some("r1".into());
    let mut b_member = with_owned(member("B", &["T"]), "T", &[1], 1);
    b_member.rack = Some("r2".into());
    let mut spec = GroupSpec {
        rack_aware: true,
        topics: vec![TopicSpec {
            name: "T".into(),
            partitions: 2,
            replica_racks: Some(vec![vec!["r2".into()], vec!["r1".into()]]),
        }],
        members: vec![a_member, b_member],
    };
    let a = UniformV2.assign(&spec).unwrap();
    assert_eq!(parts(&a, "A"), tp(&[("T", 1)]));
    assert_eq!(parts(&a, "B"), tp(&[("T", 0)]));
    spec.rack_aware = false;
    let a = UniformV2.assign(&spec).unwrap();
    assert_eq!(parts(&a, "A"), tp(&[("T", 0)]));
    assert_eq!(parts(&a, "B"), tp(&[("T", 1)]));
}

#[test]
fn previous_owner_is_the_highest_generation_and_ties_mean_none() {
    let two = |ga: i32, gb: i32| GroupSpec {
        rack_aware: false,
        topics: vec![topic("T", 2)],
        members: vec![
            with_owned(member("A", &["T"]), "T", &[1], ga),
            with_owned(member("B", &["T"]), "T", &[1], gb),
        ],
    };
    // B's claim is newer: B keeps T-1.
    let a = UniformV2.assign(&two(1, 2)).unwrap();
    assert_eq!(parts(&a, "B"), tp(&[("T", 1)]));
    // A's claim is newer: A keeps T-1.
    let a = UniformV2.assign(&two(3, 2)).unwrap();
    assert_eq!(parts(&a, "A"), tp(&[("T", 1)]));
    // Tie at the top: no owner, so the default order (A takes the lowest) applies.
    let a = UniformV2.assign(&two(2, 2)).unwrap();
    assert_eq!(parts(&a, "A"), tp(&[("T", 0)]));
}

#[test]
fn claims_on_unknown_or_unsubscribed_partitions_are_ignored() {
    let mut a_member = member("A", &["T", "Gone"]);
    a_member.owned = vec![
        OwnedPartitions {
            topic: "Gone".into(),
            partitions: vec![0],
        },
        OwnedPartitions {
            topic: "T".into(),
            partitions: vec![-1, 7, 1 << 30],
        },
        OwnedPartitions {
            topic: "U".into(),
            partitions: vec![0],
        },
    ];
    a_member.generation = 5;
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T", 2), topic("U", 2)],
        members: vec![a_member, member("B", &["T", "U"])],
    };
    let a = UniformV2.assign(&spec).unwrap();
    assert_eq!(score(&spec, &a).map(|s| s.2), Some(0));
    assert_eq!(parts(&a, "B"), tp(&[("T", 1), ("U", 0), ("U", 1)]));
}

#[test]
fn every_assignor_refuses_every_bad_input() {
    let bad = [
        (
            GroupSpec {
                rack_aware: false,
                topics: vec![],
                members: vec![member("A", &[]), member("A", &[])],
            },
            SpecError::DuplicateMember("A".into()),
        ),
        (
            GroupSpec {
                rack_aware: false,
                topics: vec![topic("T", 1), topic("T", 1)],
                members: vec![],
            },
            SpecError::DuplicateTopic("T".into()),
        ),
        (
            GroupSpec {
                rack_aware: false,
                topics: vec![topic("T", -1)],
                members: vec![],
            },
            SpecError::PartitionCount {
                topic: "T".into(),
                partitions: -1,
            },
        ),
        (
            GroupSpec {
                rack_aware: false,
                topics: vec![topic("T", (1 << 24) + 1)],
                members: vec![],
            },
            SpecError::PartitionCount {
                topic: "T".into(),
                partitions: (1 << 24) + 1,
            },
        ),
        (
            GroupSpec {
                rack_aware: true,
                topics: vec![TopicSpec {
                    name: "T".into(),
                    partitions: 2,
                    replica_racks: Some(vec![vec![]]),
                }],
                members: vec![],
            },
            SpecError::ReplicaRacksLength {
                topic: "T".into(),
                partitions: 2,
                found: 1,
            },
        ),
    ];
    for (spec, err) in bad {
        for name in ASSIGNOR_NAMES {
            assert_eq!(
                assignor_by_name(name).unwrap().assign(&spec),
                Err(err.clone()),
                "{name}"
            );
        }
    }
    assert!(matches!(
        GroupSpec::from_json("{\"topics\": [1,"),
        Err(SpecError::Json { line: 1, .. })
    ));
    assert!(assignor_by_name("sticky").is_none());
}

#[test]
fn empty_and_unsubscribed_groups() {
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T", 3), topic("Z", 0)],
        members: vec![member("A", &[]), member("B", &["Z", "nope"])],
    };
    for name in ASSIGNOR_NAMES {
        let a = assignor_by_name(name).unwrap().assign(&spec).unwrap();
        assert_eq!(a.to_json(), r#"{"assignment":{"A":{},"B":{}}}"#, "{name}");
    }
    assert_eq!(
        UniformV2.assign(&GroupSpec::default()).unwrap(),
        Assignment::default()
    );
}

#[test]
fn large_topic_stays_linear() {
    // 2^20 partitions over 3 members, no owners: the fast path, and valid output.
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T", 1 << 20)],
        members: vec![
            member("A", &["T"]),
            member("B", &["T"]),
            member("C", &["T"]),
        ],
    };
    let a = UniformV2.assign(&spec).unwrap();
    let counts: Vec<usize> = ["A", "B", "C"].iter().map(|m| parts(&a, m).len()).collect();
    assert_eq!(counts, vec![349_526, 349_525, 349_525]);
}

#[test]
fn uniform_v2_is_optimal_on_random_homogeneous_groups() {
    // Homogeneous components take the closed forms or the solver with load quotas.
    let mut rng = Rng(13);
    for case in 0..300 {
        let mut spec = random_spec(&mut rng, usize::MAX);
        let subs = spec.members[0].subscriptions.clone();
        for m in &mut spec.members {
            m.subscriptions = subs.clone();
        }
        let problem = super::problem::Problem::new(&spec);
        let combos = (0..problem.topics.len() as u32)
            .map(|t| {
                (problem.subscribers[t as usize].len().max(1) as f64)
                    .powi(problem.partitions(t) as i32)
            })
            .product::<f64>();
        if combos > 20_000.0 {
            continue;
        }
        let a = UniformV2.assign(&spec).unwrap();
        assert_eq!(
            score(&spec, &a),
            Some(brute_force(&spec)),
            "case {case}: {}",
            spec.to_json()
        );
        let again = UniformV2.assign(&feed_back(&spec, &a)).unwrap();
        assert_eq!(a, again, "case {case}: fixed point");
    }
}

// ---- tests added from mutation testing (cargo-mutants survivors) ----

#[test]
fn keeping_every_claim_is_refused_when_a_subscriber_would_get_less_than_its_share() {
    // All three subscribe to both topics, every partition is claimed and the loads (2, 2, 2)
    // are balanced, but C claims none of T1 and B none of T2, whose shares are 1 each: the
    // previous assignment is not spread, so it cannot be kept.
    let both = ["T1", "T2"];
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T1", 3), topic("T2", 3)],
        members: vec![
            with_owned(with_owned(member("A", &both), "T1", &[0], 1), "T2", &[2], 1),
            with_owned(member("B", &both), "T1", &[1, 2], 1),
            with_owned(member("C", &both), "T2", &[0, 1], 1),
        ],
    };
    let a = UniformV2.assign(&spec).unwrap();
    for topic in both {
        for m in ["A", "B", "C"] {
            let n = parts(&a, m).iter().filter(|(t, _)| t == topic).count();
            assert_eq!(n, 1, "{m} on {topic} in {}", a.to_json());
        }
    }
    assert_eq!(score(&spec, &a), Some(brute_force(&spec)));
}

#[test]
fn the_largest_partition_count_is_valid_and_one_more_is_not() {
    let max = i64::from(MAX_PARTITIONS_PER_TOPIC);
    let one_topic = |partitions| GroupSpec {
        rack_aware: false,
        topics: vec![topic("T", partitions)],
        members: Vec::new(),
    };
    assert_eq!(one_topic(max).validate(), Ok(()));
    assert!(one_topic(max + 1).validate().is_err());
}

#[test]
fn keeping_every_claim_is_refused_when_an_owner_holds_more_than_the_ceiling() {
    // Three members subscribe to T and U (2 partitions each, so every share is 0 or 1). A
    // claims both partitions of T, B and C one of U each: loads (2, 1, 1) are within one, but A
    // holds 2 of T, above the ceiling of 1, so the claims cannot all be kept.
    let both = ["T", "U"];
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T", 2), topic("U", 2)],
        members: vec![
            with_owned(member("A", &both), "T", &[0, 1], 1),
            with_owned(member("B", &both), "U", &[0], 1),
            with_owned(member("C", &both), "U", &[1], 1),
        ],
    };
    let a = UniformV2.assign(&spec).unwrap();
    for topic in both {
        for m in ["A", "B", "C"] {
            let n = parts(&a, m).iter().filter(|(t, _)| t == topic).count();
            assert!(n <= 1, "{m} has {n} of {topic} in {}", a.to_json());
        }
    }
    assert_eq!(score(&spec, &a), Some(brute_force(&spec)));
}

#[test]
fn uniform_v1_keeps_claims_up_to_its_quota_plus_one_extra() {
    // Seven partitions over three members: quota 2 with one extra. C claims three; its sticky
    // pass keeps all three (the quota and the extra), so A and B get two each from the slices.
    // Keeping only the quota would hand the extra to A, the first member of the slices.
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T", 7)],
        members: vec![
            member("A", &["T"]),
            member("B", &["T"]),
            with_owned(member("C", &["T"]), "T", &[4, 5, 6], 1),
        ],
    };
    let a = UniformV1.assign(&spec).unwrap();
    assert_eq!(parts(&a, "C").len(), 3, "{}", a.to_json());
    assert_eq!(parts(&a, "A").len(), 2, "{}", a.to_json());
    assert_eq!(parts(&a, "B").len(), 2, "{}", a.to_json());
}

#[test]
fn uniform_v1_gives_a_partition_with_no_room_left_to_its_least_loaded_subscriber() {
    // Six partitions over three members: quota 2, no extra. B and C subscribe to T (5
    // partitions), A to U (1). After B and C reach their quota T still has a partition, which
    // goes to the least-loaded subscriber of T (B, by id), never to a member outside T.
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T", 5), topic("U", 1)],
        members: vec![
            member("A", &["U"]),
            member("B", &["T"]),
            member("C", &["T"]),
        ],
    };
    let a = UniformV1.assign(&spec).unwrap();
    assert!(
        parts(&a, "A").iter().all(|(t, _)| t == "U"),
        "{}",
        a.to_json()
    );
    assert_eq!(parts(&a, "A").len(), 1, "{}", a.to_json());
    assert_eq!(parts(&a, "B").len(), 3, "{}", a.to_json());
    assert_eq!(parts(&a, "C").len(), 2, "{}", a.to_json());

    // The same with the member outside T in the middle of the id order.
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T", 5), topic("U", 1)],
        members: vec![
            member("A", &["T"]),
            member("B", &["U"]),
            member("C", &["T"]),
        ],
    };
    let a = UniformV1.assign(&spec).unwrap();
    assert!(
        parts(&a, "B").iter().all(|(t, _)| t == "U"),
        "{}",
        a.to_json()
    );
    assert_eq!(parts(&a, "A").len(), 3, "{}", a.to_json());
    assert_eq!(parts(&a, "C").len(), 2, "{}", a.to_json());
}
