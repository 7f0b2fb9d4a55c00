//! A search for an item near a known position of a sorted slice: outwards by doubling steps,
//! then a binary search in the last window.

use std::cmp::Ordering;

/// Where the item `order` finds equal is in `items` (`Ok`), or would be (`Err`), exactly as
/// [`slice::binary_search_by`] answers for distinct items, searched for from position `from`
/// (clamped to the last) outwards by doubling steps: O(log d) comparisons for a target d
/// positions from `from`, where a search over all the items takes O(log items). `order` must
/// be monotone along `items` (Less, then Equal, then Greater). Used wherever a search's
/// target is usually near a known position: a member's next claim among its subscriptions,
/// a topic's next claimant among its subscribers (`overlap::cells::locate`).
#[inline]
pub(super) fn gallop<T: Copy>(
    items: &[T],
    from: usize,
    order: impl Fn(T) -> Ordering,
) -> Result<usize, usize> {
    let Some(g) = items.len().checked_sub(1).map(|end| from.min(end)) else {
        return Err(0);
    };
    match order(items[g]) {
        Ordering::Equal => Ok(g),
        Ordering::Less => {
            // ahead[..end] is below at every probe that was; the last probe (at end - 1) is
            // not, or the end is past the last: the target is in ahead[end / 2..end].
            let (base, ahead) = (g + 1, &items[g + 1..]);
            let mut end = 1;
            while end < ahead.len() && order(ahead[end - 1]) == Ordering::Less {
                end *= 2;
            }
            let lo = end / 2;
            let window = &ahead[lo..end.min(ahead.len())];
            let at = window.binary_search_by(|&s| order(s));
            at.map(|i| base + lo + i).map_err(|i| base + lo + i)
        }
        Ordering::Greater => {
            // The mirror image: behind[len - end..] is above at every probe that was.
            let behind = &items[..g];
            let mut end = 1;
            while end < behind.len() && order(behind[behind.len() - end]) == Ordering::Greater {
                end *= 2;
            }
            let lo = behind.len().saturating_sub(end);
            let window = &behind[lo..behind.len() - end / 2];
            let at = window.binary_search_by(|&s| order(s));
            at.map(|i| lo + i).map_err(|i| lo + i)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::gallop;
    use crate::assignor::tests::Rng;

    /// The search outwards from a guessed position answers as a binary search over all the
    /// subscriptions, found or not, from every start (in range or past the end).
    #[test]
    fn a_gallop_answers_as_a_binary_search() {
        let mut rng = Rng(7);
        for _ in 0..2_000 {
            let mut subs: Vec<u32> = (0..rng.below(40)).map(|_| rng.below(60) as u32).collect();
            subs.sort_unstable();
            subs.dedup();
            for _ in 0..8 {
                let t = rng.below(62) as u32;
                let from = match rng.below(4) {
                    0 => usize::MAX,
                    _ => rng.below(subs.len() as u64 + 2) as usize,
                };
                assert_eq!(gallop(&subs, from, |s| s.cmp(&t)), subs.binary_search(&t));
            }
        }
    }
}
