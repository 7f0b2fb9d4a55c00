//! The direct choice of extras of [`super`]: for large components, where the greedy's ranking
//! of every member for every topic (O(K·n)) dominates a join or a leave, a construction in
//! O(G log G + E + n + K) (G gaining cells) that is used only when it meets the same upper
//! bound.
//!
//! 1. *Keep.* Every member takes the extras of its gaining topics, up to a cap: q + 1 for the
//!    first (by id) min(s, #{m : |G_m| > q}) members with more than q gaining topics, q for
//!    the others. First, a topic with more gaining members than extras leaves the surplus
//!    out, from the members with the most gaining topics (ties: lower id). Then a member over
//!    its cap leaves out the gaining topics with the fewest free extras so far (ties: the
//!    earlier topic), so that the extras freed this way are spread over topics where members
//!    short of q can take them.
//!    When nothing is left out this way and [blocked members](super::blocked) make the bound
//!    tighter, each of them is moved into the topics it must take whose extras are all
//!    claimed, in place of a gaining cell of a member that can make up the loss.
//! 2. *Fill.* Each topic's extras left (r_t minus its kept cells) go, topic by topic, first to
//!    the members still short of q that lack the topic, largest shortfall first (ties: lower
//!    id), then to members at exactly q that lack it while fewer than s members are above q,
//!    by a cursor over the members in id order.
//! 3. *Exchange.* When extras of a topic are left and every member that may still take one
//!    has the topic, a member lacking it gives up an earlier extra that is not a gaining cell
//!    of its own to a member that may take one and lacks that earlier topic, and takes this
//!    topic instead (within a work budget of 4(n + E) steps in all).
//!
//! The counts always match: Σ_t r_t = nq + s, so once every row reaches q the extras left are
//! exactly the s − #{above q} optional ones. The result is accepted only when every topic's
//! extras are placed, every row ends at q or q + 1, and the gaining cells used equal the
//! bound of the parent module (or the blocked members' tighter one), which no y can exceed:
//! then it is optimal. Otherwise every
//! `chosen` is left empty and the greedy (then the flow) decides. Everything reads the
//! canonical order.

use super::TopicExtras;
use super::blocked;
use super::extras::every_gaining;

#[cfg(test)]
thread_local! {
    /// A planted fault for tests, on this thread: `direct_extras` keeps no member above q
    /// in its first step (losing gaining cells a member above q could keep) and skips its
    /// final bound check, so the tests must catch the suboptimal choices it lets through.
    pub(crate) static SKIP_BOUND_CHECK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Fills every `chosen` with a valid y meeting the upper bound (column sums r_t, row sums q or
/// q + 1) and returns true, or leaves every `chosen` empty and returns false. A topic whose
/// members are its gaining members is marked `chosen_gaining` instead (read them by
/// `TopicExtras::chosen`).
pub(super) fn direct_extras(topics: &mut [TopicExtras], n: usize, q: u32, s: u32) -> bool {
    // How many gaining topics each member has: one pass over every topic's list at once.
    let mut count = vec![0u32; n];
    for &lm in every_gaining(topics) {
        count[lm as usize] += 1;
    }

    // The bound of the parent module: no y uses more gaining cells than a topic has extras,
    // nor more than q + 1 per member with at most s members above q.
    let bound_topics: u64 = topics
        .iter()
        .map(|x| u64::from(x.extra.min(x.gaining.len() as u32)))
        .sum();
    let over = count.iter().filter(|&&c| c > q).count() as u64;
    let bound_members =
        count.iter().map(|&c| u64::from(c.min(q))).sum::<u64>() + over.min(u64::from(s));
    let bound = bound_topics.min(bound_members);

    // 1. Keep: which gaining cells each over-cap member leaves out.
    #[cfg(not(test))]
    let plus = s;
    #[cfg(test)]
    let plus = if SKIP_BOUND_CHECK.get() { 0 } else { s };
    // (topic position, member) pairs left out.
    let mut dropped: Vec<(u32, u32)> = Vec::new();
    // Something is left out only when a topic has more gaining members than extras, or a
    // member more gaining topics than its cap (q + 1 for the first `plus` above q, else q).
    // Otherwise (leaves, unchanged groups) every gaining cell is kept and the table of each
    // member's gaining topics is not needed.
    let surplus_topic = topics.iter().any(|x| x.gaining.len() > x.extra as usize);
    let over_cap = over > u64::from(plus) || count.iter().any(|&c| c > q + 1);
    let mut received = vec![0u32; n];
    if surplus_topic || over_cap {
        // Per topic, the extras no kept cell takes so far: r_t − g_t, plus one per cell left
        // out.
        let mut free: Vec<i64> = topics
            .iter()
            .map(|x| i64::from(x.extra) - x.gaining.len() as i64)
            .collect();
        leave_out(
            topics,
            &mut count,
            plus,
            q,
            &mut free,
            &mut dropped,
            &mut received,
        );
    } else {
        for (got, &c) in received.iter_mut().zip(&count) {
            *got = c;
        }
    }
    // Members blocked from free topics, when they make the bound tighter (see `blocked`).
    let mut forced: Vec<(u32, u32)> = Vec::new();
    let bound = if surplus_topic || over_cap {
        bound
    } else {
        blocked::force(
            topics,
            q,
            bound_topics,
            bound,
            &mut received,
            &mut dropped,
            &mut forced,
        )
    };
    dropped.sort_unstable();

    // 2. Fill, topic by topic.
    let mut short: Vec<u32> = (0..n as u32)
        .filter(|&lm| received[lm as usize] < q)
        .collect();
    let mut above = received.iter().filter(|&&g| g > q).count() as u32;
    let mut has = vec![false; n];
    let mut cursor = 0usize;
    let mut next_drop = 0usize;
    let mut next_forced = 0usize;
    let mut work = 4 * (n as u64 + topics.iter().map(|x| u64::from(x.extra)).sum::<u64>());
    // Gaining cells chosen so far, counted as they are chosen.
    let mut used = 0u64;
    for i in 0..topics.len() {
        let (earlier, rest) = topics.split_at_mut(i);
        let x = &mut rest[0];
        // This topic's run of `dropped` (usually none or a few: a scan, not a search).
        let drops_end = next_drop
            + dropped[next_drop..]
                .iter()
                .take_while(|&&(t, _)| t as usize == i)
                .count();
        // Nothing left out or forced here and every extra taken by a gaining member: the
        // choice is the gaining list itself, left where it is rather than copied (a join
        // gives most topics one such list; see `TopicExtras::chosen`).
        if drops_end == next_drop
            && forced
                .get(next_forced)
                .is_none_or(|&(t, _)| t as usize != i)
            && x.gaining.len() == x.extra as usize
        {
            used += x.gaining.len() as u64;
            x.chosen_gaining = true;
            continue;
        }
        let mut chosen: Vec<u32> = Vec::with_capacity(x.extra as usize);
        // The gaining members less those left out (both ascending): the runs between two
        // left out are copied whole. A member left out is a gaining member; should one not
        // be, it and the rest are ignored.
        let mut from = 0;
        for &(_, lm) in &dropped[next_drop..drops_end] {
            let Ok(k) = x.gaining[from..].binary_search(&lm) else {
                break;
            };
            chosen.extend_from_slice(&x.gaining[from..from + k]);
            from += k + 1;
        }
        chosen.extend_from_slice(&x.gaining[from..]);
        next_drop = drops_end;
        let kept = chosen.len();
        // Every kept cell is a gaining cell; a filled one is when it was left out above.
        used += kept as u64;
        // Blocked members moved here, each in place of a cell left out: none gains here, and
        // their rows already count it.
        while let Some(&(t, lm)) = forced.get(next_forced) {
            if t as usize != i {
                break;
            }
            chosen.push(lm);
            next_forced += 1;
        }
        if chosen.len() > x.extra as usize {
            // Cannot happen (surplus cells were left out above); the final check refuses.
            break;
        }
        let mut left = x.extra as usize - chosen.len();
        if left == 0 {
            // Nothing to fill: `has` is only read by the fill and the exchange.
            x.chosen = if chosen.len() == kept {
                chosen
            } else {
                merge_runs(chosen, kept)
            };
            continue;
        }
        // `has` flags the members given this topic past the kept cells; a kept one is found
        // in `chosen[..kept]` (ascending) until the fill has asked about a few members or
        // the exchange, which reads only the flags, needs them all (see `holds`). The fill
        // usually asks about a few members only, so most topics flag none of the kept.
        for &lm in &chosen[kept..] {
            has[lm as usize] = true;
        }
        let mut kept_flagged = false;
        let mut searches = 0;
        if !short.is_empty() {
            short.sort_by_key(|&lm| (std::cmp::Reverse(q - received[lm as usize]), lm));
            for &lm in &short {
                if left == 0 {
                    break;
                }
                if !holds(
                    &mut has,
                    &chosen[..kept],
                    &mut kept_flagged,
                    &mut searches,
                    lm,
                ) {
                    has[lm as usize] = true;
                    received[lm as usize] += 1;
                    chosen.push(lm);
                    used += u64::from(x.gaining.binary_search(&lm).is_ok());
                    left -= 1;
                }
            }
        }
        // Members at q taking an optional extra; one pass of the cursor at most.
        let mut visited = 0;
        while left > 0 && above < s && visited < n {
            let lm = cursor;
            cursor = if cursor + 1 == n { 0 } else { cursor + 1 };
            visited += 1;
            if received[lm] == q
                && !holds(
                    &mut has,
                    &chosen[..kept],
                    &mut kept_flagged,
                    &mut searches,
                    lm as u32,
                )
            {
                has[lm] = true;
                received[lm] += 1;
                above += 1;
                chosen.push(lm as u32);
                used += u64::from(x.gaining.binary_search(&(lm as u32)).is_ok());
                left -= 1;
            }
        }
        // Every member that may still take an extra already has this topic: exchange.
        if left > 0 && !kept_flagged {
            for &lm in &chosen[..kept] {
                has[lm as usize] = true;
            }
            kept_flagged = true;
        }
        while left > 0 {
            let Some((giver, taker, taker_gains)) =
                exchange(earlier, &has, &received, q, above < s, &mut work)
            else {
                break;
            };
            if received[taker as usize] == q {
                above += 1;
            }
            received[taker as usize] += 1;
            has[giver as usize] = true;
            chosen.push(giver);
            // The giver gave up a cell that was not gaining; both new cells may be.
            used += u64::from(taker_gains);
            used += u64::from(x.gaining.binary_search(&giver).is_ok());
            left -= 1;
        }
        short.retain(|&lm| received[lm as usize] < q);
        for &lm in &chosen[if kept_flagged { 0 } else { kept }..] {
            has[lm as usize] = false;
        }
        x.chosen = merge_runs(chosen, kept);
        if left > 0 {
            break;
        }
    }
    let placed = topics.iter().all(|x| x.chosen().len() == x.extra as usize);
    let rows = received.iter().all(|&g| g == q || g == q + 1);
    // The running count equals the definition whenever every topic was reached (a break
    // leaves `placed` false, and then the count does not matter).
    #[cfg(test)]
    if placed {
        assert_eq!(
            used,
            used_gaining(topics, n),
            "running count of gaining cells"
        );
    }
    #[cfg(test)]
    let bound = if SKIP_BOUND_CHECK.get() { used } else { bound };
    if placed && rows && used == bound {
        return true;
    }
    for x in topics.iter_mut() {
        x.chosen.clear();
        x.chosen_gaining = false;
    }
    false
}

/// Step 1 when something must be left out: fills `received` with each member's kept gaining
/// cells and `dropped` with the (topic position, member) cells left out, updating `count`
/// and `free` (see [`direct_extras`]).
fn leave_out(
    topics: &[TopicExtras],
    count: &mut [u32],
    mut plus: u32,
    q: u32,
    free: &mut [i64],
    dropped: &mut Vec<(u32, u32)>,
    received: &mut [u32],
) {
    let n = count.len();
    // A topic with more gaining members than extras leaves the surplus out first, from the
    // members with the most gaining topics (ties: lower id), those likeliest over their cap.
    let mut order: Vec<u32> = Vec::new();
    for (i, x) in topics.iter().enumerate() {
        let surplus = x.gaining.len().saturating_sub(x.extra as usize);
        if surplus == 0 {
            continue;
        }
        order.clear();
        order.extend_from_slice(&x.gaining);
        // The keys are distinct (ids break ties), so the first `surplus` are one set in
        // whatever order they come; the drops are sorted later.
        order.select_nth_unstable_by_key(surplus - 1, |&lm| {
            (std::cmp::Reverse(count[lm as usize]), lm)
        });
        for &lm in &order[..surplus] {
            count[lm as usize] -= 1;
            free[i] += 1;
            dropped.push((i as u32, lm));
        }
    }
    // The caps, in id order: q + 1 for the first `plus` members above q, q for the others.
    // They depend on the counts alone, so they are fixed before any member leaves out.
    let mut excess = vec![0u32; n];
    for lm in 0..n {
        let count = count[lm];
        let cap = if count > q && plus > 0 {
            plus -= 1;
            q + 1
        } else {
            q
        };
        received[lm] = count.min(cap);
        excess[lm] = count.saturating_sub(cap);
    }
    // Member over its cap → its gaining topics not left out above (positions in `topics`,
    // ascending), as one flat table; the other members (usually most) need none.
    let mut start = vec![0usize; n + 1];
    for lm in 0..n {
        let cells = if excess[lm] > 0 { count[lm] } else { 0 };
        start[lm + 1] = start[lm] + cells as usize;
    }
    let mut fill = start.clone();
    let mut gaining_of = vec![0u32; start[n]];
    // Whether a member's gaining cell of the current topic goes to its table: over its cap,
    // and not left out of this topic above.
    let mut listed: Vec<bool> = excess.iter().map(|&e| e > 0).collect();
    let mut surplus_drops = dropped.as_slice();
    for (i, x) in topics.iter().enumerate() {
        // This topic's surplus left out (a run of `dropped`, in topic order).
        let run = surplus_drops
            .iter()
            .take_while(|&&(t, _)| t as usize == i)
            .count();
        let (here, rest) = surplus_drops.split_at(run);
        surplus_drops = rest;
        for &(_, lm) in here {
            listed[lm as usize] = false;
        }
        for &lm in &x.gaining {
            if listed[lm as usize] {
                gaining_of[fill[lm as usize]] = i as u32;
                fill[lm as usize] += 1;
            }
        }
        for &(_, lm) in here {
            listed[lm as usize] = excess[lm as usize] > 0;
        }
    }
    let mut mine: Vec<u32> = Vec::new();
    for lm in 0..n {
        let k = excess[lm] as usize;
        if k == 1 {
            // One drop (a join's usual case): the least key, the first (topics ascend) of the
            // fewest free extras, found by one scan.
            let cells = &gaining_of[start[lm]..start[lm + 1]];
            if let Some((&first, rest)) = cells.split_first() {
                let mut best = (free[first as usize], first);
                for &i in rest {
                    if free[i as usize] < best.0 {
                        best = (free[i as usize], i);
                    }
                }
                free[best.1 as usize] += 1;
                dropped.push((best.1, lm as u32));
            }
        } else if k > 0 {
            // Each of its drops is a distinct topic, so the counts of the others do not move
            // while this member chooses: one ordering decides all of them.
            mine.clear();
            mine.extend_from_slice(&gaining_of[start[lm]..start[lm + 1]]);
            mine.select_nth_unstable_by_key(k - 1, |&i| (free[i as usize], i));
            mine[..k].sort_unstable();
            for &i in &mine[..k] {
                free[i as usize] += 1;
                dropped.push((i, lm as u32));
            }
        }
    }
}

/// Whether member `lm` is given the current topic: flagged in `has` (the members given it
/// past the kept cells, and the `kept` cells too once `kept_flagged`), or one of the `kept`
/// cells (ascending). After [`SEARCHES`] binary searches in `kept` (counted in `searches`),
/// the kept cells are flagged and the flags answer alone.
fn holds(
    has: &mut [bool],
    kept: &[u32],
    kept_flagged: &mut bool,
    searches: &mut u32,
    lm: u32,
) -> bool {
    if !*kept_flagged {
        if *searches < SEARCHES {
            *searches += 1;
            return has[lm as usize] || kept.binary_search(&lm).is_ok();
        }
        for &k in kept {
            has[k as usize] = true;
        }
        *kept_flagged = true;
    }
    has[lm as usize]
}

/// How many members [`holds`] looks up in a topic's kept cells before it flags them all:
/// flagging and clearing cost about as much per cell as a search per step, and the fill of
/// a join or leave usually asks about one or two members (measured on 1,000 members,
/// 500-partition topics), while on buckets it may ask about most.
const SEARCHES: u32 = 8;

/// One exchange for a topic whose extras no member that may take one lacks: a member `giver`
/// lacking the topic (`has` false) gives up an extra of an earlier topic that is not a
/// gaining cell of its own to a member `taker` that may take one more (below q, or at q
/// while `plus` allows one more above it) and lacks that earlier topic; the giver then takes
/// the topic instead. Rows and gaining cells used stay as they were except the taker's row,
/// one higher. Returns (giver, taker, whether the taker's new cell is a gaining cell), or
/// `None` when none is found within `work`. An earlier topic whose chosen are its gaining
/// members (`chosen_gaining`) has no giver.
fn exchange(
    earlier: &mut [TopicExtras],
    has: &[bool],
    received: &[u32],
    q: u32,
    plus: bool,
    work: &mut u64,
) -> Option<(u32, u32, bool)> {
    for (taker, &got) in received.iter().enumerate() {
        let taker = taker as u32;
        *work = work.checked_sub(1)?;
        if !(got < q || (got == q && plus)) {
            continue;
        }
        for x in earlier.iter_mut() {
            *work = work.checked_sub(1)?;
            let Err(at) = x.chosen().binary_search(&taker) else {
                continue;
            };
            if x.chosen_gaining {
                // The scan below would look at every chosen member and find no giver.
                *work = work.checked_sub(x.gaining.len() as u64)?;
                continue;
            }
            let mut found = None;
            for (k, &giver) in x.chosen.iter().enumerate() {
                *work = work.checked_sub(1)?;
                if !has[giver as usize] && x.gaining.binary_search(&giver).is_err() {
                    found = Some((k, giver));
                    break;
                }
            }
            if let Some((k, giver)) = found {
                // Keep `chosen` ascending: remove the giver, put the taker in its place.
                x.chosen.remove(k);
                let at = if k < at { at - 1 } else { at };
                x.chosen.insert(at, taker);
                return Some((giver, taker, x.gaining.binary_search(&taker).is_ok()));
            }
        }
    }
    None
}

/// `list` ascending: its first `kept` entries already are, the rest (the fill, usually a
/// few) are sorted and merged in.
fn merge_runs(mut list: Vec<u32>, kept: usize) -> Vec<u32> {
    if list.len() == kept {
        return list;
    }
    list[kept..].sort_unstable();
    if kept == 0 || list[kept - 1] < list[kept] {
        return list;
    }
    if list.len() == kept + 1 {
        // One filled (a join's usual case): put it in place.
        let last = list[kept];
        let at = list[..kept].partition_point(|&x| x < last);
        list[at..].rotate_right(1);
        return list;
    }
    let mut merged = Vec::with_capacity(list.len());
    let (a, b) = list.split_at(kept);
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] < b[j] {
            merged.push(a[i]);
            i += 1;
        } else {
            merged.push(b[j]);
            j += 1;
        }
    }
    merged.extend_from_slice(&a[i..]);
    merged.extend_from_slice(&b[j..]);
    merged
}

/// How many chosen cells are gaining cells (the definition the running count must equal).
#[cfg(test)]
fn used_gaining(topics: &[TopicExtras], n: usize) -> u64 {
    let mut flag = vec![false; n];
    let mut used = 0u64;
    for x in topics {
        for &lm in &x.gaining {
            flag[lm as usize] = true;
        }
        used += x.chosen().iter().filter(|&&lm| flag[lm as usize]).count() as u64;
        for &lm in &x.gaining {
            flag[lm as usize] = false;
        }
    }
    used
}

#[cfg(test)]
mod tests {
    use super::merge_runs;

    #[test]
    fn merging_the_kept_and_filled_runs_gives_one_ascending_list() {
        assert_eq!(
            merge_runs(vec![1, 4, 9, 7, 0, 5], 3),
            vec![0, 1, 4, 5, 7, 9]
        );
        assert_eq!(merge_runs(vec![1, 4, 9], 3), vec![1, 4, 9]);
        assert_eq!(merge_runs(vec![8, 2, 5], 0), vec![2, 5, 8]);
        assert_eq!(merge_runs(vec![1, 2, 6, 3], 2), vec![1, 2, 3, 6]);
        assert_eq!(merge_runs(vec![3, 4, 1, 2], 2), vec![1, 2, 3, 4]);
        assert_eq!(merge_runs(vec![1, 4, 9, 0], 3), vec![0, 1, 4, 9]);
        assert_eq!(merge_runs(vec![1, 4, 9, 5], 3), vec![1, 4, 5, 9]);
    }
}
