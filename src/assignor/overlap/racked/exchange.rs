//! Exchanges of extras across two topics, for the racked certificate of [`super`]: when a
//! topic's deal cannot align every alignable partition and no exchange within the topic
//! helps (with every load equal, as in a full assignment, none does: a move within one topic
//! always unbalances two members), member u hands its extra of that topic to member v, and v
//! hands u its extra of another topic both subscribe to.
//!
//! # Why the counts stay optimal
//!
//! Every member keeps its load (u gives one extra and takes one, v likewise), so Σ load² is
//! unchanged. First only exchanges whose two extras given up are of cells that gain nothing
//! (u and v hold at most f_t keepable claims of the topic they give) are sought, so no
//! gaining cell is lost; one received can only add one. Failing those, an exchange may give
//! up gaining cells when it receives at least as many: the number used changes by
//! g(v, t) + g(u, t′) − g(u, t) − g(v, t′) ≥ 0 (g: gains from an extra of that topic). Either
//! way the counts of [`super::super::choose`] used the most gaining cells any
//! balance-optimal choice can, so the exchanged counts do too (they use at least as many),
//! and step 3 of the certificate applies to them unchanged. Whether the deal succeeds is
//! checked by the deal itself, topic by topic, as for any counts.
//!
//! # Which exchange
//!
//! The giver u is a holder of the failing topic's extra in a rack the stuck partitions cannot
//! use (not among the transport's `reached` racks); the receiver v holds none and runs in a
//! reached rack, so the reached racks gain room and the others lose some that the maximum
//! flow did not need. The other topic t′ is one both subscribe to, where v holds an extra
//! and u does not. Receivers, then givers, in subscriber order, then t′ in topic order, the
//! first not dealt yet (t′ after the failing topic: it is dealt later and checked then), else
//! the first dealt already that the caller has not refused (it re-deals t′ and takes the
//! exchange back when that fails). All of that among the exchanges giving up no gaining cell
//! first, then among those that give up no more than they receive. Deterministic: only the
//! canonical order is read.

use super::super::super::components::Component;
use super::super::super::problem::Problem;
use super::super::Counts;

#[cfg(test)]
thread_local! {
    /// Tests only: the exchanges applied for good (not taken back), on this thread.
    pub(crate) static EXCHANGED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Tests only: a planted fault, an extra given up may be a gaining cell.
    pub(crate) static GAINING_GIVEN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: a planted fault, the receiver hands nothing back (loads change).
    pub(crate) static ONE_SIDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// One exchange: local member `giver` hands its extra of local topic `topic` to local member
/// `receiver`, which hands its extra of local topic `other` to `giver`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Exchange {
    pub topic: usize,
    pub other: usize,
    pub giver: u32,
    pub receiver: u32,
}

/// What the search reads of the component.
pub(super) struct Scope<'a, 'p> {
    pub problem: &'a Problem<'p>,
    pub comp: &'a Component,
    /// Per local member: its rack's bit.
    pub member_bit: &'a [u64],
    /// How many racks the members run in.
    pub racks: usize,
    /// Per topic: the keepable claims (partition, member), ascending by partition.
    pub keepable: &'a [Vec<(i32, u32)>],
    /// Per keepable claim, topic after topic: its owner's index among the topic's
    /// subscribers.
    pub claim_at: &'a [u32],
    /// Per local topic: where its claims start in `claim_at` (one more entry at the end).
    pub claim_at_start: &'a [usize],
    /// Per local topic: racks such that a member keeps first its claims whose masks lie
    /// within them (0: lowest numbers first). Set after a deal of the topic failed with
    /// those racks full; which claims a member keeps changes neither its count nor how many
    /// it keeps, only which partitions are left over.
    pub keep_within: Vec<std::cell::Cell<u64>>,
    /// The cells (subscriptions) as searches read them, built on the first search.
    pub cells: std::cell::OnceCell<Cells>,
}

/// The component's cells (local topic, subscriber index), numbered topic by topic
/// (`first[lt] + i`), with each member's cells listed by topic, each with its number: a
/// search reads a member's topics, and whether it holds their extras, without a binary
/// search per topic or a look-up of the topic's first cell.
/// Subscriptions never change during [`super::assign`], so this is built once per component,
/// when an exchange is first sought.
pub(crate) struct Cells {
    /// Per local topic: the number of its first cell (one more entry at the end).
    first: Vec<u32>,
    /// Per local member: where its cells start in `of` (one more entry at the end).
    start: Vec<u32>,
    /// Members' cells as (local topic, cell number), by member, topics ascending.
    of: Vec<(u32, u32)>,
    /// Per (topic, rack) node (`lt · (racks + 1) + r`, rack index `racks`: none): the
    /// topic's subscribers in that rack, counted in the pass that writes the cells (a few
    /// instructions per cell there, against a pass of its own); empty unless the re-choice
    /// may run ([`super::rechoice::may_rechoose`]), the only reader.
    per_rack: Vec<u32>,
}

impl Cells {
    /// The cells of `x`'s component, as [`Cells`] says.
    pub(super) fn new(x: &Scope<'_, '_>, counts: &Counts) -> Self {
        let comp = x.comp;
        let mut first = Vec::with_capacity(counts.subs.len() + 1);
        first.push(0u32);
        for subs in &counts.subs {
            first.push(first[first.len() - 1] + subs.len() as u32);
        }
        // A member's cells are its subscriptions (all to the component's topics), so their
        // number gives where its cells start without a pass over the cells.
        let mut start = Vec::with_capacity(comp.members.len() + 1);
        start.push(0u32);
        for &m in &comp.members {
            let len = x.problem.subscriptions[m as usize].len() as u32;
            start.push(start[start.len() - 1] + len);
        }
        // Topics ascending meet each member's cells in its order, so one pass over the
        // topics' subscribers writes every cell in place (a cursor per member), with no
        // look-up of a topic's local index.
        let cells = first[first.len() - 1] as usize;
        debug_assert_eq!(
            start[start.len() - 1] as usize,
            cells,
            "a cell off the component"
        );
        let mut of = vec![(0u32, 0u32); cells];
        let count = super::rechoice::may_rechoose(x, counts);
        let by_member = if count {
            by_member::<true>
        } else {
            by_member::<false>
        };
        let per_rack = match by_member(x, counts, &first, &start, &mut of) {
            Some(per_rack) => per_rack,
            None if count => write_counted(x, counts, &start, &mut of),
            None => {
                write_cells(counts, &start, &mut of);
                Vec::new()
            }
        };
        // Tests only: the member-by-member pass writes what the topic-by-topic one does.
        #[cfg(test)]
        {
            let mut again = vec![(0u32, 0u32); cells];
            let counted = if count {
                write_counted(x, counts, &start, &mut again)
            } else {
                write_cells(counts, &start, &mut again);
                Vec::new()
            };
            assert!(again == of && counted == per_rack, "the two passes differ");
        }
        Self {
            first,
            start,
            of,
            per_rack,
        }
    }

    /// The per-(topic, rack) subscriber counts of [`Cells`]' `per_rack`, or `None` when they
    /// were not counted (the re-choice could not run when the cells were built).
    pub(super) fn per_rack(&self) -> Option<&[u32]> {
        (!self.per_rack.is_empty()).then_some(&self.per_rack[..])
    }

    /// Local member `lm`'s cells as (local topic, cell number), ascending by topic.
    pub(super) fn of(&self, lm: u32) -> &[(u32, u32)] {
        let lm = lm as usize;
        &self.of[self.start[lm] as usize..self.start[lm + 1] as usize]
    }

    /// The number of the `i`-th subscriber of local topic `lt`'s cell.
    pub(super) fn id(&self, lt: usize, i: u32) -> usize {
        self.first[lt] as usize + i as usize
    }

    /// The subscriber index of cell number `c` of local topic `lt` ([`Cells::id`] undone).
    pub(super) fn index(&self, lt: usize, c: u32) -> u32 {
        c - self.first[lt]
    }

    /// How many cells the component has.
    pub(super) fn len(&self) -> usize {
        self.first[self.first.len() - 1] as usize
    }

    /// Per cell: whether its subscriber holds the topic's extra in `counts`, as bits (cell
    /// c at bit c % 64 of word c / 64: an eighth of the bytes of one flag per cell to clear).
    fn holding(&self, counts: &Counts) -> Vec<u64> {
        let mut holding = vec![0u64; self.len().div_ceil(64)];
        for (lt, chosen) in counts.chosen.iter().enumerate() {
            for &i in chosen {
                let c = self.id(lt, i);
                holding[c / 64] |= 1 << (c % 64);
            }
        }
        holding
    }
}

/// Writes every cell into `of` member by member, each member's subscriptions in its order
/// (topics ascending, as the component's local topics are), and with `COUNT` returns the
/// `per_rack` of [`Cells`] counted in the same pass (else an empty list); `None`, writing
/// nothing, when the component's topics are too sparse among all topics for the tables below
/// or its members have too few cells each.
///
/// The same cells as [`write_cells`] (and counts as [`write_counted`]), more cheaply: the
/// `i`-th subscriber of a topic is the `i`-th member, ascending, to subscribe to it, so a
/// cursor per topic (its next cell's number) numbers the cells while `of` is written in order,
/// and a member's rack, read once, picks the row of counts its cells add to. Every table a
/// cell reads is indexed by the topic's place in the span of the component's topic indices
/// and sized to that span, so one comparison per cell stands for every bounds check.
fn by_member<const COUNT: bool>(
    x: &Scope<'_, '_>,
    counts: &Counts,
    first: &[u32],
    start: &[u32],
    of: &mut [(u32, u32)],
) -> Option<Vec<u32>> {
    let topics = &x.comp.topics;
    let (&low, &high) = (topics.first()?, topics.last()?);
    let span = (high - low) as usize + 1;
    // With other components' topics between its own, past twice as many, the tables cost
    // more than the topic-by-topic pass; so does the pass's work per member (a call, a row
    // picked) when members have few cells (measured: 10 topics, 100 members, +0.1%). Tests
    // take this pass whenever the span allows, so that their small groups check it.
    let few = cfg!(not(test)) && of.len() < 16 * x.comp.members.len();
    if span > 2 * topics.len() || few {
        return None;
    }
    // Per topic index in the span: its local topic and its next cell's number, as the cell
    // it numbers next (entries of topics off the component are never read: members
    // subscribe to its topics only).
    let mut next = vec![(u32::MAX, 0u32); span];
    for ((lt, &t), &at) in topics.iter().enumerate().zip(first) {
        if let Some(e) = next.get_mut((t - low) as usize) {
            *e = (lt as u32, at);
        }
    }
    let width = x.racks + 1;
    let rack = super::rechoice::rack_indices(x.member_bit, x.racks);
    // With `COUNT`: per rack index, per topic index in the span, the subscribers counted.
    let mut by_rack = vec![0u32; if COUNT { width * span } else { 0 }];
    let next = &mut next[..span];
    for ((&m, &r), at) in x.comp.members.iter().zip(&rack).zip(start.windows(2)) {
        let subscriptions = &x.problem.subscriptions[m as usize];
        let Some(mine) = of.get_mut(at[0] as usize..at[1] as usize) else {
            continue;
        };
        let row = if COUNT {
            by_rack.get_mut(r * span..(r + 1) * span)
        } else {
            None
        };
        write_member(subscriptions, low, mine, next, row);
    }
    debug_assert!(
        topics
            .iter()
            .zip(&first[1..])
            .all(|(&t, &end)| next[(t - low) as usize].1 == end),
        "a topic's cells are not its subscribers"
    );
    if !COUNT {
        return Some(Vec::new());
    }
    // The counts as [`Cells`] keeps them, by (topic, rack) node.
    let mut per_rack = vec![0u32; counts.subs.len() * width];
    for (&t, node) in topics.iter().zip(per_rack.chunks_exact_mut(width)) {
        let k = (t - low) as usize;
        for (r, n) in node.iter_mut().enumerate() {
            *n = by_rack.get(r * span + k).copied().unwrap_or(0);
        }
    }
    Some(per_rack)
}

/// [`by_member`]'s pass over one member: its `subscriptions` (topic indices) written as its
/// cells into `mine`, numbered from `next` (by topic index less `low`), each counted in `row`
/// (of the member's rack, as long as `next`) when given. A function of its own, never
/// inlined, so that its few pointers stay in registers (inlined, the outer pass spilled
/// them, several loads per cell).
#[inline(never)]
fn write_member(
    subscriptions: &[u32],
    low: u32,
    mine: &mut [(u32, u32)],
    next: &mut [(u32, u32)],
    row: Option<&mut [u32]>,
) {
    let cells = subscriptions.iter().zip(mine);
    match row {
        Some(row) => {
            // Both as long (they are): one comparison per cell checks both.
            let len = next.len().min(row.len());
            let (next, row) = (&mut next[..len], &mut row[..len]);
            for (&t, cell) in cells {
                let k = t.wrapping_sub(low) as usize;
                if let (Some(e), Some(n)) = (next.get_mut(k), row.get_mut(k)) {
                    *cell = *e;
                    e.1 += 1;
                    *n += 1;
                }
            }
        }
        None => {
            for (&t, cell) in cells {
                if let Some(e) = next.get_mut(t.wrapping_sub(low) as usize) {
                    *cell = *e;
                    e.1 += 1;
                }
            }
        }
    }
}

/// Writes every cell into `of`, topics ascending, each at its member's cursor (from `start`).
fn write_cells(counts: &Counts, start: &[u32], of: &mut [(u32, u32)]) {
    let mut cursor: Vec<u32> = start[..start.len() - 1].to_vec();
    // Cells are numbered topic by topic, the order of this pass.
    let mut c = 0u32;
    for (lt, subs) in counts.subs.iter().enumerate() {
        for &lm in subs {
            let at = &mut cursor[lm as usize];
            if let Some(cell) = of.get_mut(*at as usize) {
                *cell = (lt as u32, c);
            }
            c += 1;
            *at += 1;
        }
    }
    debug_assert!(
        cursor.iter().zip(&start[1..]).all(|(c, s)| c == s),
        "a member's cells are not its subscriptions"
    );
}

/// [`write_cells`], counting in the same pass each topic's subscribers per rack index (the
/// `per_rack` of [`Cells`], returned): each member's rack index sits beside its cursor, so a
/// cell costs one more read of what the cursor's read brought, not a look-up of its own.
fn write_counted(
    x: &Scope<'_, '_>,
    counts: &Counts,
    start: &[u32],
    of: &mut [(u32, u32)],
) -> Vec<u32> {
    let width = x.racks + 1;
    let rack = super::rechoice::rack_indices(x.member_bit, x.racks);
    let mut cursor: Vec<(u32, u32)> = start[..start.len() - 1]
        .iter()
        .zip(&rack)
        .map(|(&at, &r)| (at, r as u32))
        .collect();
    let mut per_rack = vec![0u32; counts.subs.len() * width];
    let mut c = 0u32;
    for ((lt, subs), node) in counts
        .subs
        .iter()
        .enumerate()
        .zip(per_rack.chunks_exact_mut(width))
    {
        for &lm in subs {
            let (at, r) = &mut cursor[lm as usize];
            if let Some(cell) = of.get_mut(*at as usize) {
                *cell = (lt as u32, c);
            }
            c += 1;
            *at += 1;
            if let Some(n) = node.get_mut(*r as usize) {
                *n += 1;
            }
        }
    }
    debug_assert!(
        cursor.iter().zip(&start[1..]).all(|(c, s)| c.0 == *s),
        "a member's cells are not its subscriptions"
    );
    per_rack
}

/// Whether the `i`-th subscriber of local topic `lt` gains from its extra: it holds more
/// keepable claims of it than f_t (the keepable claims are those [`super::super::choose`]
/// counted).
fn gains(counts: &Counts, lt: usize, i: u32) -> bool {
    #[cfg(test)]
    if GAINING_GIVEN.with(std::cell::Cell::get) {
        return false;
    }
    counts.gaining[lt].get(i as usize) == Some(&true)
}

impl Exchange {
    /// Applies the exchange to `counts` (loads do not change).
    pub(super) fn apply(&self, counts: &mut Counts) {
        hand(counts, self.topic, self.giver, self.receiver);
        #[cfg(test)]
        if ONE_SIDED.with(std::cell::Cell::get) {
            return;
        }
        hand(counts, self.other, self.receiver, self.giver);
    }

    /// Takes back an exchange [`Exchange::apply`] made.
    pub(super) fn undo(&self, counts: &mut Counts) {
        hand(counts, self.topic, self.receiver, self.giver);
        #[cfg(test)]
        if ONE_SIDED.with(std::cell::Cell::get) {
            return;
        }
        hand(counts, self.other, self.giver, self.receiver);
    }
}

/// Moves local topic `lt`'s extra from local member `from` to local member `to` (both
/// subscribers, `from` chosen, `to` not), keeping `chosen[lt]` ascending.
fn hand(counts: &mut Counts, lt: usize, from: u32, to: u32) {
    let subs = &counts.subs[lt];
    let (Ok(i), Ok(j)) = (subs.binary_search(&from), subs.binary_search(&to)) else {
        return;
    };
    let chosen = &mut counts.chosen[lt];
    if let Ok(at) = chosen.binary_search(&(i as u32)) {
        chosen.remove(at);
    }
    if let Err(at) = chosen.binary_search(&(j as u32)) {
        chosen.insert(at, j as u32);
    }
}

/// The exchange of the [module docs](self) for local topic `lt`, whose deal failed with
/// `reached` the full racks its stuck partitions can reach, or `None`; `refused` are
/// exchanges with a topic dealt already that did not work out. Exchanges giving up no gaining
/// cell first; failing those, trades of gaining cells that lose none on balance.
pub(super) fn find(
    x: &Scope<'_, '_>,
    counts: &Counts,
    lt: usize,
    reached: u64,
    refused: &[Exchange],
) -> Option<Exchange> {
    let cells = x.cells.get_or_init(|| Cells::new(x, counts));
    // The counts do not change between the two searches: one table of holders serves both.
    let holding = cells.holding(counts);
    let within = Within {
        cells,
        holding: &holding,
    };
    search(x, &within, counts, lt, reached, refused, true)
        .or_else(|| search(x, &within, counts, lt, reached, refused, false))
}

/// The component's cells and, per cell, whether its subscriber holds the topic's extra (as
/// [`Cells::holding`] writes it), for [`search`].
struct Within<'c> {
    cells: &'c Cells,
    holding: &'c [u64],
}

/// [`find`]'s search: with `strict`, only exchanges where neither extra given up is a gaining
/// cell; otherwise any whose gaining cells received are at least those given up.
fn search(
    x: &Scope<'_, '_>,
    within: &Within<'_>,
    counts: &Counts,
    lt: usize,
    reached: u64,
    refused: &[Exchange],
    strict: bool,
) -> Option<Exchange> {
    let subs = &counts.subs[lt];
    let (cells, holding) = (within.cells, within.holding);
    let held = |c: usize| holding[c / 64] >> (c % 64) & 1 == 1;
    let holds = |o: usize, i: u32| held(cells.id(o, i));
    let gains = |o: usize, i: u32| gains(counts, o, i);
    let bit = |lm: u32| x.member_bit[lm as usize];
    let givers: Vec<(u32, bool)> = (0..subs.len() as u32)
        .zip(subs)
        .filter(|&(i, &lm)| holds(lt, i) && bit(lm) & reached == 0)
        .map(|(i, &lm)| (lm, gains(lt, i)))
        .filter(|&(_, gain)| !(strict && gain))
        .collect();
    if givers.is_empty() {
        return None;
    }
    // Topics as bits, 64 to a word. Per giver: the topics it subscribes to without holding
    // their extra (`wants`; never lt, whose extra it holds), and among those the ones whose
    // extra it gains from (`takes`).
    let words = counts.subs.len().div_ceil(64);
    let set = |row: &mut [u64], o: u32| row[o as usize / 64] |= 1 << (o % 64);
    let mut wants = vec![0u64; givers.len() * words];
    let mut takes = vec![0u64; givers.len() * words];
    for (g, &(u, _)) in givers.iter().enumerate() {
        let row = g * words..(g + 1) * words;
        for &(o, c) in cells.of(u) {
            if !held(c as usize) {
                set(&mut wants[row.clone()], o);
                if gains(o as usize, cells.index(o as usize, c)) {
                    set(&mut takes[row.clone()], o);
                }
            }
        }
    }
    // Per receiver: the topics whose extra it holds (`offers`; never lt) and among those the
    // ones it gains from (`gives`).
    let mut offers = vec![0u64; words];
    let mut gives = vec![0u64; words];
    let mut dealt: Option<Exchange> = None;
    for (iv, &v) in (0..subs.len() as u32)
        .zip(subs)
        .filter(|&(i, &lm)| !holds(lt, i) && bit(lm) & reached != 0)
    {
        offers.fill(0);
        gives.fill(0);
        for &(o, c) in cells.of(v) {
            if held(c as usize) {
                set(&mut offers, o);
                if gains(o as usize, cells.index(o as usize, c)) {
                    set(&mut gives, o);
                }
            }
        }
        // Strict: only extras v does not gain from.
        if strict {
            for (offer, give) in offers.iter_mut().zip(&gives) {
                *offer &= !give;
            }
        }
        if offers.iter().all(|&w| w == 0) {
            continue;
        }
        let v_gains = !strict && gains(lt, iv);
        for (g, &(u, u_gives)) in givers.iter().enumerate() {
            // Strict: nothing given up (the givers and offers are filtered). Otherwise the
            // gaining cells received (v's of lt, u's of o) must make up for those given up
            // (u's of lt, v's of o): [u takes o] − [v gives o] ≥ [u gives] − [v gains].
            let need = i32::from(u_gives) - i32::from(v_gains);
            for w in 0..words {
                let (want, take) = (wants[g * words + w], takes[g * words + w]);
                let mut found = offers[w] & want;
                if !strict {
                    match need {
                        1 => found &= take & !gives[w],
                        0 => found &= take | !gives[w],
                        _ => {}
                    }
                }
                while found != 0 {
                    let o = w * 64 + found.trailing_zeros() as usize;
                    found &= found - 1;
                    let e = Exchange {
                        topic: lt,
                        other: o,
                        giver: u,
                        receiver: v,
                    };
                    if o > lt {
                        return Some(e);
                    }
                    if dealt.is_none() && !refused.contains(&e) {
                        dealt = Some(e);
                    }
                }
            }
        }
    }
    dealt
}

/// Applies exchange `e` (its topic's deal has been taken back). When its other topic is dealt
/// already, takes that deal back and deals it again with the new counts; if that fails, the
/// exchange is undone, the other topic dealt as before, and false returned.
pub(super) fn exchange_with(
    deal: &mut super::RackDeal,
    x: &Scope<'_, '_>,
    masks: &[Vec<u64>],
    counts: &mut Counts,
    e: Exchange,
    lists: &mut [Vec<(u32, i32)>],
) -> bool {
    e.apply(counts);
    #[cfg(test)]
    EXCHANGED.with(|c| c.set(c.get() + 1));
    if e.other > e.topic {
        return true;
    }
    let t = x.comp.topics[e.other];
    let subscribers = &x.problem.subscribers[t as usize];
    let retract = |lists: &mut [Vec<(u32, i32)>]| {
        for &m in subscribers {
            lists[m as usize].retain(|&(y, _)| y != t);
        }
    };
    retract(lists);
    if super::deal_topic(deal, x, masks, counts, e.other, lists) {
        return true;
    }
    retract(lists);
    e.undo(counts);
    #[cfg(test)]
    EXCHANGED.with(|c| c.set(c.get() - 1));
    // The same counts as before: the same deal, which succeeded.
    let again = super::deal_topic(deal, x, masks, counts, e.other, lists);
    debug_assert!(again, "a topic dealt before fails with the same counts");
    false
}
