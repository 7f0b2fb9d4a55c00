//! A component's rack names as bits of a `u64`, and every partition's replica racks as a mask
//! of those bits.
//!
//! The rack-aware paths read the replica racks of every partition of a component once: on
//! large groups that is one name lookup per replica, which hashing and comparing strings made
//! the largest single cost of a racked call. Rack names are short in practice (`r1`,
//! `us-east-1a`), so a name of up to 15 bytes is packed with its length into a `u128` and
//! found among the racks' packed names by integer comparison alone; longer names fall back
//! to a search of the sorted names. Both lookups answer the same: the bit of a rack where
//! some member of the component runs, or 0.

use super::components::Component;
use super::problem::Problem;

/// The longest name [`pack`] represents: the 16th byte holds the length.
const PACKED_BYTES: usize = 15;

/// At most this many packed names are scanned in order; more are binary-searched.
const LINEAR_SCAN: usize = 8;

/// The bits of a component's racks: bit i is the i-th rack in name order.
pub(crate) struct RackBits<'a> {
    /// The distinct racks of the component's members, ascending by name (at most 64).
    names: Vec<&'a str>,
    /// Packed name → bit, ascending by packed name, for names [`pack`] represents.
    packed: Vec<(u128, u64)>,
}

/// `name` with its length as one integer, when it has at most [`PACKED_BYTES`] bytes: byte
/// i in bits 8(i+1)..8(i+2), the length in the lowest byte. Two names pack to the same
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
        let mut packed: Vec<(u128, u64)> = names
            .iter()
            .enumerate()
            .filter_map(|(i, name)| pack(name).map(|key| (key, 1u64 << i)))
            .collect();
        packed.sort_unstable();
        Some(RackBits { names, packed })
    }

    /// How many racks there are.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// The bit of rack `name`, or 0 where no member of the component runs in it.
    #[inline]
    pub fn bit(&self, name: &str) -> u64 {
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
            Some(replicas) => out.extend(replicas.iter().map(|names| self.mask(names))),
            None => out.resize(out.len() + problem.partitions(t) as usize, 0),
        }
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
    // Most claims are keepable: room for all of them at once. A plain loop, because the
    // filtering iterator adapter compiled to a call per claim.
    let mut kept = Vec::with_capacity(claims.len());
    for &(p, m) in claims {
        let mask = masks[p as usize];
        if every_claim || mask == 0 || mask & bit_of(m) != 0 {
            kept.push((p, m));
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::{RackBits, pack};

    /// Every lookup agrees with the definition (bit i for the i-th name in order, else 0),
    /// with few racks (scanned), many (binary-searched) and names too long to pack.
    #[test]
    fn bits_follow_name_order() {
        let long = "a-rack-name-longer-than-fifteen-bytes";
        for count in [1usize, 3, 8, 9, 20, 64] {
            let mut owned: Vec<String> = (0..count).map(|i| format!("r{i}")).collect();
            owned.push(format!("{long}-{count}"));
            owned.sort();
            let names: Vec<&str> = owned.iter().map(String::as_str).collect();
            let Some(bits) = RackBits::from_names(names.clone()) else {
                assert!(names.len() > 64);
                continue;
            };
            assert_eq!(bits.len(), names.len());
            for (i, name) in names.iter().enumerate() {
                assert_eq!(bits.bit(name), 1u64 << i, "{name} of {count}");
            }
            for stranger in ["", "r", "r1\0", "zz", long, "r100"] {
                let expected = names.binary_search(&stranger).map_or(0, |i| 1u64 << i);
                assert_eq!(bits.bit(stranger), expected, "{stranger} of {count}");
            }
            let replicas = vec![names[0].to_string(), "nowhere".to_string()];
            assert_eq!(bits.mask(&replicas), 1);
        }
    }

    #[test]
    fn packing_tells_names_apart() {
        let names = [
            "",
            "a",
            "a\0",
            "\0",
            "r1",
            "r10",
            "us-east-1a",
            "exactly15bytes!",
        ];
        let keys: Vec<u128> = names.iter().filter_map(|n| pack(n)).collect();
        assert_eq!(keys.len(), names.len());
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(pack("sixteen-bytes-16"), None);
    }
}
