//! A cheap test, on racked components where every topic is *open* (0 < P_t < n, so f_t = 0),
//! that no assignment keeps every keepable claim while balancing and aligning every alignable
//! partition. When it holds, the repaired greedy cannot succeed and the rack-aware path goes
//! straight to the exact flow of extras ([`super::extras`]); it decides speed only, never a
//! result's optimality.
//!
//! # Why it is needed
//!
//! On the benchmark's racked homogeneous leave (99 members, 100 topics of 50 partitions) the
//! greedy with its repair works through all 100 topics and is refused at the last one: the
//! 50 freed partitions sit on one rack pair and fewer members of those racks than that hold
//! none of the topics concerned (see [`super::extras`]). That costs about a third of the
//! assignor's time before the exact flow runs anyway.
//!
//! # The test
//!
//! With f_t = 0 every member gets at most one partition of each topic. Let K_m count the
//! topics in which m has a keepable claim. An assignment that keeps every keepable claim
//! gives m one of its keepable claims in each of those K_m topics (at most one per topic:
//! with two claims in a topic it keeps one, its lowest here), and the *left-over* partitions
//! (every partition not so kept) to members with no keepable claim in that topic, one per
//! member and topic, aligned when alignable, with m's total c_m = q or q + 1 (s of them at
//! q + 1; step 1 of the [parent](super)). So such an assignment exists only if this flow has
//! full value:
//!
//! ```text
//! source → (t,g)      cap L_tg          left-over partitions of t of mask g (0: any rack)
//! (t,g) → (t,m)       cap 1             m has no keepable claim of t, runs in a rack of g
//! (t,m) → member m    cap 1             one partition of t at most
//! member m → sink     cap q − K_m;   member m → Z cap 1 (K_m ≤ q);   Z → sink cap s − #{K_m = q + 1}
//! ```
//!
//! Before the flow is built, the left-over partitions are placed one at a time on the next
//! member that may take one ([`first_fit`]): when that places them all it is a flow of full
//! value, and the answer is `false` at the cost of a scan (the usual case on leaves of large
//! groups, where keeping every claim is possible and the greedy then runs as before).
//!
//! The test says nothing (answers `false`) when some member has K_m > q + 1 or more than s
//! members have q + 1 (keeping every claim is not balanced), when a member has two keepable
//! claims in one topic (which one it keeps would decide the left-over partitions), or when
//! the left-over partitions outnumber the members (keeping the network small: on a leave
//! they are about one member's share).
//!
//! When the repaired greedy succeeds it keeps the claim of every gaining cell of a choice
//! meeting its bound, the most gaining cells of any balance-optimal choice. Where some
//! balance-optimal choice gives every claimant the extra of each of its topics, that is every
//! claim, and its success is an assignment keeping every claim: a flow of full value here. So
//! a flow short of full value means the greedy would fail. (Where no such choice exists the
//! greedy might still succeed with fewer claims; the exact flow then runs in its place, which
//! changes only the time taken.)
//! on a leave they are about one member's share.

use super::super::flow::Network;
use super::Context;

/// Whether, by the test of the module docs, no assignment keeps every keepable claim while
/// balanced and aligned. `false` also when the test does not apply (a topic not open, a
/// member in no rack, too many left-over partitions, a member with two keepable claims in
/// one topic, keeping every claim not balanced).
pub(super) fn keep_all_impossible(ctx: &Context<'_, '_>, member_bit: &[u64]) -> bool {
    let comp = ctx.comp;
    let n = comp.members.len();
    if n == 0 || member_bit.contains(&0) {
        return false;
    }
    // The left-over partitions counted from the lengths alone first (at least this many: a
    // member's second claim in a topic ends the test anyway), so that groups with none (a
    // join keeps every claim) or too many pay nothing more.
    let mut left_at_least = 0usize;
    for (i, &t) in comp.topics.iter().enumerate() {
        let count = ctx.topic_masks(i, t).len();
        left_at_least += count.saturating_sub(ctx.keepable[t as usize].len());
    }
    if left_at_least == 0 || left_at_least > n {
        return false;
    }
    let mut kept = vec![0u64; n];
    let mut total_extras = 0u64;
    // (topic index, mask, units) of the left-over partitions, and per topic the claimants.
    let mut left: Vec<(usize, u64, u64)> = Vec::new();
    let mut claimant = vec![u32::MAX; n];
    // The topics with left-over partitions.
    let mut topics_left: Vec<usize> = Vec::new();
    let mut left_units = 0u64;
    for (i, &t) in comp.topics.iter().enumerate() {
        let masks = ctx.topic_masks(i, t);
        if masks.is_empty() {
            continue;
        }
        if masks.len() >= n {
            return false;
        }
        total_extras += masks.len() as u64;
        let mut is_kept = vec![false; masks.len()];
        for &(p, m) in &ctx.keepable[t as usize] {
            let lm = ctx.index.get(comp, m);
            if claimant[lm] == i as u32 {
                // Two keepable claims in one topic: which one is kept could matter.
                return false;
            }
            claimant[lm] = i as u32;
            kept[lm] += 1;
            is_kept[p as usize] = true;
        }
        let start = left.len();
        let before = left_units;
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
        if left_units > n as u64 {
            return false;
        }
        if left_units > before {
            topics_left.push(i);
        }
    }
    let q = total_extras / n as u64;
    let s = total_extras % n as u64;
    let at_plus = kept.iter().filter(|&&k| k == q + 1).count() as u64;
    if kept.iter().any(|&k| k > q + 1) || at_plus > s {
        return false;
    }
    if left_units == 0 {
        return false;
    }
    #[cfg(test)]
    if tally::planted() {
        tally::add();
        return true;
    }
    if first_fit(ctx, member_bit, &left, &kept, q, s - at_plus) {
        return false;
    }
    // Per topic with left-over partitions: its index and the members that may take them.
    let mut pair_nodes: Vec<(usize, Vec<usize>)> = Vec::with_capacity(topics_left.len());
    for &i in &topics_left {
        for &(_, m) in &ctx.keepable[comp.topics[i] as usize] {
            claimant[ctx.index.get(comp, m)] = u32::MAX - 1;
        }
        let members = (0..n).filter(|&lm| claimant[lm] != u32::MAX - 1).collect();
        for &(_, m) in &ctx.keepable[comp.topics[i] as usize] {
            claimant[ctx.index.get(comp, m)] = u32::MAX;
        }
        pair_nodes.push((i, members));
    }

    // Nodes: source, the (t,g) groups, per topic with left-overs its eligible (t,m) nodes,
    // then members, Z, sink; numbers rise along every edge.
    let groups = left.len() as u32;
    let pairs: usize = pair_nodes.iter().map(|x| x.1.len()).sum();
    let member_base = 1 + groups + pairs as u32;
    let z = member_base + n as u32;
    let sink = z + 1;
    let mut net = Network::new(sink as usize + 1);
    let mut next_pair = 1 + groups;
    let mut g = 0usize;
    for (i, members) in &pair_nodes {
        let first_pair = next_pair;
        while g < left.len() && left[g].0 == *i {
            let (_, mask, units) = left[g];
            let Ok(c) = i32::try_from(units) else {
                return false;
            };
            let node = 1 + g as u32;
            net.edge(0, node, c, [0; 4]);
            for (k, &lm) in members.iter().enumerate() {
                if mask == 0 || mask & member_bit[lm] != 0 {
                    net.edge(node, first_pair + k as u32, 1, [0; 4]);
                }
            }
            g += 1;
        }
        for (k, &lm) in members.iter().enumerate() {
            net.edge(first_pair + k as u32, member_base + lm as u32, 1, [0; 4]);
        }
        next_pair += members.len() as u32;
    }
    for (lm, &k) in kept.iter().enumerate() {
        let node = member_base + lm as u32;
        if q > k {
            let Ok(c) = i32::try_from(q - k) else {
                return false;
            };
            net.edge(node, sink, c, [0; 4]);
        }
        if k <= q {
            net.edge(node, z, 1, [0; 4]);
        }
    }
    if s > at_plus {
        let Ok(c) = i32::try_from(s - at_plus) else {
            return false;
        };
        net.edge(z, sink, c, [0; 4]);
    }
    let value = net.solve(0, sink);
    let short = u64::try_from(value).ok() != Some(left_units);
    #[cfg(test)]
    if short {
        tally::add();
    }
    short
}

/// Whether placing the left-over partitions one at a time, each on the next member (in a
/// rotating order) that may take it, places them all: a flow of full value found without
/// building the network (the usual case where keeping every claim is possible, such as most
/// leaves of large groups). `z_places` is s less the members whose kept claims reach q + 1.
fn first_fit(
    ctx: &Context<'_, '_>,
    member_bit: &[u64],
    left: &[(usize, u64, u64)],
    kept: &[u64],
    q: u64,
    mut z_places: u64,
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
                claims_in[lm] != i
                    && took_in[lm] != i
                    && (mask == 0 || mask & member_bit[lm] != 0)
                    && (spare[lm] > 0 || (!plus[lm] && z_places > 0))
            });
            let Some(lm) = found else {
                return false;
            };
            took_in[lm] = i;
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

/// Test-only count of components on which the test found keeping every claim impossible.
#[cfg(test)]
pub(crate) mod tally {
    use std::cell::Cell;

    thread_local! {
        static COUNT: Cell<usize> = const { Cell::new(0) };
    }

    /// Counts one component.
    pub(super) fn add() {
        COUNT.with(|c| c.set(c.get() + 1));
    }

    /// Components found so far on this thread.
    pub(crate) fn get() -> usize {
        COUNT.with(Cell::get)
    }

    thread_local! {
        static PLANTED: Cell<bool> = const { Cell::new(false) };
    }

    /// Plants a fault on this thread: wherever the test applies it answers "impossible"
    /// without solving.
    pub(crate) fn plant(on: bool) {
        PLANTED.with(|c| c.set(on));
    }

    pub(super) fn planted() -> bool {
        PLANTED.with(Cell::get)
    }
}
