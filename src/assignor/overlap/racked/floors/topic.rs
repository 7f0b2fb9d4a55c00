//! The topics of the flow with floors' network, and how its solved flow is read back. Every
//! topic's vectors lie end to end in one [`Arena`] (a call builds a hundred topics, each with
//! a dozen vectors of a few dozen entries: allocating them one by one cost more than
//! filling them); a [`Plan`] says where a topic's parts are, and [`Arena::view`] lends them
//! as the slices of a [`TopicFlow`].

use std::ops::Range;

use super::super::super::super::aligned::transport::Transport;
use super::super::super::super::flow::Network;
use super::Inputs;

/// Every topic's vectors, end to end: the fields of [`TopicFlow`], which see them.
pub(super) struct Arena {
    pub(super) groups: Vec<(u64, u64)>,
    pub(super) claims: Vec<(u32, u64, u64)>,
    pub(super) entry_group: Vec<usize>,
    pub(super) claim_entry: Vec<u32>,
    pub(super) keep_edge: Vec<usize>,
    pub(super) kept: Vec<u64>,
    pub(super) pair: Vec<bool>,
    pub(super) sub_rack: Vec<usize>,
    pub(super) total: Vec<u64>,
    pub(super) pool_edge: Vec<Option<usize>>,
    pub(super) floor_edge: Vec<Option<usize>>,
    pub(super) extra_edge: Vec<Option<usize>>,
    pub(super) plain_floor: Vec<Option<usize>>,
    pub(super) source_edge: Vec<usize>,
    pub(super) takes: Vec<u64>,
    pub(super) to_rack: Vec<(usize, usize, usize)>,
    pub(super) amount: Vec<u64>,
}

/// Where one topic's parts lie in the [`Arena`], and its scalars.
pub(super) struct Plan {
    /// Index of the topic in `comp.topics`.
    pub(super) lt: usize,
    pub(super) topic: u32,
    pub(super) floor: u32,
    /// Partitions of mask 0.
    pub(super) free: u64,
    /// The racks of its subscribers, as bits.
    pub(super) present: u64,
    /// Its `groups`.
    pub(super) groups: Range<usize>,
    /// Its claim entries: `claims`, `entry_group`, `keep_edge` and `kept`.
    pub(super) claims: Range<usize>,
    /// Its `claim_entry`.
    pub(super) owners: Range<usize>,
    /// Its subscribers: `pair`, `sub_rack`, `total`, `pool_edge`, `floor_edge`,
    /// `extra_edge` and `takes`.
    pub(super) subs: Range<usize>,
    /// Its racks: `plain_floor`.
    pub(super) racks: Range<usize>,
    /// Its `source_edge`.
    pub(super) sources: Range<usize>,
    /// Its `to_rack`.
    pub(super) to_rack: Range<usize>,
    /// Its `amount`.
    pub(super) amount: Range<usize>,
}

/// One topic of the network and, once solved, how it is dealt.
pub(super) struct TopicFlow<'a> {
    /// Index of the topic in `comp.topics`.
    pub(super) lt: usize,
    pub(super) topic: u32,
    pub(super) floor: u32,
    /// Distinct non-zero masks of the topic's partitions, ascending, with their counts.
    pub(super) groups: &'a [(u64, u64)],
    /// Partitions of mask 0.
    pub(super) free: u64,
    /// The racks of its subscribers, as bits (the free node's mask).
    pub(super) present: u64,
    /// (subscriber index, mask, keepable claims of that mask), ascending.
    pub(super) claims: &'a [(u32, u64, u64)],
    /// Per claim entry: its group's index (the free node as group `groups.len()`).
    pub(super) entry_group: &'a [usize],
    /// Per keepable claim of the topic, in the order of `Inputs::keepable`: the index of its
    /// entry in `claims` (its owner's, of its mask).
    pub(super) claim_entry: &'a [u32],
    /// Per claim entry: its keep edge, shared by the entries of subscribers without a pair
    /// node that start at the same group and end at the same rack (see
    /// [Merged keeps](super#merged-keeps)); once solved, `kept` holds each entry's units.
    pub(super) keep_edge: &'a [usize],
    pub(super) kept: &'a [u64],
    /// Per subscriber index: whether it has a pair node (more than f_t keepable claims).
    pub(super) pair: &'a [bool],
    /// Per subscriber index: its rack (computed once per topic, read by every step).
    pub(super) sub_rack: &'a [usize],
    /// Per subscriber index: its keepable claims, the sum of its entries'.
    pub(super) total: &'a [u64],
    /// Per subscriber index: its pool edge (pair subscribers) or extra edge (others), if any.
    pub(super) pool_edge: &'a [Option<usize>],
    /// Per subscriber index: its floor edge (pair subscribers with f_t > 0).
    pub(super) floor_edge: &'a [Option<usize>],
    /// Per subscriber index: its extra edge, (t,m) → member m (pair subscribers, r_t > 0);
    /// for the others the pool edge is the extra edge.
    pub(super) extra_edge: &'a [Option<usize>],
    /// Per rack: the floor edge of its subscribers with no pair node, if any.
    pub(super) plain_floor: &'a [Option<usize>],
    /// Per group (the free node last, if it has partitions): its edge from the source.
    pub(super) source_edge: &'a [usize],
    /// Per subscriber index, once solved: the partitions it takes from its rack.
    pub(super) takes: &'a [u64],
    /// (group, rack, edge) of each edge from a group (the free node as group `groups.len()`)
    /// to a rack; once solved, `amount` holds the units at `g * racks + r`.
    pub(super) to_rack: &'a [(usize, usize, usize)],
    pub(super) amount: &'a [u64],
}

impl Arena {
    /// An arena with room for every topic of `x`'s component: per topic with partitions, its
    /// keepable claims and its subscribers, and no more groups than partitions or non-zero
    /// masks.
    pub(super) fn for_inputs(x: &Inputs<'_, '_>) -> Self {
        let racks = x.racks;
        let kinds = 1usize
            .checked_shl(racks as u32)
            .map_or(usize::MAX, |k| k - 1);
        let (mut topics, mut groups, mut claims, mut subscribers) = (0, 0, 0, 0);
        for (lt, &t) in x.comp.topics.iter().enumerate() {
            if !x.masks[lt].is_empty() {
                topics += 1;
                groups += x.masks[lt].len().min(kinds);
                claims += x.keepable[t as usize].len();
                subscribers += x.problem.subscribers[t as usize].len();
            }
        }
        Self::with_capacity(topics, groups, claims, subscribers, racks)
    }

    /// An arena with room for `topics` topics with `groups` groups, `claims` keepable claims
    /// and `subs` subscribers in all, over `racks` racks (so that it never grows by copying).
    pub(super) fn with_capacity(
        topics: usize,
        groups: usize,
        claims: usize,
        subs: usize,
        racks: usize,
    ) -> Self {
        let sources = groups + topics;
        Arena {
            groups: Vec::with_capacity(groups),
            claims: Vec::with_capacity(claims),
            entry_group: Vec::with_capacity(claims),
            claim_entry: Vec::with_capacity(claims),
            keep_edge: Vec::with_capacity(claims),
            kept: Vec::with_capacity(claims),
            pair: Vec::with_capacity(subs),
            sub_rack: Vec::with_capacity(subs),
            total: Vec::with_capacity(subs),
            pool_edge: Vec::with_capacity(subs),
            floor_edge: Vec::with_capacity(subs),
            extra_edge: Vec::with_capacity(subs),
            plain_floor: Vec::with_capacity(topics * racks),
            source_edge: Vec::with_capacity(sources),
            takes: Vec::with_capacity(subs),
            to_rack: Vec::with_capacity(sources * racks),
            amount: Vec::with_capacity(sources * racks),
        }
    }

    /// The topic of `plan`, as slices of the arena.
    pub(super) fn view(&self, plan: &Plan) -> TopicFlow<'_> {
        TopicFlow {
            lt: plan.lt,
            topic: plan.topic,
            floor: plan.floor,
            groups: &self.groups[plan.groups.clone()],
            free: plan.free,
            present: plan.present,
            claims: &self.claims[plan.claims.clone()],
            entry_group: &self.entry_group[plan.claims.clone()],
            claim_entry: &self.claim_entry[plan.owners.clone()],
            keep_edge: &self.keep_edge[plan.claims.clone()],
            kept: &self.kept[plan.claims.clone()],
            pair: &self.pair[plan.subs.clone()],
            sub_rack: &self.sub_rack[plan.subs.clone()],
            total: &self.total[plan.subs.clone()],
            pool_edge: &self.pool_edge[plan.subs.clone()],
            floor_edge: &self.floor_edge[plan.subs.clone()],
            extra_edge: &self.extra_edge[plan.subs.clone()],
            plain_floor: &self.plain_floor[plan.racks.clone()],
            source_edge: &self.source_edge[plan.sources.clone()],
            takes: &self.takes[plan.subs.clone()],
            to_rack: &self.to_rack[plan.to_rack.clone()],
            amount: &self.amount[plan.amount.clone()],
        }
    }

    /// Reads the solved network `net` back into the topic of `plan`: each entry's kept units,
    /// each subscriber's take from its rack, each group's units per rack. False when the flow
    /// cannot be dealt as the [module docs](super) say (a shared keep edge carries more than
    /// its entries' claims, or a subscriber without a pair node keeps more than it takes).
    /// `left` is a buffer kept from topic to topic.
    pub(super) fn read_back(
        &mut self,
        plan: &Plan,
        net: &Network,
        racks: usize,
        left: &mut Vec<u64>,
    ) -> bool {
        let floor = u64::from(plan.floor);
        let claims = &self.claims[plan.claims.clone()];
        let entry_group = &self.entry_group[plan.claims.clone()];
        let keep_edge = &self.keep_edge[plan.claims.clone()];
        let kept = &mut self.kept[plan.claims.clone()];
        let pair = &self.pair[plan.subs.clone()];
        let sub_rack = &self.sub_rack[plan.subs.clone()];
        let pool_edge = &self.pool_edge[plan.subs.clone()];
        let takes = &mut self.takes[plan.subs.clone()];
        for ((take, &pair), edge) in takes.iter_mut().zip(pair).zip(pool_edge) {
            let units = edge.map_or(0, |id| net.flow(id) as u64);
            *take = if pair { units } else { floor + units };
        }
        // A shared keep edge's units go to its entries in entry order (subscribers in id
        // order), each up to its claims: `left` holds what each edge has still to give, at
        // its group and rack (`g * racks + r`: one shared edge each, as they were added),
        // `u64::MAX` before its first entry reads it.
        left.clear();
        left.resize((plan.groups.len() + 1) * racks, u64::MAX);
        let entries = claims.iter().zip(entry_group).zip(keep_edge);
        for (((&(i, _, count), &g), &id), kept) in entries.zip(kept.iter_mut()) {
            if pair[i as usize] {
                *kept = net.flow(id) as u64;
                continue;
            }
            let Some(&r) = sub_rack.get(i as usize) else {
                return false;
            };
            let Some(left) = left.get_mut(g * racks + r) else {
                return false;
            };
            if *left == u64::MAX {
                *left = net.flow(id) as u64;
            }
            let take = count.min(*left);
            *left -= take;
            *kept = take;
            // A subscriber without a pair node takes from its rack what its keeps leave of
            // its floor and extra (never less than nothing: it has at most f_t claims).
            let Some(rest) = takes.get(i as usize).and_then(|t| t.checked_sub(take)) else {
                return false;
            };
            takes[i as usize] = rest;
        }
        if left.iter().any(|&units| units > 0 && units != u64::MAX) {
            return false;
        }
        let amount = &mut self.amount[plan.amount.clone()];
        for &(g, r, id) in &self.to_rack[plan.to_rack.clone()] {
            amount[g * racks + r] = net.flow(id) as u64;
        }
        true
    }
}

/// The most racks for which [`Grouping`] counts masks in a table.
const TABLE_RACKS: usize = 16;

/// Groups a topic's partitions by mask (as [`Arena::groups`] holds them: non-zero masks,
/// ascending, with their counts) and finds a mask's group. Where the table of every mask
/// over the racks is no longer than the topic's partitions, each partition costs one
/// increment and each look-up one read instead of a binary search over the groups; both
/// ways give the same groups and the same indices.
#[derive(Default)]
pub(super) struct Grouping {
    /// Per mask below `1 << racks`: its group's index among the topic's, or `u32::MAX`
    /// without partitions (while [`Grouping::count`] counts, its partitions). Read only
    /// while `table` holds.
    at: Vec<u64>,
    /// Whether the last [`Grouping::count`] used the table.
    table: bool,
}

impl Grouping {
    /// Appends the groups of `masks` (a topic's partitions' masks, over `racks` racks) to
    /// `groups`; returns the partitions of mask 0.
    pub(super) fn count(
        &mut self,
        masks: &[u64],
        racks: usize,
        groups: &mut Vec<(u64, u64)>,
    ) -> u64 {
        let g0 = groups.len();
        let kinds = 1usize << racks.min(TABLE_RACKS);
        self.table = racks <= TABLE_RACKS && kinds <= masks.len();
        if self.table {
            self.at.clear();
            self.at.resize(kinds, 0);
            let at = &mut self.at[..];
            for &mask in masks {
                match at.get_mut(mask as usize) {
                    Some(count) => *count += 1,
                    None => {
                        self.table = false;
                        break;
                    }
                }
            }
        }
        if self.table {
            let free = self.at[0];
            for (mask, at) in self.at.iter_mut().enumerate().skip(1) {
                if *at > 0 {
                    groups.push((mask as u64, *at));
                    *at = (groups.len() - 1 - g0) as u64;
                } else {
                    *at = u64::from(u32::MAX);
                }
            }
            return free;
        }
        let mut free = 0u64;
        for &mask in masks {
            if mask == 0 {
                free += 1;
                continue;
            }
            match groups[g0..].binary_search_by_key(&mask, |g| g.0) {
                Ok(g) => groups[g0 + g].1 += 1,
                Err(g) => groups.insert(g0 + g, (mask, 1)),
            }
        }
        free
    }

    /// Indexes `groups` (a topic's, as [`Grouping::count`] made them) for [`Grouping::find`],
    /// by table where the masks over `racks` racks are no more than the topic's `partitions`.
    pub(super) fn index(&mut self, groups: &[(u64, u64)], racks: usize, partitions: usize) {
        let kinds = 1usize << racks.min(TABLE_RACKS);
        self.table = racks <= TABLE_RACKS && kinds <= partitions;
        if self.table {
            self.at.clear();
            self.at.resize(kinds, u64::from(u32::MAX));
            for (g, &(mask, _)) in groups.iter().enumerate() {
                match self.at.get_mut(mask as usize) {
                    Some(at) => *at = g as u64,
                    None => {
                        self.table = false;
                        return;
                    }
                }
            }
        }
    }

    /// [`Grouping::find`]'s table when it is in use: per mask below `1 << racks`, its group's
    /// index, `u32::MAX` without partitions. Held in a local by the callers' loops, which
    /// otherwise reload the flag and the vector at every look-up.
    pub(super) fn table(&self) -> Option<&[u64]> {
        self.table.then_some(&self.at[..])
    }

    /// The group of non-zero `mask` as [`Grouping::find`] gives it, `table` being
    /// [`Grouping::table`].
    #[inline(always)]
    pub(super) fn find_in(
        &self,
        table: Option<&[u64]>,
        groups: &[(u64, u64)],
        mask: u64,
    ) -> Option<usize> {
        match table {
            Some(at) => at
                .get(mask as usize)
                .filter(|&&g| g != u64::from(u32::MAX))
                .map(|&g| g as usize),
            None => groups.binary_search_by_key(&mask, |g| g.0).ok(),
        }
    }

    /// The index among `groups` (the last counted topic's) of the group of non-zero `mask`,
    /// `None` if no partition has it.
    pub(super) fn find(&self, groups: &[(u64, u64)], mask: u64) -> Option<usize> {
        self.find_in(self.table(), groups, mask)
    }
}

/// Whether local topic `lt`'s partitions (`groups` by mask, `free` of mask 0) can all be
/// placed aligned with every subscriber taking at most f_t + \[r_t > 0\]: a small transport
/// from the groups to the racks, rack r taking that much per subscriber in it. A flow of full
/// value exists exactly when this holds in every topic (a keep edge of mask g only reaches a
/// member in a rack of g, as the rack does; member edges never bind: a member takes at most
/// one extra per topic with extras, and its edge has that capacity), so the network is not
/// built in vain where it fails. `sub_rack` holds each subscriber's rack (all below
/// `x.racks`), `present` their bits.
#[allow(clippy::too_many_arguments)]
pub(super) fn placeable(
    x: &Inputs<'_, '_>,
    lt: usize,
    groups: &[(u64, u64)],
    free: u64,
    sub_rack: &[usize],
    present: u64,
    transport: &mut Transport,
    [capacity, masks, supply]: &mut [Vec<u64>; 3],
) -> bool {
    let ceiling = u64::from(x.counts.floor[lt])
        + u64::from(!x.masks[lt].len().is_multiple_of(x.counts.subs[lt].len()));
    capacity.clear();
    capacity.resize(x.racks, 0);
    for &r in sub_rack {
        let Some(room) = capacity.get_mut(r) else {
            return false;
        };
        *room += ceiling;
    }
    masks.clear();
    masks.extend(groups.iter().map(|g| g.0));
    masks.push(present);
    supply.clear();
    supply.extend(groups.iter().map(|g| g.1));
    supply.push(free);
    transport.solve(masks, supply, capacity)
}
