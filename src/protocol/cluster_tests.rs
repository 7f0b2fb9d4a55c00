//! Cluster tests: the reference design's example tables, coordinator failover at each of the
//! five stages, and the faults that break safety or liveness. `Cluster::step` checks the safety
//! invariant (no partition consumed by two live members) after every step, so every `drive()`
//! below asserts it throughout.

use std::collections::{BTreeMap, BTreeSet};

use super::cluster::{Cluster, ClusterError, MemberRound};
use super::coordinator::CoordinatorConfig;
use super::group::{GroupRecord, GroupState};
use super::member::{MemberState, RebalanceProtocol};
use super::test_support::{id, member, t, topic_t};
use crate::ids::{Generation, TopicPartition};

const COOP: RebalanceProtocol = RebalanceProtocol::SimpleCooperative;

fn cluster_with(protocol: RebalanceProtocol, ids: &[&str], partitions: u32) -> Cluster {
    let mut c = Cluster::new(CoordinatorConfig::default(), topic_t(partitions));
    for m in ids {
        c.join(member(m, protocol)).expect("fresh id");
    }
    c.drive().expect("initial group settles safely");
    c
}

fn owns(c: &Cluster, m: &str) -> BTreeSet<TopicPartition> {
    c.member(&id(m))
        .map(|m| m.consuming().clone())
        .unwrap_or_default()
}

fn round(assigned: &[u32], revoked: &[u32], delay_ms: u32) -> MemberRound {
    MemberRound {
        assigned: t(assigned),
        revoked: t(revoked),
        delay_ms,
    }
}

/// Every partition of `T` is consumed by exactly one live member, everyone is stable.
fn assert_settled(c: &Cluster, partitions: u32) {
    let all: Vec<TopicPartition> = c.ownership().into_values().flatten().collect();
    let distinct: BTreeSet<&TopicPartition> = all.iter().collect();
    assert_eq!(
        all.len(),
        distinct.len(),
        "a partition is owned twice: {:?}",
        c.ownership()
    );
    assert_eq!(
        distinct.len(),
        partitions as usize,
        "not all assigned: {:?}",
        c.ownership()
    );
    assert!(c.is_quiescent());
}

fn rounds_since(c: &Cluster, generation: Generation) -> Vec<BTreeMap<String, MemberRound>> {
    c.rounds()
        .rounds
        .iter()
        .filter(|r| r.generation > generation)
        .map(|r| {
            r.members
                .iter()
                .map(|(m, x)| (m.0.clone(), x.clone()))
                .collect()
        })
        .collect()
}

fn named(rows: &[(&str, MemberRound)]) -> BTreeMap<String, MemberRound> {
    rows.iter()
        .map(|(m, r)| ((*m).to_owned(), r.clone()))
        .collect()
}

#[test]
fn initial_group_matches_the_reference_starting_point() {
    let c = cluster_with(COOP, &["A", "B", "C"], 4);
    assert_eq!(owns(&c, "A"), t(&[1, 4]));
    assert_eq!(owns(&c, "B"), t(&[2]));
    assert_eq!(owns(&c, "C"), t(&[3]));
    assert_settled(&c, 4);
}

#[test]
fn simple_cooperative_member_joins_table() {
    let mut c = cluster_with(COOP, &["A", "B", "C"], 4);
    let before = c.coordinator().generation();
    c.join(member("D", COOP)).expect("fresh id");
    c.drive().expect("settles safely");
    assert_eq!(
        rounds_since(&c, before),
        vec![
            named(&[
                ("A", round(&[], &[4], 0)),
                ("B", round(&[], &[], 0)),
                ("C", round(&[], &[], 0)),
                ("D", round(&[], &[], 0)),
            ]),
            named(&[
                ("A", round(&[], &[], 0)),
                ("B", round(&[], &[], 0)),
                ("C", round(&[], &[], 0)),
                ("D", round(&[4], &[], 0)),
            ]),
        ]
    );
    assert_eq!(owns(&c, "D"), t(&[4]));
    assert_settled(&c, 4);
}

#[test]
fn simple_cooperative_member_leaves_table() {
    let mut c = cluster_with(COOP, &["A", "B", "C", "D"], 4);
    assert_eq!(owns(&c, "D"), t(&[4]));
    let before = c.coordinator().generation();
    c.leave(&id("D")).expect("live");
    c.drive().expect("settles safely");
    assert_eq!(
        rounds_since(&c, before),
        vec![named(&[
            ("A", round(&[4], &[], 0)),
            ("B", round(&[], &[], 0)),
            ("C", round(&[], &[], 0)),
        ])],
        "one round, no further rebalance"
    );
    assert_eq!(owns(&c, "A"), t(&[1, 4]));
    assert_settled(&c, 4);
}

#[test]
fn deferred_member_leaves_with_delay_table() {
    let protocol = RebalanceProtocol::Deferred { delay_ms: 1000 };
    let mut c = cluster_with(protocol, &["A", "B", "C", "D"], 4);
    let before = c.coordinator().generation();
    let left_at = c.now_ms();
    c.leave(&id("D")).expect("live");
    c.drive().expect("settles safely");
    let rounds = rounds_since(&c, before);
    assert_eq!(
        rounds,
        vec![
            named(&[
                ("A", round(&[], &[], 1000)),
                ("B", round(&[], &[], 1000)),
                ("C", round(&[], &[], 1000)),
            ]),
            named(&[
                ("A", round(&[4], &[], 0)),
                ("B", round(&[], &[], 0)),
                ("C", round(&[], &[], 0)),
            ]),
        ]
    );
    let released = c.rounds().rounds.last().expect("two rounds").at_ms;
    assert!(
        released >= left_at + 1000,
        "released at {released}, left at {left_at}"
    );
    assert_settled(&c, 4);
}

#[test]
fn deferred_member_bounces_and_returns_within_the_delay_table() {
    let protocol = RebalanceProtocol::Deferred { delay_ms: 1000 };
    let mut c = cluster_with(protocol, &["A", "B", "C", "D"], 4);
    let before = c.coordinator().generation();
    c.leave(&id("D")).expect("live");
    let back_at = c.now_ms() + 500;
    c.run_until(back_at).expect("safe");
    assert_eq!(owns(&c, "A"), t(&[1]), "T4 is held back, not reassigned");
    c.join(member("D2", protocol)).expect("fresh id");
    c.drive().expect("settles safely");
    assert_eq!(
        rounds_since(&c, before),
        vec![
            named(&[
                ("A", round(&[], &[], 1000)),
                ("B", round(&[], &[], 1000)),
                ("C", round(&[], &[], 1000)),
            ]),
            named(&[
                ("A", round(&[], &[], 0)),
                ("B", round(&[], &[], 0)),
                ("C", round(&[], &[], 0)),
                ("D2", round(&[4], &[], 0)),
            ]),
        ]
    );
    assert!(
        c.now_ms() < back_at + 1000,
        "no further scheduled round ran"
    );
    assert_settled(&c, 4);
}

#[test]
fn deferred_zero_delay_reassigns_at_once() {
    let protocol = RebalanceProtocol::Deferred { delay_ms: 0 };
    let mut c = cluster_with(protocol, &["A", "B", "C", "D"], 4);
    let before = c.coordinator().generation();
    c.leave(&id("D")).expect("live");
    c.drive().expect("settles safely");
    assert_eq!(rounds_since(&c, before).len(), 1);
    assert_eq!(owns(&c, "A"), t(&[1, 4]));
    assert_settled(&c, 4);
}

#[test]
fn eager_members_stop_everything_then_get_the_target() {
    let mut c = cluster_with(RebalanceProtocol::Eager, &["A", "B", "C"], 4);
    c.join(member("D", RebalanceProtocol::Eager))
        .expect("fresh id");
    c.drive().expect("settles safely");
    let last = c.rounds().rounds.last().expect("a round");
    assert_eq!(
        last.members[&id("A")].assigned,
        t(&[1]),
        "eager re-assigns from scratch"
    );
    assert_eq!(owns(&c, "D"), t(&[4]));
    assert_settled(&c, 4);
    // Every eager member committed and revoked everything before rejoining.
    assert!(
        c.events()
            .iter()
            .any(|(_, m, e)| *m == id("B") && *e == super::member::MemberEvent::Revoked(t(&[2])))
    );
}

#[test]
fn incremental_moves_at_most_max_moves_per_scheduled_round() {
    let protocol = RebalanceProtocol::Incremental {
        delay_ms: 200,
        max_moves: 1,
    };
    let mut c = cluster_with(protocol, &["A"], 4);
    assert_eq!(owns(&c, "A"), t(&[1, 2, 3, 4]));
    let before = c.coordinator().generation();
    c.join(member("B", protocol)).expect("fresh id");
    c.drive().expect("settles safely");
    let rounds = rounds_since(&c, before);
    let revocations: Vec<usize> = rounds
        .iter()
        .map(|r| r.values().map(|m| m.revoked.len()).sum())
        .collect();
    assert!(revocations.iter().all(|n| *n <= 1), "{revocations:?}");
    assert_eq!(
        revocations.iter().sum::<usize>(),
        2,
        "two partitions move in all"
    );
    assert_eq!(owns(&c, "B").len(), 2);
    assert_settled(&c, 4);
}

#[test]
fn isolated_member_stops_before_its_partitions_move() {
    let mut c = cluster_with(COOP, &["A", "B"], 4);
    c.isolate(&id("B"));
    let later = c.now_ms() + 2000;
    c.run_until(later).expect("never two owners");
    assert!(
        owns(&c, "B").is_empty(),
        "B stopped on its own session timer"
    );
    assert!(!c.coordinator().members().contains_key(&id("B")));
    assert_eq!(owns(&c, "A"), t(&[1, 2, 3, 4]));
}

/// The five stages of a rebalance at which the reference design fails the coordinator over.
#[derive(Clone, Copy, Debug)]
enum Stage {
    /// The trigger (a member left) reached the coordinator; nobody was told yet.
    Notified,
    /// Some members learned of the rebalance and are rejoining.
    SomeTold,
    /// Some JoinGroups reached the coordinator.
    SomeJoined,
    /// The new generation was persisted; no JoinGroup answer was delivered.
    GenerationWritten,
    /// Some members received the new generation's answers.
    SomeAnswered,
}

fn failover_at(protocol: RebalanceProtocol, stage: Stage) {
    let mut c = cluster_with(protocol, &["A", "B", "C", "D"], 4);
    let before = c.coordinator().generation();
    c.leave(&id("D")).expect("live");
    let reached = |c: &Cluster| -> bool {
        let co = c.coordinator();
        match stage {
            Stage::Notified => matches!(co.state(), GroupState::PreparingRebalance { .. }),
            Stage::SomeTold => c
                .members()
                .values()
                .any(|m| *m.state() == MemberState::Joining),
            Stage::SomeJoined => {
                matches!(co.state(), GroupState::PreparingRebalance { joined } if !joined.is_empty())
            }
            Stage::GenerationWritten => matches!(
                c.log().last(),
                Some(GroupRecord::Generation { generation, .. }) if *generation > before
            ),
            Stage::SomeAnswered => c.members().values().any(|m| {
                matches!(m.state(), MemberState::AwaitingSync { generation, .. } if *generation > before)
            }),
        }
    };
    let mut steps = 0;
    while !reached(&c) {
        assert!(c.step().expect("safe"), "{stage:?} never reached");
        steps += 1;
        assert!(steps < 1000, "{stage:?} never reached");
    }
    c.failover();
    c.drive().unwrap_or_else(|e| panic!("{stage:?}: {e}"));
    assert_eq!(c.coordinator().epoch().0, 1);
    assert!(c.coordinator().generation() > before, "{stage:?}");
    assert_eq!(c.coordinator().members().len(), 3);
    assert_settled(&c, 4);
}

#[test]
fn failover_at_each_stage_cooperative() {
    for stage in [
        Stage::Notified,
        Stage::SomeTold,
        Stage::SomeJoined,
        Stage::GenerationWritten,
        Stage::SomeAnswered,
    ] {
        failover_at(COOP, stage);
    }
}

#[test]
fn failover_at_each_stage_eager() {
    for stage in [
        Stage::Notified,
        Stage::SomeTold,
        Stage::SomeJoined,
        Stage::GenerationWritten,
        Stage::SomeAnswered,
    ] {
        failover_at(RebalanceProtocol::Eager, stage);
    }
}

#[test]
fn failover_of_a_stable_group_keeps_assignment_and_fences_nothing() {
    let mut c = cluster_with(COOP, &["A", "B", "C"], 4);
    let before = c.ownership();
    let generation = c.coordinator().generation();
    c.failover();
    c.drive().expect("settles safely");
    assert_eq!(
        c.ownership(),
        before,
        "a reloaded stable group needs no rebalance"
    );
    assert_eq!(c.coordinator().generation(), generation);
}

#[test]
fn duplicate_and_unknown_members_are_errors() {
    let mut c = cluster_with(COOP, &["A"], 2);
    assert_eq!(
        c.join(member("A", COOP)),
        Err(ClusterError::DuplicateMember(id("A")))
    );
    assert_eq!(c.leave(&id("Z")), Err(ClusterError::UnknownMember(id("Z"))));
}

#[cfg(feature = "faults")]
mod faults {
    use super::*;
    use crate::protocol::fault::{Fault, FaultSet};
    use crate::protocol::member::MemberConfig;

    fn faulty(m: &str, protocol: RebalanceProtocol, fault: Fault) -> MemberConfig {
        let mut config = member(m, protocol);
        config.faults = FaultSet::of(&[fault]);
        config
    }

    fn cluster_of(configs: Vec<MemberConfig>, partitions: u32) -> Cluster {
        let mut c = Cluster::new(CoordinatorConfig::default(), topic_t(partitions));
        for config in configs {
            c.join(config).expect("fresh id");
        }
        c.drive().expect("initial group settles safely");
        c
    }

    /// KAFKA-14639: the newcomer `0` sorts first, so it gets its answer before `A` revokes.
    #[test]
    fn assigning_revoked_partitions_in_the_same_round_double_assigns() {
        let mut c = cluster_with(COOP, &["A", "B", "C"], 4);
        c.join(member("0", COOP)).expect("fresh id");
        c.drive().expect("the correct protocol revokes first");
        assert_settled(&c, 4);

        let fault = Fault::AssignRevokedSameRound;
        let mut c = cluster_of(
            ["A", "B", "C"]
                .iter()
                .map(|m| faulty(m, COOP, fault))
                .collect(),
            4,
        );
        c.join(faulty("0", COOP, fault)).expect("fresh id");
        let err = c.drive().expect_err("the fault double-assigns");
        assert!(
            matches!(err, ClusterError::DoubleOwnership { ref partition, .. }
            if *partition == TopicPartition::new("T", 3)),
            "{err}"
        );
    }

    /// KAFKA-9184: without its own session timer an isolated member keeps consuming.
    #[test]
    fn isolated_member_without_own_session_timer_keeps_consuming() {
        let fault = Fault::NoOwnSessionTimer;
        let mut c = cluster_of(vec![faulty("A", COOP, fault), faulty("B", COOP, fault)], 4);
        c.isolate(&id("B"));
        let later = c.now_ms() + 2000;
        let err = c
            .run_until(later)
            .expect_err("B's partitions go to A while B consumes");
        assert!(matches!(err, ClusterError::DoubleOwnership { .. }), "{err}");
    }

    /// KAFKA-15693: with delay 0 the fault withholds lost partitions indefinitely.
    #[test]
    fn zero_delay_withholding_leaves_partitions_unassigned() {
        let protocol = RebalanceProtocol::Deferred { delay_ms: 0 };
        let fault = Fault::ZeroDelayWithholds;
        let mut c = cluster_of(
            ["A", "B", "C", "D"]
                .iter()
                .map(|m| faulty(m, protocol, fault))
                .collect(),
            4,
        );
        c.leave(&id("D")).expect("live");
        c.drive().expect("safe, just stuck");
        let owned: usize = c.ownership().values().map(BTreeSet::len).sum();
        assert_eq!(owned, 3, "T4 waits for an unrelated rebalance");
    }
}
