//! The hand-out of several extras of one topic when its subscribers' loads are within one of
//! a guessed load: one pass counting those at it and one above, then one that stops as soon
//! as the extras are placed, instead of the general path's histogram pass and full threshold
//! scan.
//!
//! It chooses exactly what the general path of [`Proposal::hand_out`](super::Proposal)
//! does, the `left` smallest (load, index) pairs among the subscribers with room: when no
//! subscriber with room is lighter than the guess `g`, and at least `left` of them are at `g`
//! or `g + 1`, those pairs are the lowest indices at `g`, then the lowest at `g + 1`. When
//! either condition fails it reports so and the general path runs (the guess was wrong;
//! nothing is lost but the pass).
//!
//! The guess is the lightest load with room of the topic handed out before: in a hand-out
//! topic after topic, the loads rise evenly, so consecutive topics mostly share it.

/// The guess for [`Narrow::two_levels`], kept across the topics of one completion.
#[derive(Default)]
pub(in crate::assignor::warm) struct Narrow {
    /// The guessed lightest load with room, if any topic set one.
    pub guess: Option<i64>,
}

impl Narrow {
    /// The `left` (at least 1) smallest (load, index) pairs among the subscribers `subs` of
    /// a topic, every one with room for an extra (a topic with claims held above its floor
    /// takes the general path: its guesses mostly fail), their indices written ascending
    /// into `mine`, when the [module docs](self)' conditions hold for the guess; else
    /// `false`, `mine` cleared. Sets the guess to the lightest load when it succeeds.
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
        let Some(g) = self.guess else {
            return false;
        };
        // First the subscribers below the guess, at it, one above and beyond, counted by a
        // clamped offset: no branch per subscriber.
        let mut by = [0usize; 4];
        let bucket = |l: i64| (l - g + 1).clamp(0, 3) as usize;
        for &m in subs {
            by[bucket(load[m as usize])] += 1;
        }
        let (at, near) = (by[1], by[2]);
        if by[0] > 0 || at + near < left {
            return false;
        }
        #[cfg(test)]
        NARROW_TAKEN.with(|c| c.set(c.get() + 1));
        // Then, in index order, the quotas known: every one at the guess up to `left`, the
        // rest the first ones above it; the pass stops once they are filled.
        let (mut take_at, mut take_near) = (at.min(left), left - at.min(left));
        mine.reserve(left);
        for (i, &m) in subs.iter().enumerate() {
            let l = load[m as usize];
            if l == g && take_at > 0 {
                take_at -= 1;
                mine.push(i as u32);
            } else if l == g + 1 && take_near > 0 {
                take_near -= 1;
                mine.push(i as u32);
            } else {
                continue;
            }
            if mine.len() == left {
                break;
            }
        }
        // The lightest: none is below the guess.
        self.guess = Some(if at > 0 { g } else { g + 1 });
        true
    }
}

#[cfg(test)]
thread_local! {
    /// Tests only: [`Narrow::two_levels`] always declines (every hand-out of several extras
    /// takes the general path), for a reference.
    pub(crate) static NARROW_OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: the hand-outs [`Narrow::two_levels`] made.
    pub(crate) static NARROW_TAKEN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}
