//! The deal of an open topic as the rack-aware flow of extras chose it (the tie rule of
//! the [parent](super)).

use super::super::super::components::{Component, LocalIndex};
use super::super::transport::rack_share;
use super::OpenTopic;

/// Deals an open topic `t` as [`choose`](super::choose)'s flow says, appending to `lists`: each keeper
/// keeps its lowest keepable claim of the mask the flow chose; the rest by mask ascending;
/// each rack's pool takes, from each group in mask order, the lowest partitions the flow
/// sends it, and hands them ascending to its takers in id order; members in no rack take
/// what is left, ascending. `false` (with part of it written) if the flow's counts do not
/// add up, which the flow's conservation rules out.
#[allow(clippy::too_many_arguments)]
pub(in super::super) fn deal_open(
    open: &OpenTopic,
    comp: &Component,
    index: &LocalIndex,
    masks: &[u64],
    keepable: &[(i32, u32)],
    racks: usize,
    lists: &mut [Vec<(u32, i32)>],
) -> bool {
    let t = open.topic;
    let mut taken = vec![false; masks.len()];
    let mut want: Vec<(u32, u64)> = open.keeps.clone();
    // Keepers: the lowest claim of the chosen mask (claims are ascending by partition).
    for &(p, m) in keepable {
        let lm = index.get(comp, m) as u32;
        if let Ok(i) = want.binary_search_by_key(&lm, |w| w.0)
            && want[i].1 == masks[p as usize]
            && !taken[p as usize]
        {
            taken[p as usize] = true;
            want[i].1 = u64::MAX;
            lists[m as usize].push((t, p));
        }
    }
    if want.iter().any(|w| w.1 != u64::MAX) {
        return false;
    }
    // The rest by group.
    let mut groups: Vec<Vec<i32>> = vec![Vec::new(); open.masks.len()];
    let last = open.masks.len() - 1;
    for (p, &mask) in masks.iter().enumerate() {
        if taken[p] {
            continue;
        }
        let g = if mask == 0 {
            last
        } else {
            match open.masks[..last].binary_search(&mask) {
                Ok(g) => g,
                Err(_) => return false,
            }
        };
        groups[g].push(p as i32);
    }
    let mut next = vec![0usize; groups.len()];
    let mut bucket: Vec<i32> = Vec::new();
    let mut from = 0;
    for r in 0..racks {
        let takers = &open.takers[from..];
        let takers = &takers[..takers.partition_point(|x| x.0 as usize == r)];
        from += takers.len();
        if !rack_share(&groups, &open.amount, racks, r, &mut next, &mut bucket)
            || bucket.len() != takers.len()
        {
            return false;
        }
        for (&(_, lm), &p) in takers.iter().zip(&bucket) {
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
