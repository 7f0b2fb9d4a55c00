//! The fault catalogue's regression files: each known bug's counterexample replays to a
//! violation of the property it breaks with the bug switched on, and the same actions, as far as
//! they stay enabled, violate nothing without it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rebalance::protocol::Fault;
use rebalance::protocol::GroupState;
use rebalance_model::config::{ModelConfig, NetworkKind};
use rebalance_model::faults::{self, CATALOGUE, CatalogueEntry, Expectation, fault_name};
use rebalance_model::liveness::{StateGraph, check_bottom_sccs};
use rebalance_model::properties;
use rebalance_model::regression::{LIVENESS, LIVENESS_REPLAY_LIMIT, violated_at_end};
use rebalance_model::{
    Action, Disruption, Expect, ModelState, RebalanceModel, Regression, liveness,
};
use stateright::Model;

fn regression_file(entry: &CatalogueEntry) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("regressions")
        .join(format!("{}.json", entry.id))
}

/// Replays `actions` from the initial state while they are enabled; returns the states reached
/// (initial first) and how many actions were taken.
fn enabled_prefix(model: &RebalanceModel, actions: &[Action]) -> (Vec<ModelState>, usize) {
    let mut states = vec![model.init_states().remove(0)];
    let mut enabled = Vec::new();
    for action in actions {
        let state = &states[states.len() - 1];
        enabled.clear();
        model.actions(state, &mut enabled);
        if !enabled.contains(action) {
            break;
        }
        match model.next_state(state, action.clone()) {
            Some(next) if model.within_boundary(&next) => states.push(next),
            _ => break,
        }
    }
    let taken = states.len() - 1;
    (states, taken)
}

/// Whether `property` is violated anywhere along `states` (an `always` at any state; liveness:
/// the last state is stuck).
fn violated_along(model: &RebalanceModel, property: &str, states: &[ModelState]) -> bool {
    if property == LIVENESS {
        let last = states[states.len() - 1].clone();
        return liveness::is_stuck(
            model,
            last,
            Action::is_fair,
            |s| properties::converged(model, s),
            LIVENESS_REPLAY_LIMIT,
        )
        .expect("liveness re-check within its state limit");
    }
    let p = properties::by_name(model, property).expect("the property exists");
    assert_eq!(
        p.expectation,
        stateright::Expectation::Always,
        "{property} is an always"
    );
    states.iter().any(|s| !(p.condition)(model, s))
}

#[test]
fn catalogue_ids_are_unique_and_every_core_fault_is_catalogued() {
    let ids: BTreeSet<&str> = CATALOGUE.iter().map(|e| e.id).collect();
    assert_eq!(ids.len(), CATALOGUE.len());
    let switched: BTreeSet<Fault> = CATALOGUE
        .iter()
        .flat_map(|e| e.faults.iter().copied())
        .collect();
    for fault in Fault::ALL {
        assert!(
            switched.contains(&fault),
            "{fault:?} has no catalogue entry"
        );
    }
    for e in &CATALOGUE {
        assert!(
            e.faults.iter().any(|f| f.issue() == e.id),
            "{}: its switches do not include the core fault for that issue",
            e.id
        );
        // Each entry's switches must be accepted by the model as they are.
        e.with_fault()
            .into_model()
            .expect("finding configuration with the fault");
        e.baseline()
            .into_model()
            .expect("finding configuration without the fault");
        assert_ne!(
            e.with_fault(),
            e.baseline(),
            "{}: switching it on changes nothing",
            e.id
        );
    }
}

#[test]
fn faults_are_switched_on_by_catalogue_id_or_core_name() {
    let entry = faults::entry("kafka-9184").expect("ids are case-insensitive");
    let mut config = entry.baseline();
    faults::switch_on(&mut config, "KAFKA-9184").unwrap();
    faults::switch_on(&mut config, "KAFKA-9184").unwrap();
    assert_eq!(config, entry.with_fault(), "switching on is idempotent");
    assert_eq!(config.faults, vec![fault_name(Fault::NoOwnSessionTimer)]);
    faults::switch_on(&mut config, "trust-all-claims").unwrap();
    assert!(config.faults.contains(&"trust-all-claims".to_owned()));
    config
        .clone()
        .into_model()
        .expect("core names are accepted");
    faults::switch_on(&mut config, "no-such-fault").unwrap();
    assert!(
        config.into_model().is_err(),
        "unknown names are refused by the model"
    );
    assert!(faults::entry("KAFKA-1").is_err());
}

#[test]
fn every_fault_has_a_counterexample_that_needs_the_fault() {
    for entry in CATALOGUE.iter().filter(|e| e.expect == Expectation::Found) {
        let path = regression_file(entry);
        let regression = Regression::load(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (regenerate with `rebalance faults --verify --save-dir model/regressions`)", entry.id));
        assert_eq!(regression.property, entry.property, "{}", entry.id);
        assert_eq!(regression.expect, Expect::Violated, "{}", entry.id);
        assert_eq!(
            regression.config,
            entry.with_fault(),
            "{}: the file's configuration is not the catalogue's finding configuration",
            entry.id
        );

        // With the fault: the run replays and ends in a violation.
        let trace = regression
            .replay()
            .unwrap_or_else(|e| panic!("{}: {e}", entry.id));
        assert!(
            violated_at_end(&trace, entry.property).unwrap(),
            "{}: no violation of `{}` with the fault",
            entry.id,
            entry.property
        );

        // Without it: the same actions, as long as they are enabled, violate nothing.
        let model = entry.baseline().into_model().unwrap();
        let (states, taken) = enabled_prefix(&model, &regression.actions);
        assert!(
            taken > 0,
            "{}: not even the first action is enabled",
            entry.id
        );
        assert!(
            !violated_along(&model, entry.property, &states),
            "{}: `{}` is violated without the fault after {taken} of {} actions",
            entry.id,
            entry.property,
            regression.actions.len()
        );
    }
}

/// KAFKA-12890's first finding configuration (before the `stall` disruption existed): 2
/// members, 1 partition, a network that may lose one message.
fn lossy_config() -> ModelConfig {
    let mut c = faults::entry("KAFKA-12890").unwrap().baseline();
    c.partitions = 1;
    c.disruptions = 0;
    c.kinds = BTreeSet::new();
    c.network = NetworkKind::Lossy;
    c.network_faults = 1;
    c
}

/// The start of a run of [`lossy_config`] in which the network loses the JoinGroup m0 sends
/// when m1 joins: m0 keeps heartbeating (answered `RebalanceInProgress`) and the coordinator
/// waits for its join.
const LOST_JOIN: &str = r#"[
  {"deliver": {"member": "m0", "direction": "to-coordinator", "index": 0}},
  {"deliver": {"member": "m0", "direction": "to-member", "index": 0}},
  {"deliver": {"member": "m0", "direction": "to-coordinator", "index": 0}},
  {"deliver": {"member": "m0", "direction": "to-member", "index": 0}},
  {"deliver": {"member": "m0", "direction": "to-coordinator", "index": 0}},
  {"deliver": {"member": "m0", "direction": "to-member", "index": 0}},
  {"deliver": {"member": "m1", "direction": "to-coordinator", "index": 0}},
  {"deliver": {"member": "m1", "direction": "to-member", "index": 0}},
  {"deliver": {"member": "m1", "direction": "to-coordinator", "index": 0}},
  {"member-timer": {"slot": 0, "timer": "heartbeat"}},
  {"deliver": {"member": "m0", "direction": "to-coordinator", "index": 0}},
  {"deliver": {"member": "m0", "direction": "to-member", "index": 0}},
  {"drop": {"member": "m0", "direction": "to-coordinator", "index": 0}},
  {"member-timer": {"slot": 0, "timer": "heartbeat"}}
]"#;

fn rebalance_timer_enabled(model: &RebalanceModel, state: &ModelState) -> bool {
    let mut enabled = Vec::new();
    model.actions(state, &mut enabled);
    enabled.iter().any(|a| {
        matches!(
            a,
            Action::MemberTimer {
                slot: 0,
                timer: rebalance_model::state::MemTimer::Rebalance
            }
        )
    })
}

/// The rule `member-timeouts-only-when-cut-off` lets a connected member's rebalance timer (its
/// request timeout) fire once its JoinGroup was lost, not while the JoinGroup is in flight, and
/// the group then converges: a lost request does not make the correct protocol look stuck.
#[test]
fn a_lost_join_group_times_out_and_the_group_converges() {
    let model = lossy_config().into_model().unwrap();
    let actions: Vec<Action> = serde_json::from_str(LOST_JOIN).unwrap();
    let (states, taken) = enabled_prefix(&model, &actions);
    assert_eq!(taken, actions.len(), "the whole path replays");
    let before_drop = &states[states.len() - 3];
    let after_drop = &states[states.len() - 1];
    assert!(
        !RebalanceModel::rebalance_request_lost(before_drop, 0)
            && !rebalance_timer_enabled(&model, before_drop),
        "the JoinGroup is still in flight: no timeout yet"
    );
    assert!(RebalanceModel::rebalance_request_lost(after_drop, 0));
    assert!(rebalance_timer_enabled(&model, after_drop));
    assert!(
        !liveness::is_stuck(
            &model,
            after_drop.clone(),
            Action::is_fair,
            |s| properties::converged(&model, s),
            LIVENESS_REPLAY_LIMIT,
        )
        .unwrap(),
        "the member rejoins and the group converges"
    );
}

/// Whether the liveness check finds a stuck fair bottom SCC in `config`.
fn stuck_somewhere(config: ModelConfig) -> bool {
    let model = config.into_model().unwrap();
    let graph = StateGraph::build(&model, model.init_states(), Action::is_fair, 100_000)
        .expect("a small graph");
    check_bottom_sccs(&graph, |s| properties::converged(&model, s))
        .counterexample
        .is_some()
}

/// KAFKA-12890 needs both of its switches: with the missing sync timeout alone the hung leader's
/// refused heartbeats let its session expire, and with heartbeats accepted alone the sync
/// timeout evicts it; only together is the group stuck (and the lossy network, with the
/// member's own request timeout, never sticks it).
#[test]
fn kafka_12890_needs_both_switches_and_a_stall() {
    let entry = faults::entry("KAFKA-12890").unwrap();
    assert_eq!(entry.expect, Expectation::Found);
    assert_eq!(entry.faults.len(), 2);
    assert!(stuck_somewhere(entry.with_fault()));
    assert!(!stuck_somewhere(entry.baseline()));
    for fault in entry.faults {
        let mut config = entry.baseline();
        config.faults.push(fault_name(*fault));
        assert!(!stuck_somewhere(config), "{fault:?} alone sticks the group");
    }
    let mut lossy = lossy_config();
    entry.switch_on(&mut lossy).unwrap();
    assert!(!stuck_somewhere(lossy), "a lost message sticks the group");
}

/// The regression's stall hits the leader after the coordinator sent it the JoinGroup answer
/// of a new generation: its heartbeats go on under its old generation, and with the bug they
/// keep its session alive, so no coordinator timer may evict it.
#[test]
fn kafka_12890_counterexample_stalls_the_leader_before_sync_group() {
    let entry = faults::entry("KAFKA-12890").unwrap();
    let regression = Regression::load(&regression_file(entry)).unwrap();
    let trace = regression.replay().unwrap();
    let model = entry.with_fault().into_model().unwrap();
    let last = trace.states.last().expect("states");
    let leader = last.coordinator.leader().expect("a leader").clone();
    let slot = last.slot_of(&leader).expect("the leader runs");
    assert!(last.slots[slot].stalled, "the stalled member leads");
    assert!(matches!(
        last.coordinator.state(),
        GroupState::AwaitingSync { .. }
    ));
    assert!(RebalanceModel::heartbeats_keep_session(last, &leader));
    let mut enabled = Vec::new();
    model.actions(last, &mut enabled);
    assert!(
        !enabled
            .iter()
            .any(|a| matches!(a, Action::CoordinatorTimer(_))),
        "no coordinator timer may fire: {enabled:?}"
    );
    // Without the bug the same state lets the coordinator go on (its session or the sync
    // timeout evicts the hung leader).
    let baseline = entry.baseline().into_model().unwrap();
    let (states, _) = enabled_prefix(&baseline, &regression.actions);
    let end = &states[states.len() - 1];
    assert!(!RebalanceModel::heartbeats_keep_session(end, &leader));
    enabled.clear();
    baseline.actions(end, &mut enabled);
    assert!(
        enabled
            .iter()
            .any(|a| matches!(a, Action::CoordinatorTimer(_)))
    );
}

/// A stalled member that is not the leader: stalled in a stable group its accepted heartbeats
/// keep it in the group (no timer may evict it) and the group stays converged, its partitions
/// counted as its own; stalled before it syncs, it is evicted and the others converge. Every
/// such stall is in the finding configuration's state space, which holds every property (the
/// catalogue verification); here the first case is shown directly.
#[test]
fn a_stalled_non_leader_in_a_stable_group_stays_and_the_group_stays_converged() {
    let entry = faults::entry("KAFKA-12890").unwrap();
    for config in [entry.baseline(), entry.with_fault()] {
        let model = config.into_model().unwrap();
        // Run until a quiescent converged state with two members consuming, with the budget
        // unspent: a breadth-first walk of the state space.
        let mut seen = std::collections::HashSet::new();
        let mut queue: std::collections::VecDeque<ModelState> =
            model.init_states().into_iter().collect();
        let mut stable = None;
        while let Some(state) = queue.pop_front() {
            if properties::converged(&model, &state)
                && state.network.is_empty()
                && state.running().all(|(_, m)| !m.consuming().is_empty())
                && state.disruptions_used == 0
            {
                stable = Some(state);
                break;
            }
            let mut actions = Vec::new();
            model.actions(&state, &mut actions);
            for a in actions {
                if matches!(a, Action::Disrupt(_)) {
                    continue;
                }
                if let Some(next) = model.next_state(&state, a)
                    && model.within_boundary(&next)
                    && seen.insert(format!("{next:?}"))
                {
                    queue.push_back(next);
                }
            }
        }
        let stable = stable.expect("a stable group of two");
        let leader = stable.coordinator.leader().unwrap().clone();
        let other = (0..2)
            .find(|s| *RebalanceModel::slot_member_id(&stable, *s) != leader)
            .unwrap();
        let stalled = model
            .next_state(&stable, Action::Disrupt(Disruption::Stall(other)))
            .unwrap();
        assert!(properties::converged(&model, &stalled));
        assert!(properties::quiescent(&model, &stalled));
        let id = RebalanceModel::slot_member_id(&stalled, other);
        assert!(RebalanceModel::heartbeats_keep_session(&stalled, &id));
        assert!(
            !liveness::is_stuck(
                &model,
                stalled,
                Action::is_fair,
                |s| properties::converged(&model, s),
                LIVENESS_REPLAY_LIMIT,
            )
            .unwrap()
        );
    }
}

/// A stall breaks the properties' teeth nowhere: the stalled member's holdings do not count as
/// consumption, and without that exclusion the same states would report a double owner.
#[test]
fn a_stalled_member_consumes_nothing() {
    let entry = faults::entry("KAFKA-12890").unwrap();
    let model = entry.baseline().into_model().unwrap();
    let regression = Regression::load(&regression_file(entry)).unwrap();
    let (states, _) = enabled_prefix(&model, &regression.actions);
    let mut end = states[states.len() - 1].clone();
    let stalled = (0..end.slots.len())
        .find(|s| end.slots[*s].stalled)
        .unwrap();
    assert!(
        !end.slots[stalled]
            .member
            .as_ref()
            .unwrap()
            .consuming()
            .is_empty()
    );
    // Another member holding the same partitions: fine while the first is stalled, a double
    // owner once it is not.
    let other = 1 - stalled;
    end.slots[other].member = end.slots[stalled].member.clone();
    assert!(properties::no_double_ownership(&model, &end));
    end.slots[stalled].stalled = false;
    assert!(!properties::no_double_ownership(&model, &end));
}
