//! Test-only helpers: a small sticky assignor and builders.

use std::collections::{BTreeMap, BTreeSet};

use crate::assignor::{Assignment, Assignor, GroupSpec, SpecError};
use crate::ids::{MemberId, TopicPartition};
use crate::protocol::leader::AssignorRef;
use crate::protocol::member::{MemberConfig, RebalanceProtocol};

/// A deterministic sticky assignor for tests: per topic, every subscriber gets ⌊n/k⌋ or ⌈n/k⌉
/// partitions; claimed partitions stay with their claimant up to that quota (lowest partitions
/// first); the rest go to the least-loaded subscriber, smallest id first.
pub struct StickyTestAssignor;

impl Assignor for StickyTestAssignor {
    fn name(&self) -> &'static str {
        "sticky-test"
    }

    fn assign(&self, spec: &GroupSpec) -> Result<Assignment, SpecError> {
        spec.validate()?;
        let mut out: BTreeMap<MemberId, BTreeMap<String, Vec<i32>>> = spec
            .members
            .iter()
            .map(|m| (m.member_id(), BTreeMap::new()))
            .collect();
        for topic in &spec.topics {
            let subs: Vec<MemberId> = spec
                .members
                .iter()
                .filter(|m| m.subscriptions.contains(&topic.name))
                .map(|m| m.member_id())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            if subs.is_empty() {
                continue;
            }
            let n = usize::try_from(topic.partitions).unwrap_or(0);
            let base = n / subs.len();
            let mut extra = n % subs.len();
            let mut taken: BTreeMap<i32, MemberId> = BTreeMap::new();
            let mut load: BTreeMap<MemberId, usize> = subs.iter().map(|m| (m.clone(), 0)).collect();
            let mut claims: BTreeMap<MemberId, Vec<i32>> = BTreeMap::new();
            for m in &spec.members {
                for owned in m.owned.iter().filter(|o| o.topic == topic.name) {
                    let mut ps: Vec<i32> = owned
                        .partitions
                        .iter()
                        .copied()
                        .filter(|p| *p >= 0 && (*p as usize) < n)
                        .collect();
                    ps.sort_unstable();
                    claims.entry(m.member_id()).or_default().extend(ps);
                }
            }
            // Keep claims up to the base quota, then one extra where extra slots remain.
            for round in 0..2 {
                for m in &subs {
                    let Some(ps) = claims.get(m) else { continue };
                    for p in ps {
                        let l = load[m];
                        let fits = if round == 0 {
                            l < base
                        } else {
                            l == base && extra > 0
                        };
                        if fits && !taken.contains_key(p) {
                            taken.insert(*p, m.clone());
                            *load.get_mut(m).unwrap_or(&mut 0) += 1;
                            if round == 1 {
                                extra -= 1;
                            }
                        }
                    }
                }
            }
            for p in 0..i32::try_from(n).unwrap_or(0) {
                if taken.contains_key(&p) {
                    continue;
                }
                let under_base = subs
                    .iter()
                    .filter(|m| load[*m] < base)
                    .min_by_key(|m| (load[*m], *m));
                let target = match under_base {
                    Some(m) => m.clone(),
                    None => {
                        let Some(m) = subs.iter().filter(|m| load[*m] == base).min() else {
                            continue;
                        };
                        extra = extra.saturating_sub(1);
                        m.clone()
                    }
                };
                taken.insert(p, target.clone());
                *load.get_mut(&target).unwrap_or(&mut 0) += 1;
            }
            for (p, m) in taken {
                if let Some(topics) = out.get_mut(&m) {
                    topics.entry(topic.name.clone()).or_default().push(p);
                }
            }
        }
        Ok(Assignment::from(out))
    }
}

/// The test assignor, shared.
pub fn sticky() -> AssignorRef {
    AssignorRef::new(StickyTestAssignor)
}

/// A member subscribing to topic `T` with the test assignor.
pub fn member(id: &str, protocol: RebalanceProtocol) -> MemberConfig {
    MemberConfig::new(id, ["T"], protocol, sticky())
}

/// Topic `T` with `n` partitions.
pub fn topic_t(n: u32) -> BTreeMap<String, u32> {
    BTreeMap::from([("T".to_owned(), n)])
}

/// Partitions of topic `T`, written as the reference's `T1`..`T4` (`T1` is partition 0).
pub fn t(labels: &[u32]) -> BTreeSet<TopicPartition> {
    labels
        .iter()
        .map(|l| TopicPartition::new("T", i32::try_from(*l).unwrap_or(0) - 1))
        .collect()
}

/// A member id.
pub fn id(s: &str) -> MemberId {
    MemberId::from(s)
}
