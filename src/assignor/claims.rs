//! Previous-owner resolution: who, if anyone, owned each partition before this assignment.
//!
//! A claim counts only when its member still subscribes to the topic, the topic exists and the
//! partition is in range. Among the counted claims of a partition, the highest generation wins;
//! two or more distinct members claiming it at that generation leave it without an owner
//! (KAFKA-7026: a stale or conflicting claim must never become double ownership).

use super::problem::Problem;

/// For every topic (by index in [`Problem::topics`]), its partitions that have a previous
/// owner, as `(partition, member index)` ascending by partition.
pub(crate) fn previous_owners(problem: &Problem<'_>) -> Vec<Vec<(i32, u32)>> {
    // (topic, partition, generation, member): sorting groups each partition's claims with the
    // highest generation last, independent of input order.
    let mut claims: Vec<(u32, i32, i32, u32)> = Vec::new();
    for (m, member) in problem.members.iter().enumerate() {
        let m = m as u32;
        for owned in &member.owned {
            let Some(t) = problem.topic_index(&owned.topic) else {
                continue;
            };
            if !problem.subscribes(m, t) {
                continue;
            }
            let count = problem.topics[t as usize].partitions;
            for &p in &owned.partitions {
                if p >= 0 && i64::from(p) < count {
                    claims.push((t, p, member.generation, m));
                }
            }
        }
    }
    claims.sort_unstable();
    claims.dedup();
    let mut owners: Vec<Vec<(i32, u32)>> = vec![Vec::new(); problem.topics.len()];
    let mut i = 0;
    while i < claims.len() {
        let (t, p, _, _) = claims[i];
        let mut j = i;
        while j < claims.len() && claims[j].0 == t && claims[j].1 == p {
            j += 1;
        }
        // claims[i..j] are this partition's, the highest generation last; after dedup a
        // member appears once per generation, so two entries at the top generation are two
        // distinct members (or one member claiming at two generations, which cannot tie).
        let (_, _, top_gen, owner) = claims[j - 1];
        let tied = j - 1 > i && claims[j - 2].2 == top_gen;
        if !tied {
            owners[t as usize].push((p, owner));
        }
        i = j;
    }
    owners
}
