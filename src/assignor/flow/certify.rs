//! The warm start's certification: Bellman–Ford from a virtual root in the residual network
//! of the proposed flow, cancelling the negative cycles it meets (the argument is in the
//! parent module's docs).
//!
//! The distances are kept as their last component alone ([`Last`]) where every arc costs
//! nothing in the first three (the flow with floors: keeps cost `[0, 0, 0, −1]`), one integer
//! added and compared in one instruction; else *packed* ([`Packed`]) wherever [`packable`]
//! shows that no component of any distance the search can form leaves (−2³¹, 2³¹): the four
//! components as one 128-bit integer, added and compared in two instructions each instead of
//! four and up to eight. Elsewhere they are kept as [`Cost`]s. All three forms make the same
//! comparisons come out the same way, so the search relaxes, records and cancels exactly the
//! same, and returns the same distances and flow.

use super::pool::{Buf, Shelved};
use super::{Arc, CONVEX_MARK, Cost, NONE, Network, ZERO, add, less};
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

/// The proposed flows, as the lay-out applied them ([`Network::lay_out`]).
pub(super) struct Proposed {
    /// The edges with a flow proposed other than 0.
    pub(super) edges: usize,
    /// Whether every proposed flow lies within its edge's capacity (and is not negative);
    /// one that does not is left at zero.
    pub(super) within: bool,
    /// By node, the flow applied into it less the flow applied out of it.
    pub(super) balance: Buf<i64>,
}

/// What the warm start leaves the solver.
pub(super) enum Warm {
    /// Certified, and the source already sends all it can (the value): no phase is left.
    Full(i64),
    /// Certified with these potentials (every residual arc's reduced cost non-negative), at
    /// this value, less than the source can send.
    Partial(Buf<Cost>, i64),
    /// No warm start (none proposed, not a flow, or given up): the arcs are at zero flow.
    Cold,
}

impl Network {
    /// The warm start: from the preset flows, as the lay-out applied them (`proposed`),
    /// cancels the negative cycles it meets, and returns the flow's value with, unless it is
    /// `supply` (what the source can send at most), potentials under which every residual
    /// arc has a non-negative reduced cost; or [`Warm::Cold`], with the arcs back at zero
    /// flow, if none was proposed, the presets are not a flow or no such potentials were
    /// found within the limits of the module docs.
    pub(super) fn warm_start(
        &mut self,
        start: &[u32],
        proposed: Option<Proposed>,
        source: u32,
        sink: u32,
        supply: i64,
    ) -> Warm {
        let Some(proposed) = proposed else {
            return Warm::Cold;
        };
        if proposed.edges == 0 {
            return Warm::Cold;
        }
        // A flow: within capacity, conserved everywhere but at the source and the sink. The
        // lay-out applied the flows within capacity; any other proposal is undone.
        let balance = &proposed.balance;
        let value = balance[sink as usize];
        if !proposed.within
            || balance
                .iter()
                .enumerate()
                .any(|(v, &b)| b != 0 && v != source as usize && v != sink as usize)
        {
            self.undo_flow();
            return Warm::Cold;
        }
        #[cfg(test)]
        let unpacked = self.planted == Planted::Unpacked;
        #[cfg(not(test))]
        let unpacked = false;
        let settled = if self.last_only && !unpacked {
            self.certify::<Last>(start, value < supply)
        } else if packable(self) && !unpacked {
            self.certify::<Packed>(start, value < supply)
        } else {
            self.certify::<Cost>(start, value < supply)
        };
        match settled {
            None => Warm::Cold,
            Some(None) => Warm::Full(value),
            Some(Some(pi)) => Warm::Partial(pi, value),
        }
    }

    /// Certifies the flow the arcs hold, cancelling the negative cycles met, with distances
    /// kept as `D`: `Some` once the distances settle, with them (as [`Cost`]s) if
    /// `potentials`; `None` once given up, the arcs back at zero flow.
    fn certify<D: Dist>(&mut self, start: &[u32], potentials: bool) -> Option<Option<Buf<Cost>>>
    where
        Label<D>: Shelved,
    {
        let n = self.nodes;
        // Shortest distances from a virtual root joined to every node by a zero-cost arc
        // (Bellman–Ford, queue-based, in rounds). They exist, and then are potentials with
        // non-negative reduced costs, exactly when the residual network has no negative
        // cycle: when the flow is of minimum cost for its value. A cycle in the graph of the
        // last improving arcs is a negative residual cycle; it is cancelled (the flow stays a
        // flow of the same value, of a strictly lower cost) and the search goes on.
        let mut labels = Buf::filled(
            n,
            Label {
                dist: D::ZERO,
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
                // Undo the presets and every cancellation: back to zero flow.
                self.undo_flow();
                return None;
            }
            work += self.relax_round(start, &round, &mut labels, &mut next_round);
            std::mem::swap(&mut round, &mut next_round);
            next_round.clear();
            #[cfg(test)]
            if self.planted == Planted::TrustPresets {
                return Some(potentials.then(|| distances(&labels)));
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
        Some(potentials.then(|| distances(&labels)))
    }

    /// One Bellman–Ford round: relaxes the residual arcs leaving the nodes of `round`, in
    /// order, lowering a node's distance (and recording the arc as its parent) wherever an
    /// arc improves it, and queues the improved nodes not queued yet into `next`. Returns the
    /// arcs scanned.
    // Never inlined: inside `solve` the loop's state spilled to the stack.
    #[inline(never)]
    fn relax_round<D: Dist>(
        &self,
        start: &[u32],
        round: &[u32],
        labels: &mut [Label<D>],
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
                // A convex arc's `cost` holds a non-zero mark (see `CONVEX_MARK`), so one test
                // finds the arcs that cost nothing, most of them: compared on their own path,
                // with `du` as it is (no distance to form, nor to move into place).
                if arc.cost == [0; 4] {
                    if du.below(&v.dist) {
                        improve(v, next, arc.to, du, slot(arc));
                    }
                    continue;
                }
                let d = if arc.cost == CONVEX_MARK {
                    // Rare: kept apart so that the common case's cost stays in registers.
                    du.plus(self.convex_cost(arc, slot(arc)))
                } else {
                    du.plus_fixed(arc.cost)
                };
                if d.below(&v.dist) {
                    improve(v, next, arc.to, d, slot(arc));
                }
            }
        }
        work
    }

    /// [`Network::cost`] of a convex arc, kept out of the relaxation loop.
    #[inline(never)]
    #[cold]
    fn convex_cost(&self, arc: &Arc, s: u32) -> Cost {
        self.cost(arc, s as usize)
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
            push = push.min(self.room(arc, s as usize));
            cost = add(cost, self.cost(arc, s as usize));
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
pub(super) struct Label<D> {
    /// The shortest distance found so far.
    dist: D,
    /// The slot of the arc that last lowered `dist`, or [`NONE`].
    parent: u32,
    /// Whether the node is in the next round's list.
    queued: bool,
}

/// A distance of the certification: a [`Cost`], or the same packed ([`Packed`]). Every
/// operation is that of [`Cost`] on the distances it stands for.
pub(super) trait Dist: Copy {
    const ZERO: Self;
    /// This distance plus the fixed cost `c` of an arc.
    fn plus_fixed(self, c: [i8; 4]) -> Self;
    /// This distance plus the cost `c`.
    fn plus(self, c: Cost) -> Self;
    /// Whether this distance is lexicographically below `other`.
    fn below(&self, other: &Self) -> bool;
    /// The distance as a [`Cost`].
    fn cost(self) -> Cost;
}

impl Dist for Cost {
    const ZERO: Cost = ZERO;

    #[inline(always)]
    fn plus_fixed(self, c: [i8; 4]) -> Cost {
        [
            self[0] + i64::from(c[0]),
            self[1] + i64::from(c[1]),
            self[2] + i64::from(c[2]),
            self[3] + i64::from(c[3]),
        ]
    }

    #[inline(always)]
    fn plus(self, c: Cost) -> Cost {
        add(self, c)
    }

    #[inline(always)]
    fn below(&self, other: &Cost) -> bool {
        less(self, other)
    }

    #[inline(always)]
    fn cost(self) -> Cost {
        self
    }
}

/// A [`Cost`] whose first three components are 0, kept as its last. The certification uses
/// it only where every arc's cost is of that form (no convex arc among them): every distance
/// it forms, a sum of arc costs from 0, then is too, and the lexicographic order of such costs
/// is the order of their last components. The sums stay far inside `i64`: at most 128 per
/// improvement, and far fewer than 2⁵⁶ improvements within the work budget (see [`packable`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Last(i64);

impl Dist for Last {
    const ZERO: Last = Last(0);

    #[inline(always)]
    fn plus_fixed(self, c: [i8; 4]) -> Last {
        Last(self.0 + i64::from(c[3]))
    }

    /// Only for costs of the form above, as every one where `Last` is used.
    #[inline(always)]
    fn plus(self, c: Cost) -> Last {
        Last(self.0 + c[3])
    }

    #[inline(always)]
    fn below(&self, other: &Last) -> bool {
        self.0 < other.0
    }

    fn cost(self) -> Cost {
        [0, 0, 0, self.0]
    }
}

/// A [`Cost`] c packed into one integer, c₀·2⁹⁶ + c₁·2⁶⁴ + c₂·2³² + c₃, for costs whose
/// components all lie in (−2³¹, 2³¹). On those, packing is one to one, turns the sum of two
/// costs into the sum of their packings (it is linear), and the lexicographic order into
/// that of the integers: where a and b first differ, at component k, the later components
/// add up to less than 2^(32·(3−k)) in absolute value (each difference is below 2³²), so
/// the sign of the difference of the packings is that of b_k − a_k.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) struct Packed(i128);

impl Packed {
    /// The packing of `c` (whose components must lie in (−2³¹, 2³¹)).
    #[inline(always)]
    pub(super) fn of(c: Cost) -> Packed {
        Packed(
            (i128::from(c[0]) << 96)
                + (i128::from(c[1]) << 64)
                + (i128::from(c[2]) << 32)
                + i128::from(c[3]),
        )
    }
}

impl Dist for Packed {
    const ZERO: Packed = Packed(0);

    #[inline(always)]
    fn plus_fixed(self, c: [i8; 4]) -> Packed {
        // Most arcs cost nothing, and most others only in the last component (keeps).
        let word = u32::from_le_bytes(c.map(|x| x as u8));
        if word == 0 {
            self
        } else if word & 0x00ff_ffff == 0 {
            Packed(self.0 + i128::from(c[3]))
        } else {
            Packed(self.0 + Packed::of(c.map(i64::from)).0)
        }
    }

    #[inline(always)]
    fn plus(self, c: Cost) -> Packed {
        Packed(self.0 + Packed::of(c).0)
    }

    #[inline(always)]
    fn below(&self, other: &Packed) -> bool {
        self.0 < other.0
    }

    /// Unpacks: the last component is the packing's residue in (−2³¹, 2³¹) modulo 2³², the
    /// others those of what is left, divided by 2³².
    fn cost(self) -> Cost {
        let mut rest = self.0;
        let mut c = ZERO;
        for k in (0..4).rev() {
            let low = i128::from(rest as i32);
            c[k] = low as i64;
            rest = (rest - low) >> 32;
        }
        c
    }
}

/// Whether the certification of `net` may keep its distances packed ([`Packed`]): no
/// component of a distance it forms can leave (−2³¹, 2³¹). A distance it forms is a
/// node's distance plus an arc's cost, and every node's starts at 0 and is only ever
/// replaced by such a sum, so after N improvements every component is at most N·C in
/// absolute value, C the largest component of any arc's cost while it is relaxed: 128 for
/// a fixed cost; for a convex arc of base b and capacity u, with flow f, 2(b + f) + 1 with
/// f < u forward and 2(b + f) − 1 with 0 < f ≤ u backward, so at most 2(|b| + u) + 1 (the
/// slack of 2 covers a test's planted overpush). Each improvement comes from an arc
/// scanned; a round starts only while the work so far is within the budget and scans
/// every arc at most once, so N ≤ budget + arcs.
pub(super) fn packable(net: &Network) -> bool {
    let arcs = net.arcs.len();
    let budget = WARM_WORK_PASSES * arcs.max(net.nodes);
    let improvements = (budget + arcs + 1) as u128;
    let largest = (2 * net.convex_reach.max(0) as u128 + 3).max(128);
    improvements.saturating_mul(largest) < 1 << 31
}

/// The distances of `labels`, in node order.
fn distances<D: Dist>(labels: &[Label<D>]) -> Buf<Cost> {
    let mut dist = Buf::with_capacity(labels.len());
    dist.extend(labels.iter().map(|l| l.dist.cost()));
    dist
}

/// Lowers node `v`'s distance to `d` over the arc `s`, queueing v into `next` unless queued.
#[inline(always)]
fn improve<D: Dist>(label: &mut Label<D>, next: &mut Vec<u32>, v: u32, d: D, s: u32) {
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
    fn find_cycle<D>(
        &mut self,
        from: &[u32],
        labels: &[Label<D>],
        arcs: &[Arc],
    ) -> Option<Vec<u32>> {
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
