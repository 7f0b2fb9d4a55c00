//! Verifies catalogue entries: with the bug switched on the checker must find a violation of the
//! entry's property in its finding configuration (replayed before it is believed); without it,
//! the same configuration must hold that property over its whole state space.

use std::collections::BTreeSet;
use std::time::Instant;

use serde::Serialize;
use stateright::{Checker, HasDiscoveries, Model};

use super::{CatalogueEntry, Expectation, Search};
use crate::config::{ConfigError, ModelConfig};
use crate::liveness::{StateGraph, check_bottom_sccs};
use crate::model::RebalanceModel;
use crate::properties::converged;
use crate::regression::{self, Expect, Regression};
use crate::state::Action;

/// Largest explicit graph a liveness search builds.
pub const LIVENESS_LIMIT: usize = 400_000;

/// A violation the checker found (and that replayed).
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    /// Wall time until the violation was found.
    pub seconds: f64,
    /// States generated until then (for a liveness search: states of the explicit graph).
    pub states: usize,
    /// Unique states until then.
    pub unique_states: usize,
    /// Steps of the counterexample.
    pub steps: usize,
    /// The counterexample's actions.
    #[serde(skip)]
    pub actions: Vec<Action>,
}

/// A run over the whole state space that found no violation.
#[derive(Clone, Debug, Serialize)]
pub struct Holding {
    /// Wall time.
    pub seconds: f64,
    /// States generated.
    pub states: usize,
    /// Unique states.
    pub unique_states: usize,
}

/// The outcome of one run of an entry's finding configuration.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "outcome", rename_all = "kebab-case")]
pub enum Outcome {
    /// The property is violated (the counterexample replayed).
    Violated(Finding),
    /// The property holds over the whole state space.
    Holds(Holding),
    /// The run could not be made (bad configuration, graph too large, a report that did not
    /// replay).
    Error {
        /// What went wrong.
        message: String,
    },
}

/// One entry's verification.
#[derive(Clone, Debug, Serialize)]
pub struct Verification {
    /// The entry's id.
    pub id: &'static str,
    /// The property it breaks.
    pub property: &'static str,
    /// What the checker must conclude.
    #[serde(skip)]
    pub expect: Expectation,
    /// For a masked entry: the mechanism covering for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub masked_by: Option<&'static str>,
    /// For an entry the checker cannot separate yet: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_separable: Option<&'static str>,
    /// The finding configuration, with the bug's switches.
    pub config: ModelConfig,
    /// With the bug on.
    pub with_fault: Outcome,
    /// With the bug off.
    pub without_fault: Outcome,
}

impl Verification {
    /// Whether the expectations are met: without the bug the property holds; with it, it is
    /// violated (or, for a masked entry, still holds).
    #[must_use]
    pub fn ok(&self) -> bool {
        let violated = |o: &Outcome| matches!(o, Outcome::Violated(_));
        let holds = |o: &Outcome| matches!(o, Outcome::Holds(_));
        match self.expect {
            Expectation::Found => violated(&self.with_fault) && holds(&self.without_fault),
            Expectation::Masked { .. } => holds(&self.with_fault) && holds(&self.without_fault),
            Expectation::NotSeparable { .. } => {
                violated(&self.with_fault) && violated(&self.without_fault)
            }
        }
    }

    /// The counterexample as a regression file (expect: violated), if one was found with the
    /// bug on.
    #[must_use]
    pub fn regression(&self) -> Option<Regression> {
        let Outcome::Violated(finding) = &self.with_fault else {
            return None;
        };
        Some(Regression {
            property: self.property.to_owned(),
            expect: Expect::Violated,
            config: self.config.clone(),
            actions: finding.actions.clone(),
        })
    }
}

/// What one search saw: the first violation's path (if any) and the effort.
struct Search1 {
    found: Option<Vec<Action>>,
    seconds: f64,
    states: usize,
    unique_states: usize,
}

/// Safety search, stopping at the first violation of `property`: BFS on one thread when looking
/// for the bug (a shortest counterexample; the counts are the effort to reach it), DFS when the
/// whole space must be explored to show the property holds.
fn safety(model: &RebalanceModel, property: &'static str, bfs: bool) -> Search1 {
    let start = Instant::now();
    let builder = model
        .clone()
        .checker()
        .threads(1)
        .finish_when(HasDiscoveries::AnyOf(BTreeSet::from([property])));
    let checker = if bfs {
        Box::new(builder.spawn_bfs().join()) as Box<dyn Checker<RebalanceModel>>
    } else {
        Box::new(builder.spawn_dfs().join())
    };
    Search1 {
        found: checker.discovery(property).map(|p| p.into_actions()),
        seconds: start.elapsed().as_secs_f64(),
        states: checker.state_count(),
        unique_states: checker.unique_state_count(),
    }
}

/// Liveness search: the explicit graph, every fair bottom SCC converged.
fn liveness(model: &RebalanceModel) -> Result<Search1, String> {
    let start = Instant::now();
    let graph = StateGraph::build(model, model.init_states(), Action::is_fair, LIVENESS_LIMIT)
        .map_err(|e| e.to_string())?;
    let report = check_bottom_sccs(&graph, |s| converged(model, s));
    Ok(Search1 {
        found: report.counterexample,
        seconds: start.elapsed().as_secs_f64(),
        states: report.states,
        unique_states: report.states,
    })
}

fn search(entry: &CatalogueEntry, model: &RebalanceModel, bfs: bool) -> Result<Search1, String> {
    match entry.search {
        Search::Bfs => Ok(safety(model, entry.property, bfs)),
        Search::Liveness => liveness(model),
    }
}

/// Runs the entry's search on `config`; a reported violation is replayed before it counts.
fn run(entry: &CatalogueEntry, config: ModelConfig, bfs: bool) -> Outcome {
    let outcome = (|| {
        let model = config
            .into_model()
            .map_err(|e: ConfigError| format!("bad finding configuration: {e}"))?;
        let found = search(entry, &model, bfs)?;
        let Some(actions) = found.found else {
            return Ok(Outcome::Holds(Holding {
                seconds: found.seconds,
                states: found.states,
                unique_states: found.unique_states,
            }));
        };
        let trace = regression::replay_actions(model, &actions).map_err(|e| e.to_string())?;
        if !regression::violated_at_end(&trace, entry.property).map_err(|e| e.to_string())? {
            return Err("a reported counterexample does not replay to a violation".to_owned());
        }
        Ok(Outcome::Violated(Finding {
            seconds: found.seconds,
            states: found.states,
            unique_states: found.unique_states,
            steps: actions.len(),
            actions,
        }))
    })();
    outcome.unwrap_or_else(|message| Outcome::Error { message })
}

/// Runs one entry with the bug switched on and without it.
#[must_use]
pub fn verify(entry: &CatalogueEntry) -> Verification {
    let (masked_by, not_separable) = match entry.expect {
        Expectation::Found => (None, None),
        Expectation::Masked { by } => (Some(by), None),
        Expectation::NotSeparable { why } => (None, Some(why)),
    };
    let config = entry.with_fault();
    // Looking for a violation: BFS stops at the first (shortest) one. Showing the property
    // holds: DFS over everything.
    let with_fault = run(entry, config.clone(), masked_by.is_none());
    let without_fault = run(entry, entry.baseline(), not_separable.is_some());
    Verification {
        id: entry.id,
        property: entry.property,
        expect: entry.expect,
        masked_by,
        not_separable,
        config,
        with_fault,
        without_fault,
    }
}

/// Verifies every entry of `entries`, calling `each` after each one (for progress output).
pub fn verify_all<'a>(
    entries: impl IntoIterator<Item = &'a CatalogueEntry>,
    each: &mut dyn FnMut(&Verification),
) -> Vec<Verification> {
    entries
        .into_iter()
        .map(|e| {
            let v = verify(e);
            each(&v);
            v
        })
        .collect()
}
