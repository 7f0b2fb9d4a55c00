//! A member's configuration, timers and the events it reports.

use std::collections::BTreeSet;

use crate::ids::{Generation, MemberId, TopicPartition};
use crate::protocol::embedded::AssignmentFormat;
#[cfg(feature = "faults")]
use crate::protocol::fault::FaultSet;
use crate::protocol::leader::AssignorRef;

/// Which rebalance protocol (embedded-protocol policy) a group runs. All members of a group are
/// expected to agree; the leader's setting decides the policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RebalanceProtocol {
    /// Stop-the-world: every member gives up everything before rejoining.
    Eager,
    /// Incremental cooperative rebalancing in two rounds: revoke, then assign.
    SimpleCooperative,
    /// Cooperative, holding lost partitions back for `delay_ms` (0: reassign at once).
    Deferred {
        /// The scheduled rebalance delay.
        delay_ms: u32,
    },
    /// Deferred, moving at most `max_moves` partitions per scheduled round (0 counts as 1).
    Incremental {
        /// The scheduled rebalance delay, also the pause between batches of moves.
        delay_ms: u32,
        /// The most partitions moved away from their owners per round.
        max_moves: u32,
    },
}

impl RebalanceProtocol {
    /// Whether members keep their partitions across a rebalance (every protocol but eager).
    #[must_use]
    pub fn cooperative(self) -> bool {
        !matches!(self, RebalanceProtocol::Eager)
    }

    /// The assignment wire format of the protocol.
    #[must_use]
    pub fn assignment_format(self) -> AssignmentFormat {
        match self {
            RebalanceProtocol::Eager => AssignmentFormat::Eager,
            RebalanceProtocol::SimpleCooperative => AssignmentFormat::CooperativeV0,
            RebalanceProtocol::Deferred { .. } | RebalanceProtocol::Incremental { .. } => {
                AssignmentFormat::CooperativeV1
            }
        }
    }
}

/// A member's configuration.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MemberConfig {
    /// The member's own id (client-chosen; a restarted member takes a new one).
    pub member_id: MemberId,
    /// Topics it subscribes to.
    pub subscriptions: BTreeSet<String>,
    /// Its rack, if known.
    pub rack: Option<String>,
    /// The rebalance protocol.
    pub protocol: RebalanceProtocol,
    /// The coordinator removes the member after this long without a heartbeat; the member stops
    /// consuming after this long without hearing from the coordinator.
    pub session_timeout_ms: u64,
    /// How long a rejoin may take; the member stops consuming when its rejoin takes longer.
    pub rebalance_timeout_ms: u64,
    /// The pause between heartbeats.
    pub heartbeat_interval_ms: u64,
    /// The pause before retrying after `CoordinatorLoadInProgress`.
    pub retry_backoff_ms: u64,
    /// The assignor the member uses when it leads.
    pub assignor: AssignorRef,
    /// Switched-on faults (feature `faults` only).
    #[cfg(feature = "faults")]
    pub faults: FaultSet,
}

impl MemberConfig {
    /// A configuration with the default timeouts: session 300 ms, rebalance 600 ms, heartbeat
    /// every 100 ms, retry after 50 ms (logical milliseconds, small to keep traces short).
    #[must_use]
    pub fn new(
        member_id: impl Into<MemberId>,
        subscriptions: impl IntoIterator<Item = impl Into<String>>,
        protocol: RebalanceProtocol,
        assignor: AssignorRef,
    ) -> MemberConfig {
        MemberConfig {
            member_id: member_id.into(),
            subscriptions: subscriptions.into_iter().map(Into::into).collect(),
            rack: None,
            protocol,
            session_timeout_ms: 300,
            rebalance_timeout_ms: 600,
            heartbeat_interval_ms: 100,
            retry_backoff_ms: 50,
            assignor,
            #[cfg(feature = "faults")]
            faults: FaultSet::default(),
        }
    }
}

/// A member's timers. Each is armed at most once at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MemberTimer {
    /// Send the next heartbeat (stable members).
    Heartbeat,
    /// Nothing heard from the coordinator within the session timeout: stop consuming
    /// (KAFKA-9184's fix).
    Session,
    /// A rejoin has not completed within the rebalance timeout: stop consuming.
    Rebalance,
    /// The leader's scheduled rebalance delay ran out: rejoin.
    ScheduledRejoin,
    /// Retry after `CoordinatorLoadInProgress`.
    Retry,
}

/// One member's view of a completed rebalance round.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RoundInfo {
    /// The generation the round created.
    pub generation: Generation,
    /// Its leader.
    pub leader: MemberId,
    /// Partitions the member newly got.
    pub assigned: BTreeSet<TopicPartition>,
    /// Partitions it gave up (offsets committed first).
    pub revoked: BTreeSet<TopicPartition>,
    /// The scheduled delay it was told (0: none).
    pub delay_ms: u32,
}

/// What a member reports to its application (and to the driver).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MemberEvent {
    /// It started consuming these partitions.
    Assigned(BTreeSet<TopicPartition>),
    /// It stopped consuming these partitions after committing their offsets.
    Revoked(BTreeSet<TopicPartition>),
    /// It stopped consuming these partitions without a commit: fenced, or cut off from the
    /// coordinator for longer than its session or rebalance timeout.
    Lost(BTreeSet<TopicPartition>),
    /// A rebalance round completed for it.
    RebalanceRound(RoundInfo),
    /// As leader, its assignor refused the group; it rejoins to try again.
    AssignorFailed(String),
    /// A message from the coordinator could not be decoded (what and why).
    Malformed(String),
    /// It left the group (or was shut down) and is `Down`.
    Stopped,
}
