//! Human-readable timelines of a replayed run: a numbered list, or a Mermaid sequence diagram.

use std::collections::BTreeMap;
use std::fmt::Write;

use rebalance::protocol::embedded::decode_assignment;
use rebalance::protocol::{Request, Response};

use crate::model::RebalanceModel;
use crate::network::{Direction, Payload};
use crate::regression::Trace;
use crate::state::{Action, ModelState};

fn set<T: std::fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    let v: Vec<String> = items.into_iter().map(|x| x.to_string()).collect();
    format!("{{{}}}", v.join(", "))
}

fn error_or<T>(r: &Result<T, rebalance::protocol::ErrorCode>, ok: impl Fn(&T) -> String) -> String {
    match r {
        Ok(v) => ok(v),
        Err(e) => format!("error {e:?}"),
    }
}

/// A one-line description of a message.
#[must_use]
pub fn describe(model: &RebalanceModel, payload: &Payload) -> String {
    match payload {
        Payload::Request(r) => match r {
            Request::FindCoordinator { .. } => "FindCoordinator".to_owned(),
            Request::JoinGroup { epoch, .. } => format!("JoinGroup(epoch {epoch})"),
            Request::SyncGroup {
                epoch,
                generation,
                assignments,
                ..
            } => {
                let mut s = format!("SyncGroup(epoch {epoch}, gen {generation}");
                for (m, bytes) in assignments {
                    if let Ok(a) = decode_assignment(bytes, model.assignment_format()) {
                        let _ = write!(s, ", {m}: {}", set(&a.assigned));
                        if !a.revoked.is_empty() {
                            let _ = write!(s, " revoke {}", set(&a.revoked));
                        }
                    }
                }
                s + ")"
            }
            Request::Heartbeat {
                epoch, generation, ..
            } => format!("Heartbeat(epoch {epoch}, gen {generation})"),
            Request::LeaveGroup { epoch, .. } => format!("LeaveGroup(epoch {epoch})"),
            Request::OffsetCommit {
                epoch,
                generation,
                partition,
                offset,
                ..
            } => format!("OffsetCommit(epoch {epoch}, gen {generation}, {partition}@{offset})"),
        },
        Payload::Response(r) => match r {
            Response::FindCoordinator { epoch } => format!("FindCoordinator -> epoch {epoch}"),
            Response::JoinGroup { epoch, result } => format!(
                "JoinGroup reply (epoch {epoch}): {}",
                error_or(result, |ok| format!(
                    "gen {}, leader {}",
                    ok.generation, ok.leader
                ))
            ),
            Response::SyncGroup {
                epoch,
                generation,
                result,
            } => format!(
                "SyncGroup reply (epoch {epoch}, gen {generation}): {}",
                error_or(result, |bytes| {
                    match decode_assignment(bytes, model.assignment_format()) {
                        Ok(a) => {
                            let mut s = format!("assigned {}", set(&a.assigned));
                            if !a.revoked.is_empty() {
                                let _ = write!(s, ", revoke {}", set(&a.revoked));
                            }
                            if a.delay_ms > 0 {
                                let _ = write!(s, ", delay {} ms", a.delay_ms);
                            }
                            s
                        }
                        Err(_) => "assigned nothing".to_owned(),
                    }
                })
            ),
            Response::Heartbeat {
                epoch,
                generation,
                result,
            } => format!(
                "Heartbeat reply (epoch {epoch}, gen {generation}): {}",
                error_or(result, |_| "ok".to_owned())
            ),
            Response::LeaveGroup { epoch, result } => format!(
                "LeaveGroup reply (epoch {epoch}): {}",
                error_or(result, |_| "ok".to_owned())
            ),
            Response::OffsetCommit {
                epoch,
                generation,
                partition,
                result,
            } => format!(
                "OffsetCommit reply (epoch {epoch}, gen {generation}, {partition}): {}",
                error_or(result, |_| "ok".to_owned())
            ),
        },
    }
}

/// Messages in `after` that were not in `before` (multiset difference), with their channel.
fn sent(before: &ModelState, after: &ModelState) -> Vec<(String, Direction, Payload)> {
    let mut counts: BTreeMap<(String, Direction, &Payload), i64> = BTreeMap::new();
    for ((m, d), p) in after.network.iter() {
        *counts.entry((m.to_string(), *d, p)).or_insert(0) += 1;
    }
    for ((m, d), p) in before.network.iter() {
        *counts.entry((m.to_string(), *d, p)).or_insert(0) -= 1;
    }
    counts
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .flat_map(|((m, d, p), n)| (0..n).map(move |_| (m.clone(), d, p.clone())))
        .collect()
}

/// The payload an action delivers (or drops), looked up in the state before it.
fn delivered(before: &ModelState, action: &Action) -> Option<Payload> {
    match action {
        Action::Deliver {
            member,
            direction,
            index,
        }
        | Action::Drop {
            member,
            direction,
            index,
        }
        | Action::Duplicate {
            member,
            direction,
            index,
        } => before.network.get(member, *direction, *index).cloned(),
        _ => None,
    }
}

fn ownership(state: &ModelState) -> String {
    let mut parts = Vec::new();
    for (slot, s) in state.slots.iter().enumerate() {
        if let Some(m) = s.running() {
            let id = RebalanceModel::slot_member_id(state, slot);
            let tag = if s.status == crate::state::SlotStatus::Isolated {
                " (cut off)"
            } else {
                ""
            };
            parts.push(format!("{id}{tag} {}", set(m.consuming())));
        }
    }
    format!(
        "coordinator epoch {} {} gen {}; {}",
        state.coordinator.epoch(),
        state.coordinator.state().name(),
        state.coordinator.generation(),
        parts.join(", ")
    )
}

/// The run as a numbered timeline: each step's action, the message it delivered, what was sent
/// in response, and every member's consumed partitions after it.
#[must_use]
pub fn numbered(trace: &Trace) -> String {
    let model = &trace.model;
    let mut out = String::new();
    let _ = writeln!(out, "0. initial: {}", ownership(&trace.states[0]));
    for (i, action) in trace.actions.iter().enumerate() {
        let (before, after) = (&trace.states[i], &trace.states[i + 1]);
        let _ = writeln!(out, "{}. {action}", i + 1);
        if let Some(p) = delivered(before, action) {
            let _ = writeln!(out, "     message: {}", describe(model, &p));
        }
        for (m, d, p) in sent(before, after) {
            let who = match d {
                Direction::ToCoordinator => format!("{m} -> coordinator"),
                Direction::ToMember => format!("coordinator -> {m}"),
            };
            let _ = writeln!(out, "     sends {who}: {}", describe(model, &p));
        }
        let _ = writeln!(out, "     now: {}", ownership(after));
    }
    out
}

/// The run as a Mermaid sequence diagram.
#[must_use]
pub fn mermaid(trace: &Trace) -> String {
    let model = &trace.model;
    let mut out = String::from("sequenceDiagram\n    participant C as coordinator\n");
    for (i, action) in trace.actions.iter().enumerate() {
        let (before, after) = (&trace.states[i], &trace.states[i + 1]);
        match action {
            Action::Deliver {
                member, direction, ..
            } => {
                let text = delivered(before, action)
                    .map(|p| describe(model, &p))
                    .unwrap_or_default();
                let (from, to) = match direction {
                    Direction::ToCoordinator => (member.to_string(), "C".to_owned()),
                    Direction::ToMember => ("C".to_owned(), member.to_string()),
                };
                let _ = writeln!(out, "    {from}->>{to}: {}. {}", i + 1, clean(&text));
            }
            other => {
                let _ = writeln!(
                    out,
                    "    Note over C: {}. {}",
                    i + 1,
                    clean(&other.to_string())
                );
            }
        }
        let _ = writeln!(out, "    Note right of C: {}", clean(&ownership(after)));
    }
    out
}

/// Mermaid treats `;` and `#` specially in messages.
fn clean(s: &str) -> String {
    s.replace(';', ",").replace('#', "no. ")
}
