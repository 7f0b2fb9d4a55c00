//! Kafka's primitive encodings, shared by every message: big-endian integers, int16-length
//! strings, int32-length bytes and int32-count arrays, with -1 as null where a field is
//! nullable.
//!
//! The reader checks every length against the bytes left *before* allocating, using the fewest
//! bytes one element can take, so a decode never holds more than a small multiple of its input.

use super::TopicPartitions;
use super::error::{DecodeError, EncodeError};

/// The fewest bytes a `(topic, [int32])` element takes: an empty topic and an empty array.
pub(crate) const MIN_TOPIC_PARTITIONS_BYTES: usize = 2 + 4;
/// The fewest bytes a string element takes: an empty string.
pub(crate) const MIN_STRING_BYTES: usize = 2;

const NON_NULL: &str = "a length >= 0 (this field is not nullable)";
const NULLABLE: &str = "-1 (null) or a length >= 0";

/// A cursor over an input that reports where every failure happened.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, pos: 0 }
    }

    /// How many bytes have been read.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// How many bytes are left.
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn take(&mut self, n: usize, field: &str, start: usize) -> Result<&'a [u8], DecodeError> {
        let left = self.remaining();
        if n > left {
            return Err(DecodeError::Truncated {
                field: field.to_owned(),
                offset: start,
                expected_bytes: n,
                found_bytes: left,
            });
        }
        let out = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    pub(crate) fn i16(&mut self, field: &str) -> Result<i16, DecodeError> {
        let start = self.pos;
        let b = self.take(2, field, start)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    pub(crate) fn i32(&mut self, field: &str) -> Result<i32, DecodeError> {
        let start = self.pos;
        let b = self.take(4, field, start)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Reads a length prefix (already read as `raw` from `start`): `None` for -1 when nullable,
    /// and checks that `len * min_elem_bytes` fits in what is left.
    fn length(
        &self,
        raw: i32,
        nullable: bool,
        min_elem_bytes: usize,
        field: &str,
        start: usize,
    ) -> Result<Option<usize>, DecodeError> {
        if raw == -1 && nullable {
            return Ok(None);
        }
        let Ok(len) = usize::try_from(raw) else {
            return Err(DecodeError::InvalidLength {
                field: field.to_owned(),
                offset: start,
                expected: if nullable { NULLABLE } else { NON_NULL },
                found: raw,
            });
        };
        let needed = len.saturating_mul(min_elem_bytes);
        if needed > self.remaining() {
            return Err(DecodeError::LengthExceedsInput {
                field: field.to_owned(),
                offset: start,
                count: len,
                expected_bytes: needed,
                found_bytes: self.remaining(),
            });
        }
        Ok(Some(len))
    }

    /// Reads a non-nullable array count whose elements take at least `min_elem_bytes` each.
    pub(crate) fn array_count(
        &mut self,
        min_elem_bytes: usize,
        field: &str,
    ) -> Result<usize, DecodeError> {
        let start = self.pos;
        let raw = self.i32(field)?;
        // A non-nullable length is never `None`.
        Ok(self
            .length(raw, false, min_elem_bytes, field, start)?
            .unwrap_or_default())
    }

    fn str_body(&mut self, len: usize, field: &str, start: usize) -> Result<String, DecodeError> {
        let body_at = self.pos;
        let body = self.take(len, field, start)?;
        match std::str::from_utf8(body) {
            Ok(s) => Ok(s.to_owned()),
            Err(e) => Err(DecodeError::InvalidUtf8 {
                field: field.to_owned(),
                offset: start,
                invalid_at: body_at + e.valid_up_to(),
            }),
        }
    }

    pub(crate) fn string(&mut self, field: &str) -> Result<String, DecodeError> {
        let start = self.pos;
        let raw = i32::from(self.i16(field)?);
        let len = self
            .length(raw, false, 1, field, start)?
            .unwrap_or_default();
        self.str_body(len, field, start)
    }

    pub(crate) fn nullable_string(&mut self, field: &str) -> Result<Option<String>, DecodeError> {
        let start = self.pos;
        let raw = i32::from(self.i16(field)?);
        match self.length(raw, true, 1, field, start)? {
            None => Ok(None),
            Some(len) => self.str_body(len, field, start).map(Some),
        }
    }

    pub(crate) fn nullable_bytes(&mut self, field: &str) -> Result<Option<Vec<u8>>, DecodeError> {
        let start = self.pos;
        let raw = self.i32(field)?;
        match self.length(raw, true, 1, field, start)? {
            None => Ok(None),
            Some(len) => Ok(Some(self.take(len, field, start)?.to_vec())),
        }
    }

    pub(crate) fn strings(&mut self, field: &str) -> Result<Vec<String>, DecodeError> {
        let n = self.array_count(MIN_STRING_BYTES, field)?;
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            out.push(self.string("").map_err(|e| e.within(field, i))?);
        }
        Ok(out)
    }

    pub(crate) fn i32s(&mut self, field: &str) -> Result<Vec<i32>, DecodeError> {
        let n = self.array_count(4, field)?;
        let start = self.pos;
        // `array_count` checked that 4 * n bytes are left.
        let body = self.take(4 * n, field, start)?;
        Ok(body
            .chunks_exact(4)
            .map(|c| i32::from_be_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    pub(crate) fn topic_partitions(
        &mut self,
        field: &str,
    ) -> Result<Vec<TopicPartitions>, DecodeError> {
        let n = self.array_count(MIN_TOPIC_PARTITIONS_BYTES, field)?;
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let element = (|| {
                let topic = self.string("topic")?;
                let partitions = self.i32s("partitions")?;
                Ok(TopicPartitions { topic, partitions })
            })();
            out.push(element.map_err(|e: DecodeError| e.within(field, i))?);
        }
        Ok(out)
    }
}

/// Reads the version prefix; a negative version is an error.
pub(crate) fn read_version(r: &mut Reader<'_>) -> Result<i16, DecodeError> {
    let version = r.i16("version")?;
    if version < 0 {
        return Err(DecodeError::NegativeVersion {
            field: "version".to_owned(),
            offset: 0,
            found: version,
        });
    }
    Ok(version)
}

// ---- sizes: validate everything an encode needs, so the write pass cannot fail ----

pub(crate) fn check_version(version: i16) -> Result<(), EncodeError> {
    if version < 0 {
        return Err(EncodeError::NegativeVersion { version });
    }
    Ok(())
}

/// Refuses a non-default field in a version that cannot carry it.
pub(crate) fn check_carried(
    is_default: bool,
    field: &'static str,
    version: i16,
    min_version: i16,
) -> Result<(), EncodeError> {
    if !is_default && version < min_version {
        return Err(EncodeError::FieldNotInVersion {
            field,
            version,
            min_version,
        });
    }
    Ok(())
}

pub(crate) fn check_i32_len(len: usize, field: impl FnOnce() -> String) -> Result<(), EncodeError> {
    if i32::try_from(len).is_err() {
        return Err(EncodeError::TooLong {
            field: field(),
            max: i32::MAX as usize,
            found: len,
        });
    }
    Ok(())
}

pub(crate) fn string_size(s: &str, field: impl FnOnce() -> String) -> Result<usize, EncodeError> {
    if i16::try_from(s.len()).is_err() {
        return Err(EncodeError::StringTooLong {
            field: field(),
            max: i16::MAX as usize,
            found: s.len(),
        });
    }
    Ok(2 + s.len())
}

pub(crate) fn nullable_string_size(s: Option<&str>, field: &str) -> Result<usize, EncodeError> {
    match s {
        None => Ok(2),
        Some(s) => string_size(s, || field.to_owned()),
    }
}

pub(crate) fn nullable_bytes_size(b: Option<&[u8]>, field: &str) -> Result<usize, EncodeError> {
    match b {
        None => Ok(4),
        Some(b) => {
            check_i32_len(b.len(), || field.to_owned())?;
            Ok(4 + b.len())
        }
    }
}

pub(crate) fn strings_size(v: &[String], field: &str) -> Result<usize, EncodeError> {
    check_i32_len(v.len(), || field.to_owned())?;
    let mut size = 4;
    for (i, s) in v.iter().enumerate() {
        size += string_size(s, || format!("{field}[{i}]"))?;
    }
    Ok(size)
}

pub(crate) fn topic_partitions_size(
    v: &[TopicPartitions],
    field: &str,
) -> Result<usize, EncodeError> {
    check_i32_len(v.len(), || field.to_owned())?;
    let mut size = 4;
    for (i, tp) in v.iter().enumerate() {
        size += string_size(&tp.topic, || format!("{field}[{i}].topic"))?;
        check_i32_len(tp.partitions.len(), || format!("{field}[{i}].partitions"))?;
        size += 4 + 4 * tp.partitions.len();
    }
    Ok(size)
}

// ---- writes: lengths were validated by the size pass ----

pub(crate) fn put_i16(out: &mut Vec<u8>, v: i16) {
    out.extend_from_slice(&v.to_be_bytes());
}

pub(crate) fn put_i32(out: &mut Vec<u8>, v: i32) {
    out.extend_from_slice(&v.to_be_bytes());
}

/// Writes a length the size pass has already checked fits.
fn put_len32(out: &mut Vec<u8>, len: usize) {
    put_i32(out, i32::try_from(len).unwrap_or(i32::MAX));
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_i16(out, i16::try_from(s.len()).unwrap_or(i16::MAX));
    out.extend_from_slice(s.as_bytes());
}

pub(crate) fn put_nullable_string(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        None => put_i16(out, -1),
        Some(s) => put_str(out, s),
    }
}

pub(crate) fn put_nullable_bytes(out: &mut Vec<u8>, b: Option<&[u8]>) {
    match b {
        None => put_i32(out, -1),
        Some(b) => {
            put_len32(out, b.len());
            out.extend_from_slice(b);
        }
    }
}

pub(crate) fn put_strings(out: &mut Vec<u8>, v: &[String]) {
    put_len32(out, v.len());
    for s in v {
        put_str(out, s);
    }
}

pub(crate) fn put_topic_partitions(out: &mut Vec<u8>, v: &[TopicPartitions]) {
    put_len32(out, v.len());
    for tp in v {
        put_str(out, &tp.topic);
        put_len32(out, tp.partitions.len());
        for p in &tp.partitions {
            put_i32(out, *p);
        }
    }
}
