//! What the assignor checker can find wrong, one typed variant per property.

use std::fmt;

use rebalance::{SpecError, TopicPartition};

/// One property that an assignment (or an assignor) breaks, with the items that break it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Violation {
    /// The spec itself is invalid, so nothing else could be checked.
    InvalidSpec(SpecError),
    /// Validity: a member of the spec has no entry in the output.
    MissingMember {
        /// The member's id.
        member: String,
    },
    /// Validity: the output has an entry for a member that is not in the spec.
    UnknownMember {
        /// The id found in the output.
        member: String,
    },
    /// Validity: a member is given partitions of a topic that is not in the spec.
    UnknownTopic {
        /// The member.
        member: String,
        /// The topic name found in the output.
        topic: String,
    },
    /// Validity: a member is given a partition number the topic does not have.
    OutOfRange {
        /// The member.
        member: String,
        /// The topic.
        topic: String,
        /// The partition number found.
        partition: i32,
        /// The topic's partition count.
        partitions: u32,
    },
    /// Validity: a partition is assigned more than once (to several members, or twice to one).
    Duplicate {
        /// The partition.
        partition: TopicPartition,
        /// Every member it is assigned to, with repeats, ascending.
        members: Vec<String>,
    },
    /// Validity: a partition of a subscribed topic is assigned to nobody.
    Unassigned {
        /// The partition.
        partition: TopicPartition,
    },
    /// Validity: a partition is assigned to a member that does not subscribe to its topic.
    NotSubscribed {
        /// The partition.
        partition: TopicPartition,
        /// The member it was given to.
        member: String,
    },
    /// Output format: a member's partition list is not strictly ascending, or is empty.
    NotCanonical {
        /// The member.
        member: String,
        /// The topic.
        topic: String,
    },
    /// Spread: a subscriber has too few or too many partitions of a topic.
    Spread {
        /// The member.
        member: String,
        /// The topic.
        topic: String,
        /// How many partitions of the topic it has.
        count: u32,
        /// ⌊P/n⌋.
        min: u32,
        /// ⌈P/n⌉.
        max: u32,
    },
    /// Balance (local rule): a partition could move to a subscriber with at least two fewer
    /// partitions in total while keeping spread.
    LocalBalance {
        /// A partition that could move.
        partition: TopicPartition,
        /// Its current member.
        from: String,
        /// That member's total load.
        from_load: u32,
        /// The subscriber it could move to.
        to: String,
        /// That subscriber's total load.
        to_load: u32,
    },
    /// Balance: Σload² is above the optimum.
    Balance {
        /// The output's Σload².
        sum_load_sq: u64,
        /// The optimum.
        optimum: u64,
    },
    /// Rack alignment: with optimal balance, fewer partitions are rack-aligned than possible.
    Rack {
        /// The output's count.
        aligned: u64,
        /// The optimum given optimal balance.
        optimum: u64,
    },
    /// Stickiness: with optimal balance and alignment, fewer partitions are retained than
    /// possible.
    Sticky {
        /// Partitions kept by their previous owner.
        retained: u64,
        /// The optimum given optimal balance and alignment.
        optimum: u64,
    },
    /// The output beats the oracle's optimum: the oracle is wrong (never the assignor's fault).
    BeyondOptimum {
        /// Which objective.
        objective: &'static str,
        /// The output's value.
        value: u64,
        /// The oracle's claimed optimum.
        optimum: u64,
    },
    /// The assignor refused a valid spec.
    AssignorFailed {
        /// Its error.
        error: SpecError,
    },
    /// Determinism: the same content in another input order gave another assignment.
    Nondeterministic {
        /// The reordering applied.
        reordering: &'static str,
        /// The first member whose assignment differs.
        member: String,
        /// Its assignment for the original order.
        original: String,
        /// Its assignment for the reordered input.
        reordered: String,
    },
    /// Fixed point: with its own output as the previous assignment, the assignor moved
    /// partitions.
    NotFixedPoint {
        /// The first member whose assignment changed.
        member: String,
        /// Its assignment before.
        before: String,
        /// Its assignment after.
        after: String,
    },
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::InvalidSpec(e) => write!(f, "invalid spec: {e}"),
            Violation::MissingMember { member } => {
                write!(f, "member {member} missing from the output")
            }
            Violation::UnknownMember { member } => {
                write!(f, "member {member} in the output is not in the spec")
            }
            Violation::UnknownTopic { member, topic } => {
                write!(
                    f,
                    "{member} is assigned topic {topic}, which is not in the spec"
                )
            }
            Violation::OutOfRange {
                member,
                topic,
                partition,
                partitions,
            } => write!(
                f,
                "{member} is assigned {topic}-{partition}, but {topic} has {partitions} partitions"
            ),
            Violation::Duplicate { partition, members } => {
                write!(f, "{partition} assigned to {}", and_list(members))
            }
            Violation::Unassigned { partition } => write!(f, "{partition} unassigned"),
            Violation::NotSubscribed { partition, member } => write!(
                f,
                "{partition} assigned to {member}, which does not subscribe to {}",
                partition.topic
            ),
            Violation::NotCanonical { member, topic } => write!(
                f,
                "{member}'s partitions of {topic} are not a non-empty ascending list"
            ),
            Violation::Spread {
                member,
                topic,
                count,
                min,
                max,
            } => write!(
                f,
                "{member} has {count} partitions of {topic}, spread allows {min}..={max}"
            ),
            Violation::LocalBalance {
                partition,
                from,
                from_load,
                to,
                to_load,
            } => write!(
                f,
                "{partition} could move from {from} (load {from_load}) to {to} (load {to_load}) keeping spread"
            ),
            Violation::Balance {
                sum_load_sq,
                optimum,
            } => write!(f, "Σload² {sum_load_sq}, optimum {optimum}"),
            Violation::Rack { aligned, optimum } => {
                write!(f, "rack-aligned {aligned}, optimum {optimum}")
            }
            Violation::Sticky { retained, optimum } => {
                write!(f, "retained {retained}, optimum {optimum}")
            }
            Violation::BeyondOptimum {
                objective,
                value,
                optimum,
            } => write!(
                f,
                "{objective} {value} beats the oracle's optimum {optimum} (oracle bug)"
            ),
            Violation::AssignorFailed { error } => {
                write!(f, "the assignor refused a valid spec: {error}")
            }
            Violation::Nondeterministic {
                reordering,
                member,
                original,
                reordered,
            } => write!(
                f,
                "nondeterministic under {reordering}: {member} gets {original}, then {reordered}"
            ),
            Violation::NotFixedPoint {
                member,
                before,
                after,
            } => write!(
                f,
                "not a fixed point: fed its own output back, {member} went from {before} to {after}"
            ),
        }
    }
}

fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}
