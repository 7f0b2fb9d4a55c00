//! The scenario script language: parsing text into a typed [`Script`].
//!
//! A script is one command per line; `#` starts a comment that runs to the end of the line and
//! blank lines are ignored. Words are separated by whitespace. The *setup* commands come first
//! and describe the group; the *event* commands that follow are applied in order by the runner.
//!
//! Setup (each at most once unless noted, all before the first event):
//!
//! | command | meaning |
//! |---|---|
//! | `protocol eager\|cooperative\|deferred\|incremental` | the rebalance protocol (default `cooperative`) |
//! | `assignor NAME` | the assignor the leader uses (default `uniform-v2`) |
//! | `delay MS` | the scheduled rebalance delay of `deferred` / `incremental` (default 0) |
//! | `max-moves N` | how many partitions one `incremental` round may move (default 1) |
//! | `topic NAME PARTITIONS` | a topic and its partition count (repeatable) |
//! | `member ID [rack R] subscribe T1,T2` | a member's configuration (repeatable); it starts only when named by `stable` or `join` |
//! | `stable A=T-0,T-3 B=T-1 C=` | start from a stable generation where these members own exactly these partitions |
//! | `fault KAFKA-N` | switch on the fault re-creating that Kafka bug in the coordinator and every member (repeatable) |
//!
//! Events:
//!
//! | command | meaning |
//! |---|---|
//! | `join ID` | start the declared member `ID`; it finds the coordinator and joins |
//! | `leave ID` | `ID` leaves gracefully (LeaveGroup) |
//! | `crash ID` | `ID` stops without a word; the coordinator notices by session timeout |
//! | `isolate ID` | cut `ID` off the network (it keeps running) until `heal ID` |
//! | `heal ID` | reconnect an isolated member |
//! | `bounce ID as ID2 [after MS]` | `ID` leaves; a new process with `ID`'s configuration joins as `ID2` after `MS` (default 0) |
//! | `leader-leaves` | the current group leader leaves gracefully |
//! | `failover` | the coordinator fails; a new one (next epoch) loads the durable log |
//! | `subscribe ID T1,T2` | `ID` changes its subscription |
//! | `partitions T N` | topic `T` now has `N` partitions (creating it if new); every member learns it |
//! | `wait MS` | let `MS` logical milliseconds pass, delivering whatever falls due |
//! | `run` | deliver everything until quiescent (only heartbeats left to do) |
//! | `run until COND` | deliver one message or timer at a time until `COND` holds: `rebalancing`, `told ID`, `joined ID`, `persisted generation`, `persisted assignment`, `synced ID` (see [`Until`]) |
//! | `expect A=T-0 B=` | assert what every live member consumes now (unnamed live members: nothing) |
//!
//! Partitions are written `TOPIC-N` (split at the last `-`, so topic names may contain `-`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use rebalance::assignor::ASSIGNOR_NAMES;
use rebalance::protocol::Fault;
use rebalance::{MemberId, TopicPartition};
use thiserror::Error;

/// The most partitions one topic may have in a scenario. Scenarios are read by people; far
/// fewer suffice, and the bound keeps a typo from allocating without limit.
pub const MAX_SCENARIO_PARTITIONS: u32 = 10_000;

/// The longest single `wait` or `delay`, in logical milliseconds (about 31 years).
pub const MAX_SCENARIO_MS: u64 = 1 << 40;

/// A parsed, statically checked scenario script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Script {
    /// The script's name as given to [`parse`] (usually its path), for messages.
    pub source_name: String,
    /// The rebalance protocol every member runs.
    pub protocol: ProtocolChoice,
    /// The assignor name the leader uses.
    pub assignor: String,
    /// The scheduled rebalance delay (deferred and incremental protocols).
    pub delay_ms: u64,
    /// The most partitions an incremental round moves.
    pub max_moves: u32,
    /// The topics at the start, with their partition counts.
    pub topics: BTreeMap<String, u32>,
    /// Every member configuration the script declares, by id (bounce replacements included).
    pub members: BTreeMap<MemberId, MemberDecl>,
    /// The stable generation to start from, when given.
    pub stable: Option<Stable>,
    /// Faults switched on in the coordinator and every member (none: the correct protocol).
    pub faults: BTreeSet<Fault>,
    /// The events, in order.
    pub steps: Vec<Step>,
}

/// The protocol a script selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ProtocolChoice {
    /// Stop-the-world rebalancing.
    Eager,
    /// Simple cooperative rebalancing (revoke, then assign in the next round).
    Cooperative,
    /// Deferred resolution of imbalance (lost partitions held back for the delay).
    Deferred,
    /// Incremental resolution (deferred, moving at most `max-moves` partitions per round).
    Incremental,
}

impl ProtocolChoice {
    /// Whether rounds of this protocol carry a scheduled delay worth printing.
    #[must_use]
    pub fn has_delay(self) -> bool {
        matches!(self, ProtocolChoice::Deferred | ProtocolChoice::Incremental)
    }
}

impl fmt::Display for ProtocolChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ProtocolChoice::Eager => "eager",
            ProtocolChoice::Cooperative => "cooperative",
            ProtocolChoice::Deferred => "deferred",
            ProtocolChoice::Incremental => "incremental",
        })
    }
}

/// A member's configuration as a `member` line declares it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberDecl {
    /// The rack it runs in, if any.
    pub rack: Option<String>,
    /// The topics it subscribes to.
    pub topics: BTreeSet<String>,
}

/// A `stable` line: the generation the group starts from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stable {
    /// The 1-based line number in the script.
    pub line: usize,
    /// Who owns what; the named members are the group.
    pub ownership: Ownership,
}

/// Who owns (or must own) which partitions: `A=T-0,T-3 B=T-1`.
pub type Ownership = BTreeMap<MemberId, BTreeSet<TopicPartition>>;

/// One event of a script with the line it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The 1-based line number in the script.
    pub line: usize,
    /// What happens.
    pub event: Event,
}

/// An event the runner applies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// Start a declared member.
    Join(MemberId),
    /// A member leaves gracefully.
    Leave(MemberId),
    /// A member stops without leaving.
    Crash(MemberId),
    /// A member is cut off the network but keeps running.
    Isolate(MemberId),
    /// An isolated member is reconnected.
    Heal(MemberId),
    /// A member leaves and a replacement with its configuration joins after `after_ms`.
    Bounce {
        /// The member that leaves.
        from: MemberId,
        /// The replacement's id.
        to: MemberId,
        /// When the replacement joins, relative to the leave.
        after_ms: u64,
    },
    /// The current leader leaves gracefully.
    LeaderLeaves,
    /// The coordinator fails over to the next epoch.
    Failover,
    /// A member changes its subscription.
    Subscribe(MemberId, BTreeSet<String>),
    /// A topic's partition count changes (or the topic appears).
    Partitions(String, u32),
    /// Logical time passes.
    Wait(u64),
    /// Deliver everything until quiescent.
    Run,
    /// Deliver one message or timer at a time until the condition holds.
    RunUntil(Until),
    /// Assert what the live members consume.
    Expect(Ownership),
}

/// A condition for `run until`, used to stop at a precise point of a rebalance (for example to
/// fail the coordinator over between two messages).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Until {
    /// `rebalancing`: the coordinator has started a rebalance (it answers heartbeats with an
    /// error).
    Rebalancing,
    /// `told ID`: member `ID` has learnt of the rebalance (it is rejoining).
    Told(MemberId),
    /// `joined ID`: the coordinator has received member `ID`'s JoinGroup for the pending round.
    Joined(MemberId),
    /// `persisted generation`: the coordinator has appended a new generation (a completed join
    /// phase) to its durable log.
    GenerationPersisted,
    /// `persisted assignment`: the coordinator has appended the leader's assignment of a
    /// generation to its durable log (no SyncGroup of that generation answered yet).
    AssignmentPersisted,
    /// `synced ID`: member `ID` has received its SyncGroup answer for the new generation.
    Synced(MemberId),
}

impl fmt::Display for Until {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Until::Rebalancing => f.write_str("rebalancing"),
            Until::Told(m) => write!(f, "told {m}"),
            Until::Joined(m) => write!(f, "joined {m}"),
            Until::GenerationPersisted => f.write_str("persisted generation"),
            Until::AssignmentPersisted => f.write_str("persisted assignment"),
            Until::Synced(m) => write!(f, "synced {m}"),
        }
    }
}

/// A script that could not be parsed, with where and why.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{source_name}:{line}: {kind}")]
pub struct ScriptError {
    /// The script's name as given to [`parse`] (usually its path).
    pub source_name: String,
    /// The 1-based line of the problem.
    pub line: usize,
    /// What is wrong.
    pub kind: ScriptErrorKind,
}

/// What is wrong with a script line.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ScriptErrorKind {
    /// The first word is not a command.
    #[error("unknown command {0:?}")]
    UnknownCommand(String),
    /// The command's arguments do not match its form.
    #[error("{command}: expected `{usage}`")]
    Usage {
        /// The command.
        command: &'static str,
        /// Its form.
        usage: &'static str,
    },
    /// A number is malformed or out of its range.
    #[error("{what} {text:?} is not a number in 0..={max}")]
    Number {
        /// What the number is.
        what: &'static str,
        /// The text found.
        text: String,
        /// The largest value allowed.
        max: u64,
    },
    /// A name (member, topic, rack, assignor) has characters outside `[A-Za-z0-9._'-]`.
    #[error("{what} {text:?} is not a valid name (letters, digits, `.`, `_`, `'`, `-`)")]
    Name {
        /// What the name is.
        what: &'static str,
        /// The text found.
        text: String,
    },
    /// The protocol name is not one of the four.
    #[error("unknown protocol {0:?} (expected eager, cooperative, deferred or incremental)")]
    UnknownProtocol(String),
    /// A setup command comes after the first event.
    #[error("setup command `{0}` must come before the first event")]
    SetupAfterEvents(&'static str),
    /// A setup command that may appear once appears again.
    #[error("`{0}` given twice")]
    Repeated(&'static str),
    /// A topic is declared twice.
    #[error("topic {0:?} declared twice")]
    DuplicateTopic(String),
    /// A member is declared twice (or a bounce replacement reuses an id).
    #[error("member \"{0}\" declared twice")]
    DuplicateMember(MemberId),
    /// A member is named that no `member` line declares.
    #[error("unknown member \"{0}\"")]
    UnknownMember(MemberId),
    /// A partition is written without the `TOPIC-N` form.
    #[error("partition {0:?} is not written TOPIC-N")]
    PartitionSyntax(String),
    /// A partition's topic is not declared.
    #[error("partition {0} names an undeclared topic")]
    UnknownTopic(TopicPartition),
    /// A partition number is beyond its topic's partition count.
    #[error("partition {partition} is out of range: topic has {count} partitions")]
    PartitionRange {
        /// The partition.
        partition: TopicPartition,
        /// The topic's partition count.
        count: u32,
    },
    /// A stable assignment gives a partition to a member not subscribed to its topic.
    #[error("member {member} is not subscribed to the topic of {partition}")]
    NotSubscribed {
        /// The member.
        member: MemberId,
        /// The partition.
        partition: TopicPartition,
    },
    /// An ownership list names a partition twice.
    #[error("partition {0} listed twice")]
    DuplicatePartition(TopicPartition),
    /// An ownership list names a member twice.
    #[error("member {0} listed twice")]
    DuplicateEntry(MemberId),
    /// A subscription list is empty.
    #[error("empty topic list")]
    EmptyTopics,
    /// An `assignor` line names no known assignor.
    #[error("unknown assignor {0:?} (known: {known})", known = ASSIGNOR_NAMES.join(", "))]
    UnknownAssignor(String),
    /// A `fault` line names no known fault.
    #[error("unknown fault {0:?} (known: {known})", known = known_faults())]
    UnknownFault(String),
}

/// Parses and statically checks a script. `source_name` names the script in errors.
///
/// # Errors
/// The first [`ScriptError`] met, naming its line.
pub fn parse(source_name: &str, text: &str) -> Result<Script, ScriptError> {
    parser::parse(source_name, text)
}

fn known_faults() -> String {
    let mut names: Vec<&str> = Fault::ALL.iter().map(|f| f.issue()).collect();
    names.dedup();
    names.join(", ")
}

mod parser;

#[cfg(test)]
mod tests;
