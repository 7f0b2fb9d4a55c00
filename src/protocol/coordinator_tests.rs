//! Coordinator unit tests: every state transition, timer and error path.

use std::collections::BTreeMap;

use super::coordinator::{Coordinator, CoordinatorConfig, CoordinatorTimer};
use super::group::{GroupRecord, GroupState};
use super::messages::{ErrorCode, JoinGroupOk, Request, Response};
use super::test_support::id;
use crate::ids::{CoordinatorEpoch, Generation, MemberId, TopicPartition};

const E0: CoordinatorEpoch = CoordinatorEpoch(0);

fn join(c: &mut Coordinator, now: u64, m: &str) {
    c.handle_request(
        now,
        id(m),
        Request::JoinGroup {
            epoch: c.epoch(),
            member_id: id(m),
            session_timeout_ms: 300,
            rebalance_timeout_ms: 600,
            metadata: m.as_bytes().to_vec(),
        },
    );
}

fn sync(c: &mut Coordinator, now: u64, m: &str, generation: i32, assignments: &[(&str, &[u8])]) {
    c.handle_request(
        now,
        id(m),
        Request::SyncGroup {
            epoch: c.epoch(),
            generation: Generation(generation),
            member_id: id(m),
            assignments: assignments
                .iter()
                .map(|(k, v)| (id(k), v.to_vec()))
                .collect(),
        },
    );
}

fn heartbeat(c: &mut Coordinator, now: u64, m: &str, generation: i32) -> Result<(), ErrorCode> {
    c.handle_request(
        now,
        id(m),
        Request::Heartbeat {
            epoch: c.epoch(),
            generation: Generation(generation),
            member_id: id(m),
        },
    );
    match drain(c).pop() {
        Some((_, Response::Heartbeat { result, .. })) => result,
        other => panic!("expected a heartbeat answer, got {other:?}"),
    }
}

fn drain(c: &mut Coordinator) -> Vec<(MemberId, Response)> {
    std::iter::from_fn(|| c.poll_transmit()).collect()
}

fn persisted(c: &mut Coordinator) -> Vec<GroupRecord> {
    std::iter::from_fn(|| c.poll_persist()).collect()
}

/// A stable group of `members` (the first is leader) at generation 1, each assigned its name.
fn stable(members: &[&str]) -> Coordinator {
    let mut c = Coordinator::new(E0, CoordinatorConfig::default());
    join(&mut c, 0, members[0]);
    sync(&mut c, 0, members[0], 1, &[]);
    for m in &members[1..] {
        join(&mut c, 0, m);
    }
    if members.len() > 1 {
        join(&mut c, 0, members[0]);
    }
    let generation = c.generation().0;
    let assignments: Vec<(&str, &[u8])> = members.iter().map(|m| (*m, m.as_bytes())).collect();
    for m in members.iter().rev() {
        sync(&mut c, 0, m, generation, &assignments);
    }
    drain(&mut c);
    persisted(&mut c);
    assert!(matches!(c.state(), GroupState::Stable { .. }));
    c
}

#[test]
fn first_member_joins_syncs_and_is_stable() {
    let mut c = Coordinator::new(E0, CoordinatorConfig::default());
    join(&mut c, 0, "A");
    assert_eq!(c.generation(), Generation(1));
    assert_eq!(c.leader(), Some(&id("A")));
    assert!(matches!(
        persisted(&mut c).as_slice(),
        [GroupRecord::Generation {
            generation: Generation(1),
            ..
        }]
    ));
    assert_eq!(
        drain(&mut c),
        vec![(
            id("A"),
            Response::JoinGroup {
                epoch: E0,
                result: Ok(JoinGroupOk {
                    generation: Generation(1),
                    leader: id("A"),
                    members: BTreeMap::from([(id("A"), b"A".to_vec())]),
                }),
            }
        )]
    );
    assert!(matches!(c.state(), GroupState::AwaitingSync { .. }));
    let timers: Vec<_> = c.timers().collect();
    assert_eq!(
        timers,
        vec![
            (CoordinatorTimer::Sync, 600),
            (CoordinatorTimer::Session(id("A")), 300)
        ]
    );
    sync(&mut c, 10, "A", 1, &[("A", b"x")]);
    assert!(matches!(
        persisted(&mut c).as_slice(),
        [GroupRecord::Assignment {
            generation: Generation(1),
            ..
        }]
    ));
    assert_eq!(
        drain(&mut c),
        vec![(
            id("A"),
            Response::SyncGroup {
                epoch: E0,
                generation: Generation(1),
                result: Ok(b"x".to_vec())
            }
        )]
    );
    assert_eq!(
        c.assignment().map(|a| a[&id("A")].clone()),
        Some(b"x".to_vec())
    );
    assert_eq!(c.poll_timeout(), Some(310));
}

#[test]
fn a_new_member_starts_a_rebalance_and_the_leader_is_kept() {
    let mut c = stable(&["B"]);
    join(&mut c, 5, "A");
    assert!(matches!(c.state(), GroupState::PreparingRebalance { .. }));
    let g = c.generation().0;
    assert_eq!(
        heartbeat(&mut c, 6, "B", g),
        Err(ErrorCode::RebalanceInProgress)
    );
    join(&mut c, 7, "B");
    let answers = drain(&mut c);
    assert_eq!(answers.len(), 2);
    for (to, answer) in answers {
        let Response::JoinGroup { result: Ok(ok), .. } = answer else {
            panic!("{answer:?}")
        };
        assert_eq!(ok.leader, id("B"), "B led before and rejoined");
        assert_eq!(ok.members.len(), if to == id("B") { 2 } else { 0 });
    }
}

#[test]
fn a_departed_leader_is_replaced_by_the_smallest_member_id() {
    let mut c = stable(&["A", "C", "B"]);
    c.handle_request(
        1,
        id("A"),
        Request::LeaveGroup {
            epoch: E0,
            member_id: id("A"),
        },
    );
    join(&mut c, 2, "C");
    join(&mut c, 2, "B");
    assert_eq!(c.leader(), Some(&id("B")));
}

#[test]
fn fencing_errors() {
    let mut c = stable(&["A"]);
    let g = c.generation().0;
    assert_eq!(heartbeat(&mut c, 1, "A", g), Ok(()));
    assert_eq!(
        heartbeat(&mut c, 1, "Z", g),
        Err(ErrorCode::UnknownMemberId)
    );
    assert_eq!(
        heartbeat(&mut c, 1, "A", g - 1),
        Err(ErrorCode::IllegalGeneration)
    );
    c.handle_request(
        1,
        id("A"),
        Request::Heartbeat {
            epoch: CoordinatorEpoch(7),
            generation: Generation(g),
            member_id: id("A"),
        },
    );
    assert!(matches!(
        drain(&mut c).as_slice(),
        [(
            _,
            Response::Heartbeat {
                result: Err(ErrorCode::NotCoordinator),
                ..
            }
        )]
    ));
    sync(&mut c, 1, "A", g - 1, &[]);
    assert!(matches!(
        drain(&mut c).as_slice(),
        [(
            _,
            Response::SyncGroup {
                result: Err(ErrorCode::IllegalGeneration),
                ..
            }
        )]
    ));
    let tp = TopicPartition::new("T", 0);
    let commit = |generation| Request::OffsetCommit {
        epoch: E0,
        generation: Generation(generation),
        member_id: id("A"),
        partition: tp.clone(),
        offset: 9,
    };
    c.handle_request(1, id("A"), commit(g - 1));
    assert!(matches!(
        drain(&mut c).as_slice(),
        [(
            _,
            Response::OffsetCommit {
                result: Err(ErrorCode::IllegalGeneration),
                ..
            }
        )]
    ));
    assert!(persisted(&mut c).is_empty());
    c.handle_request(1, id("A"), commit(g));
    assert!(matches!(
        drain(&mut c).as_slice(),
        [(_, Response::OffsetCommit { result: Ok(()), .. })]
    ));
    assert_eq!(
        persisted(&mut c),
        vec![GroupRecord::Offset {
            partition: tp.clone(),
            offset: 9
        }]
    );
    assert_eq!(c.offsets().get(&tp), Some(&9));
    // During the sync phase commits wait for the new generation.
    join(&mut c, 2, "A");
    drain(&mut c);
    c.handle_request(2, id("A"), commit(g + 1));
    assert!(matches!(
        drain(&mut c).as_slice(),
        [(
            _,
            Response::OffsetCommit {
                result: Err(ErrorCode::RebalanceInProgress),
                ..
            }
        )]
    ));
}

#[test]
fn join_timer_removes_members_that_did_not_rejoin() {
    let mut c = stable(&["A", "B"]);
    let g = c.generation();
    join(&mut c, 10, "A");
    assert_eq!(
        c.timers().find(|(t, _)| *t == CoordinatorTimer::Join),
        Some((CoordinatorTimer::Join, 610))
    );
    c.handle_timer(20, CoordinatorTimer::Join);
    assert_eq!(c.generation(), g.next());
    assert_eq!(c.members().keys().collect::<Vec<_>>(), vec![&id("A")]);
}

#[test]
fn sync_timer_removes_unsynced_members_and_restarts() {
    let mut c = stable(&["A", "B"]);
    join(&mut c, 0, "A");
    join(&mut c, 0, "B");
    drain(&mut c);
    let g = c.generation().0;
    sync(&mut c, 0, "B", g, &[]);
    assert!(drain(&mut c).is_empty(), "held until the leader syncs");
    // Heartbeats keep the leader's session alive; only the sync timer ends the wait.
    assert_eq!(heartbeat(&mut c, 500, "A", g), Ok(()));
    c.handle_timer(500, CoordinatorTimer::Sync);
    assert!(
        !c.members().contains_key(&id("A")),
        "the leader never synced"
    );
    assert_eq!(
        drain(&mut c),
        vec![(
            id("B"),
            Response::SyncGroup {
                epoch: E0,
                generation: Generation(g),
                result: Err(ErrorCode::RebalanceInProgress)
            }
        )]
    );
    assert!(matches!(c.state(), GroupState::PreparingRebalance { .. }));
}

#[test]
fn session_expiry_of_a_stable_member_starts_a_rebalance() {
    let mut c = stable(&["A", "B"]);
    c.handle_timeout(299);
    assert!(matches!(c.state(), GroupState::Stable { .. }));
    let g = c.generation().0;
    assert_eq!(heartbeat(&mut c, 200, "A", g), Ok(()));
    c.handle_timeout(300);
    assert!(!c.members().contains_key(&id("B")));
    assert!(c.members().contains_key(&id("A")));
    assert!(matches!(c.state(), GroupState::PreparingRebalance { .. }));
}

#[test]
fn last_member_leaving_empties_the_group() {
    let mut c = stable(&["A"]);
    c.handle_request(
        1,
        id("A"),
        Request::LeaveGroup {
            epoch: E0,
            member_id: id("A"),
        },
    );
    assert_eq!(c.state(), &GroupState::Empty);
    assert_eq!(
        persisted(&mut c),
        vec![GroupRecord::Empty {
            generation: c.generation()
        }]
    );
    c.handle_request(
        1,
        id("A"),
        Request::LeaveGroup {
            epoch: E0,
            member_id: id("A"),
        },
    );
    assert!(matches!(
        drain(&mut c).pop(),
        Some((
            _,
            Response::LeaveGroup {
                result: Err(ErrorCode::UnknownMemberId),
                ..
            }
        ))
    ));
}

fn log_of(c: &mut Coordinator) -> Vec<GroupRecord> {
    // `stable` drained its records; rebuild a log by replaying a fresh group.
    let _ = c;
    let mut fresh = Coordinator::new(E0, CoordinatorConfig::default());
    join(&mut fresh, 0, "A");
    sync(&mut fresh, 0, "A", 1, &[("A", b"a")]);
    persisted(&mut fresh)
}

#[test]
fn recovery_of_a_stable_group_loads_then_fences_old_generations() {
    let mut old = stable(&["A"]);
    let log = log_of(&mut old);
    let mut c = Coordinator::recover(
        CoordinatorEpoch(1),
        CoordinatorConfig::default(),
        &log,
        1000,
    );
    assert_eq!(c.state().name(), "Loading");
    assert_eq!(
        heartbeat(&mut c, 1000, "A", 1),
        Err(ErrorCode::CoordinatorLoadInProgress)
    );
    c.handle_request(1000, id("A"), Request::FindCoordinator { epoch: E0 });
    assert_eq!(
        drain(&mut c),
        vec![(
            id("A"),
            Response::FindCoordinator {
                epoch: CoordinatorEpoch(1)
            }
        )]
    );
    c.handle_timer(1000, CoordinatorTimer::Load);
    assert_eq!(
        c.assignment().map(|a| a[&id("A")].clone()),
        Some(b"a".to_vec())
    );
    assert_eq!(heartbeat(&mut c, 1001, "A", 1), Ok(()));
    assert_eq!(
        heartbeat(&mut c, 1001, "A", 0),
        Err(ErrorCode::IllegalGeneration)
    );
    c.handle_request(
        1001,
        id("A"),
        Request::Heartbeat {
            epoch: E0,
            generation: Generation(1),
            member_id: id("A"),
        },
    );
    assert!(matches!(
        drain(&mut c).as_slice(),
        [(
            _,
            Response::Heartbeat {
                result: Err(ErrorCode::NotCoordinator),
                ..
            }
        )]
    ));
}

#[test]
fn recovery_between_join_and_sync_starts_a_new_rebalance() {
    let mut fresh = Coordinator::new(E0, CoordinatorConfig::default());
    join(&mut fresh, 0, "A");
    let log = persisted(&mut fresh);
    let mut c = Coordinator::recover(CoordinatorEpoch(1), CoordinatorConfig::default(), &log, 0);
    c.handle_timeout(100);
    assert!(matches!(c.state(), GroupState::PreparingRebalance { .. }));
    assert_eq!(c.generation(), Generation(1));
    sync(&mut c, 100, "A", 1, &[]);
    assert!(matches!(
        drain(&mut c).as_slice(),
        [(
            _,
            Response::SyncGroup {
                result: Err(ErrorCode::RebalanceInProgress),
                ..
            }
        )]
    ));
}

#[test]
fn recovery_from_an_empty_log_is_an_empty_group() {
    let mut c = Coordinator::recover(CoordinatorEpoch(1), CoordinatorConfig::default(), &[], 0);
    c.handle_timeout(100);
    assert_eq!(c.state(), &GroupState::Empty);
    assert_eq!(c.poll_timeout(), None);
}

#[test]
fn rearming_at_the_same_time_gives_an_equal_state() {
    let mut c = stable(&["A", "B"]);
    let g = c.generation().0;
    assert_eq!(heartbeat(&mut c, 50, "A", g), Ok(()));
    let once = c.clone();
    assert_eq!(heartbeat(&mut c, 50, "A", g), Ok(()));
    assert_eq!(c, once);
}

#[test]
fn firing_an_unarmed_timer_does_nothing() {
    let mut c = stable(&["A"]);
    let before = c.clone();
    c.handle_timer(5, CoordinatorTimer::Join);
    c.handle_timer(5, CoordinatorTimer::Session(id("Z")));
    assert_eq!(c, before);
}

#[test]
fn a_resigned_coordinator_refuses_everything() {
    let mut c = stable(&["A"]);
    c.resign();
    assert_eq!(c.poll_timeout(), None);
    assert_eq!(heartbeat(&mut c, 1, "A", 1), Err(ErrorCode::NotCoordinator));
    c.handle_request(1, id("A"), Request::FindCoordinator { epoch: E0 });
    assert!(drain(&mut c).is_empty());
}

#[cfg(feature = "faults")]
mod faults {
    use super::*;
    use crate::protocol::fault::{Fault, FaultSet};

    fn config(fault: Fault) -> CoordinatorConfig {
        CoordinatorConfig {
            faults: FaultSet::of(&[fault]),
            ..CoordinatorConfig::default()
        }
    }

    /// KAFKA-12890: with the fault no sync timer is armed, so nothing ends the wait.
    #[test]
    fn no_sync_timeout_leaves_the_group_awaiting_sync() {
        let mut c = Coordinator::new(E0, config(Fault::NoSyncTimeout));
        join(&mut c, 0, "A");
        assert!(c.timers().all(|(t, _)| t != CoordinatorTimer::Sync));
        assert_eq!(heartbeat(&mut c, 250, "A", 1), Ok(()));
        c.handle_timeout(10_000);
        assert!(!c.members().is_empty() || matches!(c.state(), GroupState::Empty));
        let mut fixed = Coordinator::new(E0, CoordinatorConfig::default());
        join(&mut fixed, 0, "A");
        assert!(fixed.timers().any(|(t, _)| t == CoordinatorTimer::Sync));
    }

    /// KAFKA-12890: with the fault a heartbeat under an older generation, refused as before,
    /// still pushes the session deadline out while the group awaits sync (and only then).
    #[test]
    fn heartbeat_keeps_session_while_awaiting_sync() {
        let session = |c: &Coordinator| {
            c.timers()
                .find(|(t, _)| *t == CoordinatorTimer::Session(id("A")))
                .map(|(_, d)| d)
        };
        for (fault, kept) in [
            (Some(Fault::HeartbeatKeepsSessionWhileAwaitingSync), true),
            (None, false),
        ] {
            let mut c = match fault {
                Some(f) => Coordinator::new(E0, config(f)),
                None => Coordinator::new(E0, CoordinatorConfig::default()),
            };
            join(&mut c, 0, "A");
            assert!(matches!(c.state(), GroupState::AwaitingSync { .. }));
            let before = session(&c);
            assert_eq!(
                heartbeat(&mut c, 100, "A", 0),
                Err(ErrorCode::IllegalGeneration)
            );
            assert_eq!(session(&c) != before, kept, "fault {fault:?}");
            sync(&mut c, 100, "A", 1, &[("A", b"a")]);
            let stable = session(&c);
            let _ = heartbeat(&mut c, 200, "A", 0);
            assert_eq!(
                session(&c),
                stable,
                "stable: an old generation never counts"
            );
        }
    }

    /// KAFKA-2017: with the fault nothing is written and a recovered coordinator knows nothing.
    #[test]
    fn no_persistence_forgets_the_group() {
        let mut c = Coordinator::new(E0, config(Fault::NoPersistence));
        join(&mut c, 0, "A");
        sync(&mut c, 0, "A", 1, &[("A", b"a")]);
        assert!(persisted(&mut c).is_empty());
        let log = log_of(&mut c);
        let mut r =
            Coordinator::recover(CoordinatorEpoch(1), config(Fault::NoPersistence), &log, 0);
        r.handle_timeout(100);
        assert_eq!(r.state(), &GroupState::Empty);
        assert_eq!(
            r.generation(),
            Generation(0),
            "generations start over: stale members are not fenced"
        );
    }
}
