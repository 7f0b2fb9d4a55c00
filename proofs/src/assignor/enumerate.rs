//! Small-scope enumeration: every group spec within a [`Scope`], one input order each.
//!
//! Members are `A`, `B`, `C`, … (listed in that order), topics `T1`, `T2`, … with partitions
//! numbered from 0, racks `r1` and `r2`. Within a scope every combination of the enumerated
//! dimensions is produced exactly once:
//!
//! - the number of members and topics, each topic's partition count;
//! - every subscription pattern (each member: any subset of the topics);
//! - with `racks`: each member without a rack, in `r1` or in `r2`; each topic without
//!   `replica_racks` or with any subset of `{r1, r2}` per partition; rack awareness on;
//! - with `claims`: for every partition, any set of claimants (subscribed or not), and every
//!   member at generation 1 or 2 — so claims are unique, conflicting (same generation) or stale
//!   (lower generation) in every combination. Every claimant also claims one out-of-range
//!   partition of each topic it claims, and `A` claims a partition of a topic that does not
//!   exist: both must be ignored.
//!
//! Input order is not enumerated: the determinism check runs a reordered copy of every group.

use rebalance::{GroupSpec, MemberSpec, OwnedPartitions, TopicSpec};

/// The bounds of one exhaustive family.
#[derive(Clone, Debug)]
pub struct Scope {
    /// A short name for reports.
    pub name: &'static str,
    /// Groups of 1 to this many members.
    pub members: u32,
    /// Groups of 1 to this many topics.
    pub topics: u32,
    /// Each topic has `partitions.0..=partitions.1` partitions.
    pub partitions: (u32, u32),
    /// Shapes with more partitions in total are skipped.
    pub max_total_partitions: u32,
    /// Enumerate member racks and replica racks (with rack awareness on).
    pub racks: bool,
    /// Enumerate claims and generations.
    pub claims: bool,
}

const RACKS: [&str; 2] = ["r1", "r2"];

/// Calls `f` with every mixed-radix number of the given radices, in order.
fn odometer(radices: &[u64], mut f: impl FnMut(&[u64])) {
    let mut digits = vec![0u64; radices.len()];
    if radices.contains(&0) {
        return;
    }
    loop {
        f(&digits);
        let mut i = 0;
        loop {
            if i == digits.len() {
                return;
            }
            digits[i] += 1;
            if digits[i] < radices[i] {
                break;
            }
            digits[i] = 0;
            i += 1;
        }
    }
}

/// Every (member count, partition counts) shape of the scope.
fn shapes(scope: &Scope) -> Vec<(u32, Vec<u32>)> {
    let mut out = Vec::new();
    for members in 1..=scope.members {
        for topics in 1..=scope.topics {
            let span = u64::from(scope.partitions.1 - scope.partitions.0 + 1);
            odometer(&vec![span; topics as usize], |d| {
                let counts: Vec<u32> = d.iter().map(|&x| scope.partitions.0 + x as u32).collect();
                if counts.iter().sum::<u32>() <= scope.max_total_partitions {
                    out.push((members, counts));
                }
            });
        }
    }
    out
}

/// The radices of the per-shape dimensions: subscriptions, then racks, then claims.
fn radices(scope: &Scope, members: u32, counts: &[u32]) -> Vec<u64> {
    let topics = counts.len() as u32;
    let total: u32 = counts.iter().sum();
    let mut r = vec![1u64 << topics; members as usize];
    if scope.racks {
        r.extend(std::iter::repeat_n(3, members as usize));
        for &p in counts {
            // 0: no replica_racks; otherwise 1 + a pattern of 2 bits per partition.
            r.push(1 + (1u64 << (2 * p)));
        }
    }
    if scope.claims {
        r.extend(std::iter::repeat_n(1u64 << members, total as usize));
        r.extend(std::iter::repeat_n(2, members as usize));
    }
    r
}

/// How many groups the scope holds.
#[must_use]
pub fn count(scope: &Scope) -> u64 {
    shapes(scope)
        .iter()
        .map(|(m, counts)| radices(scope, *m, counts).iter().product::<u64>())
        .sum()
}

/// Calls `f` with every group of the scope whose (shape, subscriptions) unit falls in shard
/// `shard.0` of `shard.1`, so that several threads can split a scope. Returns how many groups
/// were produced.
pub fn for_each(scope: &Scope, shard: (u64, u64), mut f: impl FnMut(&GroupSpec)) -> u64 {
    let mut produced = 0;
    let mut unit = 0u64;
    for (members, counts) in shapes(scope) {
        let radices = radices(scope, members, &counts);
        let subs_len = members as usize;
        let (sub_radices, rest) = radices.split_at(subs_len);
        odometer(sub_radices, |subs| {
            unit += 1;
            if unit % shard.1 != shard.0 {
                return;
            }
            odometer(rest, |digits| {
                let mut all = subs.to_vec();
                all.extend_from_slice(digits);
                f(&build(scope, members, &counts, &all));
                produced += 1;
            });
        });
    }
    produced
}

fn build(scope: &Scope, members: u32, counts: &[u32], digits: &[u64]) -> GroupSpec {
    let m = members as usize;
    let mut d = digits.iter().copied();
    let mut next = move || d.next().unwrap_or(0);
    let topics: Vec<TopicSpec> = counts
        .iter()
        .enumerate()
        .map(|(t, &p)| TopicSpec {
            name: format!("T{}", t + 1),
            partitions: i64::from(p),
            replica_racks: None,
        })
        .collect();
    let mut spec = GroupSpec {
        rack_aware: scope.racks,
        topics,
        members: (0..m)
            .map(|i| MemberSpec {
                id: ((b'A' + i as u8) as char).to_string(),
                rack: None,
                subscriptions: Vec::new(),
                owned: Vec::new(),
                generation: -1,
            })
            .collect(),
    };
    for member in &mut spec.members {
        let bits = next();
        member.subscriptions = (0..counts.len())
            .filter(|t| bits >> t & 1 == 1)
            .map(|t| format!("T{}", t + 1))
            .collect();
    }
    if scope.racks {
        for member in &mut spec.members {
            member.rack = match next() {
                0 => None,
                r => Some(RACKS[r as usize - 1].to_owned()),
            };
        }
        for topic in &mut spec.topics {
            let code = next();
            if code > 0 {
                let pattern = code - 1;
                topic.replica_racks = Some(
                    (0..topic.partitions)
                        .map(|p| {
                            (0..2)
                                .filter(|r| pattern >> (2 * p + r) & 1 == 1)
                                .map(|r| RACKS[r as usize].to_owned())
                                .collect()
                        })
                        .collect(),
                );
            }
        }
    }
    if scope.claims {
        let mut claimed: Vec<Vec<Vec<i32>>> = vec![vec![Vec::new(); counts.len()]; m];
        for (t, &p) in counts.iter().enumerate() {
            for partition in 0..p {
                let who = next();
                for (i, row) in claimed.iter_mut().enumerate() {
                    if who >> i & 1 == 1 {
                        row[t].push(partition as i32);
                    }
                }
            }
        }
        for (i, member) in spec.members.iter_mut().enumerate() {
            member.generation = 1 + next() as i32;
            for (t, partitions) in claimed[i].iter_mut().enumerate() {
                if !partitions.is_empty() {
                    partitions.push(counts[t] as i32);
                    member.owned.push(OwnedPartitions {
                        topic: format!("T{}", t + 1),
                        partitions: partitions.clone(),
                    });
                }
            }
            if i == 0 {
                member.owned.push(OwnedPartitions {
                    topic: "T9".to_owned(),
                    partitions: vec![0],
                });
            }
        }
    }
    spec
}

/// How far the exhaustive proof goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depth {
    /// Small bounds for quick feedback (mutation testing): 173,312 groups.
    Quick,
    /// The CI bounds: 3,095,824 groups.
    Ci,
    /// Larger bounds for manual runs: about 106 million groups.
    Deep,
}

impl Depth {
    /// The depth named by `REBALANCE_EXHAUSTIVE` (`quick`, `deep`; anything else: CI).
    #[must_use]
    pub fn from_env() -> Depth {
        match std::env::var("REBALANCE_EXHAUSTIVE").as_deref() {
            Ok("quick") => Depth::Quick,
            Ok("deep") => Depth::Deep,
            _ => Depth::Ci,
        }
    }
}

/// The families the exhaustive proof runs at each depth.
#[must_use]
pub fn families(depth: Depth) -> Vec<Scope> {
    let structure = Scope {
        name: "structure",
        members: 3,
        topics: 3,
        partitions: (0, 3),
        max_total_partitions: 9,
        racks: false,
        claims: false,
    };
    if depth == Depth::Quick {
        return vec![
            structure,
            Scope {
                name: "racks",
                members: 3,
                topics: 2,
                partitions: (1, 2),
                max_total_partitions: 2,
                racks: true,
                claims: false,
            },
            Scope {
                name: "claims",
                members: 3,
                topics: 2,
                partitions: (1, 2),
                max_total_partitions: 2,
                racks: false,
                claims: true,
            },
            Scope {
                name: "everything",
                members: 2,
                topics: 1,
                partitions: (1, 2),
                max_total_partitions: 2,
                racks: true,
                claims: true,
            },
        ];
    }
    if depth == Depth::Deep {
        return vec![
            structure,
            Scope {
                name: "racks",
                members: 3,
                topics: 3,
                partitions: (1, 3),
                max_total_partitions: 4,
                racks: true,
                claims: false,
            },
            Scope {
                name: "claims",
                members: 3,
                topics: 3,
                partitions: (1, 3),
                max_total_partitions: 4,
                racks: false,
                claims: true,
            },
            Scope {
                name: "everything",
                members: 3,
                topics: 2,
                partitions: (1, 2),
                max_total_partitions: 2,
                racks: true,
                claims: true,
            },
        ];
    }
    vec![
        structure,
        Scope {
            name: "racks",
            members: 3,
            topics: 3,
            partitions: (1, 2),
            max_total_partitions: 3,
            racks: true,
            claims: false,
        },
        Scope {
            name: "claims",
            members: 3,
            topics: 2,
            partitions: (1, 3),
            max_total_partitions: 3,
            racks: false,
            claims: true,
        },
        Scope {
            name: "everything",
            members: 2,
            topics: 2,
            partitions: (1, 2),
            max_total_partitions: 2,
            racks: true,
            claims: true,
        },
    ]
}

impl Scope {
    /// The scope's bounds in words, for reports.
    #[must_use]
    pub fn describe(&self) -> String {
        let mut dims = vec!["all subscriptions"];
        if self.racks {
            dims.push("member racks, replica racks (rack-aware)");
        }
        if self.claims {
            dims.push("claimant sets, generations");
        }
        format!(
            "{}: ≤{} members, ≤{} topics of {}..={} partitions (≤{} in all); {}",
            self.name,
            self.members,
            self.topics,
            self.partitions.0,
            self.partitions.1,
            self.max_total_partitions,
            dims.join(", ")
        )
    }
}
