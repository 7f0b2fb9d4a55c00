//! The extras re-chosen across a whole component, for the racked certificate of [`super`]:
//! where every topic has f_t = 0 (each subscriber gets 0 or 1 of its partitions), no member
//! holds a keepable claim (the argument below allows claims; the gate is for speed), and a
//! topic's deal cannot align its left-over partitions, the extras of the cells that gain
//! nothing (k_tm = 0) are chosen again by one bipartite flow, so that every one of them can
//! take a left-over partition it aligns (or one no subscriber can align).
//!
//! # Why the counts stay optimal
//!
//! The gaining cells (k_tm > 0) keep their extras as they were (held or not), and a member
//! holding one keeps its lowest-numbered keepable claim of the topic, as the deal does; the
//! partitions left over of topic t are the others. The flow keeps every member's number of
//! extras on cells that gain nothing (so every load stays, and with it Σ load²) and every
//! topic's number of extras r_t (each topic's left-over partitions are all placed, one per
//! re-chosen cell). Σ min(k_tm, c_tm) does not change: a cell that gains nothing adds
//! min(0, c) = 0 whether chosen or not, and the gaining ones are fixed. So the counts stay
//! balance-optimal and keep the most claims any balance-optimal choice can (step 3 of the
//! certificate); the flow sends each re-chosen cell of member m to a left-over partition
//! whose mask holds m's rack or is 0, so every topic's deal with the new counts places every
//! alignable partition aligned (its transport is an exact maximum flow, and the flow here is
//! one of its solutions) and the certificate holds.
//!
//! # The network
//!
//! Source → member m (capacity: its extras on cells that gain nothing) → (t, rack of m) for
//! each such cell of m (capacity 1: one partition per subscriber) → (t, g) for each mask g
//! of t's left-over partitions holding that rack, and (t, 0) → sink (capacity: the left-over
//! partitions of t with mask g). A member without a rack reaches (t, 0) only. The current
//! counts are the start: each topic's chosen cells that gain nothing take, in subscriber
//! order, a partition of their own rack's single-rack mask, else of the first mask (ascending)
//! holding their rack, else of mask 0, while any is left; the cells that find none are let
//! go. The deficit is then placed by paths of one arc (members short of extras ascending,
//! each taking, topic by topic, a partition left of a fitting mask), then one unit at a time
//! along breadth-first paths (at most [`MAX_SEARCHES`]; past that the step declines) in the
//! residual network from the members short of extras (ascending), each node's arcs in
//! canonical order (a member's cells by topic, a topic's masks ascending, then its chosen
//! subscribers ascending, a mask's racks ascending). It is exact: the saturating flow exists
//! exactly when no augmenting path is left short of the deficit.
//!
//! # Tie rule
//!
//! The re-chosen cells are those the flow above ends with, a deterministic function of the
//! canonical order and the current counts; the deals then follow the tie rule of [`super`].
//!
//! # Complexity
//!
//! O(P + Σ_t |Sub(t)|) to build (P the component's partitions), then O(V + E) per unit of
//! deficit (V, E: the network's nodes and arcs, O(Σ_t |Sub(t)| · G) with G masks per topic).

use super::super::Counts;
use super::exchange::Scope;

#[cfg(test)]
thread_local! {
    /// Tests only: the components whose extras this step re-chose, on this thread.
    pub(crate) static RECHOSEN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Tests only: the step switched off, so that tests reach the exchanges behind it.
    pub(crate) static OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: a planted fault, the first topic's re-chosen extras handed each to the
    /// next subscriber (loads change).
    pub(crate) static SHIFTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// How many breadth-first searches the step may run (each O(V + E), a few hundred thousand
/// steps on the benchmark's full rows) before it leaves the component to the exchanges and
/// the exact flow as before.
const MAX_SEARCHES: u32 = 32;

/// Where a node of the breadth-first search was reached from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum From {
    Unseen,
    Source,
    /// A member, from (topic, rack) node `.0` backward over its cell there (placed before).
    Cell(usize),
    /// A (topic, rack) node, from member `.0` over its cell (forward).
    Member(u32),
    /// A (topic, rack) node, from mask node `.0` (backward over their arc).
    Mask(usize),
    /// A mask node, from (topic, rack) node `.0` (forward).
    Rack(usize),
}

/// Re-chooses the extras of `counts` on cells that gain nothing, as the [module docs](self)
/// say, when every topic has f_t = 0 and a saturating flow exists: returns true with
/// `counts.chosen` changed (loads, gaining cells and r_t as they were), else false with
/// `counts` untouched. `masks`: per local topic, each partition's mask among its
/// subscribers' racks; `racks`: how many racks the members run in.
pub(super) fn rechoose(
    x: &Scope<'_, '_>,
    masks: &[Vec<u64>],
    racks: usize,
    counts: &mut Counts,
) -> bool {
    // Only first assignments: with claims the start is rarely close enough to pay (measured:
    // the benchmark's racked joins and leaves decline after the start, at a cost).
    if counts.floor.iter().any(|&f| f != 0) || x.keepable.iter().any(|k| !k.is_empty()) {
        return false;
    }
    #[cfg(test)]
    if OFF.with(std::cell::Cell::get) {
        return false;
    }
    let Some(net) = Network::start(x, masks, racks, counts) else {
        return false;
    };
    let cells = net.cells;
    let Some(on) = net.saturate(counts) else {
        return false;
    };
    for (lt, chosen) in counts.chosen.iter_mut().enumerate() {
        let gaining = &counts.gaining[lt];
        let gains = |i: usize| gaining.get(i) == Some(&true);
        let held: Vec<u32> = chosen
            .iter()
            .copied()
            .filter(|&i| gains(i as usize))
            .collect();
        chosen.clear();
        let mut held = held.into_iter().peekable();
        for i in 0..counts.subs[lt].len() as u32 {
            if held.peek() == Some(&i) {
                held.next();
                chosen.push(i);
            } else if on[cells.id(lt, i)] {
                chosen.push(i);
            }
        }
    }
    #[cfg(test)]
    if SHIFTED.with(std::cell::Cell::get)
        && let Some(chosen) = counts.chosen.first_mut()
    {
        let n = counts.subs[0].len() as u32;
        for i in chosen.iter_mut() {
            *i = (*i + 1) % n;
        }
        chosen.sort_unstable();
    }
    #[cfg(test)]
    RECHOSEN.with(|c| c.set(c.get() + 1));
    true
}

/// The residual network of the [module docs](self) with the start's flow on it.
struct Network<'s> {
    cells: &'s super::exchange::Cells,
    /// Per local member: its rack's index (`racks`: none).
    rack: Vec<usize>,
    racks: usize,
    topics: usize,
    /// Per local topic: where its masks start in `mask_of` (one more entry at the end).
    start: Vec<usize>,
    /// Per mask node: its mask, its local topic, the partitions of it not placed.
    mask_of: Vec<u64>,
    topic_of: Vec<usize>,
    left: Vec<u32>,
    /// Per mask node, per rack index: the flow on the arc (topic, rack) → mask.
    flow: Vec<u32>,
    /// Per cell: whether it holds an extra that gains nothing, placed (the flow on it).
    on: Vec<bool>,
    /// Per local member: its extras on cells that gain nothing not placed.
    short: Vec<u32>,
}

impl<'s> Network<'s> {
    /// The network with the start's flow, or `None` when a topic has more masks than the
    /// deal takes.
    fn start(
        x: &'s Scope<'_, '_>,
        masks: &[Vec<u64>],
        racks: usize,
        counts: &Counts,
    ) -> Option<Self> {
        let topics = counts.subs.len();
        let width = racks + 1;
        let rack: Vec<usize> = x
            .member_bit
            .iter()
            .map(|&bit| {
                if bit == 0 {
                    racks
                } else {
                    bit.trailing_zeros() as usize
                }
            })
            .collect();
        let cells = x
            .cells
            .get_or_init(|| super::exchange::Cells::new(x, counts));
        let mut net = Network {
            cells,
            rack,
            racks,
            topics,
            start: Vec::with_capacity(topics + 1),
            mask_of: Vec::new(),
            topic_of: Vec::new(),
            left: Vec::new(),
            flow: Vec::new(),
            on: vec![false; cells.len()],
            short: vec![0; counts.load.len()],
        };
        let mut holding = Vec::new();
        let mut kept = Vec::new();
        for (lt, topic_masks) in masks.iter().enumerate().take(topics) {
            let t = x.comp.topics[lt] as usize;
            let subs = &counts.subs[lt];
            let gaining = &counts.gaining[lt];
            let gains = |i: usize| gaining.get(i) == Some(&true);
            holding.clear();
            holding.resize(subs.len(), false);
            for &i in &counts.chosen[lt] {
                holding[i as usize] = true;
            }
            // The claims the deal keeps: each gaining holder's lowest-numbered keepable claim.
            kept.clear();
            kept.resize(subs.len(), false);
            let claim_at = &x.claim_at[x.claim_at_start[lt]..x.claim_at_start[lt + 1]];
            let from = net.mask_of.len();
            net.start.push(from);
            let mut claims = x.keepable[t].iter().zip(claim_at).peekable();
            for (p, &mask) in topic_masks.iter().enumerate() {
                if let Some(&(&(q, _), &i)) = claims.peek()
                    && q as usize == p
                {
                    claims.next();
                    let i = i as usize;
                    if holding[i] && gains(i) && !kept[i] {
                        kept[i] = true;
                        continue;
                    }
                }
                match net.mask_of[from..].binary_search(&mask) {
                    Ok(g) => net.left[from + g] += 1,
                    Err(g) => {
                        if mask != 0 && net.mask_of.len() - from >= super::MAX_GROUPS {
                            return None;
                        }
                        net.mask_of.insert(from + g, mask);
                        net.left.insert(from + g, 1);
                    }
                }
            }
            let groups = from..net.mask_of.len();
            net.topic_of.resize(groups.end, lt);
            net.flow.resize(groups.end * width, 0);
            // The start: chosen cells that gain nothing take their own rack's partitions
            // first, those of wider masks next, those no subscriber can align last.
            for (i, &lm) in subs.iter().enumerate() {
                if !holding[i] || gains(i) {
                    continue;
                }
                let r = net.rack[lm as usize];
                let (mask_of, left) = (&net.mask_of, &net.left);
                let open = |g: &usize| left[*g] > 0;
                let own = groups
                    .clone()
                    .filter(open)
                    .find(|&g| r < racks && mask_of[g] == 1 << r);
                let wider = || {
                    groups
                        .clone()
                        .filter(open)
                        .find(|&g| mask_of[g] != 0 && fits(mask_of[g], r, racks))
                };
                let free = || groups.clone().filter(open).find(|&g| mask_of[g] == 0);
                match own.or_else(wider).or_else(free) {
                    Some(g) => {
                        net.left[g] -= 1;
                        net.flow[g * width + r] += 1;
                        net.on[cells.id(lt, i as u32)] = true;
                    }
                    None => net.short[lm as usize] += 1,
                }
            }
        }
        net.start.push(net.mask_of.len());
        Some(net)
    }

    /// The first of local topic `lt`'s masks (ascending) that rack index `r` may take with a
    /// partition not placed.
    fn open_mask(&self, lt: usize, r: usize) -> Option<usize> {
        (self.start[lt]..self.start[lt + 1])
            .find(|&g| self.left[g] > 0 && fits(self.mask_of[g], r, self.racks))
    }

    /// Whether cell (`lt`, `j`) of a member can take a new extra: it gains nothing and holds
    /// no placed one.
    fn free_cell(&self, counts: &Counts, lt: usize, j: u32) -> bool {
        !self.on[self.cells.id(lt, j)] && counts.gaining[lt].get(j as usize) != Some(&true)
    }

    /// Augments the start's flow until every member's extras are placed, returning the flow
    /// on the cells, or `None` when no augmenting path is left. First the paths of one arc
    /// (a member short of an extra, ascending, takes a partition left of its topics in
    /// order), then breadth-first ones.
    fn saturate(mut self, counts: &Counts) -> Option<Vec<bool>> {
        let members = self.short.len();
        let width = self.racks + 1;
        let cells = self.cells;
        for lm in 0..members {
            let r = self.rack[lm];
            for &(o, j) in cells.of(lm as u32) {
                if self.short[lm] == 0 {
                    break;
                }
                let o = o as usize;
                if !self.free_cell(counts, o, j) {
                    continue;
                }
                if let Some(g) = self.open_mask(o, r) {
                    self.left[g] -= 1;
                    self.flow[g * width + r] += 1;
                    self.on[cells.id(o, j)] = true;
                    self.short[lm] -= 1;
                }
            }
        }
        let racks_at = members;
        let masks_at = racks_at + self.topics * width;
        let mut from = vec![From::Unseen; masks_at + self.mask_of.len()];
        // Per node: the search that last reached it (`from` holds only for the current one).
        let mut seen = vec![0u32; from.len()];
        let mut search = 0u32;
        let mut queue: std::collections::VecDeque<usize> = std::collections::VecDeque::new();
        let mut deficit: u32 = self.short.iter().sum();
        if deficit > MAX_SEARCHES {
            return None;
        }
        let cell = |lt: usize, lm: u32| {
            counts.subs[lt]
                .binary_search(&lm)
                .ok()
                .map(|i| cells.id(lt, i as u32))
        };
        let split = |tr: usize| ((tr - racks_at) / width, (tr - racks_at) % width);
        while deficit > 0 {
            search += 1;
            queue.clear();
            let mut reach = |node: usize, how: From, from: &mut [From]| {
                if seen[node] == search {
                    return false;
                }
                seen[node] = search;
                from[node] = how;
                true
            };
            for (lm, &s) in self.short.iter().enumerate() {
                if s > 0 && reach(lm, From::Source, &mut from) {
                    queue.push_back(lm);
                }
            }
            // A (topic, rack) node reached is checked at once for a mask with a partition left.
            let mut found = None;
            'search: while let Some(node) = queue.pop_front() {
                if node < racks_at {
                    let r = self.rack[node];
                    for &(o, j) in cells.of(node as u32) {
                        let o = o as usize;
                        let tr = racks_at + o * width + r;
                        if self.free_cell(counts, o, j)
                            && reach(tr, From::Member(node as u32), &mut from)
                        {
                            if let Some(g) = self.open_mask(o, r) {
                                from[masks_at + g] = From::Rack(tr);
                                found = Some(g);
                                break 'search;
                            }
                            queue.push_back(tr);
                        }
                    }
                } else if node < masks_at {
                    let (lt, r) = split(node);
                    for g in self.start[lt]..self.start[lt + 1] {
                        if fits(self.mask_of[g], r, self.racks)
                            && reach(masks_at + g, From::Rack(node), &mut from)
                        {
                            queue.push_back(masks_at + g);
                        }
                    }
                    for (i, &lm) in counts.subs[lt].iter().enumerate() {
                        let at = lm as usize;
                        if self.rack[at] == r
                            && self.on[cells.id(lt, i as u32)]
                            && reach(at, From::Cell(node), &mut from)
                        {
                            queue.push_back(at);
                        }
                    }
                } else {
                    let g = node - masks_at;
                    let lt = self.topic_of[g];
                    for r in 0..width {
                        let tr = racks_at + lt * width + r;
                        if self.flow[g * width + r] > 0 && reach(tr, From::Mask(g), &mut from) {
                            if let Some(g) = self.open_mask(lt, r) {
                                from[masks_at + g] = From::Rack(tr);
                                found = Some(g);
                                break 'search;
                            }
                            queue.push_back(tr);
                        }
                    }
                }
            }
            let g = found?;
            self.left[g] -= 1;
            // Back along the path, from the mask node found to a member short of an extra.
            let mut at = masks_at + g;
            loop {
                if at >= masks_at {
                    let g = at - masks_at;
                    let From::Rack(tr) = from[at] else {
                        return None;
                    };
                    self.flow[g * width + split(tr).1] += 1;
                    at = tr;
                    continue;
                }
                let (lt, r) = split(at);
                match from[at] {
                    From::Member(lm) => {
                        self.on[cell(lt, lm)?] = true;
                        match from[lm as usize] {
                            From::Source => {
                                self.short[lm as usize] -= 1;
                                break;
                            }
                            From::Cell(back) => {
                                self.on[cell(split(back).0, lm)?] = false;
                                at = back;
                            }
                            _ => return None,
                        }
                    }
                    From::Mask(g2) => {
                        self.flow[g2 * width + r] -= 1;
                        at = masks_at + g2;
                    }
                    _ => return None,
                }
            }
            deficit -= 1;
        }
        Some(self.on)
    }
}

/// Whether a member in rack index `r` (`racks`: none) may take a partition of mask `g`.
fn fits(g: u64, r: usize, racks: usize) -> bool {
    g == 0 || (r < racks && g >> r & 1 == 1)
}
