//! Newtypes for the identifiers, generations and epochs that flow through the protocol.
//!
//! Every id is ordered, so maps keyed by them iterate in a deterministic order.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A group member's id, as the coordinator assigned it (or as a spec names it).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct MemberId(pub String);

impl MemberId {
    /// The id as a string slice.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for MemberId {
    fn from(s: &str) -> Self {
        MemberId(s.to_owned())
    }
}

impl fmt::Display for MemberId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A group generation. Generations increase by one per completed join phase; `-1` means
/// "no generation" (a member that never joined, or a claim with no known generation).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(transparent)]
pub struct Generation(pub i32);

impl Generation {
    /// The generation of a member that has never been assigned anything.
    pub const NONE: Generation = Generation(-1);

    /// The generation after this one.
    #[must_use]
    pub fn next(self) -> Generation {
        Generation(self.0.saturating_add(1))
    }
}

impl fmt::Display for Generation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The epoch of a group coordinator. A coordinator that takes over after failover has a
/// strictly higher epoch than every coordinator before it.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(transparent)]
pub struct CoordinatorEpoch(pub u32);

impl fmt::Display for CoordinatorEpoch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// One partition of one topic. Orders by topic name, then partition number.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct TopicPartition {
    /// The topic's name.
    pub topic: String,
    /// The partition number within the topic.
    pub partition: i32,
}

impl TopicPartition {
    /// A topic-partition from its parts.
    #[must_use]
    pub fn new(topic: impl Into<String>, partition: i32) -> Self {
        TopicPartition {
            topic: topic.into(),
            partition,
        }
    }
}

impl fmt::Display for TopicPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.topic, self.partition)
    }
}
