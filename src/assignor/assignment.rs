//! The output of an assignor, stored flat.
//!
//! With spread, an assignment has an entry per (member, subscribed topic): 50,000 lists for
//! 1,000 members over 100 topics at 50 partitions each. A map of maps allocates a topic name
//! and a list for each; this form keeps four arrays (topic names, members, topic runs,
//! partitions), so that building and dropping an assignment costs a few allocations per
//! member rather than two per list.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Deserialize, Serialize};

use super::SpecError;
use crate::ids::MemberId;

/// Member id → topic → partitions as plain ordered maps: the form to build or edit an
/// assignment by hand (tests, checkers, other assignors). Converts both ways with
/// [`Assignment`] (`From` and [`Assignment::to_map`]) without changing its content.
pub type AssignmentMap = BTreeMap<MemberId, BTreeMap<String, Vec<i32>>>;

/// The result of an assignor: for every member of the spec (even those given nothing), the
/// partitions it gets, by topic. Members iterate by id and topics by name; each list keeps the
/// order it was given in (the assignors give them ascending, and leave out topics with no
/// partitions for a member).
///
/// Serialises as `{"assignment": {"A": {"T1": [0, 1]}, "B": {}}}`. Two assignments are equal
/// exactly when their [maps](Assignment::to_map) are.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Assignment {
    /// The names of the topics that occur, ascending and distinct, one after the other.
    topic_names: String,
    /// Where each topic's name ends in `topic_names`, by topic index.
    topic_ends: Vec<u32>,
    /// Members ascending by id, each with the end of its runs in `runs`.
    members: Vec<(MemberId, u32)>,
    /// Per member, ascending by topic: (topic index, end of its list in `partitions`).
    runs: Vec<(u32, u32)>,
    /// Every list, one after the other.
    partitions: Vec<i32>,
}

/// One member's part of an [`Assignment`]: its topics (by name) and their partition lists.
#[derive(Clone, Copy)]
pub struct MemberTopics<'a> {
    assignment: &'a Assignment,
    /// Indices into the assignment's runs: `start..end`.
    start: usize,
    end: usize,
}

impl Assignment {
    /// The number of members.
    #[must_use]
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether there are no members.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The members, ascending by id, with their topics.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&MemberId, MemberTopics<'_>)> + '_ {
        (0..self.members.len()).map(|i| (&self.members[i].0, self.topics_of(i)))
    }

    /// The member ids, ascending.
    pub fn member_ids(&self) -> impl ExactSizeIterator<Item = &MemberId> + '_ {
        self.members.iter().map(|(id, _)| id)
    }

    /// The topics of the member `id`, or `None` if it is not in the assignment.
    #[must_use]
    pub fn member(&self, id: &str) -> Option<MemberTopics<'_>> {
        self.members
            .binary_search_by(|(m, _)| m.as_str().cmp(id))
            .ok()
            .map(|i| self.topics_of(i))
    }

    /// The partitions of `topic` assigned to the member `id`, if any list is there.
    #[must_use]
    pub fn partitions(&self, id: &str, topic: &str) -> Option<&[i32]> {
        self.member(id)?.get(topic)
    }

    /// The same content as ordered maps.
    #[must_use]
    pub fn to_map(&self) -> AssignmentMap {
        self.iter()
            .map(|(id, topics)| {
                let lists = topics
                    .iter()
                    .map(|(t, parts)| (t.to_owned(), parts.to_vec()))
                    .collect();
                (id.clone(), lists)
            })
            .collect()
    }

    /// The assignment as compact JSON in the documented output format.
    #[must_use]
    pub fn to_json(&self) -> String {
        // Strings and integer lists always serialise.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Parses an assignment from its JSON format.
    ///
    /// # Errors
    /// [`SpecError::Json`] with the line and column of malformed input.
    pub fn from_json(text: &str) -> Result<Assignment, SpecError> {
        serde_json::from_str(text).map_err(|e| SpecError::Json {
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })
    }

    fn topics_of(&self, i: usize) -> MemberTopics<'_> {
        let start = if i == 0 { 0 } else { self.members[i - 1].1 };
        MemberTopics {
            assignment: self,
            start: start as usize,
            end: self.members[i].1 as usize,
        }
    }

    /// The name of topic `t` (an index into `topic_ends`).
    fn topic(&self, t: u32) -> &str {
        let t = t as usize;
        let start = if t == 0 { 0 } else { self.topic_ends[t - 1] };
        // Every range lies on the boundaries of whole names, pushed one after the other.
        self.topic_names
            .get(start as usize..self.topic_ends[t] as usize)
            .unwrap_or_default()
    }

    /// Appends a topic name, the next topic index.
    fn push_topic(&mut self, name: &str) {
        self.topic_names.push_str(name);
        self.topic_ends.push(self.topic_names.len() as u32);
    }

    /// Builds an assignment from members given ascending by id (`ids`), each with its pairs
    /// `(topic index, partition)` in `lists` (in the same order), in any order, where topic
    /// indices number the `topics` names given by `name` (ascending and distinct) in order:
    /// each member's pairs are sorted (by topic, then partition, sorting `lists` in place
    /// where needed) and cut into one list per topic, and only the topics that occur are
    /// kept. `partitions` is the total number of pairs (room reserved up front; any value is
    /// correct).
    pub(crate) fn from_pairs<'n>(
        topics: usize,
        name: impl Fn(usize) -> &'n str,
        ids: impl Iterator<Item = MemberId>,
        lists: &mut [Vec<(u32, i32)>],
        partitions: usize,
    ) -> Assignment {
        let mut out = Assignment::default();
        // The ids first, all of them: each is an allocation, and allocating them while the
        // lists are still held (freed by the caller afterwards) is cheaper than interleaving
        // small allocations with freeing the lists.
        out.members.reserve_exact(lists.len());
        out.members.extend(ids.map(|id| (id, 0)));
        debug_assert!(out.members.is_sorted_by(|(a, _), (b, _)| a < b));
        out.partitions.reserve_exact(partitions);
        // At most one run per partition; with spread most members hold one partition of
        // each of their topics, so this is close, and growing it by doubling cost copies.
        out.runs.reserve_exact(partitions);
        let mut used = vec![u32::MAX; topics];
        for (m, list) in lists.iter_mut().enumerate() {
            let (first_run, start) = (out.runs.len(), out.partitions.len());
            if !out.append_sorted(&mut used, list) {
                // Rare: the assignors give their pairs sorted.
                out.runs.truncate(first_run);
                out.partitions.truncate(start);
                list.sort_unstable();
                out.append_sorted(&mut used, list);
            }
            if let Some(member) = out.members.get_mut(m) {
                member.1 = out.runs.len() as u32;
            }
        }
        // A member without a list (fewer lists than ids) has none.
        out.members.truncate(lists.len());
        // Number the topics that occur, in name order, and renumber the runs.
        let (count, bytes) = used
            .iter()
            .enumerate()
            .filter(|&(_, &slot)| slot == 0)
            .fold((0, 0), |(c, b), (t, _)| (c + 1, b + name(t).len()));
        out.topic_ends.reserve_exact(count);
        out.topic_names.reserve_exact(bytes);
        for (t, slot) in used.iter_mut().enumerate() {
            if *slot == 0 {
                *slot = out.topic_ends.len() as u32;
                out.push_topic(name(t));
            }
        }
        // When every topic occurs, topic t is numbered t: the runs are numbered already.
        #[cfg(test)]
        let renumber = count < topics && !planted::IDENTITY_SKIPPED.get();
        #[cfg(not(test))]
        let renumber = count < topics;
        if renumber {
            for run in &mut out.runs {
                run.0 = used[run.0 as usize];
            }
        }
        if out.runs.len() < out.runs.capacity() / 2 {
            out.runs.shrink_to_fit();
        }
        out
    }

    /// Appends the runs and partitions of `list` and marks its topics in `used` (with 0), as
    /// long as `list` is sorted (by topic, then partition); returns whether it is. When it is
    /// not, what was appended is to be cut off and `list` sorted first.
    fn append_sorted(&mut self, used: &mut [u32], list: &[(u32, i32)]) -> bool {
        let start = self.partitions.len() as u32;
        // With spread a member mostly holds one partition of each of its topics: a prefix of
        // one pair per topic is cut without looking for where runs end.
        let single = one_per_topic(list, used);
        let Some(&(mut current, mut last)) = single.checked_sub(1).map(|i| &list[i]) else {
            return true;
        };
        // Enumerated rather than zipped with a range of ends: a range's steps are checked for
        // overflow one by one.
        self.runs.extend(
            list[..single - 1]
                .iter()
                .enumerate()
                .map(|(i, &(t, _))| (t, start + 1 + i as u32)),
        );
        if single < list.len() {
            // Written in place rather than pushed: a push checks capacity and stores the
            // length each time. At most one run per remaining pair before the last run.
            let first = self.runs.len();
            self.runs.resize(first + list.len() - single, (0, 0));
            let runs = &mut self.runs[first..];
            let mut k = 0;
            let base = start + single as u32;
            for (i, &(t, p)) in list[single..].iter().enumerate() {
                if t != current {
                    if t < current {
                        return false;
                    }
                    let end = base + i as u32;
                    runs[k] = (current, end);
                    k += 1;
                    used[t as usize] = 0;
                    current = t;
                } else if p < last {
                    return false;
                }
                last = p;
            }
            self.runs.truncate(first + k);
        }
        self.runs.push((current, start + list.len() as u32));
        self.partitions.extend(list.iter().map(|&(_, p)| p));
        true
    }
}

/// Marks the topics of `list` in `used` (with 0) for as long as they strictly increase, and
/// returns for how many pairs they do (from the first; none only for an empty list).
#[inline]
fn one_per_topic(list: &[(u32, i32)], used: &mut [u32]) -> usize {
    let Some((&(mut last, _), rest)) = list.split_first() else {
        return 0;
    };
    used[last as usize] = 0;
    #[cfg(test)]
    if planted::REPEATS_UNSEEN.get() {
        let mut n = 1;
        for &(t, _) in rest {
            if t < last {
                break;
            }
            used[t as usize] = 0;
            last = t;
            n += 1;
        }
        return n;
    }
    for (i, &(t, _)) in rest.iter().enumerate() {
        if t <= last {
            return i + 1;
        }
        used[t as usize] = 0;
        last = t;
    }
    list.len()
}

/// Faults a test may plant on its thread, to show the tests catch them.
#[cfg(test)]
pub(crate) mod planted {
    thread_local! {
        /// [`super::Assignment::from_pairs`] keeps the runs' topic indices even when some
        /// topic does not occur.
        pub(crate) static IDENTITY_SKIPPED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        /// [`super::Assignment::from_pairs`] takes pairs sorted by topic, repeats included,
        /// for one pair per topic.
        pub(crate) static REPEATS_UNSEEN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
}

impl From<AssignmentMap> for Assignment {
    fn from(map: AssignmentMap) -> Assignment {
        let names: BTreeSet<&str> = map
            .values()
            .flat_map(|topics| topics.keys().map(String::as_str))
            .collect();
        let names: Vec<&str> = names.into_iter().collect();
        let mut out = Assignment::default();
        for name in &names {
            out.push_topic(name);
        }
        for (id, topics) in &map {
            for (t, parts) in topics {
                // Every name is in the table: it was collected from these maps.
                let t = names.binary_search(&t.as_str()).map_or(0, |i| i as u32);
                out.partitions.extend_from_slice(parts);
                out.runs.push((t, out.partitions.len() as u32));
            }
            out.members.push((id.clone(), out.runs.len() as u32));
        }
        out
    }
}

impl<'a> MemberTopics<'a> {
    /// The topics, ascending by name, each with its partition list.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&'a str, &'a [i32])> + use<'a> {
        let a = self.assignment;
        (self.start..self.end).map(move |r| {
            let start = if r == 0 { 0 } else { a.runs[r - 1].1 };
            let (t, end) = a.runs[r];
            (a.topic(t), &a.partitions[start as usize..end as usize])
        })
    }

    /// The partition list of `topic`, if the member has one.
    #[must_use]
    pub fn get(&self, topic: &str) -> Option<&'a [i32]> {
        self.iter()
            .find(|&(t, _)| t == topic)
            .map(|(_, parts)| parts)
    }

    /// The number of topics with a list.
    #[must_use]
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// Whether the member has no list at all.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }

    /// The total number of partitions over all its lists.
    #[must_use]
    pub fn partition_count(&self) -> usize {
        self.iter().map(|(_, parts)| parts.len()).sum()
    }
}

impl fmt::Debug for MemberTopics<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl fmt::Debug for Assignment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for MemberTopics<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.len()))?;
        for (t, parts) in self.iter() {
            map.serialize_entry(t, parts)?;
        }
        map.end()
    }
}

/// The members' map, the one field of the JSON form.
struct Members<'a>(&'a Assignment);

impl Serialize for Members<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (id, topics) in self.0.iter() {
            map.serialize_entry(id, &topics)?;
        }
        map.end()
    }
}

impl Serialize for Assignment {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut outer = s.serialize_struct("Assignment", 1)?;
        outer.serialize_field("assignment", &Members(self))?;
        outer.end()
    }
}

/// The JSON form as read.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Wire {
    assignment: AssignmentMap,
}

impl<'de> Deserialize<'de> for Assignment {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Assignment, D::Error> {
        Wire::deserialize(d).map(|w| Assignment::from(w.assignment))
    }
}

impl<'a> IntoIterator for &'a Assignment {
    type Item = (&'a MemberId, MemberTopics<'a>);
    type IntoIter = Box<dyn ExactSizeIterator<Item = Self::Item> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> AssignmentMap {
        let mut map = AssignmentMap::new();
        map.insert(
            MemberId::from("B"),
            [("T2".to_owned(), vec![3, 1]), ("T1".to_owned(), vec![0])]
                .into_iter()
                .collect(),
        );
        map.insert(MemberId::from("A"), BTreeMap::new());
        map.insert(
            MemberId::from("C"),
            [("T1".to_owned(), vec![2]), ("T0".to_owned(), vec![])]
                .into_iter()
                .collect(),
        );
        map
    }

    #[test]
    fn the_map_round_trips_with_its_order_and_empty_lists() {
        let map = sample();
        let a = Assignment::from(map.clone());
        assert_eq!(a.to_map(), map);
        assert_eq!(a.len(), 3);
        assert_eq!(a.partitions("B", "T2"), Some(&[3, 1][..]));
        assert_eq!(a.partitions("C", "T0"), Some(&[][..]));
        assert_eq!(a.partitions("C", "T2"), None);
        assert!(a.member("A").is_some_and(|t| t.is_empty()));
        assert!(a.member("D").is_none());
        assert_eq!(a.member("B").map(|t| t.partition_count()), Some(3));
        let ids: Vec<&str> = a.member_ids().map(MemberId::as_str).collect();
        assert_eq!(ids, ["A", "B", "C"]);
        assert!(!a.is_empty());
        assert!(Assignment::default().is_empty());
        let sizes: Vec<(usize, bool)> = (&a)
            .into_iter()
            .map(|(_, t)| (t.len(), t.is_empty()))
            .collect();
        assert_eq!(sizes, [(0, true), (2, false), (2, false)]);
        assert_eq!(
            format!("{a:?}"),
            r#"{MemberId("A"): {}, MemberId("B"): {"T1": [0], "T2": [3, 1]}, MemberId("C"): {"T0": [], "T1": [2]}}"#
        );
    }

    #[test]
    fn json_is_the_documented_format_and_parses_back() {
        let a = Assignment::from(sample());
        let json = a.to_json();
        assert_eq!(
            json,
            r#"{"assignment":{"A":{},"B":{"T1":[0],"T2":[3,1]},"C":{"T0":[],"T1":[2]}}}"#
        );
        assert_eq!(Assignment::from_json(&json).ok(), Some(a));
    }

    #[test]
    fn equality_is_equality_of_content() {
        let a = Assignment::from(sample());
        let mut other = sample();
        other
            .get_mut(&MemberId::from("B"))
            .map(|t| t.insert("T2".to_owned(), vec![1, 3]));
        assert_ne!(Assignment::from(other), a);
        // Built flat from topic indices, with an unused topic name in the table; pairs out
        // of order are sorted.
        let names = ["T0", "T1", "T2", "T9"];
        let flat = Assignment::from_pairs(
            names.len(),
            |t| names[t],
            ["A", "B", "C"].into_iter().map(MemberId::from),
            &mut [vec![], vec![(2, 3), (1, 0), (2, 1)], vec![(1, 2)]],
            4,
        );
        let mut without_empty = sample();
        without_empty
            .get_mut(&MemberId::from("C"))
            .map(|t| t.remove("T0"));
        without_empty
            .get_mut(&MemberId::from("B"))
            .map(|t| t.insert("T2".to_owned(), vec![1, 3]));
        assert_eq!(flat, Assignment::from(without_empty));
        assert_ne!(flat, a);
    }

    /// Random pairs over random names (some never used, anywhere in the table), sorted or
    /// not, built flat and through the ordered maps: equal when they should be.
    fn disagreements(seed: u64) -> usize {
        let mut rng = crate::assignor::tests::Rng(seed);
        let mut wrong = 0;
        for _ in 0..200 {
            let names: Vec<String> = (0..1 + rng.below(6)).map(|t| format!("T{t}")).collect();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let members: Vec<(MemberId, Vec<(u32, i32)>)> = (0..rng.below(5))
                .map(|m| {
                    let mut pairs: Vec<(u32, i32)> = (0..rng.below(8))
                        .map(|_| {
                            (
                                rng.below(names.len() as u64) as u32,
                                rng.below(9) as i32 - 2,
                            )
                        })
                        .collect();
                    pairs.sort_unstable();
                    pairs.dedup();
                    if rng.below(2) == 0 {
                        pairs.reverse();
                    }
                    (MemberId(format!("M{m}")), pairs)
                })
                .collect();
            let mut map = AssignmentMap::new();
            for (id, pairs) in &members {
                let mut sorted = pairs.clone();
                sorted.sort_unstable();
                let lists = map.entry(id.clone()).or_default();
                for &(t, p) in &sorted {
                    lists
                        .entry(names[t as usize].to_owned())
                        .or_default()
                        .push(p);
                }
            }
            let total = members.iter().map(|(_, pairs)| pairs.len()).sum();
            let (ids, mut lists): (Vec<MemberId>, Vec<_>) = members.into_iter().unzip();
            let flat = Assignment::from_pairs(
                names.len(),
                |t| names[t],
                ids.into_iter(),
                &mut lists,
                total,
            );
            wrong += usize::from(flat != Assignment::from(map));
        }
        wrong
    }

    #[test]
    fn pairs_build_the_assignment_of_their_sorted_lists() {
        assert_eq!(disagreements(0xf1a7), 0);
    }

    #[test]
    fn a_repeated_topic_taken_for_one_pair_per_topic_is_caught() {
        planted::REPEATS_UNSEEN.set(true);
        let wrong = disagreements(0xf1a7);
        planted::REPEATS_UNSEEN.set(false);
        println!("a repeated topic taken for one pair per topic: {wrong} of 200 differ");
        assert!(wrong >= 20, "only {wrong} differ");
    }

    #[test]
    fn keeping_topic_indices_with_a_topic_unused_is_caught() {
        planted::IDENTITY_SKIPPED.set(true);
        let wrong = disagreements(0xf1a7);
        planted::IDENTITY_SKIPPED.set(false);
        println!("topic indices kept with a topic unused: {wrong} of 200 differ");
        assert!(wrong >= 20, "only {wrong} differ");
    }
}
