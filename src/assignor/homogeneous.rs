//! The exact fast path of the uniform v2 assignor for a *homogeneous* component (every member
//! subscribes to every topic) in which no partition can be rack-aligned, whatever the previous
//! owners.
//!
//! # Why counts of extras decide everything
//!
//! Let the component have n members and, for each topic t, f_t = ⌊P_t/n⌋ and
//! r_t = P_t mod n (so r_t ≤ n − 1). Spread (objective 2) gives every member f_t or f_t + 1
//! partitions of t, and exactly r_t members the extra one; write y_tm ∈ {0, 1} for "m gets
//! the extra of t". Member m's load is F + e_m with F = Σ_t f_t the same for all members and
//! e_m = Σ_t y_tm, and Σ_m e_m = E = Σ_t r_t is fixed. So Σ load² (objective 3) is minimal
//! iff every e_m is q = ⌊E/n⌋ or q + 1, and then exactly s = E mod n members have q + 1.
//! Such a y always exists (deal the extras of all topics in one rotation over the members:
//! each topic gives at most one extra per member because r_t < n).
//!
//! No partition can be aligned (objective 4 is zero for every assignment). For stickiness
//! (objective 5), let o_tm be the number of partitions of t whose previous owner is m. Once
//! the counts c_tm = f_t + y_tm are fixed, at most Σ min(o_tm, c_tm) partitions can be kept,
//! and that many are: every member keeps min(o_tm, c_tm) of its own partitions (distinct
//! members own distinct partitions), and the Σ (c_tm − min(o_tm, c_tm)) places left equal the
//! P_t − Σ min(o_tm, c_tm) partitions left. Hence
//!
//! ```text
//! kept(y) = Σ_tm min(o_tm, f_t) + #{(t, m) : y_tm = 1 and o_tm > f_t}
//! ```
//!
//! and the lexicographic optimum is: a y with column sums r_t and row sums in {q, q + 1}
//! that uses as many *gaining cells* (o_tm > f_t) as possible, followed by the partition
//! deal above.
//!
//! # Choosing the extras
//!
//! That is a maximum-weight degree-constrained subgraph of the complete topic × member
//! bipartite graph, weight 1 on gaining cells and 0 elsewhere. It is solved exactly as a
//! min-cost max-flow with the project's solver ([`super::flow`]):
//!
//! ```text
//! source → topic t       cap r_t
//! topic t → member m     cap 1, cost −1 if o_tm > f_t else 0    (every t with r_t > 0, every m)
//! member m → sink        cap q                                  (the q extras everyone gets)
//! member m → Z           cap 1                                  (the optional (q+1)-th)
//! Z → sink               cap s
//! ```
//!
//! The sink's in-capacity is nq + s = E and the rotation is a flow of value E, so every
//! maximum flow saturates it: its integral maximum flows are exactly the y above (row sums
//! q or q + 1, s of them q + 1), and a minimum-cost one maximises the gaining cells used.
//!
//! Three shortcuts skip the solver, all exact:
//! - no cell gains: every y is optimal for stickiness, the rotation is used;
//! - on components of at least [`DIRECT_MIN_MEMBERS`] members, the
//!   [direct construction](direct) (keep every gaining cell up to the caps, then fill) reaches
//!   the upper bound below, or the tighter one of [blocked members](blocked) (members that
//!   gain in every topic with a free extra yet hold fewer than q gaining cells, as a leave of
//!   a rotation leaves behind: each takes an extra that displaces a gaining cell);
//! - the [greedy](greedy_extras) reaches the upper bound min(Σ_t min(r_t, g_t),
//!   Σ_m min(|G_m|, q) + min(s, #{m : |G_m| > q})), where g_t and |G_m| count the gaining
//!   cells of topic t and member m: no y can use more gaining cells than a topic has extras,
//!   nor more than q + 1 per member with at most s members above q.
//!
//! # Tie rule (objective 6)
//!
//! Among the optimal y, the one chosen is: the rotation when nothing gains (topics in name
//! order, a cursor over members in id order), else (from [`DIRECT_MIN_MEMBERS`] members) the
//! direct construction's when it meets its bound (moving blocked members first where their
//! bound is the tighter), else the greedy's when it meets the bound,
//! else the solver's on the network built in topic-name then member-id order (from
//! [`DIRECT_MIN_MEMBERS`] members, started from every gaining cell within the caps, which the
//! solver certifies: see `solve_extras`). All four read only the canonical [`Problem`]
//! order. Partitions then go: each member keeps its own
//! partitions of t up to c_tm, lowest numbers first; the others, in ascending number, fill
//! the members with room in ascending id order. This may pick a different optimum than the
//! general flow of [`super::uniform`] would; objectives 1–5 are equal.
//!
//! # Complexity
//!
//! Counting the gaining cells and the deal: O(P + claims + Σ_t |Sub(t)|). The direct
//! construction: O(G log G + E + n + K) for G gaining cells when no exchange is needed (each
//! exchange is bounded by a work budget of 4(n + E) steps in all). The greedy: one
//! key per member and topic and a linear-time selection per topic, O(K·n + E log n) for the
//! K ≤ |topics| topics with r_t > 0. The solver, when the greedy misses its bound, works on
//! K·n + 2n + K edges, never on partitions. No partition × member product is built.

use super::components::Component;
use super::deal::{Dealer, Topic, TopicDeal};

mod blocked;
mod direct;
mod extras;
mod greedy;

use super::flow::Network;
use super::problem::Problem;
use direct::direct_extras;
pub(crate) use extras::Extras;
use extras::Gaining;
#[cfg(test)]
use extras::topic_extras;
use greedy::{Greedy, greedy_extras};

/// Whether this fast path applies to `comp`: every member subscribes to every topic, and no
/// partition can be aligned (rack awareness off, or no partition of the component's topics
/// has a replica in a rack where one of its members runs).
pub(crate) fn applies(problem: &Problem<'_>, comp: &Component, rack_aware: bool) -> bool {
    comp.homogeneous(problem) && !comp.alignable(problem, rack_aware)
}

/// Reserves room for the exact final load of every member of the homogeneous component
/// `comp`: loads are within one of each other, so none exceeds ⌈total/n⌉. Growing the lists
/// one partition at a time would reallocate each a few times.
pub(crate) fn reserve(problem: &Problem<'_>, comp: &Component, lists: &mut [Vec<(u32, i32)>]) {
    let n = comp.members.len().max(1) as u64;
    let total: u64 = comp
        .topics
        .iter()
        .map(|&t| u64::from(problem.partitions(t)))
        .sum();
    let most = total.div_ceil(n) as usize;
    for &m in &comp.members {
        lists[m as usize].reserve_exact(most);
    }
}

/// Assigns the partitions of the homogeneous component `comp` (no alignment possible)
/// optimally for objectives 1–5, appending `(topic, partition)` pairs to `lists` by member.
/// `owners` are the previous owners per topic, as from `claims::previous_owners`. Returns
/// how the extras were chosen.
pub(crate) fn assign(
    problem: &Problem<'_>,
    comp: &Component,
    owners: &[Vec<(i32, u32)>],
    lists: &mut [Vec<(u32, i32)>],
) -> Route {
    assign_choosing(problem, comp, owners, lists, false)
}

/// A deliberately worse variant for tests: the extras always by the rotation, ignoring who
/// gains (the partition deal is the same), so that the oracles can be shown to catch it.
#[cfg(test)]
pub(crate) fn assign_ignoring_gains(
    problem: &Problem<'_>,
    comp: &Component,
    owners: &[Vec<(i32, u32)>],
    lists: &mut [Vec<(u32, i32)>],
) {
    assign_choosing(problem, comp, owners, lists, true);
}

fn assign_choosing(
    problem: &Problem<'_>,
    comp: &Component,
    owners: &[Vec<(i32, u32)>],
    lists: &mut [Vec<(u32, i32)>],
    rotation_only: bool,
) -> Route {
    let n = comp.members.len();
    if n == 0 {
        return Route::Rotation;
    }
    reserve(problem, comp, lists);
    let choice = if rotation_only {
        Choice::Rotation
    } else {
        Choice::Best
    };
    let (topics, route) = choose_extras(problem, comp, owners, choice);
    if comp.holds_every_member(problem.members.len()) {
        deal(problem, comp, owners, &topics, |m| m as usize, lists);
    } else {
        let index = comp.local_index(problem.members.len());
        deal(
            problem,
            comp,
            owners,
            &topics,
            |m| index.get(comp, m),
            lists,
        );
    }
    route
}

/// Deals the partitions of every topic of `comp` with the extras of `topics` (see
/// [`Dealer`]): its subscribers are the component's members. `local(m)` is member m's local
/// id.
fn deal(
    problem: &Problem<'_>,
    comp: &Component,
    owners: &[Vec<(i32, u32)>],
    topics: &[TopicExtras],
    local: impl Fn(u32) -> usize,
    lists: &mut [Vec<(u32, i32)>],
) {
    let n = comp.members.len();
    let mut dealer = Dealer::new(n);
    let mut next_topic = 0;
    for &t in &comp.topics {
        let partitions = problem.partitions(t);
        let chosen: &[u32] = match topics.get(next_topic) {
            Some(x) if x.topic == t => {
                next_topic += 1;
                x.chosen()
            }
            _ => &[],
        };
        let deal = TopicDeal {
            topic: Topic {
                topic: t,
                partitions,
                subscribers: &comp.members,
                owners: &owners[t as usize],
            },
            floor: partitions / n as u32,
            chosen,
        };
        dealer.topic(&deal, &local, lists);
    }
}

/// How [`choose_extras`] may choose.
pub(crate) enum Choice<'h> {
    /// The rotation, whoever gains (a deliberately worse variant for tests).
    Rotation,
    /// The most gaining cells: the rotation when nothing gains, else the greedy when it meets
    /// its bound, else the flow.
    Best,
    /// The greedy, with every topic's choice passed through a [`Repair`] that may exchange
    /// members and may refuse; when the greedy misses its bound or a repair refuses, the
    /// flow (which knows nothing of the repair).
    Repaired(&'h mut dyn Repair),
}

/// A check of the greedy's choice for one topic, which may exchange the chosen members for
/// others (the rack-aware path uses it to keep every alignable partition alignable).
pub(crate) trait Repair {
    /// Accepts `chosen` (local ids of the members given topic `topic`'s extras) as it is or
    /// after exchanging some of them, or refuses it (`false`). `keys` holds the greedy's
    /// ranking of every member, in no particular order: a non-zero key is an eligible member,
    /// with its local id in the low 32 bits inverted (`u32::MAX − lm`), larger keys ranked
    /// first. `received[lm]` is how many extras lm has so far, and at most `plus_left` of the
    /// chosen may have exactly `q`. The repair may also move an extra of an `earlier` topic
    /// from one member to another, updating `received` (each `chosen` stays ascending); the
    /// greedy checks every returned choice again and its bound at the end.
    #[allow(clippy::too_many_arguments)]
    fn repair(
        &mut self,
        topic: u32,
        chosen: &mut Vec<u32>,
        earlier: &mut [TopicExtras],
        keys: &[u64],
        received: &mut [u32],
        q: u32,
        plus_left: u32,
    ) -> bool;

    /// Whether the last call to [`Repair::repair`] may have changed `received` (moved an
    /// extra of an earlier topic): only then does the greedy compare every member's extras
    /// with what its ranking saw.
    fn moved_extras(&self) -> bool {
        true
    }

    /// Whether the repair refused for good: every later call would refuse at once and the
    /// caller, with an exact construction of its own to run, wants no choice from
    /// [`choose_from`], which then returns none (no topic listed) instead of running the
    /// greedy again and the flow.
    fn gave_up(&self) -> bool {
        false
    }
}

/// The members given each topic's extra in the homogeneous component `comp` (non-empty),
/// chosen exactly (except with [`Choice::Rotation`]) to use the most gaining cells of
/// `owners` (previous owners per topic, ascending by partition; only the counts per member
/// matter), with the route that chose them. Only topics with r_t > 0 are listed, in
/// `comp.topics` order; none when a [`Choice::Repaired`]'s repair [gave up](Repair::gave_up).
/// Each topic's members are read by [`TopicExtras::chosen`] (its `chosen` may be left
/// empty for them).
pub(crate) fn choose_extras(
    problem: &Problem<'_>,
    comp: &Component,
    owners: &[Vec<(i32, u32)>],
    choice: Choice<'_>,
) -> (Vec<TopicExtras>, Route) {
    choose_in_place(
        Extras::new(problem, comp, owners),
        comp.members.len(),
        choice,
    )
}

/// [`choose_extras`] on `extras` (built for the same component, of `n` members, nothing
/// chosen yet), with every topic's members in its `chosen`.
pub(crate) fn choose_from(
    extras: Extras,
    n: usize,
    choice: Choice<'_>,
) -> (Vec<TopicExtras>, Route) {
    let (mut topics, route) = choose_in_place(extras, n, choice);
    if route == Route::Direct {
        for x in &mut topics {
            if x.chosen_gaining {
                x.chosen = x.gaining.to_vec();
                x.chosen_gaining = false;
            }
        }
    }
    (topics, route)
}

/// [`choose_extras`] on `extras`, as [`choose_from`] describes, but where the direct route
/// chose a topic's gaining members they are left in place ([`TopicExtras::chosen`]).
fn choose_in_place(extras: Extras, n: usize, choice: Choice<'_>) -> (Vec<TopicExtras>, Route) {
    let Extras { mut topics, q, s } = extras;
    let no_gain = topics.iter().all(|x| x.gaining.is_empty());
    let (rotate, mut repair) = match choice {
        Choice::Rotation => (true, None),
        Choice::Best => (no_gain, None),
        Choice::Repaired(repair) => (false, Some(repair)),
    };
    if rotate {
        rotation(&mut topics, n);
        return (topics, Route::Rotation);
    }
    if repair.is_none() && n >= DIRECT_MIN_MEMBERS && direct_extras(&mut topics, n, q, s) {
        return (topics, Route::Direct);
    }
    // A repair refusing topic i means the choices made for the topics before it left no
    // acceptable one: the greedy runs again with topic i first, where it is least constrained
    // (at most MAX_REORDERS times; the order only steers the heuristic, the checks decide).
    let mut reorders = 0;
    let route = loop {
        match greedy_extras(&mut topics, n, q, s, &mut repair) {
            Greedy::Met => {
                #[cfg(test)]
                if reorders > 0 {
                    super::aligned::tally::add(super::aligned::tally::REORDERED);
                }
                break Route::Greedy;
            }
            // Nothing this choice could do is wanted any more: the caller runs its exact
            // construction without it.
            Greedy::Refused(_) if repair.as_ref().is_some_and(|r| r.gave_up()) => {
                return (Vec::new(), Route::Flow);
            }
            Greedy::Refused(i) if reorders < MAX_REORDERS => {
                let x = topics.remove(i);
                topics.insert(0, x);
                reorders += 1;
            }
            Greedy::Refused(_) | Greedy::Missed => {
                topics.sort_unstable_by_key(|x| x.topic);
                solve_extras(&mut topics, n, q, s);
                break Route::Flow;
            }
        }
    };
    topics.sort_unstable_by_key(|x| x.topic);
    (topics, route)
}

/// The extras of [`Choice::Best`] when they come cheapest: on components of at least
/// [`DIRECT_MIN_MEMBERS`] members (`n`) where no cell gains, the rotation (every choice then
/// uses the most gaining cells, none), chosen in `extras`; otherwise `extras` back untouched.
///
/// The direct construction is not tried here: measured on racked joins of 1,000 members,
/// the rack-aware deal refused its choice and the wasted deal cost more than it saved.
pub(crate) fn quick_extras(mut extras: Extras, n: usize) -> Result<(Extras, Route), Extras> {
    if n < DIRECT_MIN_MEMBERS || !extras.topics.iter().all(|x| x.gaining.is_empty()) {
        return Err(extras);
    }
    rotation(&mut extras.topics, n);
    Ok((extras, Route::Rotation))
}

/// Faults a test may plant on its thread, to show the tests catch them.
#[cfg(test)]
pub(crate) mod planted {
    thread_local! {
        /// Listing the gaining members: the counts are reset through the gaining members
        /// even when the floor is above 0 (so members that own some partitions of a topic
        /// but do not gain keep stale counts into the next topic).
        pub(crate) static RESET_BY_GAINING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        /// Listing the gaining members of a topic: the owners are taken as they come,
        /// without checking that they ascend (so repeated or unordered owners go into the
        /// list as they are, and with f_t > 0 a member's runs are counted apart).
        pub(crate) static ORDER_UNCHECKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        /// The flow's proposed start keeps every gaining cell a topic has room for, past
        /// the member's cap (more than its edges to the sink carry, so the solver must
        /// refuse the proposal).
        pub(crate) static PRESET_PAST_CAP: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
}

/// Per topic with extras of the homogeneous component `comp` (in `comp.topics` order): the
/// topic, r_t and its gaining members (local ids, ascending), as the choice of extras sees
/// them. For tests that compare them with their definition.
#[cfg(test)]
pub(crate) fn gaining_members(
    problem: &Problem<'_>,
    comp: &Component,
    owners: &[Vec<(i32, u32)>],
) -> Vec<(u32, u32, Vec<u32>)> {
    let (topics, _, _) = topic_extras(problem, comp, owners, false);
    topics
        .into_iter()
        .map(|x| (x.topic, x.extra, x.gaining.to_vec()))
        .collect()
}

/// Plants (or removes) a fault in the direct construction on this thread: no member is kept
/// above q in its first step, and its final bound check is skipped. For tests that must
/// catch it.
#[cfg(test)]
pub(crate) fn direct_skip_bound_check(skip: bool) {
    direct::SKIP_BOUND_CHECK.set(skip);
}

/// Plants (or removes) a fault in the blocked members' bound on this thread: the first
/// blocked member is moved into one topic more than its excess, and the bound lowered by as
/// much (see `blocked`). For tests that must catch it.
#[cfg(test)]
pub(crate) fn blocked_one_too_many(planted: bool) {
    blocked::ONE_TOO_MANY.set(planted);
}

/// The fewest members for which [`choose_extras`] tries the direct construction before the
/// greedy: on smaller components the greedy's ranking of every member is cheap, and its
/// choices stay (tests of small groups pin them, and the model, whose groups have at most 8
/// members, pins state counts that depend on them).
pub(crate) const DIRECT_MIN_MEMBERS: usize = 16;

/// How many times [`choose_extras`] runs the greedy again after a [`Repair`] refused.
const MAX_REORDERS: usize = 8;

/// How [`assign`] chose the extras (all four are exact; tests check each is exercised).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Route {
    /// No cell gains: the rotation.
    Rotation,
    /// The greedy met the upper bound.
    Greedy,
    /// The min-cost flow.
    Flow,
    /// The direct construction met the upper bound (components of at least
    /// [`DIRECT_MIN_MEMBERS`] members), or on the rack-aware path the placement keeping every
    /// claim placed everything (see `aligned::keep_all`).
    Direct,
}

/// One topic that has extras (r_t > 0) and the members chosen for them.
pub(crate) struct TopicExtras {
    /// Topic index.
    pub(crate) topic: u32,
    /// r_t: how many members get f_t + 1 partitions.
    extra: u32,
    /// Local ids of the members owning more than f_t of its partitions, ascending.
    gaining: Gaining,
    /// Local ids of the members given the extra, ascending (filled by the choice), unless
    /// `chosen_gaining`: then empty.
    pub(crate) chosen: Vec<u32>,
    /// Whether the members given the extra are the gaining members, left in `gaining` instead
    /// of copied to `chosen` (only by [`choose_extras`] on its direct route; see
    /// [`TopicExtras::chosen`]).
    chosen_gaining: bool,
}

impl TopicExtras {
    /// Local ids of the members given the extra, ascending, wherever the choice left them.
    pub(crate) fn chosen(&self) -> &[u32] {
        if self.chosen_gaining {
            &self.gaining
        } else {
            &self.chosen
        }
    }
}

/// The rotation: topic by topic, the extras go to the next r_t members after a cursor over
/// the members in id order. Every member gets q or q + 1 extras.
fn rotation(topics: &mut [TopicExtras], n: usize) {
    let mut cursor = 0usize;
    for x in topics {
        let r = x.extra as usize;
        x.chosen = (0..r).map(|i| ((cursor + i) % n) as u32).collect();
        x.chosen.sort_unstable();
        cursor = (cursor + r) % n;
    }
}

/// The min-cost flow of the module docs: exact in every case.
fn solve_extras(topics: &mut [TopicExtras], n: usize, q: u32, s: u32) {
    let k = topics.len();
    let source = 0u32;
    let member_base = 1 + k as u32;
    let z = member_base + n as u32;
    let sink = z + 1;
    let mut net = Network::new(sink as usize + 1);
    let mut is_gaining = vec![false; n];
    let mut first_cell = Vec::with_capacity(k);
    for (i, x) in topics.iter().enumerate() {
        net.edge(source, 1 + i as u32, x.extra as i32, [0; 4]);
    }
    for (i, x) in topics.iter().enumerate() {
        for &lm in &x.gaining {
            is_gaining[lm as usize] = true;
        }
        let mut first = None;
        for (lm, &gains) in is_gaining.iter().enumerate() {
            let cost = [0, 0, 0, -i8::from(gains)];
            let id = net.edge(1 + i as u32, member_base + lm as u32, 1, cost);
            first.get_or_insert(id);
        }
        first_cell.push(first.unwrap_or(0));
        for &lm in &x.gaining {
            is_gaining[lm as usize] = false;
        }
    }
    let mut sink_edge = vec![0usize; n];
    let mut plus_edge = vec![0usize; n];
    for lm in 0..n as u32 {
        if q > 0 {
            sink_edge[lm as usize] = net.edge(member_base + lm, sink, q as i32, [0; 4]);
        }
        if s > 0 {
            plus_edge[lm as usize] = net.edge(member_base + lm, z, 1, [0; 4]);
        }
    }
    let mut z_edge = 0;
    if s > 0 {
        z_edge = net.edge(z, sink, s as i32, [0; 4]);
    }
    if n >= DIRECT_MIN_MEMBERS {
        // Proposed: every gaining cell, topic by topic, as far as the topic's extras and the
        // member's cap allow (q, or q + 1 for the first s members to reach it). Each unit
        // costs −1, the least a unit can cost, so no flow of that value costs less: the
        // solver certifies it and carries only the rest. (Not on smaller components, whose
        // chosen optimum the model's state counts pin.)
        let mut taken = vec![0u32; n];
        let mut plus_left = s;
        for (i, (x, &first)) in topics.iter().zip(&first_cell).enumerate() {
            let mut kept = 0;
            for &lm in &x.gaining {
                let got = taken[lm as usize];
                #[cfg(test)]
                let got = if planted::PRESET_PAST_CAP.get() {
                    0
                } else {
                    got
                };
                if kept == x.extra || got > q || (got == q && plus_left == 0) {
                    continue;
                }
                if got == q {
                    plus_left -= 1;
                }
                taken[lm as usize] += 1;
                kept += 1;
                net.preset(first + 2 * lm as usize, 1);
            }
            // The source edges come first, one per topic: ids 0, 2, 4, ...
            net.preset(2 * i, kept as i32);
        }
        for (lm, &got) in taken.iter().enumerate() {
            if q > 0 {
                net.preset(sink_edge[lm], got.min(q) as i32);
            }
            if got > q {
                net.preset(plus_edge[lm], (got - q) as i32);
            }
        }
        if s > 0 {
            net.preset(z_edge, (s - plus_left) as i32);
        }
    }
    net.solve(source, sink);
    for (x, &first) in topics.iter_mut().zip(&first_cell) {
        // Edge ids of one topic's cells are consecutive, two apart (see `Network::edge`).
        x.chosen = (0..n)
            .filter(|&lm| net.flow(first + 2 * lm) > 0)
            .map(|lm| lm as u32)
            .collect();
    }
}
