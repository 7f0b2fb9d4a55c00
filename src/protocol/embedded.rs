//! The one place where the protocol meets the embedded-protocol wire format.
//!
//! The coordinator carries these bytes opaquely; only members (and the leader among them) encode
//! and decode them, through the functions here. They translate between the protocol's own view
//! ([`SubscriptionInfo`], [`AssignmentInfo`]) and the codec's messages, so swapping the wire
//! format touches this file only.
//!
//! Subscriptions are [`ConsumerProtocolSubscription`] (v0 for eager members, v2 with owned
//! partitions and their generation for the cooperative family, v3 whenever a rack is set);
//! assignments are [`ConsumerProtocolAssignment`] v0 (eager), [`CooperativeAssignment`] v0
//! (simple cooperative) or v1 with the scheduled delay (deferred and incremental).

use std::collections::{BTreeMap, BTreeSet};

use thiserror::Error;

use crate::codec::{
    ConsumerProtocolAssignment, ConsumerProtocolSubscription, CooperativeAssignment, DecodeError,
    EncodeError, TopicPartitions,
};
use crate::ids::{Generation, TopicPartition};

/// What a member tells the leader in its JoinGroup metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubscriptionInfo {
    /// Topics the member subscribes to.
    pub topics: BTreeSet<String>,
    /// Partitions it owns now (always empty for eager members).
    pub owned: BTreeSet<TopicPartition>,
    /// The generation `owned` was assigned in ([`Generation::NONE`] when unknown).
    pub generation: Generation,
    /// The member's rack, if known.
    pub rack: Option<String>,
}

impl Default for SubscriptionInfo {
    /// Subscribed to nothing, owning nothing, no generation, no rack.
    fn default() -> Self {
        SubscriptionInfo {
            topics: BTreeSet::new(),
            owned: BTreeSet::new(),
            generation: Generation::NONE,
            rack: None,
        }
    }
}

/// What the leader tells one member in the SyncGroup answer.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct AssignmentInfo {
    /// Everything the member owns after this round (for the cooperative family this excludes
    /// what it must revoke and what waits for another member to revoke).
    pub assigned: BTreeSet<TopicPartition>,
    /// Partitions the member must give up now (cooperative family only).
    pub revoked: BTreeSet<TopicPartition>,
    /// Milliseconds after which the member should rejoin; 0 means nothing is scheduled.
    pub delay_ms: u32,
}

/// The wire format of an assignment, chosen by the rebalance protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AssignmentFormat {
    /// `ConsumerProtocolAssignment` v0: assigned partitions only.
    Eager,
    /// `CooperativeAssignment` v0: assigned and revoked partitions.
    CooperativeV0,
    /// `CooperativeAssignment` v1: assigned, revoked and the scheduled rebalance delay.
    CooperativeV1,
}

/// Embedded-protocol bytes that could not be decoded, or a value that could not be encoded.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum EmbeddedError {
    /// The bytes are not a valid message of the expected kind.
    #[error("malformed {what}: {source}")]
    Decode {
        /// Which message was expected (`subscription`, `assignment`).
        what: &'static str,
        /// The codec's error, naming the field and byte offset.
        source: DecodeError,
    },
    /// The value cannot be written (for example a topic name longer than the format allows).
    #[error("cannot encode {what}: {source}")]
    Encode {
        /// Which message (`subscription`, `assignment`).
        what: &'static str,
        /// The codec's error.
        source: EncodeError,
    },
}

fn group(partitions: &BTreeSet<TopicPartition>) -> Vec<TopicPartitions> {
    let mut out: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
    for tp in partitions {
        out.entry(tp.topic.as_str()).or_default().push(tp.partition);
    }
    out.into_iter()
        .map(|(topic, partitions)| TopicPartitions {
            topic: topic.to_owned(),
            partitions,
        })
        .collect()
}

fn ungroup(grouped: Vec<TopicPartitions>) -> BTreeSet<TopicPartition> {
    grouped
        .into_iter()
        .flat_map(|tps| {
            let topic = tps.topic;
            tps.partitions
                .into_iter()
                .map(move |p| TopicPartition::new(topic.clone(), p))
        })
        .collect()
}

/// Encodes a subscription; `cooperative` selects the version carrying owned partitions and
/// their generation.
///
/// # Errors
/// [`EmbeddedError::Encode`] when the codec cannot write a field (an over-long topic name).
pub fn encode_subscription(
    sub: &SubscriptionInfo,
    cooperative: bool,
) -> Result<Vec<u8>, EmbeddedError> {
    let version = match (cooperative, sub.rack.is_some()) {
        (_, true) => 3,
        (true, false) => 2,
        (false, false) => 0,
    };
    let wire = ConsumerProtocolSubscription {
        version,
        topics: sub.topics.iter().cloned().collect(),
        user_data: None,
        owned_partitions: if cooperative {
            group(&sub.owned)
        } else {
            Vec::new()
        },
        generation_id: if cooperative {
            sub.generation.0
        } else {
            Generation::NONE.0
        },
        rack_id: sub.rack.clone(),
    };
    wire.encode().map_err(|source| EmbeddedError::Encode {
        what: "subscription",
        source,
    })
}

/// Decodes a subscription (any version: v0 carries no owned partitions, v1 no generation).
///
/// # Errors
/// [`EmbeddedError::Decode`] naming the field and byte offset.
pub fn decode_subscription(bytes: &[u8]) -> Result<SubscriptionInfo, EmbeddedError> {
    let wire =
        ConsumerProtocolSubscription::decode(bytes).map_err(|source| EmbeddedError::Decode {
            what: "subscription",
            source,
        })?;
    Ok(SubscriptionInfo {
        topics: wire.topics.into_iter().collect(),
        owned: ungroup(wire.owned_partitions),
        generation: Generation(wire.generation_id),
        rack: wire.rack_id,
    })
}

/// Encodes an assignment in `format` (the eager format carries only `assigned`).
///
/// # Errors
/// [`EmbeddedError::Encode`] when the codec cannot write a field.
pub fn encode_assignment(
    assignment: &AssignmentInfo,
    format: AssignmentFormat,
) -> Result<Vec<u8>, EmbeddedError> {
    let encoded = match format {
        AssignmentFormat::Eager => ConsumerProtocolAssignment {
            version: 0,
            assigned_partitions: group(&assignment.assigned),
            user_data: None,
        }
        .encode(),
        AssignmentFormat::CooperativeV0 => CooperativeAssignment {
            version: 0,
            assigned_partitions: group(&assignment.assigned),
            revoked_partitions: group(&assignment.revoked),
            scheduled_rebalance_timeout_ms: 0,
        }
        .encode(),
        AssignmentFormat::CooperativeV1 => CooperativeAssignment {
            version: 1,
            assigned_partitions: group(&assignment.assigned),
            revoked_partitions: group(&assignment.revoked),
            scheduled_rebalance_timeout_ms: i32::try_from(assignment.delay_ms).unwrap_or(i32::MAX),
        }
        .encode(),
    };
    encoded.map_err(|source| EmbeddedError::Encode {
        what: "assignment",
        source,
    })
}

/// Decodes an assignment of `format`. A negative scheduled delay reads as none.
///
/// # Errors
/// [`EmbeddedError::Decode`] naming the field and byte offset.
pub fn decode_assignment(
    bytes: &[u8],
    format: AssignmentFormat,
) -> Result<AssignmentInfo, EmbeddedError> {
    let err = |source| EmbeddedError::Decode {
        what: "assignment",
        source,
    };
    match format {
        AssignmentFormat::Eager => {
            let wire = ConsumerProtocolAssignment::decode(bytes).map_err(err)?;
            Ok(AssignmentInfo {
                assigned: ungroup(wire.assigned_partitions),
                ..AssignmentInfo::default()
            })
        }
        AssignmentFormat::CooperativeV0 | AssignmentFormat::CooperativeV1 => {
            let wire = CooperativeAssignment::decode(bytes).map_err(err)?;
            Ok(AssignmentInfo {
                assigned: ungroup(wire.assigned_partitions),
                revoked: ungroup(wire.revoked_partitions),
                delay_ms: u32::try_from(wire.scheduled_rebalance_timeout_ms).unwrap_or(0),
            })
        }
    }
}
