//! One topic of the flow with floors' network, and how its solved flow is read back.

use super::super::super::super::flow::Network;

/// One topic of the network and, once solved, how it is dealt.
pub(super) struct TopicFlow {
    /// Index of the topic in `comp.topics`.
    pub(super) lt: usize,
    pub(super) topic: u32,
    pub(super) floor: u32,
    /// Distinct non-zero masks of the topic's partitions, ascending, with their counts.
    pub(super) groups: Vec<(u64, u64)>,
    /// Partitions of mask 0.
    pub(super) free: u64,
    /// (subscriber index, mask, keepable claims of that mask), ascending.
    pub(super) claims: Vec<(u32, u64, u64)>,
    /// Per claim entry: its group's index (the free node as group `groups.len()`).
    pub(super) entry_group: Vec<usize>,
    /// Per keepable claim of the topic, in the order of `Inputs::keepable`: its owner's
    /// subscriber index.
    pub(super) claim_owner: Vec<u32>,
    /// Per claim entry: its keep edge, shared by the entries of subscribers without a pair
    /// node that start at the same group and end at the same rack (see
    /// [Merged keeps](super#merged-keeps)); once solved, `kept` holds each entry's units.
    pub(super) keep_edge: Vec<usize>,
    pub(super) kept: Vec<u64>,
    /// Per subscriber index: whether it has a pair node (more than f_t keepable claims).
    pub(super) pair: Vec<bool>,
    /// Per subscriber index: its pool edge (pair subscribers) or extra edge (others), if any.
    pub(super) pool_edge: Vec<Option<usize>>,
    /// Per subscriber index: its floor edge (pair subscribers with f_t > 0).
    pub(super) floor_edge: Vec<Option<usize>>,
    /// Per subscriber index: its extra edge, (t,m) → member m (pair subscribers, r_t > 0);
    /// for the others the pool edge is the extra edge.
    pub(super) extra_edge: Vec<Option<usize>>,
    /// Per rack: the floor edge of its subscribers with no pair node, if any.
    pub(super) plain_floor: Vec<Option<usize>>,
    /// Per group (the free node last, if it has partitions): its edge from the source.
    pub(super) source_edge: Vec<usize>,
    /// Per subscriber index, once solved: the partitions it takes from its rack.
    pub(super) takes: Vec<u64>,
    /// (group, rack, edge) of each edge from a group (the free node as group `groups.len()`)
    /// to a rack; once solved, `amount` holds the units at `g * racks + r`.
    pub(super) to_rack: Vec<(usize, usize, usize)>,
    pub(super) amount: Vec<u64>,
}

impl TopicFlow {
    /// Reads the solved network `net` back into the plan: each entry's kept units, each
    /// subscriber's take from its rack, each group's units per rack. False when the flow
    /// cannot be dealt as the [module docs](super) say (a shared keep edge carries more than
    /// its entries' claims, or a subscriber without a pair node keeps more than it takes).
    /// `left` is a buffer kept from topic to topic.
    pub(super) fn read_back(
        &mut self,
        net: &Network,
        racks: usize,
        left: &mut Vec<(usize, u64)>,
    ) -> bool {
        let floor = u64::from(self.floor);
        // A shared keep edge's units go to its entries in entry order (subscribers in id
        // order), each up to its claims: `left` holds what each edge has still to give.
        left.clear();
        self.kept = Vec::with_capacity(self.claims.len());
        for (&(i, _, count), &id) in self.claims.iter().zip(&self.keep_edge) {
            let units = net.flow(id) as u64;
            if self.pair[i as usize] {
                self.kept.push(units);
                continue;
            }
            let l = match left.iter().position(|e| e.0 == id) {
                Some(l) => l,
                None => {
                    left.push((id, units));
                    left.len() - 1
                }
            };
            let take = count.min(left[l].1);
            left[l].1 -= take;
            self.kept.push(take);
        }
        if left.iter().any(|e| e.1 > 0) {
            return false;
        }
        for i in 0..self.pair.len() {
            let units = self.pool_edge[i].map_or(0, |id| net.flow(id) as u64);
            self.takes[i] = if self.pair[i] { units } else { floor + units };
        }
        // A subscriber without a pair node takes from its rack what its keeps leave of its
        // floor and extra (never less than nothing: it has at most f_t claims).
        for (c, &units) in self.claims.iter().zip(&self.kept) {
            let i = c.0 as usize;
            if !self.pair[i] {
                let Some(takes) = self.takes[i].checked_sub(units) else {
                    return false;
                };
                self.takes[i] = takes;
            }
        }
        self.amount = vec![0; (self.groups.len() + 1) * racks];
        for &(g, r, id) in &self.to_rack {
            self.amount[g * racks + r] = net.flow(id) as u64;
        }
        true
    }
}
