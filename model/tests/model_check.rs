//! Exhaustive checks of small configurations: pinned state counts, every property on the
//! default configuration, and discoveries with core faults switched on.

use std::collections::BTreeSet;

use rebalance_model::checker::{CheckOptions, Strategy, check};
use rebalance_model::properties::{self as props};
use rebalance_model::regression::{self, LIVENESS};
use rebalance_model::{DisruptionKind, ModelConfig, Preset, ProtocolKind};
use stateright::{Checker, Model};

fn small(protocol: ProtocolKind, kinds: &[DisruptionKind]) -> ModelConfig {
    let mut c = Preset::Quick.config(protocol);
    c.kinds = kinds.iter().copied().collect::<BTreeSet<_>>();
    c
}

fn quiet() -> impl FnMut(&rebalance_model::Progress) {
    |_| {}
}

#[test]
fn pinned_state_counts_for_a_small_config() {
    // Two members, one topic of two partitions, one crash. The numbers change only when the
    // core's or the model's behaviour changes: update them deliberately.
    let model = small(ProtocolKind::Eager, &[DisruptionKind::Crash])
        .into_model()
        .unwrap();
    let checker = model.checker().spawn_dfs().join();
    assert!(checker.is_done());
    let (unique, total) = (checker.unique_state_count(), checker.state_count());
    assert_eq!((unique, total), PINNED_EAGER_CRASH, "unique, total");
}

/// (unique states, generated states) of [`pinned_state_counts_for_a_small_config`].
const PINNED_EAGER_CRASH: (usize, usize) = (1659, 3395);

#[test]
fn safety_holds_on_the_quick_config_for_every_protocol() {
    for protocol in ProtocolKind::ALL {
        let model = Preset::Quick.config(protocol).into_model().unwrap();
        let options = CheckOptions {
            liveness_limit: 0,
            ..CheckOptions::default()
        };
        let report = check(&model, &options, &mut quiet());
        for p in &report.properties {
            // `converged when quiescent` is left out: the core's failover handling currently
            // violates it for the cooperative protocols (see model/regressions/).
            if p.expectation == "always" && p.name != props::CONVERGED_WHEN_QUIESCENT {
                assert_eq!(p.status, "holds", "{protocol}: {}", p.name);
            }
            if p.expectation == "sometimes" {
                assert_eq!(p.status, "found", "{protocol}: {}", p.name);
            }
        }
    }
}

#[test]
fn eager_with_crashes_passes_every_property_including_liveness() {
    let model = small(
        ProtocolKind::Eager,
        &[DisruptionKind::Crash, DisruptionKind::Join],
    )
    .into_model()
    .unwrap();
    let report = check(&model, &CheckOptions::default(), &mut quiet());
    for p in &report.properties {
        assert!(!p.is_failure(), "{} is {}", p.name, p.status);
    }
    let liveness = report
        .properties
        .iter()
        .find(|p| p.name == LIVENESS)
        .unwrap();
    assert_eq!(liveness.status, "holds", "liveness must have been checked");
}

#[test]
fn every_always_has_a_paired_sometimes() {
    let model = Preset::Quick
        .config(ProtocolKind::Deferred)
        .into_model()
        .unwrap();
    let names: Vec<&str> = model.properties().iter().map(|p| p.name).collect();
    for (always, example) in [
        (props::NO_DOUBLE_OWNERSHIP, props::EX_TWO_CONSUMERS),
        (props::SUBSCRIBED_ONLY, props::EX_CONSUMING),
        (props::GENERATIONS_MONOTONIC, props::EX_GENERATION_SURVIVES),
        (props::COMMITS_FROM_OWNER, props::EX_COMMIT),
        (props::CONVERGED_WHEN_QUIESCENT, props::EX_CONVERGED),
    ] {
        assert!(names.contains(&always), "{always}");
        assert!(names.contains(&example), "{example}");
    }
}

/// Checks with a core fault on and asserts the property is violated, by a counterexample that
/// replays.
fn assert_found(config: ModelConfig, property: &str) {
    let model = config.clone().into_model().unwrap();
    let options = CheckOptions {
        strategy: Strategy::Bfs,
        liveness_limit: if property == LIVENESS { 400_000 } else { 0 },
        ..CheckOptions::default()
    };
    let report = check(&model, &options, &mut quiet());
    let p = report
        .properties
        .iter()
        .find(|p| p.name == property)
        .unwrap();
    assert_eq!(p.status, "violated", "{property} with {:?}", config.faults);
    let actions = &p.counterexample.as_ref().unwrap().actions;
    let trace = regression::replay_actions(model, actions).unwrap();
    assert!(regression::violated_at_end(&trace, property).unwrap());
}

#[test]
fn zombie_without_own_session_timer_is_found_as_double_ownership() {
    // KAFKA-9184: a cut-off member that keeps consuming.
    let mut c = small(ProtocolKind::Cooperative, &[DisruptionKind::Isolate]);
    c.faults = vec!["NoOwnSessionTimer".to_owned()];
    assert_found(c.clone(), props::NO_DOUBLE_OWNERSHIP);
    // And without the fault the same configuration is safe.
    let model = {
        c.faults.clear();
        c.into_model().unwrap()
    };
    let report = check(
        &model,
        &CheckOptions {
            liveness_limit: 0,
            ..CheckOptions::default()
        },
        &mut quiet(),
    );
    let p = report
        .properties
        .iter()
        .find(|p| p.name == props::NO_DOUBLE_OWNERSHIP)
        .unwrap();
    assert_eq!(p.status, "holds");
}

#[test]
fn lost_persistence_is_found_as_a_generation_going_back() {
    // KAFKA-2017: the new coordinator epoch knows nothing of the group.
    let mut c = small(ProtocolKind::Eager, &[DisruptionKind::Failover]);
    c.faults = vec!["KAFKA-2017".to_owned()];
    assert_found(c, props::GENERATIONS_MONOTONIC);
}

#[test]
fn zero_delay_withholding_is_found_by_the_liveness_check() {
    // KAFKA-15693: with delay 0 the deferred leader still withholds lost partitions.
    let mut c = small(ProtocolKind::Deferred, &[DisruptionKind::Crash]);
    c.delay_ms = 0;
    c.faults = vec!["zero-delay-withholds".to_owned()];
    assert_found(c, LIVENESS);
}

/// A partition held back for a member that crashed before it synced is assigned once the
/// scheduled delay runs out (deferred and incremental); with the clock frozen (the
/// `scheduled-delay-passes` rule off) the leader withholds it at every scheduled round and the
/// liveness check must say so.
#[test]
fn held_back_partitions_are_assigned_once_the_delay_passes() {
    for protocol in [ProtocolKind::Deferred, ProtocolKind::Incremental] {
        let mut c = small(protocol, &[DisruptionKind::Crash]);
        c.members = 2;
        c.partitions = 2;
        let model = c.clone().into_model().unwrap();
        let options = CheckOptions {
            liveness_limit: 400_000,
            ..CheckOptions::default()
        };
        let report = check(&model, &options, &mut quiet());
        for p in &report.properties {
            assert!(!p.is_failure(), "{protocol:?}: {} is {}", p.name, p.status);
        }
        let liveness = report.properties.iter().find(|p| p.name == LIVENESS);
        assert_eq!(liveness.map(|p| p.status.as_str()), Some("holds"));

        c.rules.switch_off("scheduled-delay-passes").unwrap();
        assert_found(c, LIVENESS);
    }
}
