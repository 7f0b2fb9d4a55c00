//! The flow oracle: a textbook min-cost flow that finds the lexicographic optimum of groups too
//! large for brute force.
//!
//! # The network
//!
//! ```text
//! source ─1─▶ partition (t,p) ─▶ hub(t) ───────────────▶ slot(t,m) ─⌊P/n⌋, −BIG─▶ member m ─1, (2k−1)·W_L─▶ sink
//!                            ├─▶ rack hub(t,r), −W_R ─▶ slot(t,m) ─(⌈⌉−⌊⌋), 0──▶           (k = 1, 2, …)
//!                            └─▶ slot(t, previous owner), −1 (−W_R − 1 when aligned)
//! ```
//!
//! A unit of flow is a partition given to a member. Every path from a partition to a slot
//! costs at least the true rack/stickiness value of that pair, and the true value is reachable
//! (through the rack hub of the member's rack, or the direct edge to the previous owner), so the
//! minimum cost over flows equals the minimum over assignments. The member's k-th partition
//! costs (2k−1)·W_L, which sums to load²·W_L: a convex cost, so a min-cost flow fills these
//! edges in order. The ⌊P/n⌋ edges cost −BIG so that any min-cost maximum flow fills them, which
//! with the ⌈P/n⌉ cap is spread. With `W_R > N` and `W_L > N·W_R + N` (N = partitions to
//! assign), minimising the total cost minimises Σload² first, then maximises rack alignment,
//! then retention: exactly the objectives' priority order.
//!
//! Solved by successive shortest paths with Bellman-Ford (queue-based), costs in `i128`. Slow
//! and simple on purpose: it shares nothing with the assignor's solver.

use std::collections::{BTreeMap, VecDeque};

use super::problem::{Objectives, Owners, Problem};

struct Edge {
    to: usize,
    cap: i64,
    cost: i128,
}

/// A residual graph; edge `e ^ 1` is the reverse of edge `e`.
struct Graph {
    edges: Vec<Edge>,
    adjacent: Vec<Vec<usize>>,
}

impl Graph {
    fn new(nodes: usize) -> Graph {
        Graph {
            edges: Vec::new(),
            adjacent: vec![Vec::new(); nodes],
        }
    }

    fn add_node(&mut self) -> usize {
        self.adjacent.push(Vec::new());
        self.adjacent.len() - 1
    }

    fn add_edge(&mut self, from: usize, to: usize, cap: i64, cost: i128) -> usize {
        let id = self.edges.len();
        self.edges.push(Edge { to, cap, cost });
        self.edges.push(Edge {
            to: from,
            cap: 0,
            cost: -cost,
        });
        self.adjacent[from].push(id);
        self.adjacent[to].push(id + 1);
        id
    }

    fn flow(&self, edge: usize) -> i64 {
        self.edges[edge ^ 1].cap
    }

    /// Pushes as much flow as possible from `s` to `t`, always along a cheapest path.
    /// Returns (flow, cost). The graph starts acyclic, so no negative cycle ever appears.
    fn min_cost_max_flow(&mut self, s: usize, t: usize) -> (i64, i128) {
        let n = self.adjacent.len();
        let (mut flow, mut cost) = (0i64, 0i128);
        loop {
            let mut dist: Vec<Option<i128>> = vec![None; n];
            let mut via: Vec<Option<usize>> = vec![None; n];
            let mut queued = vec![false; n];
            let mut queue = VecDeque::new();
            dist[s] = Some(0);
            queue.push_back(s);
            queued[s] = true;
            while let Some(u) = queue.pop_front() {
                queued[u] = false;
                let du = dist[u].unwrap_or_default();
                for &e in &self.adjacent[u] {
                    let edge = &self.edges[e];
                    if edge.cap > 0 && dist[edge.to].is_none_or(|d| du + edge.cost < d) {
                        dist[edge.to] = Some(du + edge.cost);
                        via[edge.to] = Some(e);
                        if !queued[edge.to] {
                            queued[edge.to] = true;
                            queue.push_back(edge.to);
                        }
                    }
                }
            }
            let Some(path_cost) = dist[t] else {
                return (flow, cost);
            };
            let mut push = i64::MAX;
            let mut v = t;
            while let Some(e) = via[v] {
                push = push.min(self.edges[e].cap);
                v = self.edges[e ^ 1].to;
            }
            let mut v = t;
            while let Some(e) = via[v] {
                self.edges[e].cap -= push;
                self.edges[e ^ 1].cap += push;
                v = self.edges[e ^ 1].to;
            }
            flow += push;
            cost += path_cost * i128::from(push);
        }
    }
}

/// The best objectives over all valid, spread-respecting assignments of `problem`, and one
/// assignment reaching them.
#[must_use]
pub fn optimum(problem: &Problem) -> (Objectives, Owners) {
    let n = problem.assignable() as i128;
    let w_r: i128 = n + 1;
    let w_l: i128 = (n + 1) * (n + 1);
    let big: i128 = w_l * (n * n + 1);

    let mut g = Graph::new(2);
    let (source, sink) = (0, 1);
    let member_nodes: Vec<usize> = problem.members.iter().map(|_| g.add_node()).collect();
    let mut max_load = vec![0i64; problem.members.len()];
    let mut floor_total: i128 = 0;
    // Per topic: the partition → first-hop edges, and the slot nodes by member.
    let mut partition_edges: Vec<Vec<Vec<(usize, Hop)>>> = Vec::new();
    let mut hub_out: Vec<BTreeMap<Hop, Vec<(usize, usize)>>> = Vec::new();

    for (t, topic) in problem.topics.iter().enumerate() {
        partition_edges.push(Vec::new());
        hub_out.push(BTreeMap::new());
        if topic.subscribers.is_empty() {
            continue;
        }
        let (lo, hi) = (i64::from(topic.spread_min()), i64::from(topic.spread_max()));
        let cap_all = i64::from(topic.partitions);
        let mut slots = BTreeMap::new();
        for &m in &topic.subscribers {
            let slot = g.add_node();
            slots.insert(m, slot);
            if lo > 0 {
                g.add_edge(slot, member_nodes[m], lo, -big);
                floor_total += i128::from(lo);
            }
            if hi > lo {
                g.add_edge(slot, member_nodes[m], hi - lo, 0);
            }
            max_load[m] += hi;
        }
        let hub = g.add_node();
        for (&m, &slot) in &slots {
            let e = g.add_edge(hub, slot, cap_all, 0);
            hub_out[t].entry(Hop::Hub).or_default().push((e, m));
        }
        let mut rack_hubs: BTreeMap<&str, usize> = BTreeMap::new();
        if problem.rack_aware {
            for (&m, &slot) in &slots {
                if let Some(r) = &problem.members[m].rack {
                    let rh = *rack_hubs.entry(r.as_str()).or_insert_with(|| g.add_node());
                    let e = g.add_edge(rh, slot, cap_all, 0);
                    hub_out[t]
                        .entry(Hop::Rack(r.clone()))
                        .or_default()
                        .push((e, m));
                }
            }
        }
        for p in 0..topic.partitions {
            let node = g.add_node();
            g.add_edge(source, node, 1, 0);
            let mut hops = vec![(g.add_edge(node, hub, 1, 0), Hop::Hub)];
            for r in &topic.replica_racks[p as usize] {
                if let Some(&rh) = rack_hubs.get(r.as_str()) {
                    hops.push((g.add_edge(node, rh, 1, -w_r), Hop::Rack(r.clone())));
                }
            }
            if let Some(owner) = topic.previous_owner[p as usize] {
                let bonus = if problem.aligned(t, p, owner) {
                    w_r + 1
                } else {
                    1
                };
                hops.push((
                    g.add_edge(node, slots[&owner], 1, -bonus),
                    Hop::Direct(owner),
                ));
            }
            partition_edges[t].push(hops);
        }
    }
    let mut load_edges = Vec::new();
    for (m, &node) in member_nodes.iter().enumerate() {
        let edges: Vec<usize> = (1..=max_load[m])
            .map(|k| g.add_edge(node, sink, 1, i128::from(2 * k - 1) * w_l))
            .collect();
        load_edges.push(edges);
    }

    let (flow, cost) = g.min_cost_max_flow(source, sink);
    assert_eq!(
        i128::from(flow),
        n,
        "flow oracle: every partition must be assignable"
    );

    let loads: Vec<i64> = load_edges
        .iter()
        .map(|edges| edges.iter().map(|&e| g.flow(e)).sum())
        .collect();
    let sum_load_sq: i128 = loads.iter().map(|&l| i128::from(l) * i128::from(l)).sum();
    // cost = −BIG·Σ⌊P/n⌋ + W_L·Σload² − W_R·rack − retained, with rack, retained ≤ N < W_R.
    let rest = w_l * sum_load_sq - big * floor_total - cost;
    assert!(
        (0..w_l).contains(&rest),
        "flow oracle: a spread lower bound was left unfilled"
    );
    let value = Objectives {
        sum_load_sq: sum_load_sq as u64,
        rack_aligned: (rest / w_r) as u64,
        retained: (rest % w_r) as u64,
    };

    // Decompose the flow into an assignment: direct edges name their member; partitions that
    // went through a hub share that hub's outflow in partition order.
    let mut owners: Owners = Vec::with_capacity(problem.topics.len());
    for (t, topic) in problem.topics.iter().enumerate() {
        if topic.subscribers.is_empty() {
            owners.push(Vec::new());
            continue;
        }
        let mut remaining: BTreeMap<Hop, VecDeque<(usize, i64)>> = hub_out[t]
            .iter()
            .map(|(hop, outs)| {
                let queue = outs.iter().map(|&(e, m)| (m, g.flow(e))).collect();
                (hop.clone(), queue)
            })
            .collect();
        let mut row = Vec::with_capacity(topic.partitions as usize);
        for hops in &partition_edges[t] {
            let (_, hop) = hops
                .iter()
                .find(|(e, _)| g.flow(*e) > 0)
                .expect("every partition carries one unit");
            let m = match hop {
                Hop::Direct(m) => *m,
                hub => {
                    let queue = remaining.get_mut(hub).expect("hub exists");
                    while queue.front().is_some_and(|&(_, left)| left == 0) {
                        queue.pop_front();
                    }
                    let front = queue.front_mut().expect("hub outflow matches inflow");
                    front.1 -= 1;
                    front.0
                }
            };
            row.push(m);
        }
        owners.push(row);
    }
    (value, owners)
}

/// The first hop of a partition's unit of flow.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Hop {
    Hub,
    Rack(String),
    Direct(usize),
}
