//! The exact count path of the uniform v2 assignor for a component whose members subscribe to
//! different (overlapping) sets of topics, when no partition can be aligned.
//!
//! # Why counts of extras decide everything
//!
//! The argument of [`super::homogeneous`] carries over with one change: loads no longer start
//! equal. For each topic t with subscribers, f_t = ⌊P_t/|Sub(t)|⌋ and r_t = P_t mod |Sub(t)|;
//! spread (objective 2) gives every subscriber f_t or f_t + 1 partitions of t, exactly r_t of
//! them the extra one. Write y_tm ∈ {0, 1} for "m gets the extra of t" (m ∈ Sub(t), column
//! sums r_t). Member m's load is B_m + e_m with B_m = Σ_{t∋m} f_t fixed and e_m = Σ_t y_tm.
//!
//! No partition can be aligned, so objective 4 is the same for every assignment. Once the
//! counts c_tm = f_t + y_tm are fixed, the [deal](super::deal) keeps Σ min(o_tm, c_tm)
//! partitions, the most any assignment with those counts keeps (o_tm: partitions of t whose
//! previous owner is m). Hence
//!
//! ```text
//! kept(y) = Σ_tm min(o_tm, f_t) + #{(t, m) : y_tm = 1 and o_tm > f_t}
//! ```
//!
//! and the lexicographic optimum of objectives 1–5 is a y minimising Σ_m (B_m + e_m)², then
//! using the most *gaining cells* (o_tm > f_t), followed by the deal.
//!
//! # Choosing the extras
//!
//! A min-cost max-flow with the project's solver ([`super::flow`]), costs ordered
//! lexicographically (balance, then stickiness):
//!
//! ```text
//! source → topic t       cap r_t                                 (every t with r_t > 0)
//! topic t → member m     cap 1, cost −1 if o_tm > f_t else 0     (m ∈ Sub(t))
//! member m → sink        convex: k-th unit costs 2(B_m + k) − 1   (cap: m's topics with r_t > 0)
//! ```
//!
//! Every y with column sums r_t is a flow of value Σ_t r_t (a topic gives at most one extra
//! per subscriber; r_t < |Sub(t)|), which saturates the source: the integral maximum flows are
//! exactly these y. The convex edge of m costs Σ_{k ≤ e_m} (2(B_m + k) − 1) = (B_m + e_m)² − B_m²,
//! so a minimum-cost one minimises Σ load² first and then uses the most gaining cells.
//!
//! # The proposal, and bounds that make the flow unnecessary
//!
//! A proposal is built first: every gaining cell, except that where a topic has fewer extras
//! than gaining cells, the members that would be heaviest with all of theirs give theirs up;
//! the extras left handed to the lightest subscribers with room; then, if the bounds below
//! are not met yet, up to [`MAX_MOVES`](super::warm::MAX_MOVES) moves of an extra towards a
//! light member from a holder at least two units heavier, one that does not gain from it
//! where one of the heaviest does not ([`pull`]). It is accepted without any flow when it
//! meets two bounds; otherwise it warm-starts the solver, which uses it only if it can
//! certify it, so that it then decides the speed, never the result.
//!
//! *Balance.* Drop the topics from the problem: any e with 0 ≤ e_m ≤ d_m (d_m: m's topics with
//! r_t > 0) and Σ e_m = E = Σ r_t. Every y gives such an e, so this relaxation's minimum of
//! Σ (B_m + e_m)² is a lower bound. Its objective is separable and convex over a box cut by
//! one sum, so e is a minimum iff no unit can move from a member with e_u > 0 to a member
//! with e_v < d_v that is two or more units lighter: with L the lightest load among members
//! with room, every member with extras is at L + 1 or below. A proposal passing that test
//! reaches the bound, so it is balance-optimal, and so is every y whose e is a minimum of the
//! relaxation, and no other.
//!
//! *Stickiness.* Every minimum e of the relaxation has lo_m ≤ e_m ≤ hi_m with lo_m =
//! clamp(L − B_m, 0, d_m), hi_m = clamp(L + 1 − B_m, 0, d_m), and exactly E − Σ lo_m members at
//! hi_m > lo_m. (If e'_m > hi_m then m is at L + 2 or more while some v with e'_v < e_v has
//! room and is at L or below: a move improves e'. Symmetrically for e'_m < lo_m.) A member
//! uses at most min(G_m, e_m) gaining cells (G_m: its gaining cells), a topic at most
//! min(r_t, g_t) (g_t: its gaining cells), so no balance-optimal y uses more than
//!
//! ```text
//! min( Σ_t min(r_t, g_t),  Σ_m min(G_m, lo_m) + min(E − Σ_m lo_m, #{m : hi_m > lo_m, G_m > lo_m}) )
//! ```
//!
//! A balance-optimal proposal that uses that many is optimal for objectives 3 and 5 (and 4,
//! which is constant). The bounds cost O(Σ_t |Sub(t)| + n).
//!
//! # Tie rule (objective 6)
//!
//! The proposal when it meets the bounds, else the solver's flow on the network built in
//! topic-name then member-id order, warm-started from that proposal; then the deal. Both are
//! built in the canonical order only. Input order never reaches either. This may pick a
//! different optimum than the general flow of [`super::uniform`] would; objectives 1–5 are
//! equal.
//!
//! # Complexity
//!
//! Counting claims, the proposal's hand-out (a few passes over each topic's subscribers),
//! the bounds and the deal: O(P + claims + Σ_t |Sub(t)|), plus O(moves × log n) per tracked
//! move. A topic with few claims for its subscribers finds its gaining cells from its
//! claimants' positions (O(claims × log |Sub(t)|) by search, or one pass writing positions,
//! whichever costs less), and the deal reads those positions instead of writing every
//! subscriber's ([`cells`]). When the bounds fail ([`extras`]), the network has one node per
//! topic with extras and per member, and Σ_{t : r_t > 0} |Sub(t)| + K + n edges: one per
//! subscription, never one per partition (the general flow has one node per class and one per
//! needed (member, topic) pair besides). The solver's cost is that of [`super::flow`] on it.

use super::components::Component;
use super::deal::{Dealer, Topic};
use super::gallop::gallop;
use super::problem::Problem;
use super::warm::{Proposal, Ragged};
use bounds::{Bounds, balanced};
use cells::{Cells, by_position, locate};
use extras::{member_edges, solve_extras};
use pull::pull;

mod bounds;
pub(crate) mod cells;
mod extras;
mod pull;
pub(crate) mod racked;

#[cfg(test)]
thread_local! {
    /// Tests only: the components assigned by this path on this thread.
    pub(crate) static TAKEN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Tests only: the components whose proposal met the bounds (no flow solved).
    pub(crate) static BOUNDED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Tests only: a planted fault, the proposal is accepted without checking its bounds.
    pub(crate) static TRUST_PROPOSAL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: a planted fault, the gaining cells cost nothing (stickiness ignored).
    pub(crate) static GAINS_IGNORED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: a planted fault, the dealer's slots are never set, as if no topic had
    /// claims (all stay 0, so the dealer reads the first subscriber's room for every claim).
    pub(crate) static SLOTS_UNSET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether this path applies to `comp`: its members do not all subscribe to the same topics
/// (those go to [`super::homogeneous`]), and no partition can be aligned.
pub(crate) fn applies(problem: &Problem<'_>, comp: &Component, rack_aware: bool) -> bool {
    !comp.homogeneous(problem) && !comp.alignable(problem, rack_aware)
}

/// Assigns the partitions of `comp` optimally for objectives 1–5 (the [module docs](self)),
/// appending `(topic, partition)` pairs to `lists` by member. `owners` are the previous owners
/// per topic, as from `claims::previous_owners`. Requires [`applies`].
pub(crate) fn assign(
    problem: &Problem<'_>,
    comp: &Component,
    owners: &[Vec<(i32, u32)>],
    lists: &mut [Vec<(u32, i32)>],
) {
    #[cfg(test)]
    TAKEN.with(|c| c.set(c.get() + 1));
    let Choice {
        mut proposal,
        widest,
        claimants,
        ..
    } = choose_with(problem, comp, owners, None, true);
    for (&m, &load) in comp.members.iter().zip(&proposal.load) {
        lists[m as usize].reserve_exact(load as usize);
    }
    // A component of every member numbers them as the problem does: its slots are read by
    // member index directly.
    if comp.holds_every_member(problem.members.len()) {
        let local = |m: u32| m as usize;
        deal(
            problem,
            comp,
            owners,
            &claimants,
            &mut proposal,
            widest,
            local,
            lists,
        );
    } else {
        let index = comp.local_index(problem.members.len());
        let local = |m: u32| index.get(comp, m);
        deal(
            problem,
            comp,
            owners,
            &claimants,
            &mut proposal,
            widest,
            local,
            lists,
        );
    }
}

/// The deal of every topic of `comp` by the counts of `proposal` (used up), `local(m)` the
/// position of member m in `comp.members`; `claimants` as [`Choice::claimants`].
#[allow(clippy::too_many_arguments)]
fn deal(
    problem: &Problem<'_>,
    comp: &Component,
    owners: &[Vec<(i32, u32)>],
    claimants: &[u32],
    proposal: &mut Proposal,
    widest: usize,
    local: impl Fn(u32) -> usize,
    lists: &mut [Vec<(u32, i32)>],
) {
    let mut slot = vec![0u32; comp.members.len()];
    let mut dealer = Dealer::new(widest);
    let mut next = 0;
    for (lt, &t) in comp.topics.iter().enumerate() {
        // The dealer asks for the slots of claimants only: none to set without claims (a
        // full assignment's every topic).
        let (claims, subs) = (&owners[t as usize][..], &proposal.subs[lt]);
        #[cfg(test)]
        let set = !SLOTS_UNSET.with(std::cell::Cell::get);
        #[cfg(not(test))]
        let set = true;
        if claims.is_empty() {
        } else if by_position(claims.len(), subs.len()) {
            // The claimants' positions, found by the choice.
            let at = &claimants[next..next + claims.len()];
            next += claims.len();
            for (&(_, m), &i) in claims.iter().zip(at).filter(|_| set) {
                slot[local(m)] = i;
            }
        } else if set {
            for (i, &lm) in subs.iter().enumerate() {
                slot[lm as usize] = i as u32;
            }
        }
        let topic = Topic {
            topic: t,
            partitions: problem.partitions(t),
            subscribers: &problem.subscribers[t as usize],
            owners: &owners[t as usize],
        };
        let room = &mut proposal.count[lt];
        dealer.topic_counted(&topic, room, |m| slot[local(m)] as usize, lists);
    }
}

/// The counts chosen for a component: every subscriber of local topic lt gets `floor[lt]`
/// partitions of it, and those at the indices `chosen[lt]` one more.
pub(crate) struct Counts {
    /// Per local topic: f_t.
    pub floor: Vec<u32>,
    /// Per local topic: its subscribers as local member indices, ascending.
    pub subs: Ragged<u32>,
    /// Per local topic: indices into `subs[lt]` of the members given an extra, ascending.
    pub chosen: Vec<Vec<u32>>,
    /// Per local member: its load.
    pub load: Vec<i64>,
    /// Per local topic, per subscriber index: whether it gains from the topic's extra (holds
    /// more than f_t of the claims [`choose`] was given); an empty list: none does.
    pub gaining: Vec<Vec<bool>>,
    /// The most subscribers any topic has.
    pub widest: usize,
}

impl Counts {
    /// Reserves every member's list to its final length (room made once, not by doubling).
    pub fn reserve(&self, comp: &Component, lists: &mut [Vec<(u32, i32)>]) {
        for (&m, &load) in comp.members.iter().zip(&self.load) {
            lists[m as usize].reserve_exact(load as usize);
        }
    }
}

/// The counts of the [module docs](self) for `comp`, optimal for balance and then for the
/// gaining cells of `owners` (previous owners per topic, ascending by partition; only their
/// counts per member matter). `suits(lt, holder, receiver)` (indices among local topic lt's
/// subscribers) steers the proposal's moves only (see [`pull`]), never the optimality.
pub(crate) fn choose(
    problem: &Problem<'_>,
    comp: &Component,
    owners: &[Vec<(i32, u32)>],
    suits: &dyn Fn(usize, usize, usize) -> bool,
) -> Counts {
    let Choice {
        floor,
        proposal,
        chosen,
        cells,
        widest,
        ..
    } = choose_with(problem, comp, owners, Some(suits), false);
    let gaining = cells.into_lists();
    // Per topic: the indices of the subscribers given its extra, sized once (a topic's
    // extras are exactly r_t).
    let chosen = chosen.unwrap_or_else(|| {
        (0..proposal.subs.len())
            .map(|lt| {
                let f = proposal.floor[lt];
                let mut chosen = Vec::with_capacity(proposal.extra[lt] as usize);
                for (i, &k) in proposal.count[lt].iter().enumerate() {
                    if k > f {
                        chosen.push(i as u32);
                    }
                }
                chosen
            })
            .collect()
    });
    Counts {
        floor,
        subs: proposal.subs,
        chosen,
        load: proposal.load,
        gaining,
        widest,
    }
}

/// What [`choose_with`] chose: `proposal.count` and `proposal.load` are the chosen counts per
/// subscriber and the loads.
struct Choice {
    /// Per local topic: f_t.
    floor: Vec<u32>,
    proposal: Proposal,
    /// Per local topic: the subscribers given its extra, when the flow chose them (else read
    /// off `proposal.count`).
    chosen: Option<Vec<Vec<u32>>>,
    /// The gaining cells (their flags as [`Counts::gaining`]).
    cells: Cells,
    /// As [`Counts::widest`].
    widest: usize,
    /// Per claim of `owners` on a topic that finds its cells by position (see
    /// [`cells::by_position`]), topic after topic in `comp.topics` order: the claimant's index
    /// among the topic's subscribers.
    claimants: Vec<u32>,
}

/// [`choose`], with no `suits` when no holder suits a move better than another, and the
/// counts left per subscriber; with `dealt`, [`deal`] follows and reads
/// [`Choice::claimants`] (else that is empty, and the cells are found by the pass over the
/// subscribers on every topic).
fn choose_with(
    problem: &Problem<'_>,
    comp: &Component,
    owners: &[Vec<(i32, u32)>],
    suits: Option<&dyn Fn(usize, usize, usize) -> bool>,
    dealt: bool,
) -> Choice {
    let n = comp.members.len();
    // A component of every member numbers them as the problem does (no index needed).
    let whole = comp.holds_every_member(problem.members.len());
    let index = (!whole).then(|| comp.local_index(problem.members.len()));
    let subscribers = |t: u32| &problem.subscribers[t as usize];
    let floor: Vec<u32> = comp
        .topics
        .iter()
        .map(|&t| problem.partitions(t) / subscribers(t).len() as u32)
        .collect();
    let extra: Vec<u32> = comp
        .topics
        .iter()
        .map(|&t| problem.partitions(t) % subscribers(t).len() as u32)
        .collect();
    // Per topic: every subscriber at its floor (B_m counted in the same pass).
    let mut proposal = Proposal::at_floors(problem, comp, &floor, &extra);
    let base = proposal.load.clone();
    // A member's subscriptions are all topics of its component: its degree is their number
    // less those of topics without extras (usually none, so no pass over every subscription).
    let mut degree: Vec<i32> = comp
        .members
        .iter()
        .map(|&m| problem.subscriptions[m as usize].len() as i32)
        .collect();
    for subs in (0..comp.topics.len())
        .filter(|&lt| extra[lt] == 0)
        .map(|lt| &proposal.subs[lt])
    {
        for &lm in subs {
            degree[lm as usize] -= 1;
        }
    }
    let widest = proposal.subs.iter().map(<[u32]>::len).max().unwrap_or(0);

    // Then the extras its claims gain from (see `cells`), each given its extra at once (every
    // count was at its floor) and taken back where the topic has too few. Every gaining cell
    // is kept where a topic has enough extras (placed at once: such a topic neither reads nor
    // changes `heavy`). Where it has fewer, the members that would be
    // heaviest with all their gaining cells give theirs up (ties to the higher index), so
    // that fewer moves are needed later: `heavy` counts every gaining cell first, and once
    // those are given up it is the proposal's load.
    let mut claimants: Vec<u32> = Vec::new();
    let mut owned = vec![0u32; n.max(widest)];
    let mut cells = Cells::new(comp.topics.len());
    // A cell per claimant at most: room made once.
    cells
        .at
        .reserve(comp.topics.iter().map(|&t| owners[t as usize].len()).sum());
    let mut slot = vec![0u32; n];
    // Per topic: the extras the proposal holds before the hand-out.
    let mut held = vec![0i32; comp.topics.len()];
    // The topics with more gaining cells than extras.
    let mut contested: Vec<usize> = Vec::new();
    let mut heavy: Vec<i64> = base.clone();
    for (lt, &t) in comp.topics.iter().enumerate() {
        let (f, subs) = (floor[lt], &proposal.subs[lt]);
        let claims = &owners[t as usize];
        // Claims are on subscribers only (see `claims::previous_owners`).
        if claims.is_empty() {
            // No subscriber gains (every reader treats a topic without cells so).
            cells.end_topic(subs.len());
            continue;
        }
        let positioned = dealt && by_position(claims.len(), subs.len());
        let from = claimants.len();
        if positioned {
            let out = &mut claimants;
            match &index {
                None => locate(subs, claims, |m| m as usize, &mut slot, out),
                Some(index) => locate(subs, claims, |m| index.get(comp, m), &mut slot, out),
            }
        }
        if extra[lt] == 0 {
            cells.end_topic(subs.len());
            continue;
        }
        let first = cells.at.len();
        let count = &mut proposal.count[lt];
        if positioned {
            cells.list_by_position(subs, &claimants[from..], f, &mut owned, count, &mut heavy);
        } else {
            // Counted by local member, read (and cleared) by subscriber.
            match &index {
                None => claims.iter().for_each(|&(_, m)| owned[m as usize] += 1),
                Some(index) => claims
                    .iter()
                    .for_each(|&(_, m)| owned[index.get(comp, m)] += 1),
            }
            // Without a deal to follow, every topic's flags are wanted: set in the pass.
            cells.list_by_pass(subs, f, &mut owned, count, &mut heavy, !dealt);
        }
        let g = cells.at.len() - first;
        if g > extra[lt] as usize {
            for &i in cells.of(lt) {
                count[i as usize] -= 1;
            }
            contested.push(lt);
            held[lt] = extra[lt] as i32;
        } else {
            held[lt] = g as i32;
        }
    }
    // Per member: its gaining cells (for the bounds).
    let gains_of: Vec<i64> = heavy.iter().zip(&base).map(|(h, b)| h - b).collect();
    let mut ranked: Vec<(i64, u32)> = Vec::with_capacity(widest);
    for &lt in &contested {
        ranked.clear();
        let subs = &proposal.subs[lt];
        ranked.extend(
            cells
                .of(lt)
                .iter()
                .map(|&i| (heavy[subs[i as usize] as usize], i)),
        );
        let r = extra[lt] as usize;
        ranked.select_nth_unstable(r);
        for &(_, i) in &ranked[r..] {
            heavy[subs[i as usize] as usize] -= 1;
        }
        ranked.truncate(r);
        for &(_, i) in &ranked {
            proposal.count[lt][i as usize] += 1;
        }
    }
    // Every extra kept so far adds one to its holder's load: the gaining cells not given up.
    proposal.load = heavy;
    // The extras left go to the lightest subscribers with room, improved while the balance
    // test of the bounds fails. If the bounds are not met, extras move from heavy holders
    // towards light members while that evidently helps.
    proposal.complete_held(&held, &|p| balanced(p, &base, &degree).is_some());
    let bounds = Bounds {
        cells: &cells,
        gains_of: &gains_of,
        base: &base,
        degree: &degree,
    };
    let mut met = bounds.met(&proposal);
    if !met {
        let topics_of = |lm: usize, out: &mut Vec<usize>| {
            out.clear();
            let m = comp.members[lm];
            // Subscriptions ascend, so each topic's place is searched for from just past the
            // last one's, by doubling steps (a few compares where a search of every topic of
            // the component took a dozen); `gallop` answers as `partition_point` from any
            // start (the topics are distinct and ascending), so the order only saves work.
            let mut next = 0;
            out.extend(problem.subscriptions[m as usize].iter().map(|&t| {
                let at = gallop(&comp.topics, next, |x| x.cmp(&t)).unwrap_or_else(|at| at);
                next = at + 1;
                at
            }));
        };
        pull(&mut proposal, &cells, &base, &degree, &topics_of, suits);
        met = bounds.met(&proposal);
    }

    let chosen = if met {
        #[cfg(test)]
        BOUNDED.with(|c| c.set(c.get() + 1));
        None
    } else {
        // Per topic: the indices of the subscribers given its extra, and the counts and
        // loads they make.
        let chosen = solve_extras(&proposal, &cells, &base, &degree);
        proposal.load.copy_from_slice(&base);
        for (lt, chosen) in chosen.iter().enumerate() {
            let (f, count) = (proposal.floor[lt], &mut proposal.count[lt]);
            count.fill(f);
            for &i in chosen {
                count[i as usize] += 1;
                proposal.load[proposal.subs[lt][i as usize] as usize] += 1;
            }
        }
        Some(chosen)
    };
    Choice {
        floor,
        proposal,
        chosen,
        cells,
        widest,
        claimants,
    }
}
