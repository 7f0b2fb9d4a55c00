//! The canonical form of a validated [`GroupSpec`] shared by every assignor: members sorted
//! by id, topics sorted by name, subscriptions deduplicated and restricted to existing topics.
//! Working on this form, never on the input order, is what makes the assignors deterministic.

use super::{Assignment, GroupSpec, MemberSpec, TopicSpec};
use crate::ids::MemberId;
use names::NameIndex;

pub(crate) mod names;

/// How many distinct recent subscription lists [`Problem::new`] remembers for reuse.
const RECENT_LISTS: usize = 8;

/// A spec in canonical order, with indices in place of names.
pub(crate) struct Problem<'a> {
    /// Members, ascending by id.
    pub members: Vec<&'a MemberSpec>,
    /// Topics, ascending by name.
    pub topics: Vec<&'a TopicSpec>,
    /// For every topic, its subscribers' indices, ascending.
    pub subscribers: Vec<Vec<u32>>,
    /// For every member, the indices of the existing topics it subscribes to, ascending.
    pub subscriptions: Vec<Vec<u32>>,
    /// Topic name → index.
    topic_ids: NameIndex<'a>,
}

impl<'a> Problem<'a> {
    /// The canonical form of `spec`, which must already be validated.
    pub fn new(spec: &'a GroupSpec) -> Problem<'a> {
        let mut members: Vec<&MemberSpec> = spec.members.iter().collect();
        members.sort_by(|a, b| a.id.cmp(&b.id));
        let mut topics: Vec<&TopicSpec> = spec.topics.iter().collect();
        topics.sort_by(|a, b| a.name.cmp(&b.name));
        let topic_ids = NameIndex::new(topics.iter().map(|t| t.name.as_str()));
        let mut problem = Problem {
            members,
            topics,
            subscribers: Vec::new(),
            subscriptions: Vec::new(),
            topic_ids,
        };
        let n = problem.members.len();
        let mut subscriptions: Vec<Vec<u32>> = Vec::with_capacity(n);
        // Members often subscribe to the very same list as a recent member (identical
        // subscriptions, or buckets, whose members alternate between a few lists): then its
        // resolution is reused rather than looking up and sorting every name again. Lists that
        // differ usually differ in their first name, so a miss costs little.
        let mut recent: [usize; RECENT_LISTS] = [usize::MAX; RECENT_LISTS];
        let mut next_slot = 0;
        // For every member, the member whose resolution it reuses (itself if none), and for
        // every member, how many members reuse its resolution (itself included).
        let mut source: Vec<u32> = Vec::with_capacity(n);
        let mut uses: Vec<u32> = vec![0; n];
        for member in &problem.members {
            let list = member.subscriptions.as_slice();
            let same = recent.iter().copied().find(|&k| {
                let other = problem.members.get(k).map(|o| o.subscriptions.as_slice());
                #[cfg(test)]
                if planted::FIRST_NAME_ONLY.get() {
                    return other.is_some_and(|o| o.first() == list.first());
                }
                other.is_some_and(|o| names::same_lists(o, list))
            });
            let (k, subs) = match same {
                Some(k) => (k, subscriptions[k].clone()),
                None => {
                    let k = subscriptions.len();
                    recent[next_slot] = k;
                    next_slot = (next_slot + 1) % RECENT_LISTS;
                    let mut subs: Vec<u32> = list
                        .iter()
                        .filter_map(|name| problem.topic_index(name))
                        .collect();
                    subs.sort_unstable();
                    subs.dedup();
                    (k, subs)
                }
            };
            source.push(k as u32);
            uses[k] += 1;
            subscriptions.push(subs);
        }
        // Subscriber counts, one pass per distinct resolution rather than per member.
        let mut counts = vec![0usize; problem.topics.len()];
        for (k, &u) in uses.iter().enumerate() {
            if u > 0 {
                for &t in &subscriptions[k] {
                    counts[t as usize] += u as usize;
                }
            }
        }
        // Sized first: growing thousands of lists one subscriber at a time reallocates each
        // of them several times. A run of consecutive members sharing one resolution joins
        // each of its topics at once (all members, with identical subscriptions); members
        // stay ascending in every list, as runs come in member order.
        let mut subscribers: Vec<Vec<u32>> =
            counts.iter().map(|&c| Vec::with_capacity(c)).collect();
        let mut start = 0;
        while start < n {
            let end = start
                + source[start..]
                    .iter()
                    .take_while(|&&k| k == source[start])
                    .count();
            #[cfg(test)]
            let end = if planted::RUN_TOO_LONG.get() {
                n.min(end + 1)
            } else {
                end
            };
            for &t in &subscriptions[start] {
                subscribers[t as usize].extend(start as u32..end as u32);
            }
            start = end;
        }
        problem.subscribers = subscribers;
        problem.subscriptions = subscriptions;
        problem
    }

    /// The index of the topic named `name`, if it exists. Inlined: callers look up one name
    /// per claim, and whether the compiler inlined it on its own varied from build to build.
    #[inline]
    pub fn topic_index(&self, name: &str) -> Option<u32> {
        self.topic_ids.get(name)
    }

    /// Whether topic `t` is named `name` (never for a `t` out of range): exactly when
    /// `topic_index(name) == Some(t)`, at the cost of comparing two names.
    #[inline]
    pub fn topic_is(&self, t: u32, name: &str) -> bool {
        self.topic_ids.is(t, name)
    }

    /// Topic `t`'s partition count (validated to fit in `0..=2^24`).
    pub fn partitions(&self, t: u32) -> u32 {
        self.topics[t as usize].partitions as u32
    }

    /// Builds the output from per-member, per-topic partition lists.
    ///
    /// `lists[m]` holds `(topic index, partition)` pairs in any order.
    pub fn assignment(&self, mut lists: Vec<Vec<(u32, i32)>>) -> Assignment {
        let partitions = lists.iter().map(Vec::len).sum();
        let ids = self.members.iter().map(|m| MemberId(m.id.clone()));
        let name = |t: usize| self.topics[t].name.as_str();
        Assignment::from_pairs(self.topics.len(), name, ids, &mut lists, partitions)
    }
}

/// Faults a test may plant on its thread, to show the tests catch them.
#[cfg(test)]
pub(crate) mod planted {
    thread_local! {
        /// [`super::Problem::new`] reuses a recent member's resolved list when the first
        /// names alone match.
        pub(crate) static FIRST_NAME_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        /// [`super::Problem::new`] adds the member after each run of members sharing one
        /// resolution to the run's topics.
        pub(crate) static RUN_TOO_LONG: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
}

#[cfg(test)]
mod tests {
    use super::{Problem, planted};
    use crate::assignor::tests::Rng;
    use crate::assignor::{GroupSpec, MemberSpec, TopicSpec};

    /// Groups whose members come in runs sharing one subscription list (drawn from a pool of
    /// lists with repeated and unknown names), so that runs end on every kind of neighbour.
    fn grouped(seed: u64) -> GroupSpec {
        let mut rng = Rng(seed);
        let mut below = |n: u64| rng.below(n);
        let names: Vec<String> = (0..8).map(|t| format!("T{t}")).collect();
        let pool: Vec<Vec<String>> = (0..5)
            .map(|_| {
                let mut list: Vec<String> =
                    names.iter().filter(|_| below(2) == 0).cloned().collect();
                if below(3) == 0 {
                    list.push("unknown".to_owned());
                }
                if let Some(first) = list.first().cloned() {
                    list.push(first);
                }
                list.reverse();
                list
            })
            .collect();
        let mut members = Vec::new();
        while members.len() < 30 {
            let list = &pool[below(pool.len() as u64) as usize];
            for _ in 0..1 + below(4) {
                members.push(MemberSpec {
                    id: format!("M{:02}", members.len()),
                    rack: None,
                    subscriptions: list.clone(),
                    owned: Vec::new(),
                    generation: -1,
                });
            }
        }
        GroupSpec {
            rack_aware: false,
            topics: names
                .iter()
                .map(|name| TopicSpec {
                    name: name.clone(),
                    partitions: 2,
                    replica_racks: None,
                })
                .collect(),
            members,
        }
    }

    /// Whether every topic's subscribers are exactly the members subscribing to it, ascending,
    /// and every member's subscriptions its existing topics, ascending and distinct.
    fn transposed(spec: &GroupSpec) -> bool {
        let problem = Problem::new(spec);
        let subscriptions_ok =
            problem
                .members
                .iter()
                .zip(&problem.subscriptions)
                .all(|(m, subs)| {
                    let want: std::collections::BTreeSet<u32> = m
                        .subscriptions
                        .iter()
                        .filter_map(|s| problem.topic_index(s))
                        .collect();
                    subs.iter().copied().eq(want)
                });
        let subscribers_ok = (0..problem.topics.len() as u32).all(|t| {
            let want = (0..problem.members.len() as u32)
                .filter(|&m| problem.subscriptions[m as usize].contains(&t));
            problem.subscribers[t as usize].iter().copied().eq(want)
        });
        subscriptions_ok && subscribers_ok
    }

    #[test]
    fn runs_of_shared_lists_give_every_topic_its_subscribers() {
        assert!((0..100).all(|seed| transposed(&grouped(seed))));
    }

    #[test]
    fn a_run_one_member_too_long_is_caught() {
        planted::RUN_TOO_LONG.set(true);
        let caught = (0..100).filter(|&seed| !transposed(&grouped(seed))).count();
        planted::RUN_TOO_LONG.set(false);
        println!("a run one member too long caught in {caught} of 100");
        assert!(caught >= 50, "only {caught} caught");
    }
}
