//! Leader policy unit tests: claim resolution, cooperative withholding, deferred holding and
//! release, incremental move limits.

use std::collections::{BTreeMap, BTreeSet};

use super::embedded::SubscriptionInfo;
use super::leader::claims::Claims;
use super::leader::{LeaderInput, LeaderMemory, LeaderOutput, lead};
use super::member::RebalanceProtocol;
use super::test_support::{StickyTestAssignor, id, t, topic_t};
use crate::ids::{Generation, MemberId, TopicPartition};

fn sub(owned: &[u32], generation: i32) -> SubscriptionInfo {
    SubscriptionInfo {
        topics: BTreeSet::from(["T".to_owned()]),
        owned: t(owned),
        generation: Generation(generation),
        rack: None,
    }
}

fn group(members: &[(&str, &[u32], i32)]) -> BTreeMap<MemberId, SubscriptionInfo> {
    members
        .iter()
        .map(|(m, owned, g)| (id(m), sub(owned, *g)))
        .collect()
}

#[cfg(feature = "faults")]
static NO_FAULTS: std::sync::LazyLock<super::fault::FaultSet> =
    std::sync::LazyLock::new(super::fault::FaultSet::default);

fn run(
    protocol: RebalanceProtocol,
    members: &BTreeMap<MemberId, SubscriptionInfo>,
    memory: Option<&LeaderMemory>,
    now_ms: u64,
) -> LeaderOutput {
    let topics = topic_t(4);
    let input = LeaderInput {
        generation: Generation(9),
        now_ms,
        members,
        topics: &topics,
        protocol,
        assignor: &StickyTestAssignor,
        memory,
        #[cfg(feature = "faults")]
        faults: &NO_FAULTS,
    };
    lead(&input).expect("the test assignor accepts")
}

fn assigned(out: &LeaderOutput, m: &str) -> BTreeSet<TopicPartition> {
    out.assignments[&id(m)].assigned.clone()
}

fn revoked(out: &LeaderOutput, m: &str) -> BTreeSet<TopicPartition> {
    out.assignments[&id(m)].revoked.clone()
}

#[test]
fn claims_resolve_by_generation_and_drop_equal_duplicates() {
    let topics = topic_t(4);
    let claims = Claims::collect(
        &group(&[("A", &[1, 2], 5), ("B", &[1], 4), ("C", &[2], 5)]),
        &topics,
    );
    let p = |l| t(&[l]).into_iter().next().expect("one");
    assert_eq!(
        claims.owner(&p(1)),
        Some(&id("A")),
        "the highest generation wins"
    );
    assert_eq!(
        claims.owner(&p(2)),
        None,
        "equal-generation duplicates are dropped from both"
    );
    assert_eq!(claims.owner(&p(3)), None);
    let sticky = claims.for_assignor(false);
    assert_eq!(sticky[&id("A")], t(&[1]));
    assert!(!sticky.contains_key(&id("B")));
    let trusting = claims.for_assignor(true);
    assert_eq!(trusting[&id("B")], t(&[1]));
    // Claims of partitions out of range or of unsubscribed topics are ignored.
    let claims = Claims::collect(&group(&[("A", &[9], 1)]), &topics);
    assert!(claims.claimed().is_empty());
}

#[test]
fn eager_assigns_the_whole_target() {
    let out = run(
        RebalanceProtocol::Eager,
        &group(&[("A", &[], -1), ("B", &[], -1)]),
        None,
        0,
    );
    assert_eq!(assigned(&out, "A"), t(&[1, 3]));
    assert_eq!(assigned(&out, "B"), t(&[2, 4]));
}

#[test]
fn cooperative_withholds_what_another_member_still_claims() {
    let members = group(&[("A", &[1, 2, 3, 4], 2), ("B", &[], -1)]);
    let out = run(RebalanceProtocol::SimpleCooperative, &members, None, 0);
    assert_eq!(assigned(&out, "A"), t(&[1, 2]));
    assert_eq!(revoked(&out, "A"), t(&[3, 4]));
    assert!(
        assigned(&out, "B").is_empty(),
        "B waits a round for A to revoke"
    );
    let next = group(&[("A", &[1, 2], 3), ("B", &[], -1)]);
    let out = run(RebalanceProtocol::SimpleCooperative, &next, None, 0);
    assert_eq!(assigned(&out, "B"), t(&[3, 4]));
}

#[test]
fn a_stale_claim_is_revoked_and_the_rightful_owner_keeps_its_partition() {
    let members = group(&[
        ("A", &[1], 5),
        ("B", &[1], 3),
        ("C", &[], -1),
        ("D", &[], -1),
    ]);
    let out = run(RebalanceProtocol::SimpleCooperative, &members, None, 0);
    assert!(assigned(&out, "A").contains(&TopicPartition::new("T", 0)));
    assert_eq!(revoked(&out, "B"), t(&[1]));
}

#[test]
fn equal_generation_duplicates_are_revoked_from_both() {
    let members = group(&[("A", &[1], 5), ("B", &[1], 5)]);
    let out = run(RebalanceProtocol::SimpleCooperative, &members, None, 0);
    assert_eq!(revoked(&out, "A"), t(&[1]));
    assert_eq!(revoked(&out, "B"), t(&[1]));
    let owners = ["A", "B"]
        .iter()
        .filter(|m| assigned(&out, m).contains(&TopicPartition::new("T", 0)))
        .count();
    assert_eq!(owners, 0);
}

fn deferred(delay_ms: u32) -> RebalanceProtocol {
    RebalanceProtocol::Deferred { delay_ms }
}

fn memory_of_four() -> LeaderMemory {
    LeaderMemory {
        previous: ["A", "B", "C", "D"]
            .iter()
            .zip(1..)
            .map(|(m, l)| (id(m), t(&[l])))
            .collect(),
        ..LeaderMemory::default()
    }
}

#[test]
fn deferred_holds_lost_partitions_then_releases_them() {
    let three = group(&[("A", &[1], 1), ("B", &[2], 1), ("C", &[3], 1)]);
    let memory = memory_of_four();
    let out = run(deferred(1000), &three, Some(&memory), 100);
    for m in ["A", "B", "C"] {
        assert_eq!(out.assignments[&id(m)].delay_ms, 1000);
    }
    assert!(!assigned(&out, "A").contains(&TopicPartition::new("T", 3)));
    assert_eq!(out.memory.lost, t(&[4]));
    assert_eq!(out.memory.lost_deadline_ms, Some(1100));
    // Before the deadline: still held, with the remaining delay.
    let early = run(deferred(1000), &three, Some(&out.memory), 600);
    assert_eq!(early.assignments[&id("B")].delay_ms, 500);
    assert!(early.memory.lost == t(&[4]));
    // At the deadline: spread.
    let late = run(deferred(1000), &three, Some(&out.memory), 1100);
    assert_eq!(assigned(&late, "A"), t(&[1, 4]));
    assert_eq!(late.assignments[&id("A")].delay_ms, 0);
    assert!(late.memory.lost.is_empty());
}

#[test]
fn deferred_gives_held_partitions_to_a_returning_member() {
    let three = group(&[("A", &[1], 1), ("B", &[2], 1), ("C", &[3], 1)]);
    let held = run(deferred(1000), &three, Some(&memory_of_four()), 100);
    let four = group(&[
        ("A", &[1], 2),
        ("B", &[2], 2),
        ("C", &[3], 2),
        ("D2", &[], -1),
    ]);
    let out = run(deferred(1000), &four, Some(&held.memory), 400);
    assert_eq!(assigned(&out, "D2"), t(&[4]));
    assert_eq!(out.assignments[&id("D2")].delay_ms, 0);
}

#[test]
fn deferred_with_zero_delay_reassigns_at_once() {
    let three = group(&[("A", &[1], 1), ("B", &[2], 1), ("C", &[3], 1)]);
    let out = run(deferred(0), &three, Some(&memory_of_four()), 100);
    assert_eq!(assigned(&out, "A"), t(&[1, 4]));
}

#[test]
fn a_new_leader_uses_the_heuristic() {
    // Everyone claims something: the unclaimed partition is taken to be lost.
    let three = group(&[("A", &[1], 1), ("B", &[2], 1), ("C", &[3], 1)]);
    let out = run(deferred(1000), &three, None, 0);
    assert_eq!(out.memory.lost, t(&[4]));
    // A member with no claims looks like the one that returned: assign now.
    let four = group(&[
        ("A", &[1], 1),
        ("B", &[2], 1),
        ("C", &[3], 1),
        ("E", &[], -1),
    ]);
    let out = run(deferred(1000), &four, None, 0);
    assert_eq!(assigned(&out, "E"), t(&[4]));
}

#[test]
fn incremental_moves_at_most_max_moves_per_step() {
    let protocol = RebalanceProtocol::Incremental {
        delay_ms: 200,
        max_moves: 1,
    };
    let members = group(&[("A", &[1, 2, 3, 4], 1), ("B", &[], -1)]);
    let out = run(protocol, &members, None, 0);
    assert_eq!(revoked(&out, "A").len(), 1);
    assert_eq!(out.memory.next_move_ms, Some(200));
    assert_eq!(out.assignments[&id("A")].delay_ms, 200);
    // The revoked partition is assigned next round; no new move before the delay.
    let moved = revoked(&out, "A");
    let keep: Vec<u32> = (1..=4)
        .filter(|l| {
            !moved.contains(&TopicPartition::new(
                "T",
                i32::try_from(*l).expect("small") - 1,
            ))
        })
        .collect();
    let members = group(&[("A", &keep, 2), ("B", &[], -1)]);
    let out2 = run(protocol, &members, Some(&out.memory), 10);
    assert_eq!(assigned(&out2, "B"), moved);
    assert!(
        revoked(&out2, "A").is_empty(),
        "the next batch waits for the delay"
    );
    assert_eq!(out2.assignments[&id("A")].delay_ms, 190);
}

#[cfg(feature = "faults")]
mod faults {
    use super::*;
    use crate::protocol::fault::{Fault, FaultSet};

    fn run_with(
        fault: Fault,
        protocol: RebalanceProtocol,
        members: &BTreeMap<MemberId, SubscriptionInfo>,
    ) -> LeaderOutput {
        let topics = topic_t(4);
        let faults = FaultSet::of(&[fault]);
        let input = LeaderInput {
            generation: Generation(9),
            now_ms: 0,
            members,
            topics: &topics,
            protocol,
            assignor: &StickyTestAssignor,
            memory: None,
            faults: &faults,
        };
        lead(&input).expect("accepted")
    }

    /// KAFKA-7026: trusting every claim keeps a duplicated partition with both claimants.
    #[test]
    fn trusting_all_claims_keeps_duplicates_with_both() {
        let members = group(&[("A", &[1], 5), ("B", &[1], 3)]);
        let out = run_with(
            Fault::TrustAllClaims,
            RebalanceProtocol::SimpleCooperative,
            &members,
        );
        let p = TopicPartition::new("T", 0);
        assert!(assigned(&out, "A").contains(&p) && assigned(&out, "B").contains(&p));
    }

    /// KAFKA-14639: the revoked partition is assigned in the same round.
    #[test]
    fn assigning_revoked_in_the_same_round() {
        let members = group(&[("A", &[1, 2, 3, 4], 2), ("B", &[], -1)]);
        let out = run_with(
            Fault::AssignRevokedSameRound,
            RebalanceProtocol::SimpleCooperative,
            &members,
        );
        assert_eq!(revoked(&out, "A"), t(&[3, 4]));
        assert_eq!(
            assigned(&out, "B"),
            t(&[3, 4]),
            "assigned while A still holds them"
        );
    }

    /// KAFKA-15693: with delay 0 the lost partition is withheld and delay 0 is sent.
    #[test]
    fn zero_delay_still_withholds() {
        let three = group(&[("A", &[1], 1), ("B", &[2], 1), ("C", &[3], 1)]);
        let out = run_with(Fault::ZeroDelayWithholds, deferred(0), &three);
        assert_eq!(out.memory.lost, t(&[4]));
        assert_eq!(out.assignments[&id("A")].delay_ms, 0);
    }
}
