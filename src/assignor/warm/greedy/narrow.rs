//! The hand-out of several extras of one topic when its subscribers' loads are within one of
//! the lightest member's: one pass in index order that stops as soon as the extras are
//! placed, instead of the general path's histogram pass and full threshold scan.
//!
//! It chooses exactly what the general path of [`Proposal::hand_out`](super::Proposal)
//! does, the `left` smallest (load, index) pairs among the subscribers with room. The
//! lightest load `g` of the whole component is known exactly (members are counted per load
//! and every unit given or taken back moves one member one level), so no subscriber is
//! lighter than `g`: when at least `left` of them are at `g` or `g + 1`, those pairs are the
//! lowest indices at `g`, then the lowest at `g + 1`. The pass stops once `left` are found
//! at `g`, or once every member at `g` of the component has been met and enough are at
//! `g + 1`. When fewer than `left` are at the two levels it reports so and the general path
//! runs (nothing is lost but the pass).
//!
//! The pass also skips the subscribers below the lowest member at `g`: a cursor over the
//! component's members, below which none is at `g`, kept true as units are given and taken
//! back and moved forward as they are handed out (once per load level, not once per topic).
//! Members at `g` are mostly the higher ones (ties go to the lower index, so the lower ones
//! are raised first), so the pass starts near them; before that point it only looks for the
//! first ones at `g + 1`, which are dense there, and stops once it has enough.

/// The members of a component counted per load, kept exact across one completion.
#[derive(Default)]
pub(in crate::assignor::warm) struct Narrow {
    /// The load counted at `counts[0]`.
    base: i64,
    /// Members per load from `base` on; empty when the loads spread too wide to count
    /// (every hand-out then takes the general path).
    counts: Vec<u32>,
    /// The lightest load of any member (when `counts` is not empty).
    low: i64,
    /// The first indices at `low + 1` of the topic being handed out (scratch space).
    near: Vec<u32>,
    /// A local member below which none is at `low` (a lower bound of the lowest there).
    first: usize,
}

/// The widest spread of loads (lightest to heaviest) that [`Narrow::new`] counts.
const SPREAD: i64 = 1 << 12;

impl Narrow {
    /// The counts of the members' loads `load`, or none (every hand-out by the general
    /// path) when there are no members or they spread wider than [`SPREAD`].
    pub fn new(load: &[i64]) -> Narrow {
        let (Some(&low), Some(&high)) = (load.iter().min(), load.iter().max()) else {
            return Narrow::default();
        };
        if high - low > SPREAD {
            return Narrow::default();
        }
        let mut counts = vec![0u32; (high - low + 1) as usize];
        for &l in load {
            counts[(l - low) as usize] += 1;
        }
        Narrow {
            base: low,
            counts,
            low,
            near: Vec::new(),
            first: 0,
        }
    }

    /// The lightest load of any member, when counted.
    #[inline]
    pub fn low(&self) -> Option<i64> {
        (!self.counts.is_empty()).then_some(self.low)
    }

    /// The members at load `l` (none when not counted).
    pub fn at(&self, l: i64) -> u32 {
        usize::try_from(l - self.base)
            .ok()
            .and_then(|i| self.counts.get(i).copied())
            .unwrap_or(0)
    }

    /// A member moves from load `l` to `l + 1`. Inlined: it runs once per unit handed out.
    #[inline]
    pub fn raise(&mut self, l: i64) {
        let at = (l - self.base) as usize;
        // Out of range only when nothing is counted.
        let Some(n) = self.counts.get_mut(at) else {
            return;
        };
        *n -= 1;
        let emptied = *n == 0;
        match self.counts.get_mut(at + 1) {
            Some(n) => *n += 1,
            None => self.counts.push(1),
        }
        if emptied && l == self.low {
            // The member just raised is there.
            self.low = l + 1;
            // The members at the new lowest load may be anywhere.
            self.first = 0;
        }
    }

    /// Local member `lm` moves from load `l` to `l - 1`.
    pub fn lower(&mut self, lm: usize, l: i64) {
        if self.counts.is_empty() {
            return;
        }
        // It may now be at the lowest load (the only one there, if that load is new).
        #[cfg(test)]
        let kept = !CURSOR_KEPT.with(std::cell::Cell::get);
        #[cfg(not(test))]
        let kept = true;
        if kept {
            self.first = self.first.min(lm);
        }
        let mut at = (l - self.base) as usize;
        if at == 0 {
            // Not met in a completion (it takes back only what it gave), but kept exact.
            self.counts.insert(0, 0);
            self.base -= 1;
            at = 1;
        }
        self.counts[at] -= 1;
        self.counts[at - 1] += 1;
        self.low = self.low.min(l - 1);
    }

    /// Whether the counts are those of `load` (tests: every move was reported), or none
    /// are kept.
    #[cfg(test)]
    pub fn counts(&self, load: &[i64]) -> bool {
        if self.counts.is_empty() {
            return true;
        }
        let mut want = std::collections::BTreeMap::new();
        for &l in load {
            *want.entry(l).or_insert(0u32) += 1;
        }
        let have: std::collections::BTreeMap<i64, u32> = (self.base..)
            .zip(self.counts.iter().copied())
            .filter(|&(_, n)| n > 0)
            .collect();
        have == want && want.keys().next() == Some(&self.low)
    }

    /// The `left` (at least 1) smallest (load, index) pairs among the subscribers `subs` of
    /// a topic, every one with room for an extra (a topic with claims held above its floor
    /// takes the general path), their indices written ascending into `mine`, when at least
    /// `left` are at the lightest load or one above (see the [module docs](self)); else
    /// `false`, `mine` cleared.
    // Never inlined: inlined into `hand_out` (as the compiler chose once the other modules
    // changed) its loop ran 1.1M instructions slower on the 1000m × 50ppm × 1000t full row.
    #[inline(never)]
    pub fn two_levels(
        &mut self,
        subs: &[u32],
        load: &[i64],
        left: usize,
        mine: &mut Vec<u32>,
    ) -> bool {
        mine.clear();
        #[cfg(test)]
        if NARROW_OFF.with(std::cell::Cell::get) {
            return false;
        }
        let Some(g) = self.low() else {
            return false;
        };
        #[cfg(test)]
        assert!(subs.iter().all(|&m| load[m as usize] >= g));
        // The component's members at g not met yet: at none left, no later subscriber is.
        let mut unseen = self.counts[(g - self.base) as usize];
        let start = self.start(subs, load, g);
        let near = &mut self.near;
        near.clear();
        mine.reserve(left);
        // None at g before `start`: only the first ones at g + 1 are wanted there.
        for (i, &m) in subs[..start].iter().enumerate() {
            if load[m as usize] == g + 1 {
                near.push(i as u32);
                if near.len() == left {
                    break;
                }
            }
        }
        for (i, &m) in (start..).zip(&subs[start..]) {
            let l = load[m as usize];
            if l == g {
                mine.push(i as u32);
                unseen -= 1;
            } else if l == g + 1 && mine.len() + near.len() < left {
                // Only the first ones can be needed: those at g only lower the quota.
                near.push(i as u32);
            } else {
                continue;
            }
            if mine.len() == left || (unseen == 0 && mine.len() + near.len() >= left) {
                break;
            }
        }
        let at = mine.len();
        if at + near.len() < left {
            mine.clear();
            return false;
        }
        #[cfg(test)]
        NARROW_TAKEN.with(|c| c.set(c.get() + 1));
        // The first ones at g + 1 merged in, from the back (indices are distinct).
        let take = &near[..left - at];
        mine.resize(left, 0);
        let (mut a, mut b, mut w) = (at, take.len(), left);
        while b > 0 {
            w -= 1;
            if a > 0 && mine[a - 1] > take[b - 1] {
                mine[w] = mine[a - 1];
                a -= 1;
            } else {
                mine[w] = take[b - 1];
                b -= 1;
            }
        }
        true
    }

    /// The index of the first of `subs` (ascending local members, each at load `g` = the
    /// lightest or above) that may be at `g`: that of the lowest member of the component at
    /// `g`, found by moving the cursor on. Without a search (0) for a topic of less than a
    /// quarter of the component, where moving the cursor could cost more than the pass it
    /// spares (after a take-back lowered it).
    fn start(&mut self, subs: &[u32], load: &[i64], g: i64) -> usize {
        #[cfg(test)]
        if CURSOR_OFF.with(std::cell::Cell::get) {
            return 0;
        }
        if 4 * subs.len() < load.len() {
            return 0;
        }
        // Some member is at g (counted), at or after the cursor.
        match load
            .get(self.first..)
            .and_then(|rest| rest.iter().position(|&l| l == g))
        {
            Some(skip) => self.first += skip,
            None => {
                self.first = 0;
                return 0;
            }
        }
        subs.partition_point(|&m| (m as usize) < self.first)
    }
}

#[cfg(test)]
thread_local! {
    /// Tests only: [`Narrow::two_levels`] passes over every subscriber (no cursor), for a
    /// reference.
    pub(crate) static CURSOR_OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: a planted fault, [`Narrow::lower`] leaves the cursor where it is (so a
    /// member taken back to the lowest load below it is skipped).
    pub(crate) static CURSOR_KEPT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: [`Narrow::two_levels`] always declines (every hand-out of several extras
    /// takes the general path), for a reference.
    pub(crate) static NARROW_OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: the hand-outs [`Narrow::two_levels`] made.
    pub(crate) static NARROW_TAKEN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}
