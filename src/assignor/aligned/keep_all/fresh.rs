//! The [placement](super) on a *first* assignment (no keepable claim), steered by rack
//! quotas: on racked components where every topic is open, a cheaper way than the repaired
//! greedy to a choice of extras that aligns every alignable partition.
//!
//! # Why it is needed
//!
//! On the benchmark's racked 100m × 10ppm × 1000t full assignment (one partition per topic,
//! every partition on two of three racks) the rotation of [`super::super::quick_extras`]
//! runs out of room on some rack about a tenth of the way through, and the repaired greedy
//! then ranks every member for every topic and checks every topic's small flow: about half
//! of the call. The rotating placement of [`super::first_fit`] alone fails the same way
//! (it fills racks in the order units come, not in proportion to what they must take).
//!
//! # The placement
//!
//! With no claim every partition is left over: E = Σ P_t units, q = ⌊E/n⌋, s = E mod n.
//! One [`Transport`] over the whole component first decides how many alignable units of each
//! mask each rack takes (rack r takes at most |r|·q + min(|r|, s), masks in ascending order).
//! Then, per topic in `comp.topics` order and per mask in the order masks first appear among
//! its partitions, each unit goes to the first member, in local id order from just after the
//! member that took the previous unit (wrapping around), that took nothing in that topic, has
//! a place left (below q, else the next of the s places at q + 1) and runs in a rack with
//! quota left for the mask (for mask 0: a rack whose room exceeds the quotas still owed to
//! it). A failure (the quotas need more places at q + 1 than s, or a rack's members already
//! took the topic) proves nothing: the caller goes on to the repaired greedy as before.
//!
//! # The certificate
//!
//! That of [`super`] with no claim (K_m = 0, U = 0): every unit goes to exactly one member,
//! at most one per member and topic (spread), no member above q + 1 and at most s at q + 1
//! with loads adding up to E (balance), every alignable unit to a member in one of its
//! replica racks, as the transport only sends a mask to its own racks (rack alignment: every
//! alignable partition, the most possible), and there is nothing to keep. So the result is
//! optimal for objectives 1–5 whenever every unit is placed.
//!
//! # Tie rule (objective 6)
//!
//! The transport's split of each mask over racks (direct sends in rack order first, then
//! augmenting paths), then the rotation above; within a topic a mask's partitions, ascending,
//! go to its takers in the order they were found. All of it reads only the canonical order.

use super::super::Context;
use super::super::transport::Transport;
use super::{left_over, written};

/// The placement of the module docs on `comp` (every topic open, every member racked, no
/// keepable claim), appended to `lists` only when every unit is placed; `true` then.
pub(in super::super) fn place(
    ctx: &Context<'_, '_>,
    member_bit: &[u64],
    lists: &mut [Vec<(u32, i32)>],
) -> bool {
    let comp = ctx.comp;
    let n = comp.members.len();
    if n == 0 || member_bit.contains(&0) {
        return false;
    }
    let mut total = 0usize;
    for (i, &t) in comp.topics.iter().enumerate() {
        let count = ctx.topic_masks(i, t).len();
        if count >= n || !ctx.keepable[t as usize].is_empty() {
            return false;
        }
        total += count;
    }
    // O(units × n) at most, as in the placement with claims.
    if total == 0 || total > n.max(comp.topics.len()) {
        return false;
    }
    let (q, s) = ((total / n) as u64, (total % n) as u64);
    let (left, _) = left_over(ctx, &[]);
    let Some(quota) = quotas(ctx, &left, q, s) else {
        return false;
    };
    let mut takers: Vec<u32> = Vec::with_capacity(total);
    if !quota_fit(ctx, member_bit, &left, quota, q, s, &mut takers) {
        #[cfg(test)]
        tally::add(tally::FAILED);
        return false;
    }
    #[cfg(test)]
    tally::add(tally::PLACED);
    written(ctx, &left, &[], &takers, lists) == super::Placement::Placed
}

/// Units of each non-zero mask each rack takes: masks ascending with their quota per rack
/// (`racks` entries each), or `None` when the racks cannot take every alignable unit.
fn quotas(ctx: &Context<'_, '_>, left: &[(usize, u64, u64)], q: u64, s: u64) -> Option<Quota> {
    let mut masks: Vec<u64> = left.iter().map(|x| x.1).filter(|&m| m != 0).collect();
    masks.sort_unstable();
    masks.dedup();
    let mut supply = vec![0u64; masks.len()];
    for &(_, mask, units) in left {
        if let Ok(g) = masks.binary_search(&mask) {
            supply[g] += units;
        }
    }
    let capacity: Vec<u64> = ctx
        .rack_members
        .iter()
        .map(|ms| ms.len() as u64 * q + s.min(ms.len() as u64))
        .collect();
    let mut flow = Transport::default();
    if !flow.solve(&masks, &supply, &capacity) {
        return None;
    }
    let racks = capacity.len();
    let mut owed = vec![0u64; racks];
    for (k, &amount) in flow.amount.iter().enumerate() {
        owed[k % racks] += amount;
    }
    Some(Quota {
        masks,
        left: flow.amount,
        owed,
        room: capacity,
    })
}

/// The transport's split, counted down as units are placed.
struct Quota {
    /// Non-zero masks, ascending.
    masks: Vec<u64>,
    /// Units of mask g still owed to rack r, at `g * racks + r`.
    left: Vec<u64>,
    /// Per rack: units of all masks still owed to it.
    owed: Vec<u64>,
    /// Per rack: units it may still take.
    room: Vec<u64>,
}

/// Places every unit of `left` as the module docs say, appending each unit's taker (local
/// id) to `takers` in `left` order; `false` when some unit finds no taker.
fn quota_fit(
    ctx: &Context<'_, '_>,
    member_bit: &[u64],
    left: &[(usize, u64, u64)],
    mut quota: Quota,
    q: u64,
    mut z_places: u64,
    takers: &mut Vec<u32>,
) -> bool {
    let n = ctx.comp.members.len();
    let racks = quota.room.len();
    let mut load = vec![0u64; n];
    let mut took_in = vec![usize::MAX; n];
    let mut cursor = 0usize;
    for &(i, mask, units) in left {
        let g = quota.masks.binary_search(&mask).ok();
        for _ in 0..units {
            let found = (0..n).map(|j| (cursor + j) % n).find(|&lm| {
                let r = member_bit[lm].trailing_zeros() as usize;
                let rack_ok = planted()
                    || match g {
                        Some(g) => quota.left[g * racks + r] > 0,
                        None => quota.room[r] > quota.owed[r],
                    };
                took_in[lm] != i && rack_ok && (load[lm] < q || (load[lm] == q && z_places > 0))
            });
            let Some(lm) = found else {
                return false;
            };
            let r = member_bit[lm].trailing_zeros() as usize;
            if let Some(g) = g
                && quota.left[g * racks + r] > 0
            {
                quota.left[g * racks + r] -= 1;
                quota.owed[r] -= 1;
            }
            quota.room[r] = quota.room[r].saturating_sub(1);
            if load[lm] == q {
                z_places -= 1;
            }
            load[lm] += 1;
            took_in[lm] = i;
            takers.push(lm as u32);
            cursor = lm + 1;
        }
    }
    true
}

/// Whether the planted fault of [`tally::plant`] is on (never outside tests).
fn planted() -> bool {
    #[cfg(test)]
    return tally::planted();
    #[cfg(not(test))]
    false
}

/// Test-only counts of components on which the placement succeeded or failed, and a planted
/// fault: the quotas are ignored, so a unit may go to a member in none of its racks.
#[cfg(test)]
pub(crate) mod tally {
    /// Components on which the placement placed every unit.
    pub(crate) const PLACED: usize = 0;
    /// Components on which it ran and failed.
    pub(crate) const FAILED: usize = 1;

    crate::assignor::tests::counts_and_fault!(2);
}
