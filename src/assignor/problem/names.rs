//! Topic name → index, for the lookups that dominate reading a spec: every subscription and
//! every `owned` entry names a topic. A stable assignment from the uniform v2 assignor gives a
//! member one entry per topic it holds partitions of (50 per member at 50 partitions per
//! member over 100 topics), so a join or a leave looks a name up once per entry.
//!
//! A general hash map hashes every byte and then calls `memcmp` to confirm a hit. Here a
//! name's *key* is its length with its first and last 8 bytes (zero-padded), read as integers:
//! the hash mixes the key only, and a hit is confirmed by comparing keys, which settles names
//! of up to 16 bytes without touching their bytes again; longer names are compared in full
//! once their keys match. Only looked up, never iterated, so no order leaks.

/// The integer key of a name: (length, first 8 bytes, last 8 bytes), zero-padded. Names of at
/// most 16 bytes are equal exactly when their keys are.
#[inline]
fn key(name: &str) -> (usize, u64, u64) {
    let b = name.as_bytes();
    let len = b.len();
    if len >= 8 {
        let head = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
        let e = len - 8;
        let tail = u64::from_le_bytes([
            b[e],
            b[e + 1],
            b[e + 2],
            b[e + 3],
            b[e + 4],
            b[e + 5],
            b[e + 6],
            b[e + 7],
        ]);
        (len, head, tail)
    } else {
        let mut head = 0u64;
        for (i, &c) in b.iter().enumerate() {
            head |= u64::from(c) << (8 * i);
        }
        (len, head, 0)
    }
}

/// The table slot a key hashes to (`bits` bits).
#[inline]
fn slot(key: (usize, u64, u64), bits: u32) -> usize {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let (len, head, tail) = key;
    let h = (head ^ (len as u64).rotate_left(56))
        .wrapping_mul(K)
        .rotate_left(29)
        ^ tail;
    (h.wrapping_mul(K) >> (64 - bits)) as usize
}

/// An open-addressing (linear probing) table from topic names to their indices.
pub(super) struct NameIndex<'a> {
    /// Topic index per slot, `u32::MAX` for an empty slot; a power of two, at most half full.
    slots: Vec<u32>,
    /// log2 of `slots.len()`.
    bits: u32,
    /// Per topic index: its name and its key.
    names: Vec<(&'a str, (usize, u64, u64))>,
}

impl<'a> NameIndex<'a> {
    /// The index of `names`, whose entries must be distinct (validated specs have distinct
    /// topic names): `names[i]` maps to `i`.
    pub(super) fn new(names: impl ExactSizeIterator<Item = &'a str>) -> NameIndex<'a> {
        let count = names.len();
        let bits = (2 * count.max(1)).next_power_of_two().trailing_zeros().max(2);
        let mut slots = vec![u32::MAX; 1 << bits];
        let mask = slots.len() - 1;
        let mut table = Vec::with_capacity(count);
        for (i, name) in names.enumerate() {
            let k = key(name);
            let mut s = slot(k, bits);
            while slots[s] != u32::MAX {
                s = (s + 1) & mask;
            }
            slots[s] = i as u32;
            table.push((name, k));
        }
        NameIndex {
            slots,
            bits,
            names: table,
        }
    }

    /// The index of `name`, if it is one of the names.
    #[inline]
    pub(super) fn get(&self, name: &str) -> Option<u32> {
        let k = key(name);
        let mask = self.slots.len() - 1;
        let mut s = slot(k, self.bits);
        loop {
            let i = self.slots[s];
            if i == u32::MAX {
                return None;
            }
            let (other, other_key) = self.names[i as usize];
            if other_key == k && (k.0 <= 16 || other == name) {
                return Some(i);
            }
            s = (s + 1) & mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{NameIndex, key};

    #[test]
    fn keys_tell_apart_every_short_name_and_lookups_match_a_linear_search() {
        // Names that share prefixes, suffixes and lengths, across the 8- and 16-byte edges.
        let mut names: Vec<String> = Vec::new();
        for len in 0..=24 {
            for c in ["a", "b", "\0", "é"] {
                let s: String = "x".repeat(len) + c;
                names.push(s.clone());
                names.push(c.to_owned() + &"x".repeat(len));
                if len >= 2 {
                    let mut mid = "y".repeat(len);
                    mid.insert_str(len / 2, c);
                    names.push(mid);
                }
            }
        }
        names.sort();
        names.dedup();
        for a in &names {
            for b in &names {
                if a.len() <= 16 && b.len() <= 16 {
                    assert_eq!(key(a) == key(b), a == b, "{a:?} {b:?}");
                }
            }
        }
        // Index every other name: the rest must be absent.
        let indexed: Vec<&str> = names.iter().step_by(2).map(String::as_str).collect();
        let index = NameIndex::new(indexed.iter().copied());
        for name in &names {
            let want = indexed.iter().position(|n| n == name).map(|i| i as u32);
            assert_eq!(index.get(name), want, "{name:?}");
        }
        assert_eq!(NameIndex::new(std::iter::empty()).get("t"), None);
    }
}
