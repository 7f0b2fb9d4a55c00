//! Chains of two for the units of the [parent](super)'s proposal that fit nowhere after the
//! rotation (the module docs there say when they are needed and what they cost).

use super::super::super::super::flow::Network;
use super::super::super::super::racks::search_masks;
use super::super::{Plan, TopicEdges};
use super::{Room, SinkEdges};

/// Units that fit nowhere after the rotation, placed by chains of two: a member A of a
/// rack of the unit's mask that has nothing of its topic yet takes it and gives up a claim
/// it kept in another topic j, which a member B with room, in a rack of the claim's mask and
/// with nothing of j, takes instead. A's load stays, B's grows by one (see the parent's
/// docs for the benchmark's racked leave, where these are needed).
pub(super) struct Chains<'a, 'b> {
    pub(super) plans: &'a [Plan<'b>],
    pub(super) edges: &'a [TopicEdges<'b>],
    pub(super) member_edges: &'a [usize],
    pub(super) sinks: &'a SinkEdges,
    pub(super) member_bit: &'a [u64],
}

impl Chains<'_, '_> {
    /// Places what it can of `short`'s (plan, group, units) by chains of two.
    pub(super) fn place(&self, net: &mut Network, room: &mut Room, short: &[(usize, usize, u64)]) {
        #[cfg(test)]
        if super::tally::chains_planted() {
            return;
        }
        let n = self.member_bit.len();
        // Members with room, ids ascending; a member is dropped once full.
        let mut open: Vec<usize> = (0..n).filter(|&b| room.has(self.sinks, b)).collect();
        // Each member's claims kept, (plan, keep edge, mask) plans ascending, member after
        // member from `starts[m]`: a counting sort of the keep edges with a unit.
        let mut starts = vec![0usize; n + 1];
        for e in self.edges {
            for k in e.keep.iter().filter(|k| net.preset_on(k.2) > 0) {
                starts[k.0 as usize + 1] += 1;
            }
        }
        for m in 0..n {
            starts[m + 1] += starts[m];
        }
        let mut claims = vec![(0usize, 0usize, 0u64); starts[n]];
        let mut next = starts.clone();
        for (j, e) in self.edges.iter().enumerate() {
            for k in e.keep.iter().filter(|k| net.preset_on(k.2) > 0) {
                claims[next[k.0 as usize]] = (j, k.2, k.1);
                next[k.0 as usize] += 1;
            }
        }
        let claims = Claims { starts, claims };
        for &(i, g, units) in short {
            let mask = self.mask(i, g);
            for _ in 0..units {
                if open.is_empty() {
                    return;
                }
                let Some((a, j, keep, b)) = self.find(net, &claims, i, mask, &open) else {
                    break;
                };
                let Some(gj) = self.group(j, keep.1) else {
                    break;
                };
                let keep = keep.0;
                let (ei, ej) = (&self.edges[i], &self.edges[j]);
                let rack = |x: usize| self.member_bit[x].trailing_zeros() as usize;
                let (Some(from_source), Some(into_a), Some(into_b)) = (
                    self.sinks.from_source[ei.source_at + g],
                    to_rack(ei, g, rack(a)),
                    to_rack(ej, gj, rack(b)),
                ) else {
                    continue;
                };
                if !room.take(net, self.sinks, b) {
                    continue;
                }
                // A gives up its claim of j (its pair node then passes nothing) to B...
                net.add_preset(keep, -1);
                net.add_preset(self.member_edges[ej.member_at + a], -1);
                net.add_preset(into_b, 1);
                net.add_preset(self.member_edges[ej.member_at + b], 1);
                // ...and takes the unit of i through its rack's pool.
                net.add_preset(from_source, 1);
                net.add_preset(into_a, 1);
                net.add_preset(self.member_edges[ei.member_at + a], 1);
                if !room.has(self.sinks, b) {
                    open.retain(|&x| x != b);
                }
            }
        }
    }

    /// The group of plan `j` with `mask` (the free node's index for 0).
    fn group(&self, j: usize, mask: u64) -> Option<usize> {
        let groups = self.plans[j].groups;
        match mask {
            0 => Some(groups.len()),
            _ => search_masks(groups, mask, |g| g.0).ok(),
        }
    }

    /// The mask of group `g` of plan `i` (0 for the free node).
    fn mask(&self, i: usize, g: usize) -> u64 {
        self.plans[i].groups.get(g).map_or(0, |x| x.0)
    }

    /// Whether member `m` has nothing of plan `i`: no pair node, and so its edge into m
    /// is from its pool, with no unit on it.
    fn idle(&self, net: &Network, i: usize, m: usize) -> bool {
        self.plans[i]
            .keep_masks
            .binary_search_by_key(&(m as u32), |x| x.0)
            .is_err()
            && net.preset_on(self.member_edges[self.edges[i].member_at + m]) == 0
    }

    /// The first chain for a unit of plan `i` and `mask`: (A, the plan j of the claim A
    /// gives up, (its keep edge, its mask), B); A and B by id, j ascending.
    fn find(
        &self,
        net: &Network,
        claims: &Claims,
        i: usize,
        mask: u64,
        open: &[usize],
    ) -> Option<(usize, usize, (usize, u64), usize)> {
        for (a, &bit) in self.member_bit.iter().enumerate() {
            if bit == 0 || (mask != 0 && mask & bit == 0) || !self.idle(net, i, a) {
                continue;
            }
            let own = &claims.claims[claims.starts[a]..claims.starts[a + 1]];
            // A claim given up by an earlier chain has no unit left.
            for &(j, keep, mj) in own.iter().filter(|c| net.preset_on(c.1) > 0) {
                let found = open.iter().copied().find(|&b| {
                    b != a
                        && self.member_bit[b] != 0
                        && (mj == 0 || mj & self.member_bit[b] != 0)
                        && self.idle(net, j, b)
                });
                if let Some(b) = found {
                    return Some((a, j, (keep, mj), b));
                }
            }
        }
        None
    }
}

/// Each member's claims kept in the proposal before the chains.
struct Claims {
    /// Where each member's claims start in `claims` (and, at m + 1, end).
    starts: Vec<usize>,
    /// (plan, keep edge, mask) of each claim kept, member after member, plans ascending.
    claims: Vec<(usize, usize, u64)>,
}

/// The edge from group `g` to rack `r` of a topic's `e`.
fn to_rack(e: &TopicEdges, g: usize, r: usize) -> Option<usize> {
    e.to_rack
        .iter()
        .find(|&&(gx, rx, _)| gx == g && rx == r)
        .map(|x| x.2)
}
