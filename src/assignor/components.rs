//! Independent parts of a group: the connected components of the member–topic subscription
//! graph.
//!
//! No objective couples two components: they share no member (so no load) and no topic (so no
//! partition, spread or claim). Every objective is a sum over members or partitions, so the
//! lexicographic optimum of the whole is the union of the components' optima: if a component
//! were not optimal for some objective, improving it there would improve the sum. The uniform
//! v2 assignor therefore solves each component on its own, with a closed form when one
//! applies.

use super::problem::Problem;

/// One component: topics (with subscribers) and members (with subscriptions), ascending.
pub(crate) struct Component {
    /// Topic indices, ascending.
    pub topics: Vec<u32>,
    /// Member indices, ascending.
    pub members: Vec<u32>,
    /// One member of each distinct rack, ascending by rack name, once [`Component::racks`]
    /// has found them: several paths ask for the racks of one component, and on large
    /// groups each scan of every member's rack name cost a few percent of a call.
    rack_members: std::cell::OnceCell<Vec<u32>>,
}

impl Component {
    /// Whether all of the component's members subscribe to all of its topics.
    pub fn homogeneous(&self, problem: &Problem<'_>) -> bool {
        self.members
            .iter()
            .all(|&m| problem.subscriptions[m as usize].len() == self.topics.len())
    }

    /// The distinct racks of the component's members, ascending by name.
    pub fn racks<'a>(&self, problem: &Problem<'a>) -> Vec<&'a str> {
        let rack = |m: u32| problem.members[m as usize].rack.as_deref();
        let found = self.rack_members.get_or_init(|| {
            // Groups have few racks: a short scan of those seen beats a tree of names. Past
            // 64 (where the rack-aware paths decline anyway) names are collected, sorted and
            // deduplicated.
            let mut found: Vec<(&str, u32)> = Vec::new();
            for &m in &self.members {
                if let Some(r) = rack(m)
                    && (found.len() > 64 || !found.iter().any(|&(seen, _)| seen == r))
                {
                    found.push((r, m));
                }
            }
            found.sort_unstable();
            found.dedup_by_key(|&mut (r, _)| r);
            found.into_iter().map(|(_, m)| m).collect()
        });
        found.iter().filter_map(|&m| rack(m)).collect()
    }

    /// Whether some partition of the component could be rack-aligned: rack awareness is on
    /// and some partition of its topics has a replica in a rack where one of its members
    /// runs. When not, objective 4 is the same for every assignment.
    pub fn alignable(&self, problem: &Problem<'_>, rack_aware: bool) -> bool {
        if !rack_aware {
            return false;
        }
        let racks = self.racks(problem);
        if racks.is_empty() {
            return false;
        }
        self.topics.iter().any(|&t| {
            problem.topics[t as usize]
                .replica_racks
                .iter()
                .flatten()
                .flatten()
                .any(|r| racks.binary_search(&r.as_str()).is_ok())
        })
    }
}

fn find(parent: &mut [u32], mut x: u32) -> u32 {
    while parent[x as usize] != x {
        let up = parent[parent[x as usize] as usize];
        parent[x as usize] = up;
        x = up;
    }
    x
}

/// The components of `problem`, in order of their smallest topic index.
pub(crate) fn components(problem: &Problem<'_>) -> Vec<Component> {
    let n = problem.topics.len();
    // A member subscribing to every topic (in a homogeneous group, the first) joins them all:
    // one component of every topic and every member with a subscription, with no union.
    let first = problem.subscriptions.iter().find(|s| !s.is_empty());
    #[cfg(test)]
    let every = first.is_some_and(|s| s.len() + usize::from(planted::ALL_BUT_ONE.get()) >= n);
    #[cfg(not(test))]
    let every = first.is_some_and(|s| s.len() == n);
    if every {
        #[cfg(test)]
        planted::EVERY.set(planted::EVERY.get() + 1);
        let members = (0..problem.subscriptions.len() as u32)
            .filter(|&m| !problem.subscriptions[m as usize].is_empty())
            .collect();
        return vec![Component {
            topics: (0..n as u32).collect(),
            members,
            rack_members: std::cell::OnceCell::new(),
        }];
    }
    let mut parent: Vec<u32> = (0..problem.topics.len() as u32).collect();
    // Per first topic, the last member whose topics start with it and were joined.
    let mut joined: Vec<u32> = vec![u32::MAX; problem.topics.len()];
    // The roots among topics with subscribers: once one is left, every such topic is in one
    // component and no later member can join two, so the unions stop (overlapping
    // subscriptions connect everything after a few members).
    #[cfg(test)]
    let whole = if planted::STOP_AT_TWO.get() { 2 } else { 1 };
    #[cfg(not(test))]
    let whole = 1;
    let mut roots = problem.subscribers.iter().filter(|s| !s.is_empty()).count();
    for (m, subs) in problem.subscriptions.iter().enumerate() {
        if roots <= whole {
            #[cfg(test)]
            planted::STOPPED.set(planted::STOPPED.get() + 1);
            break;
        }
        // A member with the same topics as an earlier member with the same first topic joins
        // nothing new (homogeneous groups and buckets, whose members alternate between a few
        // lists: most members), and a slice comparison is cheaper than a find per topic.
        if let Some((&first, rest)) = subs.split_first() {
            let last = joined[first as usize];
            #[cfg(test)]
            if last != u32::MAX && planted::FIRST_TOPIC_ONLY.get() {
                continue;
            }
            if last != u32::MAX && problem.subscriptions[last as usize] == *subs {
                continue;
            }
            joined[first as usize] = m as u32;
            // `a` stays the root of the member's topics joined so far: a union's root is one
            // of the two roots (the lower), so it need not be found again per topic.
            let mut a = find(&mut parent, first);
            for &t in rest {
                let b = find(&mut parent, t);
                if a != b {
                    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
                    parent[hi as usize] = lo;
                    a = lo;
                    roots -= 1;
                }
            }
        }
    }
    let mut slot = vec![u32::MAX; n];
    // Per topic with subscribers: its component's position in `out`.
    let mut of = vec![u32::MAX; n];
    let mut out: Vec<Component> = Vec::new();
    for t in 0..n as u32 {
        if problem.subscribers[t as usize].is_empty() {
            continue;
        }
        let root = find(&mut parent, t) as usize;
        if slot[root] == u32::MAX {
            slot[root] = out.len() as u32;
            out.push(Component {
                topics: Vec::new(),
                members: Vec::new(),
                rack_members: std::cell::OnceCell::new(),
            });
        }
        out[slot[root] as usize].topics.push(t);
        of[t as usize] = slot[root];
    }
    for (m, subs) in problem.subscriptions.iter().enumerate() {
        if let Some(&first) = subs.first() {
            out[of[first as usize] as usize].members.push(m as u32);
        }
    }
    out
}

/// Member index → position in one component's `members`, for hot loops: a dense table when
/// the component holds a good share of the group's members, binary search otherwise (so that
/// many small components never cost a table of the whole group each).
pub(crate) enum LocalIndex {
    /// `table[m]` is m's position (`u32::MAX` for members of other components).
    Dense(Vec<u32>),
    /// Positions found by binary search in the component's sorted `members`.
    Search,
}

impl Component {
    /// The [`LocalIndex`] of this component in a group of `members` members.
    pub fn local_index(&self, members: usize) -> LocalIndex {
        if !self.dense_index(members) {
            return LocalIndex::Search;
        }
        let mut table = vec![u32::MAX; members];
        for (i, &m) in self.members.iter().enumerate() {
            table[m as usize] = i as u32;
        }
        LocalIndex::Dense(table)
    }
}

impl Component {
    /// Whether [`Component::local_index`] in a group of `members` members is
    /// [`LocalIndex::Dense`] (the component holds a good share of the group), without
    /// building its table.
    #[inline]
    pub fn dense_index(&self, members: usize) -> bool {
        self.members.len() * 16 >= members
    }

    /// Whether this component holds every member of a group of `members` members: its
    /// members (ascending, distinct) are then exactly 0..`members`, so every member index is
    /// its own position in [`Component::members`] and no lookup is needed.
    #[inline]
    pub fn holds_every_member(&self, members: usize) -> bool {
        self.members.len() == members
    }
}

impl LocalIndex {
    /// The position of member `m` (a member of `comp`) in `comp.members`.
    #[inline]
    pub fn get(&self, comp: &Component, m: u32) -> usize {
        match self {
            LocalIndex::Dense(table) => table[m as usize] as usize,
            LocalIndex::Search => LocalIndex::search(comp, m),
        }
    }

    /// The position of member `m` (a member of `comp`) in `comp.members`, found as
    /// [`LocalIndex::Search`] finds it: for callers that chose the kind once, outside a loop.
    #[inline]
    pub fn search(comp: &Component, m: u32) -> usize {
        comp.members.partition_point(|&x| x < m)
    }
}

/// Faults a test may plant on its thread, to show the tests catch them.
#[cfg(test)]
pub(crate) mod planted {
    thread_local! {
        /// [`super::components`] skips a member when an earlier one had the same first
        /// topic, whatever the rest of their lists.
        pub(crate) static FIRST_TOPIC_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        /// [`super::components`] stops joining while two roots are left instead of one.
        pub(crate) static STOP_AT_TWO: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        /// [`super::components`] takes a first member subscribing to all topics but one as
        /// subscribing to every topic.
        pub(crate) static ALL_BUT_ONE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        /// Calls of [`super::components`] that found a member subscribing to every topic.
        pub(crate) static EVERY: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
        /// Calls of [`super::components`] that stopped joining before the last member.
        pub(crate) static STOPPED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::Rng;
    use super::super::{GroupSpec, MemberSpec, TopicSpec};
    use super::*;

    /// Up to 12 topics (some with no subscriber) and up to 30 members, each on a few random
    /// topics: often one component, often several.
    fn random(rng: &mut Rng) -> GroupSpec {
        let topics = 1 + rng.below(12) as usize;
        let width = 1 + rng.below(3);
        let mut spec = GroupSpec {
            rack_aware: false,
            topics: (0..topics)
                .map(|t| TopicSpec {
                    name: format!("T{t:02}"),
                    partitions: 2,
                    replica_racks: None,
                })
                .collect(),
            members: (0..1 + rng.below(30))
                .map(|m| MemberSpec {
                    id: format!("M{m:02}"),
                    rack: None,
                    subscriptions: (0..1 + rng.below(width))
                        .map(|_| format!("T{:02}", rng.below(topics as u64)))
                        .collect(),
                    owned: Vec::new(),
                    generation: -1,
                })
                .collect(),
        };
        // A third of the groups: the first member subscribes to every topic, or to all but
        // the last.
        match rng.below(6) {
            0 => spec.members[0].subscriptions = (0..topics).map(|t| format!("T{t:02}")).collect(),
            1 => {
                spec.members[0].subscriptions =
                    (0..topics - 1).map(|t| format!("T{t:02}")).collect()
            }
            _ => {}
        }
        spec
    }

    /// The components by definition: topics labelled by the smallest topic reachable through
    /// shared members, relabelled until nothing changes.
    fn by_definition(problem: &Problem<'_>) -> Vec<(Vec<u32>, Vec<u32>)> {
        let mut label: Vec<u32> = (0..problem.topics.len() as u32).collect();
        let mut changed = true;
        while changed {
            changed = false;
            for subs in &problem.subscriptions {
                let Some(low) = subs.iter().map(|&t| label[t as usize]).min() else {
                    continue;
                };
                for &t in subs {
                    changed |= std::mem::replace(&mut label[t as usize], low) != low;
                }
            }
        }
        let mut out: Vec<(Vec<u32>, Vec<u32>)> = Vec::new();
        for t in 0..problem.topics.len() as u32 {
            if label[t as usize] != t || problem.subscribers[t as usize].is_empty() {
                continue;
            }
            let topics = (t..problem.topics.len() as u32)
                .filter(|&u| label[u as usize] == t && !problem.subscribers[u as usize].is_empty())
                .collect();
            let members = (0..problem.subscriptions.len() as u32)
                .filter(|&m| {
                    problem.subscriptions[m as usize]
                        .first()
                        .is_some_and(|&f| label[f as usize] == t)
                })
                .collect();
            out.push((topics, members));
        }
        out
    }

    /// Whether the components of `spec` are those of the definition.
    fn as_defined(spec: &GroupSpec) -> bool {
        let problem = Problem::new(spec);
        let got: Vec<(Vec<u32>, Vec<u32>)> = components(&problem)
            .into_iter()
            .map(|c| (c.topics, c.members))
            .collect();
        got == by_definition(&problem)
    }

    /// The unions stop once every topic with subscribers has one root: the components equal
    /// their definition, with many calls stopping early; stopping with two roots left (a
    /// planted fault) is caught.
    #[test]
    fn the_unions_stop_only_when_one_component_is_left() {
        let mut rng = Rng(0xc0de);
        let specs: Vec<GroupSpec> = (0..300).map(|_| random(&mut rng)).collect();
        planted::STOPPED.set(0);
        assert!(specs.iter().all(as_defined));
        let stopped = planted::STOPPED.get();
        assert!(stopped > 50, "stopped early in {stopped} calls");
        planted::STOP_AT_TWO.set(true);
        let caught = specs.iter().filter(|s| !as_defined(s)).count();
        planted::STOP_AT_TWO.set(false);
        assert!(caught > 20, "planted fault caught {caught} times");
    }

    /// A first member subscribing to every topic gives the one component of the definition
    /// at once; taking one subscribing to all topics but one for it (a planted fault) is
    /// caught.
    #[test]
    fn a_member_on_every_topic_makes_one_component() {
        let mut rng = Rng(0xe4e7);
        let specs: Vec<GroupSpec> = (0..300).map(|_| random(&mut rng)).collect();
        planted::EVERY.set(0);
        assert!(specs.iter().all(as_defined));
        let every = planted::EVERY.get();
        assert!(every > 40, "a member on every topic in {every} calls");
        planted::ALL_BUT_ONE.set(true);
        let caught = specs.iter().filter(|s| !as_defined(s)).count();
        planted::ALL_BUT_ONE.set(false);
        assert!(caught > 10, "planted fault caught {caught} times");
    }
}
