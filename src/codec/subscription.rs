//! The consumer protocol's Subscription (member to leader), versions 0–3.

use serde::{Deserialize, Serialize};

use super::wire::{self, Reader};
use super::{DecodeError, EmbeddedMessage, EncodeError, TopicPartitions};

/// What a member tells the leader when it joins: the topics it wants, opaque assignor data, and
/// (from v1) what it owns, (v2) the generation it owned it in, (v3) its rack.
///
/// Layout: `version:int16 topics:[string] user_data:nullable bytes`, then
/// v1+ `owned_partitions:[topic:string partitions:[int32]]`, v2+ `generation_id:int32`,
/// v3+ `rack_id:nullable string`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct ConsumerProtocolSubscription {
    /// The message version (the JSON form requires it).
    pub version: i16,
    /// The topics subscribed to.
    #[serde(default)]
    pub topics: Vec<String>,
    /// Opaque data for the assignor; `None` is written as null, distinct from empty.
    #[serde(default, with = "super::hex::option")]
    pub user_data: Option<Vec<u8>>,
    /// v1+: the partitions the member owns from its last assignment.
    #[serde(default)]
    pub owned_partitions: Vec<TopicPartitions>,
    /// v2+: the generation `owned_partitions` were assigned in; -1 when unknown.
    #[serde(default = "no_generation")]
    pub generation_id: i32,
    /// v3+: the member's rack, if known.
    #[serde(default)]
    pub rack_id: Option<String>,
}

fn no_generation() -> i32 {
    -1
}

impl Default for ConsumerProtocolSubscription {
    /// The highest known version, nothing subscribed, null user data, generation -1, no rack.
    fn default() -> Self {
        ConsumerProtocolSubscription {
            version: Self::HIGHEST_KNOWN_VERSION,
            topics: Vec::new(),
            user_data: None,
            owned_partitions: Vec::new(),
            generation_id: -1,
            rack_id: None,
        }
    }
}

impl ConsumerProtocolSubscription {
    /// Encodes the message (see [`EmbeddedMessage::encode`]).
    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        EmbeddedMessage::encode(self)
    }

    /// Decodes a whole message (see [`EmbeddedMessage::decode`]).
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        <Self as EmbeddedMessage>::decode(bytes)
    }
}

impl EmbeddedMessage for ConsumerProtocolSubscription {
    const NAME: &'static str = "subscription";
    const HIGHEST_KNOWN_VERSION: i16 = 3;

    fn version(&self) -> i16 {
        self.version
    }

    fn set_version(&mut self, version: i16) {
        self.version = version;
    }

    fn encoded_len(&self) -> Result<usize, EncodeError> {
        let v = self.version;
        wire::check_version(v)?;
        wire::check_carried(self.owned_partitions.is_empty(), "owned_partitions", v, 1)?;
        wire::check_carried(self.generation_id == -1, "generation_id", v, 2)?;
        wire::check_carried(self.rack_id.is_none(), "rack_id", v, 3)?;
        let mut size = 2 + wire::strings_size(&self.topics, "topics")?;
        size += wire::nullable_bytes_size(self.user_data.as_deref(), "user_data")?;
        if v >= 1 {
            size += wire::topic_partitions_size(&self.owned_partitions, "owned_partitions")?;
        }
        if v >= 2 {
            size += 4;
        }
        if v >= 3 {
            size += wire::nullable_string_size(self.rack_id.as_deref(), "rack_id")?;
        }
        Ok(size)
    }

    fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        let mut out = Vec::with_capacity(self.encoded_len()?);
        let v = self.version;
        wire::put_i16(&mut out, v);
        wire::put_strings(&mut out, &self.topics);
        wire::put_nullable_bytes(&mut out, self.user_data.as_deref());
        if v >= 1 {
            wire::put_topic_partitions(&mut out, &self.owned_partitions);
        }
        if v >= 2 {
            wire::put_i32(&mut out, self.generation_id);
        }
        if v >= 3 {
            wire::put_nullable_string(&mut out, self.rack_id.as_deref());
        }
        Ok(out)
    }

    fn decode_prefix(bytes: &[u8]) -> Result<(Self, usize), DecodeError> {
        let mut r = Reader::new(bytes);
        let version = wire::read_version(&mut r)?;
        let topics = r.strings("topics")?;
        let user_data = r.nullable_bytes("user_data")?;
        let owned_partitions = if version >= 1 {
            r.topic_partitions("owned_partitions")?
        } else {
            Vec::new()
        };
        let generation_id = if version >= 2 {
            r.i32("generation_id")?
        } else {
            -1
        };
        let rack_id = if version >= 3 {
            r.nullable_string("rack_id")?
        } else {
            None
        };
        let message = ConsumerProtocolSubscription {
            version,
            topics,
            user_data,
            owned_partitions,
            generation_id,
            rack_id,
        };
        Ok((message, r.position()))
    }
}
