//! The members that can have room in a topic with no floor (the chosen), in the two orders
//! the deal walks them: by rack (ascending within each) and by local id.

/// The chosen members of one topic, each once, in both orders; buffers reused.
#[derive(Default)]
pub(super) struct Holders {
    /// Ascending, each once.
    ascending: Vec<u32>,
    /// The same members by rack (racks ascending, the unracked last), ascending within each.
    by_rack: Vec<u32>,
    /// Where each rack's run in `by_rack` ends: `racks + 1` entries, the last the unracked's.
    end: Vec<usize>,
    /// Per member of `ascending`, its run (its rack index, `racks` for the unracked).
    slot: Vec<u32>,
}

impl Holders {
    /// Takes `chosen` (local ids, any order, repeats allowed) with `rack(lm)` the rack index
    /// of each (`racks` or more for the unracked), in time linear in `chosen` and `racks`
    /// (plus a sort where `chosen` is not already strictly ascending).
    pub(super) fn fill(&mut self, chosen: &[u32], racks: usize, rack: impl Fn(u32) -> usize) {
        self.ascending.clear();
        self.ascending.extend_from_slice(chosen);
        if !chosen.is_sorted_by(|a, b| a < b) {
            self.ascending.sort_unstable();
            self.ascending.dedup();
        }
        // A counting sort by rack, stable, so each run stays ascending: `end[r]` counts rack
        // r − 1's members, then is made the start of rack r's run and advanced past each of
        // its members, ending where that run ends.
        self.slot.clear();
        self.slot
            .extend(self.ascending.iter().map(|&lm| rack(lm).min(racks) as u32));
        self.end.clear();
        self.end.resize(racks + 2, 0);
        for &slot in &self.slot {
            self.end[slot as usize + 1] += 1;
        }
        for r in 1..self.end.len() {
            self.end[r] += self.end[r - 1];
        }
        self.by_rack.clear();
        self.by_rack.resize(self.ascending.len(), 0);
        for (&lm, &slot) in self.ascending.iter().zip(&self.slot) {
            let at = &mut self.end[slot as usize];
            self.by_rack[*at] = lm;
            *at += 1;
        }
        self.end.pop();
    }

    /// The holders in rack `r` (below the `racks` given to [`Holders::fill`]), ascending.
    pub(super) fn rack(&self, r: usize) -> &[u32] {
        let start = if r == 0 { 0 } else { self.end[r - 1] };
        &self.by_rack[start..self.end[r]]
    }

    /// Every holder, ascending.
    pub(super) fn ascending(&self) -> &[u32] {
        &self.ascending
    }
}

#[cfg(test)]
mod tests {
    use super::Holders;
    use crate::assignor::tests::Rng;

    /// On random chosen lists (sorted or not, with repeats, some members unracked), each
    /// rack's run is the chosen of that rack, ascending, each once, and `ascending` all of
    /// them.
    #[test]
    fn runs_are_the_chosen_of_each_rack_ascending() {
        let mut rng = Rng(0x5eed_dea1);
        let mut holders = Holders::default();
        for case in 0..2_000 {
            let racks = 1 + rng.below(6) as usize;
            let members = 1 + rng.below(40) as u32;
            // Rack index per member; `racks` and above stand for the unracked.
            let rack_of: Vec<usize> = (0..members)
                .map(|_| rng.below(racks as u64 + 2) as usize)
                .collect();
            let mut chosen: Vec<u32> = (0..rng.below(30))
                .map(|_| rng.below(u64::from(members)) as u32)
                .collect();
            if case % 2 == 0 {
                chosen.sort_unstable();
                chosen.dedup();
            }
            holders.fill(&chosen, racks, |lm| rack_of[lm as usize]);
            let mut want: Vec<u32> = chosen.clone();
            want.sort_unstable();
            want.dedup();
            assert_eq!(holders.ascending(), &want[..], "case {case}");
            for r in 0..racks {
                let run: Vec<u32> = want
                    .iter()
                    .copied()
                    .filter(|&lm| rack_of[lm as usize] == r)
                    .collect();
                assert_eq!(holders.rack(r), &run[..], "case {case}, rack {r}");
            }
        }
    }
}
