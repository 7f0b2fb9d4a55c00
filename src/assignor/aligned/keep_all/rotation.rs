//! The rotating placement of the left-over partitions (see the [parent module](super)).

use super::super::Context;
use super::planted_any_taker;

/// Whether placing the left-over partitions one at a time, each on the next member (in a
/// rotating order) that may take it, places them all: a flow of full value found without
/// building the network (the usual case where keeping every claim is possible, such as most
/// leaves of large groups). `z_places` is s less the members whose kept claims reach q + 1.
/// The taker of every unit (local id) is appended to `takers`, in `left` order.
pub(super) fn first_fit(
    ctx: &Context<'_, '_>,
    member_bit: &[u64],
    left: &[(usize, u64, u64)],
    kept: &[u64],
    (q, mut z_places): (u64, u64),
    takers: &mut Vec<u32>,
    local: impl Fn(u32) -> usize,
) -> bool {
    let comp = ctx.comp;
    let n = comp.members.len();
    let planted = planted_any_taker();
    let mut spare: Vec<u64> = kept.iter().map(|&k| q.saturating_sub(k)).collect();
    // Whether a member has used its place at q + 1 (its kept claims may already fill it).
    let mut plus: Vec<bool> = kept.iter().map(|&k| k > q).collect();
    let has_room = |lm: usize, spare: &[u64], plus: &[bool], z_places: u64| {
        spare[lm] > 0 || (!plus[lm] && z_places > 0)
    };
    // The members with room, ascending: the rotation visits only them, in the same order as
    // it would every member (one without room takes nothing, and room only shrinks). On a
    // join of a large group that is the joiner alone where the rotation passed every member.
    let mut roomy: Vec<u32> = (0..n)
        .filter(|&lm| planted || has_room(lm, &spare, &plus, z_places))
        .map(|lm| lm as u32)
        .collect();
    // The topic a member claims in (marked per topic) or took a partition of.
    let mut claims_in = vec![usize::MAX; n];
    let mut took_in = vec![usize::MAX; n];
    let mut cursor = 0usize;
    let mut current = usize::MAX;
    for &(i, mask, units) in left {
        if i != current {
            current = i;
            for &(_, m) in &ctx.keepable[comp.topics[i] as usize] {
                claims_in[local(m)] = i;
            }
        }
        for _ in 0..units {
            let start = roomy.partition_point(|&lm| (lm as usize) < cursor);
            let (after, before) = (&roomy[start..], &roomy[..start]);
            let found = after.iter().chain(before).position(|&lm| {
                let lm = lm as usize;
                took_in[lm] != i
                    && (planted || claims_in[lm] != i && (mask == 0 || mask & member_bit[lm] != 0))
            });
            let Some(at) = found.map(|j| (start + j) % roomy.len()) else {
                return false;
            };
            let lm = roomy[at] as usize;
            took_in[lm] = i;
            takers.push(lm as u32);
            cursor = lm + 1;
            if planted {
                continue;
            }
            if spare[lm] > 0 {
                spare[lm] -= 1;
            } else {
                plus[lm] = true;
                z_places -= 1;
                if z_places == 0 {
                    roomy.retain(|&lm| spare[lm as usize] > 0);
                    continue;
                }
            }
            if !has_room(lm, &spare, &plus, z_places) {
                roomy.remove(at);
            }
        }
    }
    true
}
