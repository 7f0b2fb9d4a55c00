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

use super::components::Component;
use super::problem::Problem;
use super::racks::{RackBits, pack_short};

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
    let index = comp.local_index(problem.members.len());
    // Per topic, counts are reset lazily (`seen[lm]` is the last topic position counted),
    // so a topic costs O(its claims), not O(n). Its P_t claims, none above the ceiling,
    // leave nobody below the floor exactly when r_t of them reach the ceiling (with
    // r_t = 0, when nobody passes the floor): the counts sum to n·f + r_t. Without racks,
    // claims in ascending runs, one per owner (as a deal leaves them), are counted per run.
    #[cfg(test)]
    let racks_checked = rack_aware && !RACKS_UNCHECKED.with(std::cell::Cell::get);
    #[cfg(not(test))]
    let racks_checked = rack_aware;
    // With racks, condition 4 is checked claim by claim in the count below (which runs per
    // claim there), sharing its lookup of the owner.
    let mut home = None;
    if racks_checked {
        let Some(found) = Home::new(problem, comp) else {
            return false;
        };
        home = Some(found);
    }
    let mut seen = vec![usize::MAX; n];
    let mut count = vec![0u32; n];
    let mut load = vec![0u64; n];
    for (i, &t) in comp.topics.iter().enumerate() {
        let partitions = problem.partitions(t) as usize;
        let floor = (partitions / n) as u32;
        let extras = partitions % n;
        let ceiling = floor + u32::from(extras > 0);
        let claims = &owners[t as usize];
        // Racked claims seldom come in runs (alignment scatters a member's partitions of a
        // topic), and a check that fails late costs more than it saves there.
        let runs = if rack_aware {
            None
        } else {
            ascending_runs(claims, ceiling, |m| index.get(comp, m), &mut load)
        };
        let at_ceiling = match runs {
            // With no extras the count below counts nobody at the ceiling (the floor).
            Some(runs) if extras > 0 => runs,
            Some(_) => 0,
            None => {
                let replicas = match &home {
                    Some(_) => problem.topics[t as usize].replica_racks.as_deref(),
                    None => None,
                };
                let mut at_ceiling = 0usize;
                for &(p, m) in claims {
                    let lm = index.get(comp, m);
                    if let (Some(home), Some(replicas)) = (&mut home, replicas)
                        && let Some(names) = replicas.get(p as usize)
                        && home.misplaced(problem, comp, lm, names)
                    {
                        return false;
                    }
                    if seen[lm] != i {
                        seen[lm] = i;
                        count[lm] = 0;
                    }
                    count[lm] += 1;
                    load[lm] += 1;
                    if count[lm] > ceiling {
                        return false;
                    }
                    if extras > 0 && count[lm] == ceiling {
                        at_ceiling += 1;
                    }
                }
                at_ceiling
            }
        };
        #[cfg(test)]
        let at_ceiling = if CEILING_UNCOUNTED.with(std::cell::Cell::get) {
            extras
        } else {
            at_ceiling
        };
        if at_ceiling != extras {
            return false;
        }
    }
    let (Some(&lightest), Some(&heaviest)) = (load.iter().min(), load.iter().max()) else {
        return false;
    };
    #[cfg(test)]
    let heaviest = if LOADS_UNCHECKED.with(std::cell::Cell::get) {
        lightest
    } else {
        heaviest
    };
    if heaviest > lightest + 1 {
        return false;
    }
    // Each list grows by exactly its member's load: room made once, not doubled as it fills.
    for (&m, &count) in comp.members.iter().zip(&load) {
        lists[m as usize].reserve_exact(count as usize);
    }
    for &t in &comp.topics {
        for &(p, m) in &owners[t as usize] {
            lists[m as usize].push((t, p));
        }
    }
    #[cfg(test)]
    SETTLED.with(|c| c.set(c.get() + 1));
    true
}

/// When the owners of `claims` (one topic's, by partition) come in runs, one per owner,
/// of strictly ascending members (as after a deal that hands each member a range) and no
/// run is longer than `ceiling`: adds each run's length to its owner's `load` (by local id,
/// `local(m)`) and returns how many runs reach the ceiling. Otherwise leaves `load` as it
/// was and returns `None`, and the count per claim decides. A member's count of the topic
/// is then the length of its one run, so this is what that count finds, in one comparison
/// per claim.
fn ascending_runs(
    claims: &[(i32, u32)],
    ceiling: u32,
    local: impl Fn(u32) -> usize,
    load: &mut [u64],
) -> Option<usize> {
    #[cfg(test)]
    let checked = !ASCENT_UNCHECKED.with(std::cell::Cell::get);
    #[cfg(not(test))]
    let checked = true;
    if ceiling == 1 {
        // Runs of one claim each: the owners strictly ascend (the common case of a topic
        // with fewer partitions than members, in one comparison and one load per claim).
        let mut last = None;
        for (k, &(_, m)) in claims.iter().enumerate() {
            if checked && last >= Some(m) {
                for &(_, m) in &claims[..k] {
                    load[local(m)] -= 1;
                }
                return None;
            }
            last = Some(m);
            load[local(m)] += 1;
        }
        return Some(claims.len());
    }
    let Some((&(_, first), rest)) = claims.split_first() else {
        return Some(0);
    };
    let (mut m, mut len) = (first, 1u32);
    // Claims in the runs closed so far, and how many of those runs reach the ceiling.
    let (mut closed, mut at_ceiling) = (0usize, 0usize);
    for &(_, next) in rest {
        if next == m {
            len += 1;
            continue;
        }
        if checked && (next < m || len > ceiling) {
            for &(_, m) in &claims[..closed] {
                load[local(m)] -= 1;
            }
            return None;
        }
        at_ceiling += usize::from(len == ceiling);
        load[local(m)] += u64::from(len);
        closed += len as usize;
        (m, len) = (next, 1);
    }
    if checked && len > ceiling {
        for &(_, m) in &claims[..closed] {
            load[local(m)] -= 1;
        }
        return None;
    }
    at_ceiling += usize::from(len == ceiling);
    load[local(m)] += u64::from(len);
    Some(at_ceiling)
}

/// Condition 4's check of one claim at a time: every alignable partition is with an owner
/// in one of its replica racks.
struct Home<'p> {
    /// Per local member: its rack.
    rack: Vec<Own<'p>>,
    /// The rack bits, built at the first owner running in none of its partition's replica
    /// racks (on a settled component, never); `None` inside where the members run in no rack
    /// (nothing can be aligned then).
    bits: Option<Option<RackBits<'p>>>,
}

impl<'p> Home<'p> {
    /// The members' racks, or `None` where they run in more than 64 (the rack bits decline
    /// there, and so does this check).
    fn new(problem: &Problem<'p>, comp: &Component) -> Option<Home<'p>> {
        if comp.racks(problem).len() > 64 {
            return None;
        }
        let rack = comp
            .members
            .iter()
            .map(|&m| match problem.members[m as usize].rack.as_deref() {
                None => Own::None,
                Some(rack) => pack_short(rack.as_bytes()).map_or(Own::Long(rack), Own::Short),
            })
            .collect();
        Some(Home { rack, bits: None })
    }

    /// Whether a partition of replica racks `names` owned by local member `lm` is misplaced:
    /// its owner runs in none of `names` (a comparison of names, without the partition's
    /// mask) and some member of `comp` runs in one of them.
    fn misplaced(
        &mut self,
        problem: &Problem<'p>,
        comp: &Component,
        lm: usize,
        names: &[String],
    ) -> bool {
        let at_home = match self.rack[lm] {
            Own::Short(key) => names
                .iter()
                .any(|name| pack_short(name.as_bytes()) == Some(key)),
            Own::Long(rack) => names.iter().any(|name| same_name(name, rack)),
            Own::None => false,
        };
        !at_home
            && self
                .bits
                .get_or_insert_with(|| RackBits::new(problem, comp))
                .as_ref()
                .is_some_and(|racks| racks.mask(names) != 0)
    }
}

/// A member's rack for the comparisons of [`Home::misplaced`].
#[derive(Clone, Copy)]
enum Own<'a> {
    /// In no rack.
    None,
    /// A name [`pack_short`] represents, as its key.
    Short(u64),
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
