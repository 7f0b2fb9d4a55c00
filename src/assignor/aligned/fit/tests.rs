//! Unit tests of the repair's helpers.

use super::{CANDIDATES, lowest};

/// The kept items are the smallest, ascending, as sorting all of them and taking the
/// first [`CANDIDATES`] gives, for inputs shorter and longer than that and in every order
/// the generator makes.
#[test]
fn keeps_the_smallest_ascending() {
    let mut seed = 7u64;
    let mut next = |n: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    let mut out = Vec::new();
    for round in 0..500 {
        let len = next(3 * CANDIDATES as u64) as usize;
        // Distinct items: the position makes each unique, the key repeats.
        let items: Vec<(u64, usize)> = (0..len).map(|pos| (next(6), pos)).collect();
        let mut want = items.clone();
        want.sort_unstable();
        want.truncate(CANDIDATES);
        lowest(items.iter().copied(), &mut out);
        assert_eq!(out, want, "round {round}");
    }
}
