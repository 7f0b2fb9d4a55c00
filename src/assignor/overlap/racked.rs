//! The count path for overlapping components where rack alignment is possible, used when its
//! result carries a certificate of optimality and left to the general flow of
//! [`super::super::uniform`] otherwise.
//!
//! # The certificate
//!
//! The argument of [`super::super::aligned`] does not depend on every member subscribing to
//! every topic. Call partition p of topic t *alignable* when some subscriber of t runs in one
//! of p's replica racks, and a claim on p *keepable* when p is not alignable or its owner runs
//! in one of p's replica racks (k_tm: member m's keepable partitions of t).
//!
//! 1. Spread and balance depend on the counts alone: a balance-optimal assignment is one whose
//!    extras y minimise Σ (B_m + e_m)², as in the [parent module](super).
//! 2. If some balance-optimal assignment aligns every alignable partition, so does every
//!    assignment B optimal for objectives 1–4. Every partition B keeps is then keepable (an
//!    alignable one is kept by an owner aligned with it), so B keeps at most
//!    Σ min(k_tm, c_tm) for its counts c_tm = f_t + y_tm.
//! 3. [`super::choose`] on the keepable claims returns a balance-optimal y maximising that
//!    sum (its gaining cells are those with k_tm > f_t). If every member then keeps
//!    min(k_tm, c_tm) of its keepable partitions and every alignable partition left over can
//!    be placed aligned, the result meets every bound: it is optimal for objectives 1–5.
//!
//! The partitions left over are placed per topic by the rack-aware path's small maximum flow
//! ([`Transport`](super::super::aligned::transport::Transport)): alignable ones grouped by the racks of the topic's subscribers among
//! their replicas (a bit mask), each group to the racks of its mask, each rack up to the room
//! its subscribers have left. When it cannot place them all, the repairs below run. Where
//! every topic of the component has f_t = 0 and no member holds a keepable claim, a
//! component that needs more than [`RECHOICE_AFTER`] exchanges across topics (or runs out
//! of them) first has the extras of the cells that gain nothing chosen again across the
//! whole component by one bipartite flow ([`rechoice`]; tried once per component): the
//! gaining cells keep their extras, every member its number of extras and every topic its
//! r_t, so loads and Σ min(k_tm, c_tm) stay and the counts stay optimal for step 3; when that
//! flow places every left-over partition aligned (or where none can be), every topic is
//! dealt again with the new counts, and each deal then succeeds. When it cannot (or spends
//! its work bound), the counts are left as they were and the repairs go on. When some claim
//! left over for want of its owner's room has a mask within the full racks
//! the stuck groups reach (`reached`), the topic is first dealt again with the same counts, members keeping first
//! the claims whose masks lie within those racks, so that the claims they free can go
//! elsewhere: a
//! member keeps min(k_tm, c_tm) claims either way, so every bound of step 3 still holds. When
//! that does not place them all either, extras of that topic move from
//! chosen members in racks the stuck groups cannot use to unchosen members in racks they can
//! ([`swap_extras`]): each from a member u at load L + 1 to a member v at load L, so that the
//! two loads trade places; u gains nothing from it (k_tu ≤ f_t) or, when no such move
//! exists, both gain (k_tu > f_t and k_tv > f_t). The latter is a join's case: the member
//! left without the topic's partition may hold a claim the joiner's rack cannot align, while
//! the one in the joiner's rack that could free an alignable claim gains from its extra. The
//! move changes Σ min(k_tm, c_tm) by [k_tv > f_t] − [k_tu > f_t], which is 0 in both cases
//! (it cannot be positive: the counts of [`super::choose`] maximise it), and keeps the
//! multiset of loads, so the counts stay optimal for step 3, and the topic is dealt again
//! (a few rounds at most). Where no such pair exists (every load equal, as in a full
//! assignment), two members trade extras of two topics ([`exchange`]): u hands its extra of
//! the stuck topic to v, v hands u its extra of another topic both subscribe to, neither
//! giving up a gaining cell or, failing such a pair, giving up no more gaining cells than
//! they receive. Every load stays as it was and no gaining cell is lost on balance, so the
//! counts stay optimal for step 3 again; the other topic is dealt (again, if it was dealt
//! already) with the new counts, and the exchange is taken back when that fails. At most
//! [`MAX_EXCHANGES`] are tried per component. When none helps either, or a topic's
//! partitions fall into more than [`MAX_GROUPS`] masks, [`assign`] takes back what it wrote
//! and runs the exact flow with floors of [`floors`] (every member in a rack): a min-cost
//! flow over counts that lets members give up keepable claims and move extras jointly with
//! the alignment, accepted only when it aligns every alignable partition at the balance
//! optimum of the counts. When
//! that declines too, or the component's members run in more than 64 racks, [`assign`]
//! returns false with nothing written; the caller runs the general flow, which is exact in
//! every case.
//!
//! # Tie rule (objective 6)
//!
//! The extras of [`super::choose`] on the keepable claims, re-chosen across the component where
//! [`rechoice`] succeeds (its own rule: the start from the counts the exchanges before it
//! left, then augmenting paths in canonical order), with the exchanges above (within a
//! topic: givers that gain nothing before gaining ones, then the first giver and the first
//! receiver in subscriber order; across topics: as [`exchange`] says); then, per topic: each
//! member keeps
//! its keepable partitions up to c_tm, lowest numbers first (after a failed deal of the
//! topic: first those whose masks lie within the racks it found full, then the others); the small flow splits every group
//! over racks (its own order: groups in mask order, racks in name order); each rack's
//! partitions, ascending, fill its subscribers with room in id order; the partitions that
//! cannot be aligned, ascending, fill the room left in id order. All of it reads only the
//! canonical order. Where the exact flow assigns the component, its own tie rule applies
//! (see [`floors`]).
//!
//! # Complexity
//!
//! That of [`super::choose`], plus O(P·ρ) for the masks (ρ replicas per partition, each
//! found among the racks by [`RackBits`]) and one small flow per topic, O(|Sub(t)|²) per
//! exchange round in the worst case (rounds and exchanges are bounded); an exchange across
//! topics costs a search over pairs of subscribers, their topics compared as bit words
//! (O(|Sub(t)|² · ⌈topics/64⌉) at worst, found early in practice, after a cell table of
//! O(Σ_t |Sub(t)|) built once per component) and a deal or two. When the certificate
//! fails, that of the exact flow ([`floors`]: one network over counts, never a partition ×
//! member product).

use super::super::aligned::MAX_GROUPS;
use super::super::components::Component;
use super::super::problem::Problem;
use super::super::racks::{RackBits, is_keepable};
use super::choose;
use exchange::{Exchange, exchange_with};

mod deal;
pub(crate) mod exchange;
pub(crate) mod floors;
pub(crate) mod rechoice;
mod swap;

use deal::{RackDeal, deal_topic};
use swap::swap_extras;

#[cfg(test)]
thread_local! {
    /// Tests only: the components this path was tried on, on this thread.
    pub(crate) static TRIED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Tests only: the components whose result it certified.
    pub(crate) static CERTIFIED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Tests only: a planted fault, every claim counted as keepable.
    pub(crate) static ALL_KEEPABLE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: the deals tried again keeping claims within the full racks first.
    pub(crate) static KEPT_WITHIN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Tests only: a planted fault, claims kept first take no room.
    pub(crate) static EARLY_FREE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: the gaining extras [`swap_extras`] traded to gaining receivers.
    pub(crate) static TRADED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Tests only: a planted fault, [`swap_extras`] trades gaining extras to receivers as
    /// heavy as the giver (not one lighter).
    pub(crate) static EQUAL_LOADS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether this path applies to `comp`: its members do not all subscribe to the same topics,
/// and some partition can be aligned.
pub(crate) fn applies(problem: &Problem<'_>, comp: &Component, rack_aware: bool) -> bool {
    !comp.homogeneous(problem) && comp.alignable(problem, rack_aware)
}

/// Assigns `comp` optimally for objectives 1–5 when the certificate of the
/// [module docs](self) holds or, failing it, the exact flow of [`floors`] certifies its
/// result, appending to `lists` and returning true; otherwise leaves `lists` as they were
/// and returns false. Requires [`applies`].
pub(crate) fn assign(
    problem: &Problem<'_>,
    comp: &Component,
    owners: &[Vec<(i32, u32)>],
    lists: &mut [Vec<(u32, i32)>],
) -> bool {
    #[cfg(test)]
    TRIED.with(|c| c.set(c.get() + 1));
    let Some(racks) = RackBits::new(problem, comp) else {
        return false;
    };
    let index = comp.local_index(problem.members.len());
    let local = |m: u32| index.get(comp, m);
    let member_bit = racks.member_bits(problem, comp);
    #[cfg(test)]
    let all_keepable = ALL_KEEPABLE.with(std::cell::Cell::get);
    #[cfg(not(test))]
    let all_keepable = false;
    let Front {
        masks,
        claim_masks,
        claim_start,
        keepable,
        claim_at,
        claim_at_start,
        strays,
    } = if comp.holds_every_member(problem.members.len()) {
        // A component of every member numbers them as the problem does.
        front(
            problem,
            comp,
            owners,
            &racks,
            &member_bit,
            |m| m as usize,
            all_keepable,
        )
    } else {
        front(
            problem,
            comp,
            owners,
            &racks,
            &member_bit,
            local,
            all_keepable,
        )
    };
    // A joiner's extra is best taken from a holder whose freed partition it can align.
    let suits = |lt: usize, from: usize, to: usize| {
        let m = problem.subscribers[comp.topics[lt] as usize][to];
        claim_masks[claim_start[lt]..claim_start[lt + 1]]
            .get(from)
            .is_some_and(|&mask| mask & member_bit[local(m)] != 0)
    };
    let mut counts = choose(problem, comp, &keepable, &suits);
    let before: Vec<usize> = comp
        .members
        .iter()
        .map(|&m| lists[m as usize].len())
        .collect();
    counts.reserve(comp, lists);
    let mut deal = RackDeal::new(counts.widest, racks.len());
    let scope = exchange::Scope {
        problem,
        comp,
        member_bit: &member_bit,
        racks: racks.len(),
        keepable: &keepable,
        claim_at: &claim_at,
        claim_at_start: &claim_at_start,
        keep_within: vec![std::cell::Cell::new(0); comp.topics.len()],
        cells: std::cell::OnceCell::new(),
    };
    let mut refused: Vec<Exchange> = Vec::new();
    let mut exchanges = 0;
    // The re-choice of extras across the component is tried once, after a few exchanges.
    let mut rechoice = true;
    let mut lt = 0;
    'topics: while lt < comp.topics.len() {
        let t = comp.topics[lt];
        let subscribers = &problem.subscribers[t as usize];
        let mut rounds = 0;
        loop {
            if deal_topic(&mut deal, &scope, &masks, &counts, lt, lists) {
                break;
            }
            // The failed deal only appended pairs of t, and no list ended with one before
            // (a failed deal is always taken back, and exchanges re-deal other topics).
            for &m in subscribers {
                let list = &mut lists[m as usize];
                while list.last().is_some_and(|&(y, _)| y == t) {
                    list.pop();
                }
            }
            // First the same counts again, members keeping first the claims that only the
            // stuck racks can align (freeing others), when such a claim was left over.
            let within = scope.keep_within[lt].get();
            let reached = deal.flow.reached;
            if reached & !within != 0 && deal.released.iter().any(|&m| m != 0 && m & !reached == 0)
            {
                #[cfg(test)]
                KEPT_WITHIN.with(|c| c.set(c.get() + 1));
                scope.keep_within[lt].set(within | deal.flow.reached);
                continue;
            }
            let mut moved =
                rounds < MAX_SWAP_ROUNDS && swap_extras(&scope, &mut counts, lt, &deal.flow);
            rounds += 1;
            while !moved && exchanges < MAX_EXCHANGES {
                if exchanges == RECHOICE_AFTER
                    && std::mem::take(&mut rechoice)
                    && rechoice::rechoose(&scope, &masks, racks.len(), &mut counts)
                {
                    // Every topic is dealt again with the new counts (each deal then succeeds).
                    for (&m, &len) in comp.members.iter().zip(&before) {
                        lists[m as usize].truncate(len);
                    }
                    lt = 0;
                    continue 'topics;
                }
                let reached = deal.flow.reached;
                let Some(e) = exchange::find(&scope, &counts, lt, reached, &refused) else {
                    break;
                };
                exchanges += 1;
                moved = exchange_with(&mut deal, &scope, &masks, &mut counts, e, lists);
                if !moved {
                    refused.push(e);
                }
            }
            if !moved {
                for (&m, &len) in comp.members.iter().zip(&before) {
                    lists[m as usize].truncate(len);
                }
                if std::mem::take(&mut rechoice)
                    && rechoice::rechoose(&scope, &masks, racks.len(), &mut counts)
                {
                    lt = 0;
                    continue 'topics;
                }
                // The exact flow declines a keepable claim off the topic's subscribers (it
                // reads every owner's index from `claim_at`); there are none in practice.
                if strays {
                    return false;
                }
                // The exchanges kept the multiset of loads: the counts still carry the
                // balance optimum that the exact flow compares against.
                let inputs = floors::Inputs {
                    problem,
                    comp,
                    member_bit: &member_bit,
                    racks: racks.len(),
                    masks: &masks,
                    keepable: &keepable,
                    claim_at: &claim_at,
                    claim_at_start: &claim_at_start,
                    counts: &counts,
                };
                return floors::assign(&inputs, lists);
            }
        }
        lt += 1;
    }
    #[cfg(test)]
    CERTIFIED.with(|c| c.set(c.get() + 1));
    true
}

/// What [`assign`] reads of every topic before choosing the counts.
struct Front {
    /// Per local topic: every partition's mask among its subscribers' racks.
    masks: Vec<Vec<u64>>,
    /// Per local topic, per subscriber: the racks its keepable claims could be aligned in,
    /// all in one buffer (`claim_start[lt]..claim_start[lt + 1]`, empty for a topic without
    /// keepable claims): one allocation instead of one per topic.
    claim_masks: Vec<u64>,
    /// Per local topic: where its claim masks start (one more entry at the end).
    claim_start: Vec<usize>,
    /// Per topic: the keepable claims.
    keepable: Vec<Vec<(i32, u32)>>,
    /// Per keepable claim, topic after topic: its owner's index among the topic's
    /// subscribers, found once here rather than at every deal of the topic.
    claim_at: Vec<u32>,
    /// Per local topic: where its claims start in `claim_at` (one more entry at the end).
    claim_at_start: Vec<usize>,
    /// Whether some keepable claim's owner does not subscribe to its topic (its `claim_at`
    /// is then no index of it).
    strays: bool,
}

/// The [`Front`] of `comp`, `local(m)` the position of member m in `comp.members` and
/// `member_bit` the rack bit per local member; `all_keepable` (a planted fault) keeps every
/// claim. Its own function, generic in `local`: inside [`assign`], whose many live values
/// kept every pointer of the per-claim loop on the stack, a claim cost about twice the
/// instructions.
#[inline(never)]
fn front(
    problem: &Problem<'_>,
    comp: &Component,
    owners: &[Vec<(i32, u32)>],
    racks: &RackBits<'_>,
    member_bit: &[u64],
    local: impl Fn(u32) -> usize,
    all_keepable: bool,
) -> Front {
    let mut masks: Vec<Vec<u64>> = Vec::with_capacity(comp.topics.len());
    let mut claim_masks: Vec<u64> = Vec::with_capacity(
        comp.topics
            .iter()
            .map(|&t| problem.subscribers[t as usize].len())
            .sum(),
    );
    let mut claim_start: Vec<usize> = Vec::with_capacity(comp.topics.len() + 1);
    let mut keepable: Vec<Vec<(i32, u32)>> = vec![Vec::new(); problem.topics.len()];
    // At most one per claim: room made once (pushed one by one into an empty vector, it was
    // reallocated a dozen times).
    let mut claim_at: Vec<u32> =
        Vec::with_capacity(comp.topics.iter().map(|&t| owners[t as usize].len()).sum());
    let mut claim_at_start: Vec<usize> = Vec::with_capacity(comp.topics.len() + 1);
    // Per local member: its rack bit and its index among the current topic's subscribers,
    // side by side (one look-up of a claim's owner reads both).
    let mut at: Vec<(u64, u32)> = member_bit.iter().map(|&bit| (bit, 0)).collect();
    let mut strays = false;
    // The racks of the component's members: a topic's subscribers seldom need all be read to
    // find them all.
    let every_rack = member_bit.iter().fold(0u64, |acc, &bit| acc | bit);
    for &t in &comp.topics {
        let subscribers = &problem.subscribers[t as usize];
        let owned = &owners[t as usize];
        // With few claims for its subscribers, each owner is searched for among them (the
        // subscribers are ascending); with more, one pass over the subscribers sets their
        // slots (read only for the claims below) and their racks.
        let search = 4 * owned.len() < subscribers.len();
        let present = if search {
            let mut present = 0u64;
            for &m in subscribers {
                present |= at[local(m)].0;
                if present == every_rack {
                    break;
                }
            }
            present
        } else {
            let mut present = 0u64;
            for (i, &m) in subscribers.iter().enumerate() {
                let entry = &mut at[local(m)];
                present |= entry.0;
                entry.1 = i as u32;
            }
            present
        };
        let mut topic_masks: Vec<u64> = Vec::with_capacity(problem.partitions(t) as usize);
        racks.extend_masks(problem, t, &mut topic_masks);
        // Only racks where some subscriber of the topic runs can align its partitions.
        for mask in &mut topic_masks {
            *mask &= present;
        }
        // The keepable claims (those `keepable_claims` keeps, in order), each with its
        // owner's index among the subscribers and its mask added to the owner's: one pass,
        // one look-up of each owner.
        let start = claim_masks.len();
        claim_start.push(start);
        let a0 = claim_at.len();
        claim_at_start.push(a0);
        if !owned.is_empty() {
            claim_masks.resize(start + subscribers.len(), 0u64);
        }
        // Written in place (within the room made above), cut to the claims kept.
        claim_at.resize(a0 + owned.len(), 0);
        let topic = Topic {
            owned,
            subscribers,
            masks: &topic_masks,
            all_keepable,
        };
        let claim_mask = &mut claim_masks[start..];
        let (dropped, stray) = if search {
            let owner = |m: u32| {
                let i = subscribers.binary_search(&m).map_or(u32::MAX, |i| i as u32);
                (at[local(m)].0, i)
            };
            topic.keep(&owner, claim_mask, &mut claim_at[a0..])
        } else {
            topic.keep(&|m: u32| at[local(m)], claim_mask, &mut claim_at[a0..])
        };
        // Most topics keep every claim: a copy, not a push of each.
        let kept = if dropped == 0 {
            owned.to_vec()
        } else {
            let bit = |m: u32| at[local(m)].0;
            let kept = topic.compact(&bit, &mut claim_at[a0..]);
            claim_at.truncate(a0 + kept.len());
            kept
        };
        strays |= stray;
        // A topic without keepable claims has no claim masks (`suits` reads none).
        if kept.is_empty() {
            claim_masks.truncate(start);
        }
        keepable[t as usize] = kept;
        masks.push(topic_masks);
    }
    claim_start.push(claim_masks.len());
    claim_at_start.push(claim_at.len());
    Front {
        masks,
        claim_masks,
        claim_start,
        keepable,
        claim_at,
        claim_at_start,
        strays,
    }
}

/// What [`front`] reads of one topic to keep its claims.
struct Topic<'a> {
    /// The topic's claims (partition, member), ascending by partition.
    owned: &'a [(i32, u32)],
    subscribers: &'a [u32],
    /// Per partition: its mask among the subscribers' racks.
    masks: &'a [u64],
    /// A planted fault: every claim kept.
    all_keepable: bool,
}

impl Topic<'_> {
    /// Writes each claim's owner index among the subscribers (`owner(m)`: member m's rack bit
    /// and index) to `claim_at` (room for every claim) and adds each keepable one's mask to
    /// its owner's in `claim_mask` (one per subscriber); returns how many claims are not
    /// keepable and whether some keepable one's owner does not subscribe. Its own function:
    /// inside [`front`], whose vectors kept every pointer of this loop on the stack, a claim
    /// cost about twice the instructions.
    #[inline(never)]
    fn keep(
        &self,
        owner: &impl Fn(u32) -> (u64, u32),
        claim_mask: &mut [u64],
        claim_at: &mut [u32],
    ) -> (usize, bool) {
        let (mut dropped, mut stray) = (0, false);
        // Cut to equal lengths, so that one check of an index covers both slices.
        let subs = claim_mask.len().min(self.subscribers.len());
        let (claim_mask, subscribers) = (&mut claim_mask[..subs], &self.subscribers[..subs]);
        for (&(p, m), c) in self.owned.iter().zip(claim_at.iter_mut()) {
            let (bit, i) = owner(m);
            let mask = self.masks[p as usize];
            *c = i;
            if !(self.all_keepable || is_keepable(mask, bit)) {
                dropped += 1;
                continue;
            }
            // Claims are on subscribers only (see `claims::previous_owners`); the check
            // costs less than a search.
            let i = i as usize;
            debug_assert_eq!(subscribers.get(i), Some(&m), "a claim off the subscribers");
            match claim_mask.get_mut(i) {
                Some(own) if subscribers[i] == m => *own |= mask,
                _ => stray = true,
            }
        }
        (dropped, stray)
    }

    /// After [`Topic::keep`] found claims that are not keepable: the keepable ones, in order,
    /// their owner indices moved to the front of `claim_at` (as [`Topic::keep`] wrote them).
    fn compact(&self, bit: &impl Fn(u32) -> u64, claim_at: &mut [u32]) -> Vec<(i32, u32)> {
        let mut kept = Vec::with_capacity(self.owned.len());
        for (k, &(p, m)) in self.owned.iter().enumerate() {
            let bit = bit(m);
            if self.all_keepable || is_keepable(self.masks[p as usize], bit) {
                claim_at[kept.len()] = claim_at[k];
                kept.push((p, m));
            }
        }
        kept
    }
}

/// How many times a topic's extras are exchanged within the topic before [`assign`] stops
/// trying that.
const MAX_SWAP_ROUNDS: usize = 4;

/// How many exchanges across topics ([`exchange`]) a component tries before the re-choice
/// of [`rechoice`] (a few exchanges cost less than its network; many cost more).
const RECHOICE_AFTER: usize = 2;

/// How many exchanges across topics ([`exchange`]) a component may try before [`assign`]
/// gives up: each costs a search and a deal or two, and a full assignment needs a few.
const MAX_EXCHANGES: usize = 64;
