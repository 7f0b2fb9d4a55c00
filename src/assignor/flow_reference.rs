//! The first, straightforward version of the solver in [`super::flow`], kept (tests only) as
//! the reference of a differential test: the optimised solver must find the same flow, edge
//! for edge, on every network.
//!
//! An exact min-cost max-flow solver with lexicographic costs, for the uniform v2 assignor.
//!
//! Costs are vectors in ℤ⁴ compared lexicographically ([`Cost`]): an ordered abelian group, so
//! shortest paths, reduced costs and potentials work exactly as with integers, while no weight
//! can overflow into a more important component (no big-M constants). Edge costs are small
//! (`[i8; 4]`), except *convex* edges whose unit k costs `[0, 2(B+k)−1, 0, 0]`: the marginal
//! cost of growing a load from B+k−1 to B+k, so that their total is Σ load² − B².
//!
//! Algorithm: primal–dual successive shortest paths. Potentials start as shortest distances
//! on the initial network, which must be a DAG with edges from lower to higher node numbers
//! (one Bellman–Ford pass in node order). Each phase runs Dijkstra with reduced costs, raises
//! the potentials so that every shortest path has zero reduced cost, then pushes a blocking
//! flow (Dinic) through the zero-reduced-cost edges until none is left. Reduced costs stay
//! non-negative throughout, so each phase augments along shortest paths only and the final
//! flow is a minimum-cost maximum flow (no negative residual cycle). A convex edge carries at
//! most one unit per augmentation, because its next unit costs strictly more.
//!
//! Complexity: O(phases × E log V + augmentations × path length); the number of phases is the
//! number of distinct shortest-path lengths met, small here (about the number of distinct
//! loads times four).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A lexicographic cost: earlier components dominate later ones.
pub(crate) type Cost = [i64; 4];

const ZERO: Cost = [0; 4];
const NONE: u32 = u32::MAX;

fn add(a: Cost, b: Cost) -> Cost {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]]
}

fn sub(a: Cost, b: Cost) -> Cost {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3]]
}

#[derive(Clone, Copy)]
struct Edge {
    to: u32,
    /// Residual capacity.
    cap: i32,
    /// Fixed cost (of the forward direction; reverse edges store the negation).
    cost: [i8; 4],
    /// For a convex forward edge or its reverse: index into `Network::convex_base`.
    convex: u32,
}

/// A flow network under construction, then solved in place.
pub(crate) struct Network {
    nodes: usize,
    edges: Vec<Edge>,
    from: Vec<u32>,
    convex_base: Vec<i64>,
}

impl Network {
    /// A network with `nodes` nodes and no edges.
    pub fn new(nodes: usize) -> Network {
        Network {
            nodes,
            edges: Vec::new(),
            from: Vec::new(),
            convex_base: Vec::new(),
        }
    }

    /// Adds an edge `u → v` (requires `u < v`) and returns its id.
    pub fn edge(&mut self, u: u32, v: u32, cap: i32, cost: [i8; 4]) -> usize {
        debug_assert!(u < v);
        let id = self.edges.len();
        let neg = [-cost[0], -cost[1], -cost[2], -cost[3]];
        self.edges.push(Edge {
            to: v,
            cap,
            cost,
            convex: NONE,
        });
        self.edges.push(Edge {
            to: u,
            cap: 0,
            cost: neg,
            convex: NONE,
        });
        self.from.push(u);
        self.from.push(v);
        id
    }

    /// Adds a convex edge `u → v` of capacity `cap` whose k-th unit costs
    /// `[0, 2(base+k)−1, 0, 0]`.
    pub fn convex_edge(&mut self, u: u32, v: u32, cap: i32, base: i64) -> usize {
        let id = self.edge(u, v, cap, [0; 4]);
        let c = self.convex_base.len() as u32;
        self.convex_base.push(base);
        self.edges[id].convex = c;
        self.edges[id + 1].convex = c;
        id
    }

    /// The flow on the edge `id` returned by [`Network::edge`].
    pub fn flow(&self, id: usize) -> i32 {
        self.edges[id ^ 1].cap
    }

    fn cost(&self, e: usize) -> Cost {
        let edge = &self.edges[e];
        if edge.convex == NONE {
            let c = edge.cost;
            return [c[0].into(), c[1].into(), c[2].into(), c[3].into()];
        }
        let base = self.convex_base[edge.convex as usize];
        if e & 1 == 0 {
            // Forward: the next unit, number flow+1.
            let f = i64::from(self.edges[e ^ 1].cap);
            [0, 2 * (base + f) + 1, 0, 0]
        } else {
            // Reverse: undoing the last unit, number flow.
            let f = i64::from(edge.cap);
            [0, -(2 * (base + f) - 1), 0, 0]
        }
    }

    /// Sends a minimum-cost maximum flow from `source` to `sink`; returns its value.
    pub fn solve(&mut self, source: u32, sink: u32) -> i64 {
        let n = self.nodes;
        // CSR adjacency, edges of each node in insertion order (deterministic).
        let mut start = vec![0u32; n + 1];
        for &u in &self.from {
            start[u as usize + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut adj = vec![0u32; self.edges.len()];
        for (e, &u) in self.from.iter().enumerate() {
            adj[fill[u as usize] as usize] = e as u32;
            fill[u as usize] += 1;
        }
        drop(fill);

        // Initial potentials: shortest distances in the initial DAG (edges go up in number).
        let mut reached = vec![false; n];
        let mut pi = vec![ZERO; n];
        reached[source as usize] = true;
        for u in 0..n {
            if !reached[u] {
                continue;
            }
            for &e in &adj[start[u] as usize..start[u + 1] as usize] {
                let e = e as usize;
                if self.edges[e].cap <= 0 {
                    continue;
                }
                let v = self.edges[e].to as usize;
                let d = add(pi[u], self.cost(e));
                if !reached[v] || d < pi[v] {
                    pi[v] = d;
                    reached[v] = true;
                }
            }
        }

        reached.fill(false);
        let mut total = 0i64;
        let mut dist = vec![ZERO; n];
        let mut done = vec![false; n];
        let mut level = vec![0u32; n];
        let mut it = vec![0u32; n];
        let mut heap = BinaryHeap::new();
        let mut queue = Vec::new();
        let mut touched: Vec<u32> = Vec::new();
        loop {
            // Dijkstra on reduced costs, stopped once the sink is settled.
            for &v in &touched {
                reached[v as usize] = false;
                done[v as usize] = false;
            }
            touched.clear();
            heap.clear();
            dist[source as usize] = ZERO;
            reached[source as usize] = true;
            touched.push(source);
            heap.push(Reverse((ZERO, source)));
            while let Some(Reverse((d, u))) = heap.pop() {
                let ui = u as usize;
                if done[ui] || d > dist[ui] {
                    continue;
                }
                done[ui] = true;
                if u == sink {
                    break;
                }
                for &e in &adj[start[ui] as usize..start[ui + 1] as usize] {
                    let e = e as usize;
                    if self.edges[e].cap <= 0 {
                        continue;
                    }
                    let v = self.edges[e].to as usize;
                    if done[v] {
                        continue;
                    }
                    let nd = add(d, sub(add(self.cost(e), pi[ui]), pi[v]));
                    if !reached[v] || nd < dist[v] {
                        if !reached[v] {
                            reached[v] = true;
                            touched.push(v as u32);
                        }
                        dist[v] = nd;
                        heap.push(Reverse((nd, v as u32)));
                    }
                }
            }
            if !done[sink as usize] {
                break;
            }
            let d_sink = dist[sink as usize];
            // Raise potentials by min(dist, dist(sink)); nodes not settled count as dist(sink).
            for (v, p) in pi.iter_mut().enumerate() {
                let dv = if done[v] { dist[v] } else { d_sink };
                *p = add(*p, dv);
            }

            // Blocking flows on the zero-reduced-cost subgraph.
            loop {
                let admissible = |net: &Network, e: usize, u: usize, pi: &[Cost]| {
                    net.edges[e].cap > 0 && add(net.cost(e), pi[u]) == pi[net.edges[e].to as usize]
                };
                // BFS levels.
                level.fill(u32::MAX);
                level[source as usize] = 0;
                queue.clear();
                queue.push(source);
                let mut head = 0;
                while head < queue.len() {
                    let u = queue[head] as usize;
                    head += 1;
                    for &e in &adj[start[u] as usize..start[u + 1] as usize] {
                        let e = e as usize;
                        let v = self.edges[e].to as usize;
                        if level[v] == u32::MAX && admissible(self, e, u, &pi) {
                            level[v] = level[u] + 1;
                            queue.push(v as u32);
                        }
                    }
                }
                if level[sink as usize] == u32::MAX {
                    break;
                }
                for &v in &queue {
                    it[v as usize] = start[v as usize];
                }
                // Iterative DFS augmentations with current-arc pointers.
                let mut path: Vec<usize> = Vec::new();
                let mut u = source as usize;
                loop {
                    if u == sink as usize {
                        let mut push = i32::MAX;
                        for &e in &path {
                            let lim = if self.edges[e].convex == NONE {
                                self.edges[e].cap
                            } else {
                                1
                            };
                            push = push.min(lim);
                        }
                        for &e in &path {
                            self.edges[e].cap -= push;
                            self.edges[e ^ 1].cap += push;
                        }
                        total += i64::from(push);
                        path.clear();
                        u = source as usize;
                        continue;
                    }
                    let mut advanced = false;
                    while it[u] < start[u + 1] {
                        let e = adj[it[u] as usize] as usize;
                        let v = self.edges[e].to as usize;
                        if level[v] == level[u] + 1 && admissible(self, e, u, &pi) {
                            path.push(e);
                            u = v;
                            advanced = true;
                            break;
                        }
                        it[u] += 1;
                    }
                    if !advanced {
                        level[u] = u32::MAX;
                        match path.pop() {
                            None => break,
                            Some(e) => {
                                u = self.edges[e ^ 1].to as usize;
                                it[u] += 1;
                            }
                        }
                    }
                }
            }
        }
        total
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::flow;
    use super::Network;

    /// A small deterministic generator (xorshift64*).
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n
        }
    }

    /// One edge of a random network: (from, to, cap, cost, convex base).
    pub(crate) type Spec = (u32, u32, i32, [i8; 4], Option<i64>);

    /// A random layered network in the assignor's shape: source → classes → pools → pairs →
    /// members → sink, layers of 1 to `widest` nodes, with lexicographic costs in {−1, 0, 1}⁴
    /// and convex member → sink edges. `below(n)` draws from 0..n (the caller's generator).
    pub(crate) fn random_network(
        below: &mut dyn FnMut(u64) -> u64,
        widest: u64,
    ) -> (usize, Vec<Spec>) {
        let layers: Vec<u32> = (0..4).map(|_| 1 + below(widest) as u32).collect();
        let mut base = vec![1u32];
        for &w in &layers {
            base.push(base[base.len() - 1] + w);
        }
        let sink = base[4];
        let mut edges = Vec::new();
        let cost = |below: &mut dyn FnMut(u64) -> u64| -> [i8; 4] {
            let mut c = [0i8; 4];
            for x in &mut c {
                *x = below(3) as i8 - 1;
            }
            c
        };
        for k in 0..layers[0] {
            edges.push((0, base[0] + k, 1 + below(5) as i32, [0; 4], None));
        }
        for layer in 0..3 {
            for a in 0..layers[layer] {
                for b in 0..layers[layer + 1] {
                    if below(3) != 0 {
                        let c = cost(below);
                        let cap = 1 + below(4) as i32;
                        edges.push((base[layer] + a, base[layer + 1] + b, cap, c, None));
                    }
                }
            }
        }
        for m in 0..layers[3] {
            let u = base[3] + m;
            if below(2) == 0 {
                edges.push((u, sink, 1 + below(3) as i32, [-1, 0, 0, 0], None));
            }
            let b = below(4) as i64;
            edges.push((u, sink, 1 + below(6) as i32, [0; 4], Some(b)));
        }
        (sink as usize + 1, edges)
    }

    #[test]
    fn optimised_solver_finds_the_reference_flow_edge_for_edge() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for case in 0..3000 {
            let (nodes, edges) = random_network(&mut |n| rng.below(n), 6);
            let sink = nodes as u32 - 1;
            let mut old = Network::new(nodes);
            let mut new = flow::Network::new(nodes);
            let mut ids = Vec::new();
            for &(u, v, cap, c, convex) in &edges {
                let (a, b) = match convex {
                    None => (old.edge(u, v, cap, c), new.edge(u, v, cap, c)),
                    Some(base) => (
                        old.convex_edge(u, v, cap, base),
                        new.convex_edge(u, v, cap, base),
                    ),
                };
                ids.push((a, b));
            }
            assert_eq!(old.solve(0, sink), new.solve(0, sink), "case {case}");
            for (k, &(a, b)) in ids.iter().enumerate() {
                assert_eq!(old.flow(a), new.flow(b), "case {case}, edge {k}");
            }
        }
    }

    /// The differential test has teeth: a solver that breaks ties differently (here, the
    /// reference run on the same edges added in another order) is told apart.
    #[test]
    fn the_edge_for_edge_comparison_sees_a_different_tie_break() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        let mut differ = 0;
        for _ in 0..300 {
            let (nodes, edges) = random_network(&mut |n| rng.below(n), 6);
            let sink = nodes as u32 - 1;
            let mut a = Network::new(nodes);
            let mut b = Network::new(nodes);
            let ida: Vec<usize> = edges
                .iter()
                .map(|&(u, v, cap, c, cv)| match cv {
                    None => a.edge(u, v, cap, c),
                    Some(base) => a.convex_edge(u, v, cap, base),
                })
                .collect();
            let mut idb: Vec<usize> = edges
                .iter()
                .rev()
                .map(|&(u, v, cap, c, cv)| match cv {
                    None => b.edge(u, v, cap, c),
                    Some(base) => b.convex_edge(u, v, cap, base),
                })
                .collect();
            idb.reverse();
            assert_eq!(a.solve(0, sink), b.solve(0, sink));
            if ida.iter().zip(&idb).any(|(&x, &y)| a.flow(x) != b.flow(y)) {
                differ += 1;
            }
        }
        assert!(differ > 0, "reordering edges never changed a flow");
    }
}
