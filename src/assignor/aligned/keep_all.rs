//! A cheap placement, on racked components where every topic is *open* (0 < P_t < n, so
//! f_t = 0), of the partitions left over when every keepable claim is kept (or, where that
//! is not balanced, as many as any balance-optimal assignment can keep), balancing and
//! aligning every alignable partition. When it places them all, its result is returned: it
//! is optimal for objectives 1–5 (see the certificate below). When it fails keeping every
//! claim, [`exchange`] finds exactly how few claims must move and, when its one-for-one
//! exchanges are found, returns a placement moving only that many (its own certificate);
//! otherwise the repaired greedy is not run and the rack-aware path goes straight to the
//! flow of extras ([`super::extras`]), which is exact on such components and whose warm
//! start is this very placement ("every claim kept", then the rest in the same rotation).
//!
//! # Why it is needed
//!
//! On the benchmark's racked homogeneous leave (99 members, 100 topics of 50 partitions) the
//! greedy with its repair works through all 100 topics and is refused at the last one: the
//! 50 freed partitions sit on one rack pair and fewer members of those racks than that hold
//! none of the topics concerned (see [`super::extras`]). That costs about a third of the
//! assignor's time before the exact flow runs anyway. Where the placement succeeds (most
//! leaves and joins of large groups) the greedy, its repair and the deal of every topic are
//! skipped: on the racked 1000m × 50ppm × 100t leave and join they were about half the
//! instructions of the call.
//!
//! # The placement
//!
//! With f_t = 0 every member gets at most one partition of each topic. Let K_m count the
//! topics in which m has a keepable claim (at most one claim per topic: with two the
//! placement does not apply), E = Σ P_t, q = ⌊E/n⌋, s = E mod n. Every balance-optimal
//! assignment gives m a total c_m of q or q + 1, s members q + 1 (step 1 of the
//! [parent](super)), so it keeps at most min(K_m, c_m) of m's claims and in all at most
//! U = Σ_m min(K_m, q) + min(s, #{m : K_m > q}). The placement keeps exactly that many:
//! a member with K_m > q + 1 releases K_m − q − 1 claims, and where more than s members are
//! then at q + 1, that many more members release one claim each ([`release`] chooses which:
//! of masks that some member with room can take, spread over topics). The *left-over*
//! partitions (every partition not kept: unclaimed, claimed but not keepable, released) go
//! to members with no keepable claim in that topic, one per member and topic, aligned when
//! alignable, no member above q + 1 and at most s members at q + 1, placed one at a time on
//! the next member, in a rotating order, that may take one ([`first_fit`]).
//!
//! # The certificate
//!
//! When the placement places every left-over partition, the result is optimal for
//! objectives 1–5. (1, 2) Every partition goes to exactly one member, and no member gets two
//! partitions of a topic (its kept claim and its takings are in distinct topics, at most one
//! taking per topic), so with f_t = 0 the spread is optimal. (3) No member ends above q + 1
//! and at most s end at q + 1; as the loads add up to E = nq + s, exactly s are at q + 1 and
//! the rest at q: balance-optimal. (4) Kept claims are keepable and left-over partitions go
//! to a member in one of their replica racks when alignable, so every alignable partition is
//! aligned: the most any assignment can. (5) Then every assignment optimal for 1–4 aligns
//! every alignable partition, so every claim it keeps is keepable, and being balance-optimal
//! it keeps at most U; this one keeps U (every keepable claim where nothing is released).
//!
//! A failure keeping every claim is not a proof that no assignment keeps every claim (a
//! placement in another order might succeed), and needs none: [`exchange`] then computes
//! the maximum flow that decides it, and where its exchanges are not found the flow of extras that then
//! runs is exact without any bound where every topic is open and every member is racked, so
//! either answer leads to an optimal result. Where keeping every claim is impossible the
//! greedy would fail anyway: when it succeeds it keeps the claim of every gaining cell of a
//! choice meeting its bound, and where some balance-optimal choice gives every claimant the
//! extra of each of its topics, that success would be an assignment keeping every claim,
//! which [`first_fit`] might have found. (An earlier version built the maximum flow over the
//! left-over partitions to prove impossibility before skipping the greedy; on the benchmark
//! it never disagreed with the placement's failure and cost an eighth of the racked leave's
//! time.) A failure with claims released says nothing (another choice of releases might
//! have placed), so the greedy runs as before. But where [`release`] finds no claims to
//! release (a member over q + 1 whose every claim has a mask no member with room runs in,
//! as on the benchmark's racked 100m × 50ppm × 1000t join: 20 members of a bucket over
//! q + 1, room only on the joiner), [`Placement::Failed`] sends the component straight to
//! the flow of extras as well: it is exact there without a bound, and the repaired greedy
//! was refused on every such component of the benchmark, costing a fifth of that join's
//! instructions before the same flow ran.
//!
//! The placement is not tried ([`Placement::Untried`]) when the component has no keepable
//! claim (a first assignment, where the repaired greedy usually succeeds), when a member has
//! two keepable claims in one topic (which one it keeps would decide the left-over
//! partitions), when nothing is left over or released (the [settled](super::super::settled)
//! case), or when more partitions are left over
//! and released than the component has topics and members (the placement is O(left-over
//! partitions × n), which keeps it below the size of the flow of extras; the small flow it
//! replaced stopped beyond n, which on the benchmark's racked 100m × 50ppm × 1000t leave,
//! 50 partitions over components of 20 members and 200 topics, let the greedy run to its
//! refusal first).
//!
//! # Tie rule (objective 6)
//!
//! Where [`exchange`]'s placement is returned, its tie rule. Otherwise every keepable claim
//! is kept but those [`release`] picks: the members above q + 1 release
//! their claims in topic order, and where members at q + 1 must come down to q, each topic
//! in `comp.topics` order lets go the claims of members owing a release, then of the members
//! at q + 1 with the fewest claims left to release in later topics, then in partition order,
//! up to the number of members with room, of masks they can take. Per topic in
//! `comp.topics` order, the left-over partitions are grouped by mask in the order each mask
//! first appears among them (partitions ascending); each unit goes to the first member, in
//! local id order from just after the member that took the previous unit (wrapping around),
//! that has no keepable claim and took nothing in that topic, runs in one of the mask's racks
//! (any rack for mask 0) and has a place left (below q, else the next of the s places at
//! q + 1). A group's partitions, ascending, go to its takers in the order they were found.
//! All of it reads only the canonical [`super::Problem`] order.

use super::super::components::LocalIndex;
use super::Context;

mod bounded;
mod exchange;
pub(super) mod floored;
pub(super) mod fresh;
mod rotation;

use bounded::{keep_smallest, push_bounded};
#[cfg(test)]
pub(crate) use exchange::tally as exchange_tally;
use rotation::first_fit;

/// What [`place`] did.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Placement {
    /// The placement does not apply (see the module docs); nothing was written.
    Untried,
    /// It did not place every left-over partition keeping every claim, or found no claims
    /// to release where some must be; nothing was written (the flow of extras runs instead
    /// of the greedy).
    Failed,
    /// Every keepable claim kept and every left-over partition placed, appended to `lists`:
    /// optimal for objectives 1–5 (the certificate of the module docs).
    Placed,
}

/// The placement of the module docs on `comp` (every topic open, every member racked),
/// appending the result to `lists` (global member ids, `(topic, partition)` pairs) only
/// when it is [`Placement::Placed`].
/// Whether the component holds every member of the group, ids 0..n in order: then a
/// member's id is its own local index, and no table need be read.
fn is_identity(ctx: &Context<'_, '_>) -> bool {
    ctx.comp
        .members
        .iter()
        .enumerate()
        .all(|(lm, &m)| m as usize == lm)
}

pub(super) fn place(
    ctx: &Context<'_, '_>,
    member_bit: &[u64],
    lists: &mut [Vec<(u32, i32)>],
) -> Placement {
    // The passes over every claim read members' positions: from the dense table directly
    // where there is one, its variant checked once here rather than once per claim (the
    // same positions as `LocalIndex::get`).
    match ctx.index {
        _ if is_identity(ctx) => place_with(ctx, member_bit, lists, |m| m as usize),
        LocalIndex::Dense(table) => {
            place_with(ctx, member_bit, lists, |m| table[m as usize] as usize)
        }
        LocalIndex::Search => place_with(ctx, member_bit, lists, |m| ctx.index.get(ctx.comp, m)),
    }
}

/// [`place`], with `local` the position of a member in the component.
fn place_with(
    ctx: &Context<'_, '_>,
    member_bit: &[u64],
    lists: &mut [Vec<(u32, i32)>],
    local: impl Fn(u32) -> usize + Copy,
) -> Placement {
    let comp = ctx.comp;
    let n = comp.members.len();
    if n == 0 || member_bit.contains(&0) {
        return Placement::Untried;
    }
    // The left-over partitions counted from the lengths alone first (at least this many: a
    // member's second claim in a topic ends the test anyway), so that groups with none (a
    // join keeps every claim) or too many pay nothing more.
    let mut left_at_least = 0usize;
    let mut claims = 0usize;
    for (i, &t) in comp.topics.iter().enumerate() {
        let count = ctx.topic_masks(i, t).len();
        left_at_least += count.saturating_sub(ctx.keepable[t as usize].len());
        claims += ctx.keepable[t as usize].len();
    }
    // With nothing to keep (a first assignment) the placement's failure says nothing about
    // the greedy, whose repair usually makes its choice fit: on the racked 100m x 10ppm x
    // 1000t full assignment skipping it made the call three times slower.
    if claims == 0 {
        return Placement::Untried;
    }
    let mut kept = vec![0u64; n];
    let mut total_extras = 0u64;
    // The topic each member last claimed in, to find two claims in one topic.
    let mut claimant = vec![u32::MAX; n];
    for (i, &t) in comp.topics.iter().enumerate() {
        let count = ctx.topic_masks(i, t).len();
        if count >= n {
            return Placement::Untried;
        }
        total_extras += count as u64;
        for &(_, m) in &ctx.keepable[t as usize] {
            let lm = local(m);
            if claimant[lm] == i as u32 {
                // Two keepable claims in one topic: which one is kept could matter.
                return Placement::Untried;
            }
            claimant[lm] = i as u32;
            kept[lm] += 1;
        }
    }
    let q = total_extras / n as u64;
    let s = total_extras % n as u64;
    // Where keeping every claim is not balanced, the members above q + 1 release claims down
    // to q + 1, and where more than s members are then at q + 1, that many more claims are
    // released, one per member, by members at q + 1 that `release` picks.
    let mut release_count = vec![0u64; n];
    let mut released = 0u64;
    let mut over = 0u64;
    for (lm, k) in kept.iter_mut().enumerate() {
        if *k > q + 1 {
            release_count[lm] = *k - q - 1;
            released += *k - q - 1;
            *k = q + 1;
        }
        over += u64::from(*k == q + 1);
    }
    let one_more = over.saturating_sub(s);
    released += one_more;
    // The placement takes at most n steps per left-over partition: with at most n of them
    // that is n² (the limit of the flow this placement replaced), with at most one per topic
    // no more than the flow of extras has edges (about n per topic).
    let left_total = left_at_least as u64 + released;
    if left_total == 0 || left_total > n.max(comp.topics.len()) as u64 {
        return Placement::Untried;
    }
    let mut dropped: Vec<(usize, i32)> = Vec::new();
    if released > 0
        && !release(
            ctx,
            member_bit,
            &mut kept,
            (q, s),
            (&mut release_count, one_more),
            &mut dropped,
            local,
        )
    {
        #[cfg(test)]
        tally::add(tally::NO_RELEASE);
        return Placement::Failed;
    }
    let (left, left_units) = left_over(ctx, &dropped);
    let at_plus = kept.iter().filter(|&&k| k == q + 1).count() as u64;
    let mut takers: Vec<u32> = Vec::with_capacity(left_units as usize);
    let placed = first_fit(
        ctx,
        member_bit,
        &left,
        &kept,
        (q, s - at_plus),
        &mut takers,
        local,
    );
    #[cfg(test)]
    {
        tally::add(tally::PLACED);
        if released > 0 {
            tally::add(tally::RELEASED);
        } else if !placed {
            tally::add(tally::FAILED);
        }
    }
    if !placed && released > 0 {
        // Claims released by `release`'s choice say nothing of the greedy.
        return Placement::Untried;
    }
    if !placed {
        // Keeping every claim was not placed this way: the fewest claims that must move,
        // exactly, and a placement moving that many (see `exchange`), else the flow of extras.
        let Some(done) = exchange::exchange(ctx, member_bit, &left, &kept, q, s - at_plus) else {
            return Placement::Failed;
        };
        let (left, _) = left_over(ctx, &done.dropped);
        takers.clear();
        for &(i, mask, _) in &left {
            let from = done.takers.partition_point(|x| (x.0, x.1) < (i, mask));
            let to = done.takers.partition_point(|x| (x.0, x.1) <= (i, mask));
            takers.extend(done.takers[from..to].iter().map(|x| x.2));
        }
        if takers.len() != done.takers.len() {
            return Placement::Failed;
        }
        return written(ctx, &left, &done.dropped, &takers, lists);
    }
    written(ctx, &left, &dropped, &takers, lists)
}

/// [`write`], undone and [`Placement::Untried`] where it fails.
fn written(
    ctx: &Context<'_, '_>,
    left: &[(usize, u64, u64)],
    dropped: &[(usize, i32)],
    takers: &[u32],
    lists: &mut [Vec<(u32, i32)>],
) -> Placement {
    let comp = ctx.comp;
    let before = super::lengths(comp, lists);
    if !write(ctx, left, dropped, takers, lists) {
        super::restore(comp, &before, lists);
        return Placement::Untried;
    }
    #[cfg(test)]
    tally::add(tally::RETURNED);
    Placement::Placed
}

/// (topic index, mask, units) of the left-over partitions (every partition but the keepable
/// claims not in `dropped`, (topic index, partition) sorted), masks of a topic in the order
/// they first appear, and their number.
fn left_over(ctx: &Context<'_, '_>, dropped: &[(usize, i32)]) -> (Vec<(usize, u64, u64)>, u64) {
    let comp = ctx.comp;
    let mut left: Vec<(usize, u64, u64)> = Vec::new();
    let mut left_units = 0u64;
    let mut is_kept: Vec<bool> = Vec::new();
    let mut drops = dropped.iter().peekable();
    for (i, &t) in comp.topics.iter().enumerate() {
        let masks = ctx.topic_masks(i, t);
        // Every partition claimed keepably (one claim per partition) and none released:
        // nothing of the topic is left over (every topic of a join of a settled group).
        if ctx.keepable[t as usize].len() == masks.len() && drops.peek().is_none_or(|d| d.0 != i) {
            continue;
        }
        is_kept.clear();
        is_kept.resize(masks.len(), false);
        for &(p, _) in &ctx.keepable[t as usize] {
            is_kept[p as usize] = true;
        }
        while let Some(&(_, p)) = drops.next_if(|d| d.0 == i) {
            is_kept[p as usize] = false;
        }
        let start = left.len();
        for (p, &mask) in masks.iter().enumerate() {
            if is_kept[p] {
                continue;
            }
            left_units += 1;
            match left[start..].iter_mut().find(|x| x.1 == mask) {
                Some(x) => x.2 += 1,
                None => left.push((i, mask, 1)),
            }
        }
    }
    (left, left_units)
}

/// Chooses which keepable claims the members release, appending them as (topic index,
/// partition) in topic order to `dropped` and lowering `kept`: `count` per local member
/// (brought to 0), then one claim each of `one_more` further members at q + 1 (`q_s` is
/// (q, s)). A claim may be released when its mask is 0 or meets a rack of a member with a
/// place left (below q, or at q while a place at q + 1 is free); each topic releases at most
/// as many as there are such members (each takes at most one partition of a topic). Topic by
/// topic, the claims owed (`count`) go first, then those of the members with the fewest such
/// claims in the topics still to come (then in partition order). `false` when claims are
/// still owed after every topic (the placement then fails, see the module docs). The choice only steers
/// the placement: its result is certified by the bound whatever is released.
fn release(
    ctx: &Context<'_, '_>,
    member_bit: &[u64],
    kept: &mut [u64],
    (q, s): (u64, u64),
    (count, mut one_more): (&mut [u64], u64),
    dropped: &mut Vec<(usize, i32)>,
    local: impl Fn(u32) -> usize,
) -> bool {
    let comp = ctx.comp;
    let at_plus = kept.iter().filter(|&&k| k == q + 1).count() as u64 - one_more;
    let plus_free = at_plus < s;
    let mut racks = 0u64;
    let mut takers = 0usize;
    for (lm, &k) in kept.iter().enumerate() {
        if k < q || (k == q && plus_free) {
            racks |= member_bit[lm];
            takers += 1;
        }
    }
    let may = |mask: u64| mask == 0 || mask & racks != 0;
    let can = |lm: usize, kept: &[u64], count: &[u64], one_more: u64| {
        count[lm] > 0 || (one_more > 0 && kept[lm] == q + 1)
    };
    // Per member: whether it may release a claim (fixed until it releases one or
    // `one_more` runs out, so read from this table rather than re-derived for every claim),
    // and the claims it may release in the topics not yet passed, counted without a branch
    // per claim: this pass reads every keepable claim of the component.
    let mut state: Vec<(bool, u64)> = (0..count.len())
        .map(|lm| (can(lm, kept, count, one_more), 0))
        .collect();
    for (i, &t) in comp.topics.iter().enumerate() {
        let masks = ctx.topic_masks(i, t);
        for &(p, m) in &ctx.keepable[t as usize] {
            let (able, options) = &mut state[local(m)];
            *options += u64::from(*able & may(masks[p as usize]));
        }
    }
    let mut owed: u64 = count.iter().sum();
    // (optional, options, partition, member) of the topic's candidates.
    let mut candidates: Vec<(bool, u64, i32, usize)> = Vec::new();
    let few_takers = takers <= FEW_TAKERS;
    for (i, &t) in comp.topics.iter().enumerate() {
        if owed == 0 && one_more == 0 {
            break;
        }
        let masks = ctx.topic_masks(i, t);
        candidates.clear();
        for &(p, m) in &ctx.keepable[t as usize] {
            let lm = local(m);
            let (able, options) = &mut state[lm];
            if *able && may(masks[p as usize]) {
                let candidate = (count[lm] == 0, *options, p, lm);
                if few_takers {
                    push_bounded(&mut candidates, candidate, takers);
                } else {
                    candidates.push(candidate);
                }
                *options -= 1;
            }
        }
        // Only the first `takers` in order are read: those are selected before sorting (the
        // candidates are distinct, so which they are and their order do not change). With
        // few takers (a join: the joiners) they were kept in order as they came, where
        // every candidate of the topic was pushed and then selected among.
        if !few_takers {
            keep_smallest(&mut candidates, takers);
            candidates.sort_unstable();
        }
        let start = dropped.len();
        let had_one_more = one_more > 0;
        for &(optional, _, p, lm) in candidates.iter().take(takers) {
            if optional {
                if one_more == 0 {
                    break;
                }
                one_more -= 1;
            } else {
                count[lm] -= 1;
                owed -= 1;
            }
            kept[lm] -= u64::from(optional);
            dropped.push((i, p));
            state[lm].0 = can(lm, kept, count, one_more);
        }
        if had_one_more && one_more == 0 {
            // Members at q + 1 owing nothing may no longer release.
            for (lm, (able, _)) in state.iter_mut().enumerate() {
                *able = count[lm] > 0;
            }
        }
        dropped[start..].sort_unstable();
    }
    owed == 0 && one_more == 0
}

/// At most this many takers per topic: [`release`] keeps a topic's best candidates in order
/// as they come ([`push_bounded`]) rather than selecting among all of them.
const FEW_TAKERS: usize = 8;

/// Appends the placement to `lists`: every keepable claim, and the left-over partitions of
/// each entry of `left` ((topic index, mask, units), per topic in the order masks first
/// appear, as [`place`] built it), ascending, to that entry's `takers` (local ids, in
/// `left` order) in turn. `false` (with part of it written) if a left-over partition has no
/// entry, an entry more partitions than units or a topic with no entry a released claim,
/// which the way [`place`] counts them rules out.
fn write(
    ctx: &Context<'_, '_>,
    left: &[(usize, u64, u64)],
    dropped: &[(usize, i32)],
    takers: &[u32],
    lists: &mut [Vec<(u32, i32)>],
) -> bool {
    let comp = ctx.comp;
    // Per entry of the current topic: where its takers are next read, and where they end.
    let mut next: Vec<usize> = Vec::new();
    let mut end: Vec<usize> = Vec::new();
    let mut entry = 0usize;
    let mut taker = 0usize;
    let mut is_kept: Vec<bool> = Vec::new();
    // The released claims are read in order: `d` is the next one's position.
    let mut d = 0usize;
    for (i, &t) in comp.topics.iter().enumerate() {
        let masks = ctx.topic_masks(i, t);
        let claims = &ctx.keepable[t as usize];
        if entry == left.len() || left[entry].0 != i {
            // Nothing of the topic is left over (so none of its claims is released, else it
            // would be): every claim is kept.
            if dropped.get(d).is_some_and(|x| x.0 == i) {
                return false;
            }
            for &(p, m) in claims {
                lists[m as usize].push((t, p));
            }
            continue;
        }
        is_kept.clear();
        is_kept.resize(masks.len(), false);
        // Released claims come in partition order, as the claims do: the next one's
        // partition if it is of this topic (else -1, no partition's number), compared with
        // each claim's.
        let next_drop = |d: usize| dropped.get(d).filter(|x| x.0 == i).map_or(-1, |x| x.1);
        let mut drop_p = next_drop(d);
        for &(p, m) in claims {
            if p == drop_p {
                d += 1;
                drop_p = next_drop(d);
                continue;
            }
            is_kept[p as usize] = true;
            lists[m as usize].push((t, p));
        }
        let start = entry;
        next.clear();
        end.clear();
        while entry < left.len() && left[entry].0 == i {
            next.push(taker);
            taker += left[entry].2 as usize;
            end.push(taker);
            entry += 1;
        }
        let entries = &left[start..entry];
        for (p, &mask) in masks.iter().enumerate() {
            if is_kept[p] {
                continue;
            }
            let Some(e) = entries.iter().position(|x| x.1 == mask) else {
                return false;
            };
            let Some(&lm) = takers.get(next[e]).filter(|_| next[e] < end[e]) else {
                return false;
            };
            next[e] += 1;
            lists[comp.members[lm as usize] as usize].push((t, p as i32));
        }
    }
    d == dropped.len()
}

/// Whether the planted fault of [`tally::plant`] is on (never outside tests).
fn planted_any_taker() -> bool {
    #[cfg(test)]
    return tally::planted();
    #[cfg(not(test))]
    false
}

/// Test-only counts of components on which the placement ran and failed, and a planted
/// fault: the placement gives a left-over partition to any member that took none of its topic
/// yet (claims, racks and room ignored), so it may claim to keep every claim where that is
/// impossible, and its result may be unbalanced, unaligned or give a member two partitions of
/// a topic.
#[cfg(test)]
pub(crate) mod tally {
    /// Components on which the placement ran.
    pub(crate) const PLACED: usize = 0;
    /// Components on which it failed keeping every claim (the greedy was skipped).
    pub(crate) const FAILED: usize = 1;
    /// Components on which it ran with claims released (keeping every claim unbalanced).
    pub(crate) const RELEASED: usize = 2;
    /// Components whose result is the placement's.
    pub(crate) const RETURNED: usize = 3;
    /// Components on which `release` found no claims to release (sent to the flow of extras).
    pub(crate) const NO_RELEASE: usize = 4;

    crate::assignor::tests::counts_and_fault!(5);
}
