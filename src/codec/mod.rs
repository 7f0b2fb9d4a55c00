//! The embedded-protocol wire codec: the consumer protocol's Subscription and Assignment
//! (versions 0–3, byte-for-byte as Kafka writes them) and the incremental cooperative design's
//! Assignment (versions 0–1).
//!
//! # Encoding
//! Every message starts with a big-endian int16 version. Strings are an int16 length and UTF-8,
//! bytes an int32 length, arrays an int32 count; -1 is null where a field is nullable. Fields
//! added by later versions are appended, so a message's layout at version `k` is a prefix of its
//! layout at any later version.
//!
//! # Guarantees
//! - Decoding never panics and checks every length against the bytes left before allocating:
//!   a decode holds at most a small multiple of its input's size.
//! - Errors name the field, the byte offset and what was expected against what was found.
//! - Encoding is canonical: `decode(encode(x)) == x` for every value its version can carry, and
//!   `encode(decode(b)) == b` for every `b` of a known version that decodes. To make the second
//!   law hold, null and empty are distinct and both kept: `user_data` and `rack_id` are
//!   `Option`s (-1 is `None`, 0 is `Some` of an empty value); the arrays and topic names are not
//!   nullable, as in Kafka's schema, so a null count there is an error, never an empty array;
//!   and a length below -1 is an error rather than another spelling of null (Kafka's Java reader
//!   accepts any negative length as null).
//! - Encoding a non-default value into a version that cannot carry it is an error
//!   ([`EncodeError::FieldNotInVersion`]), not a silent drop.
//!
//! # Future versions
//! As Kafka does, a version above the highest known is read with the highest known layout and
//! any bytes after it are ignored (for a known version they are an error). The decoded value
//! keeps the version it was sent with, and encoding it writes that version followed by the
//! highest known layout: the re-encoding is exactly the prefix of the original that this codec
//! understood. Relabel the value with [`EmbeddedMessage::set_version`] to answer a future peer in
//! a version the codec knows.

mod assignment;
mod cooperative;
mod error;
pub mod hex;
mod subscription;
mod wire;

pub use assignment::ConsumerProtocolAssignment;
pub use cooperative::CooperativeAssignment;
pub use error::{DecodeError, EncodeError};
pub use hex::HexError;
pub use subscription::ConsumerProtocolSubscription;

use serde::{Deserialize, Serialize};

/// The partitions of one topic, as the messages list them on the wire.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[serde(deny_unknown_fields)]
pub struct TopicPartitions {
    /// The topic's name (at most `i16::MAX` bytes of UTF-8 to be encodable).
    pub topic: String,
    /// The partition numbers, in the order they are written.
    pub partitions: Vec<i32>,
}

/// What the three embedded-protocol messages share, so laws, fuzzers and the CLI are written
/// once for all of them.
pub trait EmbeddedMessage: Sized + Clone + std::fmt::Debug + PartialEq {
    /// The message's name on the command line (`subscription`, `assignment`,
    /// `cooperative-assignment`).
    const NAME: &'static str;
    /// The highest version whose layout the codec knows.
    const HIGHEST_KNOWN_VERSION: i16;

    /// The version the message is (or will be) written in.
    fn version(&self) -> i16;

    /// Relabels the message with another version, leaving its fields alone.
    fn set_version(&mut self, version: i16);

    /// The exact number of bytes [`encode`](Self::encode) will produce, after checking the
    /// value is encodable.
    fn encoded_len(&self) -> Result<usize, EncodeError>;

    /// Encodes the message, version prefix included.
    fn encode(&self) -> Result<Vec<u8>, EncodeError>;

    /// Decodes a message and reports how many bytes it used; bytes after that are not looked
    /// at, whatever the version.
    fn decode_prefix(bytes: &[u8]) -> Result<(Self, usize), DecodeError>;

    /// Decodes a whole message: trailing bytes are an error for a known version and ignored
    /// for a future one.
    fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        let (message, used) = Self::decode_prefix(bytes)?;
        let version = message.version();
        if version <= Self::HIGHEST_KNOWN_VERSION && used < bytes.len() {
            return Err(DecodeError::TrailingBytes {
                field: "end of message".to_owned(),
                offset: used,
                version,
                found_bytes: bytes.len() - used,
            });
        }
        Ok(message)
    }
}

#[cfg(test)]
mod tests;
