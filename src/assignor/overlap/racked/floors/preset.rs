//! The warm start proposed to the solver for the exact flow of the [parent](super), built
//! topic by topic in two steps.
//!
//! 1. *Greedy*: the counts of [`super::super::super::choose`] (balance-optimal), every
//!    subscriber keeping its keepable claims up to its count, and the partitions left over
//!    sent to the racks that can align them by a small maximum flow, as far as the racks'
//!    room goes (subscribers in full racks giving up kept claims for a few rounds where it
//!    cannot place them all); what does not fit stays at the source.
//! 2. *Placement flow*: the topic's part of the exact network on its own, the members'
//!    loads held at those of the counts, solved from the greedy proposal (itself warm-started
//!    by it). It places as many partitions as it can, fills as many floors as it can and
//!    keeps as many claims as it can; a holder of the topic's extra at load L may hand it to
//!    a subscriber at load L − 1 without one (their loads trade places, so the multiset of
//!    loads, and so the balance, stays as it was). This repairs, where they are cheap to
//!    find, the exchanges the greedy misses: a member keeping a claim of another mask so that
//!    another can keep its own, and an extra moving so that a claim can be kept. Later
//!    topics see the loads after the earlier topics' exchanges.
//!
//!    It is skipped where it could only return the greedy as it is: where the greedy places
//!    every partition and every subscriber keeps all its claims or as many as its count
//!    allows while holding the extra, or where the greedy's keeps reach an upper bound on
//!    the keeps of every flow of its network ([`keep_bound`]: a subscriber keeps at most
//!    f_t of its claims, one more with the extra, and a level hands out no more extras than
//!    it has holders). The greedy is then a minimum-cost flow of the placement flow's
//!    network, which the solver, warm-started with it, certifies (no negative cycle to
//!    cancel; with no flow to push it skips every phase) and returns unchanged: the
//!    proposal, and so the result, is the same (were its certification ever to run out of
//!    rounds, the placement flow would start cold and might return another optimum: only
//!    the proposal, never the exactness, depends on it; the tests and the benchmark's
//!    groups see the same results either way). On the benchmark's racked overlapping join
//!    of 100 members on 100 topics this skips 21 of 38 placement flows (the greedy loses
//!    only claims of subscribers whose level's extras all go to holders that keep a claim
//!    with them); on its leave, none of 17.
//!
//! The solver uses the proposal only if it can certify it (see
//! [`super::super::super::super::flow`]), so it decides the speed, never the result: a
//! cold solve climbs through every load level one phase at a time, this one starts near the
//! optimum, and each negative cycle the certification still has to cancel costs about one
//! pass over the whole network, against one over a topic's part here.

use super::super::super::super::aligned::transport::{Keeps, Transport};
use super::super::super::super::flow::{Network, capacity as cap};
use super::{Inputs, TopicFlow};

#[cfg(test)]
thread_local! {
    /// Tests only: a planted fault, the placement flow skipped (the greedy proposed as is).
    pub(crate) static GREEDY_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: a planted fault, the loads not carried from topic to topic.
    pub(crate) static STALE_LOADS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: a planted fault, a subscriber without the extra joins the level of its
    /// own load instead of the next one up.
    pub(crate) static LEVEL_OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: the greedy placements that reached the keep bound, the placement flow
    /// skipped.
    pub(crate) static UNBEATEN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Tests only: of those, the ones where the placement flow (run all the same) keeps more
    /// claims than the greedy: none unless the bound is wrong.
    pub(crate) static BEATEN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Tests only: the keep bound not consulted (the placement flow runs wherever the greedy
    /// is not settled).
    pub(crate) static BOUND_OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: a planted fault, the keep bound forgets the extras (it counts no claim
    /// kept with one).
    pub(crate) static LOOSE_BOUND: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// How many times a topic's keeps are loosened before the greedy leaves units unplaced.
const PRESET_ROUNDS: usize = 4;

/// The costs of the placement flow, as in the [parent](super) network: floors first, keeps
/// last.
const FLOOR: [i8; 4] = [-1, 0, 0, 0];
const KEEP: [i8; 4] = [0, 0, 0, -1];

/// Buffers the proposal keeps from topic to topic (a call solves a hundred topics, each
/// with vectors of a few dozen entries): their contents never outlive a topic.
#[derive(Default)]
pub(super) struct Scratch {
    transport: Transport,
    masks: Vec<u64>,
    supply: Vec<u64>,
    holder: Vec<bool>,
    plain_floor: Vec<u64>,
    /// The greedy's keeps per subscriber, partitions left per group and room per rack.
    kept: Vec<u64>,
    left_over: Vec<u64>,
    room: Vec<u64>,
    /// A placement's counts and keeps, handed back once proposed.
    want: Vec<u64>,
    keep: Vec<u64>,
    /// The proposal's keeps and takes per subscriber, partitions per rack and per group.
    sub_kept: Vec<u64>,
    pool: Vec<u64>,
    into_rack: Vec<u64>,
    sent: Vec<u64>,
    /// The topic's subscribers' loads, for the placement flow.
    sub_load: Vec<i64>,
}

/// One topic as the proposal reads it.
struct Shape<'a> {
    plan: &'a TopicFlow<'a>,
    /// Per claim entry: its group (the free node as the last group).
    entry_group: &'a [usize],
    /// Per group, the free node last: its racks and its partitions.
    masks: Vec<u64>,
    supply: Vec<u64>,
    /// Per subscriber: its rack.
    rack: &'a [usize],
    racks: usize,
    /// f_t.
    floor: u64,
    /// Per subscriber: its keepable claims.
    claims: &'a [u64],
}

/// One topic's counts, keeps and placements.
struct Placement {
    /// Per subscriber: its count.
    want: Vec<u64>,
    /// Per claim entry: the claims kept.
    keep: Vec<u64>,
    /// Per group (the free node last) and rack, at `g * racks + r`: the partitions sent.
    amount: Vec<u64>,
}

impl Placement {
    /// Per subscriber: the claims it keeps, into `kept`.
    fn kept(&self, x: &Shape<'_>, kept: &mut Vec<u64>) {
        kept.clear();
        kept.resize(self.want.len(), 0);
        for (&(i, _, _), &units) in x.plan.claims.iter().zip(&self.keep) {
            kept[i as usize] += units;
        }
    }

    /// Per subscriber: the partitions it takes from its rack, into `pool` (`into_rack` a
    /// buffer). Each rack's partitions fill its subscribers' floors first, then their counts,
    /// in id order.
    fn pool(&self, x: &Shape<'_>, kept: &[u64], into_rack: &mut Vec<u64>, pool: &mut Vec<u64>) {
        into_rack.clear();
        into_rack.resize(x.racks, 0);
        for (g, amounts) in self.amount.chunks(x.racks.max(1)).enumerate() {
            if g < x.masks.len() {
                for (r, &units) in amounts.iter().enumerate() {
                    into_rack[r] += units;
                }
            }
        }
        pool.clear();
        pool.resize(self.want.len(), 0);
        // Once every rack's room is filled, every take left is nothing: the passes stop there.
        let mut left: u64 = into_rack.iter().sum();
        for fill_extras in [false, true] {
            let subs = self.want.iter().zip(x.rack).zip(kept).zip(pool.iter_mut());
            for (((&want, &r), &kept), pool) in subs {
                if left == 0 {
                    return;
                }
                let cap = if fill_extras { want } else { x.floor.max(kept) };
                let Some(room) = into_rack.get_mut(r) else {
                    continue;
                };
                let take = cap.saturating_sub(kept + *pool).min(*room);
                *pool += take;
                *room -= take;
                left -= take;
            }
        }
    }

    /// Whether the placement flow cannot improve on this placement (which places every
    /// partition) for the counts of `holder`: every subscriber keeps all its claims or as
    /// many as its count allows and holds the extra (so that no exchange can raise it).
    /// Where the refining would only certify the greedy, it is skipped.
    /// `kept` is [`Placement::kept`].
    fn settled(&self, x: &Shape<'_>, holder: &[bool], kept: &[u64]) -> bool {
        let subs = kept.iter().zip(x.claims).zip(&self.want).zip(holder);
        self.want.len() == kept.len()
            && subs
                .into_iter()
                .all(|(((&kept, &claims), &want), &holder)| {
                    kept == claims || (kept == want && holder)
                })
    }

    /// Whether the placement flow cannot keep more claims than this placement (which places
    /// every partition, so that every count and every floor is filled: the racks' room is
    /// the counts' sum) for the counts of `holder` at loads `load`: its keeps reach
    /// [`keep_bound`]. Such a placement is a minimum-cost flow of the placement flow's
    /// network (maximum value, every floor full, the most keeps any flow has); its solve,
    /// warm-started with it, finds no negative cycle and returns it unchanged, so skipping
    /// it changes nothing but the time.
    fn unbeatable(&self, x: &Shape<'_>, holder: &[bool], load: &[i64]) -> bool {
        self.keep.iter().sum::<u64>() >= keep_bound(x, holder, load)
    }

    /// Per group (the free node last): the partitions that leave the source, into `sent`.
    fn sent(&self, x: &Shape<'_>, sent: &mut Vec<u64>) {
        sent.clear();
        sent.resize(x.masks.len(), 0);
        for (&g, &units) in x.entry_group.iter().zip(&self.keep) {
            sent[g] += units;
        }
        for (g, amounts) in self.amount.chunks(x.racks.max(1)).enumerate() {
            if let Some(s) = sent.get_mut(g) {
                *s += amounts.iter().sum::<u64>();
            }
        }
    }
}

/// An upper bound on the claims any flow of the placement flow's network keeps, for the
/// counts of `holder` at loads `load`. A subscriber i takes at most f_t units plus the one on
/// its level edge (its only edges out), so it keeps at most min(c_i, f_t) claims of its c_i,
/// one more only with that unit and if c_i > f_t; a level's edge carries as many units as it
/// has holders. So the keeps are at most Σ_i min(c_i, f_t) plus, per level, the smaller of
/// its holders' number and the number of its members (holders and the subscribers without
/// the extra that join it) with c_i > f_t.
fn keep_bound(x: &Shape<'_>, holder: &[bool], load: &[i64]) -> u64 {
    let claims = &x.claims;
    // Per level (a holder's load, ascending): its holders and its members that could keep
    // one claim more with the extra.
    let mut levels: Vec<(i64, u64, u64)> = Vec::new();
    let mut bound = 0u64;
    for (i, &c) in claims.iter().enumerate() {
        bound += c.min(x.floor);
        if holder[i] {
            match levels.binary_search_by_key(&load[i], |l| l.0) {
                Ok(l) => levels[l].1 += 1,
                Err(l) => levels.insert(l, (load[i], 1, 0)),
            }
        }
    }
    #[cfg(test)]
    let up = i64::from(!LEVEL_OFF.with(std::cell::Cell::get));
    #[cfg(not(test))]
    let up = 1;
    #[cfg(test)]
    let loose = LOOSE_BOUND.with(std::cell::Cell::get);
    #[cfg(not(test))]
    let loose = false;
    for (i, &c) in claims.iter().enumerate() {
        if c <= x.floor || loose {
            continue;
        }
        let key = if holder[i] { load[i] } else { load[i] + up };
        if let Ok(l) = levels.binary_search_by_key(&key, |l| l.0) {
            levels[l].2 += 1;
        }
    }
    bound + levels.iter().map(|l| l.1.min(l.2)).sum::<u64>()
}

/// The greedy step of the [module docs](self), for the counts `want`.
fn greedy(x: &Shape<'_>, want: Vec<u64>, scratch: &mut Scratch) -> Placement {
    let Scratch {
        transport,
        kept,
        left_over,
        room,
        keep,
        ..
    } = scratch;
    // Keeps, in claim order, up to each subscriber's count.
    kept.clear();
    kept.resize(want.len(), 0);
    let mut keep = std::mem::take(keep);
    keep.clear();
    keep.resize(x.plan.claims.len(), 0);
    left_over.clear();
    left_over.extend_from_slice(&x.supply);
    // One pass: each entry's keeps, its subscriber's and its group's left-over. As slices:
    // the loops index them more cheaply than the vectors behind references.
    let (want_at, kept_at, left_at) = (&want[..], &mut kept[..], &mut left_over[..]);
    let entries = x.plan.claims.iter().zip(x.entry_group).zip(keep.iter_mut());
    for ((&(i, _, count), &g), keep) in entries {
        let i = i as usize;
        let units = count.min(want_at[i] - kept_at[i]);
        *keep = units;
        kept_at[i] += units;
        left_at[g] -= units;
    }
    // The racks' room, filled by the groups' left-overs by a small maximum flow. Where it
    // cannot place them all, subscribers in the full racks the stuck units reach give up
    // kept claims that another rack with room can take (a few rounds).
    room.clear();
    room.resize(x.racks, 0);
    let room_at = &mut room[..];
    for ((&w, &kept), &r) in want.iter().zip(kept.iter()).zip(x.rack) {
        room_at[r] += w - kept;
    }
    let keeps = Keeps {
        claims: x.plan.claims,
        entry_group: x.entry_group,
        rack: x.rack,
        keep: &mut keep,
        kept,
    };
    transport.place_giving_up(&x.masks, left_over, room, keeps, PRESET_ROUNDS);
    Placement {
        want,
        keep,
        amount: std::mem::take(&mut transport.amount),
    }
}

/// The placement flow of the [module docs](self), warm-started with `start` (the greedy
/// for the counts of `holder`, the subscribers given the extra, at loads `load`; its keeps
/// per subscriber `kept`, as [`Placement::kept`] gives them). `None` if a capacity does not
/// fit.
fn refine(
    x: &Shape<'_>,
    holder: &[bool],
    load: &[i64],
    start: &Placement,
    kept: &[u64],
) -> Option<Placement> {
    let subs = holder.len();
    let racks = x.racks;
    let f = x.floor;
    let has_extra = holder.contains(&true);
    // The levels: the holders' loads, ascending, with their numbers.
    let mut levels: Vec<(i64, u64)> = Vec::new();
    for i in (0..subs).filter(|&i| holder[i]) {
        match levels.binary_search_by_key(&load[i], |l| l.0) {
            Ok(l) => levels[l].1 += 1,
            Err(l) => levels.insert(l, (load[i], 1)),
        }
    }
    // Nodes: the source, the groups (the free node last), the racks, the subscribers, the
    // levels, the sink: edges rise in number, as a cold solve wants.
    let groups = x.masks.len();
    let group = |g: usize| 1 + g as u32;
    let rack = |r: usize| (1 + groups + r) as u32;
    let sub = |i: usize| (1 + groups + racks + i) as u32;
    let level = |l: usize| (1 + groups + racks + subs + l) as u32;
    let sink = level(levels.len());
    let mut net = Network::new(sink as usize + 1);
    // The edges below, at most: per group its source edge and one per rack, per claim entry
    // its keep edge, per subscriber three, per level one.
    net.reserve(groups * (1 + racks) + x.plan.claims.len() + 3 * subs + levels.len());
    let mut to_rack = Vec::with_capacity(groups * racks);
    let (mut pool, mut sent) = (Vec::new(), Vec::new());
    start.pool(x, kept, &mut Vec::new(), &mut pool);
    start.sent(x, &mut sent);
    for (g, (&mask, &units)) in x.masks.iter().zip(&x.supply).enumerate() {
        if units == 0 {
            continue;
        }
        let c = cap(units)?;
        let id = net.edge(0, group(g), c, [0; 4]);
        net.preset(id, sent[g] as i32);
        let mut bits = mask;
        while bits != 0 {
            let r = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let id = net.edge(group(g), rack(r), c, [0; 4]);
            net.preset(id, start.amount[g * racks + r] as i32);
            to_rack.push((g, r, id));
        }
    }
    let mut keep_edge = Vec::with_capacity(x.plan.claims.len());
    for (e, &(i, _, count)) in x.plan.claims.iter().enumerate() {
        let id = net.edge(group(x.entry_group[e]), sub(i as usize), cap(count)?, KEEP);
        net.preset(id, start.keep[e] as i32);
        keep_edge.push(id);
    }
    let mut extra_edge = vec![None; subs];
    let mut extras = vec![0i32; levels.len()];
    for i in 0..subs {
        let id = net.edge(
            rack(x.rack[i]),
            sub(i),
            cap(f + u64::from(has_extra))?,
            [0; 4],
        );
        net.preset(id, pool[i] as i32);
        let total = kept[i] + pool[i];
        if f > 0 {
            let id = net.edge(sub(i), sink, cap(f)?, FLOOR);
            net.preset(id, total.min(f) as i32);
        }
        #[cfg(test)]
        let up = i64::from(!LEVEL_OFF.with(std::cell::Cell::get));
        #[cfg(not(test))]
        let up = 1;
        let key = if holder[i] { load[i] } else { load[i] + up };
        if let Ok(l) = levels.binary_search_by_key(&key, |l| l.0) {
            let id = net.edge(sub(i), level(l), 1, [0; 4]);
            let extra = total.saturating_sub(f) as i32;
            net.preset(id, extra);
            extras[l] += extra;
            extra_edge[i] = Some(id);
        }
    }
    for (l, &(_, holders)) in levels.iter().enumerate() {
        let id = net.edge(level(l), sink, cap(holders)?, [0; 4]);
        net.preset(id, extras[l]);
    }
    net.solve(0, sink);
    let want = extra_edge
        .iter()
        .map(|e| f + e.map_or(0, |id| net.flow(id) as u64))
        .collect();
    let keep = keep_edge.iter().map(|&id| net.flow(id) as u64).collect();
    let mut amount = vec![0u64; groups * racks];
    for (g, r, id) in to_rack {
        amount[g * racks + r] = net.flow(id) as u64;
    }
    Some(Placement { want, keep, amount })
}

/// Proposes the flow of the [module docs](self) for one topic's part of `net`, adding the
/// extras it hands out to the members' convex edges `member_edge`; `load` holds every local
/// member's load, updated with the exchanges of extras made here. `scratch` only lends its
/// buffers: what it held before does not matter.
// Never inlined: once LLVM inlined it into the caller (after a change in the caller), the
// caller's vector resizes were no longer inlined and cost far more than the call saves.
#[inline(never)]
pub(super) fn propose(
    net: &mut Network,
    plan: &TopicFlow<'_>,
    x: &Inputs<'_, '_>,
    member_edge: &[Option<usize>],
    load: &mut [i64],
    scratch: &mut Scratch,
) {
    let subs_local = &x.counts.subs[plan.lt];
    let racks = x.racks;
    let f = u64::from(plan.floor);
    // The free node sends to every rack of a subscriber: as a group, its mask is theirs.
    let present = plan.present;
    let mut masks = std::mem::take(&mut scratch.masks);
    masks.clear();
    masks.extend(plan.groups.iter().map(|g| g.0));
    masks.push(present);
    let mut supply = std::mem::take(&mut scratch.supply);
    supply.clear();
    supply.extend(plan.groups.iter().map(|g| g.1));
    supply.push(plan.free);
    let shape = Shape {
        plan,
        entry_group: plan.entry_group,
        masks,
        supply,
        rack: plan.sub_rack,
        racks,
        floor: f,
        claims: plan.total,
    };
    // Counts: the floor, plus the extra where `choose` gave one.
    let mut holder = std::mem::take(&mut scratch.holder);
    holder.clear();
    holder.resize(subs_local.len(), false);
    let mut want = std::mem::take(&mut scratch.want);
    want.clear();
    want.resize(subs_local.len(), f);
    for &i in &x.counts.chosen[plan.lt] {
        holder[i as usize] = true;
        want[i as usize] = f + 1;
    }
    let start = greedy(&shape, want, scratch);
    #[cfg(test)]
    let greedy_only = GREEDY_ONLY.with(std::cell::Cell::get);
    #[cfg(not(test))]
    let greedy_only = false;
    let mut kept = std::mem::take(&mut scratch.sub_kept);
    let mut sent = std::mem::take(&mut scratch.sent);
    // The greedy's keeps per subscriber, as it left them (its giving up takes each claim off
    // the entry and its subscriber together): what [`Placement::kept`] would add up again.
    std::mem::swap(&mut kept, &mut scratch.kept);
    #[cfg(test)]
    {
        let mut again = Vec::new();
        start.kept(&shape, &mut again);
        assert_eq!(again, kept, "the greedy's keeps per subscriber");
    }
    // Per group: what the greedy sends, its partitions less those it left over (its giving
    // up puts each claim back in its group) plus those it placed; [`Placement::sent`] adds
    // the keeps up again entry by entry.
    sent.clear();
    let left_over = &scratch.left_over;
    sent.extend(shape.supply.iter().zip(left_over).map(|(&s, &l)| s - l));
    for (s, amounts) in sent.iter_mut().zip(start.amount.chunks(racks.max(1))) {
        *s += amounts.iter().sum::<u64>();
    }
    #[cfg(test)]
    {
        let mut again = Vec::new();
        start.sent(&shape, &mut again);
        assert_eq!(again, sent, "the greedy's partitions sent per group");
    }
    // Whether every partition is placed.
    let placed = sent.iter().sum::<u64>() == shape.supply.iter().sum::<u64>();
    // Whether the placement flow replaced the greedy (whose counts are those of `holder`).
    let mut refined_counts = false;
    let placement = if greedy_only || (placed && start.settled(&shape, &holder, &kept)) {
        start
    } else {
        let mut sub_load = std::mem::take(&mut scratch.sub_load);
        sub_load.clear();
        sub_load.extend(subs_local.iter().map(|&lm| load[lm as usize]));
        #[cfg(test)]
        let bound_off = BOUND_OFF.with(std::cell::Cell::get);
        #[cfg(not(test))]
        let bound_off = false;
        let chosen = if placed && !bound_off && start.unbeatable(&shape, &holder, &sub_load) {
            #[cfg(test)]
            {
                UNBEATEN.with(|c| c.set(c.get() + 1));
                // The placement flow run all the same: it must keep no more claims.
                let units: u64 = start.keep.iter().sum();
                if refine(&shape, &holder, &sub_load, &start, &kept)
                    .is_some_and(|r| r.keep.iter().sum::<u64>() > units)
                {
                    BEATEN.with(|c| c.set(c.get() + 1));
                }
            }
            start
        } else if let Some(refined) = refine(&shape, &holder, &sub_load, &start, &kept) {
            refined.kept(&shape, &mut kept);
            refined.sent(&shape, &mut sent);
            refined_counts = true;
            refined
        } else {
            start
        };
        scratch.sub_load = sub_load;
        chosen
    };
    #[cfg(test)]
    let stale = STALE_LOADS.with(std::cell::Cell::get);
    #[cfg(not(test))]
    let stale = false;
    // The greedy hands out the extras as `holder` does: it moves no load.
    if refined_counts && !stale {
        for (i, &w) in placement.want.iter().enumerate() {
            let lm = subs_local[i] as usize;
            load[lm] += i64::from(w > f) - i64::from(holder[i]);
        }
    }

    let mut pool = std::mem::take(&mut scratch.pool);
    placement.pool(&shape, &kept, &mut scratch.into_rack, &mut pool);
    for (&units, &id) in placement.keep.iter().zip(plan.keep_edge) {
        if units > 0 {
            // Entries may share a keep edge: their units add up.
            net.add_preset(id, units as i32);
        }
    }
    for &(g, r, id) in plan.to_rack {
        let units = placement.amount[g * racks + r];
        if units > 0 {
            net.preset(id, units as i32);
        }
    }
    for (g, &id) in plan.source_edge.iter().enumerate() {
        net.preset(id, sent[g] as i32);
    }
    let mut plain_floor = std::mem::take(&mut scratch.plain_floor);
    plain_floor.clear();
    plain_floor.resize(racks, 0);
    // Zipped: indexing each per-subscriber slice checked its bounds at every subscriber.
    let subs = kept.iter().zip(&pool).zip(subs_local).zip(plan.pair);
    let edges = plan
        .pool_edge
        .iter()
        .zip(plan.floor_edge)
        .zip(plan.extra_edge);
    let subs = subs.zip(edges).zip(shape.rack);
    for (((((&kept, &pool), &lm), &pair), ((&pool_edge, &floor_edge), &extra_edge)), &r) in subs {
        let total = kept + pool;
        let extra = total.saturating_sub(f);
        let lm = lm as usize;
        if pair {
            if let Some(id) = pool_edge {
                net.preset(id, pool as i32);
            }
            if let Some(id) = floor_edge {
                net.preset(id, total.min(f) as i32);
            }
            if extra > 0
                && let Some(id) = extra_edge
            {
                net.preset(id, extra as i32);
            }
        } else {
            if let Some(floors) = plain_floor.get_mut(r) {
                *floors += total.min(f);
            }
            if extra > 0
                && let Some(id) = pool_edge
            {
                net.preset(id, extra as i32);
            }
        }
        if extra > 0
            && let Some(id) = member_edge[lm]
        {
            net.add_preset(id, extra as i32);
        }
    }
    for (r, &units) in plain_floor.iter().enumerate() {
        if let Some(id) = plan.plain_floor[r] {
            net.preset(id, units as i32);
        }
    }
    scratch.plain_floor = plain_floor;
    scratch.holder = holder;
    scratch.transport.amount = placement.amount;
    (scratch.want, scratch.keep) = (placement.want, placement.keep);
    (scratch.sub_kept, scratch.pool, scratch.sent) = (kept, pool, sent);
    let Shape { masks, supply, .. } = shape;
    (scratch.masks, scratch.supply) = (masks, supply);
}
