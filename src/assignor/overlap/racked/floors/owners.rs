//! Grouping a topic's keepable claims by owner and mask, for the network of [`super`].

/// Per keepable claim of a topic (`keepable`, of the topic's subscribers `subs` and partition
/// masks `masks`): its owner's subscriber index; and the (subscriber index, mask, claims)
/// entries, ascending. `None` if a claim's owner does not subscribe. With at least a quarter
/// as many claims as subscribers, the owners are looked up in `position` (filled here) and
/// grouped by a counting sort; with fewer, a binary search and a sort of the claims cost less.
/// (On the benchmark's joins and leaves, a claim for most subscribers, the search and sort
/// cost about 30% more than the counting sort.) Both give the same entries.
#[allow(clippy::type_complexity)]
pub(super) fn owners_and_claims(
    subs: &[u32],
    masks: &[u64],
    keepable: &[(i32, u32)],
    position: &mut [u32],
) -> Option<(Vec<u32>, Vec<(u32, u64, u64)>)> {
    let mut claim_owner: Vec<u32> = Vec::with_capacity(keepable.len());
    let mut claims: Vec<(u32, u64, u64)> = Vec::with_capacity(keepable.len());
    let mut push = |i: u32, mask: u64| match claims.last_mut() {
        Some(last) if last.0 == i && last.1 == mask => last.2 += 1,
        _ => claims.push((i, mask, 1)),
    };
    if 4 * keepable.len() < subs.len() {
        let mut pairs: Vec<(u32, u64)> = Vec::with_capacity(keepable.len());
        for &(p, m) in keepable {
            let i = subs.binary_search(&m).ok()? as u32;
            pairs.push((i, masks[p as usize]));
            claim_owner.push(i);
        }
        pairs.sort_unstable();
        for (i, mask) in pairs {
            push(i, mask);
        }
        return Some((claim_owner, claims));
    }
    for (i, &m) in subs.iter().enumerate() {
        *position.get_mut(m as usize)? = i as u32;
    }
    let mut first = vec![0usize; subs.len() + 1];
    for &(_, m) in keepable {
        let i = position.get(m as usize).copied()?;
        if subs.get(i as usize) != Some(&m) {
            return None;
        }
        claim_owner.push(i);
        first[i as usize + 1] += 1;
    }
    for i in 0..subs.len() {
        first[i + 1] += first[i];
    }
    let mut by_owner = vec![0u64; keepable.len()];
    let mut fill = first.clone();
    for (&(p, _), &i) in keepable.iter().zip(&claim_owner) {
        by_owner[fill[i as usize]] = masks[p as usize];
        fill[i as usize] += 1;
    }
    for i in 0..subs.len() {
        let own = &mut by_owner[first[i]..first[i + 1]];
        own.sort_unstable();
        for &mask in own.iter() {
            push(i as u32, mask);
        }
    }
    Some((claim_owner, claims))
}
