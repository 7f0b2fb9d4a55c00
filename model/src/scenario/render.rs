//! Printing a [`Transcript`]: the reference's table notation as text, and JSON.
//!
//! Text, one entry per line, each prefixed with its logical time:
//!
//! ```text
//! @0 stable generation 1: A(T-0,T-3) B(T-1) C(T-2)
//! @0 join D
//! @9 round generation 2, leader A: A(assigned:T-0,revoked:T-3) B(assigned:T-1,revoked:) ...
//! final: A(T-0) B(T-1) C(T-2) D(T-3)
//! ```
//!
//! With the deferred and incremental protocols each member's entry ends with the scheduled delay
//! it was told (`,3000ms`) or `,-` for none, as in the reference's tables.
//!
//! JSON (one object):
//! `{"rounds": [{"generation": 2, "leader": "A", "members": {"A": {"assigned": {"T": [0]},
//! "revoked": {"T": [3]}, "delay_ms": 0}}}], "final": {"A": {"T": [0]}}}`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use rebalance::{MemberId, TopicPartition};
use serde::Serialize;

use super::script::Ownership;
use super::transcript::{Entry, MemberRound, Round, Transcript};

/// The transcript in the reference's notation, one line per entry, ending with a newline.
#[must_use]
pub fn text(transcript: &Transcript) -> String {
    let mut out = String::new();
    for entry in &transcript.entries {
        match entry {
            Entry::Stable {
                at_ms,
                generation,
                ownership,
            } => {
                let _ = writeln!(
                    out,
                    "@{at_ms} stable generation {generation}: {}",
                    ownership_text(ownership)
                );
            }
            Entry::Event { at_ms, text, .. } => {
                let _ = writeln!(out, "@{at_ms} {text}");
            }
            Entry::Round(round) => {
                let _ = writeln!(
                    out,
                    "{}",
                    round_text(round, transcript.protocol.has_delay())
                );
            }
            Entry::ExpectHeld { at_ms, line } => {
                let _ = writeln!(out, "@{at_ms} expect (line {line}) holds");
            }
        }
    }
    let _ = writeln!(
        out,
        "final: {}",
        ownership_text(&transcript.final_ownership)
    );
    out
}

/// One round as `@T round generation G, leader L: A(assigned:..,revoked:..[,delay]) ...`.
#[must_use]
pub fn round_text(round: &Round, with_delay: bool) -> String {
    let members: Vec<String> = round
        .members
        .iter()
        .map(|(id, m)| member_round_text(id, m, with_delay))
        .collect();
    format!(
        "@{} round generation {}, leader {}: {}",
        round.at_ms,
        round.generation,
        round.leader,
        members.join(" ")
    )
}

fn member_round_text(id: &MemberId, m: &MemberRound, with_delay: bool) -> String {
    let mut s = format!(
        "{id}(assigned:{},revoked:{}",
        partitions_text(&m.assigned),
        partitions_text(&m.revoked)
    );
    if m.delay_ms > 0 {
        let _ = write!(s, ",{}ms", m.delay_ms);
    } else if with_delay {
        s.push_str(",-");
    }
    s.push(')');
    s
}

/// `A(T-0,T-3) B(T-1) C()` — every member, owning something or not.
#[must_use]
pub fn ownership_text(ownership: &Ownership) -> String {
    let parts: Vec<String> = ownership
        .iter()
        .map(|(id, owned)| format!("{id}({})", partitions_text(owned)))
        .collect();
    parts.join(" ")
}

fn partitions_text(partitions: &BTreeSet<TopicPartition>) -> String {
    let parts: Vec<String> = partitions.iter().map(ToString::to_string).collect();
    parts.join(",")
}

/// Topic → ascending partition numbers.
type ByTopic = BTreeMap<String, Vec<i32>>;

#[derive(Serialize)]
struct JsonTranscript {
    rounds: Vec<JsonRound>,
    #[serde(rename = "final")]
    final_ownership: BTreeMap<MemberId, ByTopic>,
}

#[derive(Serialize)]
struct JsonRound {
    generation: i32,
    leader: MemberId,
    members: BTreeMap<MemberId, JsonMemberRound>,
}

#[derive(Serialize)]
struct JsonMemberRound {
    assigned: ByTopic,
    revoked: ByTopic,
    delay_ms: u64,
}

fn by_topic(partitions: &BTreeSet<TopicPartition>) -> ByTopic {
    let mut out = ByTopic::new();
    // The set is ordered by topic then partition, so each list comes out ascending.
    for tp in partitions {
        out.entry(tp.topic.clone()).or_default().push(tp.partition);
    }
    out
}

/// The transcript as JSON in the documented format, pretty-printed, ending with a newline.
#[must_use]
pub fn json(transcript: &Transcript) -> String {
    let value = JsonTranscript {
        rounds: transcript
            .rounds()
            .map(|r| JsonRound {
                generation: r.generation,
                leader: r.leader.clone(),
                members: r
                    .members
                    .iter()
                    .map(|(id, m)| {
                        let member = JsonMemberRound {
                            assigned: by_topic(&m.assigned),
                            revoked: by_topic(&m.revoked),
                            delay_ms: m.delay_ms,
                        };
                        (id.clone(), member)
                    })
                    .collect(),
            })
            .collect(),
        final_ownership: transcript
            .final_ownership
            .iter()
            .map(|(id, owned)| (id.clone(), by_topic(owned)))
            .collect(),
    };
    // Maps of strings and numbers always serialise.
    let mut out = serde_json::to_string_pretty(&value).unwrap_or_default();
    out.push('\n');
    out
}
