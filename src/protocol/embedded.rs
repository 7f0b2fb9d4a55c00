//! The one place where the protocol meets the embedded-protocol wire format.
//!
//! The coordinator carries these bytes opaquely; only members (and the leader among them) encode
//! and decode them, through the functions here. They translate between the protocol's own view
//! ([`SubscriptionInfo`], [`AssignmentInfo`]) and the codec's messages, so swapping the wire
//! format touches this file only.
//!
//! Until the `codec` module's messages are available this module uses a stand-in encoding (JSON
//! of the same fields); the shapes and versions below follow the codec's messages:
//! subscriptions are `ConsumerProtocolSubscription` (v0 for eager members, v2 with owned
//! partitions and their generation for the cooperative family), assignments are
//! `ConsumerProtocolAssignment` (eager), `CooperativeAssignment` v0 (simple cooperative) or v1 with
//! the scheduled delay (deferred and incremental).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::ids::{Generation, TopicPartition};

/// What a member tells the leader in its JoinGroup metadata.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
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
    /// `ConsumerProtocolAssignment`: assigned partitions only.
    Eager,
    /// `CooperativeAssignment` v0: assigned and revoked partitions.
    CooperativeV0,
    /// `CooperativeAssignment` v1: assigned, revoked and the scheduled rebalance delay.
    CooperativeV1,
}

/// Embedded-protocol bytes that could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum EmbeddedError {
    /// The bytes are not a valid message of the expected kind.
    #[error("malformed {what}: {reason}")]
    Malformed {
        /// Which message was expected (`subscription`, `assignment`).
        what: &'static str,
        /// What was wrong.
        reason: String,
    },
}

#[derive(Serialize, Deserialize)]
struct WireSubscription {
    version: i16,
    topics: Vec<String>,
    owned_partitions: BTreeMap<String, Vec<i32>>,
    generation_id: i32,
    rack_id: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct WireAssignment {
    version: i16,
    assigned_partitions: BTreeMap<String, Vec<i32>>,
    revoked_partitions: BTreeMap<String, Vec<i32>>,
    scheduled_rebalance_timeout_ms: i32,
}

fn group(partitions: &BTreeSet<TopicPartition>) -> BTreeMap<String, Vec<i32>> {
    let mut out: BTreeMap<String, Vec<i32>> = BTreeMap::new();
    for tp in partitions {
        out.entry(tp.topic.clone()).or_default().push(tp.partition);
    }
    out
}

fn ungroup(grouped: BTreeMap<String, Vec<i32>>) -> BTreeSet<TopicPartition> {
    grouped
        .into_iter()
        .flat_map(|(topic, ps)| {
            ps.into_iter()
                .map(move |p| TopicPartition::new(topic.clone(), p))
        })
        .collect()
}

/// Encodes a subscription; `cooperative` selects the version carrying owned partitions.
#[must_use]
pub fn encode_subscription(sub: &SubscriptionInfo, cooperative: bool) -> Vec<u8> {
    let wire = WireSubscription {
        version: if cooperative { 2 } else { 0 },
        topics: sub.topics.iter().cloned().collect(),
        owned_partitions: if cooperative {
            group(&sub.owned)
        } else {
            BTreeMap::new()
        },
        generation_id: if cooperative {
            sub.generation.0
        } else {
            Generation::NONE.0
        },
        rack_id: sub.rack.clone(),
    };
    // Strings, integers and maps always serialise.
    serde_json::to_vec(&wire).unwrap_or_default()
}

/// Decodes a subscription.
///
/// # Errors
/// [`EmbeddedError::Malformed`] when the bytes are not a subscription.
pub fn decode_subscription(bytes: &[u8]) -> Result<SubscriptionInfo, EmbeddedError> {
    let wire: WireSubscription =
        serde_json::from_slice(bytes).map_err(|e| EmbeddedError::Malformed {
            what: "subscription",
            reason: e.to_string(),
        })?;
    Ok(SubscriptionInfo {
        topics: wire.topics.into_iter().collect(),
        owned: ungroup(wire.owned_partitions),
        generation: Generation(wire.generation_id),
        rack: wire.rack_id,
    })
}

/// Encodes an assignment in `format` (fields the format lacks are dropped).
#[must_use]
pub fn encode_assignment(assignment: &AssignmentInfo, format: AssignmentFormat) -> Vec<u8> {
    let (version, revoked, delay) = match format {
        AssignmentFormat::Eager => (0, BTreeMap::new(), 0),
        AssignmentFormat::CooperativeV0 => (0, group(&assignment.revoked), 0),
        AssignmentFormat::CooperativeV1 => (
            1,
            group(&assignment.revoked),
            i32::try_from(assignment.delay_ms).unwrap_or(i32::MAX),
        ),
    };
    let wire = WireAssignment {
        version,
        assigned_partitions: group(&assignment.assigned),
        revoked_partitions: revoked,
        scheduled_rebalance_timeout_ms: delay,
    };
    serde_json::to_vec(&wire).unwrap_or_default()
}

/// Decodes an assignment of `format`.
///
/// # Errors
/// [`EmbeddedError::Malformed`] when the bytes are not an assignment.
pub fn decode_assignment(
    bytes: &[u8],
    format: AssignmentFormat,
) -> Result<AssignmentInfo, EmbeddedError> {
    let wire: WireAssignment =
        serde_json::from_slice(bytes).map_err(|e| EmbeddedError::Malformed {
            what: "assignment",
            reason: e.to_string(),
        })?;
    let delay_ms = match format {
        AssignmentFormat::CooperativeV1 => {
            u32::try_from(wire.scheduled_rebalance_timeout_ms).unwrap_or(0)
        }
        _ => 0,
    };
    Ok(AssignmentInfo {
        assigned: ungroup(wire.assigned_partitions),
        revoked: ungroup(wire.revoked_partitions),
        delay_ms,
    })
}
