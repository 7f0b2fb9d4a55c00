//! A component's rack names as bits of a `u64`, and every partition's replica racks as a mask
//! of those bits.
//!
//! The rack-aware paths read the replica racks of every partition of a component once: on
//! large groups that is one name lookup per replica, which hashing and comparing strings made
//! the largest single cost of a racked call. Rack names are short in practice (`r1`,
//! `us-east-1a`), so a name of up to 15 bytes is packed with its length into an integer
//! (a `u64` up to 7 bytes, read a few bytes at a time; a `u128` up to 15) and found among the
//! racks' packed names of its width by integer comparison alone; longer names fall back to a
//! search of the sorted names. All lookups answer the same: the bit of a rack where some
//! member of the component runs, or 0.
//!
//! The short names are found in a table of [`HASH_SLOTS`] slots indexed by a multiplicative
//! hash of the packed name, when one of a few multipliers puts every rack in a slot of its
//! own (nearly always with a few racks): a lookup is then one multiplication and one
//! comparison, where the scan cost a loop of compares per name. The comparison makes the
//! answer exact whatever the name: a slot holds one rack's packed name, and a name packing
//! to another integer is not that rack. Otherwise the packed names are scanned or searched.

use super::components::Component;
use super::problem::Problem;

/// The longest name [`pack`] represents: the 16th byte holds the length.
const PACKED_BYTES: usize = 15;

/// The longest name [`pack_short`] represents: the 8th byte holds the length.
const SHORT_BYTES: usize = 7;

/// At most this many packed names are scanned in order; more are binary-searched.
const LINEAR_SCAN: usize = 8;

/// The slots of [`Hashed`]: a power of two, the hash being the top 8 bits of a product.
const HASH_SLOTS: usize = 256;

/// Odd multipliers tried in turn for [`Hashed`] (fractional parts of well-known constants,
/// as common hash functions use).
const MULTIPLIERS: [u64; 6] = [
    0x9E37_79B9_7F4A_7C15,
    0xBF58_476D_1CE4_E5B9,
    0x94D0_49BB_1331_11EB,
    0xD6E8_FEB8_6659_FD93,
    0xA076_1D64_78BD_642F,
    0xE703_7ED1_A0B4_28DB,
];

/// A slot no packed name fills: [`pack_short`]'s values have a top byte of at most 7.
const EMPTY_SLOT: u64 = u64::MAX;

/// The short packed names in the slot of their hash, each alone in its slot.
struct Hashed {
    multiplier: u64,
    /// (packed name, bit), or ([`EMPTY_SLOT`], 0).
    slots: Box<[(u64, u64); HASH_SLOTS]>,
}

impl Hashed {
    /// The table of `short` (packed name, bit), or `None` when no multiplier of
    /// [`MULTIPLIERS`] gives every name a slot of its own.
    fn new(short: &[(u64, u64)]) -> Option<Hashed> {
        MULTIPLIERS.iter().find_map(|&multiplier| {
            let mut slots = Box::new([(EMPTY_SLOT, 0u64); HASH_SLOTS]);
            for &(key, bit) in short {
                let slot = &mut slots[Hashed::slot(multiplier, key)];
                if slot.0 != EMPTY_SLOT {
                    return None;
                }
                *slot = (key, bit);
            }
            Some(Hashed { multiplier, slots })
        })
    }

    #[inline]
    fn slot(multiplier: u64, key: u64) -> usize {
        (key.wrapping_mul(multiplier) >> 56) as usize
    }

    /// The bit of the packed name `key`, or 0 for a name not in the table.
    #[inline]
    fn bit(&self, key: u64) -> u64 {
        Hashed::bit_in(&self.slots, self.multiplier, key)
    }

    /// [`Hashed::bit`] on a table's parts, which a loop over many names holds in registers
    /// (read through `&self`, each name's lookup loaded them again after every mask the loop
    /// stored).
    #[inline(always)]
    fn bit_in(slots: &[(u64, u64); HASH_SLOTS], multiplier: u64, key: u64) -> u64 {
        let (found, bit) = slots[Hashed::slot(multiplier, key)];
        #[cfg(test)]
        if planted::HASH_UNCHECKED.get() {
            return bit;
        }
        if found == key { bit } else { 0 }
    }
}

/// The bits of a component's racks: bit i is the i-th rack in name order.
pub(crate) struct RackBits<'a> {
    /// The distinct racks of the component's members, ascending by name (at most 64).
    names: Vec<&'a str>,
    /// Packed name → bit, ascending by packed name, for names [`pack_short`] represents.
    short: Vec<(u64, u64)>,
    /// The same in a table of hashes, where every name has a slot of its own.
    hashed: Option<Hashed>,
    /// Packed name → bit, ascending by packed name, for the longer names [`pack`]
    /// represents.
    packed: Vec<(u128, u64)>,
    /// The length shared by every rack name, when there is one of at most [`SHORT_BYTES`]
    /// bytes and `hashed` is set: a name of any other length is then no rack's.
    same_len: Option<usize>,
}

/// `name` with its length as one integer, when it has at most [`SHORT_BYTES`] bytes: the
/// same value as [`pack`]'s. The bytes are read as fixed-size little-endian words chosen by
/// the length (names of one group mostly share a length, so the branch is predicted), which
/// costs a few instructions where a loop over the bytes with 128-bit shifts cost dozens.
#[inline]
pub(crate) fn pack_short(bytes: &[u8]) -> Option<u64> {
    let byte = |i: usize| u64::from(bytes[i]);
    let half = |i: usize| u64::from(u16::from_le_bytes([bytes[i], bytes[i + 1]]));
    let word = |i: usize| {
        u64::from(u32::from_le_bytes([
            bytes[i],
            bytes[i + 1],
            bytes[i + 2],
            bytes[i + 3],
        ]))
    };
    let value = match bytes.len() {
        0 => 0,
        1 => byte(0),
        2 => half(0),
        3 => half(0) | byte(2) << 16,
        4 => word(0),
        5 => word(0) | byte(4) << 32,
        6 => word(0) | half(4) << 32,
        7 => word(0) | half(4) << 32 | byte(6) << 48,
        _ => return None,
    };
    Some(value | (bytes.len() as u64) << (8 * bytes.len()))
}

/// [`pack_short`] of a name of exactly `L` bytes (`L` at most [`SHORT_BYTES`]), read at a
/// length known when compiled; `None` for a name of any other length.
#[inline(always)]
pub(crate) fn pack_len<const L: usize>(bytes: &[u8]) -> Option<u64> {
    let word = <&[u8; L]>::try_from(bytes).ok()?;
    let mut key = (L as u64) << (8 * L);
    for (i, &b) in word.iter().enumerate() {
        key |= u64::from(b) << (8 * i);
    }
    Some(key)
}

/// `name` with its length as one integer, when it has at most [`PACKED_BYTES`] bytes: byte
/// i in bits 8i..8(i+1), the length in the byte after the last. Two names pack to the same
/// integer only if they are equal: the length tells a trailing NUL from padding.
fn pack(name: &str) -> Option<u128> {
    let bytes = name.as_bytes();
    if bytes.len() > PACKED_BYTES {
        return None;
    }
    // Byte by byte: names are a few bytes long, and a copy of a variable length would call
    // `memcpy` for each.
    let key = bytes
        .iter()
        .rev()
        .fold(bytes.len() as u128, |key, &b| (key << 8) | u128::from(b));
    Some(key)
}

impl<'a> RackBits<'a> {
    /// The bits of `comp`'s racks, or `None` where its members run in no rack or in more
    /// than 64.
    pub fn new(problem: &Problem<'a>, comp: &Component) -> Option<RackBits<'a>> {
        RackBits::from_names(comp.racks(problem))
    }

    /// The bits of racks `names` (ascending, distinct), or `None` for none or more than 64.
    fn from_names(names: Vec<&'a str>) -> Option<RackBits<'a>> {
        if names.is_empty() || names.len() > 64 {
            return None;
        }
        let mut short: Vec<(u64, u64)> = names
            .iter()
            .enumerate()
            .filter_map(|(i, name)| pack_short(name.as_bytes()).map(|key| (key, 1u64 << i)))
            .collect();
        short.sort_unstable();
        let hashed = Hashed::new(&short);
        let mut packed: Vec<(u128, u64)> = names
            .iter()
            .enumerate()
            .filter(|(_, name)| name.len() > SHORT_BYTES)
            .filter_map(|(i, name)| pack(name).map(|key| (key, 1u64 << i)))
            .collect();
        packed.sort_unstable();
        let len = names[0].len();
        let same_len = (hashed.is_some()
            && (1..=SHORT_BYTES).contains(&len)
            && names.iter().all(|name| name.len() == len))
        .then_some(len);
        Some(RackBits {
            names,
            short,
            hashed,
            packed,
            same_len,
        })
    }

    /// How many racks there are.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// The bit of rack `name`, or 0 where no member of the component runs in it.
    #[inline]
    pub fn bit(&self, name: &str) -> u64 {
        match pack_short(name.as_bytes()) {
            Some(key) if let Some(hashed) = &self.hashed => hashed.bit(key),
            Some(key) if self.short.len() <= LINEAR_SCAN => self
                .short
                .iter()
                .find(|&&(k, _)| k == key)
                .map_or(0, |&(_, bit)| bit),
            Some(key) => self
                .short
                .binary_search_by_key(&key, |&(k, _)| k)
                .map_or(0, |i| self.short[i].1),
            None => self.long_bit(name),
        }
    }

    /// [`RackBits::bit`] of a name longer than [`SHORT_BYTES`], kept out of line so that the
    /// short names' lookup stays small enough to inline into the loops over replicas.
    #[inline(never)]
    fn long_bit(&self, name: &str) -> u64 {
        match pack(name) {
            Some(key) if self.packed.len() <= LINEAR_SCAN => self
                .packed
                .iter()
                .find(|&&(k, _)| k == key)
                .map_or(0, |&(_, bit)| bit),
            Some(key) => self
                .packed
                .binary_search_by_key(&key, |&(k, _)| k)
                .map_or(0, |i| self.packed[i].1),
            None => self.names.binary_search(&name).map_or(0, |i| 1u64 << i),
        }
    }

    /// The mask of a partition whose replicas are in racks `names`.
    #[inline]
    pub fn mask(&self, names: &[String]) -> u64 {
        names.iter().fold(0, |mask, name| mask | self.bit(name))
    }

    /// The bit of every member of `comp`, in the order of `comp.members` (0 for a member
    /// with no rack).
    pub fn member_bits(&self, problem: &Problem<'_>, comp: &Component) -> Vec<u64> {
        comp.members
            .iter()
            .map(|&m| {
                problem.members[m as usize]
                    .rack
                    .as_deref()
                    .map_or(0, |r| self.bit(r))
            })
            .collect()
    }

    /// Appends the mask of every partition of topic `t` to `out` (zeros where the topic has no
    /// replica racks).
    pub fn extend_masks(&self, problem: &Problem<'_>, t: u32, out: &mut Vec<u64>) {
        match &problem.topics[t as usize].replica_racks {
            Some(replicas) => self.extend_replica_masks(replicas, out),
            None => out.resize(out.len() + problem.partitions(t) as usize, 0),
        }
    }

    /// Appends the mask of every partition whose replica racks are `replicas` to `out`.
    fn extend_replica_masks(&self, replicas: &[Vec<String>], out: &mut Vec<u64>) {
        let Some(hashed) = &self.hashed else {
            out.extend(replicas.iter().map(|names| self.mask(names)));
            return;
        };
        // Rack names of one length (`r1`, `us-east-1a`): the length chosen once per topic,
        // so that each name costs a compare of its length and a fixed-size read, where the
        // general packing branched on the length of every name.
        match self.same_len {
            Some(1) => extend_same_len::<1>(hashed, replicas, out),
            Some(2) => extend_same_len::<2>(hashed, replicas, out),
            Some(3) => extend_same_len::<3>(hashed, replicas, out),
            Some(4) => extend_same_len::<4>(hashed, replicas, out),
            Some(5) => extend_same_len::<5>(hashed, replicas, out),
            Some(6) => extend_same_len::<6>(hashed, replicas, out),
            Some(7) => extend_same_len::<7>(hashed, replicas, out),
            _ => {
                // The table chosen once per topic rather than per name.
                let bit = |name: &String| match pack_short(name.as_bytes()) {
                    Some(key) => hashed.bit(key),
                    None => self.long_bit(name),
                };
                out.extend(replicas.iter().map(|names| fold_masks(names, bit)));
            }
        }
    }
}

/// The mask of replica racks `names`, each name's bit from `bit`: lists of two or three
/// replicas (the usual replication factors) without a loop.
#[inline(always)]
fn fold_masks(names: &[String], bit: impl Fn(&String) -> u64) -> u64 {
    match names {
        [a, b] => bit(a) | bit(b),
        [a, b, c] => bit(a) | bit(b) | bit(c),
        names => names.iter().fold(0, |mask, name| mask | bit(name)),
    }
}

/// [`RackBits::extend_replica_masks`] where every rack name has `L` bytes (at most
/// [`SHORT_BYTES`]) and is in `hashed`. Exact: a name of another length is no rack (bit 0,
/// as the general lookup finds it in no table), and one of `L` bytes packs as
/// [`pack_short`] packs it, read at a length known when compiled.
fn extend_same_len<const L: usize>(hashed: &Hashed, replicas: &[Vec<String>], out: &mut Vec<u64>) {
    let (slots, multiplier) = (&*hashed.slots, hashed.multiplier);
    let bit = move |name: &String| {
        let bytes = name.as_bytes();
        #[cfg(test)]
        if planted::LENGTH_UNCHECKED.get() {
            // Reads the first `L` bytes of a longer name as if they were all of it.
            return bytes
                .get(..L)
                .and_then(pack_short)
                .map_or(0, |key| Hashed::bit_in(slots, multiplier, key));
        }
        if bytes.len() != L {
            return 0;
        }
        let Ok(word) = <&[u8; L]>::try_from(bytes) else {
            return 0;
        };
        let mut key = (L as u64) << (8 * L);
        for (i, &b) in word.iter().enumerate() {
            key |= u64::from(b) << (8 * i);
        }
        Hashed::bit_in(slots, multiplier, key)
    };
    // Written into place: through `extend`'s fold the table's parts were loaded again from
    // the closure for every partition.
    let start = out.len();
    out.resize(start + replicas.len(), 0);
    for (mask, names) in out[start..].iter_mut().zip(replicas) {
        *mask = fold_masks(names, bit);
    }
}

/// At most this many masks are scanned in order by [`search_masks`]; more are
/// binary-searched.
const MASKS_SCANNED: usize = 16;

/// Where `mask` is among `items`, whose masks (`mask_of`) are distinct and ascending: as
/// `binary_search_by_key` answers, `Ok` with its position or `Err` with where it would go.
/// Short lists (a topic's groups with a few racks) are scanned, which costs fewer
/// instructions than halving.
#[inline]
pub(crate) fn search_masks<T>(
    items: &[T],
    mask: u64,
    mask_of: impl Fn(&T) -> u64,
) -> Result<usize, usize> {
    if items.len() > MASKS_SCANNED {
        return items.binary_search_by_key(&mask, mask_of);
    }
    let at = items
        .iter()
        .position(|item| mask_of(item) >= mask)
        .unwrap_or(items.len());
    match items.get(at) {
        Some(item) if mask_of(item) == mask => Ok(at),
        _ => Err(at),
    }
}

/// Inserts `item` into `list` at `at` (at most its length), moving the later items up one
/// by one: on the few items of a topic's groups or of a member's claim entries this costs
/// less than [`Vec::insert`]'s move of them (a call to `memmove`).
#[inline]
pub(crate) fn insert_small<T>(list: &mut Vec<T>, at: usize, item: T) {
    list.push(item);
    let mut j = list.len() - 1;
    while j > at {
        list.swap(j, j - 1);
        j -= 1;
    }
}

/// The claims (partition, member) among `claims` that are *keepable*: the partition cannot be
/// aligned (`masks[p] == 0`) or its claimant runs in one of its replica racks (`bit_of(m)`
/// meets `masks[p]`). Order is kept. `every_claim` (a planted fault for tests) keeps them all.
pub(crate) fn keepable_claims(
    claims: &[(i32, u32)],
    masks: &[u64],
    bit_of: impl Fn(u32) -> u64,
    every_claim: bool,
) -> Vec<(i32, u32)> {
    let keep = |&(p, m): &(i32, u32)| {
        let mask = masks[p as usize];
        every_claim || mask == 0 || is_keepable(mask, bit_of(m))
    };
    // Most claims are keepable: a scan that writes nothing finds the first that is not, the
    // claims before it are copied at once and only the rest are pushed one by one. (A copy of
    // every claim followed by `retain` paid `retain`'s guard per claim, and pushing every
    // claim kept the vector's length and capacity in memory across each push.)
    let first = claims.iter().position(|c| !keep(c)).unwrap_or(claims.len());
    let mut kept = Vec::with_capacity(claims.len());
    kept.extend_from_slice(&claims[..first]);
    for c in claims.iter().skip(first + 1) {
        if keep(c) {
            kept.push(*c);
        }
    }
    kept
}

/// Whether a claim is keepable (see [`keepable_claims`]): on a partition with replica racks
/// `mask` (0: it cannot be aligned) by a member with rack bit `bit`.
#[inline]
pub(crate) fn is_keepable(mask: u64, bit: u64) -> bool {
    mask == 0 || mask & bit != 0
}

/// The most racks for which [`mask_groups`] counts in a table indexed by mask.
const TABLE_RACKS: usize = 8;

/// The distinct non-zero masks among `masks`, ascending, each with how many of `masks` it
/// is, and how many are 0. With at most [`TABLE_RACKS`] racks (every mask below
/// 2^`racks`), counted in `table` (scratch) indexed by mask, one step per partition where a
/// search of the groups found so far took several; else by that search.
pub(crate) fn mask_groups(
    masks: &[u64],
    racks: usize,
    table: &mut Vec<u64>,
) -> (Vec<(u64, u64)>, u64) {
    let mut groups: Vec<(u64, u64)> = Vec::new();
    if racks <= TABLE_RACKS {
        table.clear();
        table.resize(1 << racks, 0);
        for &mask in masks {
            table[mask as usize] += 1;
        }
        groups.extend(
            table
                .iter()
                .enumerate()
                .skip(1)
                .filter(|&(_, &count)| count > 0)
                .map(|(mask, &count)| (mask as u64, count)),
        );
        return (groups, table[0]);
    }
    let mut free = 0u64;
    for &mask in masks {
        if mask == 0 {
            free += 1;
            continue;
        }
        match search_masks(&groups, mask, |g| g.0) {
            Ok(g) => groups[g].1 += 1,
            Err(g) => groups.insert(g, (mask, 1)),
        }
    }
    (groups, free)
}

/// Faults a test may plant on its thread, to show the tests catch them.
#[cfg(test)]
pub(crate) mod planted {
    thread_local! {
        /// [`super::Hashed`] answers the bit of the slot a name hashes to without comparing
        /// the name with the slot's.
        pub(crate) static HASH_UNCHECKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        /// The masks of rack names of one length read that many bytes of every replica's
        /// name without comparing its length.
        pub(crate) static LENGTH_UNCHECKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
}

#[cfg(test)]
mod tests;
