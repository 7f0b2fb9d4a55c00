//! The exact fast path of the uniform v2 assignor for a *homogeneous* component (every member
//! subscribes to every topic) in which rack alignment is possible, used when its result
//! carries a certificate of optimality and left to the general flow of [`super::uniform`]
//! otherwise.
//!
//! # The certificate
//!
//! Call partition p of topic t *alignable* when some member of the component runs in one of
//! p's replica racks (every member subscribes to t). No assignment aligns more partitions
//! than are alignable. Call a previous owner's claim on p *keepable* when p is not alignable
//! or its owner runs in one of p's replica racks; let k_tm count member m's keepable
//! partitions of t.
//!
//! 1. Spread and balance are as in [`super::homogeneous`]: with f_t = ⌊P_t/n⌋ and
//!    r_t = P_t mod n, an assignment is balance-optimal iff the extras y_tm (m gets f_t + 1
//!    of t) have column sums r_t and row sums q = ⌊E/n⌋ or q + 1 (E = Σ r_t).
//! 2. Suppose an assignment A with such a y aligns *every* alignable partition. Then A is
//!    optimal for rack alignment (it meets the bound), and so is every assignment B that is
//!    optimal for objectives 1–4: B aligns every alignable partition too. So every partition
//!    that B keeps is keepable (an alignable one is kept by an owner that is aligned with it),
//!    and B keeps at most Σ_tm min(k_tm, c_tm) for its counts c_tm = f_t + y_tm.
//! 3. [`homogeneous::choose_extras`] on the keepable claims maximises exactly that bound over
//!    every balance-optimal y. If every member then keeps min(k_tm, c_tm) of its keepable
//!    partitions and the partitions left over can be placed so that every alignable one is
//!    aligned, the result meets every bound: it is optimal for objectives 1–5.
//!
//! The partitions left over are placed by a small maximum flow per topic: alignable ones
//! grouped by the set of member racks among their replicas (a bit mask), each group to the
//! racks of its mask, each rack up to the room its members have left. When the flow cannot
//! place all of them (the extras fell on the wrong racks, or the kept partitions used the
//! room an alignable group needs), the [rack-aware flow of extras](extras) chooses again
//! with the racks in view; it is exact where every topic has f_t = 0 (members may then give
//! up a claim for another partition, which the bound above does not foresee: on joins and
//! leaves that is often what the optimum does) and is certified by the bound above
//! elsewhere. When neither holds and every member runs in a rack, the [flow with
//! floors](floors) decides (on components of [`FINAL_REFUSAL_MIN_MEMBERS`] or more racked
//! members with some topic of f_t > 0 it runs straight after the greedy, and below
//! [`FLOORS_FIRST_MAX_MEMBERS`] members instead of the greedy: it succeeds
//! whenever the flow of extras would, since a flow of full value there is an assignment
//! that is balance-optimal and aligns every alignable partition): it lets every member keep
//! any of its keepable claims in every topic, and is exact wherever it has a flow of full
//! value (none means that no assignment aligns every alignable partition). Otherwise
//! [`assign`] gives up, writes nothing, and the caller runs the general flow, which is exact
//! in every case. It also gives up when the component's members run in more than 64 racks
//! or a topic's partitions fall into more than [`MAX_GROUPS`] masks (keeping the small flows
//! small), the latter checked before anything else is done (with at most 8 racks no topic
//! can have that many).
//!
//! # Choosing extras that leave alignable partitions alignable
//!
//! Which members get the extras decides where room is left. On components of at least
//! [`homogeneous::DIRECT_MIN_MEMBERS`] members where no keepable claim gains (a first
//! assignment), every choice meets the bound of step 3, so the rotation is tried first and
//! the deal's check alone decides ([`homogeneous::quick_extras`]; it skips the greedy's
//! ranking of every member for every topic). When that deal does not fit on a racked first
//! assignment of [`FINAL_REFUSAL_MIN_MEMBERS`] or more members where every topic is open, a
//! placement steered by rack quotas ([`keep_all::fresh`], certified like [`keep_all`]'s)
//! comes next. Otherwise, or when that does not place everything either, the
//! choice of step 3 runs as the homogeneous greedy with a [repair](fit) ([`homogeneous::Choice::Repaired`]): after the
//! greedy picks a topic's members, the small flow checks that topic, and chosen members are
//! exchanged (within the topic, or across with an earlier topic) until it fits. A topic that
//! cannot be made to fit sends the greedy round again with that topic first (a few times at
//! most); after that, or when the greedy misses its bound, the homogeneous flow chooses the
//! extras without regard to racks and the deal's own check decides. The repair only steers a
//! heuristic: the greedy's bound and the deal's check are what certify.
//!
//! On racked components of [`FINAL_REFUSAL_MIN_MEMBERS`] or more members, where an exact flow
//! follows, the repair's first refusal is final (it decides only which exact construction
//! runs), and where every topic is open a cheap placement of the left-over partitions keeping
//! every claim, or as many as balance allows ([`keep_all`]), runs first: when it places them
//! all, its result is returned (it meets every bound, see [`keep_all`]'s certificate); when
//! it fails keeping every claim, one-for-one exchanges moving the fewest claims (a maximum
//! flow shows how few) are tried and returned when found, else the greedy is not run and
//! the (there exact) flow of extras decides. Where every topic has a floor instead
//! (P_t ≥ n), that placement generalised to floors ([`keep_all::floored`]) runs first: its
//! result is returned when it places everything (its own certificate); its failure proves
//! nothing, and everything below runs as before.
//!
//! # Tie rule (objective 6)
//!
//! Where [`keep_all`]'s placement (or [`keep_all::floored`]'s) succeeds, its own tie rule. Otherwise the extras: the
//! rotation where it is tried and fits, else where [`keep_all::fresh`]'s placement places
//! everything its tie rule, else [`homogeneous::choose_extras`] on the keepable
//! claims with the repair above (every step reads the canonical order). Then, per topic:
//! each member keeps its own keepable partitions up to
//! c_tm, lowest numbers first; the small flow splits every group over racks (groups in mask
//! order first send straight to the racks of their mask in name order while those have room,
//! then breadth-first augmenting paths move the rest), each group's partitions ascending
//! going to its racks in name order; a rack's partitions, ascending, fill its members with room in id order; the
//! partitions that cannot be aligned, ascending, fill the room left in member id order. When
//! that does not fit, or where [`keep_all`]'s placement failed and the greedy was not run,
//! the rack-aware flow's result with its own tie rule (see [`extras`]), and after it the flow
//! with floors' (see [`floors`]); on racked components of [`FINAL_REFUSAL_MIN_MEMBERS`] to
//! [`FLOORS_FIRST_MAX_MEMBERS`] members with some topic of f_t > 0, the flow with floors'
//! wherever [`keep_all::floored`]'s placement and the quick choice do not succeed.
//! All of it reads only the canonical [`Problem`] order.
//!
//! # Complexity
//!
//! O(P·ρ + claims + Σ_t |Sub(t)|) for masks (ρ replicas per partition, one lookup by
//! [`RackBits`] each), the choice of extras as in [`super::homogeneous`] plus one small flow
//! per topic (at most [`MAX_GROUPS`] masks × R racks, each augmentation placing at least one
//! partition); an exchange costs O(n) plus a few small flows, one across topics also
//! O(P_j) per earlier topic looked at, and exchanges are bounded per topic. No partition ×
//! member product is built.

use super::components::{Component, LocalIndex};
use super::homogeneous::{self, Choice, Route};

mod deal;
mod extras;
mod fit;
mod floors;
mod keep_all;
pub(crate) mod transport;

use super::problem::Problem;
use super::racks::{RackBits, keepable_claims};
use deal::Deal;
#[cfg(test)]
pub(crate) use extras::warm_tally as extras_warm_tally;
use fit::Fit;
#[cfg(test)]
pub(crate) use fit::{planted as fit_planted, tally};
#[cfg(test)]
pub(crate) use floors::preset::{EXTRAS_BY_ID, NO_KEEPS};
#[cfg(test)]
pub(crate) use floors::tally as floors_tally;
use keep_all::Placement;
#[cfg(test)]
pub(crate) use keep_all::exchange_tally;
#[cfg(test)]
pub(crate) use keep_all::floored::tally as floored_tally;
#[cfg(test)]
pub(crate) use keep_all::fresh::tally as fresh_tally;
#[cfg(test)]
pub(crate) use keep_all::tally as keep_all_tally;

/// The most distinct rack masks among a topic's left-over alignable partitions that the small
/// flow accepts; beyond that the general flow runs instead.
pub(crate) const MAX_GROUPS: usize = 256;

/// The fewest members of a racked component on which the repair's first refusal is final
/// (see [`assign`]'s body): below it the greedy's reruns are cheap and often succeed.
const FINAL_REFUSAL_MIN_MEMBERS: usize = 16;

/// The most members (exclusive) of a racked component with some topic of f_t > 0 on which the
/// flow with floors runs straight after [`keep_all::floored`] fails, without the repaired
/// greedy first. Measured on racked bucket joins and leaves (f_t = 2): on components of 19
/// to 61 members the greedy's repair refused at a late topic every time, costing 15–20 % of
/// the call for nothing; on 101 and 201 members it passed, and the flow with floors instead
/// would have cost about 3× the whole call.
const FLOORS_FIRST_MAX_MEMBERS: usize = 64;

/// Whether this path may apply to `comp`: rack awareness on, every member subscribes to every
/// topic, at most 64 racks among the members, and some partition can be aligned (otherwise
/// [`super::homogeneous`] applies).
pub(crate) fn applies(problem: &Problem<'_>, comp: &Component, rack_aware: bool) -> bool {
    if !rack_aware || !comp.homogeneous(problem) || homogeneous::applies(problem, comp, true) {
        return false;
    }
    comp.racks(problem).len() <= 64
}

/// Assigns the partitions of `comp` (where [`applies`] holds) optimally for objectives 1–5
/// when the certificate of the module docs holds, appending `(topic, partition)` pairs to
/// `lists`, and returns how the extras were chosen. Returns `None` and leaves `lists` as it
/// found them when the certificate fails. `owners` are the previous owners per topic.
pub(crate) fn assign(
    problem: &Problem<'_>,
    comp: &Component,
    owners: &[Vec<(i32, u32)>],
    lists: &mut [Vec<(u32, i32)>],
) -> Option<Route> {
    assign_as(problem, comp, owners, lists, Variant::Exact)
}

/// The exact path, or a deliberately broken variant that tests show the oracles catch.
#[derive(Clone, Copy, PartialEq, Eq)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) enum Variant {
    /// The path of the module docs.
    Exact,
    /// Every claim counts as keepable, aligned with its owner or not.
    AllClaimsKeepable,
    /// No check that left-over partitions can be aligned: the extras are the greedy's
    /// unrepaired, and what the small flow cannot align goes anywhere.
    NoTransportCheck,
    /// The rack-aware flow keeps first in every topic (no topic open) and its result is
    /// used even when it keeps fewer than the bound: an over-generous certificate.
    KeepFirstTrusted,
    /// The quick choice of extras is the rotation even where cells gain, accepted on the
    /// deal's check alone: it may keep fewer claims than the bound.
    QuickIgnoresGains,
    /// The flow with floors ([`floors`]) runs without the flow of extras before it, and its
    /// keep edges cost nothing: it aligns and balances, but keeps claims only by chance.
    FloorsIgnoreKeeps,
    /// Where the flow with floors runs instead of the repaired greedy (racked components
    /// below [`FLOORS_FIRST_MAX_MEMBERS`] members with a floor), its keep edges cost nothing.
    FloorsFirstIgnoreKeeps,
}

/// [`assign`] as `variant`.
pub(crate) fn assign_as(
    problem: &Problem<'_>,
    comp: &Component,
    owners: &[Vec<(i32, u32)>],
    lists: &mut [Vec<(u32, i32)>],
    variant: Variant,
) -> Option<Route> {
    let n = comp.members.len();
    // Bit i of a mask is rack i, in name order.
    let racks = RackBits::new(problem, comp).filter(|_| n > 0)?;
    let index = comp.local_index(problem.members.len());
    let local = |m: u32| index.get(comp, m);
    let member_bit = racks.member_bits(problem, comp);
    // Masks of every partition of the component's topics, and the keepable claims.
    let mut masks: Vec<u64> = Vec::new();
    let mut mask_start: Vec<usize> = Vec::with_capacity(comp.topics.len());
    // R racks make at most 2^R − 1 distinct non-zero masks: with few, no topic has too many.
    let few_racks = (1usize << racks.len().min(16)) - 1 <= MAX_GROUPS;
    let mut keepable: Vec<Vec<(i32, u32)>> = vec![Vec::new(); owners.len()];
    // With a dense index, every member's rack bit by its id (0 for other components'
    // members, which claim nothing here): one read per claim instead of two.
    let bit_by_id: Option<Vec<u64>> = match &index {
        LocalIndex::Dense(table) => Some(
            table
                .iter()
                .map(|&lm| member_bit.get(lm as usize).copied().unwrap_or(0))
                .collect(),
        ),
        LocalIndex::Search => None,
    };
    for &t in &comp.topics {
        let start = masks.len();
        mask_start.push(start);
        racks.extend_masks(problem, t, &mut masks);
        let topic_masks = &masks[start..];
        if !few_racks && too_many_masks(topic_masks) {
            // The small flows (and the repair's group lists) would grow with the partitions.
            return None;
        }
        let every_claim = variant == Variant::AllClaimsKeepable;
        let claims = &owners[t as usize];
        keepable[t as usize] = match &bit_by_id {
            Some(bits) => keepable_claims(claims, topic_masks, |m| bits[m as usize], every_claim),
            None => keepable_claims(claims, topic_masks, |m| member_bit[local(m)], every_claim),
        };
    }

    let mut deal = Deal::new(n, variant != Variant::NoTransportCheck);
    let mut rack_members: Vec<Vec<u32>> = vec![Vec::new(); racks.len()];
    for (lm, &bit) in member_bit.iter().enumerate() {
        if bit != 0 {
            rack_members[bit.trailing_zeros() as usize].push(lm as u32);
        }
    }
    let ctx = Context {
        problem,
        comp,
        index: &index,
        masks: &masks,
        mask_start: &mask_start,
        keepable: &keepable,
        rack_members: &rack_members,
        member_bit: &member_bit,
        racks: racks.len(),
    };
    homogeneous::reserve(problem, comp, lists);
    // With every member racked, an exact construction follows (the flow of extras where every
    // topic is open, else the flow with floors): on components large enough for the greedy's
    // reruns to cost more than that flow, the first topic the repair cannot make fit ends the
    // greedy's attempts.
    let final_refusal = matches!(variant, Variant::Exact | Variant::FloorsFirstIgnoreKeeps)
        && n >= FINAL_REFUSAL_MIN_MEMBERS
        && member_bit.iter().all(|&bit| bit != 0);
    // Where every topic is open as well, the placement keeping every claim is tried first: it
    // is optimal when it places everything; when it fails, the greedy is not run and the flow
    // of extras (there exact, needing no bound) decides (see `keep_all`). A component with a
    // keepable claim in an open topic has a gaining cell, so the quick choice below would not
    // apply where the placement is tried.
    let all_open = comp
        .topics
        .iter()
        .all(|&t| (problem.partitions(t) as usize) < n);
    let skip_greedy = if final_refusal && all_open {
        match keep_all::place(&ctx, &member_bit, lists) {
            Placement::Placed => return Some(Route::Direct),
            Placement::Failed => true,
            Placement::Untried => false,
        }
    } else {
        false
    };
    // Where every topic has a floor (P_t ≥ n), its generalisation: certified when it places
    // everything, and a failure proves nothing (see `keep_all::floored`).
    if final_refusal
        && comp
            .topics
            .iter()
            .all(|&t| problem.partitions(t) as usize >= n)
        && keep_all::floored::place(&ctx, &member_bit, lists)
    {
        return Some(Route::Direct);
    }
    // Some topic has a floor on a racked component of middling size: the flow with floors
    // decides (see below) unless the quick choice fits first. That choice needs a component
    // with no gaining cell (it has at least `DIRECT_MIN_MEMBERS` members here), so where a
    // cell gains, found at the first topic that has one, the extras are not built at all.
    let floors_first = final_refusal && !all_open && n < FLOORS_FIRST_MAX_MEMBERS;
    let first_ignores_keeps = variant == Variant::FloorsFirstIgnoreKeeps;
    // Where the placement keeping every claim failed, it found a keepable claim (it is not
    // tried without one), in an open topic: a gaining cell, so the quick choice below does
    // not apply, and the greedy is not run either. The extras are not built then.
    let mut pending = if skip_greedy {
        None
    } else if floors_first && n >= homogeneous::DIRECT_MIN_MEMBERS {
        match homogeneous::Extras::unless_gain(problem, comp, &keepable) {
            Some(extras) => Some(extras),
            None => {
                return floors::assign(&ctx, &member_bit, lists, first_ignores_keeps)
                    .then_some(Route::Flow);
            }
        }
    } else {
        Some(homogeneous::Extras::new(problem, comp, &keepable))
    };
    // The cheap choice first: when it exists it uses the most gaining cells of any
    // balance-optimal choice, so the deal's check is all the certificate still needs.
    if variant != Variant::NoTransportCheck
        && let Some(extras) = pending.take()
    {
        match quick_extras(extras, n, variant) {
            Ok((mut quick, route)) => {
                let chosen_by_topic = quick
                    .topics()
                    .iter()
                    .map(|x| (x.topic, x.chosen.as_slice()));
                if deal.all(&ctx, chosen_by_topic, lists) {
                    #[cfg(test)]
                    tally::add_quick();
                    return Some(route);
                }
                quick.clear_chosen();
                pending = Some(quick);
            }
            Err(untouched) => pending = Some(untouched),
        }
    }
    // A first assignment whose rotation did not fit: the placement steered by rack quotas
    // before the repaired greedy (certified like the placement keeping every claim).
    if final_refusal && all_open && keep_all::fresh::place(&ctx, &member_bit, lists) {
        return Some(Route::Direct);
    }
    // Some topic has a floor on a racked component of middling size: the flow with floors
    // decides alone. It is exact, and it has a flow of full value whenever the repaired
    // greedy's result would pass the deal's check (that result is balance-optimal and aligns
    // every alignable partition), so skipping the greedy loses no certified result, only
    // the greedy's tie rule where it would have passed.
    if floors_first {
        return floors::assign(&ctx, &member_bit, lists, first_ignores_keeps)
            .then_some(Route::Flow);
    }
    let mut fit = Fit::new(
        problem,
        comp,
        &index,
        &masks,
        &mask_start,
        &keepable,
        &member_bit,
        racks.len(),
        variant != Variant::NoTransportCheck,
    );
    fit.final_refusal = final_refusal;
    let (extras, route) = match pending {
        Some(pending) if !skip_greedy => {
            homogeneous::choose_from(pending, n, Choice::Repaired(&mut fit))
        }
        _ => (Vec::new(), Route::Flow),
    };
    let chosen_by_topic = extras.iter().map(|x| (x.topic, x.chosen.as_slice()));
    if !skip_greedy && !fit.gave_up() && deal.all(&ctx, chosen_by_topic, lists) {
        return Some(route);
    }
    // Some topic's left-over alignable partitions do not fit with the choice made without
    // looking at them all at once: the rack-aware flow chooses again (see `extras`). Where
    // some topic keeps first and every member is racked on a large component, the flow with
    // floors follows if it fails: that flow succeeds whenever this one would (a flow of full
    // value here is an assignment both balance-optimal and aligning every alignable
    // partition, which the flow with floors represents) and needs no bound, so it runs alone.
    let floors_alone = fit.final_refusal && !all_open;
    if variant != Variant::FloorsIgnoreKeeps
        && !floors_alone
        && let Some(chosen) = extras::choose(
            &fit,
            racks.len(),
            &extras,
            variant == Variant::KeepFirstTrusted,
        )
        && deal.chosen(&ctx, &chosen, lists)
    {
        return Some(Route::Flow);
    }
    // Its keep-first topics could not meet the bound (or nothing fits them): the exact flow
    // with floors, where every member is racked (see `floors`).
    let ignore_keeps = variant == Variant::FloorsIgnoreKeeps;
    floors::assign(&ctx, &member_bit, lists, ignore_keeps).then_some(Route::Flow)
}

/// [`homogeneous::quick_extras`] on the keepable claims' `extras` (given back where the
/// greedy would be needed), or in [`Variant::QuickIgnoresGains`] the rotation on every
/// component where the quick choice is tried, whoever gains.
fn quick_extras(
    mut extras: homogeneous::Extras,
    n: usize,
    variant: Variant,
) -> Result<(homogeneous::Extras, Route), homogeneous::Extras> {
    if variant == Variant::QuickIgnoresGains && n >= homogeneous::DIRECT_MIN_MEMBERS {
        extras.rotate(n);
        return Ok((extras, Route::Rotation));
    }
    homogeneous::quick_extras(extras, n)
}

/// What every topic's deal reads.
struct Context<'a, 'p> {
    problem: &'a Problem<'p>,
    comp: &'a Component,
    index: &'a LocalIndex,
    /// Masks of every partition of the component's topics, from `mask_start[i]` for the i-th.
    masks: &'a [u64],
    mask_start: &'a [usize],
    /// Keepable claims per topic.
    keepable: &'a [Vec<(i32, u32)>],
    /// Local members per rack, ascending.
    rack_members: &'a [Vec<u32>],
    /// Per local member, the bit of its rack (0 for none).
    member_bit: &'a [u64],
    racks: usize,
}

impl Context<'_, '_> {
    /// The masks of the i-th topic `t` of the component.
    fn topic_masks(&self, i: usize, t: u32) -> &[u64] {
        let count = self.problem.partitions(t) as usize;
        &self.masks[self.mask_start[i]..self.mask_start[i] + count]
    }
}

/// Whether a topic's partitions fall into more than [`MAX_GROUPS`] distinct non-zero masks.
fn too_many_masks(masks: &[u64]) -> bool {
    let mut seen: Vec<u64> = Vec::new();
    for &mask in masks {
        if mask != 0
            && let Err(i) = seen.binary_search(&mask)
        {
            if seen.len() == MAX_GROUPS {
                return true;
            }
            seen.insert(i, mask);
        }
    }
    false
}

/// The lengths of the component's members' lists.
fn lengths(comp: &Component, lists: &[Vec<(u32, i32)>]) -> Vec<usize> {
    comp.members
        .iter()
        .map(|&m| lists[m as usize].len())
        .collect()
}

/// Truncates the component's members' lists back to `before`.
fn restore(comp: &Component, before: &[usize], lists: &mut [Vec<(u32, i32)>]) {
    for (&m, &len) in comp.members.iter().zip(before) {
        lists[m as usize].truncate(len);
    }
}
