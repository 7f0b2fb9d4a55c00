//! The kafka-protocol crate as a second implementation of the consumer protocol's embedded
//! messages: conversions from our types to its types, and encode/decode with the int16 version
//! prefix that it leaves to its caller.
//!
//! Used on the encode side, and to decode only bytes our own decoder already accepted: its
//! decoder reserves capacity from counts on the wire (six hostile bytes make it try to allocate
//! tens of gigabytes), it ignores trailing bytes and it refuses versions above 3.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{
    self as kp, consumer_protocol_assignment as kpa, consumer_protocol_subscription as kps,
};
use kafka_protocol::protocol::{Decodable, Encodable, StrBytes};
use rebalance::{ConsumerProtocolAssignment, ConsumerProtocolSubscription};

/// kafka-protocol could not encode or decode a message.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum KafkaOracleError {
    /// Its encoder refused the message at this version.
    #[error("kafka-protocol cannot encode version {version}: {message}")]
    Encode {
        /// The version asked for.
        version: i16,
        /// Its error, as text.
        message: String,
    },
    /// The bytes are shorter than the two-byte version prefix.
    #[error("{len} bytes cannot hold the int16 version prefix")]
    NoVersion {
        /// How many bytes there were.
        len: usize,
    },
    /// Its decoder refused the bytes.
    #[error("kafka-protocol cannot decode version {version}: {message}")]
    Decode {
        /// The version read from the prefix.
        version: i16,
        /// Its error, as text.
        message: String,
    },
}

fn str_bytes(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_owned())
}

/// Our subscription as kafka-protocol's value (fields its version cannot carry included: its
/// encoder drops them silently where ours refuses).
#[must_use]
pub fn subscription(x: &ConsumerProtocolSubscription) -> kp::ConsumerProtocolSubscription {
    kp::ConsumerProtocolSubscription::default()
        .with_topics(x.topics.iter().map(|t| str_bytes(t)).collect())
        .with_user_data(x.user_data.clone().map(Bytes::from))
        .with_owned_partitions(
            x.owned_partitions
                .iter()
                .map(|tp| {
                    kps::TopicPartition::default()
                        .with_topic(kp::TopicName(str_bytes(&tp.topic)))
                        .with_partitions(tp.partitions.clone())
                })
                .collect(),
        )
        .with_generation_id(x.generation_id)
        .with_rack_id(x.rack_id.as_deref().map(str_bytes))
}

/// Our assignment as kafka-protocol's value.
#[must_use]
pub fn assignment(x: &ConsumerProtocolAssignment) -> kp::ConsumerProtocolAssignment {
    kp::ConsumerProtocolAssignment::default()
        .with_assigned_partitions(
            x.assigned_partitions
                .iter()
                .map(|tp| {
                    kpa::TopicPartition::default()
                        .with_topic(kp::TopicName(str_bytes(&tp.topic)))
                        .with_partitions(tp.partitions.clone())
                })
                .collect(),
        )
        .with_user_data(x.user_data.clone().map(Bytes::from))
}

/// Encodes `m` at `version`, prefixed with the version as Kafka's embedded messages are.
///
/// # Errors
/// [`KafkaOracleError::Encode`] when kafka-protocol refuses (e.g. a version above 3).
pub fn encode<T: Encodable>(m: &T, version: i16) -> Result<BytesMut, KafkaOracleError> {
    let failed = |message: String| KafkaOracleError::Encode { version, message };
    let size = m.compute_size(version).map_err(|e| failed(e.to_string()))?;
    let mut buf = BytesMut::with_capacity(size + 2);
    buf.put_i16(version);
    m.encode(&mut buf, version)
        .map_err(|e| failed(e.to_string()))?;
    Ok(buf)
}

/// Decodes version-prefixed bytes. Feed it only bytes our decoder accepted (see the module
/// documentation); `Bytes` is taken so that benchmarks compare zero-copy decoding fairly.
///
/// # Errors
/// [`KafkaOracleError::NoVersion`] for fewer than two bytes, [`KafkaOracleError::Decode`] when
/// kafka-protocol refuses the rest.
pub fn decode<T: Decodable>(bytes: &Bytes) -> Result<T, KafkaOracleError> {
    if bytes.len() < 2 {
        return Err(KafkaOracleError::NoVersion { len: bytes.len() });
    }
    let mut buf = bytes.clone();
    let version = buf.get_i16();
    T::decode(&mut buf, version).map_err(|e| KafkaOracleError::Decode {
        version,
        message: e.to_string(),
    })
}
