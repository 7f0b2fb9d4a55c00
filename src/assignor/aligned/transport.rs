//! The small maximum flow of the rack-aware path: left-over partitions grouped by rack mask,
//! sent to racks with room.

/// A maximum flow from mask groups to racks (group g may send to rack r when bit r is in its
/// mask, rack r takes at most its capacity), by breadth-first augmenting paths.
#[derive(Default)]
pub(super) struct Transport {
    /// Units of group g sent to rack r, at `g * racks + r`.
    pub(super) amount: Vec<u64>,
    /// After a failed [`Transport::solve`]: the racks reachable from the groups left with
    /// units, all full. Only more room there, or fewer units in groups whose masks lie within
    /// them, can make the flow succeed.
    pub(super) reached: u64,
    /// After a failed [`Transport::solve`]: the units the maximum flow leaves unplaced.
    pub(super) unplaced: u64,
}

impl Transport {
    /// Sends all `supply[g]` units of every group g to racks of `masks[g]` within the
    /// capacities, if possible; returns whether it is.
    pub(super) fn solve(&mut self, masks: &[u64], supply: &[u64], capacity: &[u64]) -> bool {
        let racks = capacity.len();
        let k = masks.len();
        self.amount.clear();
        self.amount.resize(k * racks, 0);
        let mut supply = supply.to_vec();
        let mut left = capacity.to_vec();
        // Nodes: groups 0..k, racks k..k+racks. `parent` holds the node each was reached from.
        let mut parent = vec![usize::MAX; k + racks];
        let mut queue: Vec<usize> = Vec::with_capacity(k + racks);
        loop {
            // Direct sends first: most units go straight to a rack with room.
            for g in 0..k {
                let mut mask = masks[g];
                while supply[g] > 0 && mask != 0 {
                    let r = mask.trailing_zeros() as usize;
                    mask &= mask - 1;
                    let send = supply[g].min(left[r]);
                    supply[g] -= send;
                    left[r] -= send;
                    self.amount[g * racks + r] += send;
                }
            }
            if supply.iter().all(|&s| s == 0) {
                return true;
            }
            // Then one augmenting path through racks that are full.
            parent.fill(usize::MAX);
            queue.clear();
            for g in 0..k {
                if supply[g] > 0 {
                    parent[g] = g;
                    queue.push(g);
                }
            }
            let mut end = None;
            let mut head = 0;
            'search: while head < queue.len() {
                let node = queue[head];
                head += 1;
                if node < k {
                    let mut mask = masks[node];
                    while mask != 0 {
                        let r = mask.trailing_zeros() as usize;
                        mask &= mask - 1;
                        if parent[k + r] == usize::MAX {
                            parent[k + r] = node;
                            if left[r] > 0 {
                                end = Some(r);
                                break 'search;
                            }
                            queue.push(k + r);
                        }
                    }
                } else {
                    let r = node - k;
                    for (g, from) in parent[..k].iter_mut().enumerate() {
                        if *from == usize::MAX && self.amount[g * racks + r] > 0 {
                            *from = node;
                            queue.push(g);
                        }
                    }
                }
            }
            let Some(r_end) = end else {
                self.reached = (0..racks)
                    .filter(|&r| parent[k + r] != usize::MAX)
                    .fold(0, |acc, r| acc | 1 << r);
                self.unplaced = supply.iter().sum();
                return false;
            };
            // Bottleneck along the path: group → rack (unbounded), rack → group (undo).
            let mut bottleneck = left[r_end];
            let mut node = k + r_end;
            loop {
                let from = parent[node];
                if node < k {
                    if from == node {
                        bottleneck = bottleneck.min(supply[node]);
                        break;
                    }
                    bottleneck = bottleneck.min(self.amount[node * racks + (from - k)]);
                }
                node = from;
            }
            let mut node = k + r_end;
            loop {
                let from = parent[node];
                if node < k {
                    if from == node {
                        supply[node] -= bottleneck;
                        break;
                    }
                    self.amount[node * racks + (from - k)] -= bottleneck;
                } else {
                    self.amount[from * racks + (node - k)] += bottleneck;
                }
                node = from;
            }
            left[r_end] -= bottleneck;
        }
    }
}
