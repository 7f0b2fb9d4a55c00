//! The model's state and actions.

use std::collections::BTreeSet;
use std::fmt;

use rebalance::protocol::{Coordinator, CoordinatorTimer, GroupRecord, Member, MemberTimer};
use rebalance::{Generation, MemberId, TopicPartition};
use serde::{Deserialize, Serialize};

use crate::config::DisruptionKind;
use crate::memo::CoordinatorMemo;
use crate::network::{Direction, Network};
use crate::shared::Shared;

/// What a member slot's process is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum SlotStatus {
    /// Not started yet (a later `join` disruption starts it).
    Unstarted,
    /// Running and connected.
    Live,
    /// Running but cut off from the coordinator for good.
    Isolated,
    /// Crashed (no restart).
    Crashed,
    /// Left the group gracefully and exited.
    Left,
}

/// One member position. A bounce keeps the slot and starts a new incarnation (a new id).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Slot {
    /// The process's status.
    pub status: SlotStatus,
    /// How many times this slot was bounced (its id's suffix).
    pub incarnation: u8,
    /// The running member, while `Live` or `Isolated`. Shared between a state and its
    /// successors until a step changes it (copy on write, hash cached), so a step copies and
    /// re-hashes only what it touches.
    pub member: Option<Shared<Member>>,
    /// Bitmask of the topics (`t0` = bit 0) this member subscribes to.
    pub topics: u8,
    /// What the previous incarnation consumed when it was bounced, until the new one has it all
    /// back (for the "bounce gets its partitions back" example).
    pub bounced_from: Option<BTreeSet<TopicPartition>>,
    /// Its application thread hangs for good (a `stall` disruption): only its heartbeat thread
    /// works, it consumes nothing.
    pub stalled: bool,
}

impl Slot {
    /// Whether a process runs in this slot (connected or not).
    #[must_use]
    pub fn running(&self) -> Option<&Member> {
        match self.status {
            SlotStatus::Live | SlotStatus::Isolated => self.member.as_deref(),
            _ => None,
        }
    }

    /// Whether the process runs and is connected.
    #[must_use]
    pub fn connected(&self) -> Option<&Member> {
        match self.status {
            SlotStatus::Live => self.member.as_deref(),
            _ => None,
        }
    }
}

/// The member id of a slot's incarnation: `m0`, `m1`, ..., and `m0r1`, `m0r2`, ... after
/// bounces.
#[must_use]
pub fn member_id(slot: usize, incarnation: u8) -> MemberId {
    if incarnation == 0 {
        MemberId(format!("m{slot}"))
    } else {
        MemberId(format!("m{slot}r{incarnation}"))
    }
}

/// Whether `id` is [`member_id`]`(slot, incarnation)`, without building it (the model asks this
/// for every message it routes).
#[must_use]
pub fn is_member_id(id: &MemberId, slot: usize, incarnation: u8) -> bool {
    let Some(rest) = id.as_str().strip_prefix('m') else {
        return false;
    };
    let (slot_text, incarnation_text) = match rest.split_once('r') {
        Some((s, i)) => (s, Some(i)),
        None => (rest, None),
    };
    let number_is = |text: &str, n: usize| {
        !text.is_empty()
            && text.bytes().all(|b| b.is_ascii_digit())
            && (text == "0" || !text.starts_with('0'))
            && text.parse::<usize>().is_ok_and(|v| v == n)
    };
    number_is(slot_text, slot)
        && match incarnation_text {
            None => incarnation == 0,
            Some(text) => incarnation != 0 && number_is(text, usize::from(incarnation)),
        }
}

/// One-step notes: what the last step did, for the properties that look at a transition rather
/// than a state. Reset at every step.
pub mod note {
    /// The step accepted an offset commit.
    pub const COMMIT_ACCEPTED: u32 = 1 << 8;
    /// The step accepted an offset commit from a member that does not own the partition in the
    /// committing generation (a violation).
    pub const COMMIT_FROM_NON_OWNER: u32 = 1 << 9;
    /// A generation went back in this step (a violation).
    pub const GENERATION_BACK: u32 = 1 << 10;
    /// A member was told of a scheduled rebalance with a positive delay.
    pub const DEFERRED_DELAY: u32 = 1 << 11;
    /// A bounced member's new incarnation consumes everything the old one did.
    pub const BOUNCE_REGAINED: u32 = 1 << 12;
    /// A coordinator failover happened during a join or sync phase.
    pub const FAILOVER_MID_REBALANCE: u32 = 1 << 13;
    /// A recovered coordinator finished loading with a generation of at least 1.
    pub const GENERATION_SURVIVED_FAILOVER: u32 = 1 << 14;
    /// A running member stopped partitions without a commit (fenced or cut off) in this step.
    pub const ASSIGNMENT_LOST: u32 = 1 << 15;
    /// A connected member lost its assignment while the stable coordinator still counts it in
    /// the generation that assignment belongs to (a violation).
    pub const ASSIGNMENT_LOST_IN_STABLE_GENERATION: u32 = 1 << 16;
    // Bits 0..8 hold the disruption kind of the step (`DisruptionKind::bit`).
}

/// The whole system: coordinator, durable log, members, network and budgets.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ModelState {
    /// The current coordinator epoch (copy on write, like [`Slot::member`], with a memo of
    /// facts the checker asks of it in many states).
    pub coordinator: Shared<Coordinator, CoordinatorMemo>,
    /// The durable log, compacted (see [`crate::model::compact_log`]; copy on write).
    pub log: Shared<Vec<GroupRecord>>,
    /// Member slots.
    pub slots: Vec<Slot>,
    /// Messages in flight.
    pub network: Network,
    /// Disruptions used so far.
    pub disruptions_used: u8,
    /// Network faults (drops, duplications) used so far.
    pub network_faults_used: u8,
    /// The highest coordinator generation seen so far.
    pub max_generation: Generation,
    /// Notes on the last step (see [`note`]).
    pub note: u32,
    /// The model's clock. It starts at [`crate::NOW_MS`] and moves only when a member's
    /// scheduled rejoin fires: to that timer's deadline, since the scheduled delay has then
    /// passed for everyone. Other timers fire at any moment the rules allow without moving it,
    /// so re-arming them gives an equal state.
    pub clock_ms: u64,
}

impl ModelState {
    /// The slot running the member with this id, if it runs.
    #[must_use]
    pub fn slot_of(&self, id: &MemberId) -> Option<usize> {
        self.slots
            .iter()
            .enumerate()
            .position(|(i, s)| s.running().is_some() && is_member_id(id, i, s.incarnation))
    }

    /// The running members with their slot index.
    pub fn running(&self) -> impl Iterator<Item = (usize, &Member)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.running().map(|m| (i, m)))
    }

    /// Whether the step noted `bit`.
    #[must_use]
    pub fn noted(&self, bit: u32) -> bool {
        self.note & bit != 0
    }
}

/// A disruption, with the slot it hits.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Disruption {
    /// Slot starts and joins.
    Join(usize),
    /// Slot leaves gracefully.
    Leave(usize),
    /// Slot crashes.
    Crash(usize),
    /// Slot crashes and restarts under a new id.
    Bounce(usize),
    /// Slot is cut off for good.
    Isolate(usize),
    /// A cut-off slot reconnects (only with the `isolation_permanent` rule off).
    Reconnect(usize),
    /// The leader (this slot) leaves mid-rebalance.
    LeaderLeaves(usize),
    /// The coordinator fails over to a new epoch.
    Failover,
    /// Slot toggles its subscription to the last topic.
    Subscribe(usize),
    /// Slot's application thread hangs for good; its heartbeats go on.
    Stall(usize),
}

impl Disruption {
    /// Its kind.
    #[must_use]
    pub fn kind(&self) -> DisruptionKind {
        match self {
            Disruption::Join(_) => DisruptionKind::Join,
            Disruption::Leave(_) => DisruptionKind::Leave,
            Disruption::Crash(_) => DisruptionKind::Crash,
            Disruption::Bounce(_) => DisruptionKind::Bounce,
            Disruption::Isolate(_) | Disruption::Reconnect(_) => DisruptionKind::Isolate,
            Disruption::LeaderLeaves(_) => DisruptionKind::Leader,
            Disruption::Failover => DisruptionKind::Failover,
            Disruption::Subscribe(_) => DisruptionKind::Subscribe,
            Disruption::Stall(_) => DisruptionKind::Stall,
        }
    }
}

/// A coordinator timer, in serialisable form.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CoordTimer {
    /// Loading finished.
    Load,
    /// Join phase deadline.
    Join,
    /// Sync phase deadline.
    Sync,
    /// A member's session expired.
    Session(MemberId),
}

impl From<&CoordinatorTimer> for CoordTimer {
    fn from(t: &CoordinatorTimer) -> Self {
        match t {
            CoordinatorTimer::Load => CoordTimer::Load,
            CoordinatorTimer::Join => CoordTimer::Join,
            CoordinatorTimer::Sync => CoordTimer::Sync,
            CoordinatorTimer::Session(m) => CoordTimer::Session(m.clone()),
        }
    }
}

impl From<&CoordTimer> for CoordinatorTimer {
    fn from(t: &CoordTimer) -> Self {
        match t {
            CoordTimer::Load => CoordinatorTimer::Load,
            CoordTimer::Join => CoordinatorTimer::Join,
            CoordTimer::Sync => CoordinatorTimer::Sync,
            CoordTimer::Session(m) => CoordinatorTimer::Session(m.clone()),
        }
    }
}

/// A member timer, in serialisable form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemTimer {
    /// Send a heartbeat.
    Heartbeat,
    /// The member's own session timeout.
    Session,
    /// The member's rejoin took too long.
    Rebalance,
    /// A scheduled (deferred) rebalance is due.
    ScheduledRejoin,
    /// Retry after an error.
    Retry,
}

/// A model action.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Deliver the `index`-th message of the channel of `member` in direction `direction`.
    Deliver {
        /// Far end of the channel.
        member: MemberId,
        /// Direction.
        direction: Direction,
        /// Position in the channel (0 on an ordered network).
        index: usize,
    },
    /// The network drops that message.
    Drop {
        /// Far end of the channel.
        member: MemberId,
        /// Direction.
        direction: Direction,
        /// Position in the channel.
        index: usize,
    },
    /// The network delivers that message and keeps a copy for a second delivery.
    Duplicate {
        /// Far end of the channel.
        member: MemberId,
        /// Direction.
        direction: Direction,
        /// Position in the channel.
        index: usize,
    },
    /// Fire an armed coordinator timer.
    CoordinatorTimer(CoordTimer),
    /// Fire an armed timer of the member in `slot`.
    MemberTimer {
        /// The member's slot.
        slot: usize,
        /// The timer.
        timer: MemTimer,
    },
    /// A disruption (costs one unit of the budget).
    Disrupt(Disruption),
}

impl Action {
    /// Whether fairness applies: deliveries and timers must eventually happen when enabled;
    /// disruptions and network faults need not.
    #[must_use]
    pub fn is_fair(&self) -> bool {
        matches!(
            self,
            Action::Deliver { .. } | Action::CoordinatorTimer(_) | Action::MemberTimer { .. }
        )
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Deliver {
                member,
                direction,
                index,
            } => {
                let arrow = match direction {
                    Direction::ToCoordinator => format!("{member} -> coordinator"),
                    Direction::ToMember => format!("coordinator -> {member}"),
                };
                if *index == 0 {
                    write!(f, "deliver {arrow}")
                } else {
                    write!(f, "deliver {arrow} (message #{index})")
                }
            }
            Action::Drop {
                member, direction, ..
            } => write!(f, "network drops a message ({member}, {direction:?})"),
            Action::Duplicate {
                member, direction, ..
            } => write!(f, "network duplicates a message ({member}, {direction:?})"),
            Action::CoordinatorTimer(t) => write!(f, "coordinator timer {t:?} fires"),
            Action::MemberTimer { slot, timer } => write!(f, "slot {slot}: timer {timer:?} fires"),
            Action::Disrupt(d) => write!(f, "disruption: {d:?}"),
        }
    }
}

/// Converts the model's member timer to the core's.
#[must_use]
pub fn core_member_timer(t: MemTimer) -> MemberTimer {
    match t {
        MemTimer::Heartbeat => MemberTimer::Heartbeat,
        MemTimer::Session => MemberTimer::Session,
        MemTimer::Rebalance => MemberTimer::Rebalance,
        MemTimer::ScheduledRejoin => MemberTimer::ScheduledRejoin,
        MemTimer::Retry => MemberTimer::Retry,
    }
}

/// Converts the core's member timer to the model's.
#[must_use]
pub fn model_member_timer(t: &MemberTimer) -> MemTimer {
    match t {
        MemberTimer::Heartbeat => MemTimer::Heartbeat,
        MemberTimer::Session => MemTimer::Session,
        MemberTimer::Rebalance => MemTimer::Rebalance,
        MemberTimer::ScheduledRejoin => MemTimer::ScheduledRejoin,
        MemberTimer::Retry => MemTimer::Retry,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_member_id_agrees_with_member_id() {
        for slot in 0..12 {
            for incarnation in 0..4 {
                let id = member_id(slot, incarnation);
                for s in 0..12 {
                    for i in 0..4 {
                        assert_eq!(is_member_id(&id, s, i), s == slot && i == incarnation);
                    }
                }
            }
        }
        for bad in [
            "", "m", "x0", "m01", "m0r", "m0r0", "m0r01", "m+1", "m1r+1", "m1rr1",
        ] {
            assert!(!is_member_id(&MemberId::from(bad), 0, 0), "{bad}");
            assert!(!is_member_id(&MemberId::from(bad), 1, 1), "{bad}");
        }
    }
}
