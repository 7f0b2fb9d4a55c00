//! Counterexample files: a configuration, the actions from the initial state, and the property
//! the run violates (or, for a "holds" replay, must not violate). Every counterexample the
//! checker reports is replayed through [`replay`] first; `cargo test` replays every file in
//! `model/regressions/`.
//!
//! Format (JSON):
//! `{"property": NAME, "expect": "violated"|"holds", "config": ModelConfig, "actions": [Action..]}`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use stateright::{Expectation, Model};

use crate::config::{ConfigError, ModelConfig};
use crate::liveness;
use crate::model::RebalanceModel;
use crate::properties::{self, converged};
use crate::state::{Action, ModelState};

/// The name of the liveness property checked by [`crate::liveness`].
pub const LIVENESS: &str = "eventually converged (fair bottom SCCs)";

/// State limit when re-checking a liveness counterexample.
pub const LIVENESS_REPLAY_LIMIT: usize = 200_000;

/// What a regression replay asserts about its property at the end of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Expect {
    /// The property is violated at the last state (a counterexample).
    Violated,
    /// The property holds at the last state (a scenario that must keep working).
    Holds,
}

/// A saved run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Regression {
    /// The property's name (one of [`crate::properties`]' names or [`LIVENESS`]).
    pub property: String,
    /// What the replay must find.
    pub expect: Expect,
    /// The model configuration.
    pub config: ModelConfig,
    /// The actions, from the (single) initial state.
    pub actions: Vec<Action>,
}

/// Why a replay failed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The configuration is not usable.
    #[error("bad configuration: {0}")]
    Config(#[from] ConfigError),
    /// The file is not a regression.
    #[error("{path}: not a regression file: {message}")]
    Format {
        /// The file.
        path: String,
        /// The parser's message (with line and column).
        message: String,
    },
    /// The file could not be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        message: String,
    },
    /// An action is not enabled where the run takes it.
    #[error("step {step}: action `{action}` is not enabled")]
    NotEnabled {
        /// 1-based step number.
        step: usize,
        /// The action.
        action: String,
    },
    /// The property is not known for this configuration.
    #[error("unknown property `{0}` for this configuration")]
    UnknownProperty(String),
    /// The liveness re-check ran out of states.
    #[error(transparent)]
    TooManyStates(#[from] liveness::TooManyStates),
}

/// A replayed run: every state (initial first) and the actions between them.
#[derive(Debug)]
pub struct Trace {
    /// The model the run was replayed on.
    pub model: RebalanceModel,
    /// `actions.len() + 1` states.
    pub states: Vec<ModelState>,
    /// The actions.
    pub actions: Vec<Action>,
}

/// Replays actions from the initial state, refusing any action that is not enabled.
///
/// # Errors
/// [`ReplayError::NotEnabled`] at the first action that is not enabled.
pub fn replay_actions(model: RebalanceModel, actions: &[Action]) -> Result<Trace, ReplayError> {
    let mut states = model.init_states();
    states.truncate(1);
    let mut enabled = Vec::new();
    for (i, action) in actions.iter().enumerate() {
        let state = &states[states.len() - 1];
        enabled.clear();
        model.actions(state, &mut enabled);
        let next = enabled
            .contains(action)
            .then(|| model.next_state(state, action.clone()))
            .flatten()
            .filter(|s| model.within_boundary(s))
            .ok_or_else(|| ReplayError::NotEnabled {
                step: i + 1,
                action: action.to_string(),
            })?;
        states.push(next);
    }
    Ok(Trace {
        model,
        states,
        actions: actions.to_vec(),
    })
}

/// Whether `property` is violated at the end of the trace: an `always` is false at the last
/// state, a `sometimes` never held, the liveness property is stuck at the last state.
///
/// # Errors
/// [`ReplayError::UnknownProperty`], or the liveness re-check's state limit.
pub fn violated_at_end(trace: &Trace, property: &str) -> Result<bool, ReplayError> {
    let model = &trace.model;
    let last = &trace.states[trace.states.len() - 1];
    if property == LIVENESS {
        return Ok(liveness::is_stuck(
            model,
            last.clone(),
            Action::is_fair,
            |s| converged(model, s),
            LIVENESS_REPLAY_LIMIT,
        )?);
    }
    let p = properties::by_name(model, property)
        .ok_or_else(|| ReplayError::UnknownProperty(property.to_owned()))?;
    Ok(match p.expectation {
        Expectation::Always => !(p.condition)(model, last),
        Expectation::Sometimes | Expectation::Eventually => {
            !trace.states.iter().any(|s| (p.condition)(model, s))
        }
    })
}

impl Regression {
    /// Reads a regression file.
    ///
    /// # Errors
    /// [`ReplayError::Io`] or [`ReplayError::Format`] naming the file.
    pub fn load(path: &Path) -> Result<Regression, ReplayError> {
        let text = std::fs::read_to_string(path).map_err(|e| ReplayError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        serde_json::from_str(&text).map_err(|e| ReplayError::Format {
            path: path.display().to_string(),
            message: e.to_string(),
        })
    }

    /// Replays the run.
    ///
    /// # Errors
    /// Any [`ReplayError`].
    pub fn replay(&self) -> Result<Trace, ReplayError> {
        replay_actions(self.config.clone().into_model()?, &self.actions)
    }

    /// Replays the run and checks its expectation; `Ok(true)` when it is met.
    ///
    /// # Errors
    /// Any [`ReplayError`].
    pub fn check(&self) -> Result<bool, ReplayError> {
        let trace = self.replay()?;
        let violated = violated_at_end(&trace, &self.property)?;
        Ok(violated == (self.expect == Expect::Violated))
    }

    /// Writes the file as `<dir>/<name>.json` (pretty JSON), creating `dir`.
    ///
    /// # Errors
    /// [`ReplayError::Io`].
    pub fn save(&self, dir: &Path, name: &str) -> Result<PathBuf, ReplayError> {
        let io = |e: std::io::Error| ReplayError::Io {
            path: dir.display().to_string(),
            message: e.to_string(),
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        let path = dir.join(format!("{name}.json"));
        let text = serde_json::to_string_pretty(self).unwrap_or_default();
        std::fs::write(&path, text + "\n").map_err(io)?;
        Ok(path)
    }
}

/// A file-name slug for a counterexample: protocol, property and fault names.
#[must_use]
pub fn slug(config: &ModelConfig, property: &str) -> String {
    let mut s = format!("{}-{}", config.protocol, property);
    for f in &config.faults {
        s.push('-');
        s.push_str(f);
    }
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect::<String>()
        .split('-')
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}
