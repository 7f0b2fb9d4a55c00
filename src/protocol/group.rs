//! The coordinator's view of one group: its state, members and durable records.

use std::collections::{BTreeMap, BTreeSet};

use crate::ids::{Generation, MemberId, TopicPartition};

/// What the coordinator keeps about one member.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GroupMember {
    /// The session timeout the member asked for.
    pub session_timeout_ms: u64,
    /// The rebalance timeout the member asked for.
    pub rebalance_timeout_ms: u64,
    /// The member's latest (opaque) subscription metadata.
    pub metadata: Vec<u8>,
}

/// The group's state, each carrying the data that only exists in it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GroupState {
    /// The coordinator took over after failover and is loading the group from its log; every
    /// request except FindCoordinator is answered `CoordinatorLoadInProgress` until the `Load`
    /// timer fires.
    Loading {
        /// The assignment of the loaded generation, if it was persisted.
        assignment: Option<BTreeMap<MemberId, Vec<u8>>>,
    },
    /// No members.
    Empty,
    /// A join phase is open: members rejoin; it completes when every member has joined or the
    /// `Join` timer fires.
    PreparingRebalance {
        /// Members whose JoinGroup is held until the phase completes.
        joined: BTreeSet<MemberId>,
    },
    /// The join phase completed; waiting for the leader's SyncGroup.
    AwaitingSync {
        /// Members whose SyncGroup is held until the leader's arrives.
        synced: BTreeSet<MemberId>,
    },
    /// The leader's assignment is stored (and persisted); members heartbeat.
    Stable {
        /// The encoded assignment per member, as the leader sent it.
        assignment: BTreeMap<MemberId, Vec<u8>>,
    },
    /// This coordinator no longer serves the group (another epoch took over).
    Dead,
}

impl GroupState {
    /// A short name for logs and traces.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            GroupState::Loading { .. } => "Loading",
            GroupState::Empty => "Empty",
            GroupState::PreparingRebalance { .. } => "PreparingRebalance",
            GroupState::AwaitingSync { .. } => "AwaitingSync",
            GroupState::Stable { .. } => "Stable",
            GroupState::Dead => "Dead",
        }
    }
}

/// One record of the coordinator's durable log. The driver appends the records a coordinator
/// hands out (`poll_persist`) before delivering the responses of the same step, and gives the
/// whole log to the next coordinator epoch (`Coordinator::recover`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GroupRecord {
    /// A completed join phase: the new generation, its leader and its members. Written before
    /// any JoinGroup of that generation is answered (failover stage 4 of the reference).
    Generation {
        /// The new generation.
        generation: Generation,
        /// Its leader.
        leader: MemberId,
        /// Its members.
        members: BTreeMap<MemberId, GroupMember>,
    },
    /// The leader's assignment for a generation. Written before any SyncGroup is answered.
    Assignment {
        /// The generation it belongs to.
        generation: Generation,
        /// The encoded assignment per member.
        assignment: BTreeMap<MemberId, Vec<u8>>,
    },
    /// The group lost its last member.
    Empty {
        /// The generation at that moment.
        generation: Generation,
    },
    /// A committed offset.
    Offset {
        /// The partition.
        partition: TopicPartition,
        /// The offset.
        offset: i64,
    },
}

/// The group as a log describes it: the result of replaying every record in order.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct LoadedGroup {
    /// The latest generation.
    pub generation: Generation,
    /// Its leader.
    pub leader: Option<MemberId>,
    /// Its members.
    pub members: BTreeMap<MemberId, GroupMember>,
    /// The assignment of `generation`, if the leader's SyncGroup was persisted.
    pub assignment: Option<BTreeMap<MemberId, Vec<u8>>>,
    /// Committed offsets.
    pub offsets: BTreeMap<TopicPartition, i64>,
}

impl LoadedGroup {
    /// Replays `log` from the start. A later record overrides an earlier one; an assignment
    /// for a generation other than the latest is ignored.
    #[must_use]
    pub fn replay(log: &[GroupRecord]) -> LoadedGroup {
        let mut group = LoadedGroup {
            generation: Generation(0),
            ..LoadedGroup::default()
        };
        for record in log {
            match record {
                GroupRecord::Generation {
                    generation,
                    leader,
                    members,
                } => {
                    group.generation = *generation;
                    group.leader = Some(leader.clone());
                    group.members = members.clone();
                    group.assignment = None;
                }
                GroupRecord::Assignment {
                    generation,
                    assignment,
                } => {
                    if *generation == group.generation {
                        group.assignment = Some(assignment.clone());
                    }
                }
                GroupRecord::Empty { generation } => {
                    group.generation = *generation;
                    group.leader = None;
                    group.members.clear();
                    group.assignment = None;
                }
                GroupRecord::Offset { partition, offset } => {
                    group.offsets.insert(partition.clone(), *offset);
                }
            }
        }
        group
    }
}
