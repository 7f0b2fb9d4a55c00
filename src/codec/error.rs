//! The codec's two kinds of failure: bytes that do not decode, values that do not encode.

use thiserror::Error;

/// Why a byte string is not a valid embedded-protocol message.
///
/// Every variant names the field (a path such as `owned_partitions[3].topic`), the byte offset
/// in the input where that field starts, and what was expected against what was found.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum DecodeError {
    /// The input ends inside a field.
    #[error(
        "{field} at byte offset {offset}: expected {expected_bytes} more bytes, found {found_bytes}"
    )]
    Truncated {
        /// The field being read.
        field: String,
        /// Where the field starts.
        offset: usize,
        /// How many bytes the field needs.
        expected_bytes: usize,
        /// How many bytes were left.
        found_bytes: usize,
    },
    /// The version prefix is negative.
    #[error("{field} at byte offset {offset}: expected a version >= 0, found {found}")]
    NegativeVersion {
        /// Always `version`.
        field: String,
        /// Always 0.
        offset: usize,
        /// The version read.
        found: i16,
    },
    /// A length or count is negative where the field is not nullable, or below -1 where it is
    /// (only -1 means null: any other negative value would not re-encode to the same bytes).
    #[error("{field} at byte offset {offset}: expected {expected}, found length {found}")]
    InvalidLength {
        /// The field whose length prefix is wrong.
        field: String,
        /// Where the length prefix starts.
        offset: usize,
        /// What the field allows (for instance `a length >= 0` or `-1 (null) or a length >= 0`).
        expected: &'static str,
        /// The length read.
        found: i32,
    },
    /// A length or element count announces more than the rest of the input can hold. Reported
    /// before anything is allocated for it.
    #[error(
        "{field} at byte offset {offset}: count {count} needs at least {expected_bytes} bytes, found {found_bytes} left"
    )]
    LengthExceedsInput {
        /// The string, bytes or array field.
        field: String,
        /// Where its length prefix starts.
        offset: usize,
        /// The announced length (bytes) or count (elements).
        count: usize,
        /// The fewest bytes that many elements take.
        expected_bytes: usize,
        /// The bytes left after the length prefix.
        found_bytes: usize,
    },
    /// A string is not UTF-8.
    #[error(
        "{field} at byte offset {offset}: expected UTF-8, found an invalid byte at offset {invalid_at}"
    )]
    InvalidUtf8 {
        /// The string field.
        field: String,
        /// Where the string's length prefix starts.
        offset: usize,
        /// The offset in the input of the first byte that is not valid UTF-8.
        invalid_at: usize,
    },
    /// Bytes follow the last field of a known version. (A future version's extra bytes are
    /// ignored, as Kafka does; a known version has none.)
    #[error(
        "{field} at byte offset {offset}: expected the end of a version {version} message, found {found_bytes} more bytes"
    )]
    TrailingBytes {
        /// Always `end of message`.
        field: String,
        /// Where the unexpected bytes start.
        offset: usize,
        /// The message's version.
        version: i16,
        /// How many bytes are left over.
        found_bytes: usize,
    },
}

impl DecodeError {
    /// The field path the error names.
    #[must_use]
    pub fn field(&self) -> &str {
        match self {
            DecodeError::Truncated { field, .. }
            | DecodeError::NegativeVersion { field, .. }
            | DecodeError::InvalidLength { field, .. }
            | DecodeError::LengthExceedsInput { field, .. }
            | DecodeError::InvalidUtf8 { field, .. }
            | DecodeError::TrailingBytes { field, .. } => field,
        }
    }

    /// The byte offset the error names.
    #[must_use]
    pub fn offset(&self) -> usize {
        match self {
            DecodeError::Truncated { offset, .. }
            | DecodeError::NegativeVersion { offset, .. }
            | DecodeError::InvalidLength { offset, .. }
            | DecodeError::LengthExceedsInput { offset, .. }
            | DecodeError::InvalidUtf8 { offset, .. }
            | DecodeError::TrailingBytes { offset, .. } => *offset,
        }
    }

    /// Prefixes the field path with `array[index].`, as an error travels out of an element.
    pub(crate) fn within(mut self, array: &str, index: usize) -> DecodeError {
        let field = match &mut self {
            DecodeError::Truncated { field, .. }
            | DecodeError::NegativeVersion { field, .. }
            | DecodeError::InvalidLength { field, .. }
            | DecodeError::LengthExceedsInput { field, .. }
            | DecodeError::InvalidUtf8 { field, .. }
            | DecodeError::TrailingBytes { field, .. } => field,
        };
        *field = if field.is_empty() {
            format!("{array}[{index}]")
        } else if field.starts_with('[') {
            format!("{array}[{index}]{field}")
        } else {
            format!("{array}[{index}].{field}")
        };
        self
    }
}

/// Why a value cannot be encoded.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum EncodeError {
    /// The version is negative.
    #[error("version: expected a version >= 0, found {version}")]
    NegativeVersion {
        /// The version asked for.
        version: i16,
    },
    /// A field holds a non-default value that the message's version has no room for. The
    /// codec refuses rather than silently dropping it.
    #[error(
        "{field}: found a non-default value, but version {version} cannot carry it (expected version >= {min_version})"
    )]
    FieldNotInVersion {
        /// The field.
        field: &'static str,
        /// The message's version.
        version: i16,
        /// The first version that carries the field.
        min_version: i16,
    },
    /// A string is longer than its int16 length prefix can say.
    #[error("{field}: expected at most {max} bytes of UTF-8, found {found}")]
    StringTooLong {
        /// The field path.
        field: String,
        /// The largest encodable length (`i16::MAX`).
        max: usize,
        /// The string's length in bytes.
        found: usize,
    },
    /// A byte string or array is longer than its int32 length prefix can say.
    #[error("{field}: expected at most {max} elements, found {found}")]
    TooLong {
        /// The field path.
        field: String,
        /// The largest encodable length (`i32::MAX`).
        max: usize,
        /// The actual length.
        found: usize,
    },
}
