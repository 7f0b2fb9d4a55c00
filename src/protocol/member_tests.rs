//! Member unit tests: lifecycle transitions, timers, error paths and the leader role.

use std::collections::{BTreeMap, BTreeSet};

use super::embedded::{self, AssignmentFormat, AssignmentInfo};
use super::member::{
    Member, MemberConfig, MemberEvent, MemberState, MemberTimer, RebalanceProtocol,
};
use super::messages::{ErrorCode, JoinGroupOk, Request, Response};
use super::test_support::{id, member, t, topic_t};
use crate::ids::{CoordinatorEpoch, Generation};

const E0: CoordinatorEpoch = CoordinatorEpoch(0);
const COOP: RebalanceProtocol = RebalanceProtocol::SimpleCooperative;

fn sent(m: &mut Member) -> Vec<Request> {
    std::iter::from_fn(|| m.poll_transmit()).collect()
}

fn events(m: &mut Member) -> Vec<MemberEvent> {
    std::iter::from_fn(|| m.poll_event()).collect()
}

/// A member of `protocol` that found coordinator epoch 0 and sent its JoinGroup.
fn joining_with(config: MemberConfig) -> Member {
    let mut m = Member::new(config);
    m.handle_metadata(0, topic_t(4));
    m.start(0);
    assert_eq!(sent(&mut m), vec![Request::FindCoordinator { epoch: E0 }]);
    m.handle_response(0, Response::FindCoordinator { epoch: E0 });
    assert!(matches!(
        sent(&mut m).as_slice(),
        [Request::JoinGroup { .. }]
    ));
    assert_eq!(m.state(), &MemberState::Joining);
    m
}

fn assignment(
    protocol: RebalanceProtocol,
    assigned: &[u32],
    revoked: &[u32],
    delay_ms: u32,
) -> Vec<u8> {
    let info = AssignmentInfo {
        assigned: t(assigned),
        revoked: t(revoked),
        delay_ms,
    };
    embedded::encode_assignment(&info, protocol.assignment_format()).expect("encodable")
}

/// Completes a round as follower of `L` at `generation` with the given assignment.
fn complete_round(m: &mut Member, now: u64, generation: i32, bytes: Vec<u8>) {
    m.handle_response(
        now,
        Response::JoinGroup {
            epoch: E0,
            result: Ok(JoinGroupOk {
                generation: Generation(generation),
                leader: id("L"),
                members: BTreeMap::new(),
            }),
        },
    );
    assert!(
        matches!(sent(m).as_slice(), [Request::SyncGroup { assignments, .. }] if assignments.is_empty())
    );
    m.handle_response(
        now,
        Response::SyncGroup {
            epoch: E0,
            generation: Generation(generation),
            result: Ok(bytes),
        },
    );
}

fn stable(protocol: RebalanceProtocol, owned: &[u32], generation: i32) -> Member {
    let mut m = joining_with(member("M", protocol));
    complete_round(&mut m, 0, generation, assignment(protocol, owned, &[], 0));
    assert_eq!(m.state(), &MemberState::Stable);
    sent(&mut m);
    events(&mut m);
    m
}

fn join_metadata(requests: &[Request]) -> embedded::SubscriptionInfo {
    let Some(Request::JoinGroup { metadata, .. }) = requests
        .iter()
        .find(|r| matches!(r, Request::JoinGroup { .. }))
    else {
        panic!("no JoinGroup in {requests:?}")
    };
    embedded::decode_subscription(metadata).expect("decodable")
}

#[test]
fn a_follower_joins_syncs_and_consumes() {
    let mut m = joining_with(member("M", COOP));
    complete_round(&mut m, 0, 3, assignment(COOP, &[1, 2], &[], 0));
    assert_eq!(m.consuming(), &t(&[1, 2]));
    assert_eq!(m.generation(), Generation(3));
    let ev = events(&mut m);
    assert!(ev.contains(&MemberEvent::Assigned(t(&[1, 2]))));
    assert!(
        matches!(ev.last(), Some(MemberEvent::RebalanceRound(r)) if r.assigned == t(&[1, 2]) && r.leader == id("L"))
    );
    let timers: Vec<MemberTimer> = m.timers().map(|(t, _)| t).collect();
    assert_eq!(timers, vec![MemberTimer::Heartbeat, MemberTimer::Session]);
    m.handle_timer(100, MemberTimer::Heartbeat);
    assert_eq!(
        sent(&mut m),
        vec![Request::Heartbeat {
            epoch: E0,
            generation: Generation(3),
            member_id: id("M")
        }]
    );
}

#[test]
fn the_leader_assigns_every_member() {
    let mut m = joining_with(member("A", COOP));
    let sub = |topics: &[&str]| {
        let info = embedded::SubscriptionInfo {
            topics: topics.iter().map(|s| (*s).to_owned()).collect(),
            ..Default::default()
        };
        embedded::encode_subscription(&info, true).expect("encodable")
    };
    m.handle_response(
        0,
        Response::JoinGroup {
            epoch: E0,
            result: Ok(JoinGroupOk {
                generation: Generation(1),
                leader: id("A"),
                members: BTreeMap::from([
                    (id("A"), sub(&["T"])),
                    (id("B"), sub(&["T"])),
                    (id("C"), b"junk".to_vec()),
                ]),
            }),
        },
    );
    let requests = sent(&mut m);
    let [Request::SyncGroup { assignments, .. }] = requests.as_slice() else {
        panic!("{requests:?}")
    };
    let decoded: BTreeMap<_, _> = assignments
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                embedded::decode_assignment(v, AssignmentFormat::CooperativeV0)
                    .expect("decodable")
                    .assigned,
            )
        })
        .collect();
    assert_eq!(decoded[&id("A")], t(&[1, 3]));
    assert_eq!(decoded[&id("B")], t(&[2, 4]));
    assert_eq!(
        decoded[&id("C")],
        BTreeSet::new(),
        "undecodable metadata subscribes to nothing"
    );
    assert!(
        events(&mut m)
            .iter()
            .any(|e| matches!(e, MemberEvent::Malformed(s) if s.contains("member C")))
    );
    assert!(m.leader_memory().is_some());
}

#[test]
fn a_cooperative_member_keeps_consuming_and_claims_what_it_owns() {
    let mut m = stable(COOP, &[1, 2], 3);
    m.handle_response(
        5,
        Response::Heartbeat {
            epoch: E0,
            generation: Generation(3),
            result: Err(ErrorCode::RebalanceInProgress),
        },
    );
    let requests = sent(&mut m);
    let sub = join_metadata(&requests);
    assert_eq!(sub.owned, t(&[1, 2]));
    assert_eq!(sub.generation, Generation(3));
    assert_eq!(m.consuming(), &t(&[1, 2]));
    assert!(m.timers().any(|(t, _)| t == MemberTimer::Rebalance));
}

#[test]
fn an_eager_member_commits_and_stops_everything_before_rejoining() {
    let eager = RebalanceProtocol::Eager;
    let mut m = stable(eager, &[1, 2], 3);
    m.handle_response(
        5,
        Response::Heartbeat {
            epoch: E0,
            generation: Generation(3),
            result: Err(ErrorCode::RebalanceInProgress),
        },
    );
    let requests = sent(&mut m);
    assert!(matches!(
        requests.as_slice(),
        [
            Request::OffsetCommit { .. },
            Request::OffsetCommit { .. },
            Request::JoinGroup { .. }
        ]
    ));
    assert!(join_metadata(&requests).owned.is_empty());
    assert!(m.consuming().is_empty());
    assert_eq!(events(&mut m), vec![MemberEvent::Revoked(t(&[1, 2]))]);
}

#[test]
fn fencing_loses_partitions_and_rejoins() {
    for code in [ErrorCode::IllegalGeneration, ErrorCode::UnknownMemberId] {
        let mut m = stable(COOP, &[1], 3);
        m.handle_response(
            5,
            Response::Heartbeat {
                epoch: E0,
                generation: Generation(3),
                result: Err(code),
            },
        );
        assert!(m.consuming().is_empty());
        assert_eq!(events(&mut m), vec![MemberEvent::Lost(t(&[1]))]);
        assert!(join_metadata(&sent(&mut m)).owned.is_empty());
    }
}

#[test]
fn a_late_error_for_an_older_generation_is_ignored() {
    let mut m = stable(COOP, &[1], 3);
    let before = m.clone();
    m.handle_response(
        5,
        Response::Heartbeat {
            epoch: E0,
            generation: Generation(2),
            result: Err(ErrorCode::IllegalGeneration),
        },
    );
    m.handle_response(
        5,
        Response::OffsetCommit {
            epoch: E0,
            generation: Generation(2),
            partition: t(&[1]).into_iter().next().expect("one"),
            result: Err(ErrorCode::UnknownMemberId),
        },
    );
    assert_eq!(m.consuming(), before.consuming());
    assert_eq!(m.state(), &MemberState::Stable);
    assert!(sent(&mut m).is_empty());
}

#[test]
fn the_own_session_timer_stops_consuming() {
    let mut m = stable(COOP, &[1], 3);
    m.handle_timer(300, MemberTimer::Session);
    assert!(m.consuming().is_empty());
    assert_eq!(events(&mut m), vec![MemberEvent::Lost(t(&[1]))]);
    assert_eq!(
        m.state(),
        &MemberState::RediscoveringCoordinator { rejoin: true }
    );
    assert_eq!(sent(&mut m), vec![Request::FindCoordinator { epoch: E0 }]);
}

#[test]
fn a_rejoin_longer_than_the_rebalance_timeout_stops_consuming() {
    let mut m = stable(COOP, &[1], 3);
    m.handle_timer(50, MemberTimer::ScheduledRejoin); // not armed: nothing happens
    assert!(sent(&mut m).is_empty());
    m.handle_response(
        50,
        Response::Heartbeat {
            epoch: E0,
            generation: Generation(3),
            result: Err(ErrorCode::RebalanceInProgress),
        },
    );
    sent(&mut m);
    let deadline = m
        .timers()
        .find(|(t, _)| *t == MemberTimer::Rebalance)
        .map(|(_, d)| d);
    assert_eq!(deadline, Some(650));
    m.handle_timeout(650);
    assert!(m.consuming().is_empty());
    assert!(matches!(
        m.state(),
        MemberState::RediscoveringCoordinator { rejoin: true }
    ));
}

#[test]
fn a_revoking_member_commits_stops_and_rejoins_at_once() {
    let mut m = stable(COOP, &[1, 2], 3);
    m.handle_response(
        5,
        Response::Heartbeat {
            epoch: E0,
            generation: Generation(3),
            result: Err(ErrorCode::RebalanceInProgress),
        },
    );
    sent(&mut m);
    complete_round(&mut m, 6, 4, assignment(COOP, &[1], &[2], 0));
    assert_eq!(m.consuming(), &t(&[1]));
    let requests = sent(&mut m);
    assert!(
        matches!(
            requests.as_slice(),
            [
                Request::OffsetCommit {
                    generation: Generation(4),
                    ..
                },
                Request::JoinGroup { .. }
            ]
        ),
        "{requests:?}"
    );
    assert_eq!(join_metadata(&requests).owned, t(&[1]));
    let ev = events(&mut m);
    assert_eq!(ev[0], MemberEvent::Revoked(t(&[2])));
}

#[test]
fn a_scheduled_delay_rejoins_when_it_runs_out() {
    let deferred = RebalanceProtocol::Deferred { delay_ms: 1000 };
    let mut m = joining_with(member("M", deferred));
    complete_round(&mut m, 10, 1, assignment(deferred, &[1], &[], 700));
    assert_eq!(
        m.timers().find(|(t, _)| *t == MemberTimer::ScheduledRejoin),
        Some((MemberTimer::ScheduledRejoin, 710))
    );
    assert!(sent(&mut m).is_empty());
    m.handle_timer(710, MemberTimer::ScheduledRejoin);
    assert!(matches!(
        sent(&mut m).as_slice(),
        [Request::JoinGroup { .. }]
    ));
}

/// Found by the model's `ci` preset: a scheduled rejoin that came due while the member was
/// rediscovering the coordinator after a failover used to be dropped, so the partitions held
/// back for a departed member were never assigned.
#[test]
fn a_scheduled_rejoin_due_while_rediscovering_the_coordinator_is_kept() {
    let deferred = RebalanceProtocol::Deferred { delay_ms: 1000 };
    let mut m = joining_with(member("M", deferred));
    complete_round(&mut m, 10, 1, assignment(deferred, &[1], &[], 700));
    sent(&mut m);
    m.handle_response(
        20,
        Response::Heartbeat {
            epoch: E0,
            generation: Generation(1),
            result: Err(ErrorCode::NotCoordinator),
        },
    );
    assert_eq!(sent(&mut m), vec![Request::FindCoordinator { epoch: E0 }]);
    m.handle_timer(710, MemberTimer::ScheduledRejoin);
    assert!(sent(&mut m).is_empty(), "no coordinator to join yet");
    m.handle_response(
        711,
        Response::FindCoordinator {
            epoch: CoordinatorEpoch(1),
        },
    );
    assert_eq!(m.state(), &MemberState::Joining);
    assert!(matches!(
        sent(&mut m).as_slice(),
        [Request::JoinGroup { .. }]
    ));
}

#[test]
fn a_lost_coordinator_is_rediscovered_while_consuming() {
    let mut m = stable(COOP, &[1], 3);
    m.handle_response(
        5,
        Response::Heartbeat {
            epoch: E0,
            generation: Generation(3),
            result: Err(ErrorCode::NotCoordinator),
        },
    );
    assert_eq!(
        m.state(),
        &MemberState::RediscoveringCoordinator { rejoin: false }
    );
    assert_eq!(m.consuming(), &t(&[1]));
    assert_eq!(sent(&mut m), vec![Request::FindCoordinator { epoch: E0 }]);
    let e1 = CoordinatorEpoch(1);
    m.handle_response(6, Response::FindCoordinator { epoch: e1 });
    assert_eq!(m.state(), &MemberState::Stable);
    m.handle_timeout(6);
    assert_eq!(
        sent(&mut m),
        vec![Request::Heartbeat {
            epoch: e1,
            generation: Generation(3),
            member_id: id("M")
        }]
    );
    // A response from the replaced epoch is stale.
    m.handle_response(
        7,
        Response::Heartbeat {
            epoch: E0,
            generation: Generation(3),
            result: Err(ErrorCode::IllegalGeneration),
        },
    );
    assert_eq!(m.consuming(), &t(&[1]));
}

#[test]
fn leaving_commits_stops_and_says_goodbye() {
    let mut m = stable(COOP, &[1], 3);
    m.leave(9);
    assert_eq!(m.state(), &MemberState::Down);
    assert!(m.consuming().is_empty());
    assert!(matches!(
        sent(&mut m).as_slice(),
        [Request::OffsetCommit { .. }, Request::LeaveGroup { .. }]
    ));
    assert_eq!(
        events(&mut m),
        vec![MemberEvent::Revoked(t(&[1])), MemberEvent::Stopped]
    );
    assert_eq!(m.poll_timeout(), None);
    m.handle_response(10, Response::FindCoordinator { epoch: E0 });
    assert!(
        sent(&mut m).is_empty(),
        "a stopped member ignores everything"
    );
}

#[test]
fn loading_coordinator_is_retried_after_the_backoff() {
    let mut m = joining_with(member("M", COOP));
    m.handle_response(
        1,
        Response::JoinGroup {
            epoch: E0,
            result: Err(ErrorCode::CoordinatorLoadInProgress),
        },
    );
    assert!(sent(&mut m).is_empty());
    assert_eq!(
        m.timers().find(|(t, _)| *t == MemberTimer::Retry),
        Some((MemberTimer::Retry, 51))
    );
    m.handle_timeout(51);
    assert!(matches!(
        sent(&mut m).as_slice(),
        [Request::JoinGroup { .. }]
    ));
}

#[test]
fn subscription_and_metadata_changes_rejoin() {
    let mut m = stable(COOP, &[1], 3);
    m.subscribe(5, BTreeSet::from(["T".to_owned(), "U".to_owned()]));
    let sub = join_metadata(&sent(&mut m));
    assert!(sub.topics.contains("U"));
    let mut m = stable(COOP, &[1], 3);
    m.handle_metadata(5, topic_t(4));
    assert!(sent(&mut m).is_empty(), "unchanged metadata");
    m.handle_metadata(5, topic_t(6));
    assert!(matches!(
        sent(&mut m).as_slice(),
        [Request::JoinGroup { .. }]
    ));
}

#[test]
fn a_malformed_assignment_is_reported_and_the_member_rejoins() {
    let mut m = joining_with(member("M", COOP));
    complete_round(&mut m, 0, 1, b"\x00".to_vec());
    assert!(
        events(&mut m)
            .iter()
            .any(|e| matches!(e, MemberEvent::Malformed(_)))
    );
    assert!(matches!(
        sent(&mut m).as_slice(),
        [Request::JoinGroup { .. }]
    ));
}

#[test]
fn a_join_lost_in_failover_is_sent_again() {
    let mut m = stable(COOP, &[1], 3);
    m.handle_response(
        5,
        Response::Heartbeat {
            epoch: E0,
            generation: Generation(3),
            result: Err(ErrorCode::RebalanceInProgress),
        },
    );
    sent(&mut m);
    // An answer to a heartbeat sent before the join says nothing about the join.
    m.handle_response(
        6,
        Response::Heartbeat {
            epoch: E0,
            generation: Generation(3),
            result: Ok(()),
        },
    );
    assert!(sent(&mut m).is_empty());
    m.handle_timer(100, MemberTimer::Heartbeat);
    assert!(matches!(
        sent(&mut m).as_slice(),
        [Request::Heartbeat { .. }]
    ));
    m.handle_response(
        100,
        Response::Heartbeat {
            epoch: E0,
            generation: Generation(3),
            result: Ok(()),
        },
    );
    assert!(matches!(
        sent(&mut m).as_slice(),
        [Request::JoinGroup { .. }]
    ));
}

#[cfg(feature = "faults")]
mod faults {
    use super::*;
    use crate::protocol::fault::{Fault, FaultSet};

    fn stable_faulty(fault: Fault) -> Member {
        let mut config = member("M", COOP);
        config.faults = FaultSet::of(&[fault]);
        let mut m = joining_with(config);
        complete_round(&mut m, 0, 3, assignment(COOP, &[1], &[], 0));
        sent(&mut m);
        events(&mut m);
        m
    }

    /// KAFKA-9823: the late error resets the member.
    #[test]
    fn stale_error_resets_the_member() {
        let mut m = stable_faulty(Fault::StaleErrorResets);
        m.handle_response(
            5,
            Response::Heartbeat {
                epoch: E0,
                generation: Generation(2),
                result: Err(ErrorCode::IllegalGeneration),
            },
        );
        assert!(m.consuming().is_empty());
        assert_eq!(events(&mut m), vec![MemberEvent::Lost(t(&[1]))]);
    }

    /// KAFKA-9184: without its own session timer the member keeps consuming.
    #[test]
    fn without_own_session_timer_the_member_keeps_consuming() {
        let mut m = stable_faulty(Fault::NoOwnSessionTimer);
        m.handle_timer(300, MemberTimer::Session);
        assert_eq!(m.consuming(), &t(&[1]));
    }
}

/// Found by the model's `subscribe` disruption: a member that left a topic kept consuming it
/// until the next assignment.
#[test]
fn leaving_a_topic_stops_its_partitions_at_once() {
    let mut m = stable(COOP, &[1, 2], 3);
    m.subscribe(5, BTreeSet::from(["u".to_owned()]));
    assert!(m.consuming().is_empty());
    assert_eq!(events(&mut m), vec![MemberEvent::Revoked(t(&[1, 2]))]);
    let requests = sent(&mut m);
    assert!(
        matches!(
            requests.as_slice(),
            [
                Request::OffsetCommit { .. },
                Request::OffsetCommit { .. },
                Request::JoinGroup { .. }
            ]
        ),
        "{requests:?}"
    );
}

#[test]
fn an_assignment_of_a_topic_left_meanwhile_is_not_taken_and_the_member_rejoins() {
    let mut m = joining_with(member("M", COOP));
    m.subscribe(1, BTreeSet::from(["u".to_owned()]));
    sent(&mut m);
    complete_round(&mut m, 2, 1, assignment(COOP, &[1], &[], 0));
    assert!(m.consuming().is_empty());
    assert!(
        sent(&mut m)
            .iter()
            .any(|r| matches!(r, Request::JoinGroup { .. })),
        "the member rejoins so that the partition goes elsewhere"
    );
}
