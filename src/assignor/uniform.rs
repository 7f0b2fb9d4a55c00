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
//!   rack pool (t,r) → node(m,t)     m ∈ Sub(t) in rack r
//!   topic pool t → node(m,t)        m ∈ Sub(t)
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
//! partition on its owner edge, an aligned one through a matching rack pool, the rest through
//! the topic pool), and every integral flow maps back to an assignment whose true cost is no
//! worse (a unit routed through a pool to its owner or to an aligned member only gains), so
//! an optimal flow gives a lexicographically optimal assignment. The solver is exact
//! (primal–dual with potentials, no negative residual cycle at the end).
//!
//! *Back to partitions.* Pool flows are matched to class flows in class order and member
//! order; within a class, members by ascending id take the lowest partition numbers first.
//! Everything iterates over the [canonical](super::problem) order, so input order never leaks
//! into the result (objective 6). If the input assignment is already optimal for 1–4 and is
//! given back as `owned`, keeping everything is optimal for 5, so it comes back unchanged.
//!
//! *Fast path.* With no previous owner, no possible rack alignment, and every member with a
//! subscription subscribing to the same topics, a closed form is optimal: members take f_t of
//! each topic, and the extras of all topics are dealt round-robin in one rotation, so loads
//! are within one of each other (the unique minimiser of Σ load² for a fixed total), while
//! objectives 4 and 5 are zero for every assignment.
//!
//! *Complexity.* Classes: O(P log P) to build. Network: V = classes + pools + Σ|Sub(t)| +
//! members, E = O(classes·(2+|R|) + Σ|Sub(t)|·(1+racks per member)). The solver runs
//! O(phases) Dijkstra passes (phases ≈ distinct marginal costs met, a few times the load
//! range) plus one augmenting path per extra unit. The fast path is O(P + Σ|Sub(t)|).

use super::classes::Classes;
use super::flow::Network;
use super::problem::Problem;
use super::{Assignment, Assignor, GroupSpec, SpecError};

/// The uniform v2 assignor (the default): spread, balance, rack alignment, stickiness, in
/// that priority order, exactly.
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformV2;

impl Assignor for UniformV2 {
    fn name(&self) -> &'static str {
        "uniform-v2"
    }

    fn assign(&self, spec: &GroupSpec) -> Result<Assignment, SpecError> {
        spec.validate()?;
        let problem = Problem::new(spec);
        let classes = Classes::new(&problem, spec.rack_aware);
        let lists = if !classes.any_owner && !classes.any_rack() && homogeneous(&problem) {
            round_robin(&problem)
        } else {
            solve(&problem, &classes)
        };
        Ok(problem.assignment(lists))
    }
}

/// Whether every member with at least one subscription has the same subscriptions.
fn homogeneous(problem: &Problem<'_>) -> bool {
    let mut subs = problem.subscriptions.iter().filter(|s| !s.is_empty());
    match subs.next() {
        None => true,
        Some(first) => subs.all(|s| s == first),
    }
}

/// The closed form for homogeneous groups with nothing to keep and nothing to align.
fn round_robin(problem: &Problem<'_>) -> Vec<Vec<(u32, i32)>> {
    let mut lists = vec![Vec::new(); problem.members.len()];
    let mut cursor = 0usize;
    for (t, subs) in problem.subscribers.iter().enumerate() {
        if subs.is_empty() {
            continue;
        }
        let n = subs.len();
        let total = problem.partitions(t as u32) as usize;
        let floor = total / n;
        let extra = total % n;
        // Members cursor..cursor+extra (cyclically) take this topic's extras.
        let mut next = 0i32;
        for (i, &m) in subs.iter().enumerate() {
            let offset = (i + n - cursor % n) % n;
            let count = floor + usize::from(offset < extra);
            let list = &mut lists[m as usize];
            for p in next..next + count as i32 {
                list.push((t as u32, p));
            }
            next += count as i32;
        }
        cursor = (cursor + extra) % n;
    }
    lists
}

/// Builds the flow network of the module docs, solves it and turns the flow into partitions.
fn solve(problem: &Problem<'_>, classes: &Classes) -> Vec<Vec<(u32, i32)>> {
    let n_topics = problem.topics.len();
    let n_members = problem.members.len();
    let n_racks = classes.racks.len();
    let floor: Vec<u32> = (0..n_topics)
        .map(|t| {
            let subs = problem.subscribers[t].len() as u32;
            problem.partitions(t as u32).checked_div(subs).unwrap_or(0)
        })
        .collect();
    let extra: Vec<u32> = (0..n_topics)
        .map(|t| {
            let subs = problem.subscribers[t].len() as u32;
            problem.partitions(t as u32).checked_rem(subs).unwrap_or(0)
        })
        .collect();

    // Node numbering, in topological order: source, classes, pools, (m,t) nodes, members, sink.
    let source = 0u32;
    let class_base = 1u32;
    let mut next = class_base + classes.classes.len() as u32;
    // Rack pools: for every topic, the racks some subscriber runs in.
    let mut rack_pool: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n_topics]; // (rack, node)
    let mut topic_pool = vec![u32::MAX; n_topics];
    let any_rack = classes.any_rack();
    for t in 0..n_topics {
        if problem.subscribers[t].is_empty() {
            continue;
        }
        if any_rack {
            let mut present: Vec<u32> = problem.subscribers[t]
                .iter()
                .filter_map(|&m| classes.member_rack[m as usize])
                .collect();
            present.sort_unstable();
            present.dedup();
            for r in present {
                rack_pool[t].push((r, next));
                next += 1;
            }
        }
        topic_pool[t] = next;
        next += 1;
    }
    let mut pair_base = Vec::with_capacity(n_topics);
    for subs in &problem.subscribers {
        pair_base.push(next);
        next += subs.len() as u32;
    }
    let member_base = next;
    next += n_members as u32;
    let sink = next;
    let mut net = Network::new(sink as usize + 1);
    let _ = n_racks;

    let pair = |m: u32, t: u32| -> u32 {
        let pos = problem.subscribers[t as usize].partition_point(|&x| x < m);
        pair_base[t as usize] + pos as u32
    };

    // Class edges, remembered for extraction.
    struct ClassEdges {
        owner: Option<usize>,
        racks: Vec<(usize, u32)>, // (edge, rack pool node)
        topic: usize,
    }
    let mut class_edges = Vec::with_capacity(classes.classes.len());
    for (i, class) in classes.classes.iter().enumerate() {
        let c = class_base + i as u32;
        let t = class.topic;
        let size = class.partitions.len() as i32;
        net.edge(source, c, size, [0; 4]);
        let owner = class.owner.map(|o| {
            let aligned = classes.member_rack[o as usize]
                .is_some_and(|r| class.racks.binary_search(&r).is_ok());
            let cap = size.min(floor[t as usize] as i32 + 1);
            net.edge(c, pair(o, t), cap, [0, 0, -i8::from(aligned), -1])
        });
        let mut racks = Vec::new();
        for &r in &class.racks {
            if let Ok(k) = rack_pool[t as usize].binary_search_by_key(&r, |&(r, _)| r) {
                let node = rack_pool[t as usize][k].1;
                racks.push((net.edge(c, node, size, [0, 0, -1, 0]), node));
            }
        }
        let topic = net.edge(c, topic_pool[t as usize], size, [0; 4]);
        class_edges.push(ClassEdges {
            owner,
            racks,
            topic,
        });
    }
    // Pool edges: for every pool, (edge, member) in member order.
    let mut pool_out: Vec<Vec<(usize, u32)>> = vec![Vec::new(); sink as usize];
    for t in 0..n_topics {
        let subs = &problem.subscribers[t];
        if subs.is_empty() {
            continue;
        }
        let cap = floor[t] as i32 + 1;
        for &(r, node) in &rack_pool[t] {
            for &m in subs {
                if classes.member_rack[m as usize] == Some(r) {
                    let e = net.edge(node, pair(m, t as u32), cap, [0; 4]);
                    pool_out[node as usize].push((e, m));
                }
            }
        }
        let node = topic_pool[t];
        for &m in subs {
            let e = net.edge(node, pair(m, t as u32), cap, [0; 4]);
            pool_out[node as usize].push((e, m));
        }
    }
    // Floors, extras and loads.
    let mut degree = vec![0i32; n_members];
    let mut base = vec![0i64; n_members];
    for t in 0..n_topics {
        for &m in &problem.subscribers[t] {
            let node = pair(m, t as u32);
            if floor[t] > 0 {
                net.edge(node, sink, floor[t] as i32, [-1, 0, 0, 0]);
            }
            base[m as usize] += i64::from(floor[t]);
            if extra[t] > 0 {
                net.edge(node, member_base + m, 1, [0; 4]);
                degree[m as usize] += 1;
            }
        }
    }
    for m in 0..n_members {
        if degree[m] > 0 {
            net.convex_edge(member_base + m as u32, sink, degree[m], base[m]);
        }
    }

    let _total = net.solve(source, sink);

    // Back to partitions: class pieces (member, count), pools matched in class order.
    let mut pieces: Vec<Vec<(u32, u32)>> = vec![Vec::new(); classes.classes.len()];
    // Pool node → incoming (class, count) in class order.
    let mut pool_in: Vec<Vec<(usize, u32)>> = vec![Vec::new(); sink as usize];
    for (i, (class, edges)) in classes.classes.iter().zip(&class_edges).enumerate() {
        if let (Some(e), Some(o)) = (edges.owner, class.owner) {
            let f = net.flow(e);
            if f > 0 {
                pieces[i].push((o, f as u32));
            }
        }
        for &(e, node) in &edges.racks {
            let f = net.flow(e);
            if f > 0 {
                pool_in[node as usize].push((i, f as u32));
            }
        }
        let f = net.flow(edges.topic);
        if f > 0 {
            pool_in[topic_pool[class.topic as usize] as usize].push((i, f as u32));
        }
    }
    for (node, incoming) in pool_in.iter().enumerate() {
        if incoming.is_empty() {
            continue;
        }
        let mut outgoing = pool_out[node]
            .iter()
            .map(|&(e, m)| (m, net.flow(e) as u32))
            .filter(|&(_, f)| f > 0);
        let mut current = outgoing.next();
        for &(i, mut amount) in incoming {
            while amount > 0 {
                let Some((m, left)) = current.as_mut() else {
                    break;
                };
                let k = amount.min(*left);
                pieces[i].push((*m, k));
                amount -= k;
                *left -= k;
                if *left == 0 {
                    current = outgoing.next();
                }
            }
        }
    }
    let mut lists = vec![Vec::new(); n_members];
    for (class, mut piece) in classes.classes.iter().zip(pieces) {
        piece.sort_unstable();
        let mut parts = class.partitions.iter();
        for (m, k) in piece {
            for &p in parts.by_ref().take(k as usize) {
                lists[m as usize].push((class.topic, p));
            }
        }
    }
    lists
}
