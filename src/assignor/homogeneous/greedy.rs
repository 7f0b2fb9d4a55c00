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
    let mut used = 0u64;
    let mut ok = true;
    let mut refused = None;
    let k = topics.len() as u64;
    // Every member's key persists from topic to topic; a topic recomputes only those that may
    // have changed (see `Ranking`), and tests compare them with a full recomputation.
    let mut ranking = Ranking::new(n, q, plus_left == 0);
    let mut keys: Vec<u64> = (0..n)
        .map(|lm| rank(lm, 0, q, plus_left, false, gain_left[lm], k))
        .collect();
    let mut top: Vec<u64> = Vec::new();
    let mut optional: Vec<u64> = Vec::new();
    let mut mark = vec![false; n];
    for i in 0..topics.len() {
        let (earlier, rest) = topics.split_at_mut(i);
        let x = &mut rest[0];
        let topics_left = k - i as u64;
        for &lm in &x.gaining {
            gaining_flag[lm as usize] = true;
            gain_left[lm as usize] -= 1;
            ranking.touch(lm);
        }
        ranking.thresholds(&received, topics_left, plus_left == 0);
        let fresh = |lm: usize| {
            let (got, gaining, left) = (received[lm], gaining_flag[lm], gain_left[lm]);
            rank(lm, got, q, plus_left, gaining, left, topics_left)
        };
        ranking.refresh(&mut keys, fresh);
        #[cfg(test)]
        for (lm, &key) in keys.iter().enumerate() {
            assert_eq!(key, fresh(lm), "topic {i}: member {lm}'s kept key is stale");
        }
        let r = x.extra as usize;
        top_keys(&keys, r, &mut top);
        // Members already at q going above it: at most `plus_left` of them, the best ranked.
        optional.clear();
        optional.extend(
            top.iter()
                .copied()
                .filter(|&key| key != 0 && received[(u32::MAX - key as u32) as usize] == q),
        );
        if optional.len() > plus_left as usize {
            optional.sort_unstable_by(|a, b| b.cmp(a));
            for &key in &optional[plus_left as usize..] {
                let lm = u32::MAX - key as u32;
                keys[lm as usize] = 0;
                ranking.touch(lm);
            }
            top_keys(&keys, r, &mut top);
        }
        // The topic's list from the rotation tried before, emptied, reused: a fresh one per
        // topic was a thousand allocations and frees per call on 1,000-topic groups.
        let mut chosen: Vec<u32> = std::mem::take(&mut x.chosen);
        chosen.clear();
        chosen.reserve(r);
        // The second selection above may pull in further members at q: more of them than
        // `plus_left` would break the load bound, so the greedy gives up (the flow decides).
        let mut above_q = 0u32;
        for &key in &top {
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
            ranking.touch(lm);
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
            // An exchange across topics may have moved earlier extras. Otherwise `received`
            // is as the ranking saw it and `plus_left` is still s minus the members above q.
            if repair.moved_extras() {
                ranking.received_changed(&received);
                plus_left = s.saturating_sub(received.iter().filter(|&&g| g > q).count() as u32);
            }
            #[cfg(test)]
            assert_eq!(
                plus_left,
                s.saturating_sub(received.iter().filter(|&&g| g > q).count() as u32),
                "topic {i}: places above q miscounted"
            );
            if !sort_ids(&mut chosen, &mut mark) {
                ok = false;
                break;
            }
            let above = chosen
                .iter()
                .filter(|&&lm| received[lm as usize] == q)
                .count();
            if chosen.len() != r
                || above > plus_left as usize
                || chosen.iter().any(|&lm| received[lm as usize] > q)
            {
                ok = false;
                break;
            }
        } else {
            // Distinct ids below n: the keys are distinct.
            sort_ids(&mut chosen, &mut mark);
        }
        for &lm in &chosen {
            if received[lm as usize] == q {
                plus_left -= 1;
            }
            received[lm as usize] += 1;
            ranking.received(lm, received[lm as usize]);
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

/// The greedy's key of local member `lm` (larger ranks first, 0 for a member that may not
/// take an extra): the tier (bits 60..63), need minus gaining topics left offset by 2^13
/// (bits 46..60), the need (bits 32..46), then the inverted id (bits 0..32). Clamping only
/// affects the order of the heuristic, never the check.
fn rank(
    lm: usize,
    got: u32,
    q: u32,
    plus_left: u32,
    gaining: bool,
    gain_left: u32,
    topics_left: u64,
) -> u64 {
    if got > q || (got == q && plus_left == 0) {
        return 0;
    }
    let nd = u64::from(q - got);
    let short = nd > u64::from(gain_left);
    let tier: u64 = match (nd >= topics_left, gaining, short) {
        (true, _, _) => 4,
        (false, true, true) => 3,
        (false, false, true) => 2,
        (false, true, false) => 1,
        (false, false, false) => 0,
    };
    let surplus = (nd + (1 << 13))
        .saturating_sub(u64::from(gain_left))
        .min((1 << 14) - 1);
    (tier << 60) | (surplus << 46) | (nd.min((1 << 14) - 1) << 32) | u64::from(u32::MAX - lm as u32)
}

/// Which members' keys may have changed since they were last computed. A key reads the
/// member's extras so far, whether it gains in the topic, its gaining topics left, whether
/// its need reaches the topics left (the critical tier) and, for a member at q, whether any
/// place above q is left. The first three change only for members the greedy touches; the
/// topics left fall by one per topic, so a member turns critical when they reach its need
/// (members are listed by need for that); the places above q matter to members at q only.
struct Ranking {
    q: u32,
    /// Members to recompute, each once (`marked`).
    dirty: Vec<u32>,
    marked: Vec<bool>,
    /// Per need (q − extras so far): the members that had it when listed (entries whose need
    /// has changed since are skipped).
    by_need: Vec<Vec<u32>>,
    /// Every member's extras as its key last saw them.
    seen: Vec<u32>,
    /// Whether no place above q was left when the keys were last brought up to date.
    none_above: bool,
}

impl Ranking {
    /// The state after every key was computed with no extras given and `none_above`.
    fn new(n: usize, q: u32, none_above: bool) -> Ranking {
        let mut by_need = vec![Vec::new(); q as usize + 1];
        by_need[q as usize] = (0..n as u32).collect();
        Ranking {
            q,
            dirty: Vec::new(),
            marked: vec![false; n],
            by_need,
            seen: vec![0; n],
            none_above,
        }
    }

    /// Marks `lm`'s key for recomputation.
    fn touch(&mut self, lm: u32) {
        if !self.marked[lm as usize] {
            self.marked[lm as usize] = true;
            self.dirty.push(lm);
        }
    }

    /// `lm` now has `got` extras.
    fn received(&mut self, lm: u32, got: u32) {
        self.seen[lm as usize] = got;
        self.touch(lm);
        if got <= self.q {
            self.by_need[(self.q - got) as usize].push(lm);
        }
    }

    /// Takes note of every member whose extras differ from what its key saw (a repair may
    /// move extras between members).
    fn received_changed(&mut self, received: &[u32]) {
        for (lm, &got) in received.iter().enumerate() {
            if self.seen[lm] != got {
                self.received(lm as u32, got);
            }
        }
    }

    /// Marks the members whose keys change because `topics_left` topics are left (those
    /// whose need is exactly that turn critical) or because places above q ran out or came
    /// back (`none_above`: the members at q).
    fn thresholds(&mut self, received: &[u32], topics_left: u64, none_above: bool) {
        if none_above != self.none_above {
            self.none_above = none_above;
            for (lm, &got) in received.iter().enumerate() {
                if got == self.q {
                    self.touch(lm as u32);
                }
            }
        }
        if let Some(bucket) = usize::try_from(topics_left)
            .ok()
            .and_then(|t| self.by_need.get_mut(t))
        {
            let need = topics_left as u32;
            for lm in std::mem::take(bucket) {
                let got = received[lm as usize];
                if got <= self.q && self.q - got == need {
                    self.touch(lm);
                }
            }
        }
    }

    /// Recomputes with `fresh` the key in `keys` of every member marked, each once;
    /// afterwards none is marked. (The list's buffer is kept for the next topic.)
    fn refresh(&mut self, keys: &mut [u64], fresh: impl Fn(usize) -> u64) {
        for lm in self.dirty.drain(..) {
            self.marked[lm as usize] = false;
            keys[lm as usize] = fresh(lm as usize);
        }
    }
}

/// From this many ids per member slot (`ids.len() · SORT_BY_MARKS ≥ n`) [`sort_ids`] marks
/// and scans instead of sorting.
const SORT_BY_MARKS: usize = 8;

/// Sorts `ids` ascending and drops repeats, as `sort_unstable` then `dedup` would; `false`
/// (with `ids` in some order) if an id is not below `mark.len()`. Long lists are marked in
/// `mark` (left all `false`) and read back in one scan, O(n) instead of O(r log r).
pub(super) fn sort_ids(ids: &mut Vec<u32>, mark: &mut [bool]) -> bool {
    let n = mark.len();
    if ids.iter().any(|&id| id as usize >= n) {
        return false;
    }
    if ids.len() * SORT_BY_MARKS < n {
        ids.sort_unstable();
        ids.dedup();
        return true;
    }
    for &id in ids.iter() {
        mark[id as usize] = true;
    }
    ids.clear();
    for (id, marked) in mark.iter_mut().enumerate() {
        if *marked {
            *marked = false;
            ids.push(id as u32);
        }
    }
    true
}

/// Puts the `r` largest of `keys` into `top`, in no particular order (but always the same
/// order for the same keys: the caller's choices follow it).
fn top_keys(keys: &[u64], r: usize, top: &mut Vec<u64>) {
    top.clear();
    if r == 0 || r >= keys.len() || r > SCAN_TOP {
        top.extend_from_slice(keys);
        select_top(top, r);
        top.truncate(r);
        return;
    }
    // What `select_top` leaves in front of a copy, without the copy: the keys above the r-th
    // largest in their order in `keys`, then copies of the r-th largest (equal keys are
    // indistinguishable).
    let threshold = rth_largest(keys, r);
    top.extend(keys.iter().copied().filter(|&key| key > threshold));
    top.resize(r, threshold);
}

/// The `r`-th largest of `keys` (1 ≤ r ≤ min([`SCAN_TOP`], `keys.len()`)), by one scan.
fn rth_largest(keys: &[u64], r: usize) -> u64 {
    // The r largest so far, descending; few topics have many extras per member.
    let mut best = [0u64; SCAN_TOP];
    let mut len = 0;
    for &key in keys {
        if len == r && key <= best[r - 1] {
            continue;
        }
        let at = best[..len].partition_point(|&b| b > key);
        let end = len.min(r - 1);
        best.copy_within(at..end, at + 1);
        best[at] = key;
        len = (len + 1).min(r);
    }
    best[r - 1]
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
    let threshold = rth_largest(keys, r);
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
    use super::{SCAN_TOP, SORT_BY_MARKS, select_top, sort_ids, top_keys};

    /// Deterministic pseudo-random numbers below `n` (a linear congruential generator seeded
    /// with `seed`), so that every run checks the same cases.
    fn numbers(mut seed: u64) -> impl FnMut(u64) -> u64 {
        move |n| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % n
        }
    }

    /// `sort_ids` gives what sorting and removing repeats gives, on both sides of the length
    /// at which it marks instead of sorting, leaves no mark behind, and refuses ids not below
    /// n.
    #[test]
    fn sorts_ids_as_a_sort_would() {
        let mut next = numbers(5);
        let (mut marked, mut sorted) = (0, 0);
        for round in 0..600 {
            let n = 1 + next(300) as usize;
            let len = match round % 2 {
                0 => next(n as u64 + 1),
                _ => next(n as u64 / 8 + 1),
            } as usize;
            let mut ids: Vec<u32> = (0..len).map(|_| next(n as u64) as u32).collect();
            let mut want = ids.clone();
            want.sort_unstable();
            want.dedup();
            let mut mark = vec![false; n];
            if ids.len() * SORT_BY_MARKS >= n {
                marked += 1;
            } else {
                sorted += 1;
            }
            assert!(sort_ids(&mut ids, &mut mark), "round {round}");
            assert_eq!(ids, want, "round {round}: n {n}");
            assert!(mark.iter().all(|&m| !m), "round {round}: marks left");
            ids.push(n as u32);
            assert!(
                !sort_ids(&mut ids, &mut mark),
                "round {round}: id n accepted"
            );
        }
        assert!(marked > 100 && sorted > 100, "{marked} {sorted}");
    }

    /// The front holds the r largest keys, as a full sort says, for r on both sides of the
    /// scan's limit and with repeated zeros (members that may not take an extra).
    #[test]
    fn selects_the_largest() {
        let mut next = numbers(11);
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

    /// `top_keys` gives exactly what a copy of the keys through `select_top` gives, in the
    /// same order (the greedy's choices follow it), for r on both sides of the scan's limit
    /// and with repeated zeros.
    #[test]
    fn top_keys_match_a_selection_of_a_copy() {
        let mut next = numbers(13);
        let mut top = Vec::new();
        for round in 0..600 {
            let n = 1 + next(150) as usize;
            let keys: Vec<u64> = (0..n as u64)
                .map(|i| {
                    if next(3) == 0 {
                        0
                    } else {
                        (next(50) << 32) | (u64::from(u32::MAX) - i)
                    }
                })
                .collect();
            let r = match round % 3 {
                0 => next(SCAN_TOP as u64 + 1) as usize,
                _ => next(n as u64 + 2) as usize,
            };
            let mut want = keys.clone();
            select_top(&mut want, r);
            want.truncate(r);
            top_keys(&keys, r, &mut top);
            assert_eq!(top, want, "round {round}: n {n}, r {r}");
        }
    }
}
