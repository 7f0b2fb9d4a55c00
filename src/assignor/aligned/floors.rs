//! The exact rack-aware flow over counts, floors included: the last construction of the
//! rack-aware path, run when every member of the component runs in a rack and neither the
//! repaired greedy nor the [rack-aware flow of extras](super::extras) produced a certified
//! result. Where it has a flow of full value its result is optimal for objectives 1–5 with no
//! bound to compare; where it has none, no assignment aligns every alignable partition and
//! the general flow of [`super::super::uniform`] runs.
//!
//! # Why another network
//!
//! The flow of extras fixes, in every topic with f_t > 0, which claims a member keeps: its
//! lowest keepable ones up to its count. Measured on the benchmark's racked bucket joins and
//! leaves (components of 19 to 21 members, f_t ≥ 2) that is what fails: a member with more
//! keepable claims than its count must give some up, and the lowest-first rule gives up
//! partitions of racks the receivers do not run in (one join of 21 members: 66 of 80
//! left-over partitions placeable), or the flow meets fewer than the bound's gaining cells
//! (141 of 153). Which of its claims a member gives up, and whether it gives up a claim to
//! take another partition, are choices the optimum makes freely. This network lets every
//! member of every topic keep any number of its keepable claims of any mask, and take the
//! rest of its count from its rack's pool.
//!
//! # The network
//!
//! For every topic t with partitions, f_t = ⌊P_t/n⌋ and r_t = P_t mod n; L_g counts t's
//! partitions of rack mask g ≠ 0 (every partition, claimed or not), L_0 those of mask 0;
//! a_tmg counts member m's keepable claims of t of mask g (keepable as in the
//! [parent](super)). Member m runs in rack ρ(m). A *pair* node (t,m) exists when a_tmg > 0
//! for some g.
//!
//! ```text
//! source → group (t,g)      cap L_g                   every partition of mask g ≠ 0
//! source → free (t)         cap L_0                   those that cannot be aligned
//! group (t,g) → rack (t,r)  r ∈ g                     aligned placements
//! free (t) → rack (t,r)     every rack                anywhere
//! pair members m:
//!   group (t,g) → (t,m)     cap a_tmg, cost −1        m keeps a claim of mask g (free (t) for g = 0)
//!   rack (t,ρ(m)) → (t,m)   cap f_t + 1               m takes another partition
//!   (t,m) → sink            cap f_t                   the floor
//!   (t,m) → member m        cap 1                     the extra (r_t > 0)
//! other members, per rack r:
//!   rack (t,r) → sink       cap f_t · #(such members in r)   their floors
//!   rack (t,ρ(m)) → member m   cap 1                  the extra (r_t > 0)
//! member m → sink           cap q;  member m → Z cap 1;  Z → sink cap s
//! ```
//!
//! with E = Σ_t r_t, q = ⌊E/n⌋, s = E mod n. The sink's capacity is Σ_t n·f_t + E = Σ_t P_t,
//! the source's supply, so a flow of full value saturates every edge into the sink: every
//! member gets exactly f_t or f_t + 1 of each topic, r_t members get the extra of t, and every
//! member gets q or q + 1 extras with exactly s at q + 1 (balance-optimal, step 1 of the
//! parent). Every alignable unit reaches its member through a rack of its mask or over a keep
//! edge of its mask, whose member is aligned with it (keepable claims of mask g ≠ 0 are
//! aligned with their owner).
//!
//! # Exactness
//!
//! Suppose every member runs in a rack. (1) Every assignment A that is balance-optimal and
//! aligns every alignable partition maps to a flow of full value whose cost is minus the
//! claims A keeps: a partition p of t that A gives to m goes over m's keep edge of p's mask
//! when p is m's keepable claim (A keeps no claim that is not keepable: that claim would be an
//! alignable partition left unaligned), else from p's group (or the free node) through the
//! rack of m (an aligned member when p's mask is not 0); m's f_t units go to the sink from
//! (t,m) or, aggregated, from its rack, its extra over its extra edge. (2) Conversely the deal
//! below realises every integral flow of full value as such an assignment keeping at least
//! the flow's keep edges' units. So a minimum-cost flow of full value keeps as many claims as
//! any balance-optimal assignment that aligns every alignable partition; its existence proves
//! that some balance-optimal assignment aligns every alignable partition, so every assignment
//! optimal for objectives 1–4 does, and the deal's result is optimal for 1–5. With no flow of
//! full value, nothing is written and the general flow decides.
//!
//! (Members in no rack would need the free node as their pool and their own claims of mask 0
//! only; the path does not run then, which keeps the argument above as stated.)
//!
//! # Warm start
//!
//! The solver is proposed a flow built from the counts, keeps and placements that the
//! cheaper steps would make ([`preset`]: extras levelled across members, claims kept up to
//! the counts, left-overs placed by the small flow of [`super::transport`], extras exchanged
//! between members at the same level where that placement fails). The solver uses it only
//! once it has certified it as of minimum cost for its value (else it starts cold), so the
//! result is a minimum-cost flow of full value either way and the exactness argument below
//! is unchanged; only which of several minimum-cost flows is found may differ.
//!
//! # Tie rule (objective 6)
//!
//! The solver's minimum-cost flow on the network built in topic, mask, rack and member-id
//! order, from the [warm start](#warm-start) above where certified (deterministic: the
//! proposal reads only the canonical order; see [`super::super::flow`]). Per topic: every
//! pair member keeps, for each mask, the lowest-numbered of its keepable claims of that
//! mask, as many as its keep edge carries; the partitions not kept, by group (masks
//! ascending, the free node last), ascending, go to the racks in the amounts the flow sends,
//! each rack taking from each group in turn its lowest ones; a rack's partitions, ascending,
//! fill its members in id order, each as many as the flow brings it (f_t plus its extra, or
//! its pool edge's units).
//!
//! # Complexity
//!
//! Per topic: groups + racks + 1 + (members with keepable claims) nodes; groups·racks +
//! racks + n + 3·(pair members) + Σ (distinct masks of a member's claims) edges; plus n + 2
//! nodes and 2n + 1 edges for the members. Costs are 0 or −1, so the solver runs few phases.
//! The deal is O(P_t + claims_t + racks·groups) per topic. No partition × member product is
//! built.

use super::super::flow::{Network, capacity as cap};
use super::super::racks::mask_groups;
use super::super::warm::warm_wanted;
use super::Context;
use super::transport::{left_over_into, rack_share};

mod entries;
pub(super) mod preset;
mod topic;

use topic::{Arena, Plan, Slot, TopicFlow};

/// The edges of the member nodes, for the warm start.
struct MemberEdges {
    /// Per local member: member → sink (cap q), if q > 0.
    to_sink: Vec<Option<usize>>,
    /// Per local member: member → Z (cap 1), if s > 0.
    to_z: Vec<Option<usize>>,
    /// Z → sink, if s > 0.
    z_sink: Option<usize>,
}

/// Assigns the component as the network of the module docs says, appending to `lists`;
/// `false`, with `lists` as they were, when some member runs in no rack or the network has
/// no flow of full value (or, which conservation rules out, the deal does not add up).
/// With `ignore_keeps` (a planted fault for tests) keep edges cost nothing.
pub(super) fn assign(
    ctx: &Context<'_, '_>,
    member_bit: &[u64],
    lists: &mut [Vec<(u32, i32)>],
    ignore_keeps: bool,
) -> bool {
    let comp = ctx.comp;
    let n = comp.members.len();
    if n == 0 || member_bit.contains(&0) {
        return false;
    }
    let racks = ctx.racks;
    let rack_of = |lm: usize| member_bit[lm].trailing_zeros() as usize;
    let mut plans: Vec<Plan> = Vec::with_capacity(comp.topics.len());
    let mut arena = Arena::default();
    let mut total_extras = 0u64;
    let mut supply_total = 0u64;
    // Per topic, reused: the scratch of the claim entries and of the groups.
    let mut scratch = entries::Entries::default();
    let mut table = Vec::new();
    for (index, &t) in comp.topics.iter().enumerate() {
        let masks = ctx.topic_masks(index, t);
        if masks.is_empty() {
            continue;
        }
        total_extras += (masks.len() % n) as u64;
        supply_total += masks.len() as u64;
        let (groups, free) = mask_groups(masks, racks, &mut table);
        let keepable = &ctx.keepable[t as usize];
        let local = |m: u32| ctx.index.get(comp, m);
        let (claims, owners) = (arena.entries.claims.len(), arena.entries.entry_of.len());
        let entries = &mut arena.entries;
        if scratch
            .build(keepable, masks, &groups, n, racks, local, entries)
            .is_none()
        {
            return false;
        }
        let at = arena.groups.len();
        arena.groups.extend_from_slice(&groups);
        plans.push(Plan {
            index,
            topic: t,
            floor: (masks.len() / n) as u32,
            free,
            groups: at..arena.groups.len(),
            claims: claims..arena.entries.claims.len(),
            owners: owners..arena.entries.entry_of.len(),
            slots: 0..0,
            to_rack: 0..0,
            sources: 0..0,
            racks: 0..0,
        });
    }
    let q = total_extras / n as u64;
    let s = total_extras % n as u64;

    // Node numbers rise along every edge (the solver's cold start needs a DAG in order): per
    // topic its groups, the free node, its racks, then its pair nodes; then members, Z, sink.
    let mut blocks = Vec::with_capacity(plans.len());
    let mut next = 1u64;
    for plan in &plans {
        blocks.push(next);
        let pairs = distinct_members(&arena.entries.claims[plan.claims.clone()]);
        next += (plan.groups.len() + 1 + racks + pairs) as u64;
    }
    let Ok(member_base) = u32::try_from(next) else {
        return false;
    };
    let Some(z) = member_base.checked_add(n as u32) else {
        return false;
    };
    let sink = z + 1;
    let source = 0u32;
    let mut net = Network::new(sink as usize + 1);
    // The edges counted as the loop below adds them, so that the lists grow once.
    let mut edge_count = 2 * n + 1;
    let mut to_rack_count = 0;
    for plan in &plans {
        let groups = &arena.groups[plan.groups.clone()];
        let rack_edges: usize = groups.iter().map(|g| g.0.count_ones() as usize).sum();
        let to_rack = rack_edges + if plan.free > 0 { racks } else { 0 };
        to_rack_count += to_rack;
        edge_count += groups.len() + 1 + to_rack + racks + 3 * n + plan.claims.len();
    }
    net.reserve(edge_count);
    arena.to_rack.reserve_exact(to_rack_count);
    arena.keep_edge.reserve_exact(arena.entries.claims.len());
    arena
        .source_edge
        .reserve_exact(arena.groups.len() + plans.len());
    arena.slots.reserve_exact(n * plans.len());
    arena.plain_floor.reserve_exact(racks * plans.len());
    let keep_cost = if ignore_keeps { [0; 4] } else { [0, 0, 0, -1] };
    // Per rack: its members with no pair node in the current topic.
    let mut plain = vec![0u64; racks];
    for (plan, &block) in plans.iter_mut().zip(&blocks) {
        let block = block as u32;
        let groups = &arena.groups[plan.groups.clone()];
        let claims = &arena.entries.claims[plan.claims.clone()];
        let entry_group = &arena.entries.entry_group[plan.claims.clone()];
        let k = groups.len();
        let free = block + k as u32;
        let rack = |r: usize| free + 1 + r as u32;
        let floor = u64::from(plan.floor);
        let count = groups.iter().map(|g| g.1).sum::<u64>() + plan.free;
        let has_extra = count % n as u64 > 0;
        let (to_rack, sources) = (arena.to_rack.len(), arena.source_edge.len());
        for (g, &(mask, supply)) in groups.iter().enumerate() {
            let Some(c) = cap(supply) else { return false };
            arena
                .source_edge
                .push(Some(net.edge(source, block + g as u32, c, [0; 4])));
            let mut bits = mask;
            while bits != 0 {
                let r = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let id = net.edge(block + g as u32, rack(r), c, [0; 4]);
                arena.to_rack.push((g, r, id));
            }
        }
        if plan.free > 0 {
            let Some(c) = cap(plan.free) else {
                return false;
            };
            arena
                .source_edge
                .push(Some(net.edge(source, free, c, [0; 4])));
            for r in 0..racks {
                let id = net.edge(free, rack(r), c, [0; 4]);
                arena.to_rack.push((k, r, id));
            }
        } else {
            arena.source_edge.push(None);
        }
        plan.to_rack = to_rack..arena.to_rack.len();
        plan.sources = sources..arena.source_edge.len();
        // Floors of the members with no pair node, per rack.
        plain.fill(0);
        let slots = arena.slots.len();
        arena.slots.resize(slots + n, Slot::default());
        let slot = &mut arena.slots[slots..];
        let mut next_claim = 0usize;
        let mut pair = rack(racks);
        for lm in 0..n {
            let into = member_base + lm as u32;
            let pool = rack(rack_of(lm));
            if claims.get(next_claim).is_none_or(|x| x.0 != lm as u32) {
                plain[rack_of(lm)] += 1;
                if has_extra {
                    slot[lm].pool_edge = Some(net.edge(pool, into, 1, [0; 4]));
                }
                continue;
            }
            let Some(c) = cap(floor + 1) else {
                return false;
            };
            slot[lm].pair = true;
            slot[lm].pool_edge = Some(net.edge(pool, pair, c, [0; 4]));
            while let Some(&(_, _, count)) = claims.get(next_claim).filter(|x| x.0 == lm as u32) {
                // The free node is the group after the last.
                let from = block + entry_group[next_claim] as u32;
                next_claim += 1;
                let Some(c) = cap(count) else { return false };
                arena.keep_edge.push(net.edge(from, pair, c, keep_cost));
            }
            if floor > 0 {
                let Some(c) = cap(floor) else { return false };
                slot[lm].floor_edge = Some(net.edge(pair, sink, c, [0; 4]));
            }
            if has_extra {
                slot[lm].extra_edge = Some(net.edge(pair, into, 1, [0; 4]));
            }
            pair += 1;
        }
        plan.slots = slots..arena.slots.len();
        let plain_floors = arena.plain_floor.len();
        for (r, &count) in plain.iter().enumerate() {
            let mut edge = None;
            if floor > 0 && count > 0 {
                let Some(c) = cap(floor * count) else {
                    return false;
                };
                edge = Some(net.edge(rack(r), sink, c, [0; 4]));
            }
            arena.plain_floor.push(edge);
        }
        plan.racks = plain_floors..arena.plain_floor.len();
    }
    let mut members = MemberEdges {
        to_sink: vec![None; n],
        to_z: vec![None; n],
        z_sink: None,
    };
    for lm in 0..n {
        let node = member_base + lm as u32;
        if q > 0 {
            let Some(c) = cap(q) else { return false };
            members.to_sink[lm] = Some(net.edge(node, sink, c, [0; 4]));
        }
        if s > 0 {
            members.to_z[lm] = Some(net.edge(node, z, 1, [0; 4]));
        }
    }
    if s > 0 {
        let Some(c) = cap(s) else { return false };
        members.z_sink = Some(net.edge(z, sink, c, [0; 4]));
    }
    // The planted fault runs cold: a proposal keeping claims would be certified as it is
    // (every flow costs nothing there) and hide the fault behind its keeps.
    let warm = warm_wanted() && !ignore_keeps;
    if warm {
        preset::propose(&mut net, &plans, &arena, &members, &rack_of, racks, q);
    }
    #[cfg(test)]
    let before = tally::flow_counts();
    let value = net.solve(source, sink);
    #[cfg(test)]
    if warm {
        tally::add_warm(before);
    }
    if u64::try_from(value).ok() != Some(supply_total) {
        return false;
    }
    let before: Vec<usize> = comp
        .members
        .iter()
        .map(|&m| lists[m as usize].len())
        .collect();
    // Each topic's flow is read back and dealt in turn (topics in order, as the lists want
    // them), into buffers reused from topic to topic.
    let mut buffers = DealBuffers::default();
    for plan in &plans {
        let view = arena.view(plan);
        buffers.read_back(&net, &view, racks);
        if !deal(ctx, plan, &view, lists, &mut buffers) {
            for (&m, &len) in comp.members.iter().zip(&before) {
                lists[m as usize].truncate(len);
            }
            return false;
        }
    }
    #[cfg(test)]
    tally::add();
    true
}

/// Buffers [`deal`] reuses from topic to topic.
#[derive(Default)]
struct DealBuffers {
    /// Per claim entry: the units its keep edge carries (used up by the deal).
    kept: Vec<u64>,
    /// Per local member: partitions taken from its rack's pool.
    takes: Vec<u64>,
    /// Units from group g to rack r, at `g * racks + r`.
    amount: Vec<u64>,
    taken: Vec<bool>,
    next: Vec<usize>,
    bucket: Vec<i32>,
    /// The partitions not kept, by group (see [`left_over_into`]).
    groups: Vec<Vec<i32>>,
}

impl DealBuffers {
    /// Reads the solved `net` back for `plan` (over `racks` racks): each claim
    /// entry's kept units, each member's take from its rack's pool, each group's units per
    /// rack.
    fn read_back(&mut self, net: &Network, plan: &TopicFlow<'_>, racks: usize) {
        let floor = u64::from(plan.floor);
        let mut claims = plan.claims.iter().peekable();
        self.takes.clear();
        for (lm, slot) in plan.slots.iter().enumerate() {
            let units = slot.pool_edge.map_or(0, |id| net.flow(id) as u64);
            self.takes
                .push(if claims.peek().is_some_and(|c| c.0 == lm as u32) {
                    while claims.next_if(|c| c.0 == lm as u32).is_some() {}
                    units
                } else {
                    floor + units
                });
        }
        self.kept.clear();
        self.kept
            .extend(plan.keep_edge.iter().map(|&id| net.flow(id) as u64));
        self.amount.clear();
        self.amount.resize((plan.groups.len() + 1) * racks, 0);
        for &(g, r, id) in plan.to_rack {
            self.amount[g * racks + r] = net.flow(id) as u64;
        }
    }
}

/// Deals one solved topic (`plan`, seen as `view`, read back into `buffers`) as the tie rule
/// of the module docs says, using up `buffers.kept`; `false` if the flow's counts do not add
/// up (conservation rules it out).
fn deal(
    ctx: &Context<'_, '_>,
    plan: &Plan,
    view: &TopicFlow<'_>,
    lists: &mut [Vec<(u32, i32)>],
    buffers: &mut DealBuffers,
) -> bool {
    let (comp, t) = (ctx.comp, plan.topic);
    let masks = ctx.topic_masks(plan.index, t);
    let racks = ctx.racks;
    let DealBuffers {
        kept,
        takes,
        amount,
        taken,
        next,
        bucket,
        groups,
    } = buffers;
    taken.clear();
    taken.resize(masks.len(), false);
    // Units each claim entry still keeps.
    let left = kept;
    for (&(p, m), &e) in ctx.keepable[t as usize].iter().zip(view.entry_of) {
        let e = e as usize;
        if left[e] > 0 {
            left[e] -= 1;
            taken[p as usize] = true;
            lists[m as usize].push((t, p));
        }
    }
    if left.iter().any(|&x| x > 0) {
        return false;
    }
    let k = view.groups.len();
    if !left_over_into(masks, taken, view.groups, groups) {
        return false;
    }
    next.clear();
    next.resize(k + 1, 0);
    for (r, members) in ctx.rack_members.iter().enumerate() {
        if !rack_share(groups, amount, racks, r, next, bucket) {
            return false;
        }
        let mut from = bucket.iter();
        for &lm in members {
            let list = &mut lists[comp.members[lm as usize] as usize];
            let want = takes[lm as usize] as usize;
            let before = from.len();
            list.extend(from.by_ref().take(want).map(|&p| (t, p)));
            if before - from.len() != want {
                return false;
            }
        }
        if from.next().is_some() {
            return false;
        }
    }
    next.iter()
        .zip(groups.iter())
        .all(|(&used, g)| used == g.len())
}

/// How many distinct members `claims` (ascending by member) names.
fn distinct_members(claims: &[(u32, u64, u64)]) -> usize {
    claims
        .iter()
        .enumerate()
        .filter(|&(i, x)| i == 0 || claims[i - 1].0 != x.0)
        .count()
}

/// Test-only count of components assigned by this network on the current thread.
#[cfg(test)]
pub(crate) mod tally {
    use std::cell::Cell;

    thread_local! {
        static COUNT: Cell<usize> = const { Cell::new(0) };
        /// Warm starts proposed, certified, and the negative cycles their certification
        /// cancelled.
        static WARM: Cell<(usize, usize, usize)> = const { Cell::new((0, 0, 0)) };
    }

    /// The solver's counts of certified warm starts and cancelled cycles on this thread.
    pub(super) fn flow_counts() -> (usize, usize) {
        use super::super::super::flow::{CANCELLED, CERTIFIED};
        (CERTIFIED.with(Cell::get), CANCELLED.with(Cell::get))
    }

    /// Counts one proposal, certified and cancelled as the solver's counts moved from
    /// `before`.
    pub(super) fn add_warm(before: (usize, usize)) {
        let now = flow_counts();
        WARM.with(|c| {
            let (p, ok, cycles) = c.get();
            c.set((p + 1, ok + now.0 - before.0, cycles + now.1 - before.1));
        });
    }

    /// Proposals made, certified, and cycles cancelled on this thread so far.
    pub(crate) fn warm() -> (usize, usize, usize) {
        WARM.with(Cell::get)
    }

    /// Counts one component assigned.
    pub(super) fn add() {
        COUNT.with(|c| c.set(c.get() + 1));
    }

    /// Components assigned so far on this thread.
    pub(crate) fn get() -> usize {
        COUNT.with(Cell::get)
    }
}
