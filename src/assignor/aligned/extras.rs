//! The rack-aware flow of extras, run when the repaired greedy of [`super::fit`] (or the
//! homogeneous flow behind it) leaves a topic whose left-over alignable partitions cannot all
//! be aligned. It chooses every topic's extras at once, with the racks in view.
//!
//! # Why the parent's certificate fails on joins and leaves
//!
//! Measured on the benchmark's racked homogeneous leave (100 members, 100 topics of 50
//! partitions, each partition on two of three racks): the parent's bound allows every claim
//! kept (4,950), but the member that left held only partitions of one rack pair, and only 34
//! of the 66 members in those racks hold none of the topics concerned. So at least 16 of the
//! 50 freed partitions reach an aligned member only if that member gives up its own claim
//! (which goes, aligned, to a member of the third rack): the exact flow keeps 4,934. No
//! choice of extras that keeps every member's claims first can meet the bound there, and the
//! bound is right not to be met. Keeping first is what the parent's deal does, so this module
//! lets members give up claims where that is cheap to model exactly: in topics with f_t = 0.
//!
//! # The network
//!
//! Fix each topic t with r_t > 0. It is *open* when f_t = 0 (every member gets at most one
//! of its partitions), else *keep-first*: each member keeps its lowest keepable partitions up
//! to its count, as in the parent's deal. The *base* of a keep-first topic (nobody has the
//! extra) leaves L_g partitions of each rack mask g ≠ 0 over, L_0 that cannot be aligned, and
//! room ρ_r in each rack r (ρ_0 among members in no rack); giving member m the extra either
//! keeps its (f_t+1)-th keepable partition, of mask μ_m, when m is *gaining* (more than f_t
//! keepable partitions), or adds one place in m's rack. In an open topic every partition is
//! left over and there is no base room. In both, Σ_g L_g + L_0 = Σ_r ρ_r + ρ_0 + r_t.
//!
//! ```text
//! source → group (t,g)     cap L_g             left-over partitions of mask g ≠ 0
//! source → free (t)        cap L_0             those that cannot be aligned
//! group (t,g) → rack (t,r) r ∈ g               aligned placements
//! free (t) → rack (t,r)    every rack          anywhere
//! rack (t,r) → sink        cap ρ_r             the base room of rack r
//! free (t) → sink          cap ρ_0             the base room of members in no rack
//! keep-first topics:
//!   pool (t,m) → member m      cap 1           m not gaining: one more place
//!   group (t,μ_m) → member m   cap 1, cost −1  m gaining: keeps its marginal partition
//! open topics, m owning keepable partitions of t (a pair node (t,m)):
//!   group (t,g) → (t,m)        cap 1, cost −1  for each mask g of m's keepable claims
//!   pool (t,m) → (t,m)         cap 1           m takes another partition instead
//!   (t,m) → member m           cap 1
//! open topics, other m: pool (t,m) → member m  cap 1
//! member m → sink          cap q; member m → Z cap 1; Z → sink cap s
//! ```
//!
//! where pool (t,m) is rack (t, rack of m), or free (t) for a member in no rack (a group
//! (t,0) is free (t)), and E = Σ r_t, q = ⌊E/n⌋, s = E mod n as in
//! [`super::super::homogeneous`]. The sink's capacity equals the source's, so a flow of full
//! value saturates every edge into the sink: each topic uses exactly r_t member edges, every
//! member gets q or q + 1 extras with s of them q + 1 (balance-optimal, step 1 of the parent),
//! and every alignable unit reaches a member through a rack of its mask. A keep edge of an
//! open topic is realised by m keeping its lowest keepable claim of that mask (it exists, and
//! is one of the group's units; distinct members own distinct partitions).
//!
//! # Exact where every topic is open
//!
//! Suppose every topic of the component with partitions has f_t = 0 and r_t > 0, and every
//! member runs in a rack. Map an assignment A that is balance-optimal and aligns every
//! alignable partition to a flow: m's one partition p of t goes over a keep edge when p is
//! m's keepable claim (its mask's edge), else from p's group through m's rack to m. It is a
//! flow of full value whose cost is minus the claims A keeps: A keeps no claim that is not
//! keepable (that would leave an alignable partition unaligned). Conversely the deal realises
//! a flow of full value as such an assignment with exactly that many claims kept. So a
//! minimum-cost flow of full value is optimal for objectives 1–5 among the assignments that
//! align every alignable partition, and it proves that one exists: then every assignment
//! optimal for 1–4 aligns every alignable partition, and the result is optimal for 1–5 with
//! no bound to compare. Without a flow of full value the component goes to the general flow.
//!
//! # Certified by the bound elsewhere
//!
//! With some keep-first topic the flow is only a construction (it cannot give up a claim of
//! a floor or a marginal claim): its result is used only when its kept claims,
//! Σ min(k_tm, f_t) plus the keep edges used, meet the parent's bound Σ min(k_tm, f_t) + B,
//! where B counts the gaining cells of the choice of
//! [`homogeneous::choose_extras`](super::super::homogeneous::choose_extras): the greedy meeting
//! its upper bound, or the exact flow without racks, so B is the most gaining cells of *any*
//! balance-optimal choice (steps 2–3 of the parent). In an open topic min(k_tm, f_t) = 0 and
//! every kept claim is a gaining cell, so the bound reads the same. Below it, the general flow
//! decides.
//!
//! # Tie rule (objective 6)
//!
//! The solver's minimum-cost flow on the network built in topic-name, mask, rack and member-id
//! order (deterministic, see [`super::super::flow`]); where every topic is open, the one it
//! reaches from the warm start of [`warm`] (every claim kept but a member's excess, given up
//! where another member can take it, the rest placed in rotation, then by chains of two where
//! no member with room can take a unit),
//! which it certifies before carrying what is left. That start changes which optimum is
//! found among flows of equal cost (objectives 1–5 are the flow's, unchanged), and is itself
//! a function of the network. Keep-first topics are dealt by the
//! parent's deal with the members chosen. An open topic: each keeper keeps its lowest
//! keepable claim of the chosen mask; each rack's pool takes, from each group in mask order
//! (the free node last), the lowest partitions the flow sends it and hands them ascending to
//! the rack's other takers in id order; members in no rack take the rest of the free
//! partitions, ascending.
//!
//! # Complexity
//!
//! Bases as in [`super::fit`] (O(P + claims)); one min-cost flow on, per topic with extras,
//! groups + racks + 1 + (pair nodes ≤ members owning its claims) nodes and
//! n + groups·racks + racks + 2·(keepable claims) edges, plus n + 3; costs are 0 or −1, so
//! the solver runs few phases. Where every topic is open, the warm start carries every unit
//! on the benchmark's racked bucket joins and leaves (given-up claims on joins, chains of two
//! on leaves), so the solver only certifies it: one cycle cancelled on the 100-member,
//! 1,000-topic join, none on the leave. The open deal is O(P_t + claims_t) per topic. No
//! partition × member product is built.

use super::super::flow::{Network, capacity as cap};
use super::super::homogeneous::TopicExtras;
use super::super::racks::search_masks;
use super::fit::{Fit, TopicState};

mod chosen;
mod deal;
mod warm;

pub(super) use chosen::{Chosen, OpenTopic, TopicChoice};

pub(super) use deal::{OpenBuffers, deal_open};

#[cfg(test)]
pub(crate) use warm::tally as warm_tally;

/// One topic's base, as the network needs it. Its lists are slices of one list per kind
/// for all topics ([`Lists`]): one allocation per kind instead of one per topic.
struct Plan<'a> {
    topic: u32,
    extra: u32,
    /// Whether the topic is *open* (f_t = 0): a member may keep any one of its keepable
    /// claims or take another partition instead (see the module docs).
    open: bool,
    /// Left-over alignable partitions by mask (masks ascending).
    groups: &'a [(u64, u64)],
    free: u64,
    room_free: u64,
    /// Keep-first topics: gaining local members and their marginal masks, ascending.
    gaining: &'a [(u32, u64)],
    /// Open topics: (local member, mask) of every keepable claim, deduplicated, ascending.
    keep_masks: &'a [(u32, u64)],
    /// Open topics: how many members `keep_masks` names (the topic's pair nodes).
    pairs: usize,
}

/// The lists of every [`Plan`], topic after topic, and where each topic's lists end.
#[derive(Default)]
struct Lists {
    groups: Vec<(u64, u64)>,
    gaining: Vec<(u32, u64)>,
    keep_masks: Vec<(u32, u64)>,
    /// Per plan: the ends of its groups, gaining and keep_masks.
    ends: Vec<[usize; 3]>,
}

/// The flow of the module docs. Returns `None` when it has no flow of full value (some
/// alignable partition cannot be aligned with balance kept), or when it is not exact and uses
/// fewer gaining cells than `bound_from` (the choice of
/// [`homogeneous::choose_extras`](super::super::homogeneous::choose_extras): the bound of the
/// module docs). With
/// `keep_first_trusted` (a planted fault for tests) no topic is open and the result is
/// returned whatever its gaining cells.
pub(super) fn choose(
    fit: &Fit<'_, '_>,
    racks: usize,
    bound_from: &[TopicExtras],
    keep_first_trusted: bool,
) -> Option<Chosen> {
    let comp = fit.comp;
    let n = comp.members.len();
    let mut state = TopicState::new(n, racks);
    // Every list below is sized before it is filled: growing them one push at a time cost
    // a few percent of the call on the racked bucket joins.
    let mut plans: Vec<Plan> = Vec::with_capacity(comp.topics.len());
    let mut lists = Lists {
        ends: Vec::with_capacity(comp.topics.len()),
        ..Lists::default()
    };
    // The base room of every rack, `racks` per plan: one list for all topics (as the edge
    // lists below), not one allocation per topic.
    let mut rooms: Vec<u64> = Vec::with_capacity(comp.topics.len() * racks);
    let mut bound = 0u64;
    let mut next_bound = bound_from.iter().peekable();
    let mut total_extras = 0u64;
    let all_racked = fit.member_bit.iter().all(|&bit| bit != 0);
    let mut all_open = all_racked && !keep_first_trusted;
    for (i, &t) in comp.topics.iter().enumerate() {
        let count = fit.problem.partitions(t) as usize;
        let extra = (count % n) as u32;
        if extra == 0 {
            if count > 0 {
                all_open = false;
            }
            continue;
        }
        total_extras += u64::from(extra);
        fit.base_at(&mut state, i, t);
        if let Some(x) = next_bound.next_if(|x| x.topic == t) {
            bound += x
                .chosen
                .iter()
                .filter(|&&lm| state.gaining(lm as usize))
                .count() as u64;
        }
        let open = state.floor == 0 && !keep_first_trusted;
        all_open &= open;
        // Open topics: the members with keepable claims (pair nodes).
        let mut pairs = 0;
        if open {
            let masks = &fit.masks[fit.mask_start[i]..fit.mask_start[i] + count];
            let from = lists.keep_masks.len();
            lists.keep_masks.extend(
                fit.keepable[t as usize]
                    .iter()
                    .map(|&(p, m)| (fit.index.get(comp, m) as u32, masks[p as usize])),
            );
            let keep_masks = &mut lists.keep_masks[from..];
            keep_masks.sort_unstable();
            let kept;
            (kept, pairs) = dedup(keep_masks);
            lists.keep_masks.truncate(from + kept);
        } else {
            lists.gaining.extend(
                (0..n)
                    .filter(|&lm| state.gaining(lm))
                    .map(|lm| (lm as u32, state.marginal[lm])),
            );
        }
        lists.groups.extend(
            state
                .group_masks
                .iter()
                .copied()
                .zip(state.group_base.iter().copied()),
        );
        lists.ends.push([
            lists.groups.len(),
            lists.gaining.len(),
            lists.keep_masks.len(),
        ]);
        rooms.extend_from_slice(&state.room_base);
        plans.push(Plan {
            topic: t,
            extra,
            open,
            groups: &[],
            free: state.free_base,
            room_free: state.room_free_base,
            gaining: &[],
            keep_masks: &[],
            pairs,
        });
    }
    let mut from = [0usize; 3];
    for (plan, &to) in plans.iter_mut().zip(&lists.ends) {
        plan.groups = &lists.groups[from[0]..to[0]];
        plan.gaining = &lists.gaining[from[1]..to[1]];
        plan.keep_masks = &lists.keep_masks[from[2]..to[2]];
        from = to;
    }
    let q = total_extras / n as u64;
    let s = total_extras % n as u64;

    // Node numbers rise along every edge, as the solver's cold start requires. Per topic:
    // groups, the free node, racks, then (open topics) one pair node per member with a
    // keepable claim.
    let source = 0u32;
    let mut blocks: Vec<u32> = Vec::with_capacity(plans.len());
    let mut next = 1u32;
    // An upper bound on the edges, so that the network's list grows once.
    let mut edge_count = 2 * n + 1;
    for plan in &plans {
        blocks.push(next);
        let pairs = plan.pairs;
        next += (plan.groups.len() + 1 + racks + pairs) as u32;
        edge_count +=
            (plan.groups.len() + 1) * (racks + 1) + racks + 1 + n + pairs + plan.keep_masks.len();
    }
    let member_base = next;
    let z = member_base + n as u32;
    let sink = z + 1;
    let mut net = Network::new(sink as usize + 1);
    net.reserve(edge_count);
    let mut supply_total = 0u64;
    let mut edges: Vec<TopicEdges> = Vec::with_capacity(plans.len());
    let mut from_source: Vec<Option<usize>> =
        Vec::with_capacity(plans.iter().map(|p| p.groups.len() + 1).sum());
    let mut member_edges: Vec<usize> = Vec::with_capacity(plans.len() * n);
    let mut is_gaining = vec![None; n];
    // The keep and to-rack edges of every topic, topic after topic, and where each ends.
    let mut keep: Vec<(u32, u64, usize)> = Vec::with_capacity(lists.keep_masks.len());
    let mut to_rack: Vec<(usize, usize, usize)> =
        Vec::with_capacity((lists.groups.len() + plans.len()) * racks);
    let mut edge_ends: Vec<[usize; 2]> = Vec::with_capacity(plans.len());
    // Per local member: its rack, if any.
    let member_rack: Vec<Option<usize>> = fit
        .member_bit
        .iter()
        .map(|&bit| (bit != 0).then(|| bit.trailing_zeros() as usize))
        .collect();
    for (i, (plan, &block)) in plans.iter().zip(&blocks).enumerate() {
        let room = &rooms[i * racks..(i + 1) * racks];
        let k = plan.groups.len() as u32;
        let free = block + k;
        let rack = |r: usize| free + 1 + r as u32;
        let group_of = |mask: u64| -> Option<u32> {
            if mask == 0 {
                return Some(free);
            }
            let g = search_masks(plan.groups, mask, |g| g.0).ok()?;
            Some(block + g as u32)
        };
        let e = TopicEdges {
            member_at: member_edges.len(),
            source_at: from_source.len(),
            keep: &[],
            to_rack: &[],
        };
        from_source.resize(e.source_at + plan.groups.len() + 1, None);
        let sources = &mut from_source[e.source_at..];
        for (g, &(mask, supply)) in plan.groups.iter().enumerate() {
            supply_total += supply;
            sources[g] = Some(net.edge(source, block + g as u32, cap(supply)?, [0; 4]));
            let mut bits = mask;
            while bits != 0 {
                let r = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let id = net.edge(block + g as u32, rack(r), cap(supply)?, [0; 4]);
                to_rack.push((g, r, id));
            }
        }
        if plan.free > 0 {
            supply_total += plan.free;
            sources[k as usize] = Some(net.edge(source, free, cap(plan.free)?, [0; 4]));
            for r in 0..racks {
                let id = net.edge(free, rack(r), cap(plan.free)?, [0; 4]);
                to_rack.push((k as usize, r, id));
            }
        }
        for (r, &room) in room.iter().enumerate() {
            if room > 0 {
                net.edge(rack(r), sink, cap(room)?, [0; 4]);
            }
        }
        if plan.room_free > 0 {
            net.edge(free, sink, cap(plan.room_free)?, [0; 4]);
        }
        // Where a member takes a partition that is not its own: its rack's pool, or the
        // free node for a member in no rack.
        let pool = |lm: usize| match member_rack[lm] {
            None => free,
            Some(r) => rack(r),
        };
        if plan.open {
            let mut pair = rack(racks);
            let mut claims = plan.keep_masks.iter().peekable();
            for lm in 0..n {
                let into = member_base + lm as u32;
                if claims.peek().is_none_or(|c| c.0 != lm as u32) {
                    member_edges.push(net.edge(pool(lm), into, 1, [0; 4]));
                    continue;
                }
                net.edge(pool(lm), pair, 1, [0; 4]);
                while let Some(&(_, mask)) = claims.next_if(|c| c.0 == lm as u32) {
                    let id = net.edge(group_of(mask)?, pair, 1, [0, 0, 0, -1]);
                    keep.push((lm as u32, mask, id));
                }
                member_edges.push(net.edge(pair, into, 1, [0; 4]));
                pair += 1;
            }
        } else {
            for &(lm, marginal) in plan.gaining {
                is_gaining[lm as usize] = Some(marginal);
            }
            for (lm, gaining) in is_gaining.iter().enumerate() {
                let (from, cost) = match *gaining {
                    Some(marginal) => (group_of(marginal)?, [0, 0, 0, -1]),
                    None => (pool(lm), [0; 4]),
                };
                member_edges.push(net.edge(from, member_base + lm as u32, 1, cost));
            }
            for &(lm, _) in plan.gaining {
                is_gaining[lm as usize] = None;
            }
        }
        edge_ends.push([keep.len(), to_rack.len()]);
        edges.push(e);
    }
    let mut from = [0usize; 2];
    for (e, &to) in edges.iter_mut().zip(&edge_ends) {
        e.keep = &keep[from[0]..to[0]];
        e.to_rack = &to_rack[from[1]..to[1]];
        from = to;
    }
    let mut sinks = warm::SinkEdges {
        to_sink: vec![None; n],
        to_z: vec![None; n],
        z: None,
        from_source,
        q,
        s,
    };
    for lm in 0..n {
        let node = member_base + lm as u32;
        if q > 0 {
            sinks.to_sink[lm] = Some(net.edge(node, sink, cap(q)?, [0; 4]));
        }
        if s > 0 {
            sinks.to_z[lm] = Some(net.edge(node, z, 1, [0; 4]));
        }
    }
    if s > 0 {
        sinks.z = Some(net.edge(z, sink, cap(s)?, [0; 4]));
    }
    // Where every topic is open, every claim kept is a flow of the least cost of any: the
    // solver certifies it and only carries what is left (see `warm`).
    if all_open {
        warm::propose(
            &mut net,
            &plans,
            &edges,
            &member_edges,
            &sinks,
            fit.member_bit,
            racks,
        );
    }
    #[cfg(test)]
    let certified_before = super::super::flow::CERTIFIED.with(std::cell::Cell::get);
    let value = net.solve(source, sink);
    #[cfg(test)]
    if super::super::flow::CERTIFIED.with(std::cell::Cell::get) > certified_before {
        warm::tally::add(warm::tally::CERTIFIED);
    }
    if u64::try_from(value).ok() != Some(supply_total) {
        return None;
    }
    let mut used = 0u64;
    let mut result = Chosen {
        topics: Vec::with_capacity(plans.len()),
        exact: all_open,
        chosen: Vec::with_capacity(total_extras as usize),
        keeps: Vec::with_capacity(total_extras as usize),
        takers: Vec::with_capacity(total_extras as usize),
        masks: Vec::new(),
        amount: Vec::new(),
    };
    if all_open {
        let groups = lists.groups.len() + plans.len();
        result.masks.reserve_exact(groups);
        result.amount.reserve_exact(groups * racks);
    }
    for (plan, e) in plans.iter().zip(&edges) {
        let Chosen {
            topics,
            chosen,
            keeps,
            takers,
            masks,
            amount,
            ..
        } = &mut result;
        // A flow of full value saturates every edge into the sink, the base rooms' too, so
        // exactly r_t of the topic's member edges carry a unit: the search stops at the
        // r_t-th (fewer means the counts do not add up, which conservation rules out).
        let at = chosen.len();
        let extra = plan.extra as usize;
        for (lm, &id) in member_edges[e.member_at..e.member_at + n]
            .iter()
            .enumerate()
        {
            if chosen.len() - at == extra {
                break;
            }
            if net.flow(id) > 0 {
                chosen.push(lm as u32);
            }
        }
        if chosen.len() - at != extra {
            return None;
        }
        if !plan.open {
            let members = &chosen[at..];
            used += plan
                .gaining
                .iter()
                .filter(|&&(lm, _)| members.binary_search(&lm).is_ok())
                .count() as u64;
            topics.push(TopicChoice::KeepFirst {
                topic: plan.topic,
                chosen: at..chosen.len(),
            });
            continue;
        }
        let keeps_at = keeps.len();
        for &(lm, mask, id) in e.keep {
            if net.flow(id) > 0 {
                keeps.push((lm, mask));
            }
        }
        let topic_keeps = &keeps[keeps_at..];
        used += topic_keeps.len() as u64;
        // `topic_keeps` is ascending by member, one keep per member at most, and so is
        // `chosen`: one walk along both finds the chosen members that keep nothing.
        let takers_at = takers.len();
        let mut keepers = topic_keeps.iter().map(|k| k.0).peekable();
        for &lm in &chosen[at..] {
            while keepers.next_if(|&keeper| keeper < lm).is_some() {}
            if keepers.peek() != Some(&lm) {
                takers.push(match fit.member_bit[lm as usize] {
                    0 => (racks as u32, lm),
                    bit => (bit.trailing_zeros(), lm),
                });
            }
        }
        takers[takers_at..].sort_unstable();
        // An open topic's chosen members are read through its keeps and takers.
        chosen.truncate(at);
        let masks_at = masks.len();
        masks.extend(plan.groups.iter().map(|g| g.0));
        masks.push(0);
        let amount_at = amount.len();
        amount.resize(amount_at + (masks.len() - masks_at) * racks, 0);
        for &(g, r, id) in e.to_rack {
            amount[amount_at + g * racks + r] = net.flow(id) as u64;
        }
        topics.push(TopicChoice::Open(OpenTopic {
            topic: plan.topic,
            keeps: keeps_at..keeps.len(),
            takers: takers_at..takers.len(),
            masks: masks_at..masks.len(),
            amount: amount_at..amount.len(),
        }));
    }
    #[cfg(test)]
    super::tally::add(super::tally::RACK_FLOW_RUN);
    if !all_open && used < bound && !keep_first_trusted {
        return None;
    }
    Some(result)
}

/// The edges of one topic that the result is read from.
struct TopicEdges<'a> {
    /// Where the topic's edges into the member nodes, by local id, start in the list of
    /// them all.
    member_at: usize,
    /// Where the topic's source edges (`SinkEdges::from_source`) start.
    source_at: usize,
    /// Open topics: (member, mask, edge) of each keep edge.
    keep: &'a [(u32, u64, usize)],
    /// (group, rack, edge) of each edge from a group (the free node as the last group) to a
    /// rack.
    to_rack: &'a [(usize, usize, usize)],
}

/// Moves the distinct entries of the sorted `list` to its front, in order; returns how many
/// there are and how many distinct members (first fields) they name.
fn dedup(list: &mut [(u32, u64)]) -> (usize, usize) {
    let (mut kept, mut members) = (0, 0);
    for i in 0..list.len() {
        let entry = list[i];
        if kept == 0 || list[kept - 1] != entry {
            members += usize::from(kept == 0 || list[kept - 1].0 != entry.0);
            list[kept] = entry;
            kept += 1;
        }
    }
    (kept, members)
}
