//! Ownership claims: which members say they own which partitions, and at which generation.

use std::collections::{BTreeMap, BTreeSet};

use crate::ids::{Generation, MemberId, TopicPartition};
use crate::protocol::embedded::SubscriptionInfo;

/// Every valid claim of the round, by partition. A claim is valid when its topic exists, the
/// partition is in range and the claimant still subscribes to the topic.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Claims {
    by_partition: BTreeMap<TopicPartition, BTreeMap<MemberId, Generation>>,
}

impl Claims {
    /// Collects the valid claims of `members` against the partition counts in `topics`.
    #[must_use]
    pub fn collect(
        members: &BTreeMap<MemberId, SubscriptionInfo>,
        topics: &BTreeMap<String, u32>,
    ) -> Claims {
        let mut by_partition: BTreeMap<TopicPartition, BTreeMap<MemberId, Generation>> =
            BTreeMap::new();
        for (id, sub) in members {
            for tp in &sub.owned {
                let exists = topics.get(&tp.topic).is_some_and(|count| {
                    tp.partition >= 0 && i64::from(tp.partition) < i64::from(*count)
                });
                if exists && sub.topics.contains(&tp.topic) {
                    by_partition
                        .entry(tp.clone())
                        .or_default()
                        .insert(id.clone(), sub.generation);
                }
            }
        }
        Claims { by_partition }
    }

    /// The partition's rightful previous owner: the claimant with the highest generation, when
    /// exactly one claims it at that generation (KAFKA-7026's fix: equal-generation duplicates
    /// are dropped from both).
    #[must_use]
    pub fn owner(&self, tp: &TopicPartition) -> Option<&MemberId> {
        let claimants = self.by_partition.get(tp)?;
        let best = claimants.values().max()?;
        let mut at_best = claimants.iter().filter(|(_, g)| *g == best);
        let first = at_best.next()?;
        if at_best.next().is_some() {
            None
        } else {
            Some(first.0)
        }
    }

    /// Every member claiming `tp`.
    pub fn claimants(&self, tp: &TopicPartition) -> impl Iterator<Item = &MemberId> {
        self.by_partition.get(tp).into_iter().flat_map(|c| c.keys())
    }

    /// Whether any member other than `member` claims `tp`.
    #[must_use]
    pub fn claimed_by_other(&self, tp: &TopicPartition, member: &MemberId) -> bool {
        self.claimants(tp).any(|m| m != member)
    }

    /// The valid claims of `member`.
    #[must_use]
    pub fn claimed_by(&self, member: &MemberId) -> BTreeSet<TopicPartition> {
        self.by_partition
            .iter()
            .filter(|(_, c)| c.contains_key(member))
            .map(|(tp, _)| tp.clone())
            .collect()
    }

    /// Every claimed partition.
    #[must_use]
    pub fn claimed(&self) -> BTreeSet<TopicPartition> {
        self.by_partition.keys().cloned().collect()
    }

    /// The claims to show the assignor for stickiness, per member: each partition under its
    /// rightful owner only, or (`trust_all`, the KAFKA-7026 fault) under every claimant.
    #[must_use]
    pub fn for_assignor(&self, trust_all: bool) -> BTreeMap<MemberId, BTreeSet<TopicPartition>> {
        let mut out: BTreeMap<MemberId, BTreeSet<TopicPartition>> = BTreeMap::new();
        for (tp, claimants) in &self.by_partition {
            if trust_all {
                for m in claimants.keys() {
                    out.entry(m.clone()).or_default().insert(tp.clone());
                }
            } else if let Some(owner) = self.owner(tp) {
                out.entry(owner.clone()).or_default().insert(tp.clone());
            }
        }
        out
    }
}
