//! Tests of the rack lookups: packing, masks, keepable claims and their planted faults.

use super::{MASKS_SCANNED, RackBits, SHORT_BYTES, pack, pack_short, planted, search_masks};

/// The search answers as a binary search does, on lists scanned and lists halved, for
/// masks present, between, below and above them.
#[test]
fn mask_search_matches_binary_search() {
    for len in [0usize, 1, 2, 3, MASKS_SCANNED, MASKS_SCANNED + 1, 40] {
        let masks: Vec<u64> = (0..len as u64).map(|i| 3 * i + 2).collect();
        for mask in 0..3 * len as u64 + 4 {
            assert_eq!(
                search_masks(&masks, mask, |&m| m),
                masks.binary_search(&mask),
                "mask {mask} among {len}"
            );
        }
    }
}

/// Disagreements of every lookup with the definition (bit i for the i-th name in order,
/// else 0), with few racks (hashed, and scanned), many (binary-searched) and names too
/// long to pack, each with and without the table of hashes.
fn lookup_errors() -> usize {
    let long = "a-rack-name-longer-than-fifteen-bytes";
    let mut errors = 0;
    for count in [1usize, 3, 8, 9, 20, 64] {
        let mut owned: Vec<String> = (0..count).map(|i| format!("r{i}")).collect();
        owned.push(format!("{long}-{count}"));
        // Packed as u128 (8 to 15 bytes) beside the short ones.
        owned.push(format!("rack-{count:04}-x"));
        owned.sort();
        let names: Vec<&str> = owned.iter().map(String::as_str).collect();
        let Some(mut bits) = RackBits::from_names(names.clone()) else {
            assert!(names.len() > 64);
            continue;
        };
        // With a few racks every name has a slot of its own; 64 names in 256 slots
        // collide under every multiplier, which leaves the search.
        assert_eq!(bits.hashed.is_some(), count <= 20, "{count} names");
        for hashed in [true, false] {
            if !hashed {
                bits.hashed = None;
            }
            assert_eq!(bits.len(), names.len());
            for (i, name) in names.iter().enumerate() {
                errors += usize::from(bits.bit(name) != 1u64 << i);
            }
            for stranger in ["", "r", "r1\0", "zz", "r9", long, "r100", "rack-0001-y"] {
                let expected = names.binary_search(&stranger).map_or(0, |i| 1u64 << i);
                errors += usize::from(bits.bit(stranger) != expected);
            }
            let replicas = vec![names[0].to_string(), "nowhere".to_string()];
            errors += usize::from(bits.mask(&replicas) != 1);
        }
    }
    errors
}

/// Disagreements of the masks of replica lists with the definition (the bits of the
/// names that are racks), where every rack name has one length from 1 to
/// [`SHORT_BYTES`] bytes: lists of one to four names, with names that extend a rack's
/// name, are a prefix of one, or are much longer.
fn same_length_errors() -> usize {
    let mut errors = 0;
    for len in 1..=SHORT_BYTES {
        for count in [1usize, 3, 8] {
            let owned: Vec<String> = (0..count)
                .map(|i| format!("{}{i}", "r".repeat(len - 1)))
                .collect();
            let names: Vec<&str> = owned.iter().map(String::as_str).collect();
            let Some(bits) = RackBits::from_names(names.clone()) else {
                unreachable!("a few racks");
            };
            assert_eq!(bits.same_len, Some(len));
            let mut pool: Vec<String> = owned.clone();
            for name in &owned {
                pool.push(format!("{name}0"));
                pool.push(name[..len - 1].to_string());
                pool.push(format!("{name}-a-much-longer-name"));
            }
            let expected =
                |name: &String| names.binary_search(&name.as_str()).map_or(0, |i| 1u64 << i);
            let mut replicas: Vec<Vec<String>> = Vec::new();
            for (i, a) in pool.iter().enumerate() {
                let b = &pool[(i * 7 + 1) % pool.len()];
                let c = &pool[(i * 5 + 2) % pool.len()];
                replicas.push(vec![a.clone()]);
                replicas.push(vec![a.clone(), b.clone()]);
                replicas.push(vec![a.clone(), b.clone(), c.clone()]);
                replicas.push(vec![c.clone(), a.clone(), b.clone(), a.clone()]);
            }
            replicas.push(Vec::new());
            let mut masks = vec![7u64];
            bits.extend_replica_masks(&replicas, &mut masks);
            errors += usize::from(masks.len() != replicas.len() + 1 || masks[0] != 7);
            for (names, &mask) in replicas.iter().zip(&masks[1..]) {
                let want = names.iter().fold(0, |m, name| m | expected(name));
                errors += usize::from(mask != want || bits.mask(names) != want);
            }
        }
    }
    errors
}

#[test]
fn same_length_masks_follow_names() {
    assert_eq!(same_length_errors(), 0);
}

/// Masks that read a rack name's length of every replica name without comparing lengths
/// take a longer name for the rack it starts with.
#[test]
fn unchecked_lengths_are_caught() {
    planted::LENGTH_UNCHECKED.set(true);
    let errors = same_length_errors();
    planted::LENGTH_UNCHECKED.set(false);
    assert!(errors > 0, "a longer name passed for a rack");
}

#[test]
fn bits_follow_name_order() {
    assert_eq!(lookup_errors(), 0);
}

/// A table of hashes that does not compare names answers strangers with the bit of the
/// rack whose slot they hash to.
#[test]
fn unchecked_hashes_are_caught() {
    planted::HASH_UNCHECKED.set(true);
    let errors = lookup_errors();
    planted::HASH_UNCHECKED.set(false);
    assert!(errors > 0, "an unchecked slot went unnoticed");
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

/// The short packing gives the same integer as the general one for every length it
/// represents (so a name is found whichever table holds it), including bytes that a
/// word read in the wrong order or at the wrong offset would misplace.
#[test]
fn short_packing_matches() {
    let source = "abcdefghijklmnop\u{7f}\0zZ";
    for start in 0..4 {
        for len in 0..=16 {
            let name = &source[start..start + len];
            let short = pack_short(name.as_bytes());
            if len <= SHORT_BYTES {
                assert_eq!(short.map(u128::from), pack(name), "{name:?}");
            } else {
                assert_eq!(short, None, "{name:?}");
            }
        }
    }
}
