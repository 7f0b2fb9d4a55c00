//! The extras of a homogeneous component before any choice: per topic with r_t > 0, the
//! members that gain from its extra (more than f_t claims), and q, s of the
//! [parent module](super).

use std::ops::Deref;
use std::rc::Rc;

use super::super::components::Component;
use super::super::problem::Problem;
use super::greedy::sort_ids;
#[cfg(test)]
use super::planted;
use super::{TopicExtras, rotation};

/// The topics of a homogeneous component that have extras, before any choice.
pub(crate) struct Extras {
    /// Per topic with extras (in `comp.topics` order): its extras and gaining members
    /// (local ids, ascending), nothing chosen yet unless
    /// [`quick_extras`](super::quick_extras) chose.
    pub(super) topics: Vec<TopicExtras>,
    /// q = ⌊E/n⌋, where E is the number of extras of all topics.
    pub(super) q: u32,
    /// s = E mod n.
    pub(super) s: u32,
}

impl Extras {
    /// The extras of `comp` with previous owners `owners`.
    pub(crate) fn new(
        problem: &Problem<'_>,
        comp: &Component,
        owners: &[Vec<(i32, u32)>],
    ) -> Extras {
        let (topics, q, s) = topic_extras(problem, comp, owners, false);
        Extras { topics, q, s }
    }

    /// [`Extras::new`], or `None` where some topic with extras has a gaining member: the
    /// same lists, stopped at the first topic that lists one.
    pub(crate) fn unless_gain(
        problem: &Problem<'_>,
        comp: &Component,
        owners: &[Vec<(i32, u32)>],
    ) -> Option<Extras> {
        let (topics, q, s) = topic_extras(problem, comp, owners, true);
        if topics.last().is_some_and(|x| !x.gaining.is_empty()) {
            return None;
        }
        // No topic stopped the lists: they are all of them.
        Some(Extras { topics, q, s })
    }

    /// Chooses the rotation, whoever gains ([`Choice::Rotation`]).
    pub(crate) fn rotate(&mut self, n: usize) {
        rotation(&mut self.topics, n);
    }

    /// The topics, with the members [`quick_extras`](super::quick_extras) chose.
    pub(crate) fn topics(&self) -> &[TopicExtras] {
        &self.topics
    }

    /// Forgets what was chosen, so that another choice can start from the same extras.
    pub(crate) fn clear_chosen(&mut self) {
        for x in &mut self.topics {
            x.chosen.clear();
            x.chosen_gaining = false;
        }
    }
}

/// Per topic with extras (in `comp.topics` order): its extras and gaining members (local
/// ids, ascending), nothing chosen yet; then q = ⌊E/n⌋ and s = E mod n. With
/// `stop_at_gain`, the topics only up to the first with a gaining member (q and s then
/// count their extras only).
pub(super) fn topic_extras(
    problem: &Problem<'_>,
    comp: &Component,
    owners: &[Vec<(i32, u32)>],
    stop_at_gain: bool,
) -> (Vec<TopicExtras>, u32, u32) {
    if comp.holds_every_member(problem.members.len()) {
        topic_extras_by(comp, problem, owners, |m| m, stop_at_gain)
    } else {
        let index = comp.local_index(problem.members.len());
        topic_extras_by(
            comp,
            problem,
            owners,
            |m| index.get(comp, m) as u32,
            stop_at_gain,
        )
    }
}

/// [`topic_extras`], with `local(m)` the local id of member m.
fn topic_extras_by(
    comp: &Component,
    problem: &Problem<'_>,
    owners: &[Vec<(i32, u32)>],
    local: impl Fn(u32) -> u32,
    stop_at_gain: bool,
) -> (Vec<TopicExtras>, u32, u32) {
    let n = comp.members.len();
    // Per topic with extras: its extras and gaining members (local ids, ascending), the
    // latter as where they lie in `all`, the lists of every topic one after another (shared
    // once they are all known). Room for every topic up front: most topics of a join or leave
    // have extras.
    let mut topics: Vec<TopicExtras> = Vec::with_capacity(comp.topics.len());
    // No topic lists more gaining members than it has owners.
    let mut all: Vec<u32> = Vec::with_capacity(
        comp.topics
            .iter()
            .map(|&t| owners[t as usize].len().min(n))
            .sum(),
    );
    let mut count = vec![0u32; n];
    let mut touched: Vec<u32> = Vec::new();
    // One topic's gaining members where they must be sorted before they join `all`.
    let mut gaining: Vec<u32> = Vec::new();
    // Marks for sorting long lists of gaining members by one scan (see `sort_ids`).
    let mut mark = vec![false; n];
    let mut total_extras = 0u64;
    #[cfg(test)]
    let checked = !planted::ORDER_UNCHECKED.get();
    #[cfg(not(test))]
    let checked = true;
    for &t in &comp.topics {
        let partitions = problem.partitions(t);
        let floor = partitions / n as u32;
        let extra = partitions % n as u32;
        if extra == 0 {
            continue;
        }
        total_extras += u64::from(extra);
        let claims = &owners[t as usize];
        let start = all.len();
        if claims.is_empty() {
            // Nothing claimed (a new group): nothing gains.
        } else if floor == 0 {
            // Every owner gains. After a balanced deal the owners usually come in ascending
            // member order as well as by partition, each once: then the claims list the
            // gaining members as they are (local ids ascend with member indices, so the
            // members are checked: one scan, then one copy).
            let ascending = !checked || claims.windows(2).all(|w| w[0].1 < w[1].1);
            if ascending {
                all.extend(claims.iter().map(|&(_, m)| local(m)));
            } else {
                // Each listed at its first partition, and the counts (only "seen" flags
                // here) are reset through the gaining members, with no list of the touched.
                gaining.clear();
                for &(_, m) in claims {
                    let lm = local(m);
                    let c = &mut count[lm as usize];
                    if *c == 0 {
                        gaining.push(lm);
                    }
                    *c += 1;
                }
                // The ids are distinct and below n, so `sort_ids` only sorts.
                if !gaining.is_sorted() {
                    sort_ids(&mut gaining, &mut mark);
                }
                for &lm in &gaining {
                    count[lm as usize] = 0;
                }
                all.extend_from_slice(&gaining);
            }
        } else if !gaining_in_runs(claims, floor, &local, checked, &mut all) {
            all.truncate(start);
            for &(_, m) in claims {
                let lm = local(m);
                if count[lm as usize] == 0 {
                    touched.push(lm);
                }
                count[lm as usize] += 1;
            }
            gaining.clear();
            gaining.extend(
                touched
                    .iter()
                    .copied()
                    .filter(|&lm| count[lm as usize] > floor),
            );
            sort_ids(&mut gaining, &mut mark);
            // Owners that do not gain must be reset too.
            #[cfg(test)]
            let reset = if planted::RESET_BY_GAINING.get() {
                &gaining
            } else {
                &touched
            };
            #[cfg(not(test))]
            let reset = &touched;
            for &lm in reset {
                count[lm as usize] = 0;
            }
            touched.clear();
            all.extend_from_slice(&gaining);
        }
        topics.push(TopicExtras {
            topic: t,
            extra,
            gaining: Gaining {
                all: None,
                start,
                end: all.len(),
            },
            chosen: Vec::new(),
            chosen_gaining: false,
        });
        if stop_at_gain && all.len() > start {
            break;
        }
    }
    let q = (total_extras / n as u64) as u32;
    let s = (total_extras % n as u64) as u32;
    if !all.is_empty() {
        let all: Rc<[u32]> = all.into();
        for x in &mut topics {
            if !x.gaining.is_empty() {
                x.gaining.all = Some(Rc::clone(&all));
            }
        }
    }
    (topics, q, s)
}

/// A topic's gaining members (local ids, ascending), read as a slice: a part of one list
/// shared by all the topics of an [`Extras`], so that listing them allocates once rather than
/// once per topic.
#[derive(Clone)]
pub(super) struct Gaining {
    /// Every topic's gaining members, one list after another (`None` where none gains).
    all: Option<Rc<[u32]>>,
    /// Where this topic's begin in `all`.
    start: usize,
    /// Where they end.
    end: usize,
}

/// The gaining members of every topic of `topics` (local ids; each topic's ascending), one
/// topic's after another, as one slice: the topics must be those of one [`Extras`], all of
/// them, in any order (the order of the lists is then that of the topics as listed, which
/// a count over members does not see).
pub(super) fn every_gaining(topics: &[TopicExtras]) -> &[u32] {
    let every = topics
        .iter()
        .find_map(|x| x.gaining.all.as_deref())
        .unwrap_or(&[]);
    #[cfg(test)]
    assert_eq!(
        every.len(),
        topics.iter().map(|x| x.gaining.len()).sum::<usize>(),
        "the topics of one Extras, all of them"
    );
    every
}

impl Gaining {
    /// How many gaining members (g_t), without reading the list.
    pub(super) fn len(&self) -> usize {
        self.end - self.start
    }

    /// Whether none gains.
    pub(super) fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

impl Deref for Gaining {
    type Target = [u32];

    fn deref(&self) -> &[u32] {
        match &self.all {
            Some(all) => &all[self.start..self.end],
            None => &[],
        }
    }
}

impl<'a> IntoIterator for &'a Gaining {
    type Item = &'a u32;
    type IntoIter = std::slice::Iter<'a, u32>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// When the owners of `claims` (one topic's, by partition) come in runs, one per owner, of
/// strictly ascending members (as a deal that hands each member a range leaves them; the
/// order is not looked at unless `checked`): a member's count of the topic is the length of
/// its one run, so this puts the local ids (`local(m)`) of the owners whose run is longer
/// than `floor` to `gaining`, ascending, and returns true. Otherwise returns false, and what
/// it appended is to be removed.
fn gaining_in_runs(
    claims: &[(i32, u32)],
    floor: u32,
    local: impl Fn(u32) -> u32,
    checked: bool,
    gaining: &mut Vec<u32>,
) -> bool {
    let Some((&(_, first), rest)) = claims.split_first() else {
        return true;
    };
    let (mut m, mut len) = (first, 1u32);
    for &(_, next) in rest {
        if next == m {
            len += 1;
            continue;
        }
        if checked && next < m {
            return false;
        }
        if len > floor {
            gaining.push(local(m));
        }
        (m, len) = (next, 1);
    }
    if len > floor {
        gaining.push(local(m));
    }
    true
}
