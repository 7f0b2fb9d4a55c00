//! Homogeneous components whose claims are already optimal: the previous owners, as they
//! are, form an assignment optimal for objectives 1–5, which the uniform v2 assignor returns
//! unchanged without choosing anything.
//!
//! # When the claims are the answer
//!
//! Let every member of a homogeneous component (n members, each subscribed to all its topics)
//! be given exactly the partitions it is the previous owner of, and suppose:
//!
//! 1. every partition of every topic has a previous owner (so this is a valid assignment);
//! 2. every member has ⌊P_t/n⌋ or ⌈P_t/n⌉ partitions of each topic t (spread);
//! 3. the members' loads are within one of each other;
//! 4. with rack awareness on, every partition that can be aligned (some replica in a rack
//!    where some member of the component runs) is: its owner runs in one of its replica
//!    racks.
//!
//! Then it is optimal for objectives 1–5. (1, 2) It is valid and spread. (3) Every spread
//! assignment gives member m the same base Σ_t ⌊P_t/n⌋ plus e_m extras with Σ e_m fixed, so
//! Σ load² is smallest exactly when the e_m, hence the loads, are within one of each other;
//! the rotation of the [homogeneous path](super::homogeneous) shows such an assignment
//! exists, so this one is balance-optimal. (4) It aligns every partition that any assignment
//! can. (5) It keeps every partition with its previous owner, the most any assignment can.
//! It is the only assignment keeping every partition, so it is also the one the exact paths
//! return: the output does not change, only the work done to find it. On a group that is
//! stable (the previous round's assignment fed back) every component passes; after a member
//! joins or leaves, the components it does not belong to still do.
//!
//! # Complexity
//!
//! O(claims + n) per component (O(topics + n) when a partition has no owner or a member
//! owns nothing, as after a member leaves or joins), plus O(P·ρ) rack name comparisons when
//! racks matter (ρ replicas per partition; a partition's rack mask is computed only where its
//! owner runs in none of its replica racks); nothing is written unless every condition holds.

use super::components::{Component, LocalIndex};
use super::problem::Problem;
use super::racks::{RackBits, pack_len, pack_short};

/// When the previous owners of `comp` (homogeneous: every member subscribes to all its
/// topics) form an assignment optimal for objectives 1–5 as the [module docs](self) say,
/// appends each member's claims to its list (topics in `comp.topics` order, partitions
/// ascending) and returns true; otherwise writes nothing and returns false.
/// `owners` holds the previous owners per topic, ascending by partition; `rack_aware` is the
/// spec's flag.
pub(crate) fn assign(
    problem: &Problem<'_>,
    comp: &Component,
    owners: &[Vec<(i32, u32)>],
    rack_aware: bool,
    lists: &mut [Vec<(u32, i32)>],
) -> bool {
    let n = comp.members.len();
    if n == 0 {
        return false;
    }
    #[cfg(test)]
    if OFF.with(std::cell::Cell::get) {
        return false;
    }
    // Cheap tests first, which fail at once where a member joined or left: a partition
    // without an owner (O(topics)), then a member with no claim at all although every load
    // must be at least ⌊total/n⌋ ≥ 1 (O(n)): some other member then holds two more.
    let mut total = 0u64;
    for &t in &comp.topics {
        let partitions = problem.partitions(t);
        if owners[t as usize].len() != partitions as usize {
            return false;
        }
        total += u64::from(partitions);
    }
    #[cfg(test)]
    let loads_checked = !LOADS_UNCHECKED.with(std::cell::Cell::get);
    #[cfg(not(test))]
    let loads_checked = true;
    if loads_checked
        && total >= n as u64
        && comp
            .members
            .iter()
            .any(|&m| problem.members[m as usize].owned.is_empty())
    {
        return false;
    }
    // Per topic, counts are reset lazily (see `Tally`). Its P_t claims, none above the ceiling,
    // leave nobody below the floor exactly when r_t of them reach the ceiling (with
    // r_t = 0, when nobody passes the floor): the counts sum to n·f + r_t. Without racks,
    // claims in ascending runs, one per owner (as a deal leaves them), are counted per run.
    #[cfg(test)]
    let racks_checked = rack_aware && !RACKS_UNCHECKED.with(std::cell::Cell::get);
    #[cfg(not(test))]
    let racks_checked = rack_aware;
    // With racks, condition 4 is checked claim by claim in the count below (which runs per
    // claim there), sharing its lookup of the owner.
    // Where the component holds a good share of the group (a dense index), every member's
    // count and rack are kept at its id, so that a claim's owner needs no lookup at all; else
    // at its position in the component, found by search.
    let by_id = comp.dense_index(problem.members.len());
    let slots = if by_id { problem.members.len() } else { n };
    let mut home = None;
    if racks_checked {
        let Some(found) = Home::new(problem, comp, by_id) else {
            return false;
        };
        home = Some(found);
    }
    // Each claim is written to its owner's list as it is counted (topics in order, partitions
    // ascending: the order of the result), and the lists are cut back if a condition fails.
    // Loads within one of each other are at most ⌈total/n⌉: room made once, not doubled as
    // the lists fill.
    let most = total.div_ceil(n as u64) as usize;
    let before: Vec<usize> = comp
        .members
        .iter()
        .map(|&m| {
            let list = &mut lists[m as usize];
            list.reserve(most);
            list.len()
        })
        .collect();
    let mut tally = Tally {
        state: vec![0u64; slots],
    };
    let mut run = Run {
        problem,
        comp,
        owners,
        rack_aware,
        home: home.as_mut(),
        tally: &mut tally,
        lists,
    };
    // The lookup resolved once, outside the loop over claims (one instance of the loop per
    // kind of slot).
    let counted = if by_id {
        run.count_topics(|m| m as usize)
    } else {
        run.count_topics(|m| LocalIndex::search(comp, m))
    };
    let lists = run.lists;
    // Every claim counted went to its owner's list: the loads are what the lists grew by.
    let balanced = counted && {
        let mut load = comp
            .members
            .iter()
            .zip(&before)
            .map(|(&m, &len)| lists[m as usize].len() - len);
        let first = load.next().unwrap_or(0);
        let (lightest, heaviest) = load.fold((first, first), |(lo, hi), x| (lo.min(x), hi.max(x)));
        #[cfg(test)]
        let heaviest = if LOADS_UNCHECKED.with(std::cell::Cell::get) {
            lightest
        } else {
            heaviest
        };
        heaviest <= lightest + 1
    };
    if !balanced {
        for (&m, &len) in comp.members.iter().zip(&before) {
            lists[m as usize].truncate(len);
        }
        return false;
    }
    #[cfg(test)]
    SETTLED.with(|c| c.set(c.get() + 1));
    true
}

/// The inputs of one component's counts, shared by each kind of local index.
struct Run<'a, 'p> {
    problem: &'a Problem<'p>,
    comp: &'a Component,
    owners: &'a [Vec<(i32, u32)>],
    rack_aware: bool,
    home: Option<&'a mut Home<'p>>,
    tally: &'a mut Tally,
    lists: &'a mut [Vec<(u32, i32)>],
}

impl Run<'_, '_> {
    /// Counts every topic of the component in order (owners at slots `local(m)`),
    /// appending each claim to its owner's list, and returns whether every topic passes:
    /// no owner above the ceiling, exactly r_t at it, and (with racks) no claim misplaced.
    fn count_topics(&mut self, local: impl Fn(u32) -> usize + Copy) -> bool {
        let Run {
            problem,
            comp,
            owners,
            rack_aware,
            ref mut home,
            ref mut tally,
            ref mut lists,
        } = *self;
        let n = comp.members.len();
        for (i, &t) in comp.topics.iter().enumerate() {
            let partitions = problem.partitions(t) as usize;
            let floor = (partitions / n) as u32;
            let extras = partitions % n;
            let ceiling = floor + u32::from(extras > 0);
            let claims = &owners[t as usize];
            let topic = TopicClaims {
                t,
                i,
                ceiling,
                extras,
                claims,
            };
            // Racked claims seldom come in runs (alignment scatters a member's partitions of a
            // topic), and a check that fails late costs more than it saves there.
            let runs = if rack_aware {
                None
            } else {
                ascending_runs(claims, ceiling)
            };
            let at_ceiling = match runs {
                // With no extras the count below counts nobody at the ceiling (the floor).
                Some(runs) => {
                    for &(p, m) in claims {
                        lists[m as usize].push((t, p));
                    }
                    Some(if extras > 0 { runs } else { 0 })
                }
                None => {
                    let replicas = match home {
                        Some(_) => problem.topics[t as usize].replica_racks.as_deref(),
                        None => None,
                    };
                    match (home.as_deref_mut(), replicas) {
                        (Some(home), Some(replicas)) => {
                            home.count(problem, comp, &topic, replicas, local, tally, lists)
                        }
                        _ => tally.count(&topic, local, |_, _| false, lists),
                    }
                }
            };
            #[cfg(test)]
            let at_ceiling = if CEILING_UNCOUNTED.with(std::cell::Cell::get) {
                at_ceiling.map(|_| extras)
            } else {
                at_ceiling
            };
            if at_ceiling != Some(extras) {
                return false;
            }
        }
        true
    }
}

/// One topic's claims as [`Tally::count`] reads them.
struct TopicClaims<'a> {
    t: u32,
    /// The topic's position in `comp.topics`.
    i: usize,
    ceiling: u32,
    extras: usize,
    /// (partition, owner), ascending by partition.
    claims: &'a [(i32, u32)],
}

/// Per member (at its slot: its id or its local id, see [`assign`]): the last topic counted
/// and its claims of that topic, as
/// `(position in comp.topics + 1) << 32 | claims`, reset lazily (0 before any topic): a
/// topic costs O(its claims), not O(n).
struct Tally {
    state: Vec<u64>,
}

impl Tally {
    /// Counts the claims of `topic` (owners at slots `local(m)`), appending each to its
    /// owner's list, and returns how many owners reach the ceiling (with extras), or `None`
    /// when an owner passes the ceiling or `misplaced(slot, p)` says the claim of p by the
    /// member at that slot is misplaced (condition 4). Inlined into each caller, so that every
    /// `misplaced` compiles into the loop.
    #[inline(always)]
    fn count(
        &mut self,
        topic: &TopicClaims<'_>,
        local: impl Fn(u32) -> usize,
        mut misplaced: impl FnMut(usize, i32) -> bool,
        lists: &mut [Vec<(u32, i32)>],
    ) -> Option<usize> {
        let TopicClaims {
            t,
            i,
            ceiling,
            extras,
            claims,
        } = *topic;
        let mut at_ceiling = 0usize;
        for &(p, m) in claims {
            let lm = local(m);
            if misplaced(lm, p) {
                return None;
            }
            // Topics are counted in order, so a state below this topic's is an earlier one's.
            let base = ((i as u64) + 1) << 32;
            let state = &mut self.state[lm];
            *state = if *state >= base { *state + 1 } else { base + 1 };
            let count = (*state - base) as u32;
            if count > ceiling {
                return None;
            }
            // Counted whatever the extras (with none, the answer below is 0): no test of
            // them per claim.
            at_ceiling += usize::from(count == ceiling);
            lists[m as usize].push((t, p));
        }
        Some(if extras > 0 { at_ceiling } else { 0 })
    }
}

/// When the owners of `claims` (one topic's, by partition) come in runs, one per owner,
/// of strictly ascending members (as after a deal that hands each member a range) and no
/// run is longer than `ceiling`: how many runs reach the ceiling. Otherwise `None`, and the
/// count per claim decides. A member's count of the topic is then the length of its one
/// run, so this is what that count finds, in one comparison per claim.
fn ascending_runs(claims: &[(i32, u32)], ceiling: u32) -> Option<usize> {
    #[cfg(test)]
    let checked = !ASCENT_UNCHECKED.with(std::cell::Cell::get);
    #[cfg(not(test))]
    let checked = true;
    if ceiling == 1 {
        // Runs of one claim each: the owners strictly ascend (the common case of a topic
        // with fewer partitions than members, in one comparison per claim).
        let mut last = None;
        for &(_, m) in claims {
            if checked && last >= Some(m) {
                return None;
            }
            last = Some(m);
        }
        return Some(claims.len());
    }
    let Some((&(_, first), rest)) = claims.split_first() else {
        return Some(0);
    };
    let (mut m, mut len) = (first, 1u32);
    // How many of the runs closed so far reach the ceiling.
    let mut at_ceiling = 0usize;
    for &(_, next) in rest {
        if next == m {
            len += 1;
            continue;
        }
        if checked && (next < m || len > ceiling) {
            return None;
        }
        at_ceiling += usize::from(len == ceiling);
        (m, len) = (next, 1);
    }
    if checked && len > ceiling {
        return None;
    }
    at_ceiling += usize::from(len == ceiling);
    Some(at_ceiling)
}

/// Condition 4's check of one claim at a time: every alignable partition is with an owner
/// in one of its replica racks.
struct Home<'p> {
    /// Per member (at its slot, see [`Tally`]): its rack.
    rack: Vec<Own<'p>>,
    /// The length shared by every member's rack name, when every member runs in a rack of a
    /// name of at most 7 bytes (`r1`, `us-east`): the names of replicas are then compared
    /// with the owner's at a length known when compiled.
    same_len: Option<usize>,
    /// With `same_len`: per member (at its slot), its rack's key (read without matching on
    /// `rack`).
    keys: Vec<u64>,
    /// The rack bits, built at the first owner running in none of its partition's replica
    /// racks (on a settled component, never); `None` inside where the members run in no rack
    /// (nothing can be aligned then).
    bits: Option<Option<RackBits<'p>>>,
}

impl<'p> Home<'p> {
    /// The members' racks, or `None` where they run in more than 64 (the rack bits decline
    /// there, and so does this check).
    /// `by_id`: kept at member ids (else at local ids).
    fn new(problem: &Problem<'p>, comp: &Component, by_id: bool) -> Option<Home<'p>> {
        if comp.racks(problem).len() > 64 {
            return None;
        }
        let own: Vec<Own<'p>> = comp
            .members
            .iter()
            .map(|&m| match problem.members[m as usize].rack.as_deref() {
                None => Own::None,
                Some(rack) => pack_short(rack.as_bytes())
                    .map_or(Own::Long(rack), |key| Own::Short(key, rack.len())),
            })
            .collect();
        let same_len = match own.first() {
            Some(&Own::Short(_, len))
                if own
                    .iter()
                    .all(|own| matches!(own, Own::Short(_, l) if *l == len)) =>
            {
                Some(len)
            }
            _ => None,
        };
        let key = |own: &Own<'_>| match *own {
            Own::Short(key, _) => key,
            _ => 0,
        };
        let (rack, keys) = if by_id {
            // Other components' members keep the defaults: they own nothing here.
            let mut rack = vec![Own::None; problem.members.len()];
            let mut keys = vec![0; if same_len.is_some() { rack.len() } else { 0 }];
            for (&m, own) in comp.members.iter().zip(&own) {
                rack[m as usize] = *own;
                if let Some(k) = keys.get_mut(m as usize) {
                    *k = key(own);
                }
            }
            (rack, keys)
        } else {
            let keys = match same_len {
                Some(_) => own.iter().map(key).collect(),
                None => Vec::new(),
            };
            (own, keys)
        };
        Some(Home {
            rack,
            same_len,
            keys,
            bits: None,
        })
    }

    /// [`Tally::count`] of `topic`, whose partitions have replica racks `replicas`, with
    /// condition 4 checked for every claim.
    #[allow(clippy::too_many_arguments)]
    fn count(
        &mut self,
        problem: &Problem<'p>,
        comp: &Component,
        topic: &TopicClaims<'_>,
        replicas: &[Vec<String>],
        local: impl Fn(u32) -> usize,
        tally: &mut Tally,
        lists: &mut [Vec<(u32, i32)>],
    ) -> Option<usize> {
        macro_rules! at_len {
            ($len:literal) => {{
                // The keys borrowed apart from the rack bits built lazily: the loop reads
                // them as a slice of its own, not through `self`.
                let Home { keys, bits, .. } = &mut *self;
                let keys: &[u64] = keys;
                tally.count(
                    topic,
                    local,
                    |lm, p| {
                        replicas.get(p as usize).is_some_and(|names| {
                            misplaced_at::<$len>(keys, bits, problem, comp, lm, names)
                        })
                    },
                    lists,
                )
            }};
        }
        match self.same_len {
            Some(1) => at_len!(1),
            Some(2) => at_len!(2),
            Some(3) => at_len!(3),
            Some(4) => at_len!(4),
            Some(5) => at_len!(5),
            Some(6) => at_len!(6),
            Some(7) => at_len!(7),
            _ => tally.count(
                topic,
                local,
                |lm, p| {
                    replicas
                        .get(p as usize)
                        .is_some_and(|names| self.misplaced(problem, comp, lm, names))
                },
                lists,
            ),
        }
    }

    /// Whether a partition of replica racks `names` owned by the member at slot `lm` is
    /// misplaced: its owner runs in none of `names` (a comparison of names, without the
    /// partition's mask) and some member of `comp` runs in one of them.
    fn misplaced(
        &mut self,
        problem: &Problem<'p>,
        comp: &Component,
        lm: usize,
        names: &[String],
    ) -> bool {
        let at_home = match self.rack[lm] {
            Own::Short(key, _) => names
                .iter()
                .any(|name| pack_short(name.as_bytes()) == Some(key)),
            Own::Long(rack) => names.iter().any(|name| same_name(name, rack)),
            Own::None => false,
        };
        !at_home && alignable(&mut self.bits, problem, comp, names)
    }
}

/// [`Home::misplaced`] where every member's rack name has `L` bytes (`same_len`), with the
/// members' `keys` and rack `bits` of the [`Home`]: a replica's name is the owner's rack only
/// if it has `L` bytes and packs to the owner's key, read at that length.
#[inline(always)]
fn misplaced_at<'p, const L: usize>(
    keys: &[u64],
    bits: &mut Option<Option<RackBits<'p>>>,
    problem: &Problem<'p>,
    comp: &Component,
    lm: usize,
    names: &[String],
) -> bool {
    let key = keys[lm];
    let at_home = names
        .iter()
        .any(|name| pack_len::<L>(name.as_bytes()) == Some(key));
    !at_home && alignable(bits, problem, comp, names)
}

/// Whether some member of `comp` runs in one of racks `names`, with the rack `bits` of the
/// [`Home`] built at the first call.
#[inline(never)]
fn alignable<'p>(
    bits: &mut Option<Option<RackBits<'p>>>,
    problem: &Problem<'p>,
    comp: &Component,
    names: &[String],
) -> bool {
    bits.get_or_insert_with(|| RackBits::new(problem, comp))
        .as_ref()
        .is_some_and(|racks| racks.mask(names) != 0)
}

/// A member's rack for the comparisons of [`Home::misplaced`].
#[derive(Clone, Copy)]
enum Own<'a> {
    /// In no rack.
    None,
    /// A name [`pack_short`] represents, as its key, and its length.
    Short(u64, usize),
    /// A longer name.
    Long(&'a str),
}

/// Whether two names are equal, compared byte by byte in place: rack names are short, and
/// this runs once per partition of every settled component, where a library comparison's
/// call costs more than the bytes.
fn same_name(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).all(|(x, y)| x == y)
}

#[cfg(test)]
thread_local! {
    /// Tests only: the components returned as they were, on this thread.
    pub(crate) static SETTLED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Tests only: the shortcut switched off (every component takes its exact path).
    pub(crate) static OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: a planted fault, loads not compared.
    pub(crate) static LOADS_UNCHECKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: a planted fault, members at a topic's ceiling not counted (only the
    /// ceiling itself bounds each count).
    pub(crate) static CEILING_UNCOUNTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: a planted fault, the owners of a topic taken as ascending runs, one per
    /// owner, without looking at their order or at the runs' lengths.
    pub(crate) static ASCENT_UNCHECKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: a planted fault, replica racks not looked at.
    pub(crate) static RACKS_UNCHECKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}
