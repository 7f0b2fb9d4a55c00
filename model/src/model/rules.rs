//! The timing rules ([`Rules`]) applied: which armed timers may fire in a state, and the
//! predicates they rest on (who is held, waiting forever, expirable, kept alive by heartbeats).

use std::borrow::Cow;

use rebalance::MemberId;
use rebalance::protocol::{
    Coordinator, CoordinatorTimer, GroupState, MemberState, MemberTimer, Request, Response,
};

use super::{HEARTBEAT_INTERVAL_MS, RebalanceModel};
use crate::config::Rules;
use crate::network::Payload;
use crate::state::{MemTimer, ModelState, SlotStatus, member_id};

impl RebalanceModel {
    /// The id of the member running in `slot` (whatever its status); borrowed from the running
    /// incarnation when there is one (the model asks this on hot paths), else formatted.
    #[must_use]
    pub fn slot_member_id(state: &ModelState, slot: usize) -> Cow<'_, MemberId> {
        let s = &state.slots[slot];
        match &s.member {
            // The running incarnation's config holds the same id: no formatting.
            Some(m) => Cow::Borrowed(m.id()),
            None => Cow::Owned(member_id(slot, s.incarnation)),
        }
    }

    /// Whether the coordinator holds a request of this member (a JoinGroup in the join phase,
    /// a SyncGroup in the sync phase) that it will answer later.
    #[must_use]
    pub fn held(state: &ModelState, id: &MemberId) -> bool {
        match state.coordinator.state() {
            GroupState::PreparingRebalance { joined } => joined.contains(id),
            GroupState::AwaitingSync { synced } => synced.contains(id),
            _ => false,
        }
    }

    /// Whether the member in `slot` can only wait: it is cut off, or nothing of its is in
    /// flight or held and no timer but its own timeouts is armed. Real time then passes for
    /// it, so its own session and rebalance timeouts may fire.
    #[must_use]
    pub fn waiting_forever(state: &ModelState, slot: usize) -> bool {
        let s = &state.slots[slot];
        let Some(member) = s.running() else {
            return false;
        };
        if s.status == SlotStatus::Isolated {
            return true;
        }
        let id = member.id();
        !state.network.has_traffic(id)
            && !Self::held(state, id)
            && member
                .timers()
                .all(|(t, _)| matches!(t, MemberTimer::Session | MemberTimer::Rebalance))
    }

    /// Whether the member in `slot` is connected and waits on a JoinGroup or SyncGroup that
    /// will never be answered: it is joining or awaiting sync, no retry of its own is pending,
    /// and none of its JoinGroup/SyncGroup requests or their answers is in flight or held by the
    /// coordinator (the network lost one). Real time then passes for that request, so the
    /// member's rebalance timer (its request timeout) may fire although its heartbeats go on.
    #[must_use]
    pub fn rebalance_request_lost(state: &ModelState, slot: usize) -> bool {
        let s = &state.slots[slot];
        let Some(member) = s.running() else {
            return false;
        };
        if s.status != SlotStatus::Live
            || !matches!(
                member.state(),
                MemberState::Joining | MemberState::AwaitingSync { .. }
            )
            || member.timers().any(|(t, _)| t == MemberTimer::Retry)
        {
            return false;
        }
        let id = Self::slot_member_id(state, slot);
        let rebalance_traffic = state.network.iter().any(|((to, _), p)| {
            *to == *id
                && matches!(
                    p,
                    Payload::Request(Request::JoinGroup { .. } | Request::SyncGroup { .. })
                        | Payload::Response(
                            Response::JoinGroup { .. } | Response::SyncGroup { .. }
                        )
                )
        });
        if rebalance_traffic || Self::held(state, &id) {
            return false;
        }
        // A heartbeat answer rescues the member first (its interval is far below the rebalance
        // timeout): `NotCoordinator` from a newer epoch sends it to rediscover, and an `Ok` while
        // it is joining tells it the coordinator does not hold its JoinGroup, so it resends.
        let c = &state.coordinator;
        let heartbeat_rescues = member.timers().any(|(t, _)| t == MemberTimer::Heartbeat)
            && (member.epoch() != Some(c.epoch())
                || (*member.state() == MemberState::Joining
                    && matches!(
                        c.state(),
                        GroupState::Stable { .. } | GroupState::AwaitingSync { .. }
                    )
                    && c.members().contains_key(&id)
                    && member.generation() == c.generation()));
        !heartbeat_rescues
    }

    /// Whether the coordinator may drop this member (session expiry, join or sync timeout)
    /// under the `evict_only_stopped` rule: its process is gone, or it can only wait and its
    /// own session/rebalance timers (shorter than the coordinator's view of its session) have
    /// already fired.
    #[must_use]
    pub fn expirable(state: &ModelState, id: &MemberId) -> bool {
        let Some(slot) = state.slot_of(id) else {
            return true;
        };
        let Some(member) = state.slots[slot].running() else {
            return true;
        };
        Self::waiting_forever(state, slot)
            && member
                .timers()
                .all(|(t, _)| !matches!(t, MemberTimer::Session | MemberTimer::Rebalance))
    }

    /// Whether the stalled member with this id keeps its session alive at the coordinator: its
    /// heartbeat thread still beats (its heartbeat timer is armed) and a heartbeat of its,
    /// arriving one interval later, would push the coordinator's session deadline for it out.
    /// Real time then never lets that session expire.
    #[must_use]
    pub fn heartbeats_keep_session(state: &ModelState, id: &MemberId) -> bool {
        let Some(member) = state
            .slot_of(id)
            .and_then(|slot| state.slots[slot].connected())
        else {
            return false;
        };
        let Some(epoch) = member.epoch() else {
            return false;
        };
        if !member.timers().any(|(t, _)| t == MemberTimer::Heartbeat) {
            return false;
        }
        let timer = CoordinatorTimer::Session(id.clone());
        let deadline = |c: &Coordinator| c.timers().find(|(t, _)| *t == timer).map(|(_, d)| d);
        let before = deadline(&state.coordinator);
        let mut probe = Coordinator::clone(&state.coordinator);
        probe.handle_request(
            state.clock_ms + HEARTBEAT_INTERVAL_MS,
            id.clone(),
            Request::Heartbeat {
                epoch,
                generation: member.generation(),
                member_id: id.clone(),
            },
        );
        before.is_some() && deadline(&probe) != before
    }

    /// Whether `timer` may drop the stalled member `id` under the `evict_only_stopped` rule: it
    /// consumes nothing, so the join and sync timeouts may, and so may its session expiry unless
    /// its heartbeats keep that session alive.
    pub(super) fn stalled_evictable(
        state: &ModelState,
        id: &MemberId,
        timer: &CoordinatorTimer,
    ) -> bool {
        let stalled = state
            .slot_of(id)
            .is_some_and(|slot| state.slots[slot].stalled);
        stalled
            && !(*timer == CoordinatorTimer::Session(id.clone())
                && Self::heartbeats_keep_session(state, id))
    }

    pub(super) fn coordinator_timer_allowed(
        &self,
        state: &ModelState,
        timer: &CoordinatorTimer,
    ) -> bool {
        if !self.config.rules.evict_only_stopped || *timer == CoordinatorTimer::Load {
            return true;
        }
        // A session expiry always removes its member first (the core's `remove_member`), so a
        // member that may not be dropped rules it out without probing a copy of the coordinator.
        if let CoordinatorTimer::Session(id) = timer
            && state.coordinator.members().contains_key(id)
            && !Self::expirable(state, id)
            && !Self::stalled_evictable(state, id, timer)
        {
            return false;
        }
        // Which members the timer drops depends on the coordinator and the clock only: asked
        // once per coordinator value (see `crate::memo`).
        let removed = || {
            let mut probe = Coordinator::clone(&state.coordinator);
            probe.handle_timer(state.clock_ms, timer.clone());
            state
                .coordinator
                .members()
                .keys()
                .filter(|id| !probe.members().contains_key(*id))
                .cloned()
                .collect()
        };
        state
            .coordinator
            .memo()
            .with_removed(state.clock_ms, timer, removed, |ids| {
                ids.iter().all(|id| {
                    Self::expirable(state, id) || Self::stalled_evictable(state, id, timer)
                })
            })
    }

    pub(super) fn member_timer_allowed(
        &self,
        state: &ModelState,
        slot: usize,
        timer: MemTimer,
    ) -> bool {
        // Only the heartbeat thread of a stalled member works; its other timers belong to the
        // hung application thread.
        if state.slots[slot].stalled && timer != MemTimer::Heartbeat {
            return false;
        }
        let rules: Rules = self.config.rules;
        match timer {
            MemTimer::Session => {
                !rules.member_timeouts_only_when_cut_off || Self::waiting_forever(state, slot)
            }
            MemTimer::Rebalance => {
                !rules.member_timeouts_only_when_cut_off
                    || Self::waiting_forever(state, slot)
                    || Self::rebalance_request_lost(state, slot)
            }
            MemTimer::Heartbeat | MemTimer::Retry => {
                let id = Self::slot_member_id(state, slot);
                !rules.resend_not_while_pending
                    || (!state.network.has_traffic(&id) && !Self::held(state, &id))
            }
            MemTimer::ScheduledRejoin => true,
        }
    }
}
