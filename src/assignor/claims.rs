//! Previous-owner resolution: who, if anyone, owned each partition before this assignment.
//!
//! A claim counts only when its member still subscribes to the topic, the topic exists and the
//! partition is in range. Among the counted claims of a partition, the highest generation wins;
//! two or more distinct members claiming it at that generation leave it without an owner
//! (KAFKA-7026: a stale or conflicting claim must never become double ownership).

use super::problem::Problem;

/// No claim on this partition yet.
const UNCLAIMED: u32 = u32::MAX;
/// Two or more distinct members claim it at the highest generation seen.
const TIED: u32 = u32::MAX - 1;

/// For every topic (by index in [`Problem::topics`]), its partitions that have a previous
/// owner, as `(partition, member index)` ascending by partition.
///
/// One slot per partition of every claimed topic holds the best claim so far (generation,
/// member, or tied), so the cost is O(claims + partitions of claimed topics) and the result
/// does not depend on the order in which claims are read: the highest generation wins, and a
/// second distinct member at that generation makes it a tie, whichever comes first (a
/// member's claims all carry its one generation, so a member never ties with itself).
pub(crate) fn previous_owners(problem: &Problem<'_>) -> Vec<Vec<(i32, u32)>> {
    // Per claimed topic, lazily: for every partition, (generation, owner or UNCLAIMED/TIED).
    let mut slots: Vec<Vec<(i32, u32)>> = vec![Vec::new(); problem.topics.len()];
    let mut subscribed = vec![u32::MAX; problem.topics.len()];
    for (m, member) in problem.members.iter().enumerate() {
        if member.owned.is_empty() {
            continue;
        }
        let m = m as u32;
        // Which topics the member subscribes to, by topic index (`subscribed[t] == m`).
        for &t in &problem.subscriptions[m as usize] {
            subscribed[t as usize] = m;
        }
        // A member's claims usually name topics in ascending order, often at a steady stride
        // (a spread assignment gives it a partition of every k-th topic) or one apart: those
        // indices are tried before the name table (a guess is only a shortcut: the lookup
        // checks it).
        let (mut last, mut stride) = (u32::MAX, 1u32);
        for owned in &member.owned {
            let guesses = [last.wrapping_add(stride), last.wrapping_add(1)];
            let Some(t) = problem.topic_index_guessing(&owned.topic, guesses) else {
                continue;
            };
            (last, stride) = (t, t.wrapping_sub(last));
            if subscribed[t as usize] != m {
                continue;
            }
            let slot = &mut slots[t as usize];
            if slot.is_empty() {
                // Sized on the first claim of the topic, in range or not: an unclaimed slot
                // adds nothing to the result.
                slot.resize(problem.partitions(t) as usize, (i32::MIN, UNCLAIMED));
            }
            for &p in &owned.partitions {
                // A negative partition becomes at least 2^31, out of range like a large one.
                let Some((generation, owner)) = slot.get_mut(p as u32 as usize) else {
                    continue;
                };
                if *owner == UNCLAIMED || member.generation > *generation {
                    *generation = member.generation;
                    *owner = m;
                } else if member.generation == *generation && *owner != m {
                    *owner = TIED;
                }
            }
        }
    }
    // Each topic's slots become its list in place: the list is never longer than the slots
    // and entry p is written at or before position p, after slot p was read. Every slot is
    // written and only owned ones are kept (members are below TIED), without a branch on
    // which.
    for slot in &mut slots {
        let mut len = 0;
        for p in 0..slot.len() {
            let owner = slot[p].1;
            slot[len] = (p as i32, owner);
            len += usize::from(owner < TIED);
        }
        slot.truncate(len);
    }
    slots
}
