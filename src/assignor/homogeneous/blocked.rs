//! *Blocked* members for the [direct construction](super::direct): a tighter bound on the
//! gaining cells, and the exchanges that reach it.
//!
//! Call a topic *free* when it has more extras than gaining members (r_t > g_t): any y
//! gives at least r_t − g_t of its extras to members that do not gain in it. Let a_m be the
//! number of free topics in which member m does not gain, and need_m = q − |G_m|. Every row
//! of a y is at least q and uses at most |G_m| gaining cells, so member m holds at least
//! need_m non-gaining extras, of which at most a_m (one per topic) lie in free topics: at
//! least excess_m = max(0, need_m − a_m) lie in topics that are not free. Write N_t for the
//! non-gaining extras of topic t, so that the gaining cells used are E − Σ_t N_t. In a free
//! topic N_t ≥ r_t − g_t; in the others every non-gaining extra counts, and distinct
//! members' extras are distinct cells. Hence
//!
//! ```text
//! used ≤ E − Σ_t max(0, r_t − g_t) − Σ_m excess_m = Σ_t min(r_t, g_t) − Σ_m excess_m,
//! ```
//!
//! the parent module's topic bound less the excess. The member a leave leaves behind shows
//! it: after a rotation, the leaver's topics are all held by the same few members, which gain
//! in every topic with a free extra and must take the rest of their q in topics whose
//! extras are all claimed, each such extra displacing a gaining cell.
//!
//! [`force`] moves each blocked member (excess_m > 0, by id) into excess_m topics that are
//! not free (the first in order where it does not gain and no other blocked member was
//! moved), each time leaving out the gaining cell of a member that can make up the loss in
//! free topics (the largest a_d − need_d, ties: lower id). The direct construction then
//! fills as usual and accepts its result only if it meets the tighter bound, which no y
//! exceeds: then it is optimal. The moves are a heuristic; only that check decides.
//!
//! Cost: O(G + n + K) to find the blocked members, and when there are some, a scan of the
//! topics (a binary search and a pass over the gaining members of each) per blocked member.

use super::TopicExtras;

#[cfg(test)]
thread_local! {
    /// A planted fault for tests, on this thread: [`force`] moves the first blocked member
    /// into one topic more than its excess and counts that move in the bound too, so that the
    /// direct construction accepts a choice that leaves out one gaining cell too many.
    pub(crate) static ONE_TOO_MANY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The exchanges of the module docs, on a direct construction that keeps every gaining cell
/// (`received[lm]` = |G_lm| ≤ q + 1 and no topic with more gaining members than extras).
/// When the tighter bound is below `bound` (the parent module's), appends the cells left out
/// to `dropped` and the forced cells to `forced` (both as (topic position, member)), updates
/// `received`, and returns the tighter bound; otherwise changes nothing and returns `bound`.
pub(super) fn force(
    topics: &[TopicExtras],
    q: u32,
    bound_topics: u64,
    bound: u64,
    received: &mut [u32],
    dropped: &mut Vec<(u32, u32)>,
    forced: &mut Vec<(u32, u32)>,
) -> u64 {
    let n = received.len();
    // Only a member short of q can be blocked (most leaves of a balanced group have none).
    if received.iter().all(|&got| got >= q) {
        return bound;
    }
    // a_m: the free topics less those in which m gains.
    let is_free = |x: &TopicExtras| x.extra as usize > x.gaining.len();
    let mut room = vec![0i64; n];
    let mut free_topics = 0i64;
    for x in topics.iter().filter(|x| is_free(x)) {
        free_topics += 1;
        for &lm in &x.gaining {
            room[lm as usize] -= 1;
        }
    }
    // From here on, room[m] = a_m − need_m (the slack of a possible donor).
    let mut excess = 0u64;
    for (r, &got) in room.iter_mut().zip(received.iter()) {
        *r += free_topics - (i64::from(q) - i64::from(got));
        excess += (-*r).max(0) as u64;
    }
    #[cfg(test)]
    let planted = excess > 0 && ONE_TOO_MANY.get();
    #[cfg(test)]
    if planted {
        excess += 1;
    }
    let tighter = bound_topics.saturating_sub(excess);
    if excess == 0 || tighter >= bound {
        return bound;
    }
    let mut taken = vec![false; topics.len()];
    for m in 0..n {
        let mut want = (-room[m]).max(0) as u64;
        #[cfg(test)]
        if planted && want > 0 && forced.is_empty() {
            want += 1;
        }
        let mut i = 0;
        while want > 0 && i < topics.len() {
            let x = &topics[i];
            if taken[i] || is_free(x) || x.gaining.binary_search(&(m as u32)).is_ok() {
                i += 1;
                continue;
            }
            // The donor: the gaining member with the most slack, ties lower id.
            let donor = x
                .gaining
                .iter()
                .copied()
                .filter(|&d| room[d as usize] > 0)
                .max_by_key(|&d| (room[d as usize], std::cmp::Reverse(d)));
            if let Some(d) = donor {
                taken[i] = true;
                room[d as usize] -= 1;
                received[d as usize] -= 1;
                received[m] += 1;
                dropped.push((i as u32, d));
                forced.push((i as u32, m as u32));
                want -= 1;
            }
            i += 1;
        }
    }
    forced.sort_unstable();
    tighter
}
