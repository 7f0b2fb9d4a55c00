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
//! *Warm start* ([`Network::preset`]). The caller may propose an initial flow x₀. The solver
//! uses it only if it respects capacities and conservation (everywhere but the source and
//! the sink) and is certified: shortest distances d from a virtual root joined to every node
//! by a zero-cost arc, in the residual network of x₀, computed by a queue-based
//! Bellman–Ford in rounds, settle. Settled distances satisfy d(v) ≤ d(u) + c(u,v) on every
//! residual arc, so every reduced cost c(u,v) + d(u) − d(v) is non-negative and every
//! residual cycle (whose cost is the sum of its reduced costs) has a non-negative cost: x₀
//! is of minimum cost among the flows of its value. That is exactly the invariant the phases
//! above maintain, so they continue from (x₀, d) as from (0, the DAG distances) and end with
//! a minimum-cost maximum flow. (A convex edge's residual arcs cost its next and its last
//! unit, as in every phase, so they are the arcs of its unit decomposition that matter: by
//! convexity the units are filled in order.)
//!
//! While the distances have not settled, every [`CYCLE_CHECK_ROUNDS`](certify::CYCLE_CHECK_ROUNDS) rounds the solver looks
//! for a cycle among the arcs that last lowered each node's distance. Such a cycle has a
//! negative cost (its cost is checked again before use); pushing flow around it (one unit if
//! a convex arc is on it, so that its cost stays what was checked) keeps x₀ a flow of the
//! same value and lowers its cost, and the search goes on from the distances reached (from
//! any starting labels, Bellman–Ford settles exactly when no negative cycle is left). This
//! repairs a proposal that is a few moves from optimal, such as "every claim kept" after a
//! member joins. Only settling certifies: the cancellations decide the speed, never the
//! result. If the distances have not settled within [`CERTIFY_ROUNDS`](certify::CERTIFY_ROUNDS) rounds of the last
//! cancellation, or after [`MAX_CANCELS`](certify::MAX_CANCELS) cancellations and [`WARM_WORK_PASSES`](certify::WARM_WORK_PASSES) passes'
//! worth of arcs scanned, the flow is undone and the solver starts from zero flow. Either way
//! the result is a minimum-cost maximum flow; only the time differs.
//!
//! Complexity: O(phases × E log B + augmentations × path length), B the number of distinct
//! tentative distances in a phase; the number of phases is the number of distinct
//! shortest-path lengths met, small here (about the number of distinct loads times four). A
//! certified warm start of value v₀ skips the phases that would have carried its v₀ units
//! at the price of at most [`WARM_WORK_PASSES`](certify::WARM_WORK_PASSES) passes over the arcs.
//!
//! Layout: the solver copies the edges into adjacency order (CSR), so that scanning a node's
//! edges reads memory sequentially. Dijkstra keeps one bucket of nodes per distinct tentative
//! distance (costs are small, so a phase meets few of them) in an ordered map, and settles
//! nodes reached over a zero reduced cost from a stack (they lie at the distance being
//! settled, the smallest left). Its arrays (arcs, starts, potentials, distances, queues, the
//! warm start's) come from a per-thread pool (module `pool`) and go back to it, emptied, when the
//! solve or the network is done: a solve reuses memory already faulted in rather than fresh
//! pages, and reads only what it has written itself, so results never depend on earlier solves.
//! From a cold start (no presets) the flow it finds is the one of the straightforward
//! formulation kept in `flow_reference.rs` (tests only), edge for edge: potentials after a
//! phase are pi + min(dist, dist(sink)), which does not depend on how Dijkstra breaks ties,
//! and the blocking-flow search visits edges in the same order. From a certified warm start
//! it may find another minimum-cost maximum flow (tests compare costs and validity).

use std::collections::BTreeMap;

use pool::Buf;
pub(crate) use pool::release as release_buffers;

mod certify;
mod layout;
mod pool;
#[cfg(test)]
mod tests;

/// An edge capacity for `units`, or `None` beyond `i32` (the callers' networks then decline).
pub(crate) fn capacity(units: u64) -> Option<i32> {
    i32::try_from(units).ok()
}

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

/// `a < b` lexicographically: the order of [`Cost`], written out so that the hot loops
/// compare in registers instead of calling the slice comparison.
#[inline]
fn less(a: &Cost, b: &Cost) -> bool {
    if a[0] != b[0] {
        return a[0] < b[0];
    }
    if a[1] != b[1] {
        return a[1] < b[1];
    }
    if a[2] != b[2] {
        return a[2] < b[2];
    }
    a[3] < b[3]
}

/// One edge as added, before solving: the forward direction only.
#[derive(Clone, Copy)]
struct Added {
    from: u32,
    to: u32,
    cap: i32,
    cost: [i8; 4],
    /// `cost` negated (see `layout::negated`): the backward arc's.
    reverse_cost: [i8; 4],
    convex: u32,
    /// The warm-start flow set by [`Network::preset`].
    preset: i32,
}

/// One residual arc in adjacency order: 16 bytes, so that a slot is an address shifted (the
/// convex arcs, rare, are told apart by their mark and looked up in `Network::convex`).
#[derive(Clone, Copy)]
struct Arc {
    to: u32,
    /// Slot of the opposite arc.
    rev: u32,
    /// Residual capacity.
    cap: i32,
    /// Fixed cost (the negation on a backward arc); for a convex arc, [`CONVEX_MARK`], never
    /// read as a cost.
    cost: [i8; 4],
}

/// What a convex edge's arcs hold as `cost`: not zero, so that the certification's scan
/// tells the arcs that cost nothing by their `cost` alone; its own negation (−(−128) wraps
/// to −128), so that both arcs of the edge hold it; and with a byte in the first three
/// components, so that a network with a convex edge is never `last_only`. A fixed cost
/// equal to it is looked up in `Network::convex`, found not convex, and read as itself.
const CONVEX_MARK: [i8; 4] = [0, i8::MIN, 0, 0];

/// Marks the backward arc of a convex edge.
const REVERSE: u32 = 1 << 31;

/// A flow network under construction, then solved in place.
pub(crate) struct Network {
    nodes: usize,
    added: Buf<Added>,
    convex_base: Buf<i64>,
    /// The largest |base| + capacity of a convex edge (0 without one): with it, the
    /// certification bounds the cost of any convex arc (see `certify::packable`).
    convex_reach: i64,
    /// Once laid out: whether every edge's cost is 0 in its first three components (and no
    /// edge is convex), so that the certification may keep its distances as the last
    /// component alone (see `certify::Last`).
    last_only: bool,
    /// The bytes of the first three components of every edge's cost, or-ed together as
    /// the edges are added (a convex edge's mark has one in the second): 0 makes
    /// `last_only`. Where a caller's cost is a constant, the or folds away.
    first_three: u32,
    /// Node v's arcs counted at v + 2 as the edges are added (the lay-out turns the counts
    /// into the starts of every node's arcs): one increment per end where the caller already
    /// holds the edge, instead of a second pass over the edges.
    degree: Buf<u32>,
    /// Whether a warm-start flow was ever proposed ([`Network::preset`]): without one, the
    /// lay-out has no flows to apply nor to check.
    proposed: bool,
    /// After [`Network::solve`]: edge id / 2 → the slot of the edge's backward arc, whose
    /// residual capacity is the edge's flow.
    slot: Buf<u32>,
    /// After [`Network::solve`]: the residual arcs.
    arcs: Buf<Arc>,
    /// After [`Network::solve`], if some edge is convex: by slot, for a convex arc, its
    /// index into `convex_base`, with [`REVERSE`] set on the backward arc; [`NONE`] for the
    /// others. Empty without a convex edge.
    convex: Buf<u32>,
    /// Tests only: a deliberately broken solver, to show that the tests catch one.
    #[cfg(test)]
    pub planted: Planted,
}

/// Tests only: the faults a test may plant in the solver.
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Planted {
    /// The solver as it is.
    None,
    /// Accept a warm start after one round of its certification, settled or not.
    TrustPresets,
    /// Push one unit more than the room left around a cancelled cycle.
    Overpush,
    /// Not a fault: give up on every warm start once it has cancelled a cycle or run twice
    /// [`CYCLE_CHECK_ROUNDS`](certify::CYCLE_CHECK_ROUNDS) rounds, as past the limits, so that
    /// tests reach the undoing of its presets and cancellations.
    GiveUp,
    /// Give up as [`Planted::GiveUp`] but leave the presets and cancellations in place.
    GiveUpUndoingNothing,
    /// Not a fault: certify with distances kept as [`Cost`]s even where they could be
    /// packed or kept as their last component, so that tests compare the forms.
    Unpacked,
}

#[cfg(test)]
thread_local! {
    /// Tests only: the warm starts certified on this thread.
    pub(crate) static CERTIFIED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Tests only: the negative cycles cancelled by warm starts on this thread.
    pub(crate) static CANCELLED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Network {
    /// A network with `nodes` nodes and no edges.
    pub fn new(nodes: usize) -> Network {
        Network {
            nodes,
            added: Buf::largest(),
            convex_base: Buf::default(),
            convex_reach: 0,
            last_only: false,
            first_three: 0,
            degree: Buf::filled(nodes + 2, 0),
            proposed: false,
            slot: Buf::default(),
            arcs: Buf::default(),
            convex: Buf::default(),
            #[cfg(test)]
            planted: Planted::None,
        }
    }

    /// Reserves room for `edges` more edges (an estimate: a speed hint only).
    pub fn reserve(&mut self, edges: usize) {
        self.added.reserve(edges);
    }

    /// Adds an edge `u → v` (requires `u < v`) and returns its id.
    // Always: the callers add edges in their hottest loops, and LLVM stopped inlining it into
    // some of them once they grew.
    #[inline(always)]
    pub fn edge(&mut self, u: u32, v: u32, cap: i32, cost: [i8; 4]) -> usize {
        debug_assert!(u < v);
        self.first_three |= u32::from_le_bytes(cost.map(|x| x as u8)) & 0x00ff_ffff;
        self.degree[u as usize + 2] += 1;
        self.degree[v as usize + 2] += 1;
        let id = 2 * self.added.len();
        self.added.push(Added {
            from: u,
            to: v,
            cap,
            cost,
            reverse_cost: layout::negated(cost),
            convex: NONE,
            preset: 0,
        });
        id
    }

    /// Proposes `flow` units on the edge `id` as part of a warm start for [`Network::solve`].
    ///
    /// The proposed flows need not be anything in particular: `solve` uses them only if they
    /// form a flow (capacities, conservation) that it can certify as minimum-cost for its
    /// value, and starts from zero otherwise. Either way it returns a minimum-cost maximum
    /// flow.
    #[inline]
    pub fn preset(&mut self, id: usize, flow: i32) {
        self.proposed = true;
        self.added[id / 2].preset = flow;
    }

    /// Adds `delta` units to the flow proposed on the edge `id` (see [`Network::preset`]).
    #[inline]
    pub fn add_preset(&mut self, id: usize, delta: i32) {
        self.proposed = true;
        self.added[id / 2].preset += delta;
    }

    /// The flow proposed so far on the edge `id`.
    #[inline]
    pub fn preset_on(&self, id: usize) -> i32 {
        self.added[id / 2].preset
    }

    /// Adds a convex edge `u → v` of capacity `cap` whose k-th unit costs
    /// `[0, 2(base+k)−1, 0, 0]`.
    pub fn convex_edge(&mut self, u: u32, v: u32, cap: i32, base: i64) -> usize {
        let id = self.edge(u, v, cap, CONVEX_MARK);
        let c = self.convex_base.len() as u32;
        self.convex_base.push(base);
        self.convex_reach = self
            .convex_reach
            .max(base.saturating_abs().saturating_add(i64::from(cap.max(0))));
        self.added[id / 2].convex = c;
        id
    }

    /// The flow on the edge `id` returned by [`Network::edge`], once solved.
    #[inline]
    pub fn flow(&self, id: usize) -> i32 {
        self.arcs[self.slot[id / 2] as usize].cap
    }

    /// For the arc in slot `s` holding `arc`: its index into `convex_base` (with [`REVERSE`]
    /// on a backward arc) if it is convex, else [`NONE`].
    #[inline]
    fn convex_at(&self, arc: &Arc, s: usize) -> u32 {
        if arc.cost != CONVEX_MARK {
            return NONE;
        }
        self.convex.get(s).copied().unwrap_or(NONE)
    }

    /// The most a path or cycle through `arc`, in slot `s`, may carry: its residual
    /// capacity, or one unit on a convex arc (whose next unit costs more).
    #[inline]
    fn room(&self, arc: &Arc, s: usize) -> i32 {
        if self.convex_at(arc, s) == NONE {
            arc.cap
        } else {
            1
        }
    }

    /// The current cost of `arc`, one of this network's arcs, in slot `s`.
    #[inline]
    fn cost(&self, arc: &Arc, s: usize) -> Cost {
        let convex = self.convex_at(arc, s);
        if convex == NONE {
            let c = arc.cost;
            return [c[0].into(), c[1].into(), c[2].into(), c[3].into()];
        }
        let base = self.convex_base[(convex & !REVERSE) as usize];
        if convex & REVERSE == 0 {
            // Forward: the next unit, number flow+1.
            let f = i64::from(self.arcs[arc.rev as usize].cap);
            [0, 2 * (base + f) + 1, 0, 0]
        } else {
            // Reverse: undoing the last unit, number flow.
            let f = i64::from(arc.cap);
            [0, -(2 * (base + f) - 1), 0, 0]
        }
    }

    /// Sends a minimum-cost maximum flow from `source` to `sink`; returns its value.
    pub fn solve(&mut self, source: u32, sink: u32) -> i64 {
        let n = self.nodes;
        let (start, proposed) = self.lay_out();
        let arcs_of = |u: usize| start[u] as usize..start[u + 1] as usize;

        // What the source can send at most: once that much flows, no augmenting path is
        // left, and the Dijkstra that would prove it (over every node reachable from the
        // source) is skipped. It is the capacity of the edges leaving the source, read off
        // their arcs whatever flow they hold (the sum of an edge's two residual capacities):
        // the source's arcs to higher nodes are those edges' forward arcs, edges going up.
        let supply: i64 = arcs_of(source as usize)
            .map(|s| {
                let arc = &self.arcs[s];
                if arc.to > source {
                    i64::from((arc.cap + self.arcs[arc.rev as usize].cap).max(0))
                } else {
                    0
                }
            })
            .sum();
        let (mut pi, mut total, cold) =
            match self.warm_start(&start, proposed, source, sink, supply) {
                // The source sends all it can: no augmenting path is left, nor any phase to run.
                certify::Warm::Full(value) => return value,
                certify::Warm::Partial(pi, value) => (pi, value, false),
                certify::Warm::Cold => (Buf::filled(n, ZERO), 0, true),
            };
        let mut reached = Buf::filled(n, false);
        // Cold start: potentials are the shortest distances in the initial DAG (edges go up
        // in number).
        reached[source as usize] = true;
        for u in 0..n {
            if !cold {
                break;
            }
            if !reached[u] {
                continue;
            }
            for s in arcs_of(u) {
                let arc = self.arcs[s];
                if arc.cap <= 0 {
                    continue;
                }
                let v = arc.to as usize;
                let d = add(pi[u], self.cost(&arc, s));
                if !reached[v] || less(&d, &pi[v]) {
                    pi[v] = d;
                    reached[v] = true;
                }
            }
        }

        reached.fill(false);
        let mut dist = Buf::filled(n, ZERO);
        let mut done = Buf::filled(n, false);
        let mut level = Buf::filled(n, 0u32);
        let mut it = Buf::filled(n, 0u32);
        // The Dijkstra queue: one bucket of nodes per distinct tentative distance. Distances
        // take few distinct values in a phase (costs are small), so a bucket map is much
        // cheaper than a heap of (distance, node) entries.
        let mut heap: BTreeMap<Cost, Vec<u32>> = BTreeMap::new();
        let mut spare: Vec<Vec<u32>> = Vec::new();
        let mut queue = Buf::<u32>::with_capacity(n);
        let mut touched = Buf::<u32>::with_capacity(n);
        let mut stack = Buf::<u32>::with_capacity(0);
        let mut path: Vec<usize> = Vec::new();
        while total < supply {
            // Dijkstra on reduced costs, stopped once the sink is settled.
            for &v in &touched {
                reached[v as usize] = false;
                done[v as usize] = false;
            }
            touched.clear();
            while let Some((_, mut bucket)) = heap.pop_first() {
                bucket.clear();
                spare.push(bucket);
            }
            dist[source as usize] = ZERO;
            reached[source as usize] = true;
            touched.push(source);
            let mut current = spare.pop().unwrap_or_default();
            current.push(source);
            heap.insert(ZERO, current);
            // Nodes reached over a zero reduced cost sit at the distance being settled, the
            // smallest left: they are settled straight from a stack, without the heap.
            'settle: while let Some((d, mut bucket)) = heap.pop_first() {
                // Every node of the bucket whose distance is still d is settled at d; the
                // others were settled earlier or improved into an earlier bucket.
                stack.extend(
                    bucket
                        .drain(..)
                        .rev()
                        .filter(|&u| !done[u as usize] && dist[u as usize] == d),
                );
                spare.push(bucket);
                while let Some(x) = stack.pop() {
                    let xi = x as usize;
                    if done[xi] {
                        continue;
                    }
                    done[xi] = true;
                    if x == sink {
                        break 'settle;
                    }
                    let base = add(d, pi[xi]);
                    for s in arcs_of(xi) {
                        let arc = &self.arcs[s];
                        if arc.cap <= 0 {
                            continue;
                        }
                        let v = arc.to as usize;
                        if done[v] {
                            continue;
                        }
                        let nd = sub(add(base, self.cost(arc, s)), pi[v]);
                        if !reached[v] || less(&nd, &dist[v]) {
                            if !reached[v] {
                                reached[v] = true;
                                touched.push(v as u32);
                            }
                            dist[v] = nd;
                            if nd == d {
                                stack.push(v as u32);
                            } else {
                                heap.entry(nd)
                                    .or_insert_with(|| spare.pop().unwrap_or_default())
                                    .push(v as u32);
                            }
                        }
                    }
                }
            }
            stack.clear();
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
                // BFS levels, up to the sink's: the search stops when the sink is labelled.
                // Every node below the sink's level is labelled by then, and a node at or
                // beyond it lies on no shortest admissible path to the sink, so leaving it
                // unlabelled only spares the augmenting search a dead end; the paths found,
                // and so the flow, are the same.
                level.fill(u32::MAX);
                level[source as usize] = 0;
                queue.clear();
                queue.push(source);
                let mut head = 0;
                'bfs: while head < queue.len() {
                    let u = queue[head] as usize;
                    head += 1;
                    let pu = pi[u];
                    for s in arcs_of(u) {
                        let arc = &self.arcs[s];
                        let v = arc.to as usize;
                        if arc.cap > 0
                            && level[v] == u32::MAX
                            && add(self.cost(arc, s), pu) == pi[v]
                        {
                            level[v] = level[u] + 1;
                            queue.push(v as u32);
                            if v == sink as usize {
                                break 'bfs;
                            }
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
                let mut u = source as usize;
                loop {
                    if u == sink as usize {
                        let mut push = i32::MAX;
                        for &s in &path {
                            let arc = &self.arcs[s];
                            push = push.min(self.room(arc, s));
                        }
                        for &s in &path {
                            let rev = self.arcs[s].rev as usize;
                            self.arcs[s].cap -= push;
                            self.arcs[rev].cap += push;
                        }
                        total += i64::from(push);
                        path.clear();
                        u = source as usize;
                        continue;
                    }
                    let mut advanced = false;
                    while it[u] < start[u + 1] {
                        let s = it[u] as usize;
                        let arc = &self.arcs[s];
                        let v = arc.to as usize;
                        if arc.cap > 0
                            && level[v] == level[u] + 1
                            && add(self.cost(arc, s), pi[u]) == pi[v]
                        {
                            path.push(s);
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
                            Some(s) => {
                                u = self.arcs[self.arcs[s].rev as usize].to as usize;
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
