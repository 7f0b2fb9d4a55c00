//! Generators of valid group specs and of group events, from any source of choices.
//!
//! One generator serves the fuzz target (choices read from the fuzzer's bytes through
//! [`arbitrary::Unstructured`]) and the property suites (choices from a seeded
//! [`SplitMix64`], so large groups need no large byte strings). Every spec produced passes
//! [`GroupSpec::validate`]; it may still hold everything the spec format tolerates: unknown
//! subscriptions, claims of unknown topics, out-of-range or non-subscribed claims, stale and
//! conflicting claims.

use rebalance::{GroupSpec, MemberSpec, OwnedPartitions, TopicSpec};

/// A source of bounded choices.
pub trait Choices {
    /// A number in `0..n` (`0` when `n == 0` or the source is exhausted).
    fn below(&mut self, n: u32) -> u32;

    /// True with probability about `num / den`.
    fn chance(&mut self, num: u32, den: u32) -> bool {
        self.below(den) < num
    }
}

impl Choices for arbitrary::Unstructured<'_> {
    fn below(&mut self, n: u32) -> u32 {
        if n <= 1 {
            return 0;
        }
        self.int_in_range(0..=n - 1).unwrap_or(0)
    }
}

/// A small, seeded pseudo-random source (SplitMix64): reproducible from its seed alone.
#[derive(Clone, Debug)]
pub struct SplitMix64(pub u64);

impl Choices for SplitMix64 {
    fn below(&mut self, n: u32) -> u32 {
        if n <= 1 {
            return 0;
        }
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z % u64::from(n)) as u32
    }
}

/// Size limits of generated specs.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    /// At most this many members (at least one is generated).
    pub members: u32,
    /// At most this many topics (at least one).
    pub topics: u32,
    /// At most this many partitions per topic.
    pub partitions: u32,
    /// How many distinct rack names exist (0: no racks at all).
    pub racks: u32,
}

impl Bounds {
    /// Groups small enough for the brute-force oracle.
    pub const TINY: Bounds = Bounds {
        members: 3,
        topics: 3,
        partitions: 3,
        racks: 2,
    };
}

/// A valid group spec within `bounds`.
pub fn spec(c: &mut impl Choices, bounds: &Bounds) -> GroupSpec {
    let topic_count = 1 + c.below(bounds.topics.max(1));
    let member_count = 1 + c.below(bounds.members.max(1));
    let rack_aware = c.chance(1, 2);
    let topics: Vec<TopicSpec> = (0..topic_count)
        .map(|t| {
            let partitions = c.below(bounds.partitions + 1);
            let replica_racks = (bounds.racks > 0 && c.chance(3, 4))
                .then(|| (0..partitions).map(|_| rack_set(c, bounds.racks)).collect());
            TopicSpec {
                name: format!("t{t}"),
                partitions: i64::from(partitions),
                replica_racks,
            }
        })
        .collect();
    let members = (0..member_count)
        .map(|m| member(c, bounds, &topics, format!("m{m:03}")))
        .collect();
    let mut spec = GroupSpec {
        rack_aware,
        topics,
        members,
    };
    shuffle(c, &mut spec.members);
    shuffle(c, &mut spec.topics);
    spec
}

fn rack_set(c: &mut impl Choices, racks: u32) -> Vec<String> {
    (0..racks)
        .filter(|_| c.chance(1, 2))
        .map(|r| format!("r{r}"))
        .collect()
}

fn member(c: &mut impl Choices, bounds: &Bounds, topics: &[TopicSpec], id: String) -> MemberSpec {
    let mut subscriptions: Vec<String> = topics
        .iter()
        .filter(|_| c.chance(2, 3))
        .map(|t| t.name.clone())
        .collect();
    if c.chance(1, 16) {
        subscriptions.push("ghost".to_owned());
    }
    shuffle(c, &mut subscriptions);
    let rack = (bounds.racks > 0 && c.chance(3, 4)).then(|| format!("r{}", c.below(bounds.racks)));
    let mut owned = Vec::new();
    for t in topics {
        if c.chance(1, 2) {
            let n = t.partitions as u32;
            let partitions: Vec<i32> = (0..n + 1)
                .filter(|_| c.chance(1, 3))
                .map(|p| p as i32)
                .collect();
            if !partitions.is_empty() {
                owned.push(OwnedPartitions {
                    topic: t.name.clone(),
                    partitions,
                });
            }
        }
    }
    if c.chance(1, 16) {
        owned.push(OwnedPartitions {
            topic: "ghost".to_owned(),
            partitions: vec![0],
        });
    }
    MemberSpec {
        id,
        rack,
        subscriptions,
        owned,
        generation: c.below(4) as i32 - 1,
    }
}

fn shuffle<T>(c: &mut impl Choices, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        let j = c.below(i as u32 + 1) as usize;
        items.swap(i, j);
    }
}

/// A change to a group between two rebalances.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// Nothing changed: the next rebalance must return the same assignment.
    Nothing,
    /// A new member joins with these subscriptions and rack.
    Join {
        /// Its id.
        id: String,
        /// Its subscriptions.
        subscriptions: Vec<String>,
        /// Its rack.
        rack: Option<String>,
    },
    /// The member at this position (modulo the member count) leaves.
    Leave(u32),
    /// The member at this position toggles its subscription to the topic at that position.
    ToggleSubscription {
        /// Member position (modulo the member count).
        member: u32,
        /// Topic position (modulo the topic count).
        topic: u32,
    },
    /// The topic at this position gains partitions (with replicas on every rack, if tracked).
    AddPartitions {
        /// Topic position (modulo the topic count).
        topic: u32,
        /// How many partitions are added.
        count: u32,
    },
    /// The member at this position moves to another rack (or loses its rack).
    MoveRack {
        /// Member position (modulo the member count).
        member: u32,
        /// The new rack.
        rack: Option<String>,
    },
}

/// A random event within `bounds` (new member ids are `j<serial>`).
pub fn event(c: &mut impl Choices, bounds: &Bounds, topics: u32, serial: u32) -> Event {
    let rack = |c: &mut dyn FnMut(u32) -> u32| {
        (bounds.racks > 0 && c(4) != 0).then(|| format!("r{}", c(bounds.racks)))
    };
    match c.below(6) {
        0 => Event::Nothing,
        1 => Event::Join {
            id: format!("j{serial:04}"),
            subscriptions: (0..topics)
                .filter(|_| c.chance(2, 3))
                .map(|t| format!("t{t}"))
                .collect(),
            rack: rack(&mut |n| c.below(n)),
        },
        2 => Event::Leave(c.below(u32::MAX)),
        3 => Event::ToggleSubscription {
            member: c.below(u32::MAX),
            topic: c.below(topics.max(1)),
        },
        4 => Event::AddPartitions {
            topic: c.below(topics.max(1)),
            count: 1 + c.below(bounds.partitions.clamp(1, 8)),
        },
        _ => Event::MoveRack {
            member: c.below(u32::MAX),
            rack: rack(&mut |n| c.below(n)),
        },
    }
}

/// Applies `event` to `spec` (topics and members addressed in sorted order). The spec stays
/// valid; an event that does not apply (no member to remove) leaves it unchanged.
pub fn apply(spec: &mut GroupSpec, event: &Event, racks: u32) {
    spec.members.sort_by(|a, b| a.id.cmp(&b.id));
    spec.topics.sort_by(|a, b| a.name.cmp(&b.name));
    let members = spec.members.len() as u32;
    let topics = spec.topics.len() as u32;
    match event {
        Event::Nothing => {}
        Event::Join {
            id,
            subscriptions,
            rack,
        } => {
            if spec.members.iter().all(|m| &m.id != id) {
                spec.members.push(MemberSpec {
                    id: id.clone(),
                    rack: rack.clone(),
                    subscriptions: subscriptions.clone(),
                    owned: Vec::new(),
                    generation: -1,
                });
            }
        }
        Event::Leave(i) if members > 1 => {
            spec.members.remove((i % members) as usize);
        }
        Event::Leave(_) => {}
        Event::ToggleSubscription { member, topic } if members > 0 && topics > 0 => {
            let name = spec.topics[(topic % topics) as usize].name.clone();
            let subs = &mut spec.members[(member % members) as usize].subscriptions;
            if subs.contains(&name) {
                subs.retain(|s| s != &name);
            } else {
                subs.push(name);
            }
        }
        Event::ToggleSubscription { .. } => {}
        Event::AddPartitions { topic, count } if topics > 0 => {
            let t = &mut spec.topics[(topic % topics) as usize];
            t.partitions += i64::from(*count);
            if let Some(rr) = &mut t.replica_racks {
                let all: Vec<String> = (0..racks).map(|r| format!("r{r}")).collect();
                rr.extend((0..*count).map(|_| all.clone()));
            }
        }
        Event::AddPartitions { .. } => {}
        Event::MoveRack { member, rack } if members > 0 => {
            spec.members[(member % members) as usize].rack = rack.clone();
        }
        Event::MoveRack { .. } => {}
    }
}
