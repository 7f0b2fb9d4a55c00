//! `rebalance-model`: the stateright model of the rebalance protocol, wrapping the core's real
//! coordinator and member state machines (`rebalance::protocol`), and the checker around it.
//!
//! - [`config`]: what to check ([`ModelConfig`], presets) and the timing [`Rules`].
//! - [`model`]: the [`RebalanceModel`] (a custom `stateright::Model`) and its [`state`].
//! - [`properties`]: every property, defined once.
//! - [`liveness`]: the explicit-graph liveness check (fair bottom SCCs).
//! - [`shared`], [`memo`]: copy-on-write parts of a state with cached hashes, and facts
//!   computed once per coordinator value (the checker's speed).
//! - [`checker`]: runs a check (DFS, BFS or seeded random walks) and replays what it finds.
//! - [`regression`]: counterexample files and their replay.
//! - [`simulate`]: the seeded, shardable random walker.
//! - [`scenario`]: scenario scripts run through the core's `Cluster` (`rebalance simulate`).
//! - [`faults`]: the catalogue of known Kafka rebalancing bugs the checker must find.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod checker;
pub mod config;
pub mod faults;
pub mod liveness;
pub mod memo;
pub mod model;
pub mod network;
pub mod properties;
pub mod regression;
pub mod scenario;
pub mod shared;
pub mod simulate;
pub mod state;
pub mod timeline;

pub use checker::{CheckOptions, CheckReport, Progress, PropertyReport, Strategy, check};
pub use config::{
    ConfigError, DisruptionKind, ModelConfig, NetworkKind, Preset, ProtocolKind, Rules,
};
pub use model::{NOW_MS, RebalanceModel};
pub use regression::{Expect, LIVENESS, Regression, ReplayError, Trace};
pub use shared::Shared;
pub use state::{Action, Disruption, ModelState};
