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
    let mut parent: Vec<u32> = (0..problem.topics.len() as u32).collect();
    // Per first topic, the last member whose topics start with it and were joined.
    let mut joined: Vec<u32> = vec![u32::MAX; problem.topics.len()];
    for (m, subs) in problem.subscriptions.iter().enumerate() {
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
                }
            }
        }
    }
    let n = problem.topics.len();
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
        if self.members.len() * 16 < members {
            return LocalIndex::Search;
        }
        let mut table = vec![u32::MAX; members];
        for (i, &m) in self.members.iter().enumerate() {
            table[m as usize] = i as u32;
        }
        LocalIndex::Dense(table)
    }
}

impl LocalIndex {
    /// The position of member `m` (a member of `comp`) in `comp.members`.
    #[inline]
    pub fn get(&self, comp: &Component, m: u32) -> usize {
        match self {
            LocalIndex::Dense(table) => table[m as usize] as usize,
            LocalIndex::Search => comp.members.partition_point(|&x| x < m),
        }
    }
}

/// Faults a test may plant on its thread, to show the tests catch them.
#[cfg(test)]
pub(crate) mod planted {
    thread_local! {
        /// [`super::components`] skips a member when an earlier one had the same first
        /// topic, whatever the rest of their lists.
        pub(crate) static FIRST_TOPIC_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
}
