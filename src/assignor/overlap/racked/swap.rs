//! Moves of one topic's extras between its subscribers, tried by [`super::assign`] after the
//! topic's deal failed: the first repair, before exchanges across topics ([`super::exchange`]).

use super::super::super::aligned::transport::Transport;
use super::super::Counts;
use super::exchange::Scope;

/// After topic `lt`'s deal failed with `flow` unable to place some alignable partitions,
/// moves up to `flow.unplaced` of its extras from chosen members whose rack is not among
/// `flow.reached` (the full racks the unplaced groups can reach) to unchosen ones in those
/// racks, each from a member at load L + 1 to one at load L: the two loads trade places, so
/// the multiset of loads (balance) stays as it was. The giver gains nothing from its extra
/// (at most f_t keepable claims) or, only where no such move exists, giver and receiver both
/// gain from it, so the gaining cells used (Σ min(k_tm, c_tm)) stay as they were and the
/// counts stay optimal for both. Returns whether any extra moved.
pub(super) fn swap_extras(
    x: &Scope<'_, '_>,
    counts: &mut Counts,
    lt: usize,
    flow: &Transport,
) -> bool {
    let subs = &counts.subs[lt];
    let bits: Vec<u64> = subs.iter().map(|&lm| x.member_bit[lm as usize]).collect();
    let load = &mut counts.load;
    let mut chosen = vec![false; subs.len()];
    for &i in &counts.chosen[lt] {
        chosen[i as usize] = true;
    }
    // Receivers by load (the first in subscriber order for each load), then the first giver
    // with a receiver one unit lighter: one pass over each list per move. A giver that gains
    // nothing first; failing that, a gaining giver to a gaining receiver.
    let gaining = &counts.gaining[lt];
    let gains = |i: usize| gaining.get(i) == Some(&true);
    #[cfg(test)]
    let equal = super::EQUAL_LOADS.with(std::cell::Cell::get);
    #[cfg(not(test))]
    let equal = false;
    let mut moved = 0;
    while moved < flow.unplaced {
        let pair = |load: &[i64], giver_gains: bool| {
            let mut receivers: std::collections::BTreeMap<i64, usize> =
                std::collections::BTreeMap::new();
            for v in (0..subs.len()).filter(|&v| {
                !chosen[v] && bits[v] & flow.reached != 0 && (!giver_gains || gains(v))
            }) {
                receivers.entry(load[subs[v] as usize]).or_insert(v);
            }
            (0..subs.len())
                .filter(|&u| chosen[u] && bits[u] & flow.reached == 0 && gains(u) == giver_gains)
                .find_map(|u| {
                    let lighter = load[subs[u] as usize] - i64::from(!(giver_gains && equal));
                    receivers.get(&lighter).map(|&v| (u, v))
                })
        };
        let found = pair(load, false).or_else(|| pair(load, true));
        let Some((u, v)) = found else {
            break;
        };
        #[cfg(test)]
        if gains(u) {
            super::TRADED.with(|c| c.set(c.get() + 1));
        }
        chosen[u] = false;
        chosen[v] = true;
        load[subs[u] as usize] -= 1;
        load[subs[v] as usize] += 1;
        moved += 1;
    }
    counts.chosen[lt] = (0..subs.len() as u32)
        .filter(|&i| chosen[i as usize])
        .collect();
    moved > 0
}
