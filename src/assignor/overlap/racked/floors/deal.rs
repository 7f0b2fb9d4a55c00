//! The deal of one solved topic of the [parent](super)'s network: which partitions each
//! subscriber gets, as its tie rule says.

use super::super::super::super::aligned::transport::rack_share;
use super::topic::Grouping;
use super::{Inputs, TopicFlow};

/// Buffers the deal keeps from topic to topic; their contents never outlive a topic.
#[derive(Default)]
pub(super) struct Scratch {
    taken: Vec<bool>,
    left: Vec<u64>,
    first: Vec<usize>,
    order: Vec<u32>,
    next: Vec<usize>,
    bucket: Vec<i32>,
    /// Per group (the free node last): its partitions left over, ascending.
    groups: Vec<Vec<i32>>,
    grouping: Grouping,
}

/// `v` cleared and refilled with `len` copies of `value`, its allocation kept; as a slice,
/// which the loops below index more cheaply than the vector behind a reference.
fn refill<T: Clone>(v: &mut Vec<T>, len: usize, value: T) -> &mut [T] {
    v.clear();
    v.resize(len, value);
    v
}

/// Deals one solved topic as the tie rule of the [parent's docs](super) says; `false` if the
/// flow's counts do not add up (conservation rules it out). `scratch` only lends its buffers.
// Never inlined, for the reason [`super::preset::propose`] is not.
#[inline(never)]
pub(super) fn deal(
    x: &Inputs<'_, '_>,
    plan: &TopicFlow<'_>,
    lists: &mut [Vec<(u32, i32)>],
    scratch: &mut Scratch,
) -> bool {
    let t = plan.topic;
    let masks = &x.masks[plan.lt];
    let subs = &x.problem.subscribers[t as usize];
    let racks = x.racks;
    let Scratch {
        taken,
        left,
        first,
        order,
        next,
        bucket,
        groups,
        grouping,
    } = scratch;
    let taken = refill(taken, masks.len(), false);
    // Units each claim entry still keeps.
    left.clear();
    left.extend_from_slice(plan.kept);
    let left = &mut left[..];
    for (&(p, m), &e) in x.keepable[t as usize].iter().zip(plan.claim_entry) {
        let Some(left) = left.get_mut(e as usize) else {
            return false;
        };
        if *left > 0 {
            *left -= 1;
            taken[p as usize] = true;
            lists[m as usize].push((t, p));
        }
    }
    // Any unit left: one or over all (no branch per entry).
    if left.iter().fold(0, |any, &u| any | u) != 0 {
        return false;
    }
    let k = plan.groups.len();
    // The partitions not kept, by group (the free node last), ascending.
    if groups.len() < k + 1 {
        groups.resize_with(k + 1, Vec::new);
    }
    let groups = &mut groups[..k + 1];
    for group in groups.iter_mut() {
        group.clear();
    }
    grouping.index(plan.groups, racks, masks.len());
    let table = grouping.table();
    for (p, (&mask, &kept)) in masks.iter().zip(taken.iter()).enumerate() {
        if kept {
            continue;
        }
        let g = if mask == 0 {
            k
        } else {
            let Some(g) = grouping.find_in(table, plan.groups, mask) else {
                return false;
            };
            g
        };
        groups[g].push(p as i32);
    }
    let groups = &groups[..];
    // Subscriber indices by rack, then id: a counting sort of the ascending indices (racks
    // are few; a comparison sort here was a twentieth of the whole assignor on full groups).
    // Only the subscribers taking something from their rack are sorted: the others get
    // nothing there (on the joins and leaves, most keep all they get).
    let (rack, takes) = (plan.sub_rack, plan.takes);
    let first = refill(first, racks + 1, 0);
    let mut takers = 0;
    for (&r, &take) in rack.iter().zip(takes) {
        let Some(count) = first.get_mut(r + 1) else {
            return false;
        };
        let taker = usize::from(take > 0);
        *count += taker;
        takers += taker;
    }
    for r in 0..racks {
        first[r + 1] += first[r];
    }
    let order = refill(order, takers, 0);
    for (i, (&r, &take)) in rack.iter().zip(takes).enumerate() {
        if take > 0 {
            order[first[r]] = i as u32;
            first[r] += 1;
        }
    }
    // Now `first[r]` ends rack r's run of `order` (and starts rack r + 1's).
    let next = refill(next, k + 1, 0);
    let mut start = 0;
    for r in 0..racks {
        if !rack_share(groups, plan.amount, racks, r, next, bucket) {
            return false;
        }
        let mut from = 0;
        for &i in &order[start..first[r]] {
            let list = &mut lists[subs[i as usize] as usize];
            let want = plan.takes[i as usize] as usize;
            let Some(share) = bucket.get(from..from + want) else {
                return false;
            };
            list.extend(share.iter().map(|&p| (t, p)));
            from += want;
        }
        if from != bucket.len() {
            return false;
        }
        start = first[r];
    }
    start == takers && next.iter().zip(groups).all(|(&used, g)| used == g.len())
}
