//! Named, switchable re-creations of known Kafka rebalancing bugs (cargo feature `faults`).
//!
//! Each [`Fault`] switches off one *mechanism* of the correct protocol (a check, a timer, a
//! persistence step), not one scenario, so a new bug of the same kind needs only a variant and
//! the one check that consults it. The default build does not compile this module: every check
//! then folds to `false` (see the crate-private `fault_on!` macro).

use std::collections::BTreeSet;

/// One mechanism-level fault. The Kafka issue each one re-creates is named in its doc.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fault {
    /// The leader trusts every ownership claim whatever its generation: every claimant keeps
    /// what it claims (KAFKA-7026).
    TrustAllClaims,
    /// The cooperative leader assigns a partition in the same round it revokes it from its
    /// current owner, instead of one round later (KAFKA-14639).
    AssignRevokedSameRound,
    /// A member acts on a late error for a request sent under an older generation: it drops its
    /// assignment and rejoins (KAFKA-9823).
    StaleErrorResets,
    /// The coordinator arms no sync timeout: a group whose leader never syncs awaits sync forever
    /// (KAFKA-12890).
    NoSyncTimeout,
    /// While the group awaits sync, a heartbeat from any member of the group resets that
    /// member's session timer whatever generation it was sent under (the answer is unchanged),
    /// as Kafka's coordinator did in `CompletingRebalance`, where members heartbeat under the
    /// generation they just joined. Together with [`Fault::NoSyncTimeout`] a leader that hangs
    /// before SyncGroup while its heartbeats go on keeps the group awaiting sync forever
    /// (KAFKA-12890).
    HeartbeatKeepsSessionWhileAwaitingSync,
    /// The coordinator neither writes group metadata to its log nor reloads it after failover
    /// (KAFKA-2017).
    NoPersistence,
    /// A member has no session timer of its own: cut off from the coordinator, it keeps
    /// consuming (KAFKA-9184).
    NoOwnSessionTimer,
    /// With a scheduled delay of zero, the deferred leader still withholds lost partitions and
    /// sends delay 0, which members read as "nothing scheduled" (KAFKA-15693).
    ZeroDelayWithholds,
}

impl Fault {
    /// Every fault, in a stable order.
    pub const ALL: [Fault; 8] = [
        Fault::TrustAllClaims,
        Fault::AssignRevokedSameRound,
        Fault::StaleErrorResets,
        Fault::NoSyncTimeout,
        Fault::HeartbeatKeepsSessionWhileAwaitingSync,
        Fault::NoPersistence,
        Fault::NoOwnSessionTimer,
        Fault::ZeroDelayWithholds,
    ];

    /// The Apache Kafka issue the fault re-creates.
    #[must_use]
    pub fn issue(self) -> &'static str {
        match self {
            Fault::TrustAllClaims => "KAFKA-7026",
            Fault::AssignRevokedSameRound => "KAFKA-14639",
            Fault::StaleErrorResets => "KAFKA-9823",
            Fault::NoSyncTimeout | Fault::HeartbeatKeepsSessionWhileAwaitingSync => "KAFKA-12890",
            Fault::NoPersistence => "KAFKA-2017",
            Fault::NoOwnSessionTimer => "KAFKA-9184",
            Fault::ZeroDelayWithholds => "KAFKA-15693",
        }
    }
}

/// A set of switched-on faults. The empty set (the default) is the correct protocol.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct FaultSet(BTreeSet<Fault>);

impl FaultSet {
    /// No fault: the correct protocol.
    #[must_use]
    pub fn none() -> FaultSet {
        FaultSet::default()
    }

    /// A set holding exactly the given faults.
    #[must_use]
    pub fn of(faults: &[Fault]) -> FaultSet {
        FaultSet(faults.iter().copied().collect())
    }

    /// Switches `fault` on.
    pub fn insert(&mut self, fault: Fault) {
        self.0.insert(fault);
    }

    /// Whether `fault` is on.
    #[must_use]
    pub fn has(&self, fault: Fault) -> bool {
        self.0.contains(&fault)
    }

    /// The switched-on faults, in order.
    pub fn iter(&self) -> impl Iterator<Item = Fault> + '_ {
        self.0.iter().copied()
    }
}
