//! The group-membership messages exchanged between a member and the coordinator.
//!
//! Every message names the coordinator epoch it is addressed to (requests) or was sent by
//! (responses). A coordinator refuses requests addressed to another epoch with
//! [`ErrorCode::NotCoordinator`]; a member recognises (and drops) responses from an epoch older
//! than the one it currently talks to.
//!
//! **Member ids are chosen by the client**, like static membership's `group.instance.id`: the
//! coordinator never assigns ids, so a JoinGroup needs no second round-trip to learn one. A member
//! that restarts (a *bounce*) comes back under a new id, so the coordinator sees it as a new
//! member and the leader sees its old partitions as lost.
//!
//! Responses that can carry an error echo the generation their request was sent under. This
//! stands in for Kafka's correlation id, by which a client finds the request (and the generation)
//! an answer belongs to; it lets a member ignore late errors for a generation it has left
//! (KAFKA-9823) even on a network that reorders messages.

use std::collections::BTreeMap;

use crate::ids::{CoordinatorEpoch, Generation, MemberId, TopicPartition};

/// The errors a coordinator answers with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ErrorCode {
    /// The request's generation is not the group's current generation: the member has been
    /// fenced and must rejoin without its partitions.
    IllegalGeneration,
    /// A rebalance is in progress: the member must rejoin (keeping its partitions when it is
    /// cooperative).
    RebalanceInProgress,
    /// The member is not (or no longer) in the group: it must rejoin without its partitions.
    UnknownMemberId,
    /// The request was addressed to a coordinator epoch that is not (or no longer) this one: the
    /// member must find the coordinator again.
    NotCoordinator,
    /// The coordinator is still loading the group after failover: retry later.
    CoordinatorLoadInProgress,
}

/// A request from a member to the coordinator.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Request {
    /// Asks which coordinator (epoch) serves the group. Answered by whatever coordinator
    /// receives it, whatever `epoch` says (the epoch the member last knew, for tracing).
    FindCoordinator {
        /// The epoch the member last knew (`CoordinatorEpoch::default()` when none).
        epoch: CoordinatorEpoch,
    },
    /// Joins (or rejoins) the group. Held by the coordinator until the join phase completes.
    JoinGroup {
        /// The coordinator epoch this is addressed to.
        epoch: CoordinatorEpoch,
        /// The member's own, client-chosen id.
        member_id: MemberId,
        /// How long the coordinator waits for a heartbeat before removing the member.
        session_timeout_ms: u64,
        /// How long the member may take to rejoin once a rebalance starts.
        rebalance_timeout_ms: u64,
        /// The encoded embedded-protocol subscription (opaque to the coordinator).
        metadata: Vec<u8>,
    },
    /// Completes a join phase; the leader's carries every member's encoded assignment.
    SyncGroup {
        /// The coordinator epoch this is addressed to.
        epoch: CoordinatorEpoch,
        /// The generation the member joined.
        generation: Generation,
        /// The member's id.
        member_id: MemberId,
        /// The leader's assignments, encoded, per member; empty for followers.
        assignments: BTreeMap<MemberId, Vec<u8>>,
    },
    /// Keeps the member's session alive and asks whether a rebalance is under way.
    Heartbeat {
        /// The coordinator epoch this is addressed to.
        epoch: CoordinatorEpoch,
        /// The generation the member believes current.
        generation: Generation,
        /// The member's id.
        member_id: MemberId,
    },
    /// Leaves the group at once (a graceful shutdown).
    LeaveGroup {
        /// The coordinator epoch this is addressed to.
        epoch: CoordinatorEpoch,
        /// The member's id.
        member_id: MemberId,
    },
    /// Commits the consumed offset of one partition, fenced by generation.
    OffsetCommit {
        /// The coordinator epoch this is addressed to.
        epoch: CoordinatorEpoch,
        /// The generation the partition was assigned in.
        generation: Generation,
        /// The member's id.
        member_id: MemberId,
        /// The partition.
        partition: TopicPartition,
        /// The offset to commit.
        offset: i64,
    },
}

impl Request {
    /// The coordinator epoch the request is addressed to.
    #[must_use]
    pub fn epoch(&self) -> CoordinatorEpoch {
        match self {
            Request::FindCoordinator { epoch }
            | Request::JoinGroup { epoch, .. }
            | Request::SyncGroup { epoch, .. }
            | Request::Heartbeat { epoch, .. }
            | Request::LeaveGroup { epoch, .. }
            | Request::OffsetCommit { epoch, .. } => *epoch,
        }
    }
}

/// A successful JoinGroup answer.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JoinGroupOk {
    /// The generation the join phase created.
    pub generation: Generation,
    /// The member the coordinator made leader for this generation.
    pub leader: MemberId,
    /// Every joined member's metadata, for the leader only (empty for followers).
    pub members: BTreeMap<MemberId, Vec<u8>>,
}

/// A response from the coordinator to a member.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Response {
    /// The coordinator serving the group.
    FindCoordinator {
        /// Its epoch: address every following request to it.
        epoch: CoordinatorEpoch,
    },
    /// The outcome of a JoinGroup.
    JoinGroup {
        /// The sender's epoch.
        epoch: CoordinatorEpoch,
        /// The new generation, leader and (for the leader) members; or why not.
        result: Result<JoinGroupOk, ErrorCode>,
    },
    /// The outcome of a SyncGroup.
    SyncGroup {
        /// The sender's epoch.
        epoch: CoordinatorEpoch,
        /// The generation the request was sent under.
        generation: Generation,
        /// The member's encoded assignment (empty bytes when the leader gave it none), or why not.
        result: Result<Vec<u8>, ErrorCode>,
    },
    /// The outcome of a Heartbeat.
    Heartbeat {
        /// The sender's epoch.
        epoch: CoordinatorEpoch,
        /// The generation the request was sent under.
        generation: Generation,
        /// `Ok` while the group is stable (or awaiting sync) at that generation.
        result: Result<(), ErrorCode>,
    },
    /// The outcome of a LeaveGroup.
    LeaveGroup {
        /// The sender's epoch.
        epoch: CoordinatorEpoch,
        /// `Ok` when the member was removed.
        result: Result<(), ErrorCode>,
    },
    /// The outcome of an OffsetCommit.
    OffsetCommit {
        /// The sender's epoch.
        epoch: CoordinatorEpoch,
        /// The generation the request was sent under.
        generation: Generation,
        /// The partition.
        partition: TopicPartition,
        /// `Ok` when the offset was stored.
        result: Result<(), ErrorCode>,
    },
}

impl Response {
    /// The epoch of the coordinator that sent the response.
    #[must_use]
    pub fn epoch(&self) -> CoordinatorEpoch {
        match self {
            Response::FindCoordinator { epoch }
            | Response::JoinGroup { epoch, .. }
            | Response::SyncGroup { epoch, .. }
            | Response::Heartbeat { epoch, .. }
            | Response::LeaveGroup { epoch, .. }
            | Response::OffsetCommit { epoch, .. } => *epoch,
        }
    }
}
