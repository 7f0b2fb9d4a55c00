//! The model's speed machinery and the `ci` preset's stable start: copy-on-write actors must
//! leave no output behind, and the stable start must be a converged, reachable state.

use std::collections::{BTreeSet, VecDeque};

use rebalance_model::properties::converged;
use rebalance_model::{DisruptionKind, ModelState, Preset, ProtocolKind, RebalanceModel};
use stateright::Model;

fn fp(state: &ModelState) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    state.hash(&mut h);
    h.finish()
}

/// Whether some actor of `state` still has output the pump should have moved.
fn undrained(state: &ModelState) -> Option<String> {
    let mut c = rebalance::protocol::Coordinator::clone(&state.coordinator);
    if c.poll_persist().is_some() || c.poll_transmit().is_some() {
        return Some("coordinator".to_owned());
    }
    for (slot, s) in state.slots.iter().enumerate() {
        if let Some(m) = &s.member {
            let mut m = rebalance::protocol::Member::clone(m);
            if m.poll_transmit().is_some() || m.poll_event().is_some() {
                return Some(format!("member of slot {slot}"));
            }
        }
    }
    None
}

/// Breadth-first over the first `limit` states of `model`, calling `visit` on each.
fn explore(model: &RebalanceModel, limit: usize, mut visit: impl FnMut(&ModelState)) {
    let mut seen = BTreeSet::new();
    let mut queue: VecDeque<ModelState> = model.init_states().into();
    let mut actions = Vec::new();
    while let Some(state) = queue.pop_front() {
        if seen.len() >= limit {
            break;
        }
        if !seen.insert(fp(&state)) {
            continue;
        }
        visit(&state);
        actions.clear();
        model.actions(&state, &mut actions);
        for a in actions.drain(..) {
            if let Some(next) = model.next_state(&state, a) {
                queue.push_back(next);
            }
        }
    }
}

#[test]
fn every_state_is_fully_drained() {
    for protocol in ProtocolKind::ALL {
        let model = Preset::Quick.config(protocol).into_model().unwrap();
        let mut states = 0;
        explore(&model, 3_000, |s| {
            states += 1;
            assert_eq!(undrained(s), None, "{protocol}: output left in {s:?}");
        });
        assert!(states >= 1_000, "{protocol}: only {states} states explored");
    }
}

#[test]
fn the_drain_check_sees_left_over_output() {
    // The check above must be able to fail: a member told to leave has a LeaveGroup to send.
    let model = Preset::Quick
        .config(ProtocolKind::Eager)
        .into_model()
        .unwrap();
    let mut state = model.init_states().remove(0);
    assert_eq!(undrained(&state), None);
    let member = state.slots[0].member.as_mut().unwrap();
    member.make_mut().leave(rebalance_model::NOW_MS);
    assert_eq!(undrained(&state), Some("member of slot 0".to_owned()));
}

#[test]
fn ci_starts_from_a_converged_group_and_quick_from_the_cold_start() {
    for protocol in ProtocolKind::ALL {
        let ci = Preset::Ci.config(protocol);
        assert!(ci.start_stable);
        let model = ci.clone().into_model().unwrap();
        let init = model.init_states();
        assert_eq!(init.len(), 1);
        assert!(
            converged(&model, &init[0]),
            "{protocol}: ci start not converged"
        );
        assert_eq!(init[0].disruptions_used, 0);
        assert!(init[0].max_generation.0 >= 1);
        // The same shape from the cold start is not converged: the settling really ran.
        let mut cold = ci;
        cold.start_stable = false;
        let model = cold.into_model().unwrap();
        assert!(!converged(&model, &model.init_states()[0]));
        assert!(!Preset::Quick.config(protocol).start_stable);
    }
}

#[test]
fn the_stable_start_is_reachable_from_the_cold_start() {
    // Settling takes ordinary model steps: the stable start is among the states the cold-start
    // model reaches.
    // `join` reserves one unstarted slot per disruption of the budget, and the cold run below
    // has no budget, so both sides leave it out to have the same slots.
    let mut base = Preset::Ci.config(ProtocolKind::Cooperative);
    base.kinds.remove(&DisruptionKind::Join);
    let mut cold = base.clone();
    cold.start_stable = false;
    cold.disruptions = 0;
    let stable = base.into_model().unwrap().init_states().remove(0);
    let target = fp(&stable);
    let mut found = false;
    explore(&cold.into_model().unwrap(), 200_000, |s| {
        let mut s = s.clone();
        s.note = 0;
        found |= fp(&s) == target;
    });
    assert!(found);
}

#[test]
fn remembered_steps_give_the_states_fresh_steps_give() {
    // The step memo and the cached hashes must change nothing: every successor of the first
    // states, computed with the memo warm and again with it emptied, is equal and hashes the
    // same (and the two are separate copies, so the second really was computed afresh).
    for protocol in [ProtocolKind::Eager, ProtocolKind::Deferred] {
        let model = Preset::Ci.config(protocol).into_model().unwrap();
        let mut checked = 0;
        let mut actions = Vec::new();
        explore(&model, 1_500, |s| {
            actions.clear();
            model.actions(s, &mut actions);
            for a in &actions {
                let warm = model.next_state(s, a.clone());
                rebalance_model::model::step::forget();
                let fresh = model.next_state(s, a.clone());
                assert_eq!(warm, fresh, "{protocol}: {a:?}");
                if let (Some(warm), Some(fresh)) = (warm, fresh) {
                    assert_eq!(fp(&warm), fp(&fresh), "{protocol}: {a:?}");
                    checked += 1;
                }
            }
        });
        assert!(checked >= 3_000, "{protocol}: only {checked} steps checked");
    }
}

#[test]
fn a_changed_actor_changes_the_state_hash() {
    // The other side: the cached hash follows a change (a stale cache would keep it).
    let model = Preset::Quick
        .config(ProtocolKind::Eager)
        .into_model()
        .unwrap();
    let state = model.init_states().remove(0);
    let mut changed = state.clone();
    let member = changed.slots[0].member.as_mut().unwrap();
    member.make_mut().leave(rebalance_model::NOW_MS);
    assert_ne!(state, changed);
    assert_ne!(fp(&state), fp(&changed));
    assert_eq!(fp(&state), fp(&state.clone()));
}
