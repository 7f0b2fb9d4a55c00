//! A cheap placement, on racked components where every topic is *open* (0 < P_t < n, so
//! f_t = 0), of the partitions left over when every keepable claim is kept, balancing and
//! aligning every alignable partition. When it places them all, its result is returned: it
//! is optimal for objectives 1–5 (see the certificate below). When it fails, the repaired
//! greedy is not run and the rack-aware path goes straight to the flow of extras
//! ([`super::extras`]), which is exact on such components and whose warm start is this very
//! placement ("every claim kept", then the rest in the same rotation).
//!
//! # Why it is needed
//!
//! On the benchmark's racked homogeneous leave (99 members, 100 topics of 50 partitions) the
//! greedy with its repair works through all 100 topics and is refused at the last one: the
//! 50 freed partitions sit on one rack pair and fewer members of those racks than that hold
//! none of the topics concerned (see [`super::extras`]). That costs about a third of the
//! assignor's time before the exact flow runs anyway. Where the placement succeeds (most
//! leaves of large groups) the greedy, its repair and the deal of every topic are skipped:
//! on the racked 1000m × 50ppm × 100t leave they were about two thirds of the call.
//!
//! # The placement
//!
//! With f_t = 0 every member gets at most one partition of each topic. Let K_m count the
//! topics in which m has a keepable claim. An assignment that keeps every keepable claim
//! gives m one of its keepable claims in each of those K_m topics (at most one per topic:
//! with two claims in a topic the placement does not apply), and the *left-over* partitions
//! (every partition not so kept) to members with no keepable claim in that topic, one per
//! member and topic, aligned when alignable, with m's total c_m = q or q + 1 (s of them at
//! q + 1; step 1 of the [parent](super)). The left-over partitions are placed one at a time
//! on the next member, in a rotating order, that may take one ([`first_fit`]).
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
//! every alignable partition, so every claim it keeps is keepable; this one keeps every
//! keepable claim, the most any can.
//!
//! A failure is not a proof that no assignment keeps every claim (a placement in another
//! order might succeed), and needs none: the flow of extras that then runs is exact without
//! any bound where every topic is open and every member is racked, so either answer leads to
//! an optimal result. Where keeping every claim is impossible the greedy would fail anyway:
//! when it succeeds it keeps the claim of every gaining cell of a choice meeting its bound,
//! and where some balance-optimal choice gives every claimant the extra of each of its
//! topics, that success would be an assignment keeping every claim, which [`first_fit`]
//! might have found. (An earlier version built the maximum flow over the left-over
//! partitions to prove impossibility before skipping the greedy; on the benchmark it never
//! disagreed with the placement's failure and cost an eighth of the racked leave's time.)
//!
//! The placement is not tried ([`Placement::Untried`]) when the component has no keepable
//! claim (a first assignment, where the repaired greedy usually succeeds), when some member
//! has K_m > q + 1 or more than s members have q + 1 (keeping every claim is not balanced),
//! when a member has two keepable claims in one topic (which one it keeps would decide the
//! left-over partitions), when nothing is left over (keeping every claim is then the
//! [settled](super::super::settled) case or unbalanced), or when more partitions are left
//! over than the component has topics and members (the placement is O(left-over partitions
//! × n), which keeps it below the size of the flow of extras; the small flow it replaced
//! stopped beyond n, which on the benchmark's racked 100m × 50ppm × 1000t leave, 50
//! partitions over components of 20 members and 200 topics, let the greedy run to its
//! refusal first).
//!
//! # Tie rule (objective 6)
//!
//! Every keepable claim is kept. Per topic in `comp.topics` order, the left-over partitions
//! are grouped by mask in the order each mask first appears among them (partitions
//! ascending); each unit goes to the first member, in local id order from just after the
//! member that took the previous unit (wrapping around), that has no keepable claim and took
//! nothing in that topic, runs in one of the mask's racks (any rack for mask 0) and has a
//! place left (below q, else the next of the s places at q + 1). A group's partitions,
//! ascending, go to its takers in the order they were found. All of it reads only the
//! canonical [`super::Problem`] order.

use super::Context;

/// What [`place`] did.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Placement {
    /// The placement does not apply (see the module docs); nothing was written.
    Untried,
    /// It did not place every left-over partition; nothing was written (the flow of extras
    /// runs instead of the greedy).
    Failed,
    /// Every keepable claim kept and every left-over partition placed, appended to `lists`:
    /// optimal for objectives 1–5 (the certificate of the module docs).
    Placed,
}

/// The placement of the module docs on `comp` (every topic open, every member racked),
/// appending the result to `lists` (global member ids, `(topic, partition)` pairs) only
/// when it is [`Placement::Placed`].
pub(super) fn place(
    ctx: &Context<'_, '_>,
    member_bit: &[u64],
    lists: &mut [Vec<(u32, i32)>],
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
    // The placement takes at most n steps per left-over partition: with at most n of them
    // that is n² (the limit of the flow this placement replaced), with at most one per topic
    // no more than the flow of extras has edges (about n per topic).
    if left_at_least == 0 || left_at_least > n.max(comp.topics.len()) {
        return Placement::Untried;
    }
    let mut kept = vec![0u64; n];
    let mut total_extras = 0u64;
    // (topic index, mask, units) of the left-over partitions, and the topic each member
    // claims in (marked per topic).
    let mut left: Vec<(usize, u64, u64)> = Vec::new();
    let mut claimant = vec![u32::MAX; n];
    let mut left_units = 0u64;
    for (i, &t) in comp.topics.iter().enumerate() {
        let masks = ctx.topic_masks(i, t);
        if masks.is_empty() {
            continue;
        }
        if masks.len() >= n {
            return Placement::Untried;
        }
        total_extras += masks.len() as u64;
        let mut is_kept = vec![false; masks.len()];
        for &(p, m) in &ctx.keepable[t as usize] {
            let lm = ctx.index.get(comp, m);
            if claimant[lm] == i as u32 {
                // Two keepable claims in one topic: which one is kept could matter.
                return Placement::Untried;
            }
            claimant[lm] = i as u32;
            kept[lm] += 1;
            is_kept[p as usize] = true;
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
    let q = total_extras / n as u64;
    let s = total_extras % n as u64;
    let at_plus = kept.iter().filter(|&&k| k == q + 1).count() as u64;
    if kept.iter().any(|&k| k > q + 1) || at_plus > s {
        return Placement::Untried;
    }
    if left_units == 0 {
        return Placement::Untried;
    }
    let mut takers: Vec<u32> = Vec::with_capacity(left_units as usize);
    let placed = first_fit(ctx, member_bit, &left, &kept, q, s - at_plus, &mut takers);
    #[cfg(test)]
    {
        tally::add(tally::PLACED);
        if !placed {
            tally::add(tally::FAILED);
        }
    }
    if !placed {
        return Placement::Failed;
    }
    let before = super::lengths(comp, lists);
    if !write(ctx, &left, &takers, lists) {
        super::restore(comp, &before, lists);
        return Placement::Failed;
    }
    Placement::Placed
}

/// Appends the placement to `lists`: every keepable claim, and the left-over partitions of
/// each entry of `left` ((topic index, mask, units), per topic in the order masks first
/// appear, as [`place`] built it), ascending, to that entry's `takers` (local ids, in
/// `left` order) in turn. `false` (with part of it written) if a left-over partition has no
/// entry or an entry more partitions than units, which the way [`place`] counts them rules
/// out.
fn write(
    ctx: &Context<'_, '_>,
    left: &[(usize, u64, u64)],
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
    for (i, &t) in comp.topics.iter().enumerate() {
        let keepable = &ctx.keepable[t as usize];
        for &(p, m) in keepable {
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
        if entries.is_empty() {
            continue;
        }
        let masks = ctx.topic_masks(i, t);
        is_kept.clear();
        is_kept.resize(masks.len(), false);
        for &(p, _) in keepable {
            is_kept[p as usize] = true;
        }
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
    true
}

/// Whether placing the left-over partitions one at a time, each on the next member (in a
/// rotating order) that may take it, places them all: a flow of full value found without
/// building the network (the usual case where keeping every claim is possible, such as most
/// leaves of large groups). `z_places` is s less the members whose kept claims reach q + 1.
/// The taker of every unit (local id) is appended to `takers`, in `left` order.
fn first_fit(
    ctx: &Context<'_, '_>,
    member_bit: &[u64],
    left: &[(usize, u64, u64)],
    kept: &[u64],
    q: u64,
    mut z_places: u64,
    takers: &mut Vec<u32>,
) -> bool {
    let comp = ctx.comp;
    let n = comp.members.len();
    let mut spare: Vec<u64> = kept.iter().map(|&k| q.saturating_sub(k)).collect();
    // Whether a member has used its place at q + 1 (its kept claims may already fill it).
    let mut plus: Vec<bool> = kept.iter().map(|&k| k > q).collect();
    // The topic a member claims in (marked per topic) or took a partition of.
    let mut claims_in = vec![usize::MAX; n];
    let mut took_in = vec![usize::MAX; n];
    let mut cursor = 0usize;
    let mut current = usize::MAX;
    for &(i, mask, units) in left {
        if i != current {
            current = i;
            for &(_, m) in &ctx.keepable[comp.topics[i] as usize] {
                claims_in[ctx.index.get(comp, m)] = i;
            }
        }
        for _ in 0..units {
            let found = (0..n).map(|j| (cursor + j) % n).find(|&lm| {
                took_in[lm] != i
                    && (planted_any_taker()
                        || claims_in[lm] != i
                            && (mask == 0 || mask & member_bit[lm] != 0)
                            && (spare[lm] > 0 || (!plus[lm] && z_places > 0)))
            });
            let Some(lm) = found else {
                return false;
            };
            took_in[lm] = i;
            takers.push(lm as u32);
            if planted_any_taker() {
                cursor = lm + 1;
                continue;
            }
            if spare[lm] > 0 {
                spare[lm] -= 1;
            } else {
                plus[lm] = true;
                z_places -= 1;
            }
            cursor = lm + 1;
        }
    }
    true
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
    /// Components on which it failed (the greedy was skipped).
    pub(crate) const FAILED: usize = 1;

    crate::assignor::tests::counts_and_fault!(2);
}
