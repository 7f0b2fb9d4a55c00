//! Laws of the embedded-protocol codec, as reusable checks.
//!
//! Each law takes a [`Codec`] (the real one, or a deliberately broken one in the teeth tests)
//! and returns what it checked or a typed [`LawViolation`]. The fuzz bodies, the property
//! suites and the replay tests all call these functions, so a law is written once.
//!
//! The laws:
//! - [`round_trip`]: `decode(encode(x)) == x` for every `x` that encodes, and `encode` writes
//!   exactly `encoded_len` bytes.
//! - [`canonical`]: on any byte string, decoding either fails cleanly (an error naming a field
//!   and an offset inside the input) or succeeds, and re-encoding gives back exactly the bytes
//!   the decoder used; for a known version those are all the bytes.
//! - [`version_compatibility`]: the layout is append-only (a message at version `k` is a prefix
//!   of the same message at any later known version), a message labelled with a future version
//!   and followed by unknown bytes reads as the highest known layout, and a known version with
//!   bytes left over is refused.
//! - [`bounded_allocation`]: what a decode keeps on the heap is at most
//!   [`ALLOCATION_FACTOR`] times the input's length.

use rebalance::codec::hex::to_hex;
use rebalance::{
    ConsumerProtocolAssignment, ConsumerProtocolSubscription, CooperativeAssignment, DecodeError,
    EmbeddedMessage, EncodeError, TopicPartitions,
};
use thiserror::Error;

/// The most heap bytes a decoded message may hold per input byte. The tightest case is an
/// array of empty topic names: 2 input bytes each, one 24-byte `String` each.
pub const ALLOCATION_FACTOR: usize = 12;

/// A decoded prefix: the message and how many bytes it used.
pub type Prefix<M> = Result<(M, usize), DecodeError>;

/// A codec under test: the three operations as plain functions, so a law can be pointed at a
/// broken variant to show it catches the fault.
pub struct Codec<M> {
    /// Encodes a value.
    pub encode: fn(&M) -> Result<Vec<u8>, EncodeError>,
    /// Decodes a prefix, reporting how many bytes were used.
    pub decode_prefix: fn(&[u8]) -> Prefix<M>,
    /// Decodes a whole message.
    pub decode: fn(&[u8]) -> Result<M, DecodeError>,
}

impl<M: EmbeddedMessage> Codec<M> {
    /// The codec of the `rebalance` crate.
    #[must_use]
    pub fn real() -> Self {
        Codec {
            encode: M::encode,
            decode_prefix: M::decode_prefix,
            decode: M::decode,
        }
    }
}

/// What a law checked when it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checked {
    /// The law held on a value or a byte string that the codec accepted.
    Held,
    /// The value cannot be encoded (in its version); the law says nothing about it.
    NotEncodable(EncodeError),
    /// The bytes were refused, cleanly; nothing more to check.
    Refused(DecodeError),
    /// The law does not apply to this input (a version law given a value of an unknown
    /// version).
    NotApplicable,
}

/// A broken law, with the evidence.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LawViolation {
    /// `decode(encode(x))` is not `x`, or the encoding's length is not the announced one.
    #[error("{message}: round trip broken: {detail}")]
    RoundTrip {
        /// Which message.
        message: &'static str,
        /// The value, the bytes and what differed.
        detail: String,
    },
    /// Accepted bytes do not re-encode to themselves, or an error is not clean.
    #[error("{message}: not canonical: {detail}")]
    Canonical {
        /// Which message.
        message: &'static str,
        /// The bytes and what differed.
        detail: String,
    },
    /// Old and future versions do not read each other as the rules say.
    #[error("{message}: version compatibility broken: {detail}")]
    VersionCompatibility {
        /// Which message.
        message: &'static str,
        /// The versions, the bytes and what differed.
        detail: String,
    },
    /// A decoded value keeps more heap than the input justifies.
    #[error(
        "{message}: decoding {input_len} bytes keeps {heap_bytes} heap bytes, more than {limit}"
    )]
    BoundedAllocation {
        /// Which message.
        message: &'static str,
        /// The input's length.
        input_len: usize,
        /// What the decoded value holds.
        heap_bytes: usize,
        /// [`ALLOCATION_FACTOR`] times the input's length.
        limit: usize,
    },
}

/// Checks `decode(encode(x)) == x` and that the encoding has `encoded_len` bytes.
pub fn round_trip<M: EmbeddedMessage>(codec: &Codec<M>, x: &M) -> Result<Checked, LawViolation> {
    let violation = |detail: String| LawViolation::RoundTrip {
        message: M::NAME,
        detail,
    };
    let bytes = match (codec.encode)(x) {
        Ok(bytes) => bytes,
        Err(e) => {
            if x.encoded_len().is_ok() {
                return Err(violation(format!(
                    "{x:?} has a length but fails to encode: {e}"
                )));
            }
            return Ok(Checked::NotEncodable(e));
        }
    };
    if x.encoded_len() != Ok(bytes.len()) {
        return Err(violation(format!(
            "{x:?} announced {:?} bytes, wrote {}",
            x.encoded_len(),
            bytes.len()
        )));
    }
    match (codec.decode)(&bytes) {
        Ok(y) if &y == x => Ok(Checked::Held),
        Ok(y) => Err(violation(format!(
            "{x:?} encoded as {} decodes as {y:?}",
            to_hex(&bytes)
        ))),
        Err(e) => Err(violation(format!(
            "{x:?} encoded as {} does not decode: {e}",
            to_hex(&bytes)
        ))),
    }
}

/// Checks that `bytes` either decode and re-encode to the bytes used, or are refused with an
/// error that names a field and an offset inside the input.
pub fn canonical<M: EmbeddedMessage + HeapSize>(
    codec: &Codec<M>,
    bytes: &[u8],
) -> Result<Checked, LawViolation> {
    let violation = |detail: String| LawViolation::Canonical {
        message: M::NAME,
        detail,
    };
    let whole = (codec.decode)(bytes);
    let (x, used) = match (codec.decode_prefix)(bytes) {
        Ok(prefix) => prefix,
        Err(e) => {
            if e.field().is_empty() || e.offset() > bytes.len() {
                return Err(violation(format!(
                    "{} gives an unclear error {e:?}",
                    to_hex(bytes)
                )));
            }
            if whole.as_ref().err() != Some(&e) {
                return Err(violation(format!(
                    "{}: decode gives {whole:?} but decode_prefix {e:?}",
                    to_hex(bytes)
                )));
            }
            return Ok(Checked::Refused(e));
        }
    };
    let known = x.version() <= M::HIGHEST_KNOWN_VERSION;
    match &whole {
        Ok(y) if y != &x => {
            return Err(violation(format!(
                "{}: decode and decode_prefix differ",
                to_hex(bytes)
            )));
        }
        Ok(_) if known && used != bytes.len() => {
            return Err(violation(format!(
                "{}: known version {} accepted with {} trailing bytes",
                to_hex(bytes),
                x.version(),
                bytes.len() - used
            )));
        }
        Err(e) if !(known && used < bytes.len()) => {
            return Err(violation(format!(
                "{}: decode_prefix accepts all it needs but decode refuses: {e}",
                to_hex(bytes)
            )));
        }
        _ => {}
    }
    match (codec.encode)(&x) {
        Ok(again) if again[..] == bytes[..used] => {}
        Ok(again) => {
            return Err(violation(format!(
                "{} decodes to {x:?} which re-encodes as {}",
                to_hex(&bytes[..used]),
                to_hex(&again)
            )));
        }
        Err(e) => {
            return Err(violation(format!(
                "{} decodes to {x:?} which does not encode: {e}",
                to_hex(bytes)
            )));
        }
    }
    if whole.is_err() {
        return Ok(Checked::Refused(DecodeError::TrailingBytes {
            field: "end of message".to_owned(),
            offset: used,
            version: x.version(),
            found_bytes: bytes.len() - used,
        }));
    }
    bounded_allocation(bytes.len(), &x)?;
    Ok(Checked::Held)
}

/// Checks how versions read each other, for a value `x` of a known version: the layout at
/// `x.version()` is a prefix of the layout at every later known version; the highest layout
/// labelled `HIGHEST + future_offset` and followed by `suffix` decodes to `x` relabelled;
/// and `x`'s own bytes followed by a non-empty `suffix` are refused.
pub fn version_compatibility<M: EmbeddedMessage>(
    codec: &Codec<M>,
    x: &M,
    future_offset: u8,
    suffix: &[u8],
) -> Result<Checked, LawViolation> {
    let violation = |detail: String| LawViolation::VersionCompatibility {
        message: M::NAME,
        detail,
    };
    let k = x.version();
    if !(0..=M::HIGHEST_KNOWN_VERSION).contains(&k) {
        return Ok(Checked::NotEncodable(EncodeError::NegativeVersion {
            version: k,
        }));
    }
    let own = match (codec.encode)(x) {
        Ok(bytes) => bytes,
        Err(e) => return Ok(Checked::NotEncodable(e)),
    };
    for later in k + 1..=M::HIGHEST_KNOWN_VERSION {
        let mut y = x.clone();
        y.set_version(later);
        let theirs = (codec.encode)(&y)
            .map_err(|e| violation(format!("{x:?} encodes at v{k} but not at v{later}: {e}")))?;
        if theirs.get(2..own.len()) != Some(&own[2..]) {
            return Err(violation(format!(
                "v{k} body {} is not a prefix of v{later} body {}",
                to_hex(&own[2..]),
                to_hex(&theirs[2..])
            )));
        }
    }
    let future = M::HIGHEST_KNOWN_VERSION.saturating_add(1 + i16::from(future_offset));
    let mut y = x.clone();
    y.set_version(future);
    let mut bytes = (codec.encode)(&y)
        .map_err(|e| violation(format!("{x:?} does not encode as v{future}: {e}")))?;
    let understood = bytes.len();
    bytes.extend_from_slice(suffix);
    match (codec.decode)(&bytes) {
        Ok(z) if z == y => {}
        other => {
            return Err(violation(format!(
                "v{future} bytes {} read as {other:?}, expected {y:?}",
                to_hex(&bytes)
            )));
        }
    }
    match (codec.decode_prefix)(&bytes) {
        Ok((_, used)) if used == understood => {}
        other => {
            return Err(violation(format!(
                "v{future} bytes {}: decode_prefix gives {other:?}, expected {understood} bytes used",
                to_hex(&bytes)
            )));
        }
    }
    if !suffix.is_empty() {
        let mut trailing = own.clone();
        trailing.extend_from_slice(suffix);
        match (codec.decode)(&trailing) {
            Err(DecodeError::TrailingBytes { offset, .. }) if offset == own.len() => {}
            other => {
                return Err(violation(format!(
                    "known v{k} with {} trailing bytes {} gives {other:?}, expected a trailing-bytes error at {}",
                    suffix.len(),
                    to_hex(&trailing),
                    own.len()
                )));
            }
        }
    }
    Ok(Checked::Held)
}

/// Checks that `decoded`, read from `input_len` bytes, keeps at most
/// [`ALLOCATION_FACTOR`]` * input_len` bytes of heap.
pub fn bounded_allocation<M: HeapSize + EmbeddedMessage>(
    input_len: usize,
    decoded: &M,
) -> Result<(), LawViolation> {
    let heap_bytes = decoded.heap_bytes();
    let limit = ALLOCATION_FACTOR.saturating_mul(input_len);
    if heap_bytes > limit {
        return Err(LawViolation::BoundedAllocation {
            message: M::NAME,
            input_len,
            heap_bytes,
            limit,
        });
    }
    Ok(())
}

/// The heap bytes a value holds, counted from its capacities (an independent measure: it
/// does not ask the codec).
pub trait HeapSize {
    /// Heap bytes owned by the value, excluding the value itself.
    fn heap_bytes(&self) -> usize;
}

fn vec_bytes<T>(v: &Vec<T>) -> usize {
    v.capacity() * std::mem::size_of::<T>()
}

fn topic_partitions_bytes(v: &Vec<TopicPartitions>) -> usize {
    vec_bytes(v)
        + v.iter()
            .map(|tp| tp.topic.capacity() + vec_bytes(&tp.partitions))
            .sum::<usize>()
}

impl HeapSize for ConsumerProtocolSubscription {
    fn heap_bytes(&self) -> usize {
        vec_bytes(&self.topics)
            + self.topics.iter().map(String::capacity).sum::<usize>()
            + self.user_data.as_ref().map_or(0, vec_bytes)
            + topic_partitions_bytes(&self.owned_partitions)
            + self.rack_id.as_ref().map_or(0, String::capacity)
    }
}

impl HeapSize for ConsumerProtocolAssignment {
    fn heap_bytes(&self) -> usize {
        topic_partitions_bytes(&self.assigned_partitions)
            + self.user_data.as_ref().map_or(0, vec_bytes)
    }
}

impl HeapSize for CooperativeAssignment {
    fn heap_bytes(&self) -> usize {
        topic_partitions_bytes(&self.assigned_partitions)
            + topic_partitions_bytes(&self.revoked_partitions)
    }
}
