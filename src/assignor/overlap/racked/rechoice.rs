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
//! each taking, topic by topic, a partition left of a fitting mask), then by phases of
//! shortest augmenting paths (Dinic): one breadth-first pass from all the members short of
//! extras levels the residual network up to the first level holding a mask with a partition
//! left, then a depth-first pass with a current arc per node pushes a blocking flow of that
//! level graph, members short of extras ascending, each node's arcs in canonical order (a
//! member's cells by topic, a (topic, rack) node's masks ascending, then the topic's
//! holders in that rack ascending, a mask's racks ascending). A topic's holders are kept in a
//! list per topic (a few per topic, all in one buffer: [`holders`]), so a (topic, rack) node
//! reads them, not all its subscribers. The phases stop at [`WORK_PER_ARC`](levels::WORK_PER_ARC) steps per arc and node of the network;
//! past that the step declines. It is exact: the saturating flow exists exactly when no
//! augmenting path is left short of the deficit, and a phase that places nothing finds none.
//!
//! # Tie rule
//!
//! The re-chosen cells are those the flow above ends with, a deterministic function of the
//! canonical order and the current counts; the deals then follow the tie rule of [`super`].
//!
//! # Complexity
//!
//! O(P + Σ_t |Sub(t)|) to build (P the component's partitions), then O(V + E) per phase
//! (V, E: the network's nodes and arcs, O(Σ_t |Sub(t)| · G) with G masks per topic), at most
//! [`WORK_PER_ARC`](levels::WORK_PER_ARC) · (V + E) steps in all.

use super::super::Counts;
use super::exchange::{Cells, Scope};

mod holders;
mod levels;

use holders::Holders;
use levels::Levels;

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
    if !may_rechoose(x, counts) {
        return false;
    }
    #[cfg(test)]
    if OFF.with(std::cell::Cell::get) {
        return false;
    }
    let Some(net) = Network::start(x, masks, racks, counts) else {
        return false;
    };
    let Some(holders) = net.saturate(counts) else {
        return false;
    };
    for (lt, (chosen, gaining)) in counts.chosen.iter_mut().zip(&counts.gaining).enumerate() {
        // The gaining holders as they were, merged with the re-chosen ones (both ascending).
        chosen.retain(|&i| gaining.get(i as usize) == Some(&true));
        let merge = !chosen.is_empty();
        chosen.extend_from_slice(holders.of(lt));
        if merge {
            chosen.sort_unstable();
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

/// Whether [`rechoose`] may run on `counts`: every topic has f_t = 0 and no member holds a
/// keepable claim. Neither changes during [`super::assign`] (exchanges move extras only), so
/// [`super::exchange::Cells::new`] reads it to count what the re-choice needs in its pass.
pub(super) fn may_rechoose(x: &Scope<'_, '_>, counts: &Counts) -> bool {
    // Only first assignments: with claims the start is rarely close enough to pay (measured:
    // the benchmark's racked joins and leaves decline after the start, at a cost).
    counts.floor.iter().all(|&f| f == 0) && x.keepable.iter().all(Vec::is_empty)
}

/// Per local member: its rack's index among `racks` (`racks`: none), from its rack's bit.
pub(super) fn rack_indices(member_bit: &[u64], racks: usize) -> Vec<usize> {
    member_bit
        .iter()
        .map(|&bit| {
            if bit == 0 {
                racks
            } else {
                bit.trailing_zeros() as usize
            }
        })
        .collect()
}

/// Per (topic, rack) node (`lt · width + r`): the topic's subscribers in the rack, counted
/// member by member (its rack read once, not per cell).
fn count_per_rack(cells: &Cells, rack: &[usize], topics: usize, width: usize) -> Vec<u32> {
    let mut per_rack = vec![0; topics * width];
    for (lm, &r) in rack.iter().enumerate() {
        for &(o, _) in cells.of(lm as u32) {
            if let Some(n) = per_rack.get_mut(o as usize * width + r) {
                *n += 1;
            }
        }
    }
    per_rack
}

/// The residual network of the [module docs](self) with the start's flow on it.
struct Network<'s> {
    cells: &'s Cells,
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
    /// Per cell, as bits (cell c at bit c % 64 of word c / 64): whether it can take a new
    /// extra (it gains nothing and holds no placed one).
    free: Vec<u64>,
    /// Per (topic, rack) node (`lt · (racks + 1) + r`): how many of the topic's subscribers
    /// in that rack have a free cell of it (the node's arcs in from members).
    free_in: Vec<u32>,
    /// Per rack index: how many of its (topic, rack) nodes have `free_in` above 0.
    fed: Vec<u32>,
    /// Per local topic: the subscriber indices whose cells are on, ascending.
    holders: Holders,
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
        debug_assert_eq!(racks, x.racks, "the re-choice's racks are not the scope's");
        let rack = rack_indices(x.member_bit, racks);
        let cells = x.cells.get_or_init(|| Cells::new(x, counts));
        // Per (topic, rack) node, the subscribers with a free cell: at first all of them,
        // counted when the cells were written (they were, the re-choice being possible); a
        // topic's counts are read and changed only by its own steps below.
        let free_in = match cells.per_rack() {
            Some(counted) => {
                #[cfg(test)]
                assert_eq!(
                    counted,
                    &count_per_rack(cells, &rack, topics, width)[..],
                    "re-choice: the cells' per-rack counts are wrong"
                );
                counted.to_vec()
            }
            None => count_per_rack(cells, &rack, topics, width),
        };
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
            free: vec![!0u64; cells.len().div_ceil(64)],
            free_in,
            fed: vec![0; width],
            holders: Holders::new(counts.subs.iter().map(<[u32]>::len)),
            short: vec![0; counts.load.len()],
        };
        let mut holding = Vec::new();
        let mut kept = Vec::new();
        for (lt, topic_masks) in masks.iter().enumerate().take(topics) {
            let t = x.comp.topics[lt] as usize;
            let subs = &counts.subs[lt];
            let gaining = &counts.gaining[lt];
            let gains = |i: usize| gaining.get(i) == Some(&true);
            // Only claims read who holds an extra.
            let claimed = !x.keepable[t].is_empty();
            holding.clear();
            kept.clear();
            if claimed {
                holding.resize(subs.len(), false);
                kept.resize(subs.len(), false);
                for &i in &counts.chosen[lt] {
                    holding[i as usize] = true;
                }
            }
            for (i, _) in gaining.iter().enumerate().filter(|g| *g.1) {
                net.take_cell(lt, i as u32, subs[i] as usize);
            }
            // The claims the deal keeps: each gaining holder's lowest-numbered keepable claim.
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
            for &i in &counts.chosen[lt] {
                if gains(i as usize) {
                    continue;
                }
                let lm = subs[i as usize];
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
                        net.take_cell(lt, i, lm as usize);
                        net.holders.push(lt, i);
                    }
                    None => net.short[lm as usize] += 1,
                }
            }
        }
        net.start.push(net.mask_of.len());
        // `take_cell` above also stepped `fed` down, before it was counted: count it afresh
        // from the final `free_in` (those steps had wrapped it below zero, or left it short).
        net.fed.fill(0);
        for (node, &n) in net.free_in.iter().enumerate() {
            net.fed[node % width] += u32::from(n > 0);
        }
        Some(net)
    }

    /// Marks cell (`lt`, `i`) of local member `lm` as not free (`free` and `free_in`).
    fn take_cell(&mut self, lt: usize, i: u32, lm: usize) {
        let id = self.cells.id(lt, i);
        self.free[id / 64] &= !(1 << (id % 64));
        let node = lt * (self.racks + 1) + self.rack[lm];
        self.free_in[node] -= 1;
        if self.free_in[node] == 0 {
            self.fed[self.rack[lm]] -= 1;
        }
    }

    /// Panics unless `fed` counts, per rack index, the (topic, rack) nodes whose `free_in` is
    /// above 0: the levelling stops reading a rack's members once that many are levelled, so
    /// a short count would hide reachable nodes (the start once left it so).
    #[cfg(test)]
    fn check_fed(&self) {
        let width = self.racks + 1;
        let mut fed = vec![0u32; width];
        for (node, &n) in self.free_in.iter().enumerate() {
            fed[node % width] += u32::from(n > 0);
        }
        assert_eq!(self.fed, fed, "re-choice: `fed` out of step with `free_in`");
    }

    /// Marks cell (`lt`, `i`) of local member `lm` as free again.
    fn release_cell(&mut self, lt: usize, i: u32, lm: usize) {
        let id = self.cells.id(lt, i);
        self.free[id / 64] |= 1 << (id % 64);
        let node = lt * (self.racks + 1) + self.rack[lm];
        if self.free_in[node] == 0 {
            self.fed[self.rack[lm]] += 1;
        }
        self.free_in[node] += 1;
    }

    /// Per local topic: the racks its masks with a partition not placed admit, as bits (bit
    /// r: some such mask holds rack index r; bit 64: mask 0 has one, which every rack
    /// admits). A member in rack index r finds an open mask of the topic
    /// ([`Network::open_mask`]) exactly when this meets [`admits`]`(r)`.
    fn open_racks(&self, lt: usize) -> u128 {
        (self.start[lt]..self.start[lt + 1])
            .filter(|&g| self.left[g] > 0)
            .fold(0, |acc, g| {
                acc | match self.mask_of[g] {
                    0 => 1 << 64,
                    mask => u128::from(mask),
                }
            })
    }

    /// The first of local topic `lt`'s masks (ascending) that rack index `r` may take with a
    /// partition not placed.
    fn open_mask(&self, lt: usize, r: usize) -> Option<usize> {
        (self.start[lt]..self.start[lt + 1])
            .find(|&g| self.left[g] > 0 && fits(self.mask_of[g], r, self.racks))
    }

    /// Places (`on`) or lets go the extra of cell (`lt`, `i`) of local member `lm`, which
    /// gains nothing.
    fn hold(&mut self, lt: usize, i: u32, lm: usize, on: bool) {
        if on {
            self.take_cell(lt, i, lm);
        } else {
            self.release_cell(lt, i, lm);
        }
        if on {
            self.holders.insert(lt, i);
        } else {
            self.holders.remove(lt, i);
        }
    }

    /// Whether cell number `c` (as [`Cells::of`] lists it) can take a new extra: it gains
    /// nothing and holds no placed one.
    fn free_cell(&self, c: u32) -> bool {
        let c = c as usize;
        self.free[c / 64] >> (c % 64) & 1 == 1
    }

    /// Augments the start's flow until every member's extras are placed, returning the flow
    /// on the cells, or `None` when no augmenting path is left (or the work bound is spent).
    /// First the paths of one arc (a member short of an extra, ascending, takes a partition
    /// left of its topics in order), then phases of shortest augmenting paths (Dinic's
    /// blocking flows).
    fn saturate(mut self, counts: &Counts) -> Option<Holders> {
        let members = self.short.len();
        let width = self.racks + 1;
        let cells = self.cells;
        // Per topic, the racks its open masks admit: a cell whose rack they do not admit is
        // passed over without a look at its masks (most are, once few partitions are left).
        let mut open: Vec<u128> = (0..self.topics).map(|lt| self.open_racks(lt)).collect();
        // Per rack index: how many topics' open masks admit it. At 0 no cell of a member in
        // that rack passes the test below, so its cells are not read (open masks only close
        // here: partitions are placed, none let go).
        let mut admitting = vec![0u32; width];
        for &racks_open in &open {
            tally(&mut admitting, racks_open, self.racks, true);
        }
        for lm in 0..members {
            let r = self.rack[lm];
            let admitted = admits(r, self.racks);
            if self.short[lm] == 0 || admitting[r] == 0 {
                continue;
            }
            for &(o, c) in cells.of(lm as u32) {
                let o = o as usize;
                if open[o] & admitted == 0 || !self.free_cell(c) {
                    continue;
                }
                let j = cells.index(o, c);
                if let Some(g) = self.open_mask(o, r) {
                    self.left[g] -= 1;
                    self.flow[g * width + r] += 1;
                    self.hold(o, j, lm, true);
                    self.short[lm] -= 1;
                    if self.left[g] == 0 {
                        // The topic's racks before less those after: those it admitted
                        // are counted, so the counts do not go below 0.
                        tally(&mut admitting, open[o], self.racks, false);
                        open[o] = self.open_racks(o);
                        tally(&mut admitting, open[o], self.racks, true);
                    }
                    if self.short[lm] == 0 || admitting[r] == 0 {
                        break;
                    }
                }
            }
        }
        let mut deficit: u32 = self.short.iter().sum();
        if deficit == 0 {
            return Some(self.holders);
        }
        let mut levels = Levels::new(&self);
        while deficit > 0 {
            let sink = levels.build(&self, counts)?;
            let placed = levels.block(&mut self, counts, sink)?;
            if placed == 0 {
                return None;
            }
            deficit -= placed;
        }
        Some(self.holders)
    }
}

/// The bits of [`Network::open_racks`] that admit a member in rack index `r` (`racks`:
/// none): its rack's, and that of mask 0.
fn admits(r: usize, racks: usize) -> u128 {
    let own = if r < racks { 1u128 << r } else { 0 };
    own | 1 << 64
}

/// Counts (`add`) or uncounts in `admitting` (per rack index) one topic whose open masks
/// admit the racks `racks_open` (as [`Network::open_racks`] gives them): rack index r is
/// counted exactly when `racks_open` meets [`admits`]`(r)`, read off its bits rather than
/// tried rack by rack.
fn tally(admitting: &mut [u32], racks_open: u128, racks: usize, add: bool) {
    let step = |n: &mut u32| {
        if add {
            *n += 1;
        } else {
            *n -= 1;
        }
    };
    if racks_open >> 64 & 1 == 1 {
        // Mask 0 has a partition left: every rack index, and none, is admitted.
        admitting.iter_mut().for_each(step);
    } else {
        let mut bits = racks_open as u64;
        while bits != 0 {
            let r = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if r < racks
                && let Some(n) = admitting.get_mut(r)
            {
                step(n);
            }
        }
    }
}

/// Whether a member in rack index `r` (`racks`: none) may take a partition of mask `g`.
fn fits(g: u64, r: usize, racks: usize) -> bool {
    g == 0 || (r < racks && g >> r & 1 == 1)
}
