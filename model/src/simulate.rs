//! Random walks over the model, for long runs spread over machines.
//!
//! Stateright's own simulation checker ends a trace at the first revisited state (with
//! heartbeats, after a few steps) and records action *indices* that do not always replay; this
//! walker instead records the actions themselves, chooses only among actions that have a
//! successor, and derives each trace's seed from `(seed, trace index)` alone, so any trace —
//! and so any counterexample — is reproducible from the seed and its index, whatever the
//! sharding or thread count. Shard `i/n` runs the traces whose index is `i` modulo `n`.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use stateright::{Expectation, Model};

use crate::model::RebalanceModel;
use crate::state::Action;

/// A splitmix64 generator: tiny, fast, and stable across platforms and versions.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator from a seed.
    #[must_use]
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// The seed of trace `index` of a run seeded with `seed`.
#[must_use]
pub fn trace_seed(seed: u64, index: u64) -> u64 {
    let mut g = SplitMix64::new(seed ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03));
    g.next_u64()
}

/// One random walk: at most `max_steps` steps from the initial state, each chosen uniformly
/// among the enabled actions that have a successor. Calls `visit` on every state (initial
/// included) with the actions so far; stops early when `visit` returns false.
pub fn walk(
    model: &RebalanceModel,
    seed: u64,
    max_steps: usize,
    mut visit: impl FnMut(&crate::state::ModelState, &[Action]) -> bool,
) -> usize {
    let mut rng = SplitMix64::new(seed);
    let Some(mut state) = model.init_states().into_iter().next() else {
        return 0;
    };
    let mut path = Vec::new();
    let mut actions = Vec::new();
    if !visit(&state, &path) {
        return 0;
    }
    for _ in 0..max_steps {
        actions.clear();
        model.actions(&state, &mut actions);
        let mut steps: Vec<(Action, crate::state::ModelState)> = actions
            .drain(..)
            .filter_map(|a| {
                let next = model.next_state(&state, a.clone())?;
                model.within_boundary(&next).then_some((a, next))
            })
            .collect();
        if steps.is_empty() {
            break;
        }
        let (action, next) = steps.swap_remove(rng.below(steps.len()));
        path.push(action);
        state = next;
        if !visit(&state, &path) {
            break;
        }
    }
    path.len()
}

/// What a simulation run found.
#[derive(Debug, Default)]
pub struct SimulationOutcome {
    /// Traces run.
    pub traces: u64,
    /// States visited (with repeats).
    pub states: usize,
    /// Longest trace.
    pub max_depth: usize,
    /// Per property: the action path of the first (lowest trace index) discovery — a
    /// counterexample for an `always`, an example for a `sometimes`.
    pub discoveries: BTreeMap<&'static str, (u64, Vec<Action>)>,
}

/// Runs traces `shard.0, shard.0 + shard.1, ...` below `traces`, on `threads` threads, each at
/// most `max_steps` long. `progress` is polled by the caller through the returned counters.
pub fn simulate(
    model: &RebalanceModel,
    seed: u64,
    shard: (u64, u64),
    traces: u64,
    max_steps: usize,
    threads: usize,
    counters: &SimulationCounters,
) -> SimulationOutcome {
    let properties = model.properties();
    let outcome = Mutex::new(SimulationOutcome::default());
    let next = AtomicU64::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                loop {
                    if counters.stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let index = shard.0 + k * shard.1;
                    if index >= traces {
                        return;
                    }
                    let mut found: Vec<(&'static str, Vec<Action>)> = Vec::new();
                    let mut seen = 0usize;
                    let depth = walk(model, trace_seed(seed, index), max_steps, |state, path| {
                        seen += 1;
                        for p in &properties {
                            let hit = match p.expectation {
                                Expectation::Always => !(p.condition)(model, state),
                                _ => (p.condition)(model, state),
                            };
                            if hit && !found.iter().any(|(n, _)| *n == p.name) {
                                found.push((p.name, path.to_vec()));
                            }
                        }
                        // A violated invariant ends the trace: what follows is meaningless.
                        !found.iter().any(|(n, _)| {
                            properties
                                .iter()
                                .any(|p| p.name == *n && p.expectation == Expectation::Always)
                        })
                    });
                    counters.states.fetch_add(seen, Ordering::Relaxed);
                    counters.max_depth.fetch_max(depth, Ordering::Relaxed);
                    let mut out = outcome.lock().unwrap_or_else(|e| e.into_inner());
                    out.traces += 1;
                    out.states += seen;
                    out.max_depth = out.max_depth.max(depth);
                    for (name, path) in found {
                        let slot = out.discoveries.entry(name).or_insert((index, path.clone()));
                        if index < slot.0 {
                            *slot = (index, path);
                        }
                    }
                }
            });
        }
    });
    outcome.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// Counters a caller can read while [`simulate`] runs, and a stop flag.
#[derive(Debug, Default)]
pub struct SimulationCounters {
    /// States visited so far.
    pub states: AtomicUsize,
    /// Longest trace so far.
    pub max_depth: AtomicUsize,
    /// Set to stop early.
    pub stop: AtomicBool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_is_stable() {
        let mut g = SplitMix64::new(0);
        // Reference values of splitmix64 seeded with 0.
        assert_eq!(g.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(g.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_ne!(trace_seed(1, 0), trace_seed(1, 1));
        assert_eq!(trace_seed(7, 3), trace_seed(7, 3));
    }
}
