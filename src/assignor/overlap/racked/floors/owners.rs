//! Grouping a topic's keepable claims by owner and mask, for the network of [`super`].

use super::topic::Grouping;

#[cfg(test)]
thread_local! {
    /// Tests only: [`owners_claims_and_groups`] always sorts (never counts in its table), so
    /// that tests compare the two ways.
    pub(crate) static SORT_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Buffers [`owners_and_claims`] keeps from topic to topic; their contents never outlive a
/// topic.
#[derive(Default)]
pub(super) struct Scratch {
    pairs: Vec<(u32, u64)>,
    first: Vec<usize>,
    fill: Vec<usize>,
    by_owner: Vec<u64>,
    /// The topic's entries, appended to the caller's once complete (so that nothing is
    /// appended on `None`).
    entries: Vec<(u32, u64, u64)>,
    /// [`owners_claims_and_groups`]'s tables: per subscriber and mask column its claims, and
    /// per subscriber the columns it has claims in (bits); all zero between calls.
    count: Vec<u64>,
    used: Vec<u64>,
    /// After [`owners_claims_and_groups`]: per subscriber index, its keepable claims.
    totals: Vec<u64>,
    /// [`owners_claims_and_groups`]'s mask and group per column of its table.
    columns: Vec<(u64, usize)>,
    /// Per mask below `1 << racks` (where [`Grouping`] uses its table): its column, 0 for
    /// mask 0, `u8::MAX` for a mask no partition has; so between calls (0 at 0, the rest
    /// `u8::MAX`), each call resetting the masks it set.
    column_of: Vec<u8>,
}

impl Scratch {
    /// Per subscriber index of the topic [`owners_claims_and_groups`] last grouped (and
    /// returned `Some` on): its keepable claims, the sum of its entries'.
    pub(super) fn totals(&self) -> &[u64] {
        &self.totals
    }
}

/// The (subscriber index, mask, claims) entries, ascending, of a topic's keepable claims
/// (`keepable`, of the topic's subscribers `subs` and partition masks `masks`, each claim's
/// owner at its index `claim_at` among `subs`), appended to `all_claims` (what it held before
/// is left as it was; nothing is appended on `None`). `None` if an owner index or a partition
/// is out of range. With at least a quarter as many claims as subscribers, the claims are
/// grouped by a counting sort over the owners; with fewer, a sort of the claims costs less.
/// Both give the same entries. `scratch` only lends its buffers: what it held before does not
/// matter.
pub(super) fn owners_and_claims(
    subs: &[u32],
    masks: &[u64],
    keepable: &[(i32, u32)],
    claim_at: &[u32],
    all_claims: &mut Vec<(u32, u64, u64)>,
    scratch: &mut Scratch,
) -> Option<()> {
    scratch.group(subs, masks, keepable, claim_at)?;
    all_claims.extend_from_slice(&scratch.entries);
    Some(())
}

/// The entries of [`owners_and_claims`] for a topic whose partitions' masks are grouped
/// (`groups`, as [`Grouping::count`] made them, `grouping` indexing them), each entry's group
/// (the free node as group `groups.len()`) appended to `all_entry_group`, and per keepable
/// claim, in the order of `keepable`, the index of its entry among the topic's (its owner's
/// entry of its mask) appended to `all_claim_entry`. Where the table of subscribers by mask
/// column is small next to the claims and subscribers, the entries are counted in it and read
/// out row by row, each row by its bits of the columns in use (a subscriber's columns are its
/// masks in ascending order, mask 0 first): no sort of each owner's masks, no run merging, and
/// a claim's entry is its cell's. Otherwise [`owners_and_claims`] groups them and each claim's
/// entry is looked up among its owner's. The entries and groups are the same either way.
/// `None` as there, or if a claim's mask has no group (never: the groups are the masks'),
/// leaving the vectors' contents as they were only where the table is used.
#[allow(clippy::too_many_arguments)]
// Never inlined, for the reason [`super::preset::propose`] is not.
#[inline(never)]
pub(super) fn owners_claims_and_groups(
    subs: &[u32],
    masks: &[u64],
    keepable: &[(i32, u32)],
    claim_at: &[u32],
    groups: &[(u64, u64)],
    grouping: &Grouping,
    all_claim_entry: &mut Vec<u32>,
    all_claims: &mut Vec<(u32, u64, u64)>,
    all_entry_group: &mut Vec<usize>,
    scratch: &mut Scratch,
) -> Option<()> {
    let columns = groups.len() + 1;
    #[cfg(test)]
    let table = !SORT_ONLY.with(std::cell::Cell::get);
    #[cfg(not(test))]
    let table = true;
    let cells = subs.len().checked_mul(columns)?;
    // A subscriber's columns as the bits of one word, hence at most 64 of them.
    if !table
        || columns > 64
        || 4 * keepable.len() < subs.len()
        || cells > 8 * (keepable.len() + subs.len())
    {
        let c0 = all_claims.len();
        owners_and_claims(subs, masks, keepable, claim_at, all_claims, scratch)?;
        let claims = &all_claims[c0..];
        for &(_, mask, _) in claims {
            all_entry_group.push(if mask == 0 {
                groups.len()
            } else {
                grouping.find(groups, mask)?
            });
        }
        // Per subscriber index: where its entries start (sorted by subscriber, then mask).
        let first = &mut scratch.first;
        first.clear();
        first.resize(subs.len() + 1, 0);
        let totals = &mut scratch.totals;
        totals.clear();
        totals.resize(subs.len(), 0);
        for c in claims {
            first[c.0 as usize + 1] += 1;
            totals[c.0 as usize] += c.2;
        }
        for i in 0..subs.len() {
            first[i + 1] += first[i];
        }
        for (&(p, _), &i) in keepable.iter().zip(claim_at) {
            let i = i as usize;
            let mask = masks[p as usize];
            let e = (first[i]..first[i + 1]).find(|&e| claims[e].1 == mask)?;
            all_claim_entry.push(e as u32);
        }
        return Some(());
    }
    let Scratch {
        count,
        used,
        fill: cell,
        totals,
        columns: column,
        column_of,
        ..
    } = scratch;
    if claim_at.len() != keepable.len() {
        return None;
    }
    // Both tables are all zero between calls (each cell in use is cleared once the claims
    // have read its entry, and a failed call clears them whole), so that a topic pays for its
    // claims and subscribers, not for a fill of every cell.
    if count.len() < cells {
        count.resize(cells, 0);
    }
    if used.len() < subs.len() {
        used.resize(subs.len(), 0);
    }
    // As slices: the loops below keep their pointers in registers.
    let (count, used) = (&mut count[..cells], &mut used[..subs.len()]);
    cell.clear();
    cell.resize(keepable.len(), 0);
    let mut tables = Tables {
        columns,
        count,
        used,
        cell,
    };
    // Each claim's column found once per claim: by `column_of` where the masks are few (set
    // here for the topic's masks, reset below), else by a search of the groups.
    let counted = match grouping.table() {
        Some(at) => {
            if column_of.len() < at.len() {
                column_of.resize(at.len(), u8::MAX);
            }
            column_of[0] = 0;
            for (g, &(mask, _)) in groups.iter().enumerate() {
                if let Some(c) = column_of.get_mut(mask as usize) {
                    *c = (g + 1) as u8;
                }
            }
            let table = &column_of[..];
            let counted = tables.count(keepable, claim_at, masks, |mask| {
                table.get(mask as usize).map(|&c| usize::from(c))
            });
            for &(mask, _) in groups {
                if let Some(c) = column_of.get_mut(mask as usize) {
                    *c = u8::MAX;
                }
            }
            counted
        }
        None => tables.count(keepable, claim_at, masks, |mask| {
            if mask == 0 {
                return Some(0);
            }
            grouping.find_in(None, groups, mask).map(|g| g + 1)
        }),
    };
    let Tables {
        count, used, cell, ..
    } = tables;
    let Some(entries) = counted else {
        count.fill(0);
        used.fill(0);
        return None;
    };
    // Per column: its mask and its group (the free node as group `groups.len()`).
    column.clear();
    column.push((0, groups.len()));
    column.extend(groups.iter().enumerate().map(|(g, &(mask, _))| (mask, g)));
    let column = &column[..];
    // The entries, one per cell in use, written in place: pushing them one by one reloaded
    // the vectors' lengths and capacities at every entry.
    let (c0, g0) = (all_claims.len(), all_entry_group.len());
    all_claims.resize(c0 + entries, (0, 0, 0));
    all_entry_group.resize(g0 + entries, 0);
    totals.clear();
    totals.resize(subs.len(), 0);
    let out = &mut all_claims[c0..];
    read_rows(used, count, columns, out, totals);
    all_claim_entry.extend(cell.iter().map(|&at| count[at] as u32));
    // Each entry's mask and group, from the small table of columns (out of the loop over the
    // rows, whose values then fit in the registers), and its cell cleared: one per entry,
    // fewer than the claims.
    for (claim, group) in out.iter_mut().zip(&mut all_entry_group[g0..]) {
        let c = claim.1 as usize;
        if let Some(&(mask, g)) = column.get(c) {
            claim.1 = mask;
            *group = g;
        }
        if let Some(at) = count.get_mut(claim.0 as usize * columns + c) {
            *at = 0;
        }
    }
    Some(())
}

/// Reads the entries out of the table (`count`, `columns` per row, rows `used` by their bits,
/// emptied here) row by row into `out` (as (subscriber index, column, claims); one place per
/// cell in use), each row's claims into `totals`; each cell used then holds its entry's index.
#[inline(never)]
fn read_rows(
    used: &mut [u64],
    count: &mut [u64],
    columns: usize,
    out: &mut [(u32, u64, u64)],
    totals: &mut [u64],
) {
    let mut e = 0usize;
    for (i, (used, total)) in used.iter_mut().zip(totals.iter_mut()).enumerate() {
        let mut bits = std::mem::take(used);
        let (base, mut sum) = (i * columns, 0);
        while bits != 0 {
            let c = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let at = &mut count[base + c];
            if let Some(claim) = out.get_mut(e) {
                *claim = (i as u32, c as u64, *at);
            }
            sum += *at;
            *at = e as u64;
            e += 1;
        }
        *total = sum;
    }
}

/// The tables of [`owners_claims_and_groups`] for one topic, as slices: per subscriber and
/// column its claims (`count`, `columns` per row), per subscriber its columns in use as bits
/// (`used`), per claim its cell (`cell`).
struct Tables<'s> {
    columns: usize,
    count: &'s mut [u64],
    used: &'s mut [u64],
    cell: &'s mut [usize],
}

impl Tables<'_> {
    /// Counts every claim (`keepable`, its owner at `claim_at`, `masks` per partition) in its
    /// owner's row, at its mask's column (`column`: 0 for mask 0, else 1 + its group; one
    /// not below `columns` for a mask without a group), and returns the cells in use; `None`
    /// (the tables then partly written) if an owner index or a partition is out of range or a
    /// mask has no group. The cells in use are counted as their first claim comes (the table
    /// is all zero before): a pass over the subscribers' bits after cost a software popcount
    /// per subscriber. Never inlined: its values then fit in the registers.
    #[inline(never)]
    fn count(
        &mut self,
        keepable: &[(i32, u32)],
        claim_at: &[u32],
        masks: &[u64],
        column: impl Fn(u64) -> Option<usize>,
    ) -> Option<usize> {
        let Tables {
            columns,
            count,
            used,
            cell,
        } = self;
        let columns = *columns;
        let mut entries = 0usize;
        for ((&(p, _), &i), cell) in keepable.iter().zip(claim_at).zip(cell.iter_mut()) {
            let c = column(*masks.get(p as usize)?)?;
            if c >= columns {
                return None;
            }
            let i = i as usize;
            *used.get_mut(i)? |= 1 << c;
            let at = i * columns + c;
            let slot = count.get_mut(at)?;
            entries += usize::from(*slot == 0);
            *slot += 1;
            *cell = at;
        }
        Some(entries)
    }
}

impl Scratch {
    /// [`owners_and_claims`] into `entries` (emptied first).
    #[inline(always)]
    fn group(
        &mut self,
        subs: &[u32],
        masks: &[u64],
        keepable: &[(i32, u32)],
        claim_at: &[u32],
    ) -> Option<()> {
        let Scratch {
            pairs,
            first,
            fill,
            by_owner,
            entries: claims,
            ..
        } = self;
        if claim_at.len() != keepable.len() || claim_at.iter().any(|&i| i as usize >= subs.len()) {
            return None;
        }
        claims.clear();
        claims.reserve(keepable.len());
        let mut push = |i: u32, mask: u64| match claims.last_mut() {
            Some(last) if last.0 == i && last.1 == mask => last.2 += 1,
            _ => claims.push((i, mask, 1)),
        };
        if 4 * keepable.len() < subs.len() {
            pairs.clear();
            for (&(p, _), &i) in keepable.iter().zip(claim_at) {
                pairs.push((i, *masks.get(p as usize)?));
            }
            pairs.sort_unstable();
            for &(i, mask) in pairs.iter() {
                push(i, mask);
            }
            return Some(());
        }
        // As slices: the loops below index them more cheaply than the vectors behind
        // references.
        first.clear();
        first.resize(subs.len() + 1, 0);
        let first = &mut first[..];
        for &i in claim_at {
            first[i as usize + 1] += 1;
        }
        for i in 0..subs.len() {
            first[i + 1] += first[i];
        }
        by_owner.clear();
        by_owner.resize(keepable.len(), 0);
        let by_owner = &mut by_owner[..];
        fill.clear();
        fill.extend_from_slice(first);
        let fill = &mut fill[..];
        for (&(p, _), &i) in keepable.iter().zip(claim_at) {
            by_owner[fill[i as usize]] = *masks.get(p as usize)?;
            fill[i as usize] += 1;
        }
        for i in 0..subs.len() {
            let own = &mut by_owner[first[i]..first[i + 1]];
            if own.len() > 1 {
                own.sort_unstable();
            }
            for &mask in own.iter() {
                push(i as u32, mask);
            }
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::topic::Grouping;
    use super::{SORT_ONLY, Scratch, owners_claims_and_groups};
    use crate::assignor::tests::Rng;

    type Grouped = (Option<()>, Vec<u32>, Vec<(u32, u64, u64)>, Vec<usize>);

    /// One call, on buffers that already hold something (appended to, never read).
    fn grouped(
        subs: &[u32],
        masks: &[u64],
        keepable: &[(i32, u32)],
        racks: usize,
        scratch: &mut Scratch,
        sort_only: bool,
    ) -> Grouped {
        let mut groups = vec![(99, 99)];
        let mut grouping = Grouping::default();
        grouping.count(masks, racks, &mut groups);
        // A stray owner's index is out of range, as no caller passes it.
        let claim_at: Vec<u32> = keepable
            .iter()
            .map(|&(_, m)| subs.binary_search(&m).map_or(u32::MAX, |i| i as u32))
            .collect();
        let (mut entry, mut claims, mut entry_group) = (vec![7], vec![(7, 7, 7)], vec![7]);
        SORT_ONLY.with(|c| c.set(sort_only));
        let result = owners_claims_and_groups(
            subs,
            masks,
            keepable,
            &claim_at,
            &groups[1..],
            &grouping,
            &mut entry,
            &mut claims,
            &mut entry_group,
            scratch,
        );
        SORT_ONLY.with(|c| c.set(false));
        if result.is_some() {
            // Each claim's entry is its owner's of its mask, in this topic's entries.
            for (&(p, m), &e) in keepable.iter().zip(&entry[1..]) {
                let (i, mask, _) = claims[1 + e as usize];
                assert_eq!((subs[i as usize], mask), (m, masks[p as usize]));
            }
        }
        (result, entry, claims, entry_group)
    }

    /// The table of subscribers by mask column gives the sort's entries, claims' entries and groups,
    /// on random topics (some with a claim of a non-subscriber, some with many racks), its
    /// tables reused from call to call as the flow reuses them.
    #[test]
    fn counting_by_column_matches_sorting() {
        let mut rng = Rng(0x0e45);
        let (mut table, mut sorted) = (Scratch::default(), Scratch::default());
        let mut counted = 0;
        for _ in 0..3000 {
            let racks = [2, 3, 3, 7][rng.below(4) as usize];
            let subs: Vec<u32> = (0..32).filter(|_| rng.below(3) == 0).collect();
            if subs.is_empty() {
                continue;
            }
            let partitions = 1 + rng.below(60) as usize;
            let masks: Vec<u64> = (0..partitions).map(|_| rng.below(1 << racks)).collect();
            let stray = rng.below(8) == 0;
            let mut keepable: Vec<(i32, u32)> = Vec::new();
            for p in 0..partitions as i32 {
                if rng.below(4) == 0 {
                    continue;
                }
                let m = if stray && rng.below(10) == 0 {
                    32 + rng.below(4) as u32
                } else {
                    subs[rng.below(subs.len() as u64) as usize]
                };
                keepable.push((p, m));
            }
            let a = grouped(&subs, &masks, &keepable, racks, &mut table, false);
            let b = grouped(&subs, &masks, &keepable, racks, &mut sorted, true);
            if a.0.is_some() {
                assert_eq!(a, b, "{subs:?} {masks:?} {keepable:?}");
            } else {
                assert!(b.0.is_none());
            }
            counted += usize::from(a.0.is_some() && 4 * keepable.len() >= subs.len());
        }
        assert!(counted > 1000, "{counted}");
    }
}
