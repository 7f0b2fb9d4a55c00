//! The group spec: the one input format of every assignor, used alike by the CLI, the proofs,
//! the fuzzers and the protocol's leader.
//!
//! JSON shape (fields in brackets are optional):
//!
//! ```json
//! {"rack_aware": true,
//!  "topics":  [{"name": "T1", "partitions": 3, "replica_racks": [["r1","r2"], ["r2"], ["r3"]]}],
//!  "members": [{"id": "A", "rack": "r1", "subscriptions": ["T1"],
//!               "owned": [{"topic": "T1", "partitions": [0, 2]}], "generation": 4}]}
//! ```
//!
//! Topics and members are lists, not maps, so that duplicates can be reported rather than
//! silently merged. Claims of unknown topics, partitions out of range and subscriptions to
//! topics not in the spec are *not* errors: members lag behind metadata, and such entries are
//! ignored by every assignor.

use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::ids::{Generation, MemberId};

/// The largest partition count a topic may have in a spec (2^24).
pub const MAX_PARTITIONS_PER_TOPIC: u32 = 1 << 24;

/// A group to assign: its topics, its members and what they owned before.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct GroupSpec {
    /// Whether rack alignment (objective 4) is in force.
    #[serde(default)]
    pub rack_aware: bool,
    /// The topics that exist, each once.
    pub topics: Vec<TopicSpec>,
    /// The members of the group, each id once.
    pub members: Vec<MemberSpec>,
}

/// One topic of a [`GroupSpec`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct TopicSpec {
    /// The topic's name, unique within the spec.
    pub name: String,
    /// How many partitions it has (numbered `0..partitions`); at most
    /// [`MAX_PARTITIONS_PER_TOPIC`].
    pub partitions: i64,
    /// For each partition, the racks holding one of its replicas. When present it has exactly
    /// `partitions` entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_racks: Option<Vec<Vec<String>>>,
}

/// One member of a [`GroupSpec`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct MemberSpec {
    /// The member's id, unique within the spec.
    pub id: String,
    /// The rack the member runs in, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rack: Option<String>,
    /// The topics it subscribes to (names not in the spec are ignored; repeats count once).
    pub subscriptions: Vec<String>,
    /// The partitions it claims to own from its last assignment.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owned: Vec<OwnedPartitions>,
    /// The generation its `owned` partitions were assigned in; `-1` when unknown.
    #[serde(default = "no_generation")]
    pub generation: i32,
}

fn no_generation() -> i32 {
    Generation::NONE.0
}

/// Partitions of one topic that a member claims.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct OwnedPartitions {
    /// The topic's name.
    pub topic: String,
    /// The claimed partition numbers.
    pub partitions: Vec<i32>,
}

/// Why a group spec was refused. Each variant names the offending item.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum SpecError {
    /// The text is not valid JSON for a group spec.
    #[error("malformed group spec at line {line}, column {column}: {message}")]
    Json {
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// What the parser expected or found.
        message: String,
    },
    /// Two members share an id.
    #[error("duplicate member id {0:?}")]
    DuplicateMember(String),
    /// Two topics share a name.
    #[error("duplicate topic name {0:?}")]
    DuplicateTopic(String),
    /// A topic's partition count is negative or above [`MAX_PARTITIONS_PER_TOPIC`].
    #[error("topic {topic:?} has {partitions} partitions; expected 0..={max}", max = MAX_PARTITIONS_PER_TOPIC)]
    PartitionCount {
        /// The topic.
        topic: String,
        /// The count given.
        partitions: i64,
    },
    /// A topic's `replica_racks` does not have one entry per partition.
    #[error("topic {topic:?} has {partitions} partitions but {found} replica_racks entries")]
    ReplicaRacksLength {
        /// The topic.
        topic: String,
        /// Its partition count.
        partitions: i64,
        /// How many `replica_racks` entries were given.
        found: usize,
    },
}

impl GroupSpec {
    /// Parses and validates a spec from JSON text.
    ///
    /// # Errors
    /// [`SpecError::Json`] with the line and column of malformed JSON, or any validation error
    /// of [`GroupSpec::validate`].
    pub fn from_json(text: &str) -> Result<GroupSpec, SpecError> {
        let spec: GroupSpec = serde_json::from_str(text).map_err(|e| SpecError::Json {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        spec.validate()?;
        Ok(spec)
    }

    /// Checks the rules that JSON parsing alone cannot: unique member ids and topic names,
    /// partition counts in `0..=2^24`, and one `replica_racks` entry per partition.
    ///
    /// # Errors
    /// The first violation found, in input order: topics first, then members.
    pub fn validate(&self) -> Result<(), SpecError> {
        // Hash sets, only inserted into: their order never shows. A tree of 1,000 member ids
        // cost more than a tenth of assigning a large group.
        let mut names = FxHashSet::default();
        names.reserve(self.topics.len());
        for topic in &self.topics {
            if !names.insert(topic.name.as_str()) {
                return Err(SpecError::DuplicateTopic(topic.name.clone()));
            }
            if topic.partitions < 0 || topic.partitions > i64::from(MAX_PARTITIONS_PER_TOPIC) {
                return Err(SpecError::PartitionCount {
                    topic: topic.name.clone(),
                    partitions: topic.partitions,
                });
            }
            if let Some(racks) = &topic.replica_racks
                && racks.len() as i64 != topic.partitions
            {
                return Err(SpecError::ReplicaRacksLength {
                    topic: topic.name.clone(),
                    partitions: topic.partitions,
                    found: racks.len(),
                });
            }
        }
        let mut ids = FxHashSet::default();
        ids.reserve(self.members.len());
        for member in &self.members {
            if !ids.insert(member.id.as_str()) {
                return Err(SpecError::DuplicateMember(member.id.clone()));
            }
        }
        Ok(())
    }

    /// The spec as pretty JSON (the same format [`GroupSpec::from_json`] reads).
    #[must_use]
    pub fn to_json(&self) -> String {
        // Serialising plain strings, integers and vectors cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

impl MemberSpec {
    /// The member's id as a [`MemberId`].
    #[must_use]
    pub fn member_id(&self) -> MemberId {
        MemberId(self.id.clone())
    }
}
