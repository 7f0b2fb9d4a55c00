//! Topic names as integers: exact lookups and comparisons without hashing or comparing bytes.
//!
//! Every claim names its topic, and every member lists its subscriptions by name: on a spread
//! assignment of 1,000 members over 100 topics that is 50,000 claim lookups and 100,000
//! subscription names, and hashing a string, probing a string table and calling `memcmp` for
//! each dominated such a call (more than half of the time of a join). Topic names are usually
//! short (the benchmark's are `t0042`), so a name of up to [`PACKED_BYTES`] bytes is packed
//! with its length into a `u128` read a few bytes at a time ([`pack`]); two names pack to the
//! same integer only if they are equal, so packed names are compared and looked up as
//! integers. Longer names take the general path: a string table.

use rustc_hash::FxHashMap;

use super::Problem;

/// The longest name [`pack`] represents: the 16th byte holds the length.
pub(crate) const PACKED_BYTES: usize = 15;

/// `bytes` with its length as one integer, when it has at most [`PACKED_BYTES`] bytes:
/// byte i in bits 8(15−i)..8(16−i) (big-endian, zero-padded), the length in the lowest byte.
///
/// Injective: the bytes fix the high 15 bytes and the length the low one, and the length
/// tells trailing NULs from padding. It also preserves order: for names that differ at some
/// byte, the first such byte decides both orders; a proper prefix is padded with zeros, so
/// the longer name is never smaller in the high bytes, and when they tie there the shorter
/// length makes the prefix smaller, as `str` orders it.
///
/// The bytes are read as two overlapping big-endian words whose width the length chooses
/// (the head from byte 0, the tail ending at the last byte, shifted into place; bytes they
/// share are the same in both, so OR-ing them is exact), a few instructions where a loop over
/// the bytes cost dozens. The high and the low 64 bits are built apart: a shift of a `u128`
/// by a variable amount costs several instructions, of a `u64` one.
#[inline]
pub(crate) fn pack(bytes: &[u8]) -> Option<u128> {
    let len = bytes.len();
    // A word whose last byte is byte `len - 1` lands at bit 8(8 − len) of the high word
    // when len ≤ 8 (bytes 0..8), at bit 8(16 − len) of the low word when it is longer.
    let high_shift = 8 * (8 - len.min(8)) as u32;
    let (high, low) = match len {
        0 => (0, 0),
        1 => (u64::from(bytes[0]) << 56, 0),
        2..=3 => (
            u64::from(u16::from_be_bytes(head(bytes))) << 48
                | u64::from(u16::from_be_bytes(tail(bytes))) << high_shift,
            0,
        ),
        4..=7 => (
            u64::from(u32::from_be_bytes(head(bytes))) << 32
                | u64::from(u32::from_be_bytes(tail(bytes))) << high_shift,
            0,
        ),
        8..=PACKED_BYTES => {
            // Shifted in two steps: by 8(16 − len) at once would be 64 for len = 8 (whose
            // low bytes are all padding).
            let low_shift = 8 * (PACKED_BYTES - len) as u32;
            (
                u64::from_be_bytes(head(bytes)),
                u64::from_be_bytes(tail(bytes)) << low_shift << 8,
            )
        }
        _ => return None,
    };
    let value = u128::from(high) << 64 | u128::from(low);
    #[cfg(test)]
    if planted::LENGTH_DROPPED.get() {
        return Some(value);
    }
    Some(value | len as u128)
}

/// The first `N` bytes of `bytes`, which has at least `N` (zeros otherwise, never read).
#[inline]
fn head<const N: usize>(bytes: &[u8]) -> [u8; N] {
    bytes.first_chunk().copied().unwrap_or([0; N])
}

/// The last `N` bytes of `bytes`, which has at least `N` (zeros otherwise, never read).
#[inline]
fn tail<const N: usize>(bytes: &[u8]) -> [u8; N] {
    bytes.last_chunk().copied().unwrap_or([0; N])
}

/// The low byte of the [`order_key`] of a name longer than [`PACKED_BYTES`]: above every
/// length [`pack`] records.
const LONG: u128 = 0xFF;

/// An integer that orders names as `str` does, and tells a name of at most [`PACKED_BYTES`]
/// bytes from every other name: its [`pack`], or for a longer name its first
/// [`PACKED_BYTES`] bytes packed with [`LONG`] in place of the length.
///
/// Monotone (`a < b` implies `order_key(a) <= order_key(b)`): names that differ within their
/// first [`PACKED_BYTES`] bytes (zero-padded) are ordered by them, as [`pack`] is; when they
/// tie there, a short name is a prefix of the other and has the smaller low byte, and two
/// long names tie. Exact for short names: their keys are their packs (injective), and no
/// pack has [`LONG`] as its low byte.
#[inline]
pub(crate) fn order_key(bytes: &[u8]) -> u128 {
    match pack(bytes) {
        Some(key) => key,
        None => bytes
            .get(..PACKED_BYTES)
            .and_then(pack)
            .map_or(LONG, |head| head | LONG),
    }
}

/// Whether names `a` and `b` are equal. Names of up to 16 bytes are compared as two
/// overlapping words (the first and the last few bytes), which together cover every byte;
/// that costs a few instructions where a call to `memcmp` cost dozens.
#[inline]
pub(crate) fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let len = a.len();
    if len != b.len() {
        return false;
    }
    #[cfg(test)]
    if planted::HEAD_ONLY.get() {
        return a.iter().zip(b).take(len.min(8)).all(|(x, y)| x == y);
    }
    match len {
        0 => true,
        1..=3 => a[0] == b[0] && a[len / 2] == b[len / 2] && a[len - 1] == b[len - 1],
        4..=7 => {
            u32::from_ne_bytes(head(a)) == u32::from_ne_bytes(head(b))
                && u32::from_ne_bytes(tail(a)) == u32::from_ne_bytes(tail(b))
        }
        8..=16 => {
            u64::from_ne_bytes(head(a)) == u64::from_ne_bytes(head(b))
                && u64::from_ne_bytes(tail(a)) == u64::from_ne_bytes(tail(b))
        }
        _ => a == b,
    }
}

/// Whether the name lists `a` and `b` are equal, element by element ([`same`]).
#[inline]
pub(crate) fn same_lists(a: &[String], b: &[String]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
}

/// Name → index for a list of distinct names: packed names in a table keyed by integers,
/// longer ones in a string table. Only looked up, never iterated, so no hash order can leak.
/// (A hand-written open-addressing table saved about 3 % of a v2 call over this one: not
/// worth its code.)
pub(crate) struct NameIndex<'a> {
    /// [`pack`]ed name → index, for the names of at most [`PACKED_BYTES`] bytes.
    packed: FxHashMap<u128, u32>,
    /// Index → name, to check a guessed index.
    names: Vec<&'a str>,
    /// Index → [`order_key`] of the name: ascending when the names are.
    keys: Vec<u128>,
    /// Name → index, for the names longer than [`PACKED_BYTES`].
    long: FxHashMap<&'a str, u32>,
}

impl<'a> NameIndex<'a> {
    /// The index of `names`: name `names[i]` maps to `i`. The names must be distinct.
    pub fn new(names: impl ExactSizeIterator<Item = &'a str>) -> NameIndex<'a> {
        let mut index = NameIndex {
            packed: FxHashMap::with_capacity_and_hasher(names.len(), Default::default()),
            names: Vec::with_capacity(names.len()),
            keys: Vec::with_capacity(names.len()),
            long: FxHashMap::default(),
        };
        for (i, name) in names.enumerate() {
            // A name's order key is its pack exactly when it has one.
            let key = order_key(name.as_bytes());
            if key & 0xFF == LONG {
                index.long.insert(name, i as u32);
            } else {
                index.packed.insert(key, i as u32);
            }
            index.names.push(name);
            index.keys.push(key);
        }
        index
    }

    /// The index of `name`, if it is one of the names. Kept out of line: where the compiler
    /// chose to inline it (the loop over subscriptions), it measured slower.
    #[inline(never)]
    pub fn get(&self, name: &str) -> Option<u32> {
        match pack(name.as_bytes()) {
            Some(key) => self.packed.get(&key).copied(),
            None => self.long_index(name),
        }
    }

    /// Whether name `i` is `name` (never for an `i` out of range): a comparison of two names
    /// ([`same`]) where [`NameIndex::get`] packs, hashes and probes. The names are distinct,
    /// so it holds exactly when `get(name) == Some(i)`.
    #[inline]
    pub fn is(&self, i: u32, name: &str) -> bool {
        self.names.get(i as usize).is_some_and(|&known| {
            #[cfg(test)]
            if planted::INDEX_TRUSTED.get() {
                return true;
            }
            same(known, name)
        })
    }

    /// The [`order_key`] of every name, by index.
    pub fn keys(&self) -> &[u128] {
        &self.keys
    }

    /// [`NameIndex::get`] of a name longer than [`PACKED_BYTES`], kept out of line so that
    /// the packed names' lookup stays small enough to inline into the loops over claims.
    #[inline(never)]
    fn long_index(&self, name: &str) -> Option<u32> {
        self.long.get(name).copied()
    }
}

/// Kept here, by the index it reads (the name table is the problem's own).
impl Problem<'_> {
    /// The [`order_key`] of every topic's name, by topic index: ascending, as the topics are
    /// ascending by name.
    pub(crate) fn topic_keys(&self) -> &[u128] {
        self.topic_ids.keys()
    }
}

/// Faults a test may plant on its thread, to show the tests catch them.
#[cfg(test)]
pub(crate) mod planted {
    thread_local! {
        /// [`super::pack`] leaves the length out: a name and the same name with trailing
        /// NULs pack alike.
        pub(crate) static LENGTH_DROPPED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        /// [`super::same`] compares the first word of names alone, not the last.
        pub(crate) static HEAD_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        /// [`super::NameIndex::is`] holds for every index in range, without comparing names.
        pub(crate) static INDEX_TRUSTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::{NameIndex, PACKED_BYTES, order_key, pack, planted, same, same_lists};
    use crate::assignor::tests::Rng;

    /// Edge names: empty, NULs (which padding must not be mistaken for), every length
    /// around the word widths and the packing limit, non-ASCII, shared prefixes and suffixes.
    fn edge_names() -> Vec<String> {
        let mut names: Vec<String> = [
            "", "\0", "\0\0", "a", "a\0", "a\0\0", "\0a", "é", "日本", "ü\0",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        for len in 1..=20 {
            names.push("x".repeat(len));
            names.push(format!("{}y", "x".repeat(len - 1)));
            names.push(format!("y{}", "x".repeat(len - 1)));
            names.push(format!("{}\0", "x".repeat(len - 1)));
        }
        names.push("topic-with-a-long-name".to_owned());
        names.push("topic-with-a-long-nam\0".to_owned());
        names
    }

    /// A name of 0 to 18 characters over a small alphabet (with a NUL and a two-byte
    /// character), so that random names often share prefixes, suffixes and lengths.
    fn name(rng: &mut Rng) -> String {
        let len = rng.below(19);
        (0..len)
            .map(|_| ['a', 'b', '\0', 'é'][rng.below(4) as usize])
            .collect()
    }

    #[test]
    fn packing_and_order_keys_are_exact_and_keep_the_order_of_names() {
        let names = edge_names();
        for a in &names {
            let key = pack(a.as_bytes());
            assert_eq!(key.is_some(), a.len() <= PACKED_BYTES, "{a:?}");
            for b in &names {
                if let (Some(x), Some(y)) = (key, pack(b.as_bytes())) {
                    assert_eq!(x.cmp(&y), a.cmp(b), "{a:?} vs {b:?}");
                }
                assert_eq!(same(a, b), a == b, "{a:?} vs {b:?}");
                let (x, y) = (order_key(a.as_bytes()), order_key(b.as_bytes()));
                if a < b {
                    assert!(x <= y, "{a:?} vs {b:?}");
                }
                if key.is_some() {
                    assert_eq!(x == y, a == b, "{a:?} vs {b:?}");
                }
            }
        }
    }

    /// How many of `cases` random lookups and comparisons disagree with a `HashMap` of the
    /// names and with `==`.
    fn disagreements(seed: u64, cases: usize) -> usize {
        let mut rng = Rng(seed);
        let mut wrong = 0;
        for _ in 0..cases {
            let mut names = edge_names();
            names.extend((0..rng.below(60)).map(|_| name(&mut rng)));
            names.sort();
            names.dedup();
            // A random subset is indexed, in random order; the rest are looked up too.
            let mut indexed: Vec<&str> = names
                .iter()
                .filter(|_| rng.below(2) == 0)
                .map(String::as_str)
                .collect();
            for i in (1..indexed.len()).rev() {
                indexed.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let plain: HashMap<&str, u32> = indexed
                .iter()
                .enumerate()
                .map(|(i, n)| (*n, i as u32))
                .collect();
            let index = NameIndex::new(indexed.iter().copied());
            wrong += names
                .iter()
                .filter(|n| index.get(n) != plain.get(n.as_str()).copied())
                .count();
            // Indices right, wrong, and out of range.
            let span = indexed.len() as u64 + 2;
            for n in &names {
                let right = plain.get(n.as_str()).copied().unwrap_or(u32::MAX);
                for i in [right, rng.below(span) as u32, u32::MAX] {
                    wrong += usize::from(index.is(i, n) != (index.get(n) == Some(i)));
                }
            }
            // Every pair of names of one length (the others differ in their lengths alone),
            // as one-name lists, and random lists of up to two names.
            for a in &names {
                for b in names.iter().filter(|b| b.len() == a.len()) {
                    let (a, b) = (std::slice::from_ref(a), std::slice::from_ref(b));
                    wrong += usize::from(same_lists(a, b) != (a == b));
                }
            }
            let lists: Vec<Vec<String>> = (0..8)
                .map(|_| {
                    (0..rng.below(3))
                        .map(|_| names[rng.below(names.len() as u64) as usize].clone())
                        .collect()
                })
                .collect();
            for a in &lists {
                for b in &lists {
                    wrong += usize::from(same_lists(a, b) != (a == b));
                }
            }
        }
        wrong
    }

    #[test]
    fn lookups_and_comparisons_agree_with_a_hash_map_and_equality() {
        assert_eq!(disagreements(0x5eed, 300), 0);
    }

    #[test]
    fn packing_without_the_length_is_caught() {
        planted::LENGTH_DROPPED.set(true);
        let wrong = disagreements(0x5eed, 300);
        planted::LENGTH_DROPPED.set(false);
        println!("packing without the length: {wrong} disagreements");
        assert!(wrong >= 100, "only {wrong} disagreements");
    }

    #[test]
    fn an_unchecked_index_is_caught() {
        planted::INDEX_TRUSTED.set(true);
        let wrong = disagreements(0x5eed, 300);
        planted::INDEX_TRUSTED.set(false);
        println!("an unchecked index: {wrong} disagreements");
        assert!(wrong >= 100, "only {wrong} disagreements");
    }

    #[test]
    fn comparing_the_first_bytes_alone_is_caught() {
        planted::HEAD_ONLY.set(true);
        let wrong = disagreements(0x5eed, 300);
        planted::HEAD_ONLY.set(false);
        println!("comparing the first bytes alone: {wrong} disagreements");
        assert!(wrong >= 100, "only {wrong} disagreements");
    }
}
