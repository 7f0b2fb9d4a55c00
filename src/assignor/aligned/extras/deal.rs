//! The deal of an open topic as the rack-aware flow of extras chose it (the tie rule of
//! the [parent](super)).

use super::super::super::components::{Component, LocalIndex};
use super::super::super::racks::search_masks;
use super::super::transport::rack_share;
use super::chosen::OpenView;

/// Deals an open topic `t` as [`choose`](super::choose)'s flow says, appending to `lists`: each keeper
/// keeps its lowest keepable claim of the mask the flow chose; the rest by mask ascending;
/// each rack's pool takes, from each group in mask order, the lowest partitions the flow
/// sends it, and hands them ascending to its takers in id order; members in no rack take
/// what is left, ascending. `false` (with part of it written) if the flow's counts do not
/// add up, which the flow's conservation rules out.
#[allow(clippy::too_many_arguments)]
pub(in super::super) fn deal_open(
    open: &OpenView<'_>,
    comp: &Component,
    index: &LocalIndex,
    masks: &[u64],
    keepable: &[(i32, u32)],
    racks: usize,
    lists: &mut [Vec<(u32, i32)>],
    buffers: &mut OpenBuffers,
) -> bool {
    let t = open.topic;
    let OpenBuffers {
        taken,
        want,
        keeper,
        groups,
        next,
        bucket,
    } = buffers;
    taken.clear();
    taken.resize(masks.len(), false);
    want.clear();
    want.extend_from_slice(open.keeps);
    // Per local member: its entry in `want` (`open.keeps` has one per member at most, by
    // member ascending, so this is where a search of `want` by member finds it).
    keeper.resize(comp.members.len(), NO_KEEP);
    for (i, &(lm, _)) in want.iter().enumerate() {
        keeper[lm as usize] = i as u32;
    }
    // Keepers: the lowest claim of the chosen mask (claims are ascending by partition).
    for &(p, m) in keepable {
        let lm = index.get(comp, m);
        if let Some(&i) = keeper.get(lm).filter(|&&i| i != NO_KEEP)
            && want[i as usize].1 == masks[p as usize]
            && !taken[p as usize]
        {
            taken[p as usize] = true;
            want[i as usize].1 = u64::MAX;
            lists[m as usize].push((t, p));
        }
    }
    for &(lm, _) in want.iter() {
        keeper[lm as usize] = NO_KEEP;
    }
    if want.iter().any(|w| w.1 != u64::MAX) {
        return false;
    }
    // The rest by group.
    for group in groups.iter_mut() {
        group.clear();
    }
    groups.resize_with(open.masks.len(), Vec::new);
    let last = open.masks.len() - 1;
    for (p, &mask) in masks.iter().enumerate() {
        if taken[p] {
            continue;
        }
        let g = if mask == 0 {
            last
        } else {
            match search_masks(&open.masks[..last], mask, |&m| m) {
                Ok(g) => g,
                Err(_) => return false,
            }
        };
        groups[g].push(p as i32);
    }
    let groups = &groups[..open.masks.len()];
    next.clear();
    next.resize(groups.len(), 0);
    let mut from = 0;
    for r in 0..racks {
        let takers = &open.takers[from..];
        let takers = &takers[..takers.partition_point(|x| x.0 as usize == r)];
        from += takers.len();
        if !rack_share(groups, open.amount, racks, r, next, bucket) || bucket.len() != takers.len()
        {
            return false;
        }
        for (&(_, lm), &p) in takers.iter().zip(bucket.iter()) {
            lists[comp.members[lm as usize] as usize].push((t, p));
        }
    }
    let free_takers = &open.takers[from..];
    let rest = &groups[last][next[last]..];
    if rest.len() != free_takers.len() || (0..last).any(|g| next[g] != groups[g].len()) {
        return false;
    }
    for (&(_, lm), &p) in free_takers.iter().zip(rest) {
        lists[comp.members[lm as usize] as usize].push((t, p));
    }
    true
}

/// No entry in [`OpenBuffers::keeper`].
const NO_KEEP: u32 = u32::MAX;

/// Buffers [`deal_open`] reuses from topic to topic (it runs once per open topic).
#[derive(Default)]
pub(in super::super) struct OpenBuffers {
    /// Per partition: kept by its keeper.
    taken: Vec<bool>,
    /// (keeper, mask of the claim it still has to keep, `u64::MAX` once kept).
    want: Vec<(u32, u64)>,
    /// Per local member: its keep's entry, or [`NO_KEEP`] (so between topics).
    keeper: Vec<u32>,
    /// The partitions not kept, by group (the free node's last); only the first
    /// `open.masks.len()` are the current topic's.
    groups: Vec<Vec<i32>>,
    next: Vec<usize>,
    bucket: Vec<i32>,
}
