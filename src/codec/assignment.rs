//! The consumer protocol's Assignment (leader to member), versions 0–3.

use serde::{Deserialize, Serialize};

use super::wire::{self, Reader};
use super::{DecodeError, EmbeddedMessage, EncodeError, TopicPartitions};

/// What the leader hands each member: its partitions and opaque assignor data.
///
/// Layout (the same in every version 0–3; later versions only changed what the data means):
/// `version:int16 assigned_partitions:[topic:string partitions:[int32]]
/// user_data:nullable bytes`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct ConsumerProtocolAssignment {
    /// The message version (the JSON form requires it).
    pub version: i16,
    /// The partitions assigned to the member.
    #[serde(default)]
    pub assigned_partitions: Vec<TopicPartitions>,
    /// Opaque data from the assignor; `None` is written as null, distinct from empty.
    #[serde(default, with = "super::hex::option")]
    pub user_data: Option<Vec<u8>>,
}

impl Default for ConsumerProtocolAssignment {
    /// The highest known version, nothing assigned, null user data.
    fn default() -> Self {
        ConsumerProtocolAssignment {
            version: Self::HIGHEST_KNOWN_VERSION,
            assigned_partitions: Vec::new(),
            user_data: None,
        }
    }
}

impl ConsumerProtocolAssignment {
    /// Encodes the message (see [`EmbeddedMessage::encode`]).
    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        EmbeddedMessage::encode(self)
    }

    /// Decodes a whole message (see [`EmbeddedMessage::decode`]).
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        <Self as EmbeddedMessage>::decode(bytes)
    }
}

impl EmbeddedMessage for ConsumerProtocolAssignment {
    const NAME: &'static str = "assignment";
    const HIGHEST_KNOWN_VERSION: i16 = 3;

    fn version(&self) -> i16 {
        self.version
    }

    fn set_version(&mut self, version: i16) {
        self.version = version;
    }

    fn encoded_len(&self) -> Result<usize, EncodeError> {
        wire::check_version(self.version)?;
        Ok(
            2 + wire::topic_partitions_size(&self.assigned_partitions, "assigned_partitions")?
                + wire::nullable_bytes_size(self.user_data.as_deref(), "user_data")?,
        )
    }

    fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        let mut out = Vec::with_capacity(self.encoded_len()?);
        wire::put_i16(&mut out, self.version);
        wire::put_topic_partitions(&mut out, &self.assigned_partitions);
        wire::put_nullable_bytes(&mut out, self.user_data.as_deref());
        Ok(out)
    }

    fn decode_prefix(bytes: &[u8]) -> Result<(Self, usize), DecodeError> {
        let mut r = Reader::new(bytes);
        let version = wire::read_version(&mut r)?;
        let assigned_partitions = r.topic_partitions("assigned_partitions")?;
        let user_data = r.nullable_bytes("user_data")?;
        let message = ConsumerProtocolAssignment {
            version,
            assigned_partitions,
            user_data,
        };
        Ok((message, r.position()))
    }
}
