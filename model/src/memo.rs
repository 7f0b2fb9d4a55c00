//! [`CoordinatorMemo`]: facts about one coordinator value that many states ask for, computed
//! once per value.
//!
//! A coordinator value is shared by every state between two coordinator steps (members'
//! steps leave it alone), and the checker asks the same questions of each of those states: the
//! properties on its stored assignment (decoding every member's bytes) and, for each armed
//! timer, which members firing it would drop (a probe on a copy of the coordinator).
//!
//! Equal coordinator values reached along different paths are interned
//! ([`intern_coordinator`]), so the memo of one value serves every state that holds it.
//!
//! Why this is sound: each fact is a pure function of the coordinator value and of the inputs
//! recorded with it (the assignment format; the clock and the timer), the memo lives inside the
//! [`Shared`] that holds the value and is reset whenever the value
//! changes, and a lookup whose inputs differ from the recorded ones computes afresh.

use std::sync::{Mutex, OnceLock, PoisonError};

use rebalance::MemberId;
use rebalance::protocol::embedded::AssignmentFormat;
use rebalance::protocol::{Coordinator, CoordinatorTimer};

use crate::shared::{PrehashedMap, Shared};

/// The properties of a coordinator's stored assignment, for one assignment format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AssignmentFacts {
    /// No partition is given to two members (see [`crate::properties::ASSIGNMENT_EXCLUSIVE`]).
    pub exclusive: bool,
    /// At least two members are given partitions (the example paired with it).
    pub shared_out: bool,
}

/// What firing one coordinator timer at one clock would drop.
#[derive(Debug)]
struct Removal {
    clock_ms: u64,
    timer: CoordinatorTimer,
    removed: Vec<MemberId>,
}

/// The memo of one coordinator value (see the module docs). Empty when the value is new or
/// changed.
#[derive(Debug, Default)]
pub struct CoordinatorMemo {
    assignment: OnceLock<(AssignmentFormat, AssignmentFacts)>,
    removals: Mutex<Vec<Removal>>,
}

impl CoordinatorMemo {
    /// The facts of the stored assignment read in `format`: `compute`'s answer, computed at
    /// most once per value and format.
    pub fn assignment_facts(
        &self,
        format: AssignmentFormat,
        compute: impl Fn() -> AssignmentFacts,
    ) -> AssignmentFacts {
        let (cached_format, facts) = self.assignment.get_or_init(|| (format, compute()));
        if *cached_format == format {
            *facts
        } else {
            // Another format than the recorded one (not within one model): not cached.
            compute()
        }
    }

    /// Calls `answer` with the members that firing `timer` at `clock_ms` drops: `removed`'s
    /// answer, computed at most once per value, timer and clock.
    pub fn with_removed<R>(
        &self,
        clock_ms: u64,
        timer: &CoordinatorTimer,
        removed: impl FnOnce() -> Vec<MemberId>,
        answer: impl FnOnce(&[MemberId]) -> R,
    ) -> R {
        {
            let removals = self.removals.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(r) = removals
                .iter()
                .find(|r| r.clock_ms == clock_ms && r.timer == *timer)
            {
                return answer(&r.removed);
            }
        }
        // Computed without the lock: `removed` may take a while and other threads may ask too
        // (they compute the same answer; the first one stored wins, all are equal).
        let ids = removed();
        let result = answer(&ids);
        let mut removals = self.removals.lock().unwrap_or_else(PoisonError::into_inner);
        if !removals
            .iter()
            .any(|r| r.clock_ms == clock_ms && r.timer == *timer)
        {
            removals.push(Removal {
                clock_ms,
                timer: timer.clone(),
                removed: ids,
            });
        }
        result
    }
}

/// Most coordinator values the interning table of one thread holds before it starts afresh.
const INTERNED_MAX: usize = 1 << 16;

thread_local! {
    /// Coordinator values seen by this thread, by hash: equal values reached along different
    /// paths share one [`Shared`], and with it one memo.
    static INTERNED: std::cell::RefCell<PrehashedMap<Shared<Coordinator, CoordinatorMemo>>> =
        std::cell::RefCell::new(PrehashedMap::default());
}

/// Replaces `coordinator` by an equal value seen before in this thread, if there is one, so
/// that the facts already computed for that value are reused; else remembers it.
///
/// Sound because only an *equal* value replaces it (same hash, then compared), so the state
/// is unchanged; which of two equal values a state holds is invisible to everything but the
/// memo. The table is bounded ([`INTERNED_MAX`]) and per thread (no lock).
pub fn intern_coordinator(coordinator: &mut Shared<Coordinator, CoordinatorMemo>) {
    let hash = coordinator.value_hash();
    INTERNED.with(|table| {
        let mut table = table.borrow_mut();
        match table.get(&hash) {
            Some(known) if Shared::ptr_eq(known, coordinator) => {}
            Some(known) if known == coordinator => *coordinator = known.clone(),
            // A different value with the same 64-bit hash: keep the first, intern nothing.
            Some(_) => {}
            None => {
                if table.len() >= INTERNED_MAX {
                    table.clear();
                }
                table.insert(hash, coordinator.clone());
            }
        }
    });
}
