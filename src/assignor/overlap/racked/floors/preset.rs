//! The warm start proposed to the solver for the exact flow of the [parent](super): the
//! counts of [`super::super::super::choose`] (balance-optimal), every subscriber keeping its
//! keepable claims up to its count, and the partitions left over sent greedily to the racks
//! that can align them (narrowest masks first), as far as the racks' room goes; what does not
//! fit stays at the source. The solver uses the proposal only if it can certify it (see
//! [`super::super::super::super::flow`]), so it decides the speed, never the result: a
//! cold solve climbs through every load level one phase at a time, this one starts near the
//! optimum and leaves only the units the greedy could not place.

use super::super::super::super::aligned::transport::Transport;
use super::super::super::super::flow::Network;
use super::{Inputs, TopicFlow};

/// How many times a topic's keeps are loosened before the proposal leaves units unplaced.
const PRESET_ROUNDS: usize = 4;

/// Proposes the flow of the [module docs](self) for one topic's part of `net`, adding the
/// extras it hands out to the members' convex edges `member_edge`.
pub(super) fn propose(
    net: &mut Network,
    plan: &TopicFlow,
    x: &Inputs<'_, '_>,
    member_edge: &[Option<usize>],
) {
    let subs_local = &x.counts.subs[plan.lt];
    let racks = x.racks;
    let f = u64::from(plan.floor);
    let rack_of = |i: usize| x.member_bit[subs_local[i] as usize].trailing_zeros() as usize;
    let k = plan.groups.len();
    let group_of = |mask: u64| {
        if mask == 0 {
            Some(k)
        } else {
            plan.groups.binary_search_by_key(&mask, |g| g.0).ok()
        }
    };
    // Counts: the floor, plus the extra where `choose` gave one.
    let mut want = vec![f; subs_local.len()];
    for &i in &x.counts.chosen[plan.lt] {
        want[i as usize] += 1;
    }
    // Keeps, in claim order, up to each subscriber's count.
    let mut kept = vec![0u64; want.len()];
    let mut keep = vec![0u64; plan.claims.len()];
    let mut entry_group = Vec::with_capacity(plan.claims.len());
    for (e, &(i, mask, count)) in plan.claims.iter().enumerate() {
        let i = i as usize;
        let Some(g) = group_of(mask) else {
            return;
        };
        entry_group.push(g);
        keep[e] = count.min(want[i] - kept[i]);
        kept[i] += keep[e];
    }
    // The free node sends to every rack of a subscriber: as a group, its mask is theirs.
    let present = subs_local
        .iter()
        .fold(0u64, |acc, &lm| acc | x.member_bit[lm as usize]);
    let mut masks: Vec<u64> = plan.groups.iter().map(|g| g.0).collect();
    let mut left_over: Vec<u64> = plan.groups.iter().map(|g| g.1).collect();
    masks.push(present);
    left_over.push(plan.free);
    for (e, &g) in entry_group.iter().enumerate() {
        left_over[g] -= keep[e];
    }
    // The racks' room, filled by the groups' left-overs by a small maximum flow. Where it
    // cannot place them all, subscribers in the full racks the stuck units reach give up
    // kept claims that another rack with room can take (a few rounds): the exchange the
    // racked certificate lacks.
    let mut room = vec![0u64; racks];
    for (i, (&w, &kept)) in want.iter().zip(&kept).enumerate() {
        room[rack_of(i)] += w - kept;
    }
    let mut transport = Transport::default();
    for round in 0..=PRESET_ROUNDS {
        // The last round only solves, so that the amounts match the keeps.
        if transport.solve(&masks, &left_over, &room) || round == PRESET_ROUNDS {
            break;
        }
        let reached = transport.reached;
        let mut wanted = transport.unplaced;
        for (e, &(i, _, _)) in plan.claims.iter().enumerate() {
            let (i, g) = (i as usize, entry_group[e]);
            if wanted == 0 {
                break;
            }
            let bit = 1u64 << rack_of(i);
            if keep[e] > 0 && bit & reached != 0 && masks[g] & !reached != 0 {
                keep[e] -= 1;
                kept[i] -= 1;
                left_over[g] += 1;
                room[rack_of(i)] += 1;
                wanted -= 1;
            }
        }
        if wanted == transport.unplaced {
            break;
        }
    }
    let mut kept_of_group = vec![0u64; k + 1];
    for (e, &g) in entry_group.iter().enumerate() {
        if keep[e] > 0 {
            net.preset(plan.keep_edge[e], keep[e] as i32);
            kept_of_group[g] += keep[e];
        }
    }
    let mut into_rack = vec![0u64; racks];
    let mut placed = vec![0u64; masks.len()];
    for &(g, r, id) in &plan.to_rack {
        let amount = transport.amount[g * racks + r];
        if amount > 0 {
            net.preset(id, amount as i32);
            into_rack[r] += amount;
            placed[g] += amount;
        }
    }
    for (g, &id) in plan.source_edge.iter().enumerate() {
        net.preset(id, (kept_of_group[g] + placed[g]) as i32);
    }
    // Each rack's units to its subscribers: floors first, then extras, in id order.
    let mut pool = vec![0u64; want.len()];
    for fill_extras in [false, true] {
        for i in 0..want.len() {
            let r = rack_of(i);
            let cap = if fill_extras { want[i] } else { f.max(kept[i]) };
            let take = cap.saturating_sub(kept[i] + pool[i]).min(into_rack[r]);
            pool[i] += take;
            into_rack[r] -= take;
        }
    }
    let mut plain_floor = vec![0u64; racks];
    for i in 0..want.len() {
        let total = kept[i] + pool[i];
        let extra = total.saturating_sub(f);
        let lm = subs_local[i] as usize;
        if plan.pair[i] {
            if let Some(id) = plan.pool_edge[i] {
                net.preset(id, pool[i] as i32);
            }
            if let Some(id) = plan.floor_edge[i] {
                net.preset(id, total.min(f) as i32);
            }
            if extra > 0
                && let Some(id) = plan.extra_edge[i]
            {
                net.preset(id, extra as i32);
            }
        } else {
            plain_floor[rack_of(i)] += total.min(f);
            if extra > 0
                && let Some(id) = plan.pool_edge[i]
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
}
