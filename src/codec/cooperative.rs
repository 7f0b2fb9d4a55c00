//! The incremental cooperative design's Assignment, versions 0–1.

use serde::{Deserialize, Serialize};

use super::wire::{self, Reader};
use super::{DecodeError, EmbeddedMessage, EncodeError, TopicPartitions};

/// The leader's answer under incremental cooperative rebalancing: partitions to take up,
/// partitions to give up, and (from v1, the deferred-resolution design) how long to wait
/// before the next rebalance.
///
/// Layout: `version:int16 assigned_partitions:[topic:string partitions:[int32]]
/// revoked_partitions:[topic:string partitions:[int32]]`, then v1+
/// `scheduled_rebalance_timeout_ms:int32`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct CooperativeAssignment {
    /// The message version (the JSON form requires it).
    pub version: i16,
    /// The partitions the member may start on.
    #[serde(default)]
    pub assigned_partitions: Vec<TopicPartitions>,
    /// The partitions the member must give up before rejoining.
    #[serde(default)]
    pub revoked_partitions: Vec<TopicPartitions>,
    /// v1+: when positive, rejoin this many milliseconds from now; 0 for no scheduled
    /// rebalance.
    #[serde(default)]
    pub scheduled_rebalance_timeout_ms: i32,
}

impl Default for CooperativeAssignment {
    /// The highest known version, nothing assigned or revoked, no scheduled rebalance.
    fn default() -> Self {
        CooperativeAssignment {
            version: Self::HIGHEST_KNOWN_VERSION,
            assigned_partitions: Vec::new(),
            revoked_partitions: Vec::new(),
            scheduled_rebalance_timeout_ms: 0,
        }
    }
}

impl CooperativeAssignment {
    /// Encodes the message (see [`EmbeddedMessage::encode`]).
    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        EmbeddedMessage::encode(self)
    }

    /// Decodes a whole message (see [`EmbeddedMessage::decode`]).
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        <Self as EmbeddedMessage>::decode(bytes)
    }
}

impl EmbeddedMessage for CooperativeAssignment {
    const NAME: &'static str = "cooperative-assignment";
    const HIGHEST_KNOWN_VERSION: i16 = 1;

    fn version(&self) -> i16 {
        self.version
    }

    fn set_version(&mut self, version: i16) {
        self.version = version;
    }

    fn encoded_len(&self) -> Result<usize, EncodeError> {
        let v = self.version;
        wire::check_version(v)?;
        wire::check_carried(
            self.scheduled_rebalance_timeout_ms == 0,
            "scheduled_rebalance_timeout_ms",
            v,
            1,
        )?;
        let mut size =
            2 + wire::topic_partitions_size(&self.assigned_partitions, "assigned_partitions")?;
        size += wire::topic_partitions_size(&self.revoked_partitions, "revoked_partitions")?;
        if v >= 1 {
            size += 4;
        }
        Ok(size)
    }

    fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        let mut out = Vec::with_capacity(self.encoded_len()?);
        wire::put_i16(&mut out, self.version);
        wire::put_topic_partitions(&mut out, &self.assigned_partitions);
        wire::put_topic_partitions(&mut out, &self.revoked_partitions);
        if self.version >= 1 {
            wire::put_i32(&mut out, self.scheduled_rebalance_timeout_ms);
        }
        Ok(out)
    }

    fn decode_prefix(bytes: &[u8]) -> Result<(Self, usize), DecodeError> {
        let mut r = Reader::new(bytes);
        let version = wire::read_version(&mut r)?;
        let assigned_partitions = r.topic_partitions("assigned_partitions")?;
        let revoked_partitions = r.topic_partitions("revoked_partitions")?;
        let scheduled_rebalance_timeout_ms = if version >= 1 {
            r.i32("scheduled_rebalance_timeout_ms")?
        } else {
            0
        };
        let message = CooperativeAssignment {
            version,
            assigned_partitions,
            revoked_partitions,
            scheduled_rebalance_timeout_ms,
        };
        Ok((message, r.position()))
    }
}
