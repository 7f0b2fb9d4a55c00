//! The [`Repair`] of the homogeneous greedy used by the rack-aware path: a topic's extras are
//! accepted only when the deal can then align every left-over alignable partition, and chosen
//! members are exchanged to get there.
//!
//! With the extras fixed, the deal keeps each member's lowest keepable partitions up to its
//! count. Relative to nobody having the extra (the *base*), giving member m the extra either
//! keeps one more of its own partitions, the (f+1)-th lowest keepable one, when m has more than
//! f keepable ones (a *gaining* member: one fewer left-over partition, of that partition's
//! mask), or gives m one more place (one more unit of room in m's rack). So a topic's check is
//! a small flow on group and rack counts, and an exchange changes two counts.
//!
//! Two kinds of exchange, both keeping every member's total of extras:
//! - *within the topic*: a chosen member gives the extra to one that is not chosen and may
//!   take it (the greedy's eligibility);
//! - *across topics*, when that is not enough: member a gets this topic's extra instead of b,
//!   and b gets, in an earlier topic, the extra a had there. Both topics must still fit, and
//!   neither may lose a gaining cell to a non-gaining one.
//!
//! Nothing here decides optimality: the greedy checks its bound afterwards and the deal
//! checks every topic again; this only steers the heuristic towards choices that pass.

use super::super::components::{Component, LocalIndex};
use super::super::homogeneous::{Repair, TopicExtras};
use super::super::problem::Problem;
use super::super::racks::{insert_small, search_masks};
use super::transport::Transport;

/// The most exchanges tried for one topic before refusing.
const MAX_EXCHANGES: usize = 64;

/// How many members on each side an exchange considers.
const CANDIDATES: usize = 8;

/// How many earlier topics an exchange across topics looks at, latest first.
const EARLIER: usize = 256;

/// What one member's extra changes for the small flow.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Effect {
    /// It keeps one more of its own partitions: one fewer left over in this group.
    Keeps(usize),
    /// It has one more place, in this rack.
    Room(usize),
    /// Neither (its kept partition or its place cannot be aligned anyway).
    Nothing,
}

/// One topic's base and current counts.
pub(super) struct TopicState {
    pub(super) floor: u32,
    /// Keepable partitions per local member (zero outside `touched`).
    count: Vec<u32>,
    /// The mask of a gaining member's (f+1)-th keepable partition.
    pub(super) marginal: Vec<u64>,
    touched: Vec<u32>,
    /// Left-over alignable partitions of the base, by mask (ascending).
    pub(super) group_masks: Vec<u64>,
    pub(super) group_base: Vec<u64>,
    /// Room per rack in the base.
    pub(super) room_base: Vec<u64>,
    /// Left-over partitions of the base that cannot be aligned (mask 0).
    pub(super) free_base: u64,
    /// Room of the members in no rack in the base.
    pub(super) room_free_base: u64,
    /// Left-over partitions and room with the current choice.
    supply: Vec<u64>,
    room: Vec<u64>,
}

impl TopicState {
    pub(super) fn new(members: usize, racks: usize) -> TopicState {
        TopicState {
            floor: 0,
            count: vec![0; members],
            marginal: vec![0; members],
            touched: Vec::new(),
            group_masks: Vec::new(),
            group_base: Vec::new(),
            room_base: vec![0; racks],
            free_base: 0,
            room_free_base: 0,
            supply: Vec::new(),
            room: Vec::new(),
        }
    }

    fn clear(&mut self) {
        for &lm in &self.touched {
            self.count[lm as usize] = 0;
        }
        self.touched.clear();
    }

    pub(super) fn gaining(&self, lm: usize) -> bool {
        self.count[lm] > self.floor
    }

    /// What giving `lm` the extra changes.
    fn effect(&self, lm: usize, member_bit: &[u64]) -> Effect {
        if self.gaining(lm) {
            match search_masks(&self.group_masks, self.marginal[lm], |&m| m) {
                Ok(g) => Effect::Keeps(g),
                Err(_) => Effect::Nothing,
            }
        } else if member_bit[lm] != 0 {
            Effect::Room(member_bit[lm].trailing_zeros() as usize)
        } else {
            Effect::Nothing
        }
    }

    /// Whether giving `lm` the extra adds room or removes a left-over partition within the
    /// racks `z`.
    fn helps(&self, lm: usize, member_bit: &[u64], z: u64) -> bool {
        if self.gaining(lm) {
            self.marginal[lm] != 0 && self.marginal[lm] & !z == 0
        } else {
            member_bit[lm] & z != 0
        }
    }

    /// Sets `supply` and `room` for `chosen` having the extras.
    fn tally(&mut self, chosen: &[u32], member_bit: &[u64]) {
        self.supply.clone_from(&self.group_base);
        self.room.clone_from(&self.room_base);
        for &lm in chosen {
            let effect = self.effect(lm as usize, member_bit);
            apply(effect, 1, &mut self.supply, &mut self.room);
        }
    }

    /// Moves the extra from `out` to `into` in the current counts.
    fn exchange(&mut self, out: usize, into: usize, member_bit: &[u64]) {
        let (a, b) = (self.effect(out, member_bit), self.effect(into, member_bit));
        apply(a, -1, &mut self.supply, &mut self.room);
        apply(b, 1, &mut self.supply, &mut self.room);
    }
}

/// Applies `effect` once (`sign` 1) or undoes it (`sign` −1).
fn apply(effect: Effect, sign: i64, supply: &mut [u64], room: &mut [u64]) {
    match effect {
        Effect::Keeps(g) => supply[g] = supply[g].wrapping_sub(sign as u64),
        Effect::Room(r) => room[r] = room[r].wrapping_add(sign as u64),
        Effect::Nothing => {}
    }
}

/// The repair (see the module docs).
pub(super) struct Fit<'a, 'p> {
    pub(super) problem: &'a Problem<'p>,
    pub(super) comp: &'a Component,
    pub(super) index: &'a LocalIndex,
    pub(super) masks: &'a [u64],
    pub(super) mask_start: &'a [usize],
    pub(super) keepable: &'a [Vec<(i32, u32)>],
    pub(super) member_bit: &'a [u64],
    /// How many members run in each rack.
    pub(super) rack_size: Vec<u64>,
    /// Off only in `Variant::NoTransportCheck`: every choice is accepted.
    pub(super) check: bool,
    /// The topic being repaired, and an earlier one tried in an exchange across topics.
    now: TopicState,
    other: TopicState,
    flow: Transport,
    /// The greedy's key per local member and who is chosen, built only when an exchange is
    /// needed.
    key_of: Vec<u64>,
    chosen_mark: Vec<bool>,
    supply_try: Vec<u64>,
    room_try: Vec<u64>,
    /// Answers of [`Fit::left_with`] while the states stay as they are: (other state, effect
    /// taken away, effect added, units left).
    memo: Vec<(bool, Effect, Effect, u64)>,
    /// Whether a refusal is final: every later topic is refused at once (set when an exact
    /// construction follows, see [`Fit::gave_up`]).
    pub(super) final_refusal: bool,
    /// Whether some topic was refused.
    refused: bool,
    /// Whether the last repair moved an extra of an earlier topic.
    moved: bool,
}

impl<'a, 'p> Fit<'a, 'p> {
    /// A repair for `comp`'s topics.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        problem: &'a Problem<'p>,
        comp: &'a Component,
        index: &'a LocalIndex,
        masks: &'a [u64],
        mask_start: &'a [usize],
        keepable: &'a [Vec<(i32, u32)>],
        member_bit: &'a [u64],
        racks: usize,
        check: bool,
    ) -> Fit<'a, 'p> {
        let n = comp.members.len();
        let mut rack_size = vec![0u64; racks];
        for &bit in member_bit {
            if bit != 0 {
                rack_size[bit.trailing_zeros() as usize] += 1;
            }
        }
        Fit {
            problem,
            comp,
            index,
            masks,
            mask_start,
            keepable,
            member_bit,
            rack_size,
            check,
            now: TopicState::new(n, racks),
            other: TopicState::new(n, racks),
            flow: Transport::default(),
            key_of: vec![0; n],
            chosen_mark: vec![false; n],
            supply_try: Vec::new(),
            room_try: Vec::new(),
            memo: Vec::new(),
            final_refusal: false,
            refused: false,
            moved: false,
        }
    }

    /// Whether the repair refused a topic with [`Fit::final_refusal`] set: the greedy's later
    /// runs were refused at once, so its choice is the homogeneous flow's, made without regard
    /// to racks, and the caller goes on to the exact constructions instead of dealing it.
    pub(super) fn gave_up(&self) -> bool {
        self.refused && self.final_refusal
    }

    /// Builds `state`'s base for topic `t`.
    pub(super) fn base(&self, state: &mut TopicState, t: u32) {
        match self.comp.topics.binary_search(&t) {
            Ok(i) => self.base_at(state, i, t),
            Err(_) => state.clear(),
        }
    }

    /// [`Fit::base`] of topic `t`, the `i`-th of the component's.
    pub(super) fn base_at(&self, state: &mut TopicState, i: usize, t: u32) {
        state.clear();
        let n = self.comp.members.len();
        let count = self.problem.partitions(t) as usize;
        let floor = (count / n) as u32;
        state.floor = floor;
        let masks = &self.masks[self.mask_start[i]..self.mask_start[i] + count];
        for (r, room) in state.room_base.iter_mut().enumerate() {
            *room = u64::from(floor) * self.rack_size[r];
        }
        let rackless = n as u64 - self.rack_size.iter().sum::<u64>();
        state.room_free_base = u64::from(floor) * rackless;
        state.free_base = 0;
        state.group_masks.clear();
        state.group_base.clear();
        let mut claims = self.keepable[t as usize].iter().peekable();
        for (p, &mask) in masks.iter().enumerate() {
            if let Some(&&(claimed, m)) = claims.peek()
                && claimed as usize == p
            {
                claims.next();
                let lm = self.index.get(self.comp, m);
                if state.count[lm] == 0 {
                    state.touched.push(lm as u32);
                }
                state.count[lm] += 1;
                if state.count[lm] <= floor {
                    let bit = self.member_bit[lm];
                    if bit != 0 {
                        state.room_base[bit.trailing_zeros() as usize] -= 1;
                    } else {
                        state.room_free_base -= 1;
                    }
                    continue;
                }
                if state.count[lm] == floor + 1 {
                    state.marginal[lm] = mask;
                }
            }
            if mask == 0 {
                state.free_base += 1;
            } else {
                match search_masks(&state.group_masks, mask, |&m| m) {
                    Ok(g) => state.group_base[g] += 1,
                    Err(g) => {
                        insert_small(&mut state.group_masks, g, mask);
                        insert_small(&mut state.group_base, g, 1);
                    }
                }
            }
        }
    }

    /// Whether `state`'s left-over partitions would fit with `out`'s extra given to `into`
    /// (units left unplaced in `self.flow.unplaced` when not).
    fn fits_with(&mut self, use_other: bool, out: usize, into: usize) -> bool {
        let state = if use_other { &self.other } else { &self.now };
        self.supply_try.clone_from(&state.supply);
        self.room_try.clone_from(&state.room);
        let (a, b) = (
            state.effect(out, self.member_bit),
            state.effect(into, self.member_bit),
        );
        apply(a, -1, &mut self.supply_try, &mut self.room_try);
        apply(b, 1, &mut self.supply_try, &mut self.room_try);
        let masks = if use_other {
            &self.other.group_masks
        } else {
            &self.now.group_masks
        };
        self.flow.solve(masks, &self.supply_try, &self.room_try)
    }

    /// How many units stay unplaced (0: it fits) in `state` (`self.other` when `use_other`)
    /// with `out`'s extra given to `into`, as [`Fit::fits_with`] answers. The answer depends
    /// only on the state and the two members' [`Effect`]s, and a topic's members have few
    /// distinct effects (a group or a rack each), so it is remembered by them: the caller
    /// clears `memo` whenever the state it asks about changes. (The flow's reached racks are
    /// left as they were when the answer is remembered.)
    fn left_with(&mut self, use_other: bool, out: usize, into: usize) -> u64 {
        let state = if use_other { &self.other } else { &self.now };
        let (a, b) = (
            state.effect(out, self.member_bit),
            state.effect(into, self.member_bit),
        );
        #[cfg(test)]
        let by_out_only = planted::MEMO_BY_OUT_ONLY.get();
        #[cfg(not(test))]
        let by_out_only = false;
        let known = self
            .memo
            .iter()
            .find(|e| e.0 == use_other && e.1 == a && (by_out_only || e.2 == b))
            .map(|e| e.3);
        let fresh = |fit: &mut Self| {
            if fit.fits_with(use_other, out, into) {
                0
            } else {
                fit.flow.unplaced
            }
        };
        match known {
            Some(left) => {
                #[cfg(test)]
                assert_eq!(left, fresh(self), "a remembered answer differs");
                left
            }
            None => {
                let left = fresh(self);
                self.memo.push((use_other, a, b, left));
                left
            }
        }
    }

    /// Whether the current topic fits as tallied (sets the flow's reached racks otherwise).
    fn fits_now(&mut self) -> bool {
        self.flow
            .solve(&self.now.group_masks, &self.now.supply, &self.now.room)
    }

    /// One exchange within the topic that leaves fewer than `unplaced` units unplaced, if
    /// any: the best of the [`CANDIDATES`] highest-ranked eligible members not chosen that
    /// help within the reached racks and the lowest-ranked chosen that do not.
    fn within(
        &mut self,
        chosen: &[u32],
        received: &[u32],
        q: u32,
        plus_left: u32,
        unplaced: u64,
    ) -> Option<(u64, usize, usize)> {
        let n = self.comp.members.len();
        let z = self.flow.reached;
        let mut outs: Vec<(u64, usize)> = Vec::with_capacity(CANDIDATES);
        lowest(
            chosen
                .iter()
                .enumerate()
                .filter(|&(_, &lm)| !self.now.helps(lm as usize, self.member_bit, z))
                .map(|(pos, &lm)| (self.key_of[lm as usize], pos)),
            &mut outs,
        );
        let at_q = chosen
            .iter()
            .filter(|&&lm| received[lm as usize] == q)
            .count() as u32;
        let mut ins: Vec<(u64, usize)> = Vec::with_capacity(CANDIDATES);
        lowest(
            (0..n)
                .filter(|&lm| self.key_of[lm] != 0 && !self.chosen_mark[lm])
                .filter(|&lm| self.now.helps(lm, self.member_bit, z))
                .map(|lm| (u64::MAX - self.key_of[lm], lm)),
            &mut ins,
        );
        self.memo.clear();
        let mut best: Option<(u64, usize, usize)> = None;
        for &(_, into) in &ins {
            for &(_, pos) in &outs {
                let out = chosen[pos] as usize;
                let above = at_q - u32::from(received[out] == q) + u32::from(received[into] == q);
                if above > plus_left {
                    continue;
                }
                let left = self.left_with(false, out, into);
                if left < unplaced && best.is_none_or(|(b, _, _)| left < b) {
                    best = Some((left, pos, into));
                    if left == 0 {
                        return best;
                    }
                }
            }
        }
        best
    }

    /// One exchange across topics that leaves fewer than `unplaced` units unplaced in this
    /// topic, if any, made in `earlier` and `received`: returns (left, position, into).
    /// Earlier topics are tried latest first (at most [`EARLIER`]); in each, members that
    /// have its extra and would help here, paired with chosen members here that do not help
    /// and lack that earlier extra, neither topic losing a gaining cell to a non-gaining one.
    fn across(
        &mut self,
        chosen: &[u32],
        earlier: &mut [TopicExtras],
        received: &mut [u32],
        unplaced: u64,
    ) -> Option<(u64, usize, usize)> {
        let z = self.flow.reached;
        let bit = self.member_bit;
        // Non-gaining members first on both sides: moving their extras loses no kept
        // partition.
        let mut outs: Vec<usize> = (0..chosen.len())
            .filter(|&pos| !self.now.helps(chosen[pos] as usize, bit, z))
            .collect();
        if outs.is_empty() {
            return None;
        }
        outs.sort_by_key(|&pos| self.now.gaining(chosen[pos] as usize));
        outs.truncate(4 * CANDIDATES);
        self.memo.clear();
        for x in earlier.iter_mut().rev().take(EARLIER) {
            if !x
                .chosen
                .iter()
                .any(|&lm| !self.chosen_mark[lm as usize] && self.now.helps(lm as usize, bit, z))
            {
                continue;
            }
            let mut other = std::mem::replace(&mut self.other, TopicState::new(0, 0));
            self.base(&mut other, x.topic);
            other.tally(&x.chosen, bit);
            self.other = other;
            self.memo.retain(|e| !e.0);
            let mut ins: Vec<usize> = x
                .chosen
                .iter()
                .map(|&lm| lm as usize)
                .filter(|&lm| !self.chosen_mark[lm] && self.now.helps(lm, bit, z))
                .collect();
            ins.sort_by_key(|&lm| self.other.gaining(lm));
            ins.truncate(4 * CANDIDATES);
            let mut tried = 0;
            for &into in &ins {
                for &pos in &outs {
                    let out = chosen[pos] as usize;
                    if x.chosen.binary_search(&(out as u32)).is_ok()
                        || (self.now.gaining(out) && !self.now.gaining(into))
                        || (self.other.gaining(into) && !self.other.gaining(out))
                    {
                        continue;
                    }
                    tried += 1;
                    if tried > CANDIDATES * CANDIDATES {
                        break;
                    }
                    let left = self.left_with(false, out, into);
                    if left >= unplaced || self.left_with(true, into, out) != 0 {
                        continue;
                    }
                    let k = x.chosen.binary_search(&(into as u32)).unwrap_or(0);
                    x.chosen.remove(k);
                    let slot = x.chosen.binary_search(&(out as u32)).unwrap_or_else(|s| s);
                    x.chosen.insert(slot, out as u32);
                    received[into] -= 1;
                    received[out] += 1;
                    return Some((left, pos, into));
                }
            }
        }
        None
    }
}

/// Puts the [`CANDIDATES`] smallest of `items` (distinct) into `out`, ascending. One pass
/// that keeps them sorted: an item that does not beat the largest kept costs one comparison,
/// where collecting every item and selecting cost an allocation and a pass more.
fn lowest(items: impl Iterator<Item = (u64, usize)>, out: &mut Vec<(u64, usize)>) {
    out.clear();
    for item in items {
        if out.len() == CANDIDATES {
            if item >= out[CANDIDATES - 1] {
                continue;
            }
            out.pop();
        }
        // Shifted into place one step at a time: a few steps, where `insert` called `memmove`.
        out.push(item);
        let mut at = out.len() - 1;
        while at > 0 && out[at - 1] > item {
            out[at] = out[at - 1];
            at -= 1;
        }
        out[at] = item;
    }
}

impl Repair for Fit<'_, '_> {
    fn repair(
        &mut self,
        topic: u32,
        chosen: &mut Vec<u32>,
        earlier: &mut [TopicExtras],
        keys: &[u64],
        received: &mut [u32],
        q: u32,
        plus_left: u32,
    ) -> bool {
        self.moved = false;
        if !self.check {
            return true;
        }
        if self.gave_up() {
            return false;
        }
        let mut now = std::mem::replace(&mut self.now, TopicState::new(0, 0));
        self.base(&mut now, topic);
        now.tally(chosen, self.member_bit);
        self.now = now;
        if self.fits_now() {
            return true;
        }
        self.key_of.fill(0);
        for &key in keys {
            if key != 0 {
                self.key_of[(u32::MAX - key as u32) as usize] = key;
            }
        }
        for &lm in chosen.iter() {
            self.chosen_mark[lm as usize] = true;
        }
        let mut unplaced = self.flow.unplaced;
        let mut plus_left = plus_left;
        let mut accepted = false;
        for _ in 0..MAX_EXCHANGES {
            let step = match self.within(chosen, received, q, plus_left, unplaced) {
                Some(step) => {
                    #[cfg(test)]
                    tally::add(tally::WITHIN);
                    Some(step)
                }
                None => {
                    let step = self.across(chosen, earlier, received, unplaced);
                    #[cfg(test)]
                    if step.is_some() {
                        tally::add(tally::ACROSS);
                    }
                    if let Some((_, pos, into)) = step {
                        self.moved = true;
                        // `into` gave up an earlier extra to `out`: recount the members
                        // above q among the two.
                        let out = chosen[pos] as usize;
                        let above = |a: u32, b: u32| u32::from(a > q) + u32::from(b > q);
                        let before = above(received[into] + 1, received[out] - 1);
                        let after = above(received[into], received[out]);
                        plus_left = (plus_left + before).saturating_sub(after);
                    }
                    step
                }
            };
            let Some((left, pos, into)) = step else {
                break;
            };
            let out = chosen[pos] as usize;
            self.chosen_mark[out] = false;
            self.chosen_mark[into] = true;
            chosen[pos] = into as u32;
            self.now.exchange(out, into, self.member_bit);
            unplaced = left;
            if left == 0 {
                accepted = true;
                break;
            }
            // The reached racks for the choice now made.
            let _ = self.fits_now();
        }
        for &lm in chosen.iter() {
            self.chosen_mark[lm as usize] = false;
        }
        #[cfg(test)]
        if !accepted && self.final_refusal && !self.refused {
            tally::add_gave_up();
        }
        self.refused |= !accepted;
        accepted
    }

    fn moved_extras(&self) -> bool {
        #[cfg(test)]
        if planted::MOVES_UNREPORTED.get() {
            return false;
        }
        self.moved
    }

    fn gave_up(&self) -> bool {
        Fit::gave_up(self)
    }
}

/// Faults a test may plant on its thread, to show the tests catch them.
#[cfg(test)]
pub(crate) mod planted {
    thread_local! {
        /// The repair never reports that it moved an earlier topic's extra, so the greedy
        /// keeps stale keys and a stale count of the places above q.
        pub(crate) static MOVES_UNREPORTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        /// The remembered answers of the exchange checks are looked up by the effect taken
        /// away alone, so an exchange may be judged by another's answer.
        pub(crate) static MEMO_BY_OUT_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
}

#[cfg(test)]
pub(crate) mod tally;

#[cfg(test)]
mod tests;
