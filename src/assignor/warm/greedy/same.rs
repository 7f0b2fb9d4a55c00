//! The sameness test of [`Proposal::complete_held`]'s improving passes: whether handing a
//! topic's extras out again would give them to the same subscribers, answered without the
//! take-back and the hand-out.

use super::super::Proposal;
use super::Narrow;
#[cfg(test)]
use super::{COUNTED_SAME, SAME_OVERRIDE, SPARED};

impl Proposal {
    /// Whether taking back topic `lt`'s extras handed to `mine` (indices, ascending) and
    /// handing them out again would give them to `mine` again: [`Proposal::hand_out`] picks
    /// the smallest (load, index) pairs among the subscribers with room, so it does exactly
    /// when every one of `mine`, one unit lighter, comes before every other subscriber with
    /// room. One pass, instead of the take-back and the hand-out's passes. `bare`: every
    /// subscriber but those of `mine` is at its floor (has room), so no count is read.
    /// `narrow`: the members counted per load, which often answer without a pass.
    pub(super) fn hands_out_the_same(
        &self,
        lt: usize,
        mine: &[u32],
        bare: bool,
        narrow: &Narrow,
    ) -> bool {
        #[cfg(test)]
        if let Some(same) = SAME_OVERRIDE.with(std::cell::Cell::get) {
            return same;
        }
        let (f, subs) = (self.floor[lt], &self.subs[lt]);
        if let (Some(g), Some(last)) = (
            narrow.low(),
            mine.iter()
                .map(|&i| self.load[subs[i as usize] as usize] - 1)
                .max(),
        ) {
            // No member of the component but those of `mine` at `last` or lighter: no other
            // subscriber comes first, wherever it is.
            let mine_at = || {
                mine.iter()
                    .filter(|&&i| self.load[subs[i as usize] as usize] == last)
                    .count()
            };
            if g > last || (g == last && narrow.at(last) as usize == mine_at()) {
                #[cfg(test)]
                SPARED.with(|c| c.set(c.get() + 1));
                #[cfg(test)]
                COUNTED_SAME.with(|c| c.set(c.get() + 1));
                return true;
            }
        }
        if let (true, &[i]) = (bare, mine) {
            // The one holder, one unit lighter, against every other subscriber.
            let (i, load) = (i as usize, &self.load);
            let last = load[subs[i] as usize] - 1;
            let same = !subs[..i].iter().any(|&m| load[m as usize] <= last)
                && !subs[i + 1..].iter().any(|&m| load[m as usize] < last);
            #[cfg(test)]
            if same {
                SPARED.with(|c| c.set(c.get() + 1));
            }
            return same;
        }
        let Some(last) = mine
            .iter()
            .map(|&i| (self.load[subs[i as usize] as usize] - 1, i as usize))
            .max()
        else {
            return true;
        };
        // The holders of `mine` hold f_t + 1: the others with room are those at f_t. One is
        // before `last` if it is no heavier and at a lower index, or lighter and after.
        // So it is the same when the lightest others with room before `last` are heavier
        // than it, and those after no lighter.
        let (cut, count, load) = (last.1, &self.count[lt], &self.load);
        let lightest = |subs: &[u32]| {
            subs.iter()
                .fold(i64::MAX, |low, &m| low.min(load[m as usize]))
        };
        let same = if bare {
            // The others with room are exactly those between the holders of `mine`.
            let mut from = 0;
            let mut same = true;
            for &i in mine {
                let i = i as usize;
                let low = lightest(&subs[from..i]);
                if low < last.0 || (i <= cut && low == last.0) {
                    same = false;
                    break;
                }
                from = i + 1;
            }
            same && lightest(&subs[from..]) >= last.0
        } else {
            // Stops at the first one that comes first (often early where the hand-out
            // changes).
            let before = |subs: &[u32], count: &[i32], strictly: bool| {
                subs.iter().zip(count).any(|(&m, &k)| {
                    let l = load[m as usize];
                    k == f && (l < last.0 || (!strictly && l == last.0))
                })
            };
            !before(&subs[..cut], &count[..cut], false)
                && !before(&subs[cut..], &count[cut..], true)
        };
        #[cfg(test)]
        if same {
            SPARED.with(|c| c.set(c.get() + 1));
        }
        same
    }
}
