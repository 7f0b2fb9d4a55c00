//! The warm start proposed to the flow of extras when every topic is open (f_t = 0).
//!
//! # The proposal
//!
//! Every member keeps one keepable claim in each topic where it has one (the keep edge of
//! its lowest mask), as far as its capacity allows: member → sink q, member → Z 1, Z → sink
//! s, all keeps of every topic placed before any other unit. A member with more such topics
//! than it can take (after a join, every old member) gives up its excess where another can
//! take the claim ([`Drops`]): topic by topic, the members with the least slack first, each
//! claim to the next member with room (fewer such topics than q) that runs in a rack of the
//! claim's mask and has nothing of the topic yet; where no member with room runs in such a
//! rack, a full member that does takes it and gives up one more claim of its own later (a
//! chain of two). Without this, the claims given up were the last topics' (the room ran out
//! there), bunched in topics where the joiner can take one each: on the benchmark's racked
//! join of 1,000 topics 37 of 1,000 units were left to the solver's phases. Then, topic by topic, each
//! group's left-over units (its supply less the claims kept from it) go one at a time to the
//! next member, in a rotating order, that has no keepable claim in the topic, took nothing
//! of it yet, runs in a rack of the group's mask (any rack for the free node) and has room
//! left, through that rack and the member's pool edge ([`super::super::keep_all`]'s
//! `first_fit` places them the same way). Units that fit nowhere then go by chains of two
//! ([`Chains`]): a member of a rack of the unit's mask with nothing of its topic takes it and
//! gives up a claim it kept in another topic to a member with room there. On the benchmark's
//! racked leave of 1,000 topics the 50 partitions of the member that left all have mask
//! {r0, r1}, and the members of r0 and r1 with room have too few places, or already a unit
//! of the topic: the rest go by members of those racks giving up claims of masks with r2 to
//! members of r2. Without the chains those units were left to the solver's phases; with
//! them the proposal carries every unit and is certified with no cycle to cancel. Units no
//! chain places are left to the solver.
//!
//! # Why it certifies
//!
//! A flow's cost is minus the keep edges it uses, and every pair node (t,m) passes at most
//! one unit to m: no flow uses more keep edges than there are pair nodes. When every pair
//! node got its keep (the usual case: [`super::super::keep_all`] checks that keeping every
//! claim is balanced before the greedy is skipped), the proposal has the least cost of *any* flow, so no residual cycle
//! has a negative cost and the solver's certification settles at once; its phases then only
//! carry the units left over (on the benchmark's racked leave, the few that make a member
//! give up a claim). When some keep did not fit, the proposal may not be of minimum cost for
//! its value: the solver then cancels cycles or starts cold. Claims given up keep that
//! least cost where every member's excess goes straight to a member with room (each member
//! then keeps min(its pair nodes, its q or q + 1 units), the s places above q with the
//! members that have most, which bounds the keep edges of any flow); a chain of two gives up
//! one claim more, which the solver cancels. A chain placing a unit that fits nowhere gives
//! up one claim too: where, as on the benchmark's leave, every such unit needs one (the
//! places left in its racks are fewer than its units by as many as the chains), the
//! proposal is still of the least cost for its value. Either way the solver decides
//! the result's optimality, never this proposal (see [`super::super::super::flow`]).
//!
//! # Complexity
//!
//! O(keep edges) for the keeps, then per group with left-over units at most one pass over
//! the members: a member takes at most one unit per topic. Giving up claims adds, per topic
//! while some member has excess, a sort of its candidates and one pass over the members per
//! candidate. A chain, only for a unit that fits nowhere, scans the members of the unit's
//! racks and, for the first with nothing of its topic, its kept claims against the members
//! with room (two passes over the keep edges first list each member's claims kept).

use super::super::super::flow::Network;
use super::super::super::racks::search_masks;
use super::{Plan, TopicEdges};

mod chains;

use chains::Chains;

/// The edges into the sink that a proposal loads, by local member.
pub(super) struct SinkEdges {
    /// member m → sink (capacity q), when q > 0.
    pub(super) to_sink: Vec<Option<usize>>,
    /// member m → Z (capacity 1), when s > 0.
    pub(super) to_z: Vec<Option<usize>>,
    /// Z → sink (capacity s), when s > 0.
    pub(super) z: Option<usize>,
    /// The source → group edge of each topic's groups, the free node's last (`None`: no
    /// supply), plan after plan (a plan's start is its `TopicEdges::source_at`).
    pub(super) from_source: Vec<Option<usize>>,
    /// q = ⌊E/n⌋: each member's capacity into the sink.
    pub(super) q: u64,
    /// s = E mod n: the capacity of Z → sink.
    pub(super) s: u64,
}

/// Each member's room left in the proposal: units on its edge to the sink, and whether its
/// one unit through Z is used.
struct Room {
    spare: Vec<u64>,
    plus: Vec<bool>,
    z_left: u64,
}

impl Room {
    /// Whether member `lm` can take one more unit.
    fn has(&self, sinks: &SinkEdges, lm: usize) -> bool {
        (self.spare[lm] > 0 && sinks.to_sink[lm].is_some())
            || (!self.plus[lm] && self.z_left > 0 && sinks.to_z[lm].is_some() && sinks.z.is_some())
    }

    /// Routes one more unit from member `lm` to the sink if it has room (its q places, then
    /// its place above q while Z has room).
    // Inlined as before the chains called it too: a call per unit cost 0.3% on the racked
    // bucket join of 1,000 topics.
    #[inline(always)]
    fn take(&mut self, net: &mut Network, sinks: &SinkEdges, lm: usize) -> bool {
        #[cfg(test)]
        if tally::planted() {
            // The planted mistake: every unit goes straight to the sink, room or not.
            if let Some(id) = sinks.to_sink[lm] {
                net.add_preset(id, 1);
                return true;
            }
        }
        if self.spare[lm] > 0
            && let Some(id) = sinks.to_sink[lm]
        {
            self.spare[lm] -= 1;
            net.add_preset(id, 1);
            return true;
        }
        if !self.plus[lm]
            && self.z_left > 0
            && let (Some(to_z), Some(z)) = (sinks.to_z[lm], sinks.z)
        {
            self.plus[lm] = true;
            self.z_left -= 1;
            net.add_preset(to_z, 1);
            net.add_preset(z, 1);
            return true;
        }
        false
    }
}

/// Proposes the warm start of the module docs on `net`, built by
/// [`choose`](super::choose) from `plans` (every one open) with `edges`, `member_edges` (the
/// edges into the member nodes, n per plan) and `sinks`. `member_bit` is each local
/// member's rack bit (every member runs in a rack).
pub(super) fn propose(
    net: &mut Network,
    plans: &[Plan],
    edges: &[TopicEdges],
    member_edges: &[usize],
    sinks: &SinkEdges,
    member_bit: &[u64],
    racks: usize,
) {
    let n = member_bit.len();
    let mut room = Room {
        spare: vec![sinks.q; n],
        plus: vec![false; n],
        z_left: sinks.s,
    };
    // Units taken from each group of each plan by the keeps (the free node last).
    // Laid out as `sinks.from_source`.
    let mut used: Vec<u64> = vec![0; sinks.from_source.len()];
    let mut drops = Drops::new(plans, sinks, member_bit);
    // (plan, receiver) of each claim given up, plan after plan.
    let mut given: Vec<(usize, usize)> = Vec::new();
    let mut rack_edge: Vec<Option<usize>> = Vec::new();
    let mut chosen: Vec<(usize, usize, u64)> = Vec::new();
    for (i, (plan, e)) in plans.iter().zip(edges).enumerate() {
        let used = &mut used[e.source_at..];
        let group_of = |mask: u64| match mask {
            0 => Some(plan.groups.len()),
            _ => search_masks(plan.groups, mask, |g| g.0).ok(),
        };
        if drops.any() {
            rack_edge.clear();
            rack_edge.resize((plan.groups.len() + 1) * racks, None);
            for &(g, r, id) in e.to_rack {
                rack_edge[g * racks + r] = Some(id);
            }
            drops.choose(plan, i, member_bit, &mut chosen);
            // A member with more claims than it can keep gives this one up where a member
            // with room takes it.
            for &(lm, r, mask) in &chosen {
                if let Some(g) = group_of(mask)
                    && let Some(from_source) = sinks.from_source[e.source_at + g]
                    && let Some(to_rack) =
                        rack_edge[g * racks + member_bit[r].trailing_zeros() as usize]
                    && room.take(net, sinks, r)
                {
                    drops.give(lm, r, i);
                    given.push((i, r));
                    used[g] += 1;
                    net.add_preset(from_source, 1);
                    net.add_preset(to_rack, 1);
                    net.add_preset(member_edges[e.member_at + r], 1);
                }
            }
        }
        let mut last = u32::MAX;
        for &(lm, mask, id) in e.keep {
            // A member's keep edges are listed together, masks ascending: the first is kept.
            if lm == last {
                continue;
            }
            last = lm;
            if drops.gave_up(lm as usize, i) {
                continue;
            }
            let Some(g) = group_of(mask) else { continue };
            let Some(from_source) = sinks.from_source[e.source_at + g] else {
                continue;
            };
            if !room.take(net, sinks, lm as usize) {
                continue;
            }
            used[g] += 1;
            net.add_preset(from_source, 1);
            net.add_preset(id, 1);
            net.add_preset(member_edges[e.member_at + lm as usize], 1);
        }
    }
    // Which topic (plan index + 1) each member has a claim in or took a unit of.
    let mut busy = vec![usize::MAX; n];
    let mut cursor = 0usize;
    let mut given = given.iter().peekable();
    // (plan, group, units) that fit nowhere.
    let mut short: Vec<(usize, usize, u64)> = Vec::new();
    for (i, (plan, e)) in plans.iter().zip(edges).enumerate() {
        // The receivers of claims given up in this topic took their one unit of it.
        while let Some(&(_, r)) = given.next_if(|x| x.0 == i) {
            busy[r] = i;
        }
        let used = &used[e.source_at..];
        let supplies = plan
            .groups
            .iter()
            .map(|g| g.1)
            .chain(std::iter::once(plan.free));
        if supplies.zip(used).all(|(supply, &u)| supply <= u) {
            continue;
        }
        for &(lm, _) in plan.keep_masks {
            busy[lm as usize] = i;
        }
        let k = plan.groups.len();
        rack_edge.clear();
        rack_edge.resize((k + 1) * racks, None);
        for &(g, r, id) in e.to_rack {
            rack_edge[g * racks + r] = Some(id);
        }
        for g in 0..=k {
            let (mask, supply) = if g < k {
                plan.groups[g]
            } else {
                (0, plan.free)
            };
            let mut left = supply.saturating_sub(used[g]);
            let Some(from_source) = sinks.from_source[e.source_at + g] else {
                continue;
            };
            for step in 0..n {
                if left == 0 {
                    break;
                }
                let lm = (cursor + step) % n;
                let bit = member_bit[lm];
                if busy[lm] == i || bit == 0 || (mask != 0 && mask & bit == 0) {
                    continue;
                }
                let r = bit.trailing_zeros() as usize;
                let Some(to_rack) = rack_edge[g * racks + r] else {
                    continue;
                };
                if !room.take(net, sinks, lm) {
                    continue;
                }
                busy[lm] = i;
                left -= 1;
                net.add_preset(from_source, 1);
                net.add_preset(to_rack, 1);
                net.add_preset(member_edges[e.member_at + lm], 1);
                cursor = lm + 1;
            }
            if left > 0 {
                short.push((i, g, left));
            }
        }
    }
    if !short.is_empty() {
        let chains = Chains {
            plans,
            edges,
            member_edges,
            sinks,
            member_bit,
        };
        chains.place(net, &mut room, &short);
    }
    #[cfg(test)]
    {
        tally::add(tally::PROPOSED);
        let supply: u64 = plans
            .iter()
            .map(|p| p.groups.iter().map(|g| g.1).sum::<u64>() + p.free)
            .sum();
        let placed: u64 = sinks
            .from_source
            .iter()
            .flatten()
            .map(|&id| net.preset_on(id) as u64)
            .sum();
        if placed == supply {
            tally::add(tally::FULL);
        }
    }
}

/// The claims members give up in the proposal: a member with more topics holding its
/// keepable claims (pair nodes, each passing at most one unit) than it can take gives up its
/// excess, each claim where a member with room (fewer such topics than q) that runs in a
/// rack of the claim's mask and has nothing of the topic yet takes its place. The s places
/// above q go to the members with the most pair nodes (ids ascending among equals), so that
/// each keeps as many as any flow can. In each topic the members with the least slack (the
/// topics left where they could give up a claim, less their excess) give up first.
struct Drops {
    /// Per member: claims still to give up.
    excess: Vec<u64>,
    /// Per member: units it can still take beyond its own claims, up to q.
    spare: Vec<u64>,
    /// Per member: topics left (this one included) where its claim's mask meets a rack of
    /// a member with room at the start.
    chances: Vec<u64>,
    /// The racks of the members with room at the start.
    receiving: u64,
    /// Per member: the last plan it has a pair node in or took a unit of.
    busy: Vec<usize>,
    /// Per member: the last plan where it gave up its claim.
    gave: Vec<usize>,
    /// Claims still to give up, in total.
    left: u64,
    /// Where the search for a receiver starts (rotating, to spread the units).
    cursor: usize,
    /// (slack, member, mask) of this topic's candidates.
    candidates: Vec<(u64, usize, u64)>,
    /// (member, mask) of this topic's claims whose excess passes to another member.
    transfer: Vec<(usize, u64)>,
}

impl Drops {
    fn new(plans: &[Plan], sinks: &SinkEdges, member_bit: &[u64]) -> Drops {
        let n = member_bit.len();
        let mut pairs = vec![0u64; n];
        for plan in plans {
            let mut last = u32::MAX;
            for &(lm, _) in plan.keep_masks {
                if lm != last {
                    pairs[lm as usize] += 1;
                    last = lm;
                }
            }
        }
        let (q, s) = (sinks.q, sinks.s);
        let mut above: Vec<usize> = (0..n).filter(|&lm| pairs[lm] > q).collect();
        above.sort_by_key(|&lm| (std::cmp::Reverse(pairs[lm]), lm));
        let mut excess: Vec<u64> = pairs.iter().map(|&k| k.saturating_sub(q)).collect();
        for &lm in above.iter().take(s as usize) {
            excess[lm] -= 1;
        }
        #[cfg(test)]
        if tally::drops_planted() {
            excess.fill(0);
        }
        let spare: Vec<u64> = pairs.iter().map(|&k| q.saturating_sub(k)).collect();
        let receiving = (0..n)
            .filter(|&lm| spare[lm] > 0)
            .fold(0, |bits, lm| bits | member_bit[lm]);
        let left = excess.iter().sum();
        let mut chances = vec![0u64; n];
        if left > 0 {
            for plan in plans {
                let mut last = u32::MAX;
                for &(lm, mask) in plan.keep_masks {
                    if lm != last && (mask == 0 || mask & receiving != 0) {
                        chances[lm as usize] += 1;
                    }
                    last = lm;
                }
            }
        }
        Drops {
            excess,
            spare,
            chances,
            receiving,
            busy: vec![usize::MAX; n],
            gave: vec![usize::MAX; n],
            left,
            cursor: 0,
            candidates: Vec::new(),
            transfer: Vec::new(),
        }
    }

    /// Whether some member still has claims to give up.
    fn any(&self) -> bool {
        self.left > 0
    }

    /// Chooses, into `chosen` as (member, receiver, mask), the claims given up in `plan`
    /// (plan number `i`): candidates by slack, then id, each with the next receiver found.
    fn choose(
        &mut self,
        plan: &Plan,
        i: usize,
        member_bit: &[u64],
        chosen: &mut Vec<(usize, usize, u64)>,
    ) {
        chosen.clear();
        self.candidates.clear();
        self.transfer.clear();
        let mut last = u32::MAX;
        for &(lm, mask) in plan.keep_masks {
            self.busy[lm as usize] = i;
            if lm == last {
                continue;
            }
            last = lm;
            let m = lm as usize;
            if mask != 0 && mask & self.receiving == 0 {
                // No receiver can take this claim, but a full member of its racks can, and
                // give up a claim of its own later: m's excess passes to it.
                if self.excess[m] > self.chances[m] {
                    self.transfer.push((m, mask));
                }
                continue;
            }
            if self.excess[m] > 0 {
                let slack = self.chances[m].saturating_sub(self.excess[m]);
                self.candidates.push((slack, m, mask));
            }
            self.chances[m] = self.chances[m].saturating_sub(1);
        }
        self.candidates.sort_unstable();
        let n = self.spare.len();
        let mut taken: u64 = 0;
        for &(_, m, mask) in &self.candidates {
            let found = (0..n).map(|step| (self.cursor + step) % n).find(|&r| {
                self.spare[r] > 0
                    && self.busy[r] != i
                    && (taken >> (r % 64)) & 1 == 0
                    && member_bit[r] != 0
                    && (mask == 0 || mask & member_bit[r] != 0)
            });
            if let Some(r) = found {
                chosen.push((m, r, mask));
                // Receivers of this topic, marked until `give` records them.
                self.busy[r] = i;
                taken |= 1 << (r % 64);
                self.cursor = r + 1;
            }
        }
        for &(m, mask) in &self.transfer {
            // The full member of the claim's racks with the most chances to pass it on.
            let found = (0..n)
                .filter(|&w| {
                    self.busy[w] != i
                        && self.spare[w] == 0
                        && member_bit[w] & mask != 0
                        && self.chances[w] > self.excess[w]
                })
                .max_by_key(|&w| (self.chances[w] - self.excess[w], std::cmp::Reverse(w)));
            if let Some(w) = found {
                chosen.push((m, w, mask));
                self.busy[w] = i;
                // w gives up one more claim later; `give` takes back the unit of spare.
                self.excess[w] += 1;
                self.left += 1;
                self.spare[w] += 1;
            }
        }
    }

    /// Records that `lm` gave up its claim of plan `i` to `r`.
    fn give(&mut self, lm: usize, r: usize, i: usize) {
        self.excess[lm] -= 1;
        self.left -= 1;
        self.spare[r] -= 1;
        self.gave[lm] = i;
    }

    /// Whether `lm` gave up its claim of plan `i`.
    fn gave_up(&self, lm: usize, i: usize) -> bool {
        self.gave[lm] == i
    }
}

/// Test-only counts of the warm starts proposed and certified, and a planted mistake in the
/// proposal: it routes every unit over the member's edge to the sink, past its capacity q.
#[cfg(test)]
pub(crate) mod tally {
    /// Proposals made.
    pub(crate) const PROPOSED: usize = 0;
    /// Proposals the solver certified (it did not start cold).
    pub(crate) const CERTIFIED: usize = 1;
    /// Proposals of full value (every unit placed).
    pub(crate) const FULL: usize = 2;

    crate::assignor::tests::counts_and_fault!(3);

    thread_local! {
        static DROPS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    /// Plants (`true`) or removes the second fault on this thread: no member gives up a
    /// claim for another to take (the proposal keeps claims in topic order up to each
    /// member's room, as it did before claims were given up).
    pub(crate) fn plant_drops(on: bool) {
        DROPS.with(|c| c.set(on));
    }

    /// Whether the second fault is planted on this thread.
    pub(super) fn drops_planted() -> bool {
        DROPS.with(std::cell::Cell::get)
    }

    thread_local! {
        static CHAINS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    /// Plants (`true`) or removes the third fault on this thread: no chain places a unit
    /// that fits nowhere after the rotation (they are left to the solver).
    pub(crate) fn plant_chains(on: bool) {
        CHAINS.with(|c| c.set(on));
    }

    /// Whether the third fault is planted on this thread.
    pub(super) fn chains_planted() -> bool {
        CHAINS.with(std::cell::Cell::get)
    }
}
