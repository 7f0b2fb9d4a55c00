//! The checker's own reading of a [`GroupSpec`]: who subscribes to what, which partitions are
//! rack-aligned with which member, and who owned each partition before.
//!
//! Everything here is recomputed from the definitions in the core's `assignor` module docs,
//! without calling any of the core's assignor code, so that a misreading of the spec by the
//! assignor shows up as a disagreement instead of being shared.

use std::collections::{BTreeMap, BTreeSet};

use rebalance::{GroupSpec, SpecError};

/// One topic that exists in the spec, with its subscribers.
#[derive(Clone, Debug)]
pub struct TopicView {
    /// The topic's name.
    pub name: String,
    /// Its partition count (`0..=2^24` once the spec is valid).
    pub partitions: u32,
    /// Indices (into [`Problem::members`]) of its subscribers, ascending by member id.
    pub subscribers: Vec<usize>,
    /// Per partition, the racks holding one of its replicas (empty sets without `replica_racks`).
    pub replica_racks: Vec<BTreeSet<String>>,
    /// Per partition, the index of its previous owner (see [`Problem::from_spec`]).
    pub previous_owner: Vec<Option<usize>>,
}

impl TopicView {
    /// The fewest partitions of this topic that spread allows per subscriber.
    #[must_use]
    pub fn spread_min(&self) -> u32 {
        match self.subscribers.len() {
            0 => 0,
            n => self.partitions / n as u32,
        }
    }

    /// The most partitions of this topic that spread allows per subscriber.
    #[must_use]
    pub fn spread_max(&self) -> u32 {
        match self.subscribers.len() {
            0 => 0,
            n => self.partitions.div_ceil(n as u32),
        }
    }
}

/// One member of the spec.
#[derive(Clone, Debug)]
pub struct MemberView {
    /// The member's id.
    pub id: String,
    /// Its rack, if any.
    pub rack: Option<String>,
    /// Indices (into [`Problem::topics`]) of the existing topics it subscribes to, ascending.
    pub topics: Vec<usize>,
}

/// A spec normalised for checking: members sorted by id, topics sorted by name.
#[derive(Clone, Debug)]
pub struct Problem {
    /// Whether objective 4 (rack alignment) is in force.
    pub rack_aware: bool,
    /// The members, ascending by id.
    pub members: Vec<MemberView>,
    /// The topics, ascending by name.
    pub topics: Vec<TopicView>,
}

impl Problem {
    /// Reads a spec. Validates it first (duplicates, partition counts, replica rack lengths).
    ///
    /// The previous owner of a partition is the one member with the highest `generation` among
    /// those whose `owned` lists it, counting only claims of existing topics the member still
    /// subscribes to and partitions in range; a tie at the highest generation leaves the
    /// partition with no previous owner. A member listing a partition twice claims it once.
    ///
    /// # Errors
    /// The spec's own [`SpecError`] when it is not valid.
    pub fn from_spec(spec: &GroupSpec) -> Result<Problem, SpecError> {
        spec.validate()?;
        let mut topic_names: Vec<&str> = spec.topics.iter().map(|t| t.name.as_str()).collect();
        topic_names.sort_unstable();
        let topic_index: BTreeMap<&str, usize> = topic_names
            .iter()
            .enumerate()
            .map(|(i, n)| (*n, i))
            .collect();
        let mut member_specs: Vec<_> = spec.members.iter().collect();
        member_specs.sort_by(|a, b| a.id.cmp(&b.id));

        let mut topics: Vec<TopicView> = topic_names
            .iter()
            .map(|name| {
                let t = spec
                    .topics
                    .iter()
                    .find(|t| t.name == *name)
                    .expect("listed");
                // `validate` bounds the count to 0..=2^24.
                let partitions = u32::try_from(t.partitions).unwrap_or(0);
                let replica_racks = match &t.replica_racks {
                    Some(racks) => racks.iter().map(|r| r.iter().cloned().collect()).collect(),
                    None => vec![BTreeSet::new(); partitions as usize],
                };
                TopicView {
                    name: (*name).to_owned(),
                    partitions,
                    subscribers: Vec::new(),
                    replica_racks,
                    previous_owner: vec![None; partitions as usize],
                }
            })
            .collect();

        let mut members = Vec::with_capacity(member_specs.len());
        for (m, spec_member) in member_specs.iter().enumerate() {
            let subscribed: BTreeSet<usize> = spec_member
                .subscriptions
                .iter()
                .filter_map(|s| topic_index.get(s.as_str()).copied())
                .collect();
            for &t in &subscribed {
                topics[t].subscribers.push(m);
            }
            members.push(MemberView {
                id: spec_member.id.clone(),
                rack: spec_member.rack.clone(),
                topics: subscribed.into_iter().collect(),
            });
        }

        // Claims per partition: (generation, claimant), each claimant once.
        let mut claims: BTreeMap<(usize, u32), BTreeMap<usize, i32>> = BTreeMap::new();
        for (m, spec_member) in member_specs.iter().enumerate() {
            for owned in &spec_member.owned {
                let Some(&t) = topic_index.get(owned.topic.as_str()) else {
                    continue;
                };
                if !members[m].topics.contains(&t) {
                    continue;
                }
                for &p in &owned.partitions {
                    if let Ok(p) = u32::try_from(p)
                        && p < topics[t].partitions
                    {
                        claims
                            .entry((t, p))
                            .or_default()
                            .insert(m, spec_member.generation);
                    }
                }
            }
        }
        for ((t, p), claimants) in claims {
            let Some(&best) = claimants.values().max() else {
                continue;
            };
            let mut at_best = claimants.iter().filter(|(_, g)| **g == best);
            if let (Some((&m, _)), None) = (at_best.next(), at_best.next()) {
                topics[t].previous_owner[p as usize] = Some(m);
            }
        }
        Ok(Problem {
            rack_aware: spec.rack_aware,
            members,
            topics,
        })
    }

    /// Whether giving partition `p` of topic `t` to member `m` counts as rack-aligned: rack
    /// awareness is on, the member has a rack, and that rack holds one of the partition's
    /// replicas.
    #[must_use]
    pub fn aligned(&self, t: usize, p: u32, m: usize) -> bool {
        self.rack_aware
            && self.members[m]
                .rack
                .as_ref()
                .is_some_and(|r| self.topics[t].replica_racks[p as usize].contains(r))
    }

    /// How many partitions must be assigned: those of topics with at least one subscriber.
    #[must_use]
    pub fn assignable(&self) -> u64 {
        self.topics
            .iter()
            .filter(|t| !t.subscribers.is_empty())
            .map(|t| u64::from(t.partitions))
            .sum()
    }

    /// The index of the member with this id.
    #[must_use]
    pub fn member_index(&self, id: &str) -> Option<usize> {
        self.members
            .binary_search_by(|m| m.id.as_str().cmp(id))
            .ok()
    }

    /// The index of the topic with this name.
    #[must_use]
    pub fn topic_index(&self, name: &str) -> Option<usize> {
        self.topics
            .binary_search_by(|t| t.name.as_str().cmp(name))
            .ok()
    }
}

/// The values of objectives 3–5 for one assignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Objectives {
    /// Σ over members of load², where load is a member's total partition count.
    pub sum_load_sq: u64,
    /// Partitions assigned to a member in one of their replica racks (0 unless rack-aware).
    pub rack_aligned: u64,
    /// Partitions assigned to their previous owner.
    pub retained: u64,
}

impl Objectives {
    /// Whether `self` is lexicographically better than `other`: smaller Σload², then more
    /// rack-aligned, then more retained.
    #[must_use]
    pub fn better_than(&self, other: &Objectives) -> bool {
        self.key() < other.key()
    }

    fn key(&self) -> (u64, std::cmp::Reverse<u64>, std::cmp::Reverse<u64>) {
        (
            self.sum_load_sq,
            std::cmp::Reverse(self.rack_aligned),
            std::cmp::Reverse(self.retained),
        )
    }
}

/// A complete assignment in index form: per topic, per partition, the member index.
pub type Owners = Vec<Vec<usize>>;

/// The objectives of a complete, valid assignment in index form.
#[must_use]
pub fn objectives(problem: &Problem, owners: &Owners) -> Objectives {
    let mut loads = vec![0u64; problem.members.len()];
    let mut out = Objectives::default();
    for (t, topic) in problem.topics.iter().enumerate() {
        for (p, &m) in owners[t].iter().enumerate() {
            loads[m] += 1;
            if problem.aligned(t, p as u32, m) {
                out.rack_aligned += 1;
            }
            if topic.previous_owner[p] == Some(m) {
                out.retained += 1;
            }
        }
    }
    out.sum_load_sq = loads.iter().map(|l| l * l).sum();
    out
}
