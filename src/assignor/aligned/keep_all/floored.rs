//! The placement of [`super`] generalised to topics with floors: on racked components where
//! every topic has P_t ≥ n (f_t = ⌊P_t/n⌋ ≥ 1), keep as many claims as any balance-optimal
//! assignment can, give every member its floor in every topic, and align every alignable
//! partition. When it succeeds its result is returned (the certificate below); when it
//! fails nothing is written and the path of the [parent](super::super) runs as before (a
//! failure proves nothing).
//!
//! # The bound
//!
//! With r_t = P_t mod n, B = Σ f_t, E = Σ r_t, q = ⌊E/n⌋ and s = E mod n, every
//! balance-optimal assignment gives member m the count c_tm = f_t + y_tm of topic t with
//! y ∈ {0, 1}, Σ_m y_tm = r_t, and extras e_m = Σ_t y_tm of q or q + 1, s members at q + 1
//! (step 1 of the [parent](super::super)). Let k_tm count m's keepable claims of t and
//! g_m = #{t : k_tm > f_t}. An assignment aligning every alignable partition keeps only
//! keepable claims, so m keeps at most Σ_t min(k_tm, c_tm) = Σ_t min(k_tm, f_t) +
//! #{t : y_tm = 1, k_tm > f_t} ≤ Σ_t min(k_tm, f_t) + min(g_m, e_m), and in all at most
//! U = Σ_m [Σ_t min(k_tm, f_t) + min(g_m, q)] + min(s, #{m : g_m > q}).
//!
//! # The placement
//!
//! Gains first: every member targets min(g_m, q) gaining topics, and s of those with
//! g_m > q (the fewest *movable* topics first, see below, then lower id) one more; every
//! member also needs q − min(g_m, q) extras in topics where it does not gain. Topic by topic
//! in `comp.topics` order: members that must take an extra here to reach q (as many other
//! topics left as such extras still needed) are reserved one; the other r_t extras go to
//! gaining members still short of their target, those that must gain here first (fewer
//! gaining topics left than gains needed), then those with no *movable* claim (none of a
//! mask 0 or meeting a rack of a member not gaining in the topic: denied the gain, such a
//! member would release a partition nobody with a place can take), then the least slack,
//! then lower id. A chosen gaining member keeps f_t + 1 of its claims of t, every other
//! member min(k_tm, f_t); a member keeping fewer than its claims releases first those of a
//! mask 0 or meeting a rack of a member with a place in the topic, then the others, each
//! highest partition first.
//!
//! Then the partitions left over (unclaimed, not keepable, released) are matched to places
//! by augmenting paths (a partition to a member in one of its replica racks, any member when
//! it cannot be aligned): first every member below its floor (f_t − k_tm places) and every
//! reserved member (one place), all of which must be filled (a maximum matching over these
//! places alone fills them when anything does); then the rest, one per member, to members
//! with k_tm ≤ f_t below q extras, and when those are not enough, to members at q while
//! places at q + 1 are left. Augmenting never empties a filled place, so the floors stay
//! met. A topic whose partitions cannot all be matched, or a member short of its gain target
//! or of q extras at the end, fails the placement; the whole attempt is O(P + T·n) plus the
//! matchings, so a failure costs little.
//!
//! # The certificate
//!
//! The placement returns only when every partition is placed, every member's extras are q
//! or q + 1 and every gain target is met. (1, 2) Every member gets f_t or f_t + 1 of every
//! topic: spread is optimal. (3) Extras of q or q + 1 adding up to E = nq + s put exactly s
//! members at q + 1: balance-optimal. (4) Kept claims are keepable and left-over partitions
//! go to a member in one of their replica racks when alignable: every alignable partition is
//! aligned, the most any assignment can. (5) Then every assignment optimal for 1–4 aligns
//! every alignable partition and keeps at most U, and this one keeps Σ_tm min(k_tm, f_t)
//! plus one per gain, which with every target met is U. So it is optimal for 1–5.
//!
//! # Tie rule (objective 6)
//!
//! The gains, the kept claims and the released claims as above; the left-over partitions,
//! ascending, are matched by depth-first augmenting paths trying the members with floor
//! places in local id order, then the reserved, then the members below q, then those at q
//! (each group ascending): a partition goes to the first member tried with a free place or
//! whose partitions can move on. The result may be another equal-cost optimum than the
//! repaired greedy's. All of it reads only the canonical [`super::super::Problem`] order.
//!
//! # Complexity
//!
//! O(T·n) for the counts (refused beyond [`MAX_CELLS`] cells), O(P + claims) for the
//! partitions, and per topic a matching of L left-over partitions costing O(L·(L·n)) at
//! worst (refused when L exceeds n).

use super::super::Context;
use crate::assignor::components::LocalIndex;

/// The most topic × member cells for which the dense counts are built.
pub(crate) const MAX_CELLS: usize = 1 << 20;

/// The most left-over partitions of a topic that the matching takes (it recurses once per
/// partition on an augmenting path).
const MAX_UNITS: usize = 1024;

/// The placement of the module docs on `comp` (every topic of P_t ≥ n, every member racked),
/// appending the result to `lists` (global member ids, `(topic, partition)` pairs) only
/// when every check of the certificate holds; `false` with `lists` as they were otherwise.
pub(in crate::assignor::aligned) fn place(
    ctx: &Context<'_, '_>,
    member_bit: &[u64],
    lists: &mut [Vec<(u32, i32)>],
) -> bool {
    let before = super::super::lengths(ctx.comp, lists);
    // The passes over every claim read members' positions: as in `keep_all::place`, the
    // identity or a dense table directly, the variant checked once here, not per claim.
    let placed = match ctx.index {
        _ if super::is_identity(ctx) => try_place(ctx, member_bit, lists, |m| m as usize),
        LocalIndex::Dense(table) => {
            try_place(ctx, member_bit, lists, |m| table[m as usize] as usize)
        }
        LocalIndex::Search => try_place(ctx, member_bit, lists, |m| ctx.index.get(ctx.comp, m)),
    };
    if !placed {
        super::super::restore(ctx.comp, &before, lists);
    }
    #[cfg(test)]
    tally::add(if placed { tally::PLACED } else { tally::FAILED });
    placed
}

/// [`place`] without the undoing.
fn try_place(
    ctx: &Context<'_, '_>,
    member_bit: &[u64],
    lists: &mut [Vec<(u32, i32)>],
    local: impl Fn(u32) -> usize + Copy,
) -> bool {
    let comp = ctx.comp;
    let n = comp.members.len();
    let topics = comp.topics.len();
    if n == 0 || member_bit.contains(&0) || topics.saturating_mul(n) > MAX_CELLS {
        return false;
    }
    // k[i·n + lm]: member lm's keepable claims of the i-th topic; reach[i·n + lm]: the union
    // of their masks, all ones for a mask 0 (which any member may take), from which
    // [`mark_movable`] reads a member's mark without going through its claims again.
    let mut k = vec![0u32; topics * n];
    let mut reach = vec![0u64; topics * n];
    let mut floors = Vec::with_capacity(topics);
    let mut extras = Vec::with_capacity(topics);
    let mut total_extras = 0u64;
    let mut claims = 0usize;
    for (i, &t) in comp.topics.iter().enumerate() {
        let count = ctx.topic_masks(i, t).len();
        if count < n {
            return false;
        }
        floors.push((count / n) as u32);
        extras.push((count % n) as u32);
        total_extras += (count % n) as u64;
        let masks = ctx.topic_masks(i, t);
        for &(p, m) in &ctx.keepable[t as usize] {
            let cell = i * n + local(m);
            k[cell] += 1;
            let mask = masks[p as usize];
            reach[cell] |= if mask == 0 { u64::MAX } else { mask };
        }
        claims += ctx.keepable[t as usize].len();
    }
    // With nothing to keep (a first assignment) the rotation of the parent applies.
    if claims == 0 {
        return false;
    }
    let q = (total_extras / n as u64) as u32;
    let s = (total_extras % n as u64) as u32;
    // Per member: gaining topics (g_m) and other topics not yet passed.
    let mut gain_left = vec![0u32; n];
    for (i, &f) in floors.iter().enumerate() {
        for (lm, &claimed) in k[i * n..(i + 1) * n].iter().enumerate() {
            gain_left[lm] += u32::from(claimed > f);
        }
    }
    let mut other_left: Vec<u32> = gain_left.iter().map(|&g| topics as u32 - g).collect();
    // The gain targets of the bound U: min(g_m, q), and one more for the first s members
    // with g_m > q; the extras a member still needs beyond its gains to reach q.
    // Per member: the gaining topics in which it has a claim that a member not gaining
    // there could take (where it can be denied its gain at little risk).
    let mut movable_in = vec![0u32; n];
    // `movable_in` is read only to order the members with g_m > q for the s places at
    // q + 1, and a topic adds to it only where some member gains: with no such member, or
    // s = 0, or no gaining cell in a topic, that topic's marking is skipped (it would add 0).
    let ranked = s > 0 && gain_left.iter().any(|&g| g > q);
    // The marks of the topics marked here, at `i·n..(i + 1)·n`, kept for the loop below:
    // it marks the same topic from the same cells, floor and racks, so it reads them instead
    // of marking again. Where nothing is ranked, one topic's room for that loop to mark in.
    let mut movable = vec![false; if ranked { topics * n } else { n }];
    let mut marked = vec![false; topics];
    for (i, &t) in comp.topics.iter().enumerate() {
        let cells = &k[i * n..(i + 1) * n];
        if !ranked || !cells.iter().any(|&claimed| claimed > floors[i]) {
            continue;
        }
        let place_racks = place_racks_of(cells, floors[i], member_bit);
        let marks = &mut movable[i * n..(i + 1) * n];
        mark_movable(
            ctx,
            (i, t),
            place_racks,
            &reach[i * n..(i + 1) * n],
            marks,
            local,
        );
        marked[i] = true;
        for (lm, &claimed) in cells.iter().enumerate() {
            movable_in[lm] += u32::from(claimed > floors[i] && marks[lm]);
        }
    }
    // The members at q + 1 by their gains: of those with g_m > q, the fewest such topics
    // first (they have the least choice of where to be denied), then lower id.
    let mut plus_left = s;
    let mut above = vec![false; n];
    let mut order: Vec<(u32, u32)> = (0..n as u32)
        .filter(|&lm| gain_left[lm as usize] > q)
        .map(|lm| (movable_in[lm as usize], lm))
        .collect();
    order.sort_unstable();
    if !planted(Fault::NoPlusTerm) {
        for &(_, lm) in order.iter().take(s as usize) {
            above[lm as usize] = true;
            plus_left -= 1;
        }
    }
    let mut need_gain: Vec<u32> = gain_left
        .iter()
        .zip(&above)
        .map(|(&g, &plus)| g.min(q) + u32::from(plus))
        .collect();
    let mut need_other: Vec<u32> = gain_left.iter().map(|&g| q - g.min(q)).collect();

    let mut candidates: Vec<(i64, u32)> = Vec::new();
    let mut gains: Vec<bool> = vec![false; n];
    let mut matching = Matching::default();
    let mut is_kept: Vec<bool> = Vec::new();
    let mut release: Vec<u32> = vec![0; n];
    for (i, &t) in comp.topics.iter().enumerate() {
        let masks = ctx.topic_masks(i, t);
        let keepable = &ctx.keepable[t as usize];
        let f = floors[i];
        let cells = &k[i * n..(i + 1) * n];
        // Members that must take an extra here to reach q (as many other topics left as
        // extras still needed) are reserved their extra; the rest go to gains.
        candidates.clear();
        matching.clear(n);
        let mut reserved = 0u32;
        {
            // The per-member lists cut to n, as `cells` is, so that the loop indexes them
            // without a check each.
            let (gain_left, other_left) = (&mut gain_left[..n], &mut other_left[..n]);
            let (need_gain, need_other) = (&need_gain[..n], &need_other[..n]);
            for (lm, &claimed) in cells.iter().enumerate() {
                if claimed > f {
                    gain_left[lm] -= 1;
                    if need_gain[lm] > 0 {
                        let slack = i64::from(gain_left[lm]) - i64::from(need_gain[lm]);
                        candidates.push((slack, lm as u32));
                    }
                } else {
                    if need_other[lm] >= other_left[lm] && need_other[lm] > 0 {
                        reserved += 1;
                        matching.critical.push(lm as u32);
                    }
                    other_left[lm] -= 1;
                }
            }
        }
        let Some(room) = extras[i].checked_sub(reserved) else {
            return false;
        };
        if candidates.len() > room as usize {
            // Those denied a gain release a claim: prefer denying members with a claim that
            // a member with a place (one not gaining here) can take.
            // A topic with a candidate has a gaining cell, so it was marked above unless
            // nothing is ranked; else its marks are made in the first topic's room (that
            // topic is behind us, and `movable` always has it).
            let marks = if marked[i] {
                &movable[i * n..(i + 1) * n]
            } else {
                let place_racks = place_racks_of(cells, f, member_bit);
                let Some(scratch) = movable.get_mut(..n) else {
                    return false;
                };
                mark_movable(
                    ctx,
                    (i, t),
                    place_racks,
                    &reach[i * n..(i + 1) * n],
                    scratch,
                    local,
                );
                &movable[..n]
            };
            // Members that must gain here (negative slack) first; of the others, those without
            // such a claim first, then the least slack.
            let spread = topics as i64 + 1;
            for c in &mut candidates {
                if c.0 >= 0 {
                    c.0 += spread * i64::from(marks[c.1 as usize]);
                }
            }
        }
        // The first `room` in order gain, whatever their order among themselves: they are
        // selected, not sorted (the candidates are distinct members, so which they are does
        // not change; all of them where they fit).
        super::bounded::keep_smallest(&mut candidates, room as usize);
        gains.fill(false);
        let mut gained = 0u32;
        for &(_, lm) in &candidates {
            gains[lm as usize] = true;
            need_gain[lm as usize] -= 1;
            gained += 1;
        }
        let open = extras[i] - gained;
        // The places: floors to fill, then optional extras, needy members first.
        let mut place_racks = 0u64;
        // Claims still to release in the topic: the passes below stop once none is left.
        let mut releasing = 0u64;
        {
            // As above: every per-member list cut to n, indexed without a check each.
            let (gains, release) = (&gains[..n], &mut release[..n]);
            let (floor, member_bit) = (&mut matching.floor[..n], &member_bit[..n]);
            let (need_other, other_left) = (&need_other[..n], &other_left[..n]);
            let (above, need_gain) = (&above[..n], &need_gain[..n]);
            for (lm, &claimed) in cells.iter().enumerate() {
                let c = f + u32::from(gains[lm]);
                release[lm] = claimed.saturating_sub(c);
                releasing += u64::from(release[lm]);
                if claimed < f {
                    floor[lm] = f - claimed;
                }
                if claimed <= f && open > 0 {
                    if need_other[lm] > 0 {
                        if need_other[lm] < other_left[lm] + 1 {
                            matching.needy.push(lm as u32);
                        }
                    } else if !above[lm] && need_gain[lm] == 0 && plus_left > 0 {
                        matching.plus.push(lm as u32);
                    }
                }
                if floor[lm] > 0 || claimed <= f && open > 0 {
                    place_racks |= member_bit[lm];
                }
            }
        }
        // Released claims: of masks some member with a place can take first, highest first.
        is_kept.clear();
        is_kept.resize(masks.len(), false);
        for &(p, _) in keepable {
            is_kept[p as usize] = true;
        }
        // With nothing left to release no claim below would change (every test needs
        // `release[lm] > 0`), so the passes end there: on a leave, where no member claims
        // more than its count, they do not run at all.
        'release: for preferred in [true, false] {
            for &(p, m) in keepable.iter().rev() {
                if releasing == 0 {
                    break 'release;
                }
                let lm = local(m);
                let mask = masks[p as usize];
                let placeable = mask == 0 || mask & place_racks != 0;
                if release[lm] > 0 && is_kept[p as usize] && (placeable || !preferred) {
                    release[lm] -= 1;
                    releasing -= 1;
                    is_kept[p as usize] = false;
                }
            }
        }
        for (p, &mask) in masks.iter().enumerate() {
            if !is_kept[p] {
                matching.units.push((p as i32, mask));
            }
        }
        if matching.units.len() > n.min(MAX_UNITS) {
            return false;
        }
        let Some(plus_used) = matching.solve(member_bit, plus_left) else {
            return false;
        };
        plus_left -= plus_used;
        for &(p, m) in keepable {
            if is_kept[p as usize] {
                lists[m as usize].push((t, p));
            }
        }
        for (u, &(p, _)) in matching.units.iter().enumerate() {
            let lm = matching.owner[u] as usize;
            lists[comp.members[lm] as usize].push((t, p));
        }
        let (floor, need_other, above) =
            (&matching.floor[..n], &mut need_other[..n], &mut above[..n]);
        for (lm, &held) in matching.held[..n].iter().enumerate() {
            if held > floor[lm] {
                if need_other[lm] > 0 {
                    need_other[lm] -= 1;
                } else {
                    above[lm] = true;
                }
            }
        }
    }
    need_gain.iter().all(|&x| x == 0) && need_other.iter().all(|&x| x == 0)
}

/// The racks of the members not gaining in a topic (keepable claims `cells` per local
/// member, floor `f`).
fn place_racks_of(cells: &[u32], f: u32, member_bit: &[u64]) -> u64 {
    let mut racks = 0u64;
    for (lm, &claimed) in cells.iter().enumerate() {
        if claimed <= f {
            racks |= member_bit[lm];
        }
    }
    racks
}

/// Marks in `movable` (per local member, every other mark cleared) who has a keepable claim
/// of the i-th topic `t` whose mask is 0 or meets `place_racks`. `reach` holds per local
/// member the union of its claims' masks there, all ones for a mask 0: some claim meets
/// `place_racks` iff the union does, so one read per member decides, except where
/// `place_racks` is empty (all ones would not meet it): then the claims are read.
fn mark_movable(
    ctx: &Context<'_, '_>,
    (i, t): (usize, u32),
    place_racks: u64,
    reach: &[u64],
    movable: &mut [bool],
    local: impl Fn(u32) -> usize,
) {
    if place_racks != 0 {
        for (mark, &r) in movable.iter_mut().zip(reach) {
            *mark = r & place_racks != 0;
        }
        return;
    }
    let masks = ctx.topic_masks(i, t);
    movable.fill(false);
    for &(p, m) in &ctx.keepable[t as usize] {
        let mask = masks[p as usize];
        if mask == 0 || mask & place_racks != 0 {
            movable[local(m)] = true;
        }
    }
}

/// One topic's matching of left-over partitions to places.
#[derive(Default)]
struct Matching {
    /// (partition, mask) of the left-over partitions, ascending.
    units: Vec<(i32, u64)>,
    /// The member each unit is matched to (`u32::MAX` for none).
    owner: Vec<u32>,
    /// Per member: the floor places it still has (filled ones counted down in `held`).
    floor: Vec<u32>,
    /// Members that must take an extra in the topic (one place each, filled like floors),
    /// members below q extras, and members at q, each ascending.
    critical: Vec<u32>,
    needy: Vec<u32>,
    plus: Vec<u32>,
    /// Per member: its capacity in the current phase, and units held.
    capacity: Vec<u32>,
    held: Vec<u32>,
    /// Per member: visited in the current search.
    seen: Vec<bool>,
    /// The members tried, in order, in the current phase.
    order: Vec<u32>,
}

impl Matching {
    fn clear(&mut self, n: usize) {
        self.units.clear();
        self.owner.clear();
        self.floor.clear();
        self.floor.resize(n, 0);
        self.critical.clear();
        self.needy.clear();
        self.plus.clear();
        self.capacity.clear();
        self.capacity.resize(n, 0);
        self.held.clear();
        self.held.resize(n, 0);
        self.seen.clear();
        self.seen.resize(n, false);
        self.order.clear();
    }

    /// Matches every unit: floors first (all of them must fill), then the needy members one
    /// each, then members at q one each (at most `plus_left`). Returns how many members at q
    /// took one, or `None` when some floor place or unit is left.
    fn solve(&mut self, member_bit: &[u64], plus_left: u32) -> Option<u32> {
        self.owner.resize(self.units.len(), u32::MAX);
        let mut floors: u32 = self.floor.iter().sum();
        self.order.clear();
        for (lm, &f) in self.floor.iter().enumerate() {
            if f > 0 {
                self.capacity[lm] = f;
                self.order.push(lm as u32);
            }
        }
        for lm in std::mem::take(&mut self.critical) {
            self.open_place(lm);
            floors += 1;
        }
        let mut matched = self.phase(member_bit);
        if matched != floors as usize {
            return None;
        }
        for lm in std::mem::take(&mut self.needy) {
            self.open_place(lm);
        }
        matched = self.phase(member_bit);
        if matched == self.units.len() {
            return Some(0);
        }
        let plus = std::mem::take(&mut self.plus);
        for &lm in &plus {
            self.open_place(lm);
        }
        matched = self.phase(member_bit);
        let used = plus
            .iter()
            .filter(|&&lm| self.held[lm as usize] > self.floor[lm as usize])
            .count() as u32;
        (matched == self.units.len() && used <= plus_left).then_some(used)
    }

    /// Opens one place beyond the floor of `lm` for the next phase.
    fn open_place(&mut self, lm: u32) {
        let l = lm as usize;
        self.capacity[l] = self.floor[l] + 1;
        if self.floor[l] == 0 {
            self.order.push(lm);
        }
    }

    /// Augments from every unmatched unit over the members of `order`; the number matched.
    fn phase(&mut self, member_bit: &[u64]) -> usize {
        for u in 0..self.units.len() {
            if self.owner[u] == u32::MAX {
                self.seen.fill(false);
                self.augment(u, member_bit);
            }
        }
        self.owner.iter().filter(|&&o| o != u32::MAX).count()
    }

    /// A depth-first augmenting path from unit `u`.
    fn augment(&mut self, u: usize, member_bit: &[u64]) -> bool {
        let mask = self.units[u].1;
        for j in 0..self.order.len() {
            let lm = self.order[j] as usize;
            let aligned = mask == 0 || mask & member_bit[lm] != 0 || planted(Fault::AnyRack);
            if self.seen[lm] || !aligned {
                continue;
            }
            self.seen[lm] = true;
            if self.held[lm] < self.capacity[lm] {
                self.held[lm] += 1;
                self.owner[u] = lm as u32;
                return true;
            }
            // Move one of lm's units on, if one can.
            for v in 0..self.units.len() {
                if self.owner[v] == lm as u32 && self.augment(v, member_bit) {
                    self.owner[u] = lm as u32;
                    return true;
                }
            }
        }
        false
    }
}

/// The planted faults of the tests.
#[derive(Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(test), allow(dead_code))]
enum Fault {
    /// A left-over partition may go to a member in any rack.
    AnyRack,
    /// The bound without its min(s, …) term: no member targets q + 1 gains.
    NoPlusTerm,
}

/// Whether the planted fault `fault` is on (never outside tests).
fn planted(fault: Fault) -> bool {
    #[cfg(test)]
    return tally::planted() && tally::fault() == fault as usize;
    #[cfg(not(test))]
    {
        let _ = fault;
        false
    }
}

/// Test-only counts of components on which the placement ran and succeeded, and planted
/// faults ([`Fault`], chosen by [`set_fault`](tally::set_fault)).
#[cfg(test)]
pub(crate) mod tally;
