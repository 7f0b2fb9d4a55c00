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

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::ids::{CoordinatorEpoch, Generation, MemberId, TopicPartition};

#[cfg(feature = "faults")]
use super::fault::FaultSet;
use super::group::{GroupMember, GroupRecord, GroupState, LoadedGroup};
use super::messages::{ErrorCode, JoinGroupOk, Request, Response};

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

    fn reject(&self, request: &Request, code: ErrorCode) -> Response {
        let epoch = self.epoch;
        match request {
            Request::FindCoordinator { .. } => Response::FindCoordinator { epoch },
            Request::JoinGroup { .. } => Response::JoinGroup {
                epoch,
                result: Err(code),
            },
            Request::SyncGroup { generation, .. } => Response::SyncGroup {
                epoch,
                generation: *generation,
                result: Err(code),
            },
            Request::Heartbeat { generation, .. } => Response::Heartbeat {
                epoch,
                generation: *generation,
                result: Err(code),
            },
            Request::LeaveGroup { .. } => Response::LeaveGroup {
                epoch,
                result: Err(code),
            },
            Request::OffsetCommit {
                generation,
                partition,
                ..
            } => Response::OffsetCommit {
                epoch,
                generation: *generation,
                partition: partition.clone(),
                result: Err(code),
            },
        }
    }

    fn write(&mut self, record: GroupRecord) {
        if !fault_on!(self.config, NoPersistence) {
            self.persist.push_back(record);
        }
    }

    fn arm_session(&mut self, now_ms: u64, member: &MemberId) {
        if let Some(m) = self.members.get(member) {
            let deadline = now_ms.saturating_add(m.session_timeout_ms);
            self.timers
                .insert(CoordinatorTimer::Session(member.clone()), deadline);
        }
    }

    fn rebalance_timeout_ms(&self) -> u64 {
        self.members
            .values()
            .map(|m| m.rebalance_timeout_ms)
            .max()
            .unwrap_or(0)
    }

    fn finish_load(&mut self, now_ms: u64) {
        let GroupState::Loading { assignment } =
            std::mem::replace(&mut self.state, GroupState::Empty)
        else {
            return;
        };
        if self.members.is_empty() {
            self.leader = None;
            return;
        }
        let ids: Vec<MemberId> = self.members.keys().cloned().collect();
        for id in &ids {
            self.arm_session(now_ms, id);
        }
        match assignment {
            Some(assignment) => self.state = GroupState::Stable { assignment },
            // The generation was written but the leader's assignment was not: the sync phase
            // was cut short, so no member can have its assignment. Start over.
            None => self.start_rebalance(now_ms),
        }
    }

    fn start_rebalance(&mut self, now_ms: u64) {
        if let GroupState::AwaitingSync { synced } = &self.state {
            let synced: Vec<MemberId> = synced.iter().cloned().collect();
            for m in synced {
                let response = Response::SyncGroup {
                    epoch: self.epoch,
                    generation: self.generation,
                    result: Err(ErrorCode::RebalanceInProgress),
                };
                self.transmit.push_back((m, response));
            }
        }
        self.timers.remove(&CoordinatorTimer::Sync);
        self.state = GroupState::PreparingRebalance {
            joined: BTreeSet::new(),
        };
        let deadline = now_ms.saturating_add(self.rebalance_timeout_ms());
        self.timers.insert(CoordinatorTimer::Join, deadline);
    }

    fn become_empty(&mut self) {
        self.timers.remove(&CoordinatorTimer::Join);
        self.timers.remove(&CoordinatorTimer::Sync);
        self.state = GroupState::Empty;
        self.leader = None;
        self.write(GroupRecord::Empty {
            generation: self.generation,
        });
    }

    fn join(&mut self, now_ms: u64, member_id: MemberId, member: GroupMember) {
        self.members.insert(member_id.clone(), member);
        if self.leader.is_none() {
            self.leader = Some(member_id.clone());
        }
        if !matches!(self.state, GroupState::PreparingRebalance { .. }) {
            self.start_rebalance(now_ms);
        } else {
            // A new member may raise the largest rebalance timeout; the deadline never shrinks.
            let deadline = now_ms.saturating_add(self.rebalance_timeout_ms());
            let join = self
                .timers
                .entry(CoordinatorTimer::Join)
                .or_insert(deadline);
            *join = (*join).max(deadline);
        }
        // Until the phase completes the member waits on its JoinGroup, not heartbeating: the
        // join deadline, not its session, bounds it.
        self.timers
            .remove(&CoordinatorTimer::Session(member_id.clone()));
        if let GroupState::PreparingRebalance { joined } = &mut self.state {
            joined.insert(member_id);
        }
        self.maybe_complete_join(now_ms);
    }

    fn maybe_complete_join(&mut self, now_ms: u64) {
        if let GroupState::PreparingRebalance { joined } = &self.state
            && self.members.keys().all(|m| joined.contains(m))
        {
            self.complete_join(now_ms);
        }
    }

    fn complete_join(&mut self, now_ms: u64) {
        let GroupState::PreparingRebalance { joined } = &self.state else {
            return;
        };
        let joined = joined.clone();
        self.timers.remove(&CoordinatorTimer::Join);
        let gone: Vec<MemberId> = self
            .members
            .keys()
            .filter(|m| !joined.contains(*m))
            .cloned()
            .collect();
        for m in gone {
            self.members.remove(&m);
            self.timers.remove(&CoordinatorTimer::Session(m));
        }
        if self.members.is_empty() {
            self.become_empty();
            return;
        }
        self.generation = self.generation.next();
        let leader = match &self.leader {
            Some(l) if self.members.contains_key(l) => l.clone(),
            _ => match self.members.keys().next() {
                Some(first) => first.clone(),
                None => return,
            },
        };
        self.leader = Some(leader.clone());
        self.write(GroupRecord::Generation {
            generation: self.generation,
            leader: leader.clone(),
            members: self.members.clone(),
        });
        let all: BTreeMap<MemberId, Vec<u8>> = self
            .members
            .iter()
            .map(|(id, m)| (id.clone(), m.metadata.clone()))
            .collect();
        let ids: Vec<MemberId> = self.members.keys().cloned().collect();
        for id in &ids {
            let members = if *id == leader {
                all.clone()
            } else {
                BTreeMap::new()
            };
            let response = Response::JoinGroup {
                epoch: self.epoch,
                result: Ok(JoinGroupOk {
                    generation: self.generation,
                    leader: leader.clone(),
                    members,
                }),
            };
            self.transmit.push_back((id.clone(), response));
            self.arm_session(now_ms, id);
        }
        self.state = GroupState::AwaitingSync {
            synced: BTreeSet::new(),
        };
        if !fault_on!(self.config, NoSyncTimeout) {
            let deadline = now_ms.saturating_add(self.rebalance_timeout_ms());
            self.timers.insert(CoordinatorTimer::Sync, deadline);
        }
    }

    fn sync(
        &mut self,
        now_ms: u64,
        from: MemberId,
        generation: Generation,
        member_id: MemberId,
        assignments: BTreeMap<MemberId, Vec<u8>>,
    ) {
        let epoch = self.epoch;
        let reply = |result| Response::SyncGroup {
            epoch,
            generation,
            result,
        };
        if !self.members.contains_key(&member_id) {
            self.transmit
                .push_back((from, reply(Err(ErrorCode::UnknownMemberId))));
            return;
        }
        if generation != self.generation {
            self.transmit
                .push_back((from, reply(Err(ErrorCode::IllegalGeneration))));
            return;
        }
        match &mut self.state {
            GroupState::AwaitingSync { synced } => {
                synced.insert(member_id.clone());
                if self.leader.as_ref() != Some(&member_id) {
                    self.arm_session(now_ms, &member_id);
                    return;
                }
                let synced = std::mem::take(synced);
                let assignment: BTreeMap<MemberId, Vec<u8>> = self
                    .members
                    .keys()
                    .map(|m| (m.clone(), assignments.get(m).cloned().unwrap_or_default()))
                    .collect();
                self.write(GroupRecord::Assignment {
                    generation,
                    assignment: assignment.clone(),
                });
                self.timers.remove(&CoordinatorTimer::Sync);
                for m in synced {
                    let bytes = assignment.get(&m).cloned().unwrap_or_default();
                    let to = if m == member_id {
                        from.clone()
                    } else {
                        m.clone()
                    };
                    self.transmit.push_back((to, reply(Ok(bytes))));
                    self.arm_session(now_ms, &m);
                }
                self.state = GroupState::Stable { assignment };
            }
            GroupState::Stable { assignment } => {
                let bytes = assignment.get(&member_id).cloned().unwrap_or_default();
                self.transmit.push_back((from, reply(Ok(bytes))));
                self.arm_session(now_ms, &member_id);
            }
            _ => self
                .transmit
                .push_back((from, reply(Err(ErrorCode::RebalanceInProgress)))),
        }
    }

    fn heartbeat(
        &mut self,
        now_ms: u64,
        generation: Generation,
        member_id: &MemberId,
    ) -> Result<(), ErrorCode> {
        if !self.members.contains_key(member_id) {
            return Err(ErrorCode::UnknownMemberId);
        }
        if generation != self.generation {
            return Err(ErrorCode::IllegalGeneration);
        }
        match &self.state {
            GroupState::PreparingRebalance { joined } => {
                if !joined.contains(member_id) {
                    self.arm_session(now_ms, member_id);
                }
                Err(ErrorCode::RebalanceInProgress)
            }
            GroupState::AwaitingSync { .. } | GroupState::Stable { .. } => {
                self.arm_session(now_ms, member_id);
                Ok(())
            }
            _ => Err(ErrorCode::UnknownMemberId),
        }
    }

    fn leave(&mut self, now_ms: u64, member_id: &MemberId) -> Result<(), ErrorCode> {
        if !self.members.contains_key(member_id) {
            return Err(ErrorCode::UnknownMemberId);
        }
        self.remove_member(now_ms, member_id);
        Ok(())
    }

    fn remove_member(&mut self, now_ms: u64, member_id: &MemberId) {
        if self.members.remove(member_id).is_none() {
            return;
        }
        self.timers
            .remove(&CoordinatorTimer::Session(member_id.clone()));
        match &mut self.state {
            GroupState::PreparingRebalance { joined } => {
                joined.remove(member_id);
                if self.members.is_empty() {
                    self.become_empty();
                } else {
                    self.maybe_complete_join(now_ms);
                }
            }
            GroupState::AwaitingSync { synced } => {
                synced.remove(member_id);
                if self.members.is_empty() {
                    self.become_empty();
                } else {
                    self.start_rebalance(now_ms);
                }
            }
            GroupState::Stable { .. } => {
                if self.members.is_empty() {
                    self.become_empty();
                } else {
                    self.start_rebalance(now_ms);
                }
            }
            GroupState::Empty | GroupState::Loading { .. } | GroupState::Dead => {}
        }
    }

    fn sync_expired(&mut self, now_ms: u64) {
        let GroupState::AwaitingSync { synced } = &self.state else {
            return;
        };
        let synced = synced.clone();
        let gone: Vec<MemberId> = self
            .members
            .keys()
            .filter(|m| !synced.contains(*m))
            .cloned()
            .collect();
        for m in gone {
            self.members.remove(&m);
            self.timers.remove(&CoordinatorTimer::Session(m));
        }
        if self.members.is_empty() {
            self.become_empty();
        } else {
            self.start_rebalance(now_ms);
        }
    }

    fn commit(
        &mut self,
        generation: Generation,
        member_id: &MemberId,
        partition: &TopicPartition,
        offset: i64,
    ) -> Result<(), ErrorCode> {
        if !self.members.contains_key(member_id) {
            return Err(ErrorCode::UnknownMemberId);
        }
        if generation != self.generation {
            return Err(ErrorCode::IllegalGeneration);
        }
        if let GroupState::AwaitingSync { .. } = self.state {
            return Err(ErrorCode::RebalanceInProgress);
        }
        self.offsets.insert(partition.clone(), offset);
        self.write(GroupRecord::Offset {
            partition: partition.clone(),
            offset,
        });
        Ok(())
    }
}
