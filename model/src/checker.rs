//! Runs a check of one model: stateright's DFS or BFS (or the seeded random walker), the
//! liveness check on the explicit graph, and the replay of every counterexample before it is
//! reported.

use std::time::{Duration, Instant};

use serde::Serialize;
use stateright::{Checker, Expectation, Model};

use crate::liveness::{StateGraph, check_bottom_sccs};
use crate::model::RebalanceModel;
use crate::properties::converged;
use crate::regression::{self, Expect, LIVENESS, Regression};
use crate::simulate::{SimulationCounters, simulate};
use crate::state::Action;

/// How to explore.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Stateright's depth-first search.
    Dfs,
    /// Stateright's breadth-first search (shortest counterexamples with one thread).
    Bfs,
    /// Seeded random walks ([`crate::simulate`]).
    Simulate,
}

/// Options of a check.
#[derive(Clone, Debug)]
pub struct CheckOptions {
    /// The strategy.
    pub strategy: Strategy,
    /// Checker threads.
    pub threads: usize,
    /// Seed of the random walks.
    pub seed: u64,
    /// `(i, n)`: run the walks whose index is `i` mod `n`.
    pub shard: (u64, u64),
    /// Number of random walks (before sharding).
    pub traces: u64,
    /// Steps per random walk.
    pub max_steps: usize,
    /// Largest explicit graph the liveness check builds (0: skip the liveness check).
    pub liveness_limit: usize,
    /// How often progress is reported.
    pub progress_every: Duration,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            strategy: Strategy::Dfs,
            threads: 1,
            seed: 0,
            shard: (0, 1),
            traces: 20_000,
            max_steps: 300,
            liveness_limit: 120_000,
            progress_every: Duration::from_secs(3),
        }
    }
}

/// A progress report.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    /// States generated.
    pub states: usize,
    /// Unique states.
    pub unique_states: usize,
    /// Deepest state so far.
    pub max_depth: usize,
    /// Time since the start.
    pub seconds: f64,
}

/// A verified counterexample (or example).
#[derive(Clone, Debug, Serialize)]
pub struct Counterexample {
    /// Number of actions.
    pub steps: usize,
    /// The actions from the initial state.
    pub actions: Vec<Action>,
    /// Where it was saved, if it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// One property's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct PropertyReport {
    /// The property's name.
    pub name: String,
    /// `always`, `sometimes` or `liveness`.
    pub expectation: &'static str,
    /// `holds`, `violated`, `found`, `not found`, `skipped: ...`, or `unconfirmed` (a checker
    /// report that did not replay).
    pub status: String,
    /// For a violation: the replayed counterexample.
    pub counterexample: Option<Counterexample>,
}

impl PropertyReport {
    /// Whether this outcome fails the check.
    #[must_use]
    pub fn is_failure(&self) -> bool {
        matches!(
            self.status.as_str(),
            "violated" | "not found" | "unconfirmed"
        )
    }
}

/// The outcome of checking one model.
#[derive(Clone, Debug, Serialize)]
pub struct CheckReport {
    /// The protocol checked.
    pub protocol: String,
    /// Unique states (for simulation: states visited).
    pub unique_states: usize,
    /// States generated.
    pub states: usize,
    /// Deepest state.
    pub max_depth: usize,
    /// Wall time.
    pub seconds: f64,
    /// Every property.
    pub properties: Vec<PropertyReport>,
}

impl CheckReport {
    /// Whether every property passed.
    #[must_use]
    pub fn ok(&self) -> bool {
        !self.properties.iter().any(PropertyReport::is_failure)
    }

    /// The failing properties' regressions, to save.
    #[must_use]
    pub fn regressions(&self, model: &RebalanceModel) -> Vec<(String, Regression)> {
        self.properties
            .iter()
            .filter(|p| p.status == "violated")
            .filter_map(|p| {
                let cex = p.counterexample.as_ref()?;
                Some((
                    regression::slug(&model.config, &p.name),
                    Regression {
                        property: p.name.clone(),
                        expect: Expect::Violated,
                        config: model.config.clone(),
                        actions: cex.actions.clone(),
                    },
                ))
            })
            .collect()
    }
}

fn expectation_name(e: &Expectation) -> &'static str {
    match e {
        Expectation::Always => "always",
        Expectation::Sometimes => "sometimes",
        Expectation::Eventually => "eventually",
    }
}

/// Replays a reported path; `Some(actions)` only when it really ends in a violation (for an
/// `always`) or an example (for a `sometimes`).
fn confirm(model: &RebalanceModel, name: &str, actions: Vec<Action>) -> Option<Vec<Action>> {
    let trace = regression::replay_actions(model.clone(), &actions).ok()?;
    let p = crate::properties::by_name(model, name)?;
    let last = trace.states.last()?;
    let confirmed = match p.expectation {
        Expectation::Always => !(p.condition)(model, last),
        _ => (p.condition)(model, last),
    };
    confirmed.then_some(actions)
}

/// What a search explored: states, unique states, depth, and each discovery's path.
type Explored<'a> = (usize, usize, usize, Vec<(&'a str, Vec<Action>)>);

/// Checks a model. `progress` is called every `options.progress_every` while it runs.
pub fn check(
    model: &RebalanceModel,
    options: &CheckOptions,
    progress: &mut dyn FnMut(&Progress),
) -> CheckReport {
    let start = Instant::now();
    let properties = model.properties();
    let (states, unique_states, max_depth, discoveries): Explored<'_> = match options.strategy {
        Strategy::Dfs | Strategy::Bfs => {
            let builder = model.clone().checker().threads(options.threads.max(1));
            let checker = if options.strategy == Strategy::Dfs {
                Box::new(builder.spawn_dfs()) as Box<dyn Checker<RebalanceModel>>
            } else {
                Box::new(builder.spawn_bfs())
            };
            let mut last = Instant::now();
            while !checker.is_done() {
                std::thread::sleep(Duration::from_millis(50));
                if last.elapsed() >= options.progress_every {
                    last = Instant::now();
                    progress(&Progress {
                        states: checker.state_count(),
                        unique_states: checker.unique_state_count(),
                        max_depth: checker.max_depth(),
                        seconds: start.elapsed().as_secs_f64(),
                    });
                }
            }
            let found = checker
                .discoveries()
                .into_iter()
                .map(|(name, path)| (name, path.into_actions()))
                .collect();
            (
                checker.state_count(),
                checker.unique_state_count(),
                checker.max_depth(),
                found,
            )
        }
        Strategy::Simulate => {
            let counters = SimulationCounters::default();
            let outcome = std::thread::scope(|scope| {
                let handle = scope.spawn(|| {
                    simulate(
                        model,
                        options.seed,
                        options.shard,
                        options.traces,
                        options.max_steps,
                        options.threads,
                        &counters,
                    )
                });
                let mut last = Instant::now();
                while !handle.is_finished() {
                    std::thread::sleep(Duration::from_millis(50));
                    if last.elapsed() >= options.progress_every {
                        last = Instant::now();
                        let states = counters.states.load(std::sync::atomic::Ordering::Relaxed);
                        progress(&Progress {
                            states,
                            unique_states: states,
                            max_depth: counters
                                .max_depth
                                .load(std::sync::atomic::Ordering::Relaxed),
                            seconds: start.elapsed().as_secs_f64(),
                        });
                    }
                }
                handle.join().unwrap_or_default()
            });
            let found = outcome
                .discoveries
                .into_iter()
                .map(|(name, (_, path))| (name, path))
                .collect();
            (outcome.states, outcome.states, outcome.max_depth, found)
        }
    };
    let mut reports = Vec::new();
    for p in &properties {
        let found = discoveries
            .iter()
            .find(|(n, _)| *n == p.name)
            .map(|(_, a)| a.clone());
        let (status, counterexample) = match (&p.expectation, found) {
            (Expectation::Always, None) => ("holds".to_owned(), None),
            (Expectation::Always, Some(actions)) => match confirm(model, p.name, actions) {
                Some(actions) => (
                    "violated".to_owned(),
                    Some(Counterexample {
                        steps: actions.len(),
                        actions,
                        file: None,
                    }),
                ),
                None => ("unconfirmed".to_owned(), None),
            },
            (_, Some(actions)) => match confirm(model, p.name, actions) {
                Some(_) => ("found".to_owned(), None),
                None => ("unconfirmed".to_owned(), None),
            },
            (_, None) => ("not found".to_owned(), None),
        };
        reports.push(PropertyReport {
            name: p.name.to_owned(),
            expectation: expectation_name(&p.expectation),
            status,
            counterexample,
        });
    }
    reports.push(liveness_report(model, options));
    CheckReport {
        protocol: model.config.protocol.to_string(),
        unique_states,
        states,
        max_depth,
        seconds: start.elapsed().as_secs_f64(),
        properties: reports,
    }
}

/// The liveness check (see [`crate::liveness`]), with its counterexample replayed.
#[must_use]
pub fn liveness_report(model: &RebalanceModel, options: &CheckOptions) -> PropertyReport {
    let mut report = PropertyReport {
        name: LIVENESS.to_owned(),
        expectation: "liveness",
        status: String::new(),
        counterexample: None,
    };
    if options.liveness_limit == 0 || options.strategy == Strategy::Simulate {
        report.status = "skipped: not an exhaustive run".to_owned();
        return report;
    }
    let graph = match StateGraph::build(
        model,
        model.init_states(),
        Action::is_fair,
        options.liveness_limit,
    ) {
        Ok(g) => g,
        Err(e) => {
            report.status = format!("skipped: {e}");
            return report;
        }
    };
    let outcome = check_bottom_sccs(&graph, |s| converged(model, s));
    drop(graph);
    match outcome.counterexample {
        None => report.status = "holds".to_owned(),
        Some(actions) => {
            let confirmed = regression::replay_actions(model.clone(), &actions)
                .ok()
                .and_then(|t| regression::violated_at_end(&t, LIVENESS).ok())
                == Some(true);
            report.status = if confirmed { "violated" } else { "unconfirmed" }.to_owned();
            report.counterexample = Some(Counterexample {
                steps: actions.len(),
                actions,
                file: None,
            });
        }
    }
    report
}
