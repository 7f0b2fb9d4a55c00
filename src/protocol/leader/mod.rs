//! The leader's rebalance policies. The member the coordinator made leader runs one of them on
//! the decoded subscriptions of a join phase to produce every member's assignment.
//!
//! Every policy first asks the [`Assignor`] for the *target* (the balanced, sticky assignment
//! it wants eventually), then decides how much of it to hand out this round:
//!
//! - [`eager`]: all of it (members released everything before joining).
//! - [`cooperative`]: the target minus every partition another member still claims; those are
//!   revoked from their claimants now and assigned one round later.
//! - [`deferred`]: like cooperative, but partitions of members that left are held back for the
//!   scheduled rebalance delay, in case their owner (or a replacement) returns.
//! - [`incremental`]: like deferred, but at most `max_moves` partitions change owner per
//!   scheduled round.
//!
//! The leader's memory ([`LeaderMemory`]) lives in the leader member and is lost when
//! leadership moves; a new leader falls back to the reference design's heuristic.

pub mod claims;
pub mod cooperative;
pub mod deferred;
pub mod eager;
pub mod incremental;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::assignor::{Assignor, GroupSpec, MemberSpec, OwnedPartitions, SpecError, TopicSpec};
use crate::ids::{Generation, MemberId, TopicPartition};
#[cfg(feature = "faults")]
use crate::protocol::fault::FaultSet;

use super::embedded::{AssignmentInfo, SubscriptionInfo};
use super::member::RebalanceProtocol;
use claims::Claims;

/// A shared assignor. Compared, ordered and hashed by [`Assignor::name`], so members holding
/// one stay comparable states for a model checker.
#[derive(Clone)]
pub struct AssignorRef(pub Arc<dyn Assignor>);

impl AssignorRef {
    /// Wraps an assignor.
    #[must_use]
    pub fn new(assignor: impl Assignor + 'static) -> AssignorRef {
        AssignorRef(Arc::new(assignor))
    }

    /// The assignor.
    #[must_use]
    pub fn get(&self) -> &dyn Assignor {
        self.0.as_ref()
    }
}

impl fmt::Debug for AssignorRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AssignorRef({})", self.0.name())
    }
}

impl PartialEq for AssignorRef {
    fn eq(&self, other: &Self) -> bool {
        self.0.name() == other.0.name()
    }
}

impl Eq for AssignorRef {}

impl PartialOrd for AssignorRef {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for AssignorRef {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.name().cmp(other.0.name())
    }
}

impl Hash for AssignorRef {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.name().hash(state);
    }
}

/// What a leader remembers between the rounds it leads.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct LeaderMemory {
    /// The full assignment it handed out in its last round, per member.
    pub previous: BTreeMap<MemberId, BTreeSet<TopicPartition>>,
    /// Partitions of departed members it is holding back.
    pub lost: BTreeSet<TopicPartition>,
    /// When the held partitions are released (absolute `now_ms`).
    pub lost_deadline_ms: Option<u64>,
    /// When the next batch of moves may happen (incremental resolution).
    pub next_move_ms: Option<u64>,
}

/// Everything a policy needs for one round.
pub struct LeaderInput<'a> {
    /// The generation being assigned.
    pub generation: Generation,
    /// The logical time of the round.
    pub now_ms: u64,
    /// Every member's decoded subscription.
    pub members: &'a BTreeMap<MemberId, SubscriptionInfo>,
    /// Partition counts of the topics the leader knows.
    pub topics: &'a BTreeMap<String, u32>,
    /// The policy to run.
    pub protocol: RebalanceProtocol,
    /// The assignor computing the target.
    pub assignor: &'a dyn Assignor,
    /// The leader's memory of its previous round, if it led that round.
    pub memory: Option<&'a LeaderMemory>,
    /// Switched-on faults.
    #[cfg(feature = "faults")]
    pub faults: &'a FaultSet,
}

/// A round's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeaderOutput {
    /// Each member's assignment (every member of the input has one).
    pub assignments: BTreeMap<MemberId, AssignmentInfo>,
    /// The memory to keep for the next round.
    pub memory: LeaderMemory,
}

/// A member → partitions map.
pub type Ownership = BTreeMap<MemberId, BTreeSet<TopicPartition>>;

/// Runs `input.protocol`'s policy.
///
/// # Errors
/// The assignor's [`SpecError`] when it refuses the group spec the leader built.
pub fn lead(input: &LeaderInput<'_>) -> Result<LeaderOutput, SpecError> {
    match input.protocol {
        RebalanceProtocol::Eager => eager::assign(input),
        RebalanceProtocol::SimpleCooperative => cooperative::assign(input),
        RebalanceProtocol::Deferred { delay_ms } => deferred::assign(input, delay_ms, None),
        RebalanceProtocol::Incremental {
            delay_ms,
            max_moves,
        } => deferred::assign(input, delay_ms, Some(max_moves.max(1))),
    }
}

/// Builds the group spec of a round and returns the assignor's target for every member.
pub(crate) fn target(input: &LeaderInput<'_>, claims: &Claims) -> Result<Ownership, SpecError> {
    let sticky = claims.for_assignor(fault_on!(input, TrustAllClaims));
    let spec = GroupSpec {
        rack_aware: false,
        topics: input
            .topics
            .iter()
            .map(|(name, count)| TopicSpec {
                name: name.clone(),
                partitions: i64::from(*count),
                replica_racks: None,
            })
            .collect(),
        members: input
            .members
            .iter()
            .map(|(id, sub)| MemberSpec {
                id: id.0.clone(),
                rack: sub.rack.clone(),
                subscriptions: sub.topics.iter().cloned().collect(),
                owned: group_by_topic(sticky.get(id)),
                generation: sub.generation.0,
            })
            .collect(),
    };
    let assignment = input.assignor.assign(&spec)?;
    let mut out: Ownership = input
        .members
        .keys()
        .map(|m| (m.clone(), BTreeSet::new()))
        .collect();
    for (member, topics) in &assignment {
        if let Some(set) = out.get_mut(member) {
            for (topic, partitions) in topics.iter() {
                set.extend(partitions.iter().map(|&p| TopicPartition::new(topic, p)));
            }
        }
    }
    Ok(out)
}

fn group_by_topic(partitions: Option<&BTreeSet<TopicPartition>>) -> Vec<OwnedPartitions> {
    let mut grouped: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
    for tp in partitions.into_iter().flatten() {
        grouped
            .entry(tp.topic.as_str())
            .or_default()
            .push(tp.partition);
    }
    grouped
        .into_iter()
        .map(|(topic, partitions)| OwnedPartitions {
            topic: topic.to_owned(),
            partitions,
        })
        .collect()
}

/// Every partition of every topic some member subscribes to.
pub(crate) fn subscribed_partitions(input: &LeaderInput<'_>) -> BTreeSet<TopicPartition> {
    let subscribed: BTreeSet<&String> = input.members.values().flat_map(|s| &s.topics).collect();
    input
        .topics
        .iter()
        .filter(|(t, _)| subscribed.contains(t))
        .flat_map(|(t, count)| {
            (0..i32::try_from(*count).unwrap_or(i32::MAX))
                .map(move |p| TopicPartition::new(t.clone(), p))
        })
        .collect()
}
