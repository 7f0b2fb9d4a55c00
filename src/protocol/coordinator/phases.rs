//! The coordinator's phase logic: joins, syncs, heartbeats, departures, commits and the
//! timers that end each phase.

use std::collections::{BTreeMap, BTreeSet};

use crate::ids::{Generation, MemberId, TopicPartition};
use crate::protocol::group::{GroupMember, GroupRecord, GroupState};
use crate::protocol::messages::{ErrorCode, JoinGroupOk, Request, Response};

use super::{Coordinator, CoordinatorTimer};

impl Coordinator {
    pub(super) fn reject(&self, request: &Request, code: ErrorCode) -> Response {
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

    pub(super) fn write(&mut self, record: GroupRecord) {
        if !fault_on!(self.config, NoPersistence) {
            self.persist.push_back(record);
        }
    }

    pub(super) fn arm_session(&mut self, now_ms: u64, member: &MemberId) {
        if let Some(m) = self.members.get(member) {
            let deadline = now_ms.saturating_add(m.session_timeout_ms);
            self.timers
                .insert(CoordinatorTimer::Session(member.clone()), deadline);
        }
    }

    pub(super) fn rebalance_timeout_ms(&self) -> u64 {
        self.members
            .values()
            .map(|m| m.rebalance_timeout_ms)
            .max()
            .unwrap_or(0)
    }

    pub(super) fn finish_load(&mut self, now_ms: u64) {
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

    pub(super) fn start_rebalance(&mut self, now_ms: u64) {
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

    pub(super) fn become_empty(&mut self) {
        self.timers.remove(&CoordinatorTimer::Join);
        self.timers.remove(&CoordinatorTimer::Sync);
        self.state = GroupState::Empty;
        self.leader = None;
        self.write(GroupRecord::Empty {
            generation: self.generation,
        });
    }

    pub(super) fn join(&mut self, now_ms: u64, member_id: MemberId, member: GroupMember) {
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

    pub(super) fn maybe_complete_join(&mut self, now_ms: u64) {
        if let GroupState::PreparingRebalance { joined } = &self.state
            && self.members.keys().all(|m| joined.contains(m))
        {
            self.complete_join(now_ms);
        }
    }

    /// Drops every member not in `keep`, with its session timer: the members that missed the
    /// join or the sync deadline.
    fn remove_members_not_in(&mut self, keep: &BTreeSet<MemberId>) {
        let gone: Vec<MemberId> = self
            .members
            .keys()
            .filter(|m| !keep.contains(*m))
            .cloned()
            .collect();
        for m in gone {
            self.members.remove(&m);
            self.timers.remove(&CoordinatorTimer::Session(m));
        }
    }

    pub(super) fn complete_join(&mut self, now_ms: u64) {
        let GroupState::PreparingRebalance { joined } = &self.state else {
            return;
        };
        let joined = joined.clone();
        self.timers.remove(&CoordinatorTimer::Join);
        self.remove_members_not_in(&joined);
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

    pub(super) fn sync(
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

    pub(super) fn heartbeat(
        &mut self,
        now_ms: u64,
        generation: Generation,
        member_id: &MemberId,
    ) -> Result<(), ErrorCode> {
        if !self.members.contains_key(member_id) {
            return Err(ErrorCode::UnknownMemberId);
        }
        if generation != self.generation {
            if fault_on!(self.config, HeartbeatKeepsSessionWhileAwaitingSync)
                && matches!(self.state, GroupState::AwaitingSync { .. })
            {
                self.arm_session(now_ms, member_id);
            }
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

    pub(super) fn leave(&mut self, now_ms: u64, member_id: &MemberId) -> Result<(), ErrorCode> {
        if !self.members.contains_key(member_id) {
            return Err(ErrorCode::UnknownMemberId);
        }
        self.remove_member(now_ms, member_id);
        Ok(())
    }

    pub(super) fn remove_member(&mut self, now_ms: u64, member_id: &MemberId) {
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

    pub(super) fn sync_expired(&mut self, now_ms: u64) {
        let GroupState::AwaitingSync { synced } = &self.state else {
            return;
        };
        let synced = synced.clone();
        self.remove_members_not_in(&synced);
        if self.members.is_empty() {
            self.become_empty();
        } else {
            self.start_rebalance(now_ms);
        }
    }

    pub(super) fn commit(
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
