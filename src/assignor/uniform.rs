//! The uniform v2 assignor: exact lexicographic optimisation of objectives 1–6 (see the
//! [module definitions](super)).
//!
//! # Algorithm
//!
//! *Counts, not partitions.* Spread fixes, for each topic t with subscribers, f_t =
//! ⌊P_t/|Sub(t)|⌋ and r_t = P_t mod |Sub(t)|: every subscriber gets f_t partitions of t and
//! exactly r_t of them get one more. Partitions are grouped into [classes](super::classes)
//! (topic, replica racks, previous owner) whose members no objective can tell apart, so only
//! how many partitions of each class go to each member matters.
//!
//! *One flow network* carries every objective at once, with costs in ℤ⁴ ordered
//! lexicographically (spread, balance, rack, stickiness), see [`super::flow`]:
//!
//! ```text
//! source → class c=(t,R,o)          cap |c|
//!   c → node(o,t)                   cost (0,0,−[rack(o)∈R],−1)     keep with the owner
//!   c → rack pool (t,r), r ∈ R      cost (0,0,−1,0)                aligned elsewhere
//!   c → topic pool t                cost 0                          anywhere
//!   topic pool t → rack pool (t,r)  every rack r of a subscriber
//!   rack pool (t,r) → node(m,t)     m ∈ Sub(t) in rack r
//!   topic pool t → node(m,t)        m ∈ Sub(t) in no rack pool of t
//!   node(m,t) → sink                cap f_t, cost (−1,0,0,0)        the spread floor
//!   node(m,t) → member m            cap 1                           the one extra
//!   member m → sink                 convex: k-th unit (0, 2(B_m+k)−1, 0, 0)
//! ```
//!
//! where B_m = Σ_{t∋m} f_t. A spread assignment always exists (any subscriber can take any
//! partition of its topic) and fills every floor edge, so a minimum-cost maximum flow first
//! fills all floors (component 0), then minimises Σ_m (B_m+e_m)² − B_m² = Σ load² − const
//! (component 1), then maximises aligned partitions (component 2), then kept partitions
//! (component 3). Every valid spread assignment maps to a flow of equal cost (route a kept
//! partition on its owner edge, an aligned one through the rack pool of its member's rack,
//! the rest through the topic pool, which reaches every subscriber: through its rack pool
//! when it has one), and every integral flow maps back to an assignment whose true cost is
//! no worse (a unit routed through a pool to its owner, or through the topic pool to an
//! aligned member, only gains), so an optimal flow gives a lexicographically optimal
//! assignment. The solver is exact (primal–dual with potentials, no negative residual cycle
//! at the end).
//!
//! Each subscriber is reached from exactly one pool of each topic (its rack's, else the
//! topic pool): with rack alignment on, an (m,t) node is then needed only for a floor or an
//! owner edge, not to merge a rack pool with the topic pool. (The former layout fed every
//! subscriber from both; on racked groups with f_t = 0 it needed an (m,t) node per
//! subscription, 40× the nodes of the same group without racks.)
//!
//! *Back to partitions.* Pools are matched in node order (a topic pool before its rack
//! pools, which it hands units on to); pool flows are matched to class flows in class order
//! and member order; within a class, members by ascending id take the lowest partition numbers first.
//! Everything iterates over the [canonical](super::problem) order, so input order never leaks
//! into the result (objective 6). If the input assignment is already optimal for 1–4 and is
//! given back as `owned`, keeping everything is optimal for 5, so it comes back unchanged.
//!
//! *Components.* The group splits into the connected components of the member–topic graph,
//! solved independently (exact: see [`super::components`]). A homogeneous component whose
//! claims already form a valid, spread, balanced and (with racks) aligned assignment comes
//! back as it is: that is the only assignment optimal for 1–5 keeping every claim (see
//! [`super::settled`]).
//!
//! *Homogeneous components.* Where every member subscribes to every topic and no partition
//! can be aligned, the flow is not needed:
//! - with no previous owner, members take f_t of each topic and the extras of all topics are
//!   dealt round-robin in one rotation, so loads are within one of each other (the unique
//!   minimising multiset of Σ load² for a fixed total), while objectives 4 and 5 are zero
//!   for every assignment;
//! - with previous owners, [`super::homogeneous`] proves that only the choice of which
//!   members get each topic's extra matters, as a matching on the sparse set of (topic,
//!   member) cells where the extra keeps one more partition, and solves that exactly (a
//!   direct construction on components of 16 or more members, else a greedy, each used only
//!   when it meets an upper bound, else a small flow on topics × members). It covers
//!   the former "keep everything" certificate: when keeping everything is optimal, it keeps
//!   everything. It may pick a different optimum than this module's flow (its tie rule is in
//!   its docs); objectives 1–5 are the same.
//!
//! *Overlapping components without alignment.* Where members subscribe to different topics
//! and no partition can be aligned, [`super::overlap`] shows that the same choice of extras
//! decides everything, with loads starting at B_m; it accepts a proposal that meets a balance
//! bound and a gain bound, else solves a flow on topics × subscribers (one edge per
//! subscription, no class or (m,t) node). Where alignment is possible,
//! [`super::overlap::racked`] runs the same choice on the keepable claims and certifies the
//! result when a per-topic rack transport aligns every alignable partition; otherwise this
//! module's flow runs.
//!
//! *Homogeneous components with rack alignment.* [`super::aligned`] certifies a result when
//! it aligns every partition that any member could align and keeps the most that any such
//! assignment could keep (bounds it computes from the keepable claims), or when a small
//! rack-aware flow over counts (not partitions) is exact for the component (every topic with
//! f_t = 0); otherwise it writes nothing and this module's flow runs.
//!
//! *Smaller network.* A node (m,t) exists only where m has a floor to fill (f_t > 0) or can be
//! reached other than through its one pool (it owns a class of t). Elsewhere it would pass
//! at most one unit from that pool to the member, so an edge pool → member of capacity 1
//! replaces it: the same flows, the same costs.
//!
//! *Warm start.* With previous owners, the flow keeping every claim (classes in order, as
//! far as the spread ceiling f_t + [r_t > 0] of the owner's (m,t) node allows; floors filled
//! before extras, mandatory member edges before convex ones) is proposed to the solver, which
//! uses it only if it can certify it as minimum-cost for its value (see [`super::flow`]).
//! When members leave, or nothing changed, it usually is, and the solver only has to place
//! the freed partitions instead of rebuilding every load level one phase at a time. Where a
//! negative residual cycle is evident (a subscriber short of a floor, or two units lighter
//! than a holder of an extra it has room for: a joiner), [`super::warm`] first moves up to
//! [`MAX_MOVES`] extras from the heaviest holders (from the holder's class whose racks suit
//! the receiver, through the receiver's pool); if one is still evident, nothing is proposed.
//! When the claims keep at most half of the units (none in a full assignment), the units
//! left are handed out too (floors first, each extra to the lightest subscriber with room,
//! improved topic by topic; each class's units to the rack pools it aligns with as far as
//! they take units, the rest through the topic pool; see `super::warm`), so that a full
//! assignment is certified, or repaired by a few cycle cancellations, instead of built one
//! phase per load level.
//! Exactness never depends on the proposal: the solver returns a minimum-cost maximum flow
//! either way, possibly another one among equal-cost flows, which is still a deterministic
//! function of the canonical spec.
//!
//! *Complexity.* Classes: O(P log P). Network: V = classes + pools + needed (m,t) nodes +
//! members, E = O(classes·(2+|R|) + Σ_t (|Sub(t)| + racks(t))). The solver runs one Dijkstra and a few
//! breadth-first passes per phase (phases ≈ distinct marginal costs met, a few times the
//! spread of loads) plus one augmenting path per extra unit: O(phases·E log V + P·depth).
//! The round robin is O(P + Σ_t |Sub(t)|); the homogeneous path costs O(P + Σ_t |Sub(t)|)
//! plus sorting the claims when its greedy is certified (the flow of its fallback has
//! Σ_t |Sub(t)| edges and no per-partition node). Classes are built only when some component
//! needs this module's flow.

use super::aligned;
use super::claims::previous_owners;
use super::classes::Classes;
use super::components::{Component, components};
use super::homogeneous;
use super::overlap;
use super::problem::Problem;
use super::settled;
use super::{Assignment, Assignor, GroupSpec, SpecError};
use network::solve;

mod network;

/// The uniform v2 assignor (the default): spread, balance, rack alignment, stickiness, in
/// that priority order, exactly.
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformV2;

impl UniformV2 {
    /// Frees the solver's buffers that this thread keeps between calls, and returns the
    /// bytes of capacity freed. A thread keeps at most 16 buffers per element type and
    /// 32 MiB in all, so that the next call on it reuses memory already faulted in; results
    /// never depend on them. Call it on a thread that will not assign again soon, or to
    /// return that memory under a tight budget; the next call simply allocates afresh.
    pub fn release_thread_buffers() -> usize {
        super::flow::release_buffers()
    }
}

impl Assignor for UniformV2 {
    fn name(&self) -> &'static str {
        "uniform-v2"
    }

    fn assign(&self, spec: &GroupSpec) -> Result<Assignment, SpecError> {
        assign_with(spec, true)
    }
}

/// The assignment, with the [homogeneous](super::homogeneous) fast path when `fast` and the
/// flow for every component otherwise (tests compare the two).
pub(crate) fn assign_with(spec: &GroupSpec, fast: bool) -> Result<Assignment, SpecError> {
    spec.validate()?;
    let problem = Problem::new(spec);
    let owners = previous_owners(&problem);
    // Built only when some component needs the flow.
    let mut classes: Option<(Classes, Vec<std::ops::Range<usize>>)> = None;
    let mut lists = vec![Vec::new(); problem.members.len()];
    for comp in components(&problem) {
        if fast
            && comp.homogeneous(&problem)
            && settled::assign(&problem, &comp, &owners, spec.rack_aware, &mut lists)
        {
            continue;
        }
        if fast && homogeneous::applies(&problem, &comp, spec.rack_aware) {
            if comp.topics.iter().all(|&t| owners[t as usize].is_empty()) {
                homogeneous::reserve(&problem, &comp, &mut lists);
                round_robin(&problem, &comp, &mut lists);
            } else {
                // Every route is exact; which one ran does not matter here.
                let _ = homogeneous::assign(&problem, &comp, &owners, &mut lists);
            }
            continue;
        }
        if fast && overlap::applies(&problem, &comp, spec.rack_aware) {
            overlap::assign(&problem, &comp, &owners, &mut lists);
            continue;
        }
        if fast
            && overlap::racked::applies(&problem, &comp, spec.rack_aware)
            && overlap::racked::assign(&problem, &comp, &owners, &mut lists)
        {
            continue;
        }
        if fast
            && aligned::applies(&problem, &comp, spec.rack_aware)
            && aligned::assign(&problem, &comp, &owners, &mut lists).is_some()
        {
            continue;
        }
        let (classes, by_topic) = classes.get_or_insert_with(|| {
            let classes = Classes::new(&problem, spec.rack_aware, &owners);
            let by_topic = classes.by_topic(problem.topics.len());
            (classes, by_topic)
        });
        let ids: Vec<usize> = comp
            .topics
            .iter()
            .flat_map(|&t| by_topic[t as usize].clone())
            .collect();
        let homogeneous = comp.homogeneous(&problem);
        solve(&problem, classes, &comp, &ids, homogeneous, &mut lists);
    }
    Ok(problem.assignment(lists))
}

/// The closed form for a homogeneous component with nothing to keep and nothing to align.
fn round_robin(problem: &Problem<'_>, comp: &Component, lists: &mut [Vec<(u32, i32)>]) {
    // The extras of each topic go to a cyclic window of subscribers starting at `cursor`;
    // partitions are numbered in subscriber order, so a member's range starts where the
    // previous subscriber's ended.
    let mut cursor = 0usize;
    for &t in &comp.topics {
        let subs = &problem.subscribers[t as usize];
        let n = subs.len();
        let total = problem.partitions(t) as usize;
        let floor = total / n;
        let extra = total % n;
        let start = cursor;
        let end = start + extra;
        if floor == 0 {
            // Only the window gets anything: visit it in subscriber order, skipping the rest.
            let wrapped = end.saturating_sub(n);
            for (p, i) in (0..wrapped).chain(start..end.min(n)).enumerate() {
                lists[subs[i] as usize].push((t, p as i32));
            }
        } else {
            let in_window = |i: usize| (start <= i && i < end) || i + n < end;
            let mut next = 0i32;
            for (i, &m) in subs.iter().enumerate() {
                let count = (floor + usize::from(in_window(i))) as i32;
                lists[m as usize].extend((next..next + count).map(|p| (t, p)));
                next += count;
            }
        }
        cursor = if end >= n { end - n } else { end };
    }
}
