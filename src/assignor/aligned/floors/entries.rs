//! The claim entries of one topic of the flow with floors of the [parent](super): per local
//! member, its keepable claims of the topic counted per mask, members ascending and, within a
//! member, masks ascending (the order a sort of the (member, mask) pairs gives).
//!
//! Every keepable claim's mask is one of the topic's groups or 0 (the masks and the groups
//! come from the same partitions), so a claim is given its group's *key* once: 0 for mask 0,
//! g + 1 for group g. Groups are ascending by mask and 0 is below every other mask, so keys
//! order the entries exactly as masks do; a member's entries are then its distinct keys,
//! counted in a table indexed by key and stamped with the member (no reset per member), and
//! ordered by sorting those few keys. Where a search of the member's entries so far ran for
//! every claim twice (once to count, once to find its entry) and a search of the groups for
//! every entry, each claim now costs a lookup and two table reads.

use super::super::super::racks::search_masks;

/// The most racks for which a claim's key is read from a table indexed by its mask (2^8
/// slots); with more, the groups are searched.
const KEY_TABLE_RACKS: usize = 8;

/// The dense table of [`Entries::dense`] is used when it has at most this many cells per
/// keepable claim (plus [`DENSE_CELLS_EXTRA`]): its scan of the cells then costs no more than
/// the passes over the claims it saves.
const DENSE_CELLS_PER_CLAIM: usize = 4;

/// Cells the dense table may have beyond [`DENSE_CELLS_PER_CLAIM`] per claim.
const DENSE_CELLS_EXTRA: usize = 256;

#[cfg(test)]
thread_local! {
    /// Tests only: the dense table never used, so that tests compare it with the general
    /// construction.
    pub(crate) static GENERAL_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Topics' claim entries, as [`super::TopicFlow`] sees them: each topic's appended after the
/// previous one's.
#[derive(Default)]
pub(super) struct TopicEntries {
    /// (local member, mask, keepable claims of that mask), ascending within a topic.
    pub(super) claims: Vec<(u32, u64, u64)>,
    /// Per entry: the index of its mask's group, `groups.len()` (the free node) for mask 0.
    pub(super) entry_group: Vec<usize>,
    /// Per keepable claim (in the order given): its entry, counted from its topic's first
    /// entry in `claims`.
    pub(super) entry_of: Vec<u32>,
}

/// Scratch reused from topic to topic, so that a topic allocates only what it keeps.
#[derive(Default)]
pub(super) struct Entries {
    /// Per keepable claim: its local member.
    lm_of: Vec<usize>,
    /// Claims bucketed by member: `start[lm]..start[lm + 1]` of `order`, in claim order.
    start: Vec<usize>,
    fill: Vec<usize>,
    order: Vec<usize>,
    /// Per keepable claim: its key (see the module docs).
    key_of: Vec<u32>,
    /// Per mask below 2^racks (few racks): its key.
    key_table: Vec<u32>,
    /// Per key: the last member (+ 1) that counted it, its count, and its entry's index.
    stamp: Vec<u32>,
    count: Vec<u64>,
    at: Vec<u32>,
    /// The current member's distinct keys.
    seen: Vec<u32>,
}

impl Entries {
    /// The entries of the keepable claims `keepable` ((partition, member), in the order of
    /// the parent's `ctx.keepable`), whose partitions' masks are `masks` and whose members'
    /// local ids `local` gives (below `n`), for a topic of groups `groups` (distinct non-zero
    /// masks ascending, with counts) on `racks` racks, appended to `out`. `None` when a
    /// claim's non-zero mask is no group's, which the groups' construction rules out (`out`
    /// may then hold part of the topic).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn build(
        &mut self,
        keepable: &[(i32, u32)],
        masks: &[u64],
        groups: &[(u64, u64)],
        n: usize,
        racks: usize,
        local: impl Fn(u32) -> usize,
        out: &mut TopicEntries,
    ) -> Option<()> {
        let k = groups.len();
        let width = k + 1;
        let cells = n * width;
        #[cfg(test)]
        let allowed = !GENERAL_ONLY.with(std::cell::Cell::get);
        #[cfg(not(test))]
        let allowed = true;
        // Cells are numbered in u32, as keys are.
        let dense = allowed
            && cells <= DENSE_CELLS_PER_CLAIM * keepable.len() + DENSE_CELLS_EXTRA
            && cells <= u32::MAX as usize;
        if dense {
            self.count.clear();
            self.count.resize(cells, 0);
        }
        // Each claim's key (dense: its cell, counted).
        self.key_of.clear();
        if racks <= KEY_TABLE_RACKS {
            self.key_table.clear();
            self.key_table.resize(1 << racks, u32::MAX);
            self.key_table[0] = 0;
            for (g, &(mask, _)) in groups.iter().enumerate() {
                *self.key_table.get_mut(mask as usize)? = g as u32 + 1;
            }
            if dense {
                // One pass: each claim's key read and counted straight into its cell.
                for &(p, m) in keepable {
                    let key = *self.key_table.get(*masks.get(p as usize)? as usize)?;
                    if key == u32::MAX {
                        return None;
                    }
                    let cell = local(m) * width + key as usize;
                    self.count[cell] += 1;
                    self.key_of.push(cell as u32);
                }
                self.dense(groups, out);
                return Some(());
            }
            for &(p, _) in keepable {
                let key = *self.key_table.get(*masks.get(p as usize)? as usize)?;
                if key == u32::MAX {
                    return None;
                }
                self.key_of.push(key);
            }
        } else {
            for &(p, _) in keepable {
                let mask = *masks.get(p as usize)?;
                let key = if mask == 0 {
                    0
                } else {
                    search_masks(groups, mask, |g| g.0).ok()? as u32 + 1
                };
                self.key_of.push(key);
            }
            if dense {
                // Each claim's key becomes its cell.
                for (&(_, m), key) in keepable.iter().zip(self.key_of.iter_mut()) {
                    let cell = local(m) * width + *key as usize;
                    self.count[cell] += 1;
                    *key = cell as u32;
                }
                self.dense(groups, out);
                return Some(());
            }
        }
        // The claims bucketed by member, by a counting sort.
        self.lm_of.clear();
        self.lm_of.extend(keepable.iter().map(|&(_, m)| local(m)));
        self.start.clear();
        self.start.resize(n + 1, 0);
        for &lm in &self.lm_of {
            self.start[lm + 1] += 1;
        }
        for lm in 0..n {
            self.start[lm + 1] += self.start[lm];
        }
        self.fill.clear();
        self.fill.extend_from_slice(&self.start[..n]);
        self.order.clear();
        self.order.resize(keepable.len(), 0);
        for (i, &lm) in self.lm_of.iter().enumerate() {
            self.order[self.fill[lm]] = i;
            self.fill[lm] += 1;
        }
        // Per member, its distinct keys counted and ordered.
        self.stamp.clear();
        self.stamp.resize(k + 1, 0);
        self.count.clear();
        self.count.resize(k + 1, 0);
        self.at.clear();
        self.at.resize(k + 1, 0);
        let TopicEntries {
            claims,
            entry_group,
            entry_of,
        } = out;
        let base = claims.len();
        let owners = entry_of.len();
        entry_of.resize(owners + keepable.len(), 0);
        let entry_of = &mut entry_of[owners..];
        for lm in 0..n {
            let bucket = &self.order[self.start[lm]..self.start[lm + 1]];
            if bucket.is_empty() {
                continue;
            }
            let stamp = lm as u32 + 1;
            self.seen.clear();
            for &i in bucket {
                let key = self.key_of[i] as usize;
                if self.stamp[key] != stamp {
                    self.stamp[key] = stamp;
                    self.count[key] = 0;
                    self.seen.push(key as u32);
                }
                self.count[key] += 1;
            }
            // A member has few distinct masks: an insertion sort of them.
            sort_small(&mut self.seen);
            for &key in &self.seen {
                let key = key as usize;
                self.at[key] = (claims.len() - base) as u32;
                let (mask, group) = match key {
                    0 => (0, k),
                    _ => (groups[key - 1].0, key - 1),
                };
                claims.push((lm as u32, mask, self.count[key]));
                entry_group.push(group);
            }
            for &i in bucket {
                entry_of[i] = self.at[self.key_of[i] as usize];
            }
        }
        Some(())
    }
}

impl Entries {
    /// [`Entries::build`] through a table of every (member, key) cell, members ascending and
    /// keys ascending within a member, once every claim is counted into its cell (`count`)
    /// and has its cell (`key_of`): one pass over the cells makes the entries (the non-empty
    /// cells, in order) and one over the claims reads each one's entry. Used where the cells
    /// are few next to the claims. Appends to `out`.
    fn dense(&mut self, groups: &[(u64, u64)], out: &mut TopicEntries) {
        let width = groups.len() + 1;
        let Entries { key_of, count, .. } = self;
        let TopicEntries {
            claims,
            entry_group,
            entry_of,
        } = out;
        let base = claims.len();
        // A non-empty cell's count, once its entry is made, is overwritten with the entry's
        // index (no claim reads an empty cell): one table for both.
        for (lm, row) in count.chunks_exact_mut(width).enumerate() {
            let Some((free, rest)) = row.split_first_mut() else {
                continue;
            };
            if *free > 0 {
                claims.push((lm as u32, 0, *free));
                entry_group.push(width - 1);
                *free = (claims.len() - 1 - base) as u64;
            }
            for (g, (cell, &(mask, _))) in rest.iter_mut().zip(groups).enumerate() {
                if *cell > 0 {
                    claims.push((lm as u32, mask, *cell));
                    entry_group.push(g);
                    *cell = (claims.len() - 1 - base) as u64;
                }
            }
        }
        entry_of.extend(key_of.iter().map(|&cell| count[cell as usize] as u32));
    }
}

/// Sorts `keys` ascending by insertion: they are a member's distinct masks in one topic, a
/// few at most, where a library sort's setup costs more than the moves.
fn sort_small(keys: &mut [u32]) {
    for i in 1..keys.len() {
        let mut j = i;
        while j > 0 && keys[j - 1] > keys[j] {
            keys.swap(j - 1, j);
            j -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Entries, GENERAL_ONLY, TopicEntries};

    /// A topic's entries, entry groups and claims' entries.
    type Expected = (Vec<(u32, u64, u64)>, Vec<usize>, Vec<u32>);

    /// The entries as their definition says: the (member, mask) pairs sorted, counted, each
    /// claim pointing at its pair's entry.
    fn reference(keepable: &[(i32, u32)], masks: &[u64], groups: &[(u64, u64)]) -> Expected {
        let mut pairs: Vec<(u32, u64)> = keepable
            .iter()
            .map(|&(p, m)| (m, masks[p as usize]))
            .collect();
        pairs.sort_unstable();
        let mut claims: Vec<(u32, u64, u64)> = Vec::new();
        for (m, mask) in pairs {
            match claims.last_mut() {
                Some(last) if (last.0, last.1) == (m, mask) => last.2 += 1,
                _ => claims.push((m, mask, 1)),
            }
        }
        let group = |mask: u64| {
            groups
                .iter()
                .position(|g| g.0 == mask)
                .unwrap_or(groups.len())
        };
        let entry_group = claims.iter().map(|c| group(c.1)).collect();
        let entry_of = keepable
            .iter()
            .map(|&(p, m)| {
                let key = (m, masks[p as usize]);
                claims.iter().position(|c| (c.0, c.1) == key).unwrap_or(0) as u32
            })
            .collect();
        (claims, entry_group, entry_of)
    }

    /// A small deterministic generator (xorshift).
    fn next(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// Both constructions (the dense table and the general one) give the reference's entries
    /// on random topics: few and many racks (the key table and the search), few and many
    /// members (dense and not), masks 0 among them.
    #[test]
    fn constructions_match_the_reference() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for case in 0..400 {
            let racks = [2usize, 3, 5, 8, 9, 12][case % 6];
            let n = 1 + (next(&mut state) % 40) as usize;
            let partitions = (next(&mut state) % 120) as usize;
            let kinds = 1 + next(&mut state) % 6;
            let palette: Vec<u64> = (0..kinds)
                .map(|i| {
                    if i == 0 && case % 3 == 0 {
                        0
                    } else {
                        1 + next(&mut state) % ((1u64 << racks) - 1)
                    }
                })
                .collect();
            let masks: Vec<u64> = (0..partitions)
                .map(|_| palette[(next(&mut state) % kinds) as usize])
                .collect();
            let mut groups: Vec<(u64, u64)> = Vec::new();
            for &mask in masks.iter().filter(|&&m| m != 0) {
                match groups.binary_search_by_key(&mask, |g| g.0) {
                    Ok(g) => groups[g].1 += 1,
                    Err(g) => groups.insert(g, (mask, 1)),
                }
            }
            let mut keepable: Vec<(i32, u32)> = Vec::new();
            for p in 0..partitions {
                if !next(&mut state).is_multiple_of(4) {
                    keepable.push((p as i32, (next(&mut state) % n as u64) as u32));
                }
            }
            let want = reference(&keepable, &masks, &groups);
            for general in [false, true] {
                GENERAL_ONLY.with(|c| c.set(general));
                let got = fresh(
                    &mut Entries::default(),
                    &keepable,
                    &masks,
                    &groups,
                    n,
                    racks,
                );
                GENERAL_ONLY.with(|c| c.set(false));
                let Some(TopicEntries {
                    claims,
                    entry_group,
                    entry_of,
                }) = got
                else {
                    panic!("case {case}: no entries");
                };
                assert_eq!(
                    (claims, entry_group, entry_of),
                    want,
                    "case {case}, {general}"
                );
            }
        }
    }

    /// Scratch reused across topics of different shapes gives what fresh scratch gives.
    #[test]
    fn reused_scratch_matches_fresh() {
        let mut scratch = Entries::default();
        let masks = [1u64, 2, 3, 0, 1, 2, 3, 0];
        let groups = [(1u64, 2u64), (2, 2), (3, 2)];
        for n in [2usize, 5, 1, 3] {
            let keepable: Vec<(i32, u32)> =
                (0..8).map(|p| (p, (p as u32 * 7) % n as u32)).collect();
            let new = fresh(&mut Entries::default(), &keepable, &masks, &groups, n, 2);
            let reused = fresh(&mut scratch, &keepable, &masks, &groups, n, 2);
            let key = |e: Option<TopicEntries>| e.map(|e| (e.claims, e.entry_group, e.entry_of));
            assert_eq!(key(new), key(reused));
        }
    }

    /// A topic appended after another's gives the entries it gives alone, `entry_of` counted
    /// from its own first entry.
    #[test]
    fn appended_topics_match_alone() {
        let masks = [1u64, 2, 3, 0, 1, 2, 3, 0];
        let groups = [(1u64, 2u64), (2, 2), (3, 2)];
        for general in [false, true] {
            GENERAL_ONLY.with(|c| c.set(general));
            let mut scratch = Entries::default();
            let mut out = TopicEntries::default();
            let mut alone = Vec::new();
            for n in [2usize, 5, 3] {
                let keepable: Vec<(i32, u32)> =
                    (0..8).map(|p| (p, (p as u32 * 5) % n as u32)).collect();
                let one = fresh(&mut Entries::default(), &keepable, &masks, &groups, n, 2);
                alone.push(one.map(|e| (e.claims, e.entry_group, e.entry_of)));
                let local = |m: u32| m as usize;
                let built = scratch.build(&keepable, &masks, &groups, n, 2, local, &mut out);
                assert!(built.is_some());
            }
            GENERAL_ONLY.with(|c| c.set(false));
            let mut joined = (Vec::new(), Vec::new(), Vec::new());
            for e in alone.into_iter().flatten() {
                joined.0.extend(e.0);
                joined.1.extend(e.1);
                joined.2.extend(e.2);
            }
            assert_eq!(joined, (out.claims, out.entry_group, out.entry_of));
        }
    }

    /// [`Entries::build`] of one topic into entries of its own.
    fn fresh(
        scratch: &mut Entries,
        keepable: &[(i32, u32)],
        masks: &[u64],
        groups: &[(u64, u64)],
        n: usize,
        racks: usize,
    ) -> Option<TopicEntries> {
        let mut out = TopicEntries::default();
        scratch.build(keepable, masks, groups, n, racks, |m| m as usize, &mut out)?;
        Some(out)
    }
}
