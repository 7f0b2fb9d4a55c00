//! The few best of many candidates: a bounded insertion keeping the `k` smallest seen so
//! far, and a selection of the `k` smallest of a list, for the placement's releases.

/// Adds `item` to `best`, ascending and holding the `k` smallest items seen so far (all
/// distinct), when it is one of them: `best` ends as [`keep_smallest`] then a sort would
/// leave every item pushed.
#[inline(always)]
pub(super) fn push_bounded<T: Ord>(best: &mut Vec<T>, item: T, k: usize) {
    // Most items come after the k-th best (or k is 0): refused inline.
    if best.len() == k && best.last().is_none_or(|last| item >= *last) {
        return;
    }
    insert_bounded(best, item, k);
}

/// [`push_bounded`] of an item that is one of the `k` smallest seen so far.
#[inline(never)]
fn insert_bounded<T: Ord>(best: &mut Vec<T>, item: T, k: usize) {
    if best.len() == k {
        best.pop();
    }
    let at = best.partition_point(|x| *x < item);
    best.insert(at, item);
}

/// Keeps in `items` only its `k` smallest (all of them if it has no more), in no particular
/// order: a selection, cheaper than sorting everything when few are read. The items must be
/// distinct, so which ones are kept does not depend on the selection's order.
pub(super) fn keep_smallest<T: Ord>(items: &mut Vec<T>, k: usize) {
    if items.len() > k {
        if k > 0 {
            items.select_nth_unstable(k - 1);
        }
        items.truncate(k);
    }
}

#[cfg(test)]
mod tests {
    use super::{keep_smallest, push_bounded};

    /// Items pushed one by one with a bound keep the same items in the same order as a
    /// selection then a sort of all of them, for every bound from 0 to beyond the count.
    #[test]
    fn bounded_pushes_match_selection() {
        let mut seed = 7u64;
        for len in [0usize, 1, 2, 5, 9, 40, 300] {
            let mut items: Vec<(bool, u64, i32, usize)> = (0..len)
                .map(|j| {
                    seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    (
                        (seed >> 60) & 1 == 1,
                        (seed >> 40) % 5,
                        (seed >> 20) as i32 % 7,
                        j,
                    )
                })
                .collect();
            for k in [0usize, 1, 2, 3, 8, 50, 400] {
                let mut best = Vec::new();
                for &item in &items {
                    push_bounded(&mut best, item, k);
                }
                let mut all = items.clone();
                keep_smallest(&mut all, k);
                all.sort_unstable();
                assert_eq!(best, all, "{len} items, k = {k}");
            }
            items.reverse();
        }
    }
}
