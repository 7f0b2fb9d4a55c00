//! The level graph of the re-choice's phases of shortest augmenting paths (Dinic), over the
//! residual [`Network`] of the [parent module](super): a breadth-first levelling from the
//! members short of extras, then a blocking flow along current arcs, as the parent's docs
//! describe (its order of arcs, its work bound).

use super::super::super::Counts;
use super::{Network, fits};

/// The work a component's phases may spend, per arc of its network, before the step declines
/// (each phase is one breadth-first pass and one blocking pass, a few steps per arc).
pub(super) const WORK_PER_ARC: usize = 16;

/// The level graph of one phase of [`Network::saturate`]: node numbers are local members,
/// then the (topic, rack) nodes (`members + lt · width + r`), then the mask nodes.
pub(super) struct Levels {
    racks_at: usize,
    masks_at: usize,
    width: usize,
    /// Per node: its distance from the members short of extras (`u32::MAX`: not reached,
    /// or a dead end of the current phase).
    level: Vec<u32>,
    /// Per node: its current arc (arcs in canonical order, as [`Levels::advance`] reads them;
    /// set to the first when the node is levelled, the only nodes the phase advances).
    next: Vec<usize>,
    /// The breadth-first queue of [`Levels::build`], nodes in the order they are levelled
    /// (a node is queued once per phase, so a list read from the front is enough).
    queue: Vec<usize>,
    /// Per rack index, during [`Levels::build`]: its (topic, rack) nodes with an arc in from
    /// a member not levelled yet.
    unlevelled: Vec<u32>,
    /// Per rack index: how many local members run in it.
    members: Vec<u32>,
    /// Per rack index, during [`Levels::build`]: its members not levelled yet.
    members_left: Vec<u32>,
    path: Vec<usize>,
    /// Arcs examined so far, and how many the step may examine.
    work: usize,
    budget: usize,
}

impl Levels {
    /// The level graph's nodes for `net`, none levelled yet, with the work bound of
    /// [`WORK_PER_ARC`] steps per arc and node.
    pub(super) fn new(net: &Network<'_>) -> Self {
        let width = net.racks + 1;
        let members = net.short.len();
        let racks_at = members;
        let masks_at = racks_at + net.topics * width;
        let nodes = masks_at + net.mask_of.len();
        let arcs = 2 * net.cells.len() + net.mask_of.len() * width * 2;
        let mut members_per_rack = vec![0; width];
        for &r in &net.rack {
            members_per_rack[r] += 1;
        }
        Levels {
            racks_at,
            masks_at,
            width,
            level: vec![u32::MAX; nodes],
            next: vec![0; nodes],
            queue: Vec::with_capacity(nodes),
            unlevelled: Vec::new(),
            members: members_per_rack,
            members_left: Vec::new(),
            path: Vec::new(),
            work: 0,
            budget: WORK_PER_ARC * (arcs + nodes),
        }
    }

    /// Whether `node` is a mask node with a partition not placed (an arc to the sink).
    fn open(&self, net: &Network<'_>, node: usize) -> bool {
        node >= self.masks_at && net.left[node - self.masks_at] > 0
    }

    /// Levels every node reachable from the members short of extras, breadth first, up to
    /// the first level holding an open mask node, and returns that level; `None` when none
    /// is reachable or the work bound is spent.
    pub(super) fn build(&mut self, net: &Network<'_>, counts: &Counts) -> Option<u32> {
        self.level.fill(u32::MAX);
        self.queue.clear();
        self.members_left.clear();
        self.members_left.extend_from_slice(&self.members);
        for (lm, &s) in net.short.iter().enumerate() {
            if s > 0 {
                self.level[lm] = 0;
                self.next[lm] = 0;
                self.queue.push(lm);
                self.members_left[net.rack[lm]] -= 1;
            }
        }
        let mut sink = None;
        let width = self.width;
        let (racks_at, masks_at) = (self.racks_at, self.masks_at);
        // Per rack index: its (topic, rack) nodes with an arc in from a member (`fed`) not
        // levelled yet. At 0, a member of the rack reaches nothing new, and its cells are not
        // read (their steps still count, so the work bound binds where it did).
        #[cfg(test)]
        net.check_fed();
        self.unlevelled.clear();
        self.unlevelled.extend_from_slice(&net.fed);
        let mut head = 0;
        while let Some(&node) = self.queue.get(head) {
            head += 1;
            let at = self.level[node];
            if sink.is_some_and(|s| at >= s) {
                break;
            }
            let level = &mut self.level;
            let next = &mut self.next;
            let queue = &mut self.queue;
            let mut reach = |v: usize| {
                if level[v] == u32::MAX {
                    level[v] = at + 1;
                    next[v] = 0;
                    queue.push(v);
                    true
                } else {
                    false
                }
            };
            if node < racks_at {
                let r = net.rack[node];
                let tr = racks_at + r;
                let of = net.cells.of(node as u32);
                self.work += of.len();
                if self.unlevelled[r] > 0 {
                    for &(o, c) in of {
                        // The level first: most nodes are levelled early in the pass.
                        let v = tr + o as usize * width;
                        if level[v] == u32::MAX && net.free_cell(c) {
                            level[v] = at + 1;
                            next[v] = 0;
                            queue.push(v);
                            // A free cell: the node has an arc in from a member.
                            self.unlevelled[r] -= 1;
                            // None left: no later cell passes (a free one would be
                            // counted), so the rest are not read.
                            if self.unlevelled[r] == 0 {
                                break;
                            }
                        }
                    }
                }
            } else if node < masks_at {
                let (lt, r) = ((node - racks_at) / width, (node - racks_at) % width);
                for g in net.start[lt]..net.start[lt + 1] {
                    if fits(net.mask_of[g], r, net.racks) && reach(masks_at + g) && net.left[g] > 0
                    {
                        sink = Some(at + 1);
                    }
                }
                // The holders' steps count whether read or not (the work bound binds where
                // it did); with every member of the rack levelled, they reach nothing new.
                self.work += net.holders.len(lt);
                if self.members_left[r] > 0 {
                    let subs = &counts.subs[lt];
                    for &i in net.holders.of(lt) {
                        let lm = subs[i as usize] as usize;
                        if net.rack[lm] == r && reach(lm) {
                            self.members_left[r] -= 1;
                        }
                    }
                }
            } else {
                let g = node - masks_at;
                let tr = racks_at + net.topic_of[g] * width;
                for (r, &f) in net.flow[g * width..(g + 1) * width].iter().enumerate() {
                    if f > 0 && reach(tr + r) && net.free_in[tr + r - racks_at] > 0 {
                        self.unlevelled[r] -= 1;
                    }
                }
            }
            self.work += 1;
            if self.work > self.budget {
                return None;
            }
        }
        sink
    }

    /// Carries one unit along `path` (each node's current arc leads to the next), from a
    /// member short of an extra to an open mask node.
    fn carry(&self, net: &mut Network<'_>) {
        let width = self.width;
        for w in self.path.windows(2) {
            let (u, v) = (w[0], w[1]);
            let k = self.next[u];
            if u < self.racks_at {
                let (o, c) = net.cells.of(u as u32)[k];
                let o = o as usize;
                net.hold(o, net.cells.index(o, c), u, true);
            } else if u < self.masks_at {
                let (lt, r) = ((u - self.racks_at) / width, (u - self.racks_at) % width);
                if v >= self.masks_at {
                    net.flow[(v - self.masks_at) * width + r] += 1;
                } else {
                    let masks = net.start[lt + 1] - net.start[lt];
                    net.hold(lt, (k - masks) as u32, v, false);
                }
            } else {
                net.flow[(u - self.masks_at) * width + k] -= 1;
            }
        }
        if let Some(&end) = self.path.last() {
            net.left[end - self.masks_at] -= 1;
        }
    }

    /// Advances `u`'s current arc to the first arc of the level graph (to a node one level
    /// further) and returns where it leads, or `None` past its last. A node's arcs in
    /// canonical order: a member's cells by topic (to its rack's node of the topic, when the
    /// cell is free); a (topic, rack) node's fitting masks ascending, then its subscribers in
    /// the rack ascending (back to each holding the topic's extra); a mask node's racks
    /// ascending (back to each that the flow sends some of its partitions to).
    fn advance(&mut self, net: &Network<'_>, counts: &Counts, u: usize) -> Option<usize> {
        let width = self.width;
        let want = self.level[u] + 1;
        let level = &self.level;
        let mut k = self.next[u];
        let found = if u < self.racks_at {
            let tr = self.racks_at + net.rack[u];
            let of = net.cells.of(u as u32);
            let at = of[k..]
                .iter()
                .position(|&(o, c)| level[tr + o as usize * width] == want && net.free_cell(c));
            self.work += at.map_or(of.len() - k, |a| a + 1);
            at.map(|a| {
                k += a;
                tr + of[k].0 as usize * width
            })
        } else if u < self.masks_at {
            let (lt, r) = ((u - self.racks_at) / width, (u - self.racks_at) % width);
            let (from, masks) = (net.start[lt], net.start[lt + 1] - net.start[lt]);
            let mut found = None;
            if k < masks {
                // The topic's masks and their levels as slices, read from the current arc.
                let mask_of = &net.mask_of[from + k..from + masks];
                let levels = &level[self.masks_at + from + k..self.masks_at + from + masks];
                let at = mask_of
                    .iter()
                    .zip(levels)
                    .position(|(&mask, &l)| l == want && fits(mask, r, net.racks));
                // A step per mask examined, as one at a time.
                self.work += at.map_or(masks - k, |a| a + 1);
                match at {
                    Some(a) => {
                        k += a;
                        found = Some(self.masks_at + from + k);
                    }
                    None => k = masks,
                }
            }
            if found.is_none() {
                // Past the masks, the current arc is the subscriber index to go on from.
                let subs = &counts.subs[lt];
                let from = (k - masks) as u32;
                let h = net.holders.of(lt);
                let h = &h[h.partition_point(|&i| i < from)..];
                self.work += 1 + h.len();
                let next = h.iter().copied().find(|&i| {
                    let lm = subs[i as usize] as usize;
                    net.rack[lm] == r && level[lm] == want
                });
                match next {
                    Some(i) => {
                        k = masks + i as usize;
                        found = Some(subs[i as usize] as usize);
                    }
                    None => k = masks + subs.len(),
                }
            }
            found
        } else {
            let g = u - self.masks_at;
            let tr = self.racks_at + net.topic_of[g] * width;
            let mut found = None;
            while k < width {
                self.work += 1;
                if net.flow[g * width + k] > 0 && level[tr + k] == want {
                    found = Some(tr + k);
                    break;
                }
                k += 1;
            }
            found
        };
        self.next[u] = k;
        found
    }

    /// Pushes a blocking flow of the level graph, one unit per path from the members short of
    /// extras (ascending) to the open mask nodes at level `sink`, each node's current arc
    /// advancing past dead ends; returns the units placed, or `None` when the work bound is
    /// spent.
    pub(super) fn block(
        &mut self,
        net: &mut Network<'_>,
        counts: &Counts,
        sink: u32,
    ) -> Option<u32> {
        let mut placed = 0;
        for root in 0..net.short.len() {
            while net.short[root] > 0 && self.level[root] == 0 {
                self.path.clear();
                self.path.push(root);
                // Depth first along current arcs until an open mask node or a dead root.
                while let Some(&u) = self.path.last() {
                    if self.level[u] == sink {
                        if self.open(net, u) {
                            break;
                        }
                        self.level[u] = u32::MAX;
                        self.path.pop();
                        continue;
                    }
                    match self.advance(net, counts, u) {
                        Some(v) => self.path.push(v),
                        None => {
                            self.level[u] = u32::MAX;
                            self.path.pop();
                        }
                    }
                }
                if self.work > self.budget {
                    return None;
                }
                if self.path.is_empty() {
                    break;
                }
                self.carry(net);
                net.short[root] -= 1;
                placed += 1;
            }
        }
        Some(placed)
    }
}
