//! Partition classes: the partitions of a topic that no objective can tell apart.
//!
//! Two partitions of one topic are interchangeable for every objective when they have the
//! same previous owner and the same set of replica racks (restricted to racks where some
//! subscriber of the topic runs, and only when rack alignment is on). The uniform v2 assignor
//! works on class sizes instead of single partitions, which keeps its flow network small.

use std::collections::BTreeMap;

use super::problem::Problem;

/// One class: its topic, replica racks, previous owner and partitions (ascending).
pub(crate) struct Class {
    /// Topic index.
    pub topic: u32,
    /// Rack ids (indices into the sorted member rack names) holding a replica and where some
    /// subscriber runs, ascending; empty when rack alignment is off.
    pub racks: Vec<u32>,
    /// The previous owner (member index), if any.
    pub owner: Option<u32>,
    /// Where the class's partitions (ascending) lie in [`Classes::partitions`]: one buffer for
    /// every class rather than a list each, as most classes hold a partition or two.
    pub partitions: std::ops::Range<usize>,
}

/// All classes of a problem, topic by topic, each topic's classes in key order.
pub(crate) struct Classes {
    /// The classes, grouped by topic in topic order.
    pub classes: Vec<Class>,
    /// For every member, its rack id, if it has one and rack alignment is on.
    pub member_rack: Vec<Option<u32>>,
    /// Every class's partitions, class after class (see [`Class::partitions`]).
    partition_buffer: Vec<i32>,
}

impl Classes {
    /// Groups the partitions of every subscribed topic of `problem` into classes, given the
    /// previous owners from [`previous_owners`](super::claims::previous_owners), computed once by
    /// the caller.
    pub fn new(problem: &Problem<'_>, rack_aware: bool, owners: &[Vec<(i32, u32)>]) -> Classes {
        let mut racks: Vec<String> = if rack_aware {
            problem
                .members
                .iter()
                .filter_map(|m| m.rack.clone())
                .collect()
        } else {
            Vec::new()
        };
        racks.sort_unstable();
        racks.dedup();
        let rack_id = |name: &str| racks.binary_search_by(|r| r.as_str().cmp(name)).ok();
        let member_rack: Vec<Option<u32>> = problem
            .members
            .iter()
            .map(|m| m.rack.as_deref().and_then(&rack_id).map(|r| r as u32))
            .collect();
        let mut classes = Vec::new();
        let total: usize = problem
            .subscribers
            .iter()
            .enumerate()
            .filter(|(_, subs)| !subs.is_empty())
            .map(|(t, _)| problem.partitions(t as u32) as usize)
            .sum();
        let mut buffer: Vec<i32> = Vec::with_capacity(total);
        // (owner, partition) of one topic's claims, reused from topic to topic.
        let mut by_owner: Vec<(u32, i32)> = Vec::new();
        for (t, subs) in problem.subscribers.iter().enumerate() {
            if subs.is_empty() {
                continue;
            }
            let topic = problem.topics[t];
            let count = problem.partitions(t as u32) as usize;
            let owned = &owners[t];
            let replica = topic.replica_racks.as_ref().filter(|_| !racks.is_empty());
            match replica {
                None => {
                    // Classes by owner only: the unowned class, then one per owner (owners
                    // ascending, each one's partitions ascending).
                    let start = buffer.len();
                    let mut next = owned.iter().map(|&(p, _)| p).peekable();
                    for p in 0..count as i32 {
                        if next.peek() == Some(&p) {
                            next.next();
                        } else {
                            buffer.push(p);
                        }
                    }
                    if buffer.len() > start {
                        classes.push(Class {
                            topic: t as u32,
                            racks: Vec::new(),
                            owner: None,
                            partitions: start..buffer.len(),
                        });
                    }
                    by_owner.clear();
                    by_owner.extend(owned.iter().map(|&(p, m)| (m, p)));
                    by_owner.sort_unstable();
                    for run in by_owner.chunk_by(|a, b| a.0 == b.0) {
                        let start = buffer.len();
                        buffer.extend(run.iter().map(|&(_, p)| p));
                        classes.push(Class {
                            topic: t as u32,
                            racks: Vec::new(),
                            owner: Some(run[0].0),
                            partitions: start..buffer.len(),
                        });
                    }
                }
                Some(replica) => {
                    // Racks that some subscriber of this topic runs in.
                    let mut present: Vec<u32> = subs
                        .iter()
                        .filter_map(|&m| member_rack[m as usize])
                        .collect();
                    present.sort_unstable();
                    present.dedup();
                    let mut by_key: BTreeMap<(Vec<u32>, Option<u32>), Vec<i32>> = BTreeMap::new();
                    let mut next = owned.iter().peekable();
                    for (p, names) in replica.iter().enumerate() {
                        let p = p as i32;
                        let owner = match next.peek() {
                            Some(&&(q, m)) if q == p => {
                                next.next();
                                Some(m)
                            }
                            _ => None,
                        };
                        let mut ids: Vec<u32> = names
                            .iter()
                            .filter_map(|n| rack_id(n))
                            .map(|r| r as u32)
                            .filter(|r| present.binary_search(r).is_ok())
                            .collect();
                        ids.sort_unstable();
                        ids.dedup();
                        by_key.entry((ids, owner)).or_default().push(p);
                    }
                    for ((racks, owner), partitions) in by_key {
                        let start = buffer.len();
                        buffer.extend(partitions);
                        classes.push(Class {
                            topic: t as u32,
                            racks,
                            owner,
                            partitions: start..buffer.len(),
                        });
                    }
                }
            }
        }
        Classes {
            classes,
            member_rack,
            partition_buffer: buffer,
        }
    }

    /// The partitions of `class` (one of [`Classes::classes`]), ascending.
    pub fn partitions(&self, class: &Class) -> &[i32] {
        &self.partition_buffer[class.partitions.clone()]
    }

    /// For every topic index, the range of its classes in [`Classes::classes`].
    pub fn by_topic(&self, topics: usize) -> Vec<std::ops::Range<usize>> {
        let mut ranges = vec![0..0; topics];
        let mut i = 0;
        while i < self.classes.len() {
            let t = self.classes[i].topic;
            let mut j = i;
            while j < self.classes.len() && self.classes[j].topic == t {
                j += 1;
            }
            ranges[t as usize] = i..j;
            i = j;
        }
        ranges
    }
}
