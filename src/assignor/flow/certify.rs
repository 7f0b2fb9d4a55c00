//! The warm start's certification: Bellman–Ford from a virtual root in the residual network
//! of the proposed flow, cancelling the negative cycles it meets (the argument is in the
//! parent module's docs).

use super::pool::Buf;
use super::{Arc, Cost, NONE, Network, ZERO, add, less};
#[cfg(test)]
use super::{CANCELLED, CERTIFIED, Planted};

/// The most Bellman–Ford rounds a warm start may take, after its last cancelled cycle, to
/// certify its flow before the solver gives up on it and starts from zero. A flow close to
/// optimal settles in a few rounds.
pub(super) const CERTIFY_ROUNDS: usize = 32;

/// The warm start looks for a cycle among the last improving arcs every this many rounds.
pub(super) const CYCLE_CHECK_ROUNDS: usize = 4;

/// The most negative cycles the warm start cancels before it gives up on the proposal.
pub(super) const MAX_CANCELS: usize = 1024;

/// The warm start gives up once it has scanned this many times as many arcs as the network
/// has: it then costs about as much as a few phases of a cold start.
pub(super) const WARM_WORK_PASSES: usize = 32;

impl Network {
    /// The warm start: applies the preset flows, cancels the negative cycles it meets, and
    /// returns potentials under which every residual arc has a non-negative reduced cost,
    /// with the flow's value; or `None`, with the arcs left as they were, if the presets are
    /// not a flow or no such potentials were found within the limits of the module docs.
    pub(super) fn warm_start(
        &mut self,
        start: &[u32],
        presets: &[(u32, i32)],
        source: u32,
        sink: u32,
    ) -> Option<(Buf<Cost>, i64)> {
        if presets.is_empty() {
            return None;
        }
        let n = self.nodes;
        // A flow: within capacity, conserved everywhere but at the source and the sink.
        let mut balance = Buf::filled(n, 0i64);
        for &(f, x) in presets {
            let arc = self.arcs[f as usize];
            if x < 0 || x > arc.cap {
                return None;
            }
            let from = self.arcs[arc.rev as usize].to as usize;
            balance[from] -= i64::from(x);
            balance[arc.to as usize] += i64::from(x);
        }
        let value = balance[sink as usize];
        if balance
            .iter()
            .enumerate()
            .any(|(v, &b)| b != 0 && v != source as usize && v != sink as usize)
        {
            return None;
        }
        for &(f, x) in presets {
            let rev = self.arcs[f as usize].rev as usize;
            self.arcs[f as usize].cap -= x;
            self.arcs[rev].cap += x;
        }
        // Shortest distances from a virtual root joined to every node by a zero-cost arc
        // (Bellman–Ford, queue-based, in rounds). They exist, and then are potentials with
        // non-negative reduced costs, exactly when the residual network has no negative
        // cycle: when the flow is of minimum cost for its value. A cycle in the graph of the
        // last improving arcs is a negative residual cycle; it is cancelled (the flow stays a
        // flow of the same value, of a strictly lower cost) and the search goes on.
        let mut labels = Buf::filled(
            n,
            Label {
                dist: ZERO,
                parent: NONE,
                queued: true,
            },
        );
        let mut walk = Walk::new(n);
        // The first round scans the nodes in descending order: the most negative distances
        // start at the sink (the reverses of the loaded convex arcs) and run back through
        // members, (m,t) nodes, pools and classes, against the edges' direction, so this
        // order passes them on within the round. (In ascending order nearly every node was
        // scanned once more: 1.3× the arcs on an overlapping leave, 1.4× on a full
        // assignment.)
        let mut round = Buf::<u32>::with_capacity(n);
        round.extend((0..n as u32).rev());
        let mut next_round = Buf::<u32>::with_capacity(n);
        let mut rounds = 0;
        let mut cancelled = 0;
        let mut work = 0usize;
        let budget = WARM_WORK_PASSES * self.arcs.len().max(n);
        while !round.is_empty() {
            rounds += 1;
            let give_up = rounds > CERTIFY_ROUNDS || work > budget;
            #[cfg(test)]
            let give_up = give_up
                || ((cancelled > 0 || rounds > 2 * CYCLE_CHECK_ROUNDS)
                    && matches!(
                        self.planted,
                        Planted::GiveUp | Planted::GiveUpUndoingNothing
                    ));
            if give_up {
                #[cfg(test)]
                if self.planted == Planted::GiveUpUndoingNothing {
                    return None;
                }
                // Undo the presets and every cancellation: back to zero flow. Both only move
                // capacity between an arc and its reverse, so an edge's capacity is the sum of
                // its arcs' residual capacities, and its backward arc's is 0 at zero flow.
                for &r in &self.slot {
                    let f = self.arcs[r as usize].rev as usize;
                    self.arcs[f].cap += self.arcs[r as usize].cap;
                    self.arcs[r as usize].cap = 0;
                }
                return None;
            }
            work += self.relax_round(start, &round, &mut labels, &mut next_round);
            std::mem::swap(&mut round, &mut next_round);
            next_round.clear();
            #[cfg(test)]
            if self.planted == Planted::TrustPresets {
                return Some((distances(&labels), value));
            }
            if rounds % CYCLE_CHECK_ROUNDS == 0 && cancelled < MAX_CANCELS {
                while let Some(cycle) = walk.find_cycle(&round, &labels, &self.arcs) {
                    work += cycle.len();
                    if !self.cancel(&cycle) {
                        // A stale cycle (an arc of it changed since): forget it.
                        for &s in &cycle {
                            labels[self.arcs[s as usize].to as usize].parent = NONE;
                        }
                        break;
                    }
                    cancelled += 1;
                    rounds = 0;
                    for &s in &cycle {
                        let v = self.arcs[s as usize].to as usize;
                        let label = &mut labels[v];
                        label.parent = NONE;
                        if !label.queued {
                            label.queued = true;
                            round.push(v as u32);
                        }
                    }
                    if cancelled == MAX_CANCELS {
                        break;
                    }
                }
            }
        }
        #[cfg(test)]
        CERTIFIED.with(|c| c.set(c.get() + 1));
        Some((distances(&labels), value))
    }

    /// One Bellman–Ford round: relaxes the residual arcs leaving the nodes of `round`, in
    /// order, lowering a node's distance (and recording the arc as its parent) wherever an
    /// arc improves it, and queues the improved nodes not queued yet into `next`. Returns the
    /// arcs scanned.
    // Never inlined: inside `solve` the loop's state spilled to the stack.
    #[inline(never)]
    fn relax_round(
        &self,
        start: &[u32],
        round: &[u32],
        labels: &mut [Label],
        next: &mut Vec<u32>,
    ) -> usize {
        let mut work = 0;
        // An arc's slot from its address, computed only when the arc improves a distance:
        // cheaper than counting slots along every scan.
        let base = self.arcs.as_ptr() as usize;
        let slot =
            |arc: &Arc| ((std::ptr::from_ref(arc) as usize - base) / size_of::<Arc>()) as u32;
        for &u in round {
            let label = &mut labels[u as usize];
            label.queued = false;
            let du = label.dist;
            let ends = &start[u as usize..u as usize + 2];
            let first = ends[0] as usize;
            let arcs = &self.arcs[first..ends[1] as usize];
            work += arcs.len();
            for arc in arcs {
                if arc.cap <= 0 {
                    continue;
                }
                let v = &mut labels[arc.to as usize];
                if arc.convex != NONE {
                    // Rare: kept apart so that the common case's cost stays in registers.
                    let d = add(du, self.convex_cost(arc));
                    if less(&d, &v.dist) {
                        improve(v, next, arc.to, d, slot(arc));
                    }
                    continue;
                }
                let c = arc.cost;
                let d = [
                    du[0] + i64::from(c[0]),
                    du[1] + i64::from(c[1]),
                    du[2] + i64::from(c[2]),
                    du[3] + i64::from(c[3]),
                ];
                if less(&d, &v.dist) {
                    improve(v, next, arc.to, d, slot(arc));
                }
            }
        }
        work
    }

    /// [`Network::cost`] of a convex arc, kept out of the relaxation loop.
    #[inline(never)]
    #[cold]
    fn convex_cost(&self, arc: &Arc) -> Cost {
        self.cost(arc)
    }

    /// Pushes as much flow as possible around `cycle` (residual arc slots, each arc's head the
    /// next one's tail), one unit where a convex arc is on it, if every arc has room and the
    /// cycle's cost is negative; returns whether it did. The flow stays a flow of the same
    /// value, of a strictly lower cost.
    fn cancel(&mut self, cycle: &[u32]) -> bool {
        let mut cost = ZERO;
        let mut push = i32::MAX;
        for &s in cycle {
            let arc = &self.arcs[s as usize];
            if arc.cap <= 0 {
                return false;
            }
            push = push.min(if arc.convex == NONE { arc.cap } else { 1 });
            cost = add(cost, self.cost(arc));
        }
        if cost >= ZERO {
            return false;
        }
        #[cfg(test)]
        {
            if self.planted == Planted::Overpush {
                push += 1;
            }
            CANCELLED.with(|c| c.set(c.get() + 1));
        }
        for &s in cycle {
            let rev = self.arcs[s as usize].rev as usize;
            self.arcs[s as usize].cap -= push;
            self.arcs[rev].cap += push;
        }
        true
    }
}

/// A node's state in the warm start's Bellman–Ford, kept together so that a relaxation
/// reads and writes one place.
#[derive(Clone, Copy)]
pub(super) struct Label {
    /// The shortest distance found so far.
    dist: Cost,
    /// The slot of the arc that last lowered `dist`, or [`NONE`].
    parent: u32,
    /// Whether the node is in the next round's list.
    queued: bool,
}

/// The distances of `labels`, in node order.
fn distances(labels: &[Label]) -> Buf<Cost> {
    let mut dist = Buf::with_capacity(labels.len());
    dist.extend(labels.iter().map(|l| l.dist));
    dist
}

/// Lowers node `v`'s distance to `d` over the arc `s`, queueing v into `next` unless queued.
#[inline(always)]
fn improve(label: &mut Label, next: &mut Vec<u32>, v: u32, d: Cost, s: u32) {
    label.dist = d;
    label.parent = s;
    if !label.queued {
        label.queued = true;
        next.push(v);
    }
}

/// Cycle detection in the graph of the arcs that last improved each node's distance.
struct Walk {
    /// The walk that last visited each node.
    stamp: Buf<u32>,
    /// The last walk's number.
    last: u32,
}

impl Walk {
    fn new(n: usize) -> Walk {
        Walk {
            stamp: Buf::filled(n, 0),
            last: 0,
        }
    }

    /// A cycle of the parent graph (`labels[v].parent` the slot of the arc that last improved v, or
    /// [`NONE`]) reached from one of `from`, as its arc slots in order; each node is visited
    /// at most once per call.
    fn find_cycle(&mut self, from: &[u32], labels: &[Label], arcs: &[Arc]) -> Option<Vec<u32>> {
        let tail = |s: u32| arcs[arcs[s as usize].rev as usize].to as usize;
        let first = self.last;
        for &v0 in from {
            self.last += 1;
            let id = self.last;
            let mut v = v0 as usize;
            loop {
                if self.stamp[v] == id {
                    let mut cycle = Vec::new();
                    let mut u = v;
                    loop {
                        let s = labels[u].parent;
                        cycle.push(s);
                        u = tail(s);
                        if u == v {
                            break;
                        }
                    }
                    cycle.reverse();
                    return Some(cycle);
                }
                if self.stamp[v] > first {
                    // Met an earlier walk of this call: nothing new beyond.
                    break;
                }
                self.stamp[v] = id;
                match labels[v].parent {
                    NONE => break,
                    s => v = tail(s),
                }
            }
        }
        None
    }
}
