//! The fault catalogue: real Apache Kafka rebalancing bugs, each re-created as a named switch the
//! model checker must catch (issue 7).
//!
//! A catalogue entry is data, not code: the Kafka issue key, where the bug lives, its mechanism in
//! one line, the property it breaks, the switches that re-create it (core
//! [`Fault`](rebalance::protocol::Fault)s from the `faults` feature of the core, plus model
//! [`Rules`](crate::Rules) switched off when the bug is about a timing assumption) and the small
//! *finding configuration* in which the checker must find the violation — and in which the same
//! configuration without the switches must hold. The checker knows nothing of any entry: a new
//! bug of a known kind (stale claims, stale responses, missing timeouts, lost persistence,
//! zombies, wrong delay handling) needs a core switch and an entry here, nothing else.
//!
//! [`verify`] runs an entry both ways; `rebalance faults --verify` runs them all (CI).

pub mod verify;

use rebalance::protocol::Fault;

use crate::config::{
    ConfigError, DisruptionKind, ModelConfig, NetworkKind, Preset, ProtocolKind, Rules,
};
use crate::properties;
use crate::regression::LIVENESS;

pub use verify::{Finding, Holding, Outcome, Verification, verify, verify_all};

/// How the checker searches for an entry's violation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Search {
    /// Stateright's breadth-first search on one thread, stopping at the first violation of the
    /// property (a shortest counterexample); the run without the fault explores everything.
    Bfs,
    /// The explicit-graph liveness check ([`crate::liveness`]): every fair bottom SCC must be
    /// converged.
    Liveness,
}

/// What the checker must conclude about an entry in its finding configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expectation {
    /// With the bug switched on the property is violated; without it, it holds.
    Found,
    /// The bug's switch alone cannot break the property in this core, because another mechanism
    /// (named here) covers for it: the property must hold both with and without the switch. If
    /// the checker ever finds a violation, the covering mechanism has gone and the entry must
    /// become [`Expectation::Found`].
    Masked {
        /// The mechanism that covers for the bug.
        by: &'static str,
    },
    /// The finding configuration violates the property with *and* without the switch, for the
    /// reason given (a known limitation, outside the catalogue): the checker cannot tell the
    /// bug apart yet. Both runs must find a violation; once the run without the switch holds,
    /// the limitation is gone and the entry must become [`Expectation::Found`].
    NotSeparable {
        /// Why the configuration fails without the bug too.
        why: &'static str,
    },
}

/// One known bug.
#[derive(Clone, Copy, Debug)]
pub struct CatalogueEntry {
    /// The Apache Kafka issue key (`KAFKA-7026`), also the name `--fault` accepts.
    pub id: &'static str,
    /// Where the bug lives.
    pub component: &'static str,
    /// What goes wrong, in one line.
    pub mechanism: &'static str,
    /// The name of the property it breaks (one of [`crate::properties`]' names or
    /// [`LIVENESS`]).
    pub property: &'static str,
    /// The core switches that re-create the bug.
    pub faults: &'static [Fault],
    /// Model timing rules the bug needs switched off (by [`Rules::NAMES`] name).
    pub rules_off: &'static [&'static str],
    /// How the checker looks for it.
    pub search: Search,
    /// What the checker must conclude.
    pub expect: Expectation,
    /// The finding configuration, without the bug's switches.
    finding: fn() -> ModelConfig,
}

/// The kebab-case name of a core fault, as `ModelConfig::faults` stores it.
#[must_use]
pub fn fault_name(fault: Fault) -> String {
    let camel = format!("{fault:?}");
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

impl CatalogueEntry {
    /// The finding configuration without the bug: the run that must hold.
    #[must_use]
    pub fn baseline(&self) -> ModelConfig {
        (self.finding)()
    }

    /// The finding configuration with the bug switched on: the run that must find a violation.
    #[must_use]
    pub fn with_fault(&self) -> ModelConfig {
        let mut config = self.baseline();
        // The names are the catalogue's own constants, checked by the catalogue's tests.
        let _ = self.switch_on(&mut config);
        config
    }

    /// Switches the bug on in any configuration: adds its core faults and switches its rules
    /// off. Idempotent.
    ///
    /// # Errors
    /// [`ConfigError::Unknown`] if the entry names a rule the model does not have.
    pub fn switch_on(&self, config: &mut ModelConfig) -> Result<(), ConfigError> {
        for fault in self.faults {
            let name = fault_name(*fault);
            if !config.faults.contains(&name) {
                config.faults.push(name);
            }
        }
        for rule in self.rules_off {
            config.rules.switch_off(rule)?;
        }
        Ok(())
    }

    /// The one-line description of the switches (`trust-all-claims, rule off: ...`).
    #[must_use]
    pub fn switches(&self) -> String {
        let mut parts: Vec<String> = self.faults.iter().map(|f| fault_name(*f)).collect();
        parts.extend(self.rules_off.iter().map(|r| format!("rule off: {r}")));
        parts.join(", ")
    }
}

/// A small configuration shape shared by the finding configurations: one topic, no
/// disruptions, ordered network, the model's defaults elsewhere.
fn small(protocol: ProtocolKind, members: usize, partitions: u32) -> ModelConfig {
    // From the quick preset, so settings the catalogue does not care about keep the model's
    // defaults.
    let mut c = Preset::Quick.config(protocol);
    c.assignor = "uniform-v2".to_owned();
    c.members = members;
    c.topics = 1;
    c.partitions = partitions;
    c.disruptions = 0;
    c.kinds = Default::default();
    c.network = NetworkKind::Ordered;
    c.network_faults = 0;
    c.delay_ms = 3_000;
    c.max_moves = 1;
    c.rules = Rules::default();
    c.faults = Vec::new();
    c
}

/// `config` with a budget of `n` disruptions of the given kinds.
fn disrupted(mut config: ModelConfig, n: u8, kinds: &[DisruptionKind]) -> ModelConfig {
    config.disruptions = n;
    config.kinds = kinds.iter().copied().collect();
    config
}

/// A member is cut off and later reconnects (two isolate-kind disruptions, the
/// `isolation-permanent` rule off), in a group whose members have no session timer of their own
/// (KAFKA-9184's fault, as in the clients of the time): the evicted member keeps its partitions
/// and its claim, and comes back claiming them under its old generation.
fn finding_7026() -> ModelConfig {
    let mut c = disrupted(
        small(ProtocolKind::Cooperative, 2, 2),
        2,
        &[DisruptionKind::Isolate],
    );
    c.rules.isolation_permanent = false;
    c.faults.push(fault_name(Fault::NoOwnSessionTimer));
    c
}

fn finding_14639() -> ModelConfig {
    small(ProtocolKind::Cooperative, 2, 2)
}

fn finding_9823() -> ModelConfig {
    let mut c = small(ProtocolKind::Eager, 2, 2);
    c.network = NetworkKind::Unordered;
    c
}

/// One member's application thread may hang for good while its heartbeats go on (one `stall`
/// disruption): when it is the leader of a generation whose JoinGroup answer it has not read,
/// it never sends SyncGroup. The leader must heartbeat while it joins, so it must own
/// partitions then: 2 members, so that a second member's join makes the first, which owns every
/// partition, lead a second round; 2 partitions, so that the run without the bug also reaches
/// every example (an offset commit needs a revocation).
fn finding_12890() -> ModelConfig {
    disrupted(
        small(ProtocolKind::Cooperative, 2, 2),
        1,
        &[DisruptionKind::Stall],
    )
}

fn finding_2017() -> ModelConfig {
    disrupted(
        small(ProtocolKind::Cooperative, 2, 2),
        1,
        &[DisruptionKind::Failover],
    )
}

fn finding_9184() -> ModelConfig {
    disrupted(
        small(ProtocolKind::Cooperative, 2, 2),
        1,
        &[DisruptionKind::Isolate],
    )
}

fn finding_15693() -> ModelConfig {
    let mut c = disrupted(
        small(ProtocolKind::Deferred, 2, 2),
        1,
        &[DisruptionKind::Crash],
    );
    c.delay_ms = 0;
    c
}

/// Every known bug, in the order of `known-bugs` in the project's references.
pub const CATALOGUE: [CatalogueEntry; 7] = [
    CatalogueEntry {
        id: "KAFKA-7026",
        component: "leader's assignor",
        mechanism: "the leader trusts every ownership claim, so a stale claim from a returning \
                    member keeps a partition with two owners",
        property: properties::ASSIGNMENT_EXCLUSIVE,
        faults: &[Fault::TrustAllClaims],
        rules_off: &[],
        search: Search::Bfs,
        expect: Expectation::Found,
        finding: finding_7026,
    },
    CatalogueEntry {
        id: "KAFKA-14639",
        component: "cooperative leader",
        mechanism: "a partition is revoked from its owner and assigned to another member in the \
                    same round",
        property: properties::NO_DOUBLE_OWNERSHIP,
        faults: &[Fault::AssignRevokedSameRound],
        rules_off: &[],
        search: Search::Bfs,
        expect: Expectation::Found,
        finding: finding_14639,
    },
    CatalogueEntry {
        id: "KAFKA-9823",
        component: "member",
        mechanism: "a late error for a request sent under an older generation resets the member: \
                    it drops a valid assignment and rejoins",
        property: properties::ASSIGNMENT_KEPT,
        faults: &[Fault::StaleErrorResets],
        rules_off: &[],
        search: Search::Bfs,
        expect: Expectation::Found,
        finding: finding_9823,
    },
    CatalogueEntry {
        id: "KAFKA-12890",
        component: "coordinator",
        mechanism: "no sync timeout: a group whose leader never sends SyncGroup awaits sync \
                    forever, its heartbeats keeping its session alive",
        property: LIVENESS,
        // Two switches for the one mechanism Kafka had. Kafka's coordinator armed no sync
        // timeout, and its members heartbeat under the generation they just joined, which it
        // accepted while completing the rebalance, resetting the session timer. This core's
        // members heartbeat under the generation of their assignment, so until a member syncs
        // the correct coordinator refuses its heartbeats and lets its session expire: with
        // `NoSyncTimeout` alone a hung leader is still expired and the group moves on. The
        // second switch restores Kafka's acceptance while the group awaits sync, so only
        // together do they re-create the stuck group.
        faults: &[
            Fault::NoSyncTimeout,
            Fault::HeartbeatKeepsSessionWhileAwaitingSync,
        ],
        rules_off: &[],
        search: Search::Liveness,
        expect: Expectation::Found,
        finding: finding_12890,
    },
    CatalogueEntry {
        id: "KAFKA-2017",
        component: "coordinator failover",
        mechanism: "group metadata is neither persisted nor reloaded: the new coordinator knows \
                    nothing of the group and cannot fence its stale members",
        property: properties::NO_DOUBLE_OWNERSHIP,
        faults: &[Fault::NoPersistence],
        rules_off: &[],
        search: Search::Bfs,
        expect: Expectation::Found,
        finding: finding_2017,
    },
    CatalogueEntry {
        id: "KAFKA-9184",
        component: "member (Connect worker)",
        mechanism: "a member cut off from the coordinator keeps working after it is evicted, \
                    while its partitions are reassigned",
        property: properties::NO_DOUBLE_OWNERSHIP,
        faults: &[Fault::NoOwnSessionTimer],
        rules_off: &[],
        search: Search::Bfs,
        expect: Expectation::Found,
        finding: finding_9184,
    },
    CatalogueEntry {
        id: "KAFKA-15693",
        component: "deferred resolution",
        mechanism: "with a scheduled delay of 0 the leader still withholds lost partitions and \
                    announces delay 0, so nobody rejoins for them",
        property: LIVENESS,
        faults: &[Fault::ZeroDelayWithholds],
        rules_off: &[],
        search: Search::Liveness,
        expect: Expectation::Found,
        finding: finding_15693,
    },
];

/// The catalogue entry with this id (case-insensitive: `kafka-7026` works too).
///
/// # Errors
/// [`ConfigError::Unknown`] for an id not in the catalogue.
pub fn entry(id: &str) -> Result<&'static CatalogueEntry, ConfigError> {
    CATALOGUE
        .iter()
        .find(|e| e.id.eq_ignore_ascii_case(id))
        .ok_or_else(|| ConfigError::Unknown {
            what: "fault",
            value: id.to_owned(),
            expected: "KAFKA-7026, KAFKA-14639, KAFKA-9823, KAFKA-12890, KAFKA-2017, KAFKA-9184, \
                       KAFKA-15693 (see `rebalance faults`)",
        })
}

/// Switches a fault on by name in `config`: a catalogue id switches on everything its entry
/// needs; any other name is taken as a core fault name (variant, kebab-case or issue key), left
/// for [`ModelConfig::into_model`] to check. This is what `rebalance check --fault NAME` does.
///
/// # Errors
/// [`ConfigError::Unknown`] if a catalogue entry names an unknown rule.
pub fn switch_on(config: &mut ModelConfig, name: &str) -> Result<(), ConfigError> {
    match entry(name) {
        Ok(e) => e.switch_on(config),
        Err(_) => {
            if !config.faults.iter().any(|f| f == name) {
                config.faults.push(name.to_owned());
            }
            Ok(())
        }
    }
}
