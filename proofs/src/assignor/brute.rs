//! The brute-force oracle: tries every assignment of a tiny group.
//!
//! For each topic with subscribers it lists every map from its partitions to its subscribers
//! (|Sub(t)|^P_t of them), keeps those that respect spread, and then walks the cartesian
//! product over topics, scoring each complete assignment by the objectives' definitions. No
//! insight into the problem is used beyond "validity and spread are hard constraints", so this
//! is the definition of optimal, executed.

use super::problem::{Objectives, Owners, Problem, TopicView, objectives};

/// The largest number of complete assignments [`optimum`] agrees to walk.
pub const MAX_ASSIGNMENTS: u64 = 200_000;

/// The best objectives over all valid, spread-respecting assignments of `problem`, with one
/// assignment reaching them (the first found in enumeration order), or `None` when there are
/// more than [`MAX_ASSIGNMENTS`] candidates (or more than that many raw maps for one topic).
#[must_use]
pub fn optimum(problem: &Problem) -> Option<(Objectives, Owners)> {
    let mut per_topic: Vec<Vec<Vec<usize>>> = Vec::with_capacity(problem.topics.len());
    let mut total: u64 = 1;
    for topic in &problem.topics {
        if topic.subscribers.is_empty() {
            per_topic.push(vec![Vec::new()]);
            continue;
        }
        let options = spread_maps(topic)?;
        total = total.checked_mul(options.len() as u64)?;
        if total > MAX_ASSIGNMENTS {
            return None;
        }
        per_topic.push(options);
    }
    let mut best: Option<(Objectives, Owners)> = None;
    let mut choice = vec![0usize; per_topic.len()];
    loop {
        let owners: Owners = choice
            .iter()
            .zip(&per_topic)
            .map(|(&c, options)| options[c].clone())
            .collect();
        let value = objectives(problem, &owners);
        if best.as_ref().is_none_or(|(b, _)| value.better_than(b)) {
            best = Some((value, owners));
        }
        // Odometer increment over the per-topic choices.
        let mut i = 0;
        loop {
            if i == choice.len() {
                return best;
            }
            choice[i] += 1;
            if choice[i] < per_topic[i].len() {
                break;
            }
            choice[i] = 0;
            i += 1;
        }
    }
}

/// Every map from the topic's partitions to its subscribers in which each subscriber gets
/// between ⌊P/n⌋ and ⌈P/n⌉ partitions.
fn spread_maps(topic: &TopicView) -> Option<Vec<Vec<usize>>> {
    let n = topic.subscribers.len();
    let p = topic.partitions as usize;
    let raw = (n as u64).checked_pow(u32::try_from(p).ok()?)?;
    if raw > MAX_ASSIGNMENTS {
        return None;
    }
    let (lo, hi) = (topic.spread_min() as usize, topic.spread_max() as usize);
    let mut out = Vec::new();
    let mut digits = vec![0usize; p];
    for _ in 0..raw {
        let mut counts = vec![0usize; n];
        for &d in &digits {
            counts[d] += 1;
        }
        if counts.iter().all(|&c| (lo..=hi).contains(&c)) {
            out.push(digits.iter().map(|&d| topic.subscribers[d]).collect());
        }
        for d in digits.iter_mut() {
            *d += 1;
            if *d < n {
                break;
            }
            *d = 0;
        }
    }
    Some(out)
}
