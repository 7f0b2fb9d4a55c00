//! The lay-out of a network's edges into residual arcs in adjacency order (CSR), with the
//! proposed warm-start flows applied as the arcs are written.

use super::pool::Buf;
use super::{Added, Arc, NONE, Network, REVERSE, certify};

impl Network {
    /// Lays the arcs out in adjacency order: a node's arcs are those of edge ids 0, 1, 2, …
    /// leaving it, in id order (edge 2k leaves its tail, 2k+1 its head). Returns the start of
    /// every node's arcs and, if flows were proposed, what they came to.
    ///
    /// The proposed flows are applied as the arcs are written (each edge's within its
    /// capacity; one that is not counts as not within and is left at zero), so that the warm
    /// start need not read them again: it undoes them all if they do not form a flow.
    pub(super) fn lay_out(&mut self) -> (Buf<u32>, Option<certify::Proposed>) {
        let n = self.nodes;
        // Counted one place further up than the starts (in `edge`), so that the fill below,
        // which moves `start[v + 1]` from v's start to v's end (= the start of v + 1), leaves
        // the starts in place without a separate copy of them to fill from.
        let mut start = std::mem::take(&mut self.degree);
        for i in 2..n + 2 {
            start[i] += start[i - 1];
        }
        let added = std::mem::take(&mut self.added);
        let proposed = if self.proposed {
            let mut balance = Buf::filled(n, 0i64);
            let (edges, within) = self.fill::<true>(&added, &mut start, &mut balance);
            Some(certify::Proposed {
                edges,
                within,
                balance,
            })
        } else {
            self.fill::<false>(&added, &mut start, &mut []);
            None
        };
        start.pop();
        self.last_only = self.first_three == 0;
        (start, proposed)
    }

    /// The lay-out's fill ([`Network::lay_out`]): writes both arcs of every edge of `added`
    /// into the next free slots of its ends (`start[v + 1]`, moved up as it goes) and records
    /// the edges' backward slots. With `PRESETS`, every edge carries its proposed flow where
    /// that lies within its capacity (and zero where not), the flow applied into each node
    /// less the flow out of it is added up in `balance`, and the result is the number of
    /// edges with a flow proposed other than 0 and whether all of those lay within; without,
    /// every edge is at zero flow and `balance` is not read.
    // The proposal's tallies are locals and every buffer a plain slice, so that the loop
    // keeps them in registers instead of reloading a vector's pointer and length (or a
    // closure's captures) after each store into the arcs.
    fn fill<const PRESETS: bool>(
        &mut self,
        added: &[Added],
        start: &mut [u32],
        balance: &mut [i64],
    ) -> (usize, bool) {
        // Every slot is written below (two per edge, each edge's into free slots of its ends),
        // so the blank only has to be cheap to fill.
        let blank = Arc {
            to: 0,
            rev: 0,
            cap: 0,
            cost: [0; 4],
        };
        let mut arcs_buf = Buf::filled(2 * added.len(), blank);
        let mut convex_buf = if self.convex_base.is_empty() {
            Buf::default()
        } else {
            Buf::filled(2 * added.len(), NONE)
        };
        // Filled ahead and written through a zip, without a bounds check per edge: pushing
        // reloaded the vector's length and capacity after every edge.
        let mut slot = Buf::filled(added.len(), 0u32);
        let (mut edges, mut within) = (0usize, true);
        {
            let arcs: &mut [Arc] = &mut arcs_buf;
            let convex: &mut [u32] = &mut convex_buf;
            // Both arcs of an edge are written as the edge is read, each into the next free
            // slot of its tail: one sequential pass over the edges, without an index of ends
            // by slot. A plain loop rather than `extend` of a map: that closure, out of
            // line, read every capture through a pointer.
            for (a, backward) in added.iter().zip(slot.iter_mut()) {
                let f = start[a.from as usize + 1];
                start[a.from as usize + 1] = f + 1;
                let r = start[a.to as usize + 1];
                start[a.to as usize + 1] = r + 1;
                let mut x = 0;
                if PRESETS && a.preset != 0 {
                    edges += 1;
                    if a.preset < 0 || a.preset > a.cap {
                        within = false;
                    } else {
                        x = a.preset;
                        balance[a.from as usize] -= i64::from(x);
                        balance[a.to as usize] += i64::from(x);
                    }
                }
                arcs[f as usize] = Arc {
                    to: a.to,
                    rev: r,
                    cap: a.cap - x,
                    cost: a.cost,
                };
                arcs[r as usize] = Arc {
                    to: a.from,
                    rev: f,
                    cap: x,
                    cost: a.reverse_cost,
                };
                if a.convex != NONE {
                    // `convex` has a slot per arc wherever an edge is convex.
                    convex[f as usize] = a.convex;
                    convex[r as usize] = a.convex | REVERSE;
                }
                *backward = r;
            }
        }
        self.slot = slot;
        self.arcs = arcs_buf;
        self.convex = convex_buf;
        (edges, within)
    }

    /// Returns the arcs to zero flow: a flow only moves capacity between an arc and its
    /// reverse, so an edge's capacity is the sum of its arcs' residual capacities, and its
    /// backward arc's is 0 at zero flow.
    pub(super) fn undo_flow(&mut self) {
        for &r in &self.slot {
            let f = self.arcs[r as usize].rev as usize;
            self.arcs[f].cap += self.arcs[r as usize].cap;
            self.arcs[r as usize].cap = 0;
        }
    }
}

/// Every component of `c` negated (wrapping), the four at once as the bytes of one word: each
/// edge gets a reverse cost, and lane by lane that took a dozen instructions. (Formed as the
/// edge is added, where the caller's cost is usually a constant and the negation folds away.)
#[inline]
pub(super) fn negated(c: [i8; 4]) -> [i8; 4] {
    // Per byte, −x = !x + 1; the sum is formed in the low seven bits (where + 1 cannot carry
    // into the next byte) and the high bit added back by an exclusive or.
    let not = !u32::from_ne_bytes(c.map(|x| x as u8));
    let sum = ((not & 0x7f7f_7f7f) + 0x0101_0101) ^ (not & 0x8080_8080);
    sum.to_ne_bytes().map(|x| x as i8)
}
