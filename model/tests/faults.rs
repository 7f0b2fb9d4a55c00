//! The fault catalogue's regression files: each known bug's counterexample replays to a
//! violation of the property it breaks with the bug switched on, and the same actions, as far as
//! they stay enabled, violate nothing without it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rebalance::protocol::Fault;
use rebalance_model::faults::{self, CATALOGUE, CatalogueEntry, Expectation, fault_name};
use rebalance_model::properties;
use rebalance_model::regression::{LIVENESS, LIVENESS_REPLAY_LIMIT, violated_at_end};
use rebalance_model::{Action, Expect, ModelState, RebalanceModel, Regression, liveness};
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

/// The start of a run of KAFKA-12890's finding configuration in which the network loses the
/// JoinGroup m0 sends when m1 joins: m0 keeps heartbeating (answered `RebalanceInProgress`) and
/// the coordinator waits for its join.
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
    let entry = faults::entry("KAFKA-12890").unwrap();
    let model = entry.baseline().into_model().unwrap();
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

/// KAFKA-12890 is masked in this core: with and without the missing sync timeout, its finding
/// configuration converges (`rebalance faults --verify` checks the same; the entry must turn
/// into an ordinary one as soon as this fails).
#[test]
fn kafka_12890_is_masked_both_ways() {
    let entry = faults::entry("KAFKA-12890").unwrap();
    assert!(matches!(entry.expect, Expectation::Masked { .. }));
    let v = faults::verify(entry);
    assert!(v.ok(), "{v:?}");
}
