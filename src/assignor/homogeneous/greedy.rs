//! The greedy choice of extras of [`super`]: fast, and used only when it meets the upper
//! bound of the parent module's docs.

use super::{Repair, TopicExtras};

/// The outcome of one run of [`greedy_extras`].
pub(super) enum Greedy {
    /// A valid choice meeting the upper bound (every repair accepted).
    Met,
    /// The bound was missed or the choice was invalid.
    Missed,
    /// The repair refused the topic at this position.
    Refused(usize),
}

/// A greedy choice of extras that is used only when it provably uses the most gaining cells:
/// it returns [`Greedy::Met`] only when its result is a valid y (column sums r_t, row sums q
/// or q + 1) meeting the upper bound of the module docs, and otherwise leaves every `chosen`
/// empty.
///
/// Topics in order give their r_t extras to the members that rank highest. A member may take
/// an extra while it has fewer than q, or exactly q while fewer than s members went above q.
/// Its *need* is how many it still lacks to reach q; it is *short* when its gaining topics
/// after this one are fewer than its need (skipping a gaining cell now would lose it, or it
/// needs non-gaining extras anyway). Tiers: *critical* (need ≥ topics left, so it must take
/// every remaining topic), gaining and short, not gaining and short, gaining and not short,
/// the rest; within a tier, larger need minus gaining topics left, larger need, lower id.
pub(super) fn greedy_extras(
    topics: &mut [TopicExtras],
    n: usize,
    q: u32,
    s: u32,
    repair: &mut Option<&mut dyn Repair>,
) -> Greedy {
    let mut gain_left = vec![0u32; n];
    let mut bound_topics = 0u64;
    for x in topics.iter() {
        bound_topics += u64::from(x.extra.min(x.gaining.len() as u32));
        for &lm in &x.gaining {
            gain_left[lm as usize] += 1;
        }
    }
    let above = gain_left.iter().filter(|&&c| c > q).count() as u64;
    let bound_members: u64 =
        gain_left.iter().map(|&c| u64::from(c.min(q))).sum::<u64>() + above.min(u64::from(s));
    let bound = bound_topics.min(bound_members);

    let mut received = vec![0u32; n];
    let mut plus_left = s;
    let mut gaining_flag = vec![false; n];
    let mut keys: Vec<u64> = Vec::with_capacity(n);
    let mut used = 0u64;
    let mut ok = true;
    let mut refused = None;
    let k = topics.len() as u64;
    for i in 0..topics.len() {
        let (earlier, rest) = topics.split_at_mut(i);
        let x = &mut rest[0];
        let topics_left = k - i as u64;
        for &lm in &x.gaining {
            gaining_flag[lm as usize] = true;
            gain_left[lm as usize] -= 1;
        }
        // One u64 per member, larger is better: the tier (bits 60..63), need minus gaining
        // topics left offset by 2^13 (bits 46..60), the need (bits 32..46), then the inverted
        // id (bits 0..32). Clamping only affects the order of this heuristic, never the
        // check. Members that may not take an extra get 0.
        keys.clear();
        for lm in 0..n {
            let got = received[lm];
            let key = if got > q || (got == q && plus_left == 0) {
                0
            } else {
                let nd = u64::from(q - got);
                let gaining = gaining_flag[lm];
                let short = nd > u64::from(gain_left[lm]);
                let tier: u64 = match (nd >= topics_left, gaining, short) {
                    (true, _, _) => 4,
                    (false, true, true) => 3,
                    (false, false, true) => 2,
                    (false, true, false) => 1,
                    (false, false, false) => 0,
                };
                let surplus = (nd + (1 << 13))
                    .saturating_sub(u64::from(gain_left[lm]))
                    .min((1 << 14) - 1);
                (tier << 60)
                    | (surplus << 46)
                    | (nd.min((1 << 14) - 1) << 32)
                    | u64::from(u32::MAX - lm as u32)
            };
            keys.push(key);
        }
        let r = x.extra as usize;
        let top = |keys: &mut Vec<u64>| select_top(keys, r);
        top(&mut keys);
        // Members already at q going above it: at most `plus_left` of them, the best ranked.
        let mut optional: Vec<u64> = keys[..r]
            .iter()
            .copied()
            .filter(|&key| key != 0 && received[(u32::MAX - key as u32) as usize] == q)
            .collect();
        if optional.len() > plus_left as usize {
            optional.sort_unstable_by(|a, b| b.cmp(a));
            for key in keys.iter_mut() {
                if optional[plus_left as usize..]
                    .binary_search_by(|o| (*key).cmp(o))
                    .is_ok()
                {
                    *key = 0;
                }
            }
            top(&mut keys);
        }
        let mut chosen: Vec<u32> = Vec::with_capacity(r);
        // The second selection above may pull in further members at q: more of them than
        // `plus_left` would break the load bound, so the greedy gives up (the flow decides).
        let mut above_q = 0u32;
        for &key in &keys[..r] {
            let lm = u32::MAX - key as u32;
            if key != 0 && received[lm as usize] == q {
                above_q += 1;
            }
            if key == 0 || above_q > plus_left {
                ok = false;
                break;
            }
            chosen.push(lm);
        }
        for &lm in &x.gaining {
            gaining_flag[lm as usize] = false;
        }
        if !ok {
            break;
        }
        if let Some(repair) = repair.as_mut() {
            if !repair.repair(
                x.topic,
                &mut chosen,
                earlier,
                &keys,
                &mut received,
                q,
                plus_left,
            ) {
                refused = Some(i);
                ok = false;
                break;
            }
            // An exchange across topics may have moved earlier extras.
            plus_left = s.saturating_sub(received.iter().filter(|&&g| g > q).count() as u32);
            chosen.sort_unstable();
            chosen.dedup();
            let above = chosen
                .iter()
                .filter(|&&lm| received.get(lm as usize) == Some(&q))
                .count();
            if chosen.len() != r
                || above > plus_left as usize
                || chosen
                    .iter()
                    .any(|&lm| received.get(lm as usize).is_none_or(|&g| g > q))
            {
                ok = false;
                break;
            }
        }
        chosen.sort_unstable();
        for &lm in &chosen {
            if received[lm as usize] == q {
                plus_left -= 1;
            }
            received[lm as usize] += 1;
        }
        x.chosen = chosen;
    }
    if ok {
        // Count the gaining cells used.
        for x in topics.iter() {
            for &lm in &x.gaining {
                gaining_flag[lm as usize] = true;
            }
            used += x
                .chosen
                .iter()
                .filter(|&&lm| gaining_flag[lm as usize])
                .count() as u64;
            for &lm in &x.gaining {
                gaining_flag[lm as usize] = false;
            }
        }
    }
    if ok && used == bound && received.iter().all(|&got| got == q || got == q + 1) {
        return Greedy::Met;
    }
    for x in topics.iter_mut() {
        x.chosen.clear();
    }
    match refused {
        Some(i) => Greedy::Refused(i),
        None => Greedy::Missed,
    }
}

/// At most this many extras are selected by one scan for the r-th largest key; more by
/// `select_nth_unstable`.
const SCAN_TOP: usize = 32;

/// Moves the `r` largest of `keys` to its front, in no particular order (the keys are
/// distinct except for zeros, so the set moved is the same whichever way it is found).
fn select_top(keys: &mut [u64], r: usize) {
    if r == 0 || r >= keys.len() {
        return;
    }
    if r > SCAN_TOP {
        keys.select_nth_unstable_by(r - 1, |a, b| b.cmp(a));
        return;
    }
    // The r largest so far, descending; few topics have many extras per member.
    let mut best = [0u64; SCAN_TOP];
    let mut len = 0;
    for &key in keys.iter() {
        if len == r && key <= best[r - 1] {
            continue;
        }
        let at = best[..len].partition_point(|&b| b > key);
        let end = len.min(r - 1);
        best.copy_within(at..end, at + 1);
        best[at] = key;
        len = (len + 1).min(r);
    }
    let threshold = best[r - 1];
    // Those above the r-th largest first, then keys equal to it up to r in all.
    let mut front = 0;
    for i in 0..keys.len() {
        if keys[i] > threshold {
            keys.swap(front, i);
            front += 1;
        }
    }
    let above = front;
    for i in above..keys.len() {
        if front == r {
            break;
        }
        if keys[i] == threshold {
            keys.swap(front, i);
            front += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::select_top;

    /// The front holds the r largest keys, as a full sort says, for r on both sides of the
    /// scan's limit and with repeated zeros (members that may not take an extra).
    #[test]
    fn selects_the_largest() {
        let mut seed = 11u64;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % n
        };
        for round in 0..400 {
            let n = 1 + next(120) as usize;
            let mut keys: Vec<u64> = (0..n as u64)
                .map(|i| {
                    if next(4) == 0 {
                        0
                    } else {
                        (next(1000) << 32) | i
                    }
                })
                .collect();
            let r = next(n as u64 + 1) as usize;
            let mut sorted = keys.clone();
            sorted.sort_unstable_by(|a, b| b.cmp(a));
            select_top(&mut keys, r);
            let mut front = keys[..r.min(n)].to_vec();
            front.sort_unstable_by(|a, b| b.cmp(a));
            assert_eq!(front, sorted[..r.min(n)], "round {round}: n {n}, r {r}");
            let mut all = keys.clone();
            all.sort_unstable_by(|a, b| b.cmp(a));
            assert_eq!(all, sorted, "round {round}: keys lost");
        }
    }
}
