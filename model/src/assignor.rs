//! The assignors the model can give its leaders.
//!
//! `model-sticky` is a small sticky, balanced assignor kept in the model crate so the model
//! does not depend on the full assignors' branch: per topic, every subscriber gets ⌊P/n⌋ or
//! ⌈P/n⌉ partitions, previous owners (highest-generation claim; equal-generation duplicates
//! count for nobody, the KAFKA-7026 rule) keep what they can, and the rest goes to the least
//! loaded subscribers by id. It is deterministic. The model's properties do not depend on which
//! assignor runs, only on the protocol around it.

use std::collections::{BTreeMap, BTreeSet};

use rebalance::protocol::AssignorRef;
use rebalance::{Assignment, Assignor, GroupSpec, MemberId, SpecError};

/// The model's sticky balanced assignor (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct ModelSticky;

impl Assignor for ModelSticky {
    fn name(&self) -> &'static str {
        "model-sticky"
    }

    fn assign(&self, spec: &GroupSpec) -> Result<Assignment, SpecError> {
        spec.validate()?;
        let mut out: BTreeMap<MemberId, BTreeMap<String, Vec<i32>>> = spec
            .members
            .iter()
            .map(|m| (MemberId(m.id.clone()), BTreeMap::new()))
            .collect();
        let mut topics: Vec<_> = spec.topics.iter().collect();
        topics.sort_by(|a, b| a.name.cmp(&b.name));
        for topic in topics {
            let subscribers: BTreeSet<&str> = spec
                .members
                .iter()
                .filter(|m| m.subscriptions.contains(&topic.name))
                .map(|m| m.id.as_str())
                .collect();
            if subscribers.is_empty() || topic.partitions <= 0 {
                continue;
            }
            let count = i32::try_from(topic.partitions).unwrap_or(i32::MAX);
            // Previous owner of each partition: the unique highest-generation claimant.
            let mut claims: BTreeMap<i32, Vec<(i32, &str)>> = BTreeMap::new();
            for m in &spec.members {
                if !subscribers.contains(m.id.as_str()) {
                    continue;
                }
                for owned in m.owned.iter().filter(|o| o.topic == topic.name) {
                    for &p in owned.partitions.iter().collect::<BTreeSet<_>>() {
                        if (0..count).contains(&p) {
                            claims.entry(p).or_default().push((m.generation, &m.id));
                        }
                    }
                }
            }
            let mut previous: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
            for (p, mut cs) in claims {
                cs.sort();
                let top = cs[cs.len() - 1].0;
                let at_top: Vec<_> = cs.iter().filter(|(g, _)| *g == top).collect();
                if at_top.len() == 1 {
                    previous.entry(at_top[0].1).or_default().push(p);
                }
            }
            let n = subscribers.len() as i32;
            let base = count / n;
            let mut extra = count % n;
            let mut given: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
            let mut taken = BTreeSet::new();
            // Keep previous partitions up to the base quota, then one more while extras last.
            for m in &subscribers {
                let mine = previous.get(m).cloned().unwrap_or_default();
                let mut keep: Vec<i32> = mine.iter().copied().take(base as usize).collect();
                if mine.len() > base as usize && extra > 0 {
                    keep.push(mine[base as usize]);
                    extra -= 1;
                }
                taken.extend(keep.iter().copied());
                given.insert(m, keep);
            }
            // Hand out the rest, least loaded first (ties by id), never above the quota.
            for p in (0..count).filter(|p| !taken.contains(p)) {
                let Some(m) = subscribers
                    .iter()
                    .filter(|m| {
                        let have = given[*m].len() as i32;
                        have < base || (have == base && extra > 0)
                    })
                    .min_by_key(|m| (given[*m].len(), **m))
                else {
                    continue;
                };
                if given[m].len() as i32 == base {
                    extra -= 1;
                }
                given.entry(m).or_default().push(p);
            }
            for (m, mut ps) in given {
                if ps.is_empty() {
                    continue;
                }
                ps.sort_unstable();
                out.entry(MemberId(m.to_owned()))
                    .or_default()
                    .insert(topic.name.clone(), ps);
            }
        }
        Ok(Assignment { assignment: out })
    }
}

/// The assignor a configuration names, if the model knows it.
#[must_use]
pub fn assignor_by_name(name: &str) -> Option<AssignorRef> {
    match name {
        "model-sticky" => Some(AssignorRef::new(ModelSticky)),
        _ => None,
    }
}

/// The assignor names [`assignor_by_name`] accepts.
pub const ASSIGNORS: &str = "model-sticky";

#[cfg(test)]
mod tests {
    use super::*;
    use rebalance::{MemberSpec, OwnedPartitions, TopicSpec};

    fn member(id: &str, owned: &[i32], generation: i32) -> MemberSpec {
        MemberSpec {
            id: id.to_owned(),
            rack: None,
            subscriptions: vec!["t".to_owned()],
            owned: vec![OwnedPartitions {
                topic: "t".to_owned(),
                partitions: owned.to_vec(),
            }],
            generation,
        }
    }

    fn spec(members: Vec<MemberSpec>, partitions: i64) -> GroupSpec {
        GroupSpec {
            rack_aware: false,
            topics: vec![TopicSpec {
                name: "t".to_owned(),
                partitions,
                replica_racks: None,
            }],
            members,
        }
    }

    fn parts(a: &Assignment, m: &str) -> Vec<i32> {
        a.assignment[&MemberId::from(m)]
            .get("t")
            .cloned()
            .unwrap_or_default()
    }

    #[test]
    fn balanced_sticky_and_complete() {
        let a = ModelSticky
            .assign(&spec(
                vec![member("a", &[0, 1, 2], 3), member("b", &[], -1)],
                3,
            ))
            .unwrap();
        assert_eq!(parts(&a, "a"), vec![0, 1]);
        assert_eq!(parts(&a, "b"), vec![2]);
    }

    #[test]
    fn equal_generation_duplicates_count_for_nobody() {
        let a = ModelSticky
            .assign(&spec(
                vec![
                    member("a", &[0], 2),
                    member("b", &[0], 2),
                    member("c", &[], -1),
                ],
                3,
            ))
            .unwrap();
        let all: Vec<i32> = ["a", "b", "c"].iter().flat_map(|m| parts(&a, m)).collect();
        assert_eq!(all.len(), 3);
        assert_eq!(all.iter().collect::<BTreeSet<_>>().len(), 3);
        // The higher-generation claim wins.
        let a = ModelSticky
            .assign(&spec(vec![member("a", &[1], 1), member("b", &[1], 2)], 2))
            .unwrap();
        assert_eq!(parts(&a, "b"), vec![1]);
    }
}
