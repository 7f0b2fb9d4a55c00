//! What a scenario run produced: the events applied, every rebalance round and the final
//! ownership. The runner fills a [`Transcript`]; [`super::render`] prints it.

use std::collections::{BTreeMap, BTreeSet};

use rebalance::{MemberId, TopicPartition};

use super::script::{Ownership, ProtocolChoice};

/// The record of one scenario run, in logical-time order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transcript {
    /// The protocol the members ran (decides whether delays are printed).
    pub protocol: ProtocolChoice,
    /// The assignor the leader used.
    pub assignor: String,
    /// Events, rounds and checks, in the order they happened.
    pub entries: Vec<Entry>,
    /// What every live member consumes at the end (members owning nothing included).
    pub final_ownership: Ownership,
}

impl Transcript {
    /// The rebalance rounds, in order.
    pub fn rounds(&self) -> impl Iterator<Item = &Round> {
        self.entries.iter().filter_map(|e| match e {
            Entry::Round(r) => Some(r),
            _ => None,
        })
    }
}

/// One line of a transcript.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// The group was set up in a stable generation with this ownership.
    Stable {
        /// The logical time, in ms.
        at_ms: u64,
        /// The generation the group is stable in.
        generation: i32,
        /// Who owns what.
        ownership: Ownership,
    },
    /// A script event was applied.
    Event {
        /// The logical time, in ms.
        at_ms: u64,
        /// The script line it came from.
        line: usize,
        /// The event as the script wrote it, normalised.
        text: String,
    },
    /// A rebalance round completed.
    Round(Round),
    /// An `expect` line held.
    ExpectHeld {
        /// The logical time, in ms.
        at_ms: u64,
        /// The script line.
        line: usize,
    },
}

/// One completed rebalance round: a generation's assignment as each member received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Round {
    /// The logical time the first member received its assignment, in ms.
    pub at_ms: u64,
    /// The generation.
    pub generation: i32,
    /// The leader that computed it.
    pub leader: MemberId,
    /// What each member of the generation was told, by member id.
    pub members: BTreeMap<MemberId, MemberRound>,
}

/// What one member was told in a round.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct MemberRound {
    /// Partitions it newly got this round (those it keeps are not repeated).
    pub assigned: BTreeSet<TopicPartition>,
    /// Partitions it must give up.
    pub revoked: BTreeSet<TopicPartition>,
    /// The scheduled rebalance delay it was told (0: none).
    pub delay_ms: u64,
}
