//! The exact rack-aware flow over counts for overlapping components, floors included: tried
//! by [`super`] when its certificate fails, before the general flow of
//! [`super::super::super::uniform`]. It is the heterogeneous version of the homogeneous path's last
//! construction (`aligned/floors.rs`): subscribers differ per topic, and the balance of a
//! member is a convex cost instead of a fixed number of extras.
//!
//! # Why
//!
//! The racked certificate fixes the counts first (on the keepable claims) and then asks a
//! per-topic transport to align what is left. It fails where a member must give up one of its
//! keepable claims so that a partition of another mask can be aligned, or where the extras
//! must sit with other members than the gaining cells suggest: which claims a member gives
//! up, and where the extras go, are choices the optimum makes jointly with the alignment.
//! This network lets every subscriber keep any number of its keepable claims of any mask and
//! take the rest of its count from its rack's pool, and lets the extras go anywhere.
//!
//! # The network
//!
//! For every topic t with partitions, subscribers Sub(t), f_t = ⌊P_t/|Sub(t)|⌋ and
//! r_t = P_t mod |Sub(t)|. A partition's mask is the set of racks of its replicas where some
//! subscriber of t runs (as [`super`] computes it); L_g counts t's partitions of mask
//! g ≠ 0, L_0 those of mask 0; a_tmg counts m's keepable claims of t of mask g. Member m runs
//! in rack ρ(m); B_m = Σ_{t ∋ m} f_t and d_m = #{t ∋ m : r_t > 0}; a_tm = Σ_g a_tmg. A *pair*
//! node (t,m) exists when a_tm > f_t (see [Merged subscribers](#merged-subscribers) for the
//! others). Rack nodes (t,r) exist for every rack; only the racks R_t of t's subscribers are
//! reached.
//!
//! ```text
//! source → group (t,g)        cap L_g                 every partition of mask g ≠ 0
//! source → free (t)           cap L_0                 those that cannot be aligned
//! group (t,g) → rack (t,r)    r ∈ g                   aligned placements
//! free (t) → rack (t,r)       r ∈ R_t                 anywhere
//! pair subscribers m:
//!   group (t,g) → (t,m)       cap a_tmg, cost −1      m keeps a claim of mask g (free (t) for g = 0)
//!   rack (t,ρ(m)) → (t,m)     cap f_t + 1             m takes another partition
//!   (t,m) → sink              cap f_t                 the floor
//!   (t,m) → member m          cap 1                   the extra (r_t > 0)
//! other subscribers m (a_tm ≤ f_t), per rack r:
//!   group (t,g) → rack (t,ρ(m))  cap a_tmg, cost −1   m keeps a claim of mask g (free (t) for g = 0);
//!                             one edge per group and rack for all of them (see Merged keeps)
//!   rack (t,r) → sink         cap f_t · #(such subscribers in r)   their floors
//!   rack (t,ρ(m)) → member m  cap 1                   the extra (r_t > 0)
//! member m → sink             convex, cap d_m, k-th unit costs 2(B_m + k) − 1
//! ```
//!
//! Costs are lexicographic ([`super::super::super::flow`]): balance first, keeps last. A flow of
//! *full value* carries Σ_t P_t. Unlike the homogeneous network, the member edges' capacity
//! Σ d_m may exceed Σ r_t, so full value alone does not force the floors: the result is
//! accepted only when every floor edge is saturated too. Such a flow gives every subscriber
//! f_t or f_t + 1 partitions of t, exactly r_t of them the extra (spread), and member m the
//! load B_m + e_m (e_m: the units on its member edge), at balance cost Σ (B_m + e_m)² − B_m².
//!
//! # Merged subscribers
//!
//! A subscriber m with a_tm ≤ f_t has no pair node: its keep edges end at its rack's node and
//! it counts among its rack's floors, its extra edge leaving the rack node. This loses
//! nothing. Let N be the network with a pair node for every subscriber holding claims (its
//! pool edge of capacity f_t + 1, floor edge f_t, extra edge 1) and N' this one. A flow of N
//! maps to a flow of N' of the same cost: m's keep units K_m go to its rack node instead, and
//! leave it with the f_t + e_m units its pair node passed on (f_t to the rack's floor edge,
//! e_m to the extra edge); the rack node's balance changes by K_m in and K_m out. A flow of
//! N' maps back: K_m ≤ a_tm ≤ f_t ≤ f_t + e_m, so m's pair node can take K_m on its keep
//! edges and f_t + e_m − K_m ≥ 0 (at most f_t + 1) on its pool edge, by conservation at the
//! rack node exactly what the groups send to the rack beyond the other subscribers' takes.
//! Both maps keep the value, the floors' saturation, every member's load and the cost, so
//! the minimum costs agree and the theorem below holds for N' as for N. (A subscriber with
//! more claims than f_t could keep f_t + 1 of them while the rack's extra goes to another
//! member: no flow of N matches that, so it keeps its pair node.) Merging removes a node and
//! three edges per such subscriber, about half of them on the benchmark's joins and leaves
//! (f_t = 1, a claim each).
//!
//! # Merged keeps
//!
//! The keep edges of the subscribers without a pair node all run from a group (or the free
//! node) to a rack's node at the same cost, so those with the same two ends are parallel:
//! they are added as one edge whose capacity is the sum of theirs (their claims of that mask
//! in that rack). A flow on the parallel edges sums to a flow on the one edge of the same
//! cost, and a flow on the one edge splits over them within their capacities (any split:
//! the sum of the capacities is the one edge's), so the minimum costs and every condition of
//! the theorem agree. The split the deal uses gives each entry, in entry order (subscribers in
//! id order), as many of the edge's units as it has claims left to give; a subscriber then
//! keeps at most its a_tm ≤ f_t claims, as the merge above needs. On the benchmark's racked
//! overlapping join of 100 members on 100 topics (a keep edge for each of most subscribers
//! of the topics with f_t = 1 before) this takes an eighth off the solve's instructions.
//!
//! # Exactness
//!
//! **Theorem.** Let every member run in a rack. If the minimum-cost flow F of maximum value
//! has full value, saturates every floor edge, and Σ_m (B_m + e_m)² equals Σ_m load_m² of the
//! counts of [`super::super::choose`], the deal below is optimal for objectives 1–5.
//!
//! *Proof sketch.* (1) The deal realises F: each subscriber keeps, per mask, as many of
//! its keepable claims as its keep edge carries; by conservation at the group and rack nodes
//! the partitions left over of each group split over the racks as F sends them, and each
//! rack's partitions fill exactly what its subscribers take (the pool edge's units for a pair
//! subscriber; f_t plus the extra less its keeps for the others). Every partition of mask
//! g ≠ 0 reaches a member through a rack of g or a keep edge of mask g, whose owner runs in a
//! rack of g (keepable): every alignable partition is aligned. (2) [`super::super::choose`] is balance-optimal and balance depends on the counts alone,
//! so F's result is balance-optimal and aligns every alignable partition: the optimum of
//! objective 4 among balance-optimal assignments is all alignable partitions, and every
//! assignment A optimal for 1–4 is balance-optimal and aligns them all. (3) Every such A is a
//! full flow with saturated floors of cost (its balance, −its kept claims): every claim A
//! keeps is keepable (a kept alignable partition is aligned with its owner), so it goes over
//! its owner's keep edge; any other partition p of t given to m goes from p's group (or the
//! free node) to ρ(m), which is in p's mask when the mask is not 0 (A aligns p) and in R_t
//! always, then through m's pool edge or, for a subscriber with no pair node, to the sink or
//! its extra edge (as its kept claims do from the rack node); every capacity holds. (4) F is
//! minimal among all full flows, A's flow among them; the balance parts are equal (both optimal), so F's keep edges
//! carry at least what A keeps. The deal keeps at least F's keep units and is 1–4 optimal:
//! it is optimal for 1–5. ∎
//!
//! The check is complete as well: if some balance-optimal assignment aligns every alignable
//! partition, it is a full flow with saturated floors, so the minimum-cost flow (floors
//! first, balance next) is one too, at the optimal balance. When any condition fails (no full
//! flow, a floor short, or a worse balance: the alignment then costs balance), nothing is
//! written and the caller gives up: the general flow decides, exact in every case. Whether a
//! full flow exists is decided per topic before the network is built, by a small transport
//! ([`topic::placeable`]), so the common failure costs no solve.
//!
//! # Tie rule (objective 6)
//!
//! The minimum-cost flow the solver finds on the network built in topic, mask, rack and
//! member-id order, from the warm start of [`preset`] (deterministic, see
//! [`super::super::super::flow`]; which of several optimal flows it finds depends on that
//! proposal, itself a function of the canonical order only). Per topic: every subscriber keeps,
//! for each mask, the lowest-numbered of its keepable claims of that mask, as many as its
//! keep edge carries; the partitions not kept, by group (masks ascending, the free node
//! last), ascending, go to the racks in the amounts the flow sends, each rack taking from each
//! group in turn its lowest ones; a rack's partitions, ascending, fill its subscribers in id
//! order, each as many as the flow brings it (f_t plus its extra less its keeps for a
//! subscriber without a pair node), its keeps those its shared keep edges give it in entry
//! order (see [Merged keeps](#merged-keeps)). All of it reads the canonical order only.
//! Merging subscribers, or their keep edges, changes the network, so on some groups the
//! solver finds another optimal flow than it would on the unmerged one: either is optimal.
//!
//! # Complexity
//!
//! Per topic: groups + 1 + racks + (pair subscribers) nodes; groups·racks + racks +
//! |Sub(t)| + 3·(pair subscribers) + Σ (distinct masks of a pair subscriber's claims) +
//! (groups + 1)·racks edges at most (pair subscribers: those with more than f_t keepable
//! claims); plus n member nodes and n convex edges. The deal is O(P_t + claims_t + racks·groups + |Sub(t)|
//! log |Sub(t)|) per topic. No partition × member product is built.

use super::super::super::aligned::transport::Transport;
use super::super::super::components::Component;
#[cfg(test)]
use super::super::super::flow;
use super::super::super::flow::{Network, capacity as cap};
use super::super::super::problem::Problem;
use super::super::super::warm::warm_wanted;
use super::super::Counts;

mod deal;
mod owners;
pub(crate) mod preset;
mod topic;

use deal::deal;
use owners::owners_claims_and_groups;
use topic::{Arena, Grouping, Plan, TopicFlow, placeable};

#[cfg(test)]
thread_local! {
    /// Tests only: the components this flow was tried on, on this thread.
    pub(crate) static TRIED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Tests only: the components whose result it certified.
    pub(crate) static CERTIFIED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Tests only: the components declined before solving, some topic not placeable.
    pub(crate) static UNPLACEABLE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Tests only: a planted fault, the balance equality is not checked.
    pub(crate) static SKIP_BALANCE_CHECK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: the negative cycles the warm start of this flow's network cancelled.
    pub(crate) static WARM_CANCELLED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Tests only: this flow's networks solved with a proposal, and those whose proposal was
    /// certified (not undone for a cold start).
    pub(crate) static PROPOSED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    pub(crate) static WARM_CERTIFIED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Tests only: a planted fault, keep edges cost nothing.
    pub(crate) static FREE_KEEPS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: the subscribers with claims but no pair node, over every network built.
    pub(crate) static MERGED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Tests only: a planted fault, subscribers with f_t + 1 claims get no pair node either.
    pub(crate) static LOOSE_MERGE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: the claim entries whose keep edge an earlier entry added, over every
    /// network built.
    pub(crate) static SHARED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Tests only: a planted fault, a keep edge shared by several entries gets the capacity
    /// of its first entry only (not their sum).
    pub(crate) static SHARED_CAP_OWN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The cost of a unit on a floor edge: first of all, a full flow fills as many floors as it
/// can, so that one filling them all is found whenever one exists.
const FLOOR_COST: [i8; 4] = [-1, 0, 0, 0];

/// What the flow reads of a component, as [`super`] computed it.
pub(super) struct Inputs<'a, 'p> {
    pub problem: &'a Problem<'p>,
    pub comp: &'a Component,
    /// Per local member: its rack's bit (0 without a rack: the flow then declines).
    pub member_bit: &'a [u64],
    /// How many racks the component's members run in.
    pub racks: usize,
    /// Per local topic: every partition's mask among its subscribers' racks.
    pub masks: &'a [Vec<u64>],
    /// Per topic: the keepable claims (partition, member), ascending by partition.
    pub keepable: &'a [Vec<(i32, u32)>],
    /// Per keepable claim, local topic after local topic: its owner's index among the
    /// topic's subscribers, as [`super`] found it (`claim_at_start[lt]..claim_at_start[lt +
    /// 1]`); every owner subscribes (else [`super`] does not call [`assign`]).
    pub claim_at: &'a [u32],
    /// Per local topic: where its claims start in `claim_at` (one more entry at the end).
    pub claim_at_start: &'a [usize],
    /// Balance-optimal counts of [`super::super::choose`]: their floors, subscribers and loads.
    pub counts: &'a Counts,
}

/// Assigns the component as the network of the [module docs](self) says when the theorem's
/// conditions hold, appending to `lists` and returning true; otherwise leaves `lists` as
/// they were and returns false.
// Never inlined: once its caller took it in, some of its buffers' resizes went out of line
// (about 0.1M instructions more on the benchmark's racked overlapping join).
#[inline(never)]
pub(super) fn assign(x: &Inputs<'_, '_>, lists: &mut [Vec<(u32, i32)>]) -> bool {
    #[cfg(test)]
    TRIED.with(|c| c.set(c.get() + 1));
    let (problem, comp, counts) = (x.problem, x.comp, x.counts);
    let n = comp.members.len();
    if n == 0 || x.member_bit.contains(&0) {
        return false;
    }
    let racks = x.racks;
    let mut plans: Vec<Plan> = Vec::with_capacity(comp.topics.len());
    let mut arena = Arena::for_inputs(x);
    let mut owner_scratch = owners::Scratch::default();
    let mut base = vec![0i64; n];
    let mut degree = vec![0i32; n];
    let mut supply_total = 0u64;
    let mut transport = Transport::default();
    let mut grouping = Grouping::default();
    // [`topic::placeable`]'s buffers, kept from topic to topic.
    let mut bufs = <[Vec<u64>; 3]>::default();
    for (lt, &t) in comp.topics.iter().enumerate() {
        let masks = &x.masks[lt];
        let subs = &problem.subscribers[t as usize];
        let floor = counts.floor[lt];
        let has_extra = !masks.len().is_multiple_of(subs.len());
        let subs_local = &counts.subs[lt];
        if masks.is_empty() {
            for &lm in subs_local {
                base[lm as usize] += i64::from(floor);
                degree[lm as usize] += i32::from(has_extra);
            }
            continue;
        }
        // Every later step indexes the local subscribers by the global ones' indices.
        if subs_local.len() != subs.len() {
            return false;
        }
        // Each subscriber's rack, read by every later step, and the racks they run in (the
        // free node's mask).
        let s0 = arena.pair.len();
        let mut present = 0u64;
        // Written in place: pushing reloaded the vector's length and capacity each time.
        arena.sub_rack.resize(s0 + subs_local.len(), 0);
        for (&lm, rack) in subs_local.iter().zip(&mut arena.sub_rack[s0..]) {
            base[lm as usize] += i64::from(floor);
            degree[lm as usize] += i32::from(has_extra);
            let bit = x.member_bit[lm as usize];
            present |= bit;
            *rack = bit.trailing_zeros() as usize;
        }
        supply_total += masks.len() as u64;
        let g0 = arena.groups.len();
        let free = grouping.count(masks, racks, &mut arena.groups);
        let groups = &arena.groups[g0..];
        let keepable = &x.keepable[t as usize];
        let Some(claim_at) = x
            .claim_at
            .get(x.claim_at_start[lt]..x.claim_at_start[lt + 1])
        else {
            return false;
        };
        let (c0, o0) = (arena.claims.len(), arena.claim_entry.len());
        let owned = owners_claims_and_groups(
            subs,
            masks,
            keepable,
            claim_at,
            groups,
            &grouping,
            &mut arena.claim_entry,
            &mut arena.claims,
            &mut arena.entry_group,
            &mut owner_scratch,
        );
        if owned.is_none() {
            return false;
        }
        let claims = &arena.claims[c0..];
        let sub_rack = &arena.sub_rack[s0..];
        if !placeable(
            x,
            lt,
            groups,
            free,
            sub_rack,
            present,
            &mut transport,
            &mut bufs,
        ) {
            #[cfg(test)]
            UNPLACEABLE.with(|c| c.set(c.get() + 1));
            return false;
        }
        // A pair node only where the keeps can exceed the floor (see "Merged subscribers").
        #[cfg(test)]
        let slack = u64::from(LOOSE_MERGE.with(std::cell::Cell::get));
        #[cfg(not(test))]
        let slack = 0;
        let most = u64::from(floor) + slack;
        let totals = owner_scratch.totals();
        if totals.len() != subs.len() {
            return false;
        }
        arena.pair.resize(s0 + totals.len(), false);
        for (pair, &total) in arena.pair[s0..].iter_mut().zip(totals) {
            *pair = total > most;
        }
        arena.total.extend_from_slice(totals);
        #[cfg(test)]
        let pair = &arena.pair[s0..];
        #[cfg(test)]
        MERGED.with(|c| {
            let owners = claims.iter().filter(|e| !pair[e.0 as usize]).map(|e| e.0);
            let mut owners: Vec<u32> = owners.collect();
            owners.dedup();
            c.set(c.get() + owners.len());
        });
        let (k, entries) = (groups.len(), claims.len());
        let (c1, s1) = (c0 + entries, s0 + subs.len());
        // Filled as the network is built, or read back (`kept`, `takes`, `amount`).
        arena.kept.resize(c1, 0);
        arena.takes.resize(s1, 0);
        arena.pool_edge.resize(s1, None);
        arena.floor_edge.resize(s1, None);
        arena.extra_edge.resize(s1, None);
        let (r0, a0) = (arena.plain_floor.len(), arena.amount.len());
        arena.plain_floor.resize(r0 + racks, None);
        arena.amount.resize(a0 + (k + 1) * racks, 0);
        plans.push(Plan {
            lt,
            topic: t,
            floor,
            free,
            present,
            groups: g0..g0 + k,
            claims: c0..c1,
            owners: o0..arena.claim_entry.len(),
            subs: s0..s1,
            racks: r0..r0 + racks,
            sources: 0..0,
            to_rack: 0..0,
            amount: a0..a0 + (k + 1) * racks,
        });
    }

    // Node numbers rise along every edge (the solver's cold start needs a DAG in order): per
    // topic its groups, the free node, its racks, then its pair nodes; then members, sink.
    let mut blocks = Vec::with_capacity(plans.len());
    let mut next = 1u64;
    for plan in &plans {
        blocks.push(next);
        let pairs = arena.pair[plan.subs.clone()].iter().filter(|&&p| p).count();
        next += (plan.groups.len() + 1 + racks + pairs) as u64;
    }
    let Some(member_base) = u32::try_from(next)
        .ok()
        .filter(|b| b.checked_add(n as u32 + 1).is_some())
    else {
        return false;
    };
    let sink = member_base + n as u32;
    let source = 0u32;
    let mut net = Network::new(sink as usize + 1);
    // The edges, counted as the loop below adds them (at most): growing the list as it goes
    // copied it a dozen times on the benchmark's groups.
    net.reserve(
        n + plans
            .iter()
            .map(|p| (p.groups.len() + 1) * (racks + 1) + p.claims.len() + 3 * p.subs.len() + racks)
            .sum::<usize>(),
    );
    #[cfg(test)]
    let free_keeps = FREE_KEEPS.with(std::cell::Cell::get);
    #[cfg(not(test))]
    let free_keeps = false;
    let keep_cost = if free_keeps { [0; 4] } else { [0, 0, 0, -1] };
    // Every floor edge with its capacity: a full flow must saturate them all.
    let mut floor_edges: Vec<(usize, i32)> =
        Vec::with_capacity(plans.iter().map(|p| p.subs.len() + racks).sum());
    // The loop's per-topic buffers, kept from topic to topic.
    let (mut shared, mut plain) = (Vec::new(), Vec::new());
    let Arena {
        groups: all_groups,
        claims: all_claims,
        entry_group: all_entry_group,
        keep_edge,
        pair: all_pair,
        sub_rack: all_sub_rack,
        pool_edge: all_pool_edge,
        floor_edge: all_floor_edge,
        extra_edge: all_extra_edge,
        plain_floor: all_plain_floor,
        source_edge,
        to_rack,
        ..
    } = &mut arena;
    for (plan, &block) in plans.iter_mut().zip(&blocks) {
        let block = block as u32;
        let lt = plan.lt;
        let subs = &counts.subs[lt];
        let groups = &all_groups[plan.groups.clone()];
        let claims_all = &all_claims[plan.claims.clone()];
        let entry_group = &all_entry_group[plan.claims.clone()];
        let pairs = &all_pair[plan.subs.clone()];
        let sub_rack = &all_sub_rack[plan.subs.clone()];
        let pool_edge = &mut all_pool_edge[plan.subs.clone()];
        let floor_edge = &mut all_floor_edge[plan.subs.clone()];
        let extra_edge = &mut all_extra_edge[plan.subs.clone()];
        let plain_floor = &mut all_plain_floor[plan.racks.clone()];
        let (e0, t0) = (source_edge.len(), to_rack.len());
        let k = groups.len();
        let free = block + k as u32;
        let rack = |r: usize| free + 1 + r as u32;
        let floor = u64::from(plan.floor);
        let has_extra = !x.masks[lt].len().is_multiple_of(subs.len());
        let present = plan.present;
        for (g, &(mask, supply)) in groups.iter().enumerate() {
            let Some(c) = cap(supply) else { return false };
            source_edge.push(net.edge(source, block + g as u32, c, [0; 4]));
            let mut bits = mask;
            while bits != 0 {
                let r = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let id = net.edge(block + g as u32, rack(r), c, [0; 4]);
                to_rack.push((g, r, id));
            }
        }
        if plan.free > 0 {
            let Some(c) = cap(plan.free) else {
                return false;
            };
            source_edge.push(net.edge(source, free, c, [0; 4]));
            let mut bits = present;
            while bits != 0 {
                let r = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let id = net.edge(free, rack(r), c, [0; 4]);
                to_rack.push((k, r, id));
            }
        }
        plan.sources = e0..source_edge.len();
        plan.to_rack = t0..to_rack.len();
        // Per group (the free node last) and rack, at `g * racks + r`: the claims of the
        // subscribers with no pair node there, and their one keep edge once added.
        shared.clear();
        shared.resize((k + 1) * racks, (0u64, usize::MAX));
        for (&(i, _, count), &g) in claims_all.iter().zip(entry_group) {
            if !pairs[i as usize] {
                shared[g * racks + sub_rack[i as usize]].0 += count;
            }
        }
        #[cfg(test)]
        let own_cap = SHARED_CAP_OWN.with(std::cell::Cell::get);
        // Floors of the subscribers with no pair node, per rack.
        plain.clear();
        plain.resize(racks, 0u64);
        // The next claim entry (entries run by subscriber index, ascending).
        let mut e = 0;
        let mut pair = rack(racks);
        for ((i, &lm), &own_rack) in subs.iter().enumerate().zip(sub_rack) {
            let into = member_base + lm;
            let pool = rack(own_rack);
            // Its keeps end at its pair node, or at its rack's node when it has none.
            let keeps_to = if pairs[i] { pair } else { pool };
            while let Some(&(_, _, count)) = claims_all.get(e).filter(|c| c.0 == i as u32) {
                let g = entry_group[e];
                e += 1;
                let from = block + g as u32;
                if pairs[i] {
                    let Some(c) = cap(count) else { return false };
                    keep_edge.push(net.edge(from, keeps_to, c, keep_cost));
                    continue;
                }
                let slot = &mut shared[g * racks + own_rack];
                #[cfg(test)]
                if slot.1 != usize::MAX {
                    SHARED.with(|c| c.set(c.get() + 1));
                }
                if slot.1 == usize::MAX {
                    #[cfg(test)]
                    let total = if own_cap { count } else { slot.0 };
                    #[cfg(not(test))]
                    let total = slot.0;
                    let Some(c) = cap(total) else { return false };
                    slot.1 = net.edge(from, keeps_to, c, keep_cost);
                }
                keep_edge.push(slot.1);
            }
            if !pairs[i] {
                plain[own_rack] += 1;
                if has_extra {
                    pool_edge[i] = Some(net.edge(pool, into, 1, [0; 4]));
                }
                continue;
            }
            let Some(c) = cap(floor + 1) else {
                return false;
            };
            pool_edge[i] = Some(net.edge(pool, pair, c, [0; 4]));
            if floor > 0 {
                let Some(c) = cap(floor) else { return false };
                let id = net.edge(pair, sink, c, FLOOR_COST);
                floor_edge[i] = Some(id);
                floor_edges.push((id, c));
            }
            if has_extra {
                extra_edge[i] = Some(net.edge(pair, into, 1, [0; 4]));
            }
            pair += 1;
        }
        for (r, &count) in plain.iter().enumerate() {
            if floor > 0 && count > 0 {
                let Some(c) = cap(floor * count) else {
                    return false;
                };
                let id = net.edge(rack(r), sink, c, FLOOR_COST);
                plain_floor[r] = Some(id);
                floor_edges.push((id, c));
            }
        }
    }
    let member_edge = super::super::member_edges(&mut net, member_base, sink, &degree, &base);
    if warm_wanted() {
        let mut load = counts.load.clone();
        let mut scratch = preset::Scratch::default();
        for plan in &plans {
            let plan = arena.view(plan);
            preset::propose(&mut net, &plan, x, &member_edge, &mut load, &mut scratch);
        }
    }
    #[cfg(test)]
    let before = (
        flow::CANCELLED.with(std::cell::Cell::get),
        flow::CERTIFIED.with(std::cell::Cell::get),
    );
    let value = net.solve(source, sink);
    #[cfg(test)]
    if warm_wanted() {
        let cancelled = flow::CANCELLED.with(std::cell::Cell::get) - before.0;
        let certified = flow::CERTIFIED.with(std::cell::Cell::get) - before.1;
        WARM_CANCELLED.with(|c| c.set(c.get() + cancelled));
        PROPOSED.with(|c| c.set(c.get() + 1));
        WARM_CERTIFIED.with(|c| c.set(c.get() + certified));
    }
    if u64::try_from(value).ok() != Some(supply_total)
        || floor_edges.iter().any(|&(id, c)| net.flow(id) != c)
    {
        return false;
    }
    // Balance: the flow's loads against the balance optimum of the counts.
    let flow_balance: i64 = (0..n)
        .map(|lm| base[lm] + member_edge[lm].map_or(0, |id| i64::from(net.flow(id))))
        .map(|load| load * load)
        .sum();
    let optimum: i64 = counts.load.iter().map(|&load| load * load).sum();
    #[cfg(test)]
    let skip_balance = SKIP_BALANCE_CHECK.with(std::cell::Cell::get);
    #[cfg(not(test))]
    let skip_balance = false;
    if flow_balance != optimum && !skip_balance {
        return false;
    }
    let mut left = Vec::new();
    for plan in &plans {
        if !arena.read_back(plan, &net, racks, &mut left) {
            return false;
        }
    }
    let before: Vec<usize> = comp
        .members
        .iter()
        .map(|&m| lists[m as usize].len())
        .collect();
    let mut scratch = deal::Scratch::default();
    for plan in &plans {
        if !deal(x, &arena.view(plan), lists, &mut scratch) {
            for (&m, &len) in comp.members.iter().zip(&before) {
                lists[m as usize].truncate(len);
            }
            return false;
        }
    }
    #[cfg(test)]
    CERTIFIED.with(|c| c.set(c.get() + 1));
    true
}
