//! The exact fast path of the uniform v2 assignor for a *homogeneous* component (every member
//! subscribes to every topic) in which rack alignment is possible, used when its result
//! carries a certificate of optimality and left to the general flow of [`super::uniform`]
//! otherwise.
//!
//! # The certificate
//!
//! Call partition p of topic t *alignable* when some member of the component runs in one of
//! p's replica racks (every member subscribes to t). No assignment aligns more partitions
//! than are alignable. Call a previous owner's claim on p *keepable* when p is not alignable
//! or its owner runs in one of p's replica racks; let k_tm count member m's keepable
//! partitions of t.
//!
//! 1. Spread and balance are as in [`super::homogeneous`]: with f_t = ⌊P_t/n⌋ and
//!    r_t = P_t mod n, an assignment is balance-optimal iff the extras y_tm (m gets f_t + 1
//!    of t) have column sums r_t and row sums q = ⌊E/n⌋ or q + 1 (E = Σ r_t).
//! 2. Suppose an assignment A with such a y aligns *every* alignable partition. Then A is
//!    optimal for rack alignment (it meets the bound), and so is every assignment B that is
//!    optimal for objectives 1–4: B aligns every alignable partition too. So every partition
//!    that B keeps is keepable (an alignable one is kept by an owner that is aligned with it),
//!    and B keeps at most Σ_tm min(k_tm, c_tm) for its counts c_tm = f_t + y_tm.
//! 3. [`homogeneous::choose_extras`] on the keepable claims maximises exactly that bound over
//!    every balance-optimal y. If every member then keeps min(k_tm, c_tm) of its keepable
//!    partitions and the partitions left over can be placed so that every alignable one is
//!    aligned, the result meets every bound: it is optimal for objectives 1–5.
//!
//! The partitions left over are placed by a small maximum flow per topic: alignable ones
//! grouped by the set of member racks among their replicas (a bit mask), each group to the
//! racks of its mask, each rack up to the room its members have left. When the flow cannot
//! place all of them (the extras fell on the wrong racks, or the kept partitions used the
//! room an alignable group needs), [`assign`] gives up, writes nothing, and the caller runs
//! the general flow, which is exact in every case. It also gives up when the component's
//! members run in more than 64 racks or a topic's left-over partitions fall into more than
//! [`MAX_GROUPS`] masks (keeping the small flow small).
//!
//! # Tie rule (objective 6)
//!
//! The extras: [`homogeneous::choose_extras`] on the keepable claims (rotation, greedy or
//! flow, see there). Then, per topic: each member keeps its own keepable partitions up to
//! c_tm, lowest numbers first; the small flow splits every group over racks (groups in mask
//! order first send straight to the racks of their mask in name order while those have room,
//! then breadth-first augmenting paths move the rest), each group's partitions ascending going to its racks
//! in name order; a rack's partitions, ascending, fill its members with room in id order; the
//! partitions that cannot be aligned, ascending, fill the room left in member id order. All of
//! it reads only the canonical [`Problem`] order.
//!
//! # Complexity
//!
//! O(P·ρ·log R + claims + Σ_t |Sub(t)|) for masks (ρ replicas per partition, R racks), the
//! choice of extras as in [`super::homogeneous`], and per topic a flow over at most
//! [`MAX_GROUPS`] masks × R racks whose augmentations each place at least one partition. No
//! partition × member product is built.

use std::collections::BTreeSet;

use rustc_hash::FxHashMap;

use super::components::{Component, LocalIndex};
use super::homogeneous::{self, Choice, Repair, Route};
use super::problem::Problem;

/// The most distinct rack masks among a topic's left-over alignable partitions that the small
/// flow accepts; beyond that the general flow runs instead.
pub(crate) const MAX_GROUPS: usize = 256;

/// Whether this path may apply to `comp`: rack awareness on, every member subscribes to every
/// topic, at most 64 racks among the members, and some partition can be aligned (otherwise
/// [`super::homogeneous`] applies).
pub(crate) fn applies(problem: &Problem<'_>, comp: &Component, rack_aware: bool) -> bool {
    if !rack_aware || !comp.homogeneous(problem) || homogeneous::applies(problem, comp, true) {
        return false;
    }
    racks(problem, comp).len() <= 64
}

/// The distinct racks of the component's members, in name order (bit i of a mask is rack i).
fn racks<'a>(problem: &Problem<'a>, comp: &Component) -> Vec<&'a str> {
    let racks: BTreeSet<&str> = comp
        .members
        .iter()
        .filter_map(|&m| problem.members[m as usize].rack.as_deref())
        .collect();
    racks.into_iter().collect()
}

/// Assigns the partitions of `comp` (where [`applies`] holds) optimally for objectives 1–5
/// when the certificate of the module docs holds, appending `(topic, partition)` pairs to
/// `lists`, and returns how the extras were chosen. Returns `None` and leaves `lists` as it
/// found them when the certificate fails. `owners` are the previous owners per topic.
pub(crate) fn assign(
    problem: &Problem<'_>,
    comp: &Component,
    owners: &[Vec<(i32, u32)>],
    lists: &mut [Vec<(u32, i32)>],
) -> Option<Route> {
    assign_as(problem, comp, owners, lists, Variant::Exact)
}

/// The exact path, or a deliberately broken variant that tests show the oracles catch.
#[derive(Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) enum Variant {
    /// The path of the module docs.
    Exact,
    /// Every claim counts as keepable, aligned with its owner or not.
    AllClaimsKeepable,
    /// No check that left-over partitions can be aligned: the extras are the greedy's
    /// unrepaired, and what the small flow cannot align goes anywhere.
    NoTransportCheck,
}

/// [`assign`] as `variant`.
pub(crate) fn assign_as(
    problem: &Problem<'_>,
    comp: &Component,
    owners: &[Vec<(i32, u32)>],
    lists: &mut [Vec<(u32, i32)>],
    variant: Variant,
) -> Option<Route> {
    let n = comp.members.len();
    let racks = racks(problem, comp);
    if n == 0 || racks.is_empty() || racks.len() > 64 {
        return None;
    }
    let index = comp.local_index(problem.members.len());
    let local = |m: u32| index.get(comp, m);
    let member_bit: Vec<u64> = comp
        .members
        .iter()
        .map(|&m| match problem.members[m as usize].rack.as_deref() {
            Some(r) => racks.binary_search(&r).map_or(0, |i| 1u64 << i),
            None => 0,
        })
        .collect();

    // Replica names are looked up once per partition: a hash map beats comparing strings.
    let rack_bit: FxHashMap<&str, u64> = racks
        .iter()
        .enumerate()
        .map(|(i, &r)| (r, 1u64 << i))
        .collect();
    // Masks of every partition of the component's topics, and the keepable claims.
    let mut masks: Vec<u64> = Vec::new();
    let mut mask_start: Vec<usize> = Vec::with_capacity(comp.topics.len());
    let mut keepable: Vec<Vec<(i32, u32)>> = vec![Vec::new(); owners.len()];
    for &t in &comp.topics {
        let start = masks.len();
        mask_start.push(start);
        let count = problem.partitions(t) as usize;
        match &problem.topics[t as usize].replica_racks {
            Some(replicas) => masks.extend(replicas.iter().map(|names| {
                names.iter().fold(0u64, |mask, name| {
                    mask | rack_bit.get(name.as_str()).copied().unwrap_or(0)
                })
            })),
            None => masks.resize(start + count, 0),
        }
        let topic_masks = &masks[start..];
        keepable[t as usize] = owners[t as usize]
            .iter()
            .copied()
            .filter(|&(p, m)| {
                let mask = topic_masks[p as usize];
                mask == 0
                    || mask & member_bit[local(m)] != 0
                    || variant == Variant::AllClaimsKeepable
            })
            .collect();
    }

    let mut fit = Fit {
        problem,
        comp,
        index: &index,
        masks: &masks,
        mask_start: &mask_start,
        keepable: &keepable,
        member_bit: &member_bit,
        count: vec![0; n],
        marginal: vec![0; n],
        key_of: Vec::new(),
        chosen_mark: vec![false; n],
        touched: Vec::new(),
        group_masks: Vec::new(),
        group_base: Vec::new(),
        supply: Vec::new(),
        room_base: vec![0; racks.len()],
        room: vec![0; racks.len()],
        supply_try: Vec::new(),
        room_try: Vec::new(),
        rack_size: rack_sizes(&member_bit, racks.len()),
        flow: Transport::default(),
        check: variant != Variant::NoTransportCheck,
    };
    let (extras, route) =
        homogeneous::choose_extras(problem, comp, &keepable, Choice::Repaired(&mut fit));

    homogeneous::reserve(problem, comp, lists);
    let before: Vec<usize> = comp
        .members
        .iter()
        .map(|&m| lists[m as usize].len())
        .collect();
    let mut rack_members: Vec<Vec<u32>> = vec![Vec::new(); racks.len()];
    for (lm, &bit) in member_bit.iter().enumerate() {
        if bit != 0 {
            rack_members[bit.trailing_zeros() as usize].push(lm as u32);
        }
    }
    let mut deal = Deal {
        room: vec![0; n],
        free: Vec::new(),
        groups: Vec::new(),
        flow: Transport::default(),
        check: variant != Variant::NoTransportCheck,
    };
    let mut next_extras = 0;
    for (i, &t) in comp.topics.iter().enumerate() {
        let chosen: &[u32] = match extras.get(next_extras) {
            Some(x) if x.topic == t => {
                next_extras += 1;
                &x.chosen
            }
            _ => &[],
        };
        let count = problem.partitions(t) as usize;
        let topic_masks = &masks[mask_start[i]..mask_start[i] + count];
        let placed = deal.topic(
            comp,
            &index,
            t,
            topic_masks,
            &keepable[t as usize],
            chosen,
            &rack_members,
            lists,
        );
        if !placed {
            for (&m, &len) in comp.members.iter().zip(&before) {
                lists[m as usize].truncate(len);
            }
            return None;
        }
    }
    Some(route)
}

/// Buffers reused from topic to topic.
struct Deal {
    /// Places left per local member in the current topic.
    room: Vec<u32>,
    /// Left-over partitions that cannot be aligned.
    free: Vec<i32>,
    /// Left-over alignable partitions by mask, masks ascending.
    groups: Vec<(u64, Vec<i32>)>,
    flow: Transport,
    /// Off only in [`Variant::NoTransportCheck`].
    check: bool,
}

impl Deal {
    /// Deals topic `t`; `false` (with some of it already written to `lists`) when the
    /// left-over alignable partitions cannot all be aligned.
    #[allow(clippy::too_many_arguments)]
    fn topic(
        &mut self,
        comp: &Component,
        index: &LocalIndex,
        t: u32,
        masks: &[u64],
        keepable: &[(i32, u32)],
        chosen: &[u32],
        rack_members: &[Vec<u32>],
        lists: &mut [Vec<(u32, i32)>],
    ) -> bool {
        let n = comp.members.len();
        let floor = masks.len() as u32 / n as u32;
        self.room.fill(floor);
        for &lm in chosen {
            self.room[lm as usize] += 1;
        }
        self.free.clear();
        for group in &mut self.groups {
            group.1.clear();
        }
        let mut claims = keepable.iter().peekable();
        for (p, &mask) in masks.iter().enumerate() {
            let p = p as i32;
            if let Some(&&(claimed, m)) = claims.peek()
                && claimed == p
            {
                claims.next();
                let lm = index.get(comp, m);
                if self.room[lm] > 0 {
                    self.room[lm] -= 1;
                    lists[m as usize].push((t, p));
                    continue;
                }
            }
            if mask == 0 {
                self.free.push(p);
            } else {
                match self.groups.binary_search_by_key(&mask, |g| g.0) {
                    Ok(i) => self.groups[i].1.push(p),
                    Err(i) => {
                        if self.groups.len() >= MAX_GROUPS {
                            return false;
                        }
                        self.groups.insert(i, (mask, vec![p]));
                    }
                }
            }
        }
        self.groups.retain(|g| !g.1.is_empty());

        // How many of each group go to each rack.
        let capacity: Vec<u64> = rack_members
            .iter()
            .map(|ms| ms.iter().map(|&lm| u64::from(self.room[lm as usize])).sum())
            .collect();
        let masks: Vec<u64> = self.groups.iter().map(|g| g.0).collect();
        let supply: Vec<u64> = self.groups.iter().map(|g| g.1.len() as u64).collect();
        if !self.flow.solve(&masks, &supply, &capacity) {
            if self.check {
                return false;
            }
            for group in self.groups.drain(..) {
                self.free.extend(group.1);
            }
            self.free.sort_unstable();
        }
        let racks = capacity.len();
        let mut taken = vec![0usize; self.groups.len()];
        let mut bucket: Vec<i32> = Vec::new();
        for (r, members) in rack_members.iter().enumerate() {
            bucket.clear();
            for (g, group) in self.groups.iter().enumerate() {
                let amount = self.flow.amount[g * racks + r] as usize;
                bucket.extend_from_slice(&group.1[taken[g]..taken[g] + amount]);
                taken[g] += amount;
            }
            bucket.sort_unstable();
            let mut next = bucket.iter();
            for &lm in members {
                let room = &mut self.room[lm as usize];
                let before = next.len();
                let list = &mut lists[comp.members[lm as usize] as usize];
                list.extend(next.by_ref().take(*room as usize).map(|&p| (t, p)));
                *room -= (before - next.len()) as u32;
            }
        }
        let mut next = self.free.iter();
        for (lm, &m) in comp.members.iter().enumerate() {
            let room = self.room[lm] as usize;
            lists[m as usize].extend(next.by_ref().take(room).map(|&p| (t, p)));
        }
        debug_assert!(next.next().is_none(), "topic {t}: partitions left undealt");
        true
    }
}

/// A maximum flow from mask groups to racks (group g may send to rack r when bit r is in its
/// mask, rack r takes at most its capacity), by breadth-first augmenting paths.
#[derive(Default)]
struct Transport {
    /// Units of group g sent to rack r, at `g * racks + r`.
    amount: Vec<u64>,
    /// After a failed [`Transport::solve`]: the racks reachable from the groups left with
    /// units, all full. Only more room there, or fewer units in groups whose masks lie within
    /// them, can make the flow succeed.
    reached: u64,
    /// After a failed [`Transport::solve`]: the units the maximum flow leaves unplaced.
    unplaced: u64,
}

impl Transport {
    /// Sends all `supply[g]` units of every group g to racks of `masks[g]` within the
    /// capacities, if possible; returns whether it is.
    fn solve(&mut self, masks: &[u64], supply: &[u64], capacity: &[u64]) -> bool {
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

/// What one member's extra changes for the small flow (see [`Fit`]).
#[derive(Clone, Copy)]
enum Effect {
    /// It keeps one more of its own partitions: one fewer left over in this group.
    Keeps(usize),
    /// It has one more place, in this rack.
    Room(usize),
    /// Neither (its kept partition or its place cannot be aligned anyway).
    Nothing,
}

/// How many members run in each rack.
fn rack_sizes(member_bit: &[u64], racks: usize) -> Vec<u64> {
    let mut size = vec![0u64; racks];
    for &bit in member_bit {
        if bit != 0 {
            size[bit.trailing_zeros() as usize] += 1;
        }
    }
    size
}

/// The most exchanges [`Fit`] tries for one topic before refusing.
const MAX_EXCHANGES: usize = 64;

/// The [`Repair`] of the greedy's choice: it accepts a topic's extras only when the deal can
/// then align every left-over alignable partition, exchanging chosen members to get there.
///
/// With the extras fixed, the deal keeps each member's lowest keepable partitions up to its
/// count. Relative to nobody having the extra (the *base*), giving member m the extra
/// either keeps one more of its own partitions, the (f+1)-th lowest keepable one, when m
/// has more than f keepable ones (a *gaining* member: one fewer left-over partition, of that
/// partition's mask), or else gives m one more place (one more unit of room in m's rack).
struct Fit<'a, 'p> {
    problem: &'a Problem<'p>,
    comp: &'a Component,
    index: &'a LocalIndex,
    masks: &'a [u64],
    mask_start: &'a [usize],
    keepable: &'a [Vec<(i32, u32)>],
    member_bit: &'a [u64],
    /// Keepable partitions per local member in the current topic (zero between topics).
    count: Vec<u32>,
    /// The mask of a gaining member's (f+1)-th keepable partition.
    marginal: Vec<u64>,
    /// The greedy's key per local member and who is chosen, built only when an exchange is
    /// needed.
    key_of: Vec<u64>,
    chosen_mark: Vec<bool>,
    touched: Vec<u32>,
    /// Left-over alignable partitions of the base, by mask (ascending).
    group_masks: Vec<u64>,
    group_base: Vec<u64>,
    supply: Vec<u64>,
    /// Room per rack in the base, and with the current choice.
    room_base: Vec<u64>,
    room: Vec<u64>,
    /// Scratch copies of `supply` and `room` for a trial exchange.
    supply_try: Vec<u64>,
    room_try: Vec<u64>,
    rack_size: Vec<u64>,
    flow: Transport,
    /// Off only in [`Variant::NoTransportCheck`]: every choice is accepted.
    check: bool,
}

impl Fit<'_, '_> {
    /// Builds the base of topic `t` (position `i` in the component).
    fn base(&mut self, i: usize, t: u32) -> u32 {
        let n = self.comp.members.len();
        let count = self.problem.partitions(t) as usize;
        let floor = (count / n) as u32;
        let masks = &self.masks[self.mask_start[i]..self.mask_start[i] + count];
        for (r, room) in self.room_base.iter_mut().enumerate() {
            *room = u64::from(floor) * self.rack_size[r];
        }
        self.group_masks.clear();
        self.group_base.clear();
        let mut claims = self.keepable[t as usize].iter().peekable();
        for (p, &mask) in masks.iter().enumerate() {
            if let Some(&&(claimed, m)) = claims.peek()
                && claimed as usize == p
            {
                claims.next();
                let lm = self.index.get(self.comp, m);
                if self.count[lm] == 0 {
                    self.touched.push(lm as u32);
                }
                self.count[lm] += 1;
                if self.count[lm] <= floor {
                    let bit = self.member_bit[lm];
                    if bit != 0 {
                        self.room_base[bit.trailing_zeros() as usize] -= 1;
                    }
                    continue;
                }
                if self.count[lm] == floor + 1 {
                    self.marginal[lm] = mask;
                }
            }
            if mask != 0 {
                match self.group_masks.binary_search(&mask) {
                    Ok(g) => self.group_base[g] += 1,
                    Err(g) => {
                        self.group_masks.insert(g, mask);
                        self.group_base.insert(g, 1);
                    }
                }
            }
        }
        floor
    }

    /// Sets `supply` and `room` to the left-over partitions and room with `chosen` having
    /// the extras.
    fn tally(&mut self, chosen: &[u32], floor: u32) {
        self.supply.clone_from(&self.group_base);
        self.room.clone_from(&self.room_base);
        for &lm in chosen {
            Self::apply(
                self.effect(lm as usize, floor),
                1,
                &mut self.supply,
                &mut self.room,
            );
        }
    }

    /// What giving `lm` the extra changes: one fewer left-over partition in a group, one more
    /// place in a rack, or nothing the small flow sees.
    fn effect(&self, lm: usize, floor: u32) -> Effect {
        if self.count[lm] > floor {
            match self.group_masks.binary_search(&self.marginal[lm]) {
                Ok(g) => Effect::Keeps(g),
                Err(_) => Effect::Nothing,
            }
        } else if self.member_bit[lm] != 0 {
            Effect::Room(self.member_bit[lm].trailing_zeros() as usize)
        } else {
            Effect::Nothing
        }
    }

    /// Applies `effect` once (`sign` 1) or undoes it (`sign` −1).
    fn apply(effect: Effect, sign: i64, supply: &mut [u64], room: &mut [u64]) {
        match effect {
            Effect::Keeps(g) => supply[g] = supply[g].wrapping_sub(sign as u64),
            Effect::Room(r) => room[r] = room[r].wrapping_add(sign as u64),
            Effect::Nothing => {}
        }
    }

    /// Whether the left-over alignable partitions fit as tallied.
    fn fits_now(&mut self) -> bool {
        self.flow.solve(&self.group_masks, &self.supply, &self.room)
    }

    /// Whether they would fit with `out` giving its extra to `into`.
    fn fits_with(&mut self, out: usize, into: usize, floor: u32) -> bool {
        self.supply_try.clone_from(&self.supply);
        self.room_try.clone_from(&self.room);
        Self::apply(
            self.effect(out, floor),
            -1,
            &mut self.supply_try,
            &mut self.room_try,
        );
        Self::apply(
            self.effect(into, floor),
            1,
            &mut self.supply_try,
            &mut self.room_try,
        );
        self.flow
            .solve(&self.group_masks, &self.supply_try, &self.room_try)
    }

    /// Whether giving `lm` the extra adds room or removes a left-over partition within the
    /// racks `z`.
    fn helps(&self, lm: usize, floor: u32, z: u64) -> bool {
        if self.count[lm] > floor {
            self.marginal[lm] != 0 && self.marginal[lm] & !z == 0
        } else {
            self.member_bit[lm] & z != 0
        }
    }
}

impl Fit<'_, '_> {
    /// Exchanges chosen members for others until the left-over partitions fit; `false` if it
    /// cannot. Each exchange takes in one of the [`CANDIDATES`] highest-ranked members that
    /// help within the racks the failed flow reached, and takes out one of the lowest-ranked
    /// chosen that do not: the pair that leaves the fewest units unplaced, first in that
    /// order among equals, and only when it leaves fewer than before.
    fn exchange(
        &mut self,
        chosen: &mut [u32],
        floor: u32,
        keys: &[u64],
        received: &[u32],
        q: u32,
        plus_left: u32,
    ) -> bool {
        let n = self.comp.members.len();
        self.key_of.clear();
        self.key_of.resize(n, 0);
        for &key in keys {
            if key != 0 {
                self.key_of[(u32::MAX - key as u32) as usize] = key;
            }
        }
        for &lm in chosen.iter() {
            self.chosen_mark[lm as usize] = true;
        }
        let mut accepted = false;
        let mut unplaced = self.flow.unplaced;
        for _ in 0..MAX_EXCHANGES {
            let z = self.flow.reached;
            let mut outs: Vec<(u64, usize)> = chosen
                .iter()
                .enumerate()
                .filter(|&(_, &lm)| !self.helps(lm as usize, floor, z))
                .map(|(pos, &lm)| (self.key_of[lm as usize], pos))
                .collect();
            lowest(&mut outs);
            let at_q = chosen
                .iter()
                .filter(|&&lm| received[lm as usize] == q)
                .count() as u32;
            let mut ins: Vec<(u64, usize)> = (0..n)
                .filter(|&lm| self.key_of[lm] != 0 && !self.chosen_mark[lm])
                .filter(|&lm| self.helps(lm, floor, z))
                .map(|lm| (u64::MAX - self.key_of[lm], lm))
                .collect();
            lowest(&mut ins);
            let mut best: Option<(u64, usize, usize)> = None;
            'pairs: for &(_, in_lm) in &ins {
                for &(_, pos) in &outs {
                    let out_lm = chosen[pos] as usize;
                    let above =
                        at_q - u32::from(received[out_lm] == q) + u32::from(received[in_lm] == q);
                    if above > plus_left {
                        continue;
                    }
                    let fits = self.fits_with(out_lm, in_lm, floor);
                    let left = if fits { 0 } else { self.flow.unplaced };
                    if best.is_none_or(|(b, _, _)| left < b) {
                        best = Some((left, pos, in_lm));
                        if left == 0 {
                            break 'pairs;
                        }
                    }
                }
            }
            let Some((left, pos, in_lm)) = best.filter(|&(left, _, _)| left < unplaced) else {
                break;
            };
            let out_lm = chosen[pos] as usize;
            self.chosen_mark[out_lm] = false;
            self.chosen_mark[in_lm] = true;
            chosen[pos] = in_lm as u32;
            Self::apply(
                self.effect(out_lm, floor),
                -1,
                &mut self.supply,
                &mut self.room,
            );
            Self::apply(
                self.effect(in_lm, floor),
                1,
                &mut self.supply,
                &mut self.room,
            );
            unplaced = left;
            if left == 0 {
                accepted = true;
                break;
            }
            // Recompute the reached racks for the choice now made.
            let _ = self.fits_now();
        }
        for &lm in chosen.iter() {
            self.chosen_mark[lm as usize] = false;
        }
        accepted
    }
}

/// How many members on each side an exchange considers.
const CANDIDATES: usize = 8;

/// Keeps the [`CANDIDATES`] smallest entries of `items`, ascending.
fn lowest(items: &mut Vec<(u64, usize)>) {
    if items.len() > CANDIDATES {
        items.select_nth_unstable(CANDIDATES);
        items.truncate(CANDIDATES);
    }
    items.sort_unstable();
}

impl Repair for Fit<'_, '_> {
    fn repair(
        &mut self,
        topic: u32,
        chosen: &mut Vec<u32>,
        keys: &[u64],
        received: &[u32],
        q: u32,
        plus_left: u32,
    ) -> bool {
        if !self.check {
            return true;
        }
        let Ok(i) = self.comp.topics.binary_search(&topic) else {
            return false;
        };
        let floor = self.base(i, topic);
        self.tally(chosen, floor);
        let accepted =
            self.fits_now() || self.exchange(chosen, floor, keys, received, q, plus_left);
        for &lm in &self.touched {
            self.count[lm as usize] = 0;
        }
        self.touched.clear();
        accepted
    }
}
