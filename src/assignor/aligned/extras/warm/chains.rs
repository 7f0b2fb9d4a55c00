//! Chains of two for the units of the [parent](super)'s proposal that fit nowhere after the
//! rotation (the module docs there say when they are needed and what they cost).

use super::super::super::super::flow::Network;
use super::super::{Plan, TopicEdges};
use super::{Room, SinkEdges};

/// Units that fit nowhere after the rotation, placed by chains of two: a member A of a
/// rack of the unit's mask that has nothing of its topic yet takes it and gives up a claim
/// it kept in another topic j, which a member B with room, in a rack of the claim's mask and
/// with nothing of j, takes instead. A's load stays, B's grows by one: on the benchmark's
/// racked leave of 1,000 topics, the members of the racks of the lost member's partitions
/// are full, and exactly as many of them must give up a claim as they lack places.
pub(super) struct Chains<'a, 'b> {
    pub(super) plans: &'a [Plan<'b>],
    pub(super) edges: &'a [TopicEdges<'b>],
    pub(super) member_edges: &'a [usize],
    pub(super) sinks: &'a SinkEdges,
    pub(super) member_bit: &'a [u64],
    /// (member, plan, group, keep edge) of every claim kept, ascending; the edge is
    /// `usize::MAX` once given up.
    pub(super) kept: Vec<(usize, usize, usize, usize)>,
}

impl Chains<'_, '_> {
    /// Places what it can of `short`'s (plan, group, units) by chains of two.
    pub(super) fn place(
        &mut self,
        net: &mut Network,
        room: &mut Room,
        short: &[(usize, usize, u64)],
    ) {
        #[cfg(test)]
        if super::tally::chains_planted() {
            return;
        }
        for (j, (plan, e)) in self.plans.iter().zip(self.edges).enumerate() {
            for &(lm, mask, id) in e.keep {
                if net.preset_on(id) > 0 {
                    let g = match mask {
                        0 => plan.groups.len(),
                        _ => match plan.groups.binary_search_by_key(&mask, |g| g.0) {
                            Ok(g) => g,
                            Err(_) => continue,
                        },
                    };
                    self.kept.push((lm as usize, j, g, id));
                }
            }
        }
        self.kept.sort_unstable();
        let n = self.member_bit.len();
        // Members with room, ids ascending; a member is dropped once full.
        let mut open: Vec<usize> = (0..n).filter(|&b| room.has(self.sinks, b)).collect();
        for &(i, g, units) in short {
            let mask = self.mask(i, g);
            for _ in 0..units {
                if open.is_empty() {
                    return;
                }
                let Some((a, at, b)) = self.find(net, i, mask, &open) else {
                    break;
                };
                let (_, j, gj, keep) = self.kept[at];
                self.kept[at].3 = usize::MAX;
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

    /// The first chain for a unit of plan `i` and `mask`: (A, A's kept claim's index in
    /// `kept`, B), A and B by id, A's claims by plan.
    fn find(
        &self,
        net: &Network,
        i: usize,
        mask: u64,
        open: &[usize],
    ) -> Option<(usize, usize, usize)> {
        for (a, &bit) in self.member_bit.iter().enumerate() {
            if bit == 0 || (mask != 0 && mask & bit == 0) || !self.idle(net, i, a) {
                continue;
            }
            let from = self.kept.partition_point(|x| x.0 < a);
            for (at, &(_, j, gj, keep)) in self.kept.iter().enumerate().skip(from) {
                if self.kept[at].0 != a {
                    break;
                }
                if keep == usize::MAX {
                    continue;
                }
                let mj = self.mask(j, gj);
                let found = open.iter().copied().find(|&b| {
                    b != a
                        && self.member_bit[b] != 0
                        && (mj == 0 || mj & self.member_bit[b] != 0)
                        && self.idle(net, j, b)
                });
                if let Some(b) = found {
                    return Some((a, at, b));
                }
            }
        }
        None
    }
}

/// The edge from group `g` to rack `r` of a topic's `e`.
fn to_rack(e: &TopicEdges, g: usize, r: usize) -> Option<usize> {
    e.to_rack
        .iter()
        .find(|&&(gx, rx, _)| gx == g && rx == r)
        .map(|x| x.2)
}
