//! Previous-owner resolution: who, if anyone, owned each partition before this assignment.
//!
//! A claim counts only when its member still subscribes to the topic, the topic exists and the
//! partition is in range. Among the counted claims of a partition, the highest generation wins;
//! two or more distinct members claiming it at that generation leave it without an owner
//! (KAFKA-7026: a stale or conflicting claim must never become double ownership).

use super::gallop::gallop;
use super::problem::Problem;
use super::problem::names::pack;

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
    let keys = problem.topic_keys();
    for (m, member) in problem.members.iter().enumerate() {
        if member.owned.is_empty() {
            continue;
        }
        let subs = problem.subscriptions[m].as_slice();
        // Its subscriptions ascend without repeats and are below the topic count, so a
        // member subscribing to as many topics as there are subscribes to every topic, the
        // one at position `i` being `i`.
        match subs.len() == problem.topics.len() {
            true => count::<true>(problem, keys, &mut slots, m as u32, subs),
            false => count::<false>(problem, keys, &mut slots, m as u32, subs),
        }
    }
    // Each topic's slots become its list in place: the owned ones are kept, in order, each
    // numbered by its position among the slots (members are below TIED).
    for slot in &mut slots {
        let mut p = 0;
        slot.retain_mut(|entry| {
            let owner = entry.1;
            *entry = (p, owner);
            p += 1;
            #[cfg(test)]
            let owner = if planted::TIED_KEPT.get() && owner == TIED {
                0
            } else {
                owner
            };
            owner < TIED
        });
    }
    slots
}

/// Counts member `m`'s claims (`subs` being its subscriptions) in `slots`; `EVERY` when it
/// subscribes to every topic (see [`Claims`]).
fn count<const EVERY: bool>(
    problem: &Problem<'_>,
    keys: &[u128],
    slots: &mut [Vec<(i32, u32)>],
    m: u32,
    subs: &[u32],
) {
    let member = problem.members[m as usize];
    let generation = member.generation;
    let claims = Claims::<EVERY> { subs };
    // Then a guess is a position in `subs`, and as many slots as subscriptions lets the
    // compiler see that it indexes them in range.
    let slots = match EVERY {
        true => &mut slots[..subs.len()],
        false => slots,
    };
    // The position in the subscriptions of the last claim's topic (`usize::MAX` before
    // the first) and the distance between the last two claims' topics (locals, so that
    // the guessed path keeps them in registers).
    let (mut last, mut stride) = (usize::MAX, 1usize);
    for owned in &member.owned {
        let ahead = last.wrapping_add(stride);
        let (i, t) = match claims.guess(problem, ahead, &owned.topic) {
            Some(t) => (ahead, t),
            None => match claims.resolve(problem, keys, last, stride, &owned.topic) {
                Some(found) => found,
                None => continue,
            },
        };
        (last, stride) = (i, i.wrapping_sub(last));
        let slot = &mut slots[t as usize];
        if slot.is_empty() {
            // Sized on the first claim of the topic, in range or not: an unclaimed slot
            // adds nothing to the result.
            *slot = vec![(i32::MIN, UNCLAIMED); problem.partitions(t) as usize];
        }
        // A negative partition becomes at least 2^31, out of range like a large one. (A
        // spread assignment claims one partition per topic: that case skips the loop.)
        if let [p] = owned.partitions[..] {
            if let Some(best) = slot.get_mut(p as u32 as usize) {
                claim(best, generation, m);
            }
            continue;
        }
        for &p in &owned.partitions {
            if let Some(best) = slot.get_mut(p as u32 as usize) {
                claim(best, generation, m);
            }
        }
    }
}

/// Counts member `m`'s claim at `generation` in the best claim so far of its partition.
#[inline(always)]
fn claim((best, owner): &mut (i32, u32), generation: i32, m: u32) {
    if *owner == UNCLAIMED || generation > *best {
        *best = generation;
        *owner = m;
    } else if generation == *best && *owner != m {
        *owner = TIED;
    }
}

/// One member's claims being resolved to topics.
///
/// A member's claims usually name its subscribed topics in ascending order, often at a
/// steady stride among them (a spread assignment gives it a partition of every k-th one) or
/// one apart: the subscriptions at those positions are tried first, by comparing names. A
/// right guess names a topic the member subscribes to, so the claim counts without a
/// lookup; a wrong one only costs its comparison. A claim no guess resolves is searched for
/// among the subscriptions by its name's order key (topic indices are in name order, so the
/// keys of the subscriptions ascend), outwards from the guessed position: O(log distance),
/// with no name table.
///
/// `EVERY` when the member subscribes to every topic: then the subscription at position
/// `i` is `i`, and a guess need not read it (a spread assignment's claims skip along the
/// list a cache line or more at a time, so reading it would miss about once per claim).
struct Claims<'s, const EVERY: bool> {
    /// The member's subscriptions, ascending.
    subs: &'s [u32],
}

impl<const EVERY: bool> Claims<'_, EVERY> {
    /// The subscription at position `i`, if there is one and it is the topic `name`.
    #[inline]
    fn guess(&self, problem: &Problem<'_>, i: usize, name: &str) -> Option<u32> {
        let t = match EVERY {
            true if i < self.subs.len() => i as u32,
            true => return None,
            false => *self.subs.get(i)?,
        };
        #[cfg(test)]
        if planted::GUESS_TRUSTED.get() {
            return Some(t);
        }
        problem.topic_is(t, name).then_some(t)
    }

    /// The position in `subs` and the topic of a claim of `name`, if it exists and the
    /// member subscribes to it, when the stride (`stride` on from `last`, the position of
    /// the last claim's topic) did not guess it: kept out of line, so that the guessed path
    /// stays small. `keys` are the topics' order keys ([`Problem::topic_keys`]).
    ///
    /// The search starts where the stride guessed ([`gallop`]): claims usually
    /// ascend at a stride that varies a little, so the topic is a few subscriptions away.
    #[inline(never)]
    fn resolve(
        &self,
        problem: &Problem<'_>,
        keys: &[u128],
        last: usize,
        stride: usize,
        name: &str,
    ) -> Option<(usize, u32)> {
        let next = last.wrapping_add(1);
        let guessed = last.wrapping_add(stride);
        let found = match pack(name.as_bytes()) {
            // The key of a name that packs is its pack, which no other name's key equals;
            // the subscriptions' keys ascend, so the search finds it if it is among them.
            // The next subscription is tried first (one apart is common where the stride
            // was not), by key: cheaper than comparing names.
            Some(key) => match self.subs.get(next) {
                Some(&t) if stride != 1 && keys[t as usize] == key => return Some((next, t)),
                _ => gallop(self.subs, guessed, |s| keys[s as usize].cmp(&key)),
            },
            // Longer names may share a key: the next subscription by name, the name table,
            // then membership.
            None => {
                if stride != 1
                    && let Some(t) = self.guess(problem, next, name)
                {
                    return Some((next, t));
                }
                let t = problem.topic_index(name)?;
                gallop(self.subs, guessed, |s| s.cmp(&t))
            }
        };
        #[cfg(test)]
        if planted::NEIGHBOUR_TAKEN.get() {
            let i = found.unwrap_or_else(|i| i.min(self.subs.len().saturating_sub(1)));
            return self.subs.get(i).map(|&t| (i, t));
        }
        let i = found.ok()?;
        Some((i, self.subs[i]))
    }
}

/// Faults a test may plant on its thread, to show the tests catch them.
#[cfg(test)]
pub(crate) mod planted {
    thread_local! {
        /// [`super::previous_owners`] keeps a tied partition, as owned by member 0.
        pub(crate) static TIED_KEPT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        /// [`super::previous_owners`] takes a guessed subscription without comparing names.
        pub(crate) static GUESS_TRUSTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        /// [`super::previous_owners`] takes the place a search among the subscriptions ends
        /// at as the claim's, found or not.
        pub(crate) static NEIGHBOUR_TAKEN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::{planted, previous_owners};
    use crate::assignor::problem::Problem;
    use crate::assignor::tests::Rng;
    use crate::assignor::{GroupSpec, MemberSpec, OwnedPartitions, TopicSpec};

    /// A group whose claims are often stale or conflicting: unknown and unsubscribed topics,
    /// short names or long ones,
    /// partitions out of range or negative, repeats, a few generations (so ties happen), and
    /// claims sometimes in topic order at a stride, sometimes shuffled.
    fn claimed(seed: u64) -> GroupSpec {
        let mut rng = Rng(seed);
        // Names too long to pack, sharing their first 15 bytes, in one group of three.
        let long = rng.below(3) == 0;
        let names: Vec<String> = (0..6)
            .map(|t| match long {
                true => format!("a-topic-with-a-long-name-{t}"),
                false => format!("T{t}"),
            })
            .collect();
        let topics = names
            .iter()
            .map(|name| TopicSpec {
                name: name.clone(),
                partitions: rng.below(5) as i64,
                replica_racks: None,
            })
            .collect();
        let members = (0..1 + rng.below(7))
            .map(|m| {
                let mut subscriptions: Vec<String> = names
                    .iter()
                    .filter(|_| rng.below(4) != 0)
                    .cloned()
                    .collect();
                subscriptions.push("unknown".to_owned());
                let stride = 1 + rng.below(3) as usize;
                let mut owned: Vec<OwnedPartitions> = (rng.below(2) as usize..8)
                    .step_by(stride)
                    .map(|t| OwnedPartitions {
                        topic: names
                            .get(t)
                            .cloned()
                            .unwrap_or_else(|| "unknown".to_owned()),
                        partitions: (0..rng.below(4)).map(|_| rng.below(7) as i32 - 1).collect(),
                    })
                    .collect();
                if rng.below(2) == 0 {
                    owned.reverse();
                }
                MemberSpec {
                    id: format!("M{m}"),
                    rack: None,
                    subscriptions,
                    owned,
                    generation: [-1, 3, 4][rng.below(3) as usize],
                }
            })
            .collect();
        GroupSpec {
            rack_aware: false,
            topics,
            members,
        }
    }

    /// Whether [`previous_owners`] agrees with the rule read literally: per partition in
    /// range, among the claims of members subscribing to its topic, the highest generation
    /// wins if a single member claims it at that generation.
    fn agrees(spec: &GroupSpec) -> bool {
        let problem = Problem::new(spec);
        let mut best: BTreeMap<(u32, i32), (i32, Vec<u32>)> = BTreeMap::new();
        for (m, member) in problem.members.iter().enumerate() {
            for owned in &member.owned {
                let Some(t) = problem.topic_index(&owned.topic) else {
                    continue;
                };
                if !member.subscriptions.contains(&owned.topic) {
                    continue;
                }
                for &p in &owned.partitions {
                    if p < 0 || p as u32 >= problem.partitions(t) {
                        continue;
                    }
                    let entry = best
                        .entry((t, p))
                        .or_insert((member.generation, Vec::new()));
                    if member.generation > entry.0 {
                        *entry = (member.generation, Vec::new());
                    }
                    if member.generation == entry.0 && !entry.1.contains(&(m as u32)) {
                        entry.1.push(m as u32);
                    }
                }
            }
        }
        let mut want = vec![Vec::new(); problem.topics.len()];
        for ((t, p), (_, claimants)) in best {
            if let [m] = claimants[..] {
                want[t as usize].push((p, m));
            }
        }
        previous_owners(&problem) == want
    }

    #[test]
    fn owners_follow_the_claim_rule() {
        assert!((0..500).all(|seed| agrees(&claimed(seed))));
    }

    #[test]
    fn keeping_a_tied_partition_is_caught() {
        planted::TIED_KEPT.set(true);
        let caught = (0..500).filter(|&seed| !agrees(&claimed(seed))).count();
        planted::TIED_KEPT.set(false);
        println!("a tied partition kept caught in {caught} of 500");
        assert!(caught >= 50, "only {caught} caught");
    }

    #[test]
    fn a_searched_neighbour_taken_is_caught() {
        planted::NEIGHBOUR_TAKEN.set(true);
        let caught = (0..500).filter(|&seed| !agrees(&claimed(seed))).count();
        planted::NEIGHBOUR_TAKEN.set(false);
        println!("a searched neighbour taken caught in {caught} of 500");
        assert!(caught >= 20, "only {caught} caught");
    }

    #[test]
    fn a_guessed_subscription_taken_unchecked_is_caught() {
        planted::GUESS_TRUSTED.set(true);
        let caught = (0..500).filter(|&seed| !agrees(&claimed(seed))).count();
        planted::GUESS_TRUSTED.set(false);
        println!("a guessed subscription taken unchecked caught in {caught} of 500");
        assert!(caught >= 50, "only {caught} caught");
    }
}
