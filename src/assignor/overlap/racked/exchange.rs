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

use super::super::super::components::{Component, LocalIndex};
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
    /// Local member indices of the component's members.
    pub index: &'a LocalIndex,
    /// Per local member: its rack's bit.
    pub member_bit: &'a [u64],
    /// Per topic: the keepable claims (partition, member), ascending by partition.
    pub keepable: &'a [Vec<(i32, u32)>],
    /// Per local topic, per subscriber index: its keepable claims, counted on the topic's
    /// first use (topics no exchange looks at never pay for it).
    pub held: Vec<std::cell::OnceCell<Vec<u32>>>,
    /// Per local topic: racks such that a member keeps first its claims whose masks lie
    /// within them (0: lowest numbers first). Set after a deal of the topic failed with
    /// those racks full; which claims a member keeps changes neither its count nor how many
    /// it keeps, only which partitions are left over.
    pub keep_within: Vec<std::cell::Cell<u64>>,
}

impl Scope<'_, '_> {
    /// The keepable claims of local topic `lt` held by its `i`-th subscriber.
    fn held(&self, lt: usize, i: usize) -> u32 {
        let held = self.held[lt].get_or_init(|| {
            let t = self.comp.topics[lt] as usize;
            let subscribers = &self.problem.subscribers[t];
            let mut held = vec![0u32; subscribers.len()];
            for &(_, m) in &self.keepable[t] {
                if let Ok(i) = subscribers.binary_search(&m) {
                    held[i] += 1;
                }
            }
            held
        });
        held[i]
    }
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

/// Whether local member `lm` holds an extra of local topic `lt` in `counts`.
fn holds(counts: &Counts, lt: usize, lm: u32) -> bool {
    counts.subs[lt]
        .binary_search(&lm)
        .is_ok_and(|i| counts.chosen[lt].binary_search(&(i as u32)).is_ok())
}

/// Whether local member `lm` gains from an extra of local topic `lt`: it holds more keepable
/// claims of it than f_t.
fn gains(x: &Scope<'_, '_>, counts: &Counts, lt: usize, lm: u32) -> bool {
    #[cfg(test)]
    if GAINING_GIVEN.with(std::cell::Cell::get) {
        return false;
    }
    counts.subs[lt]
        .binary_search(&lm)
        .is_ok_and(|i| x.held(lt, i) > counts.floor[lt])
}

/// The local topics `lm` subscribes to, ascending.
fn topics_of(x: &Scope<'_, '_>, lm: u32) -> impl Iterator<Item = usize> {
    let m = x.comp.members[lm as usize];
    x.problem.subscriptions[m as usize]
        .iter()
        .map(|&t| x.comp.topics.partition_point(|&y| y < t))
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
    search(x, counts, lt, reached, refused, true)
        .or_else(|| search(x, counts, lt, reached, refused, false))
}

/// [`find`]'s search: with `strict`, only exchanges where neither extra given up is a gaining
/// cell; otherwise any whose gaining cells received are at least those given up.
fn search(
    x: &Scope<'_, '_>,
    counts: &Counts,
    lt: usize,
    reached: u64,
    refused: &[Exchange],
    strict: bool,
) -> Option<Exchange> {
    let subs = &counts.subs[lt];
    let mut chosen = vec![false; subs.len()];
    for &i in &counts.chosen[lt] {
        chosen[i as usize] = true;
    }
    let bit = |lm: u32| x.member_bit[lm as usize];
    let givers: Vec<(u32, bool)> = subs
        .iter()
        .zip(&chosen)
        .filter(|&(&lm, &c)| c && bit(lm) & reached == 0)
        .map(|(&lm, _)| (lm, gains(x, counts, lt, lm)))
        .filter(|&(_, gain)| !(strict && gain))
        .collect();
    if givers.is_empty() {
        return None;
    }
    let mut dealt: Option<Exchange> = None;
    for (&v, _) in subs
        .iter()
        .zip(&chosen)
        .filter(|&(&lm, &c)| !c && bit(lm) & reached != 0)
    {
        // The topics where v holds an extra (one it does not gain from, when strict).
        let offers: Vec<(usize, bool)> = topics_of(x, v)
            .filter(|&o| o != lt && holds(counts, o, v))
            .map(|o| (o, gains(x, counts, o, v)))
            .filter(|&(_, gain)| !(strict && gain))
            .collect();
        if offers.is_empty() {
            continue;
        }
        let v_gains = !strict && gains(x, counts, lt, v);
        for &(u, u_gives) in &givers {
            let mut wanted = topics_of(x, u).peekable();
            for &(o, v_gives) in &offers {
                while wanted.next_if(|&w| w < o).is_some() {}
                if wanted.peek() != Some(&o) || holds(counts, o, u) {
                    continue;
                }
                // Strict: nothing given up. Otherwise the gaining cells received (v's of lt,
                // u's of o) must make up for those given up (u's of lt, v's of o).
                if !strict {
                    let u_takes = gains(x, counts, o, u);
                    let kept = i32::from(v_gains) + i32::from(u_takes);
                    if kept < i32::from(u_gives) + i32::from(v_gives) {
                        continue;
                    }
                }
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
    dealt
}
