//! The warm start proposed to the flow of extras when every topic is open (f_t = 0).
//!
//! # The proposal
//!
//! Every member keeps one keepable claim in each topic where it has one (the keep edge of
//! its lowest mask), as far as its capacity allows: member → sink q, member → Z 1, Z → sink
//! s, all keeps of every topic placed before any other unit. Then, topic by topic, each
//! group's left-over units (its supply less the claims kept from it) go one at a time to the
//! next member, in a rotating order, that has no keepable claim in the topic, took nothing
//! of it yet, runs in a rack of the group's mask (any rack for the free node) and has room
//! left, through that rack and the member's pool edge ([`super::super::keep_all`]'s
//! `first_fit` places them the same way). Units that fit nowhere are left to the solver.
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
//! its value: the solver then cancels cycles or starts cold. Either way the solver decides
//! the result's optimality, never this proposal (see [`super::super::super::flow`]).
//!
//! # Complexity
//!
//! O(keep edges) for the keeps, then per group with left-over units at most one pass over
//! the members: a member takes at most one unit per topic.

use super::super::super::flow::Network;
use super::{Plan, TopicEdges};

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
    /// Routes one more unit from member `lm` to the sink if it has room (its q places, then
    /// its place above q while Z has room).
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
    for (plan, e) in plans.iter().zip(edges) {
        let used = &mut used[e.source_at..];
        let mut last = u32::MAX;
        for &(lm, mask, id) in e.keep {
            // A member's keep edges are listed together, masks ascending: the first is kept.
            if lm == last {
                continue;
            }
            last = lm;
            let g = match mask {
                0 => plan.groups.len(),
                _ => match plan.groups.binary_search_by_key(&mask, |g| g.0) {
                    Ok(g) => g,
                    Err(_) => continue,
                },
            };
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
    let mut rack_edge: Vec<Option<usize>> = Vec::new();
    for (i, (plan, e)) in plans.iter().zip(edges).enumerate() {
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
        }
    }
    #[cfg(test)]
    tally::add(tally::PROPOSED);
}

/// Test-only counts of the warm starts proposed and certified, and a planted mistake in the
/// proposal: it routes every unit over the member's edge to the sink, past its capacity q.
#[cfg(test)]
pub(crate) mod tally {
    /// Proposals made.
    pub(crate) const PROPOSED: usize = 0;
    /// Proposals the solver certified (it did not start cold).
    pub(crate) const CERTIFIED: usize = 1;

    crate::assignor::tests::counts_and_fault!(2);
}
