//! The model's configuration: group shape, rebalance protocol, disruption budget, network and the
//! timing rules, plus the named presets. A configuration is plain data (serialisable, so a
//! regression file can carry it); [`ModelConfig::into_model`] turns it into a checkable model.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::model::RebalanceModel;

/// Which rebalance protocol every member runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProtocolKind {
    /// Stop everything, rejoin, get a fresh assignment.
    Eager,
    /// Simple cooperative: keep what stays, revoke first, assign in the next round.
    Cooperative,
    /// Cooperative with lost partitions held back for a scheduled delay.
    Deferred,
    /// Deferred, moving at most a bounded number of partitions per round.
    Incremental,
}

impl ProtocolKind {
    /// Every protocol, in the order `--protocol all` checks them.
    pub const ALL: [ProtocolKind; 4] = [
        ProtocolKind::Eager,
        ProtocolKind::Cooperative,
        ProtocolKind::Deferred,
        ProtocolKind::Incremental,
    ];

    /// The name as the CLI spells it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            ProtocolKind::Eager => "eager",
            ProtocolKind::Cooperative => "cooperative",
            ProtocolKind::Deferred => "deferred",
            ProtocolKind::Incremental => "incremental",
        }
    }
}

impl fmt::Display for ProtocolKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ProtocolKind {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        ProtocolKind::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| ConfigError::Unknown {
                what: "protocol",
                value: s.to_owned(),
                expected: "eager, cooperative, deferred, incremental",
            })
    }
}

/// A kind of disruption the environment may inject (each costs one unit of the budget).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DisruptionKind {
    /// A new member starts and joins the group.
    Join,
    /// A member leaves gracefully (LeaveGroup).
    Leave,
    /// A member's process dies: no LeaveGroup, the coordinator must expire its session.
    Crash,
    /// A member crashes and restarts at once under a new member id.
    Bounce,
    /// A member is cut off from the coordinator for good (its process keeps running).
    Isolate,
    /// The current leader leaves while a rebalance is in progress.
    Leader,
    /// The coordinator crashes; a new epoch recovers from the durable log.
    Failover,
    /// A member changes its subscription.
    Subscribe,
    /// A member's application thread hangs for good (a long assignment, a blocking callback)
    /// while its heartbeat thread goes on: from then on it only sends heartbeats and handles
    /// their answers, and consumes nothing. Not in the presets: the core has no poll-interval
    /// timeout, so a stalled member the coordinator still counts holds its partitions unconsumed
    /// (see [`crate::properties::converged`]).
    Stall,
}

impl DisruptionKind {
    /// Every kind, in CLI order.
    pub const ALL: [DisruptionKind; 9] = [
        DisruptionKind::Join,
        DisruptionKind::Leave,
        DisruptionKind::Crash,
        DisruptionKind::Bounce,
        DisruptionKind::Isolate,
        DisruptionKind::Leader,
        DisruptionKind::Failover,
        DisruptionKind::Subscribe,
        DisruptionKind::Stall,
    ];

    /// The kinds the `ci` and `deep` presets enable: every kind but [`DisruptionKind::Stall`].
    pub const PRESET: [DisruptionKind; 8] = [
        DisruptionKind::Join,
        DisruptionKind::Leave,
        DisruptionKind::Crash,
        DisruptionKind::Bounce,
        DisruptionKind::Isolate,
        DisruptionKind::Leader,
        DisruptionKind::Failover,
        DisruptionKind::Subscribe,
    ];

    /// The name as the CLI spells it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            DisruptionKind::Join => "join",
            DisruptionKind::Leave => "leave",
            DisruptionKind::Crash => "crash",
            DisruptionKind::Bounce => "bounce",
            DisruptionKind::Isolate => "isolate",
            DisruptionKind::Leader => "leader",
            DisruptionKind::Failover => "failover",
            DisruptionKind::Subscribe => "subscribe",
            DisruptionKind::Stall => "stall",
        }
    }

    /// A bit unique to this kind (for compact sets inside model states).
    #[must_use]
    pub fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

impl fmt::Display for DisruptionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DisruptionKind {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        DisruptionKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| ConfigError::Unknown {
                what: "disruption kind",
                value: s.to_owned(),
                expected: "join, leave, crash, bounce, isolate, leader, failover, subscribe, \
                           stall",
            })
    }
}

/// How the network delivers messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NetworkKind {
    /// FIFO per (sender, receiver) pair, no loss, no duplication (TCP-like; the default).
    Ordered,
    /// Any message in flight may be delivered next.
    Unordered,
    /// Ordered, and the network may drop messages (up to the network-fault budget).
    Lossy,
    /// Ordered, and the network may deliver a message twice (up to the network-fault budget).
    Duplicating,
}

impl NetworkKind {
    /// The name as the CLI spells it.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            NetworkKind::Ordered => "ordered",
            NetworkKind::Unordered => "unordered",
            NetworkKind::Lossy => "lossy",
            NetworkKind::Duplicating => "duplicating",
        }
    }
}

impl FromStr for NetworkKind {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        [
            NetworkKind::Ordered,
            NetworkKind::Unordered,
            NetworkKind::Lossy,
            NetworkKind::Duplicating,
        ]
        .into_iter()
        .find(|k| k.name() == s)
        .ok_or_else(|| ConfigError::Unknown {
            what: "network",
            value: s.to_owned(),
            expected: "ordered, unordered, lossy, duplicating",
        })
    }
}

/// The timing assumptions the protocol relies on, stated as model rules. Timers fire
/// nondeterministically at a constant `now_ms`; each rule forbids the firings that real time
/// would rule out. Every rule is on by default; switching one off is a fault the checker must
/// be able to find (or show harmless).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Rules {
    /// The coordinator removes a member (session expiry, join or sync timeout) only once that
    /// member has stopped consuming: it crashed or left, or it is cut off and its own session or
    /// rebalance timer has already stopped it, or it is stalled (a `stall` disruption). A
    /// connected member answers in time. A stalled member's session still does not expire while
    /// its heartbeats would push the coordinator's session deadline out: they come every
    /// heartbeat interval, well within the session timeout; the join and sync timeouts may evict
    /// it.
    pub evict_only_stopped: bool,
    /// A member's own session and rebalance timers fire only while it is cut off from the
    /// coordinator (a connected member hears back within its session timeout) — except that a
    /// connected member's rebalance timer, which also bounds its JoinGroup and SyncGroup
    /// requests, fires once such a request or its answer was lost: it is joining or awaiting
    /// sync, none of its JoinGroup/SyncGroup requests or answers is in flight or held by the
    /// coordinator, no retry of its own is pending, and no heartbeat answer would make it resend
    /// first (an `Ok` while it joins, `NotCoordinator` from a newer epoch). The member then
    /// stops, finds the coordinator again and rejoins, so a lost request cannot leave a correct
    /// group waiting forever.
    pub member_timeouts_only_when_cut_off: bool,
    /// A member's heartbeat and retry timers do not fire while one of its requests is in flight
    /// or held by the coordinator (requests time out only after their round trip).
    pub resend_not_while_pending: bool,
    /// A member cut off from the coordinator (an `isolate` disruption) stays cut off. With the
    /// rule off it may reconnect later, at the cost of another disruption of the budget.
    pub isolation_permanent: bool,
    /// Time passes for a scheduled rebalance: when a member's scheduled rejoin fires, the
    /// model's clock moves to its deadline, so the next leader sees the delay as run out. With
    /// the rule off the clock never moves and a held-back partition waits forever (the liveness
    /// check must then fail for the deferred protocols).
    pub scheduled_delay_passes: bool,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            evict_only_stopped: true,
            member_timeouts_only_when_cut_off: true,
            resend_not_while_pending: true,
            isolation_permanent: true,
            scheduled_delay_passes: true,
        }
    }
}

impl Rules {
    /// The rules' names, as `--rule-off NAME` spells them.
    pub const NAMES: [&'static str; 5] = [
        "evict-only-stopped",
        "member-timeouts-only-when-cut-off",
        "resend-not-while-pending",
        "isolation-permanent",
        "scheduled-delay-passes",
    ];

    /// Switches the named rule off.
    ///
    /// # Errors
    /// [`ConfigError::Unknown`] for a name not in [`Rules::NAMES`].
    pub fn switch_off(&mut self, name: &str) -> Result<(), ConfigError> {
        match name {
            "evict-only-stopped" => self.evict_only_stopped = false,
            "member-timeouts-only-when-cut-off" => self.member_timeouts_only_when_cut_off = false,
            "resend-not-while-pending" => self.resend_not_while_pending = false,
            "isolation-permanent" => self.isolation_permanent = false,
            "scheduled-delay-passes" => self.scheduled_delay_passes = false,
            _ => {
                return Err(ConfigError::Unknown {
                    what: "rule",
                    value: name.to_owned(),
                    expected: "evict-only-stopped, member-timeouts-only-when-cut-off, \
                               resend-not-while-pending, isolation-permanent, \
                               scheduled-delay-passes",
                });
            }
        }
        Ok(())
    }
}

/// A complete model configuration.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// The protocol every member runs.
    pub protocol: ProtocolKind,
    /// The assignor the leader uses (as `rebalance assign --assignor` names it).
    pub assignor: String,
    /// Members started at the beginning.
    pub members: usize,
    /// Topics `t0`, `t1`, ... every member subscribes to at first.
    pub topics: usize,
    /// Partitions per topic.
    pub partitions: u32,
    /// Disruption budget: at most this many disruptions per run.
    pub disruptions: u8,
    /// The disruption kinds enabled.
    pub kinds: BTreeSet<DisruptionKind>,
    /// Network behaviour.
    pub network: NetworkKind,
    /// Drops or duplications allowed per run on a lossy or duplicating network.
    pub network_faults: u8,
    /// The scheduled rebalance delay of the deferred and incremental protocols.
    pub delay_ms: u64,
    /// The incremental protocol's bound on partition moves per round.
    pub max_moves: u32,
    /// Generation bound: states past it are outside the checked space. Generations are an
    /// unbounded counter, so a protocol that keeps rebalancing would otherwise give an infinite
    /// state space; the liveness check sees a cut-off state as stuck.
    #[serde(default = "default_max_generation")]
    pub max_generation: i32,
    /// The timing rules.
    #[serde(default)]
    pub rules: Rules,
    /// Core fault switches (`rebalance::protocol::fault`), by name.
    #[serde(default)]
    pub faults: Vec<String>,
    /// Start from the formed group instead of its formation: the initial state is the first
    /// converged state of one fixed, fault-free schedule from the cold start (see
    /// [`RebalanceModel::settle`](crate::model::RebalanceModel::settle)), so the search spends
    /// its budget on the disruptions rather than on every interleaving of the first joins.
    #[serde(default)]
    pub start_stable: bool,
}

impl Default for ModelConfig {
    /// The built-in default: the `quick` preset's shape with the cooperative protocol.
    fn default() -> Self {
        Preset::Quick.config(ProtocolKind::Cooperative)
    }
}

fn default_max_generation() -> i32 {
    8
}

/// A named configuration size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// Seconds: 2 members, 1 topic of 2 partitions, 1 disruption.
    Quick,
    /// The exhaustive CI run: 3 members, 1 topic of 3 partitions, 2 disruptions including a
    /// coordinator failover, from the formed group ([`ModelConfig::start_stable`]). Kinds: every
    /// kind but `stall` for eager and cooperative; failover, crash, leave, leader, isolate and
    /// subscribe with generations up to 4 for deferred and incremental (incremental with at
    /// most 2 moves per round: with 1 the batches multiply the rounds past the budget). For
    /// the deferred protocols `join` and `bounce` (a cold member coming in while partitions are
    /// held back) make the space too large for CI (README "Model" has the measurements).
    Ci,
    /// For manual runs: 3 members, 4 partitions, 3 disruptions.
    Deep,
}

impl FromStr for Preset {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        match s {
            "quick" => Ok(Preset::Quick),
            "ci" => Ok(Preset::Ci),
            "deep" => Ok(Preset::Deep),
            _ => Err(ConfigError::Unknown {
                what: "preset",
                value: s.to_owned(),
                expected: "quick, ci, deep",
            }),
        }
    }
}

impl Preset {
    /// The preset's configuration for one protocol.
    #[must_use]
    pub fn config(self, protocol: ProtocolKind) -> ModelConfig {
        let (members, partitions, disruptions, kinds): (usize, u32, u8, &[DisruptionKind]) =
            match self {
                Preset::Quick => (
                    2,
                    2,
                    1,
                    &[
                        DisruptionKind::Join,
                        DisruptionKind::Crash,
                        DisruptionKind::Bounce,
                        DisruptionKind::Failover,
                    ],
                ),
                Preset::Ci => (3, 3, 2, ci_kinds(protocol)),
                Preset::Deep => (3, 4, 3, &DisruptionKind::PRESET),
            };
        let max_generation = match (self, protocol) {
            (Preset::Ci, ProtocolKind::Deferred | ProtocolKind::Incremental) => 4,
            _ => default_max_generation(),
        };
        ModelConfig {
            protocol,
            assignor: "uniform-v2".to_owned(),
            members,
            topics: 1,
            partitions,
            disruptions,
            kinds: kinds.iter().copied().collect(),
            network: NetworkKind::Ordered,
            network_faults: 1,
            delay_ms: 3_000,
            max_moves: if self == Preset::Ci { 2 } else { 1 },
            max_generation,
            rules: Rules::default(),
            faults: Vec::new(),
            start_stable: matches!(self, Preset::Ci),
        }
    }
}

/// The `ci` preset's disruption kinds per protocol (see [`Preset::Ci`]).
fn ci_kinds(protocol: ProtocolKind) -> &'static [DisruptionKind] {
    use DisruptionKind::{Crash, Failover, Isolate, Leader, Leave, Subscribe};
    match protocol {
        ProtocolKind::Eager | ProtocolKind::Cooperative => &DisruptionKind::PRESET,
        ProtocolKind::Deferred | ProtocolKind::Incremental => {
            &[Failover, Crash, Leave, Leader, Isolate, Subscribe]
        }
    }
}

/// A configuration that cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    /// A name (protocol, kind, network, preset, rule, fault, assignor) is not known.
    #[error("unknown {what} `{value}` (expected one of: {expected})")]
    Unknown {
        /// What was being named.
        what: &'static str,
        /// The name given.
        value: String,
        /// The accepted names.
        expected: &'static str,
    },
    /// A size is out of the model's range.
    #[error("{what} must be between {min} and {max}, got {value}")]
    OutOfRange {
        /// Which setting.
        what: &'static str,
        /// The value given.
        value: u64,
        /// Smallest accepted.
        min: u64,
        /// Largest accepted.
        max: u64,
    },
}

impl ModelConfig {
    /// Checks the sizes are within what the model handles.
    ///
    /// # Errors
    /// [`ConfigError::OutOfRange`] naming the first bad setting.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let check = |what, value: u64, min, max| {
            if value < min || value > max {
                Err(ConfigError::OutOfRange {
                    what,
                    value,
                    min,
                    max,
                })
            } else {
                Ok(())
            }
        };
        check("members", self.members as u64, 1, 8)?;
        check("topics", self.topics as u64, 1, 4)?;
        check("partitions", u64::from(self.partitions), 1, 16)?;
        check("disruptions", u64::from(self.disruptions), 0, 8)?;
        check("network faults", u64::from(self.network_faults), 0, 8)?;
        check("max moves", u64::from(self.max_moves), 1, 64)?;
        Ok(())
    }

    /// Builds the checkable model.
    ///
    /// # Errors
    /// Any [`ConfigError`] of [`ModelConfig::validate`], or an unknown assignor or fault name.
    pub fn into_model(self) -> Result<RebalanceModel, ConfigError> {
        self.validate()?;
        RebalanceModel::new(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for p in ProtocolKind::ALL {
            assert_eq!(p.name().parse::<ProtocolKind>(), Ok(p));
        }
        for k in DisruptionKind::ALL {
            assert_eq!(k.name().parse::<DisruptionKind>(), Ok(k));
        }
        assert!("paxos".parse::<ProtocolKind>().is_err());
    }

    #[test]
    fn presets_are_valid_and_ci_is_large_enough() {
        for preset in [Preset::Quick, Preset::Ci, Preset::Deep] {
            for p in ProtocolKind::ALL {
                preset.config(p).validate().unwrap();
            }
        }
        for p in ProtocolKind::ALL {
            let ci = Preset::Ci.config(p);
            assert!(ci.members >= 3 && ci.partitions >= 3 && ci.disruptions >= 2);
            assert!(ci.kinds.contains(&DisruptionKind::Failover), "{p}");
            assert!(
                ci.kinds.len() >= 2,
                "{p}: failover and at least one member disruption"
            );
        }
    }

    #[test]
    fn config_json_round_trips_and_rejects_bad_sizes() {
        let c = Preset::Ci.config(ProtocolKind::Deferred);
        let text = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<ModelConfig>(&text).unwrap(), c);
        let mut bad = c;
        bad.members = 0;
        assert!(matches!(
            bad.validate(),
            Err(ConfigError::OutOfRange {
                what: "members",
                ..
            })
        ));
    }
}
