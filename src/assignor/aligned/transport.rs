//! The small maximum flow of the rack-aware path: left-over partitions grouped by rack mask,
//! sent to racks with room.

/// A maximum flow from mask groups to racks (group g may send to rack r when bit r is in its
/// mask, rack r takes at most its capacity), by breadth-first augmenting paths.
#[derive(Default)]
pub(crate) struct Transport {
    /// Units of group g sent to rack r, at `g * racks + r`.
    pub(crate) amount: Vec<u64>,
    /// After a failed [`Transport::solve`]: the racks reachable from the groups left with
    /// units, all full. Only more room there, or fewer units in groups whose masks lie within
    /// them, can make the flow succeed.
    pub(crate) reached: u64,
    /// After a failed [`Transport::solve`]: the units the maximum flow leaves unplaced.
    pub(crate) unplaced: u64,
    /// Buffers kept from call to call: a deal solves one small flow per topic.
    scratch: Scratch,
    /// [`Transport::solve_groups`]'s masks and sizes of the groups, kept from call to call.
    group_masks: Vec<u64>,
    group_supply: Vec<u64>,
}

/// One topic's kept claims that [`Transport::place_giving_up`] may give up: per claim entry
/// (member, mask, claims), its group and the units kept; per member, its rack and the units
/// it keeps in all.
pub(crate) struct Keeps<'a> {
    pub claims: &'a [(u32, u64, u64)],
    pub entry_group: &'a [usize],
    pub rack: &'a [usize],
    pub keep: &'a mut [u64],
    pub kept: &'a mut [u64],
}

impl Transport {
    /// Places the groups' `left_over` units (masks `masks`) into the racks' `room` as
    /// [`Transport::solve`] does. Where it cannot place them all, members in the full racks
    /// the stuck units reach give up kept claims whose masks reach a rack outside them (in
    /// claim order, as many as units were left unplaced, each going back to its group and
    /// its member's room), and it tries again, at most `rounds` times; the last round only
    /// solves, so that [`Transport::amount`] matches the keeps whatever the outcome.
    pub(crate) fn place_giving_up(
        &mut self,
        masks: &[u64],
        left_over: &mut [u64],
        room: &mut [u64],
        keeps: Keeps<'_>,
        rounds: usize,
    ) {
        for round in 0..=rounds {
            if self.solve(masks, left_over, room) || round == rounds {
                break;
            }
            let reached = self.reached;
            let mut wanted = self.unplaced;
            for (e, &(m, _, _)) in keeps.claims.iter().enumerate() {
                if wanted == 0 {
                    break;
                }
                let (m, g) = (m as usize, keeps.entry_group[e]);
                let bit = 1u64 << keeps.rack[m];
                if keeps.keep[e] > 0 && bit & reached != 0 && masks[g] & !reached != 0 {
                    keeps.keep[e] -= 1;
                    keeps.kept[m] -= 1;
                    left_over[g] += 1;
                    room[keeps.rack[m]] += 1;
                    wanted -= 1;
                }
            }
            if wanted == self.unplaced {
                break;
            }
        }
    }
}

/// [`Transport::solve`]'s working vectors.
#[derive(Default)]
struct Scratch {
    /// Units left per group.
    supply: Vec<u64>,
    /// Room left per rack.
    left: Vec<u64>,
    /// The node each node was reached from (groups 0..k, racks k..k+R).
    parent: Vec<usize>,
    /// The breadth-first search's queue.
    queue: Vec<usize>,
}

impl Transport {
    /// Sends all `supply[g]` units of every group g to racks of `masks[g]` within the
    /// capacities, if possible; returns whether it is.
    pub(crate) fn solve(&mut self, masks: &[u64], supply: &[u64], capacity: &[u64]) -> bool {
        let mut scratch = std::mem::take(&mut self.scratch);
        let placed = self.solve_with(masks, supply, capacity, &mut scratch);
        self.scratch = scratch;
        placed
    }

    /// [`Transport::solve`] for groups given as (mask, partitions): each group's units are
    /// its partitions.
    pub(crate) fn solve_groups(&mut self, groups: &[(u64, Vec<i32>)], capacity: &[u64]) -> bool {
        let mut masks = std::mem::take(&mut self.group_masks);
        let mut supply = std::mem::take(&mut self.group_supply);
        masks.clear();
        masks.extend(groups.iter().map(|g| g.0));
        supply.clear();
        supply.extend(groups.iter().map(|g| g.1.len() as u64));
        let placed = self.solve(&masks, &supply, capacity);
        self.group_masks = masks;
        self.group_supply = supply;
        placed
    }

    /// [`Transport::solve`] in the buffers of `scratch`.
    fn solve_with(
        &mut self,
        masks: &[u64],
        units: &[u64],
        capacity: &[u64],
        scratch: &mut Scratch,
    ) -> bool {
        let racks = capacity.len();
        let k = masks.len();
        self.amount.clear();
        self.amount.resize(k * racks, 0);
        let Scratch {
            supply,
            left,
            parent,
            queue,
        } = scratch;
        supply.clear();
        supply.extend_from_slice(units);
        left.clear();
        left.extend_from_slice(capacity);
        // Nodes: groups 0..k, racks k..k+racks. `parent` holds the node each was reached from.
        parent.clear();
        parent.resize(k + racks, usize::MAX);
        queue.clear();
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

/// A topic's partitions not `taken`, ascending, split by replica mask into `lists` (its
/// first `groups.len() + 1` lists, reusing their memory from topic to topic; longer lists
/// are cut back): list g holds those of `groups[g]`'s mask (`groups` sorted by mask, the
/// mask first), the last list (index `groups.len()`) those of mask 0. `false` if a
/// partition's mask is not among `groups` (the groups do not describe this topic).
pub(crate) fn left_over_into(
    masks: &[u64],
    taken: &[bool],
    groups: &[(u64, u64)],
    lists: &mut Vec<Vec<i32>>,
) -> bool {
    let k = groups.len();
    lists.truncate(k + 1);
    for list in lists.iter_mut() {
        list.clear();
    }
    lists.resize_with(k + 1, Vec::new);
    for (p, &mask) in masks.iter().enumerate() {
        if taken[p] {
            continue;
        }
        let g = if mask == 0 {
            k
        } else {
            match groups.binary_search_by_key(&mask, |g| g.0) {
                Ok(g) => g,
                Err(_) => return false,
            }
        };
        lists[g].push(p as i32);
    }
    true
}

/// Rack `r`'s partitions, ascending, into `bucket`, from a solved transport's amounts (group
/// g sends `amount[g * racks + r]` to rack r): each group hands out its partitions in order,
/// `next[g]` counting those already handed to earlier racks. `false` if a group has fewer left
/// than its amount (the amounts do not match the groups).
pub(crate) fn rack_share(
    groups: &[Vec<i32>],
    amount: &[u64],
    racks: usize,
    r: usize,
    next: &mut [usize],
    bucket: &mut Vec<i32>,
) -> bool {
    bucket.clear();
    // Each group's slice is ascending, so a bucket filled from one group is too. A group
    // sending nothing is skipped: `next[g]` never passes its length (each step is checked).
    let mut slices = 0;
    for (g, group) in groups.iter().enumerate() {
        let units = amount[g * racks + r] as usize;
        if units == 0 {
            continue;
        }
        let Some(slice) = group.get(next[g]..next[g] + units) else {
            return false;
        };
        bucket.extend_from_slice(slice);
        next[g] += units;
        slices += 1;
    }
    if slices > 1 {
        bucket.sort_unstable();
    }
    true
}

#[cfg(test)]
mod tests {
    use super::Transport;

    /// The maximum flow by its min-cut formula: over every set Q of racks kept on the source
    /// side, the capacity of Q plus the supply of the groups whose masks are not within Q.
    fn min_cut(masks: &[u64], supply: &[u64], capacity: &[u64]) -> u64 {
        (0u64..1 << capacity.len())
            .map(|q| {
                let racks: u64 = (0..capacity.len())
                    .filter(|r| q >> r & 1 == 1)
                    .map(|r| capacity[r])
                    .sum();
                let groups: u64 = masks
                    .iter()
                    .zip(supply)
                    .filter(|&(&m, _)| m & !q != 0)
                    .map(|(_, &s)| s)
                    .sum();
                racks + groups
            })
            .min()
            .unwrap_or(0)
    }

    #[test]
    fn the_flow_is_maximum_and_respects_masks_and_capacities() {
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        let (mut fitted, mut short) = (0, 0);
        for _ in 0..3000 {
            let racks = 1 + next(4) as usize;
            let groups = 1 + next(6) as usize;
            let masks: Vec<u64> = (0..groups).map(|_| 1 + next((1 << racks) - 1)).collect();
            let supply: Vec<u64> = (0..groups).map(|_| next(5)).collect();
            let capacity: Vec<u64> = (0..racks).map(|_| next(6)).collect();
            let mut flow = Transport::default();
            let fits = flow.solve(&masks, &supply, &capacity);
            let total: u64 = supply.iter().sum();
            let best = min_cut(&masks, &supply, &capacity);
            assert_eq!(fits, best == total, "{masks:?} {supply:?} {capacity:?}");
            if !fits {
                short += 1;
                assert_eq!(
                    flow.unplaced,
                    total - best,
                    "{masks:?} {supply:?} {capacity:?}"
                );
                continue;
            }
            fitted += 1;
            for (g, &mask) in masks.iter().enumerate() {
                let sent: u64 = (0..racks).map(|r| flow.amount[g * racks + r]).sum();
                assert_eq!(sent, supply[g]);
                for r in 0..racks {
                    assert!(flow.amount[g * racks + r] == 0 || mask >> r & 1 == 1);
                }
            }
            for (r, &cap) in capacity.iter().enumerate() {
                let got: u64 = (0..groups).map(|g| flow.amount[g * racks + r]).sum();
                assert!(
                    got <= cap,
                    "rack {r} over capacity: {masks:?} {supply:?} {capacity:?}"
                );
            }
        }
        assert!(
            fitted > 300 && short > 300,
            "fitted {fitted}, short {short}"
        );
    }
}
