//! Grouping a topic's keepable claims by owner and mask, for the network of [`super`].

/// Buffers [`owners_and_claims`] keeps from topic to topic; their contents never outlive a
/// topic.
#[derive(Default)]
pub(super) struct Scratch {
    pairs: Vec<(u32, u64)>,
    first: Vec<usize>,
    fill: Vec<usize>,
    by_owner: Vec<u64>,
    /// The topic's owners and entries, appended to the caller's once complete (so that
    /// nothing is appended on `None`).
    owners: Vec<u32>,
    entries: Vec<(u32, u64, u64)>,
}

/// Per keepable claim of a topic (`keepable`, of the topic's subscribers `subs` and partition
/// masks `masks`): its owner's subscriber index, appended to `all_owners`; and the
/// (subscriber index, mask, claims) entries, ascending, appended to `all_claims` (what either
/// held before is left as it was; nothing is appended on `None`). `None` if a claim's owner does not subscribe. With at
/// least a quarter as many claims as subscribers, the owners are looked up in `position`
/// (filled here) and grouped by a counting sort; with fewer, a binary search and a sort of
/// the claims cost less. (On the benchmark's joins and leaves, a claim for most subscribers,
/// the search and sort cost about 30% more than the counting sort.) Both give the same
/// entries. `scratch` only lends its buffers: what it held before does not matter.
pub(super) fn owners_and_claims(
    subs: &[u32],
    masks: &[u64],
    keepable: &[(i32, u32)],
    position: &mut [u32],
    all_owners: &mut Vec<u32>,
    all_claims: &mut Vec<(u32, u64, u64)>,
    scratch: &mut Scratch,
) -> Option<()> {
    scratch.group(subs, masks, keepable, position)?;
    all_owners.extend_from_slice(&scratch.owners);
    all_claims.extend_from_slice(&scratch.entries);
    Some(())
}

impl Scratch {
    /// [`owners_and_claims`] into `owners` and `entries` (emptied first).
    #[inline(always)]
    fn group(
        &mut self,
        subs: &[u32],
        masks: &[u64],
        keepable: &[(i32, u32)],
        position: &mut [u32],
    ) -> Option<()> {
        let Scratch {
            pairs,
            first,
            fill,
            by_owner,
            owners: claim_owner,
            entries: claims,
        } = self;
        claim_owner.clear();
        claims.clear();
        claim_owner.reserve(keepable.len());
        claims.reserve(keepable.len());
        let mut push = |i: u32, mask: u64| match claims.last_mut() {
            Some(last) if last.0 == i && last.1 == mask => last.2 += 1,
            _ => claims.push((i, mask, 1)),
        };
        if 4 * keepable.len() < subs.len() {
            pairs.clear();
            for &(p, m) in keepable {
                let i = subs.binary_search(&m).ok()? as u32;
                pairs.push((i, masks[p as usize]));
                claim_owner.push(i);
            }
            pairs.sort_unstable();
            for &(i, mask) in pairs.iter() {
                push(i, mask);
            }
            return Some(());
        }
        for (i, &m) in subs.iter().enumerate() {
            *position.get_mut(m as usize)? = i as u32;
        }
        // As slices: the loops below index them more cheaply than the vectors behind
        // references.
        first.clear();
        first.resize(subs.len() + 1, 0);
        let first = &mut first[..];
        claim_owner.resize(keepable.len(), 0);
        for (&(_, m), owner) in keepable.iter().zip(claim_owner.iter_mut()) {
            let i = position.get(m as usize).copied()?;
            if subs.get(i as usize) != Some(&m) {
                return None;
            }
            *owner = i;
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
        for (&(p, _), &i) in keepable.iter().zip(claim_owner.iter()) {
            by_owner[fill[i as usize]] = masks[p as usize];
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
