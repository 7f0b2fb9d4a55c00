//! Lowercase hex text for byte strings: the JSON form of `user_data` and the CLI's `--hex`.

use thiserror::Error;

/// Why a text is not hex.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum HexError {
    /// An odd number of hex digits: the last byte is incomplete.
    #[error("expected an even number of hex digits, found {digits}")]
    OddLength {
        /// How many digits there were.
        digits: usize,
    },
    /// A character that is not a hex digit.
    #[error("at character offset {offset}: expected a hex digit, found {found:?}")]
    InvalidDigit {
        /// The character's byte offset in the text.
        offset: usize,
        /// The character.
        found: char,
    },
}

/// Lowercase hex of `bytes`, two digits per byte.
#[must_use]
pub fn to_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

/// Parses hex digits (either case); with `allow_whitespace`, whitespace between digits is
/// skipped.
pub fn from_hex(text: &str, allow_whitespace: bool) -> Result<Vec<u8>, HexError> {
    let mut out = Vec::with_capacity(text.len() / 2);
    let mut high: Option<u8> = None;
    let mut digits = 0;
    for (offset, c) in text.char_indices() {
        if allow_whitespace && c.is_whitespace() {
            continue;
        }
        let Some(v) = c.to_digit(16) else {
            return Err(HexError::InvalidDigit { offset, found: c });
        };
        // `to_digit(16)` is below 16.
        let v = v as u8;
        digits += 1;
        match high.take() {
            None => high = Some(v),
            Some(h) => out.push(h << 4 | v),
        }
    }
    if high.is_some() {
        return Err(HexError::OddLength { digits });
    }
    Ok(out)
}

/// Serde adapter for `Option<Vec<u8>>` as a lowercase hex string or `null`.
pub(crate) mod option {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(v: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            None => s.serialize_none(),
            Some(b) => s.serialize_str(&super::to_hex(b)),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Vec<u8>>, D::Error> {
        let text: Option<String> = Option::deserialize(d)?;
        match text {
            None => Ok(None),
            Some(t) => super::from_hex(&t, false)
                .map(Some)
                .map_err(serde::de::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_reports_bad_digits() {
        let bytes: Vec<u8> = (0..=255).collect();
        assert_eq!(from_hex(&to_hex(&bytes), false), Ok(bytes));
        assert_eq!(from_hex("0A ff\n00", true), Ok(vec![0x0a, 0xff, 0x00]));
        assert_eq!(
            from_hex("0A ff", false),
            Err(HexError::InvalidDigit {
                offset: 2,
                found: ' '
            })
        );
        assert_eq!(
            from_hex("abc", false),
            Err(HexError::OddLength { digits: 3 })
        );
        assert_eq!(
            from_hex("zz", true),
            Err(HexError::InvalidDigit {
                offset: 0,
                found: 'z'
            })
        );
    }
}
