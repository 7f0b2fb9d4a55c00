//! The group coordinator: membership, generations, the join and sync phases, fencing, sessions
//! and failover, as a sans-IO state machine.
//!
//! # Calling protocol
//!
//! 1. Create with [`Coordinator::new`] (a fresh group) or [`Coordinator::recover`] (a new epoch
//!    taking over after failover, from the previous epochs' durable log).
//! 2. Feed inputs: [`Coordinator::handle_request`] for every request delivered to it,
//!    [`Coordinator::handle_timer`] to fire one armed timer (whatever its deadline: a model
//!    checker fires timers in any order), or [`Coordinator::handle_timeout`] to fire every timer
//!    due at `now_ms` in a deterministic order (deadline, then [`CoordinatorTimer`] order).
//! 3. After each input, drain [`Coordinator::poll_persist`] first and append the records to the
//!    durable log, then drain [`Coordinator::poll_transmit`] and deliver the responses.
//! 4. Ask [`Coordinator::timers`] / [`Coordinator::poll_timeout`] when to call it next.
//!
//! Time is the caller's `now_ms`; re-arming a timer at the same `now_ms` yields an equal state,
//! so heartbeats at a constant clock do not grow a model's state space.

use std::collections::{BTreeMap, VecDeque};

use crate::ids::{CoordinatorEpoch, Generation, MemberId, TopicPartition};

#[cfg(feature = "faults")]
use super::fault::FaultSet;
mod phases;

use super::group::{GroupMember, GroupRecord, GroupState, LoadedGroup};
use super::messages::{ErrorCode, Request, Response};

/// The coordinator's timers. Each is armed at most once at a time.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum CoordinatorTimer {
    /// Loading after failover completes.
    Load,
    /// The join phase's deadline (the largest rebalance timeout of the members): members that
    /// have not rejoined by then are removed.
    Join,
    /// The sync phase's deadline (also the largest rebalance timeout): if the leader has not sent
    /// its SyncGroup by then, members that did not sync are removed and a new rebalance starts
    /// (KAFKA-12890's fix).
    Sync,
    /// A member's session expiry: no heartbeat (or join/sync) within its session timeout.
    Session(MemberId),
}

/// How a coordinator behaves.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CoordinatorConfig {
    /// How long loading the group takes after failover.
    pub load_ms: u64,
    /// Switched-on faults (feature `faults` only).
    #[cfg(feature = "faults")]
    pub faults: FaultSet,
}

impl Default for CoordinatorConfig {
    fn default() -> Self {
        CoordinatorConfig {
            load_ms: 100,
            #[cfg(feature = "faults")]
            faults: FaultSet::default(),
        }
    }
}

/// The coordinator of one group at one epoch. See the module documentation for the calling
/// protocol.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Coordinator {
    epoch: CoordinatorEpoch,
    config: CoordinatorConfig,
    state: GroupState,
    generation: Generation,
    leader: Option<MemberId>,
    members: BTreeMap<MemberId, GroupMember>,
    offsets: BTreeMap<TopicPartition, i64>,
    timers: BTreeMap<CoordinatorTimer, u64>,
    transmit: VecDeque<(MemberId, Response)>,
    persist: VecDeque<GroupRecord>,
}

impl Coordinator {
    /// A coordinator for a group that has never existed: state `Empty`, generation 0.
    #[must_use]
    pub fn new(epoch: CoordinatorEpoch, config: CoordinatorConfig) -> Coordinator {
        Coordinator {
            epoch,
            config,
            state: GroupState::Empty,
            generation: Generation(0),
            leader: None,
            members: BTreeMap::new(),
            offsets: BTreeMap::new(),
            timers: BTreeMap::new(),
            transmit: VecDeque::new(),
            persist: VecDeque::new(),
        }
    }

    /// A coordinator taking over at `epoch` from the durable `log` of the previous epochs. It
    /// answers `CoordinatorLoadInProgress` until its `Load` timer (armed at
    /// `now_ms + config.load_ms`) fires, then continues from the loaded group: `Stable` when the
    /// latest generation's assignment was persisted (members of older generations are fenced by
    /// IllegalGeneration), a new rebalance when only the generation was (failover between join
    /// and sync), `Empty` when there are no members. Sessions of loaded members start afresh.
    #[must_use]
    pub fn recover(
        epoch: CoordinatorEpoch,
        config: CoordinatorConfig,
        log: &[GroupRecord],
        now_ms: u64,
    ) -> Coordinator {
        let log = if fault_on!(config, NoPersistence) {
            &[][..]
        } else {
            log
        };
        let loaded = LoadedGroup::replay(log);
        let mut c = Coordinator::new(epoch, config);
        c.generation = loaded.generation;
        c.leader = loaded.leader;
        c.members = loaded.members;
        c.offsets = loaded.offsets;
        c.state = GroupState::Loading {
            assignment: loaded.assignment,
        };
        c.timers.insert(
            CoordinatorTimer::Load,
            now_ms.saturating_add(c.config.load_ms),
        );
        c
    }

    /// Stops serving the group (another epoch took over): every later request is answered
    /// `NotCoordinator` and no timer is armed.
    pub fn resign(&mut self) {
        self.state = GroupState::Dead;
        self.timers.clear();
    }

    /// Handles one request from `from` (the member's address; responses go back to it).
    pub fn handle_request(&mut self, now_ms: u64, from: MemberId, request: Request) {
        if let Request::FindCoordinator { .. } = request {
            if self.state != GroupState::Dead {
                let epoch = self.epoch;
                self.transmit
                    .push_back((from, Response::FindCoordinator { epoch }));
            }
            return;
        }
        if request.epoch() != self.epoch || self.state == GroupState::Dead {
            let response = self.reject(&request, ErrorCode::NotCoordinator);
            self.transmit.push_back((from, response));
            return;
        }
        if let GroupState::Loading { .. } = self.state {
            let response = self.reject(&request, ErrorCode::CoordinatorLoadInProgress);
            self.transmit.push_back((from, response));
            return;
        }
        match request {
            Request::FindCoordinator { .. } => {}
            Request::JoinGroup {
                member_id,
                session_timeout_ms,
                rebalance_timeout_ms,
                metadata,
                ..
            } => self.join(
                now_ms,
                member_id,
                GroupMember {
                    session_timeout_ms,
                    rebalance_timeout_ms,
                    metadata,
                },
            ),
            Request::SyncGroup {
                generation,
                member_id,
                assignments,
                ..
            } => self.sync(now_ms, from, generation, member_id, assignments),
            Request::Heartbeat {
                generation,
                member_id,
                ..
            } => {
                let result = self.heartbeat(now_ms, generation, &member_id);
                let epoch = self.epoch;
                self.transmit.push_back((
                    from,
                    Response::Heartbeat {
                        epoch,
                        generation,
                        result,
                    },
                ));
            }
            Request::LeaveGroup { member_id, .. } => {
                let result = self.leave(now_ms, &member_id);
                let epoch = self.epoch;
                self.transmit
                    .push_back((from, Response::LeaveGroup { epoch, result }));
            }
            Request::OffsetCommit {
                generation,
                member_id,
                partition,
                offset,
                ..
            } => {
                let result = self.commit(generation, &member_id, &partition, offset);
                let epoch = self.epoch;
                self.transmit.push_back((
                    from,
                    Response::OffsetCommit {
                        epoch,
                        generation,
                        partition,
                        result,
                    },
                ));
            }
        }
    }

    /// Fires `timer` if it is armed, whatever its deadline; does nothing otherwise.
    pub fn handle_timer(&mut self, now_ms: u64, timer: CoordinatorTimer) {
        if self.timers.remove(&timer).is_none() {
            return;
        }
        match timer {
            CoordinatorTimer::Load => self.finish_load(now_ms),
            CoordinatorTimer::Join => {
                if let GroupState::PreparingRebalance { .. } = self.state {
                    self.complete_join(now_ms);
                }
            }
            CoordinatorTimer::Sync => self.sync_expired(now_ms),
            CoordinatorTimer::Session(member) => self.remove_member(now_ms, &member),
        }
    }

    /// Fires every timer whose deadline is at most `now_ms`, earliest first (ties in
    /// [`CoordinatorTimer`] order), including timers armed by those firings that are also due.
    pub fn handle_timeout(&mut self, now_ms: u64) {
        while let Some((timer, _)) = self
            .timers
            .iter()
            .filter(|(_, deadline)| **deadline <= now_ms)
            .min_by_key(|(timer, deadline)| (**deadline, (*timer).clone()))
            .map(|(t, d)| (t.clone(), *d))
        {
            self.handle_timer(now_ms, timer);
        }
    }

    /// The next response to deliver, with the member it is for.
    #[must_use]
    pub fn poll_transmit(&mut self) -> Option<(MemberId, Response)> {
        self.transmit.pop_front()
    }

    /// The next record to append to the durable log. Append every record of a step before
    /// delivering that step's responses.
    #[must_use]
    pub fn poll_persist(&mut self) -> Option<GroupRecord> {
        self.persist.pop_front()
    }

    /// Every armed timer with its deadline, in [`CoordinatorTimer`] order.
    pub fn timers(&self) -> impl Iterator<Item = (CoordinatorTimer, u64)> + '_ {
        self.timers.iter().map(|(t, d)| (t.clone(), *d))
    }

    /// The earliest deadline of an armed timer.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<u64> {
        self.timers.values().copied().min()
    }

    /// The coordinator's epoch.
    #[must_use]
    pub fn epoch(&self) -> CoordinatorEpoch {
        self.epoch
    }

    /// The group's state.
    #[must_use]
    pub fn state(&self) -> &GroupState {
        &self.state
    }

    /// The group's current generation.
    #[must_use]
    pub fn generation(&self) -> Generation {
        self.generation
    }

    /// The leader of the current generation (or the first joiner of a forming group).
    #[must_use]
    pub fn leader(&self) -> Option<&MemberId> {
        self.leader.as_ref()
    }

    /// The group's members.
    #[must_use]
    pub fn members(&self) -> &BTreeMap<MemberId, GroupMember> {
        &self.members
    }

    /// The stored (encoded) assignment of the current generation, when the group is stable.
    #[must_use]
    pub fn assignment(&self) -> Option<&BTreeMap<MemberId, Vec<u8>>> {
        match &self.state {
            GroupState::Stable { assignment } => Some(assignment),
            _ => None,
        }
    }

    /// Committed offsets.
    #[must_use]
    pub fn offsets(&self) -> &BTreeMap<TopicPartition, i64> {
        &self.offsets
    }

    /// The coordinator's configuration.
    #[must_use]
    pub fn config(&self) -> &CoordinatorConfig {
        &self.config
    }
}
