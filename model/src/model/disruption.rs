//! Disruptions: which ones the budget and the enabled kinds allow in a state, and what each
//! does to the members, the network and the coordinator.

use rebalance::protocol::{Coordinator, ErrorCode, GroupState, Response};
use rebalance::{CoordinatorEpoch, MemberId};

use super::RebalanceModel;
use crate::config::DisruptionKind;
use crate::network::{Direction, Payload};
use crate::shared::Shared;
use crate::state::{Action, Disruption, ModelState, SlotStatus, note};

impl RebalanceModel {
    pub(super) fn disruptions(&self, state: &ModelState, out: &mut Vec<Action>) {
        if state.disruptions_used >= self.config.disruptions {
            return;
        }
        let kinds = &self.config.kinds;
        let on = |k| kinds.contains(&k);
        if on(DisruptionKind::Join)
            && let Some(slot) = state
                .slots
                .iter()
                .position(|s| s.status == SlotStatus::Unstarted)
        {
            out.push(Action::Disrupt(Disruption::Join(slot)));
        }
        for (slot, s) in state.slots.iter().enumerate() {
            if s.status != SlotStatus::Live {
                continue;
            }
            if on(DisruptionKind::Stall) && !s.stalled {
                out.push(Action::Disrupt(Disruption::Stall(slot)));
            }
            // Leaving and resubscribing are the hung application thread's work.
            if on(DisruptionKind::Leave) && !s.stalled {
                out.push(Action::Disrupt(Disruption::Leave(slot)));
            }
            if on(DisruptionKind::Crash) {
                out.push(Action::Disrupt(Disruption::Crash(slot)));
            }
            if on(DisruptionKind::Bounce) {
                out.push(Action::Disrupt(Disruption::Bounce(slot)));
            }
            if on(DisruptionKind::Isolate) {
                out.push(Action::Disrupt(Disruption::Isolate(slot)));
            }
            if on(DisruptionKind::Subscribe) && !s.stalled {
                out.push(Action::Disrupt(Disruption::Subscribe(slot)));
            }
        }
        if on(DisruptionKind::Isolate) && !self.config.rules.isolation_permanent {
            for (slot, s) in state.slots.iter().enumerate() {
                if s.status == SlotStatus::Isolated {
                    out.push(Action::Disrupt(Disruption::Reconnect(slot)));
                }
            }
        }
        if on(DisruptionKind::Leader)
            && matches!(
                state.coordinator.state(),
                GroupState::PreparingRebalance { .. } | GroupState::AwaitingSync { .. }
            )
            && let Some(leader) = state.coordinator.leader()
            && let Some(slot) = state.slot_of(leader)
            && state.slots[slot].status == SlotStatus::Live
            && !state.slots[slot].stalled
        {
            out.push(Action::Disrupt(Disruption::LeaderLeaves(slot)));
        }
        if on(DisruptionKind::Failover) {
            out.push(Action::Disrupt(Disruption::Failover));
        }
    }

    pub(super) fn disrupt(&self, state: &mut ModelState, disruption: &Disruption) {
        let clock_ms = state.clock_ms;
        state.disruptions_used += 1;
        // The note's kind bits (0..8) are all taken and bit 8 is a step note: the stall example
        // reads the slot's flag instead.
        if disruption.kind() != DisruptionKind::Stall {
            state.note |= u32::from(disruption.kind().bit());
        }
        match *disruption {
            Disruption::Join(slot) => {
                let s = &mut state.slots[slot];
                s.status = SlotStatus::Live;
                s.member = Some(Shared::new(self.new_member(
                    clock_ms,
                    slot,
                    s.incarnation,
                    s.topics,
                )));
            }
            Disruption::Leave(slot) | Disruption::LeaderLeaves(slot) => {
                if let Some(m) = state.slots[slot].member.as_mut() {
                    m.make_mut().leave(clock_ms);
                }
                self.pump(state);
                let id = Self::slot_member_id(state, slot).into_owned();
                state.network.purge(&(id, Direction::ToMember));
                let s = &mut state.slots[slot];
                s.status = SlotStatus::Left;
                s.member = None;
            }
            Disruption::Crash(slot) => {
                let id = Self::slot_member_id(state, slot).into_owned();
                state.network.purge(&(id, Direction::ToMember));
                let s = &mut state.slots[slot];
                s.status = SlotStatus::Crashed;
                s.member = None;
            }
            Disruption::Bounce(slot) => {
                let id = Self::slot_member_id(state, slot).into_owned();
                state.network.purge(&(id, Direction::ToMember));
                let s = &mut state.slots[slot];
                let before = s
                    .member
                    .as_ref()
                    .map(|m| m.consuming().clone())
                    .unwrap_or_default();
                s.incarnation += 1;
                s.bounced_from = Some(before);
                s.member = Some(Shared::new(self.new_member(
                    clock_ms,
                    slot,
                    s.incarnation,
                    s.topics,
                )));
            }
            Disruption::Isolate(slot) => {
                let id = Self::slot_member_id(state, slot).into_owned();
                state.network.purge(&(id.clone(), Direction::ToMember));
                state.network.purge(&(id, Direction::ToCoordinator));
                state.slots[slot].status = SlotStatus::Isolated;
            }
            Disruption::Reconnect(slot) => {
                // From now on its requests reach the coordinator and responses reach it again.
                state.slots[slot].status = SlotStatus::Live;
            }
            Disruption::Failover => {
                if matches!(
                    state.coordinator.state(),
                    GroupState::PreparingRebalance { .. } | GroupState::AwaitingSync { .. }
                ) {
                    state.note |= note::FAILOVER_MID_REBALANCE;
                }
                // The crash closes the old coordinator's connections: a member whose JoinGroup
                // or SyncGroup it was holding sees the disconnect, which a client reports as
                // NotCoordinator from that epoch (and then looks for the coordinator again).
                let old = &state.coordinator;
                let (old_epoch, old_generation) = (old.epoch(), old.generation());
                let disconnected: Vec<(MemberId, Response)> = match old.state() {
                    GroupState::PreparingRebalance { joined } => joined
                        .iter()
                        .map(|m| {
                            let r = Response::JoinGroup {
                                epoch: old_epoch,
                                result: Err(ErrorCode::NotCoordinator),
                            };
                            (m.clone(), r)
                        })
                        .collect(),
                    GroupState::AwaitingSync { synced } => synced
                        .iter()
                        .map(|m| {
                            let r = Response::SyncGroup {
                                epoch: old_epoch,
                                generation: old_generation,
                                result: Err(ErrorCode::NotCoordinator),
                            };
                            (m.clone(), r)
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                for (m, r) in disconnected {
                    if state
                        .slot_of(&m)
                        .is_some_and(|s| state.slots[s].status == SlotStatus::Live)
                    {
                        state
                            .network
                            .send((m, Direction::ToMember), Payload::Response(r));
                    }
                }
                let epoch = CoordinatorEpoch(old_epoch.0 + 1);
                state.coordinator = Shared::new(Coordinator::recover(
                    epoch,
                    self.coordinator_config(),
                    &state.log,
                    state.clock_ms,
                ));
            }
            Disruption::Stall(slot) => {
                // Answers already on their way to it are dropped, but for its heartbeat
                // thread's: the hung application thread never reads them, and dropping them
                // rather than leaving them undelivered keeps an ordered channel open for the
                // heartbeat answers (the stall is for good, so nothing else can tell).
                let id = Self::slot_member_id(state, slot).into_owned();
                let channel = (id, Direction::ToMember);
                let mut kept = Vec::new();
                while let Some(p) = state.network.take(&channel.0, channel.1, 0) {
                    if matches!(p, Payload::Response(Response::Heartbeat { .. })) {
                        kept.push(p);
                    }
                }
                state.network.purge(&channel);
                for p in kept {
                    state.network.send(channel.clone(), p);
                }
                state.slots[slot].stalled = true;
            }
            Disruption::Subscribe(slot) => {
                let last = 1u8 << (self.config.topics - 1);
                let s = &mut state.slots[slot];
                s.topics ^= last;
                let topics = self.topics_of(s.topics);
                if let Some(m) = s.member.as_mut() {
                    m.make_mut().subscribe(clock_ms, topics);
                }
            }
        }
    }
}
