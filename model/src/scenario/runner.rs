//! Runs a [`Script`] through the core's deterministic [`Cluster`]: one coordinator with its
//! durable log, the script's members, an in-order network and a logical clock.
//!
//! The runner steps the cluster itself, one delivered message or fired timer at a time, and
//! after every step (and every event) checks the safety invariant with its own code: no
//! partition is consumed by two live members. It never trusts the core to report that.
//!
//! A `stable` line is reached through the real protocol: the named members join one by one, in
//! id order, and while the group forms the leader's assignor is pinned to the stable ownership
//! (each member gets exactly its listed partitions, so no round revokes anything). Those setup
//! rounds are not printed; the transcript starts at the stable generation.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rebalance::protocol::{
    AssignorRef, Cluster, ClusterError, CoordinatorConfig, Fault, FaultSet, MemberConfig,
    RebalanceProtocol,
};
use rebalance::{
    Assignment, AssignmentMap, Assignor, GroupSpec, MemberId, SpecError, TopicPartition,
};
use thiserror::Error;

use super::render::ownership_text;
use super::script::{Event, MemberDecl, Ownership, ProtocolChoice, Script};
use super::transcript::{Entry, MemberRound, Round, Transcript};

mod stepping;

/// The most steps one `run`, `wait` or `run until` may take before the runner gives up (the
/// group never settles, or the condition never holds).
pub const STEP_LIMIT: usize = 100_000;

/// A scenario that could not run to its end, with the script line of the event at fault.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{source_name}:{line}: {kind}")]
pub struct RunError {
    /// The script's name.
    pub source_name: String,
    /// The 1-based line of the event (or setup line) at fault.
    pub line: usize,
    /// What went wrong.
    pub kind: RunErrorKind,
}

/// What went wrong while running a scenario.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum RunErrorKind {
    /// The `assignor` line names no known assignor.
    #[error("unknown assignor {0:?}")]
    UnknownAssignor(String),
    /// The event cannot apply in the current state (e.g. a member that is not running leaves).
    #[error("`{event}` cannot apply: {reason}")]
    Inapplicable {
        /// The event.
        event: String,
        /// Why not.
        reason: String,
    },
    /// The safety invariant broke: live members consume the same partition.
    #[error("safety violated at {at_ms} ms: partition {partition} is consumed by {}", names(.members))]
    DoubleOwnership {
        /// The partition.
        partition: TopicPartition,
        /// Every live member consuming it.
        members: Vec<MemberId>,
        /// The logical time.
        at_ms: u64,
    },
    /// `run` took [`STEP_LIMIT`] steps without the group settling, or the cluster stalled.
    #[error("the group did not settle (at {at_ms} ms, after {steps} steps)")]
    NotQuiescent {
        /// The logical time.
        at_ms: u64,
        /// The steps taken.
        steps: usize,
    },
    /// `run until` took [`STEP_LIMIT`] steps (or ran out of work) without the condition holding.
    #[error("`{condition}` never held (at {at_ms} ms, after {steps} steps)")]
    NeverHeld {
        /// The condition.
        condition: String,
        /// The logical time.
        at_ms: u64,
        /// The steps taken.
        steps: usize,
    },
    /// An `expect` line did not hold.
    #[error("expected {expected}, found {found}")]
    ExpectFailed {
        /// The ownership the line asserts.
        expected: String,
        /// What the live members consume.
        found: String,
    },
    /// The stable generation could not be reached through the protocol.
    #[error("could not set up the stable generation: the group reached {found}")]
    SetupFailed {
        /// What the members consumed after forming.
        found: String,
    },
    /// The core's cluster refused an event (the script's fault, like [`Self::Inapplicable`]).
    #[error("{0}")]
    Cluster(String),
}

fn names(members: &[MemberId]) -> String {
    let names: Vec<&str> = members.iter().map(MemberId::as_str).collect();
    names.join(" and ")
}

/// A run that stopped at an error, with the transcript up to that point.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{error}")]
pub struct RunFailure {
    /// Everything that happened before the error.
    pub transcript: Transcript,
    /// The error.
    pub error: RunError,
}

/// Runs the script to its end and returns its transcript.
///
/// # Errors
/// A [`RunFailure`] holding the first [`RunError`] (an inapplicable event or unknown assignor:
/// the script's fault; a broken safety invariant, a failed `expect`, or a group that never
/// settles) and the transcript up to it.
pub fn run(script: &Script) -> Result<Transcript, Box<RunFailure>> {
    let mut runner = match Runner::new(script) {
        Ok(runner) => runner,
        Err(error) => {
            let transcript = Transcript {
                protocol: script.protocol,
                assignor: script.assignor.clone(),
                entries: Vec::new(),
                final_ownership: Ownership::new(),
            };
            return Err(Box::new(RunFailure { transcript, error }));
        }
    };
    let mut result = runner.setup();
    for step in &script.steps {
        if result.is_err() {
            break;
        }
        runner.line = step.line;
        result = runner.apply(&step.event);
    }
    let transcript = runner.finish();
    match result {
        Ok(()) => Ok(transcript),
        Err(error) => Err(Box::new(RunFailure { transcript, error })),
    }
}

/// The assignor named `name`, shared.
fn lookup(name: &str) -> Option<AssignorRef> {
    rebalance::assignor::assignor_by_name(name).map(|a| AssignorRef(Arc::from(a)))
}

/// The leader's assignor during setup: while `pinned` is on, it hands every member of the spec
/// exactly its partitions of the stable ownership (so forming the group moves nothing); then it
/// is the script's assignor.
struct SetupAssignor {
    inner: AssignorRef,
    ownership: Ownership,
    pinned: Arc<AtomicBool>,
}

impl Assignor for SetupAssignor {
    fn name(&self) -> &'static str {
        self.inner.get().name()
    }

    fn assign(&self, spec: &GroupSpec) -> Result<Assignment, SpecError> {
        if !self.pinned.load(Ordering::SeqCst) {
            return self.inner.get().assign(spec);
        }
        spec.validate()?;
        let mut assignment = AssignmentMap::new();
        for member in &spec.members {
            let id = member.member_id();
            let mut by_topic: BTreeMap<String, Vec<i32>> = BTreeMap::new();
            for tp in self.ownership.get(&id).into_iter().flatten() {
                by_topic
                    .entry(tp.topic.clone())
                    .or_default()
                    .push(tp.partition);
            }
            assignment.insert(id, by_topic);
        }
        Ok(Assignment::from(assignment))
    }
}

/// An entry whose round is filled in at the end, when every member has completed it.
enum Pending {
    Entry(Entry),
    Round(usize),
}

struct Runner<'s> {
    script: &'s Script,
    cluster: Cluster,
    assignor: AssignorRef,
    pinned: Arc<AtomicBool>,
    topics: BTreeMap<String, u32>,
    /// Members cut off the network by `isolate`.
    isolated: BTreeSet<MemberId>,
    /// Replacements of bounced members: when they join, and their id.
    scheduled_joins: Vec<(u64, MemberId)>,
    entries: Vec<Pending>,
    /// Rounds of the cluster's log already placed in `entries` (or hidden, for setup).
    rounds_seen: usize,
    line: usize,
}

impl<'s> Runner<'s> {
    fn new(script: &'s Script) -> Result<Runner<'s>, RunError> {
        let error = |kind| RunError {
            source_name: script.source_name.clone(),
            line: 0,
            kind,
        };
        let inner = lookup(&script.assignor)
            .ok_or_else(|| error(RunErrorKind::UnknownAssignor(script.assignor.clone())))?;
        let pinned = Arc::new(AtomicBool::new(false));
        let assignor = AssignorRef(Arc::new(SetupAssignor {
            inner,
            ownership: script
                .stable
                .as_ref()
                .map(|s| s.ownership.clone())
                .unwrap_or_default(),
            pinned: Arc::clone(&pinned),
        }));
        Ok(Runner {
            script,
            cluster: Cluster::new(
                CoordinatorConfig {
                    faults: FaultSet::of(&script.faults.iter().copied().collect::<Vec<_>>()),
                    ..CoordinatorConfig::default()
                },
                script.topics.clone(),
            ),
            assignor,
            pinned,
            topics: script.topics.clone(),
            isolated: BTreeSet::new(),
            scheduled_joins: Vec::new(),
            entries: Vec::new(),
            rounds_seen: 0,
            line: 0,
        })
    }

    fn error(&self, kind: RunErrorKind) -> RunError {
        RunError {
            source_name: self.script.source_name.clone(),
            line: self.line,
            kind,
        }
    }

    fn inapplicable(&self, event: &Event, reason: impl Into<String>) -> RunError {
        self.error(RunErrorKind::Inapplicable {
            event: event_text(event),
            reason: reason.into(),
        })
    }

    fn cluster_error(&self, e: ClusterError) -> RunError {
        match e {
            ClusterError::DoubleOwnership {
                partition,
                members,
                now_ms,
            } => self.error(RunErrorKind::DoubleOwnership {
                partition,
                members,
                at_ms: now_ms,
            }),
            other => self.error(RunErrorKind::Cluster(other.to_string())),
        }
    }

    fn member_config(&self, id: &MemberId, decl: &MemberDecl) -> MemberConfig {
        let s = self.script;
        // Delays above u32::MAX ms (~50 days) do not fit the wire's int32 anyway.
        let delay_ms = u32::try_from(s.delay_ms).unwrap_or(u32::MAX);
        let protocol = match s.protocol {
            ProtocolChoice::Eager => RebalanceProtocol::Eager,
            ProtocolChoice::Cooperative => RebalanceProtocol::SimpleCooperative,
            ProtocolChoice::Deferred => RebalanceProtocol::Deferred { delay_ms },
            ProtocolChoice::Incremental => RebalanceProtocol::Incremental {
                delay_ms,
                max_moves: s.max_moves,
            },
        };
        let mut config = MemberConfig::new(
            id.clone(),
            decl.topics.iter().cloned(),
            protocol,
            self.assignor.clone(),
        );
        config.rack = decl.rack.clone();
        config.faults = self.faults();
        config
    }

    fn faults(&self) -> FaultSet {
        let faults: Vec<Fault> = self.script.faults.iter().copied().collect();
        FaultSet::of(&faults)
    }

    /// Forms the `stable` generation, if any, with the pinned assignor.
    fn setup(&mut self) -> Result<(), RunError> {
        let Some(stable) = &self.script.stable else {
            return Ok(());
        };
        self.line = stable.line;
        self.pinned.store(true, Ordering::SeqCst);
        for id in stable.ownership.keys() {
            self.start_member(id)?;
            self.settle()?;
        }
        self.pinned.store(false, Ordering::SeqCst);
        let found = self.cluster.ownership();
        if found != stable.ownership {
            return Err(self.error(RunErrorKind::SetupFailed {
                found: ownership_text(&found),
            }));
        }
        // The setup rounds are not part of the scenario.
        self.rounds_seen = self.cluster.rounds().rounds.len();
        self.entries.push(Pending::Entry(Entry::Stable {
            at_ms: self.cluster.now_ms(),
            generation: self.cluster.coordinator().generation().0,
            ownership: found,
        }));
        Ok(())
    }

    fn start_member(&mut self, id: &MemberId) -> Result<(), RunError> {
        let decl = self.script.members.get(id).ok_or_else(|| {
            self.error(RunErrorKind::Cluster(format!(
                "member {id} is not declared"
            )))
        })?;
        let config = self.member_config(id, decl);
        self.cluster
            .join(config)
            .map_err(|e| self.cluster_error(e))?;
        self.check()
    }

    fn note(&mut self, text: String) {
        self.collect_rounds();
        self.entries.push(Pending::Entry(Entry::Event {
            at_ms: self.cluster.now_ms(),
            line: self.line,
            text,
        }));
    }

    fn collect_rounds(&mut self) {
        let total = self.cluster.rounds().rounds.len();
        for i in self.rounds_seen..total {
            self.entries.push(Pending::Round(i));
        }
        self.rounds_seen = total;
    }

    fn live(&self, id: &MemberId) -> bool {
        self.cluster.member(id).is_some()
    }

    fn apply(&mut self, event: &Event) -> Result<(), RunError> {
        match event {
            Event::Run => {
                self.note(event_text(event));
                self.settle()?;
            }
            Event::Wait(ms) => {
                self.note(event_text(event));
                let until = self.cluster.now_ms().saturating_add(*ms);
                self.advance_to(until)?;
            }
            Event::RunUntil(until) => {
                self.note(event_text(event));
                self.run_until(until)?;
            }
            Event::Expect(expected) => self.expect(expected)?,
            _ => self.disrupt(event)?,
        }
        self.collect_rounds();
        Ok(())
    }

    /// Applies an event that changes the group.
    fn disrupt(&mut self, event: &Event) -> Result<(), RunError> {
        match event {
            Event::Join(id) => {
                if self.live(id) {
                    return Err(self.inapplicable(event, format!("{id} is already running")));
                }
                self.note(event_text(event));
                self.start_member(id)?;
            }
            Event::Leave(id) | Event::Crash(id) | Event::Bounce { from: id, .. } => {
                if !self.live(id) {
                    return Err(self.inapplicable(event, format!("{id} is not running")));
                }
                self.note(event_text(event));
                let result = if matches!(event, Event::Crash(_)) {
                    self.cluster.crash(id)
                } else {
                    self.cluster.leave(id)
                };
                result.map_err(|e| self.cluster_error(e))?;
                self.isolated.remove(id);
                self.check()?;
                if let Event::Bounce { to, after_ms, .. } = event {
                    let at = self.cluster.now_ms().saturating_add(*after_ms);
                    self.scheduled_joins.push((at, to.clone()));
                    self.start_due_joins()?;
                }
            }
            Event::LeaderLeaves => {
                let leader = self
                    .cluster
                    .coordinator()
                    .leader()
                    .filter(|l| self.live(l))
                    .cloned()
                    .ok_or_else(|| self.inapplicable(event, "the group has no running leader"))?;
                self.note(format!("leader-leaves ({leader})"));
                self.cluster
                    .leave(&leader)
                    .map_err(|e| self.cluster_error(e))?;
                self.isolated.remove(&leader);
                self.check()?;
            }
            Event::Failover => {
                let epoch = self.cluster.coordinator().epoch().0.saturating_add(1);
                self.note(format!("failover (coordinator epoch {epoch})"));
                self.cluster.failover();
                self.check()?;
            }
            Event::Isolate(id) | Event::Heal(id) => {
                if !self.live(id) {
                    return Err(self.inapplicable(event, format!("{id} is not running")));
                }
                self.note(event_text(event));
                if matches!(event, Event::Isolate(_)) {
                    self.cluster.isolate(id);
                    self.isolated.insert(id.clone());
                } else {
                    self.cluster.heal(id);
                    self.isolated.remove(id);
                }
            }
            Event::Subscribe(id, topics) => {
                if !self.live(id) {
                    return Err(self.inapplicable(event, format!("{id} is not running")));
                }
                self.note(event_text(event));
                self.cluster
                    .subscribe(id, topics.clone())
                    .map_err(|e| self.cluster_error(e))?;
                self.check()?;
            }
            Event::Partitions(topic, count) => {
                self.note(event_text(event));
                self.topics.insert(topic.clone(), *count);
                self.cluster.set_topics(self.topics.clone());
                self.check()?;
            }
            Event::Run | Event::Wait(_) | Event::RunUntil(_) | Event::Expect(_) => {}
        }
        Ok(())
    }

    fn expect(&mut self, expected: &Ownership) -> Result<(), RunError> {
        for id in expected.keys() {
            if !self.live(id) {
                let event = Event::Expect(expected.clone());
                return Err(self.inapplicable(&event, format!("{id} is not running")));
            }
        }
        let found = self.cluster.ownership();
        let mut wanted = found.clone();
        for owned in wanted.values_mut() {
            owned.clear();
        }
        for (id, owned) in expected {
            wanted.insert(id.clone(), owned.clone());
        }
        if wanted != found {
            return Err(self.error(RunErrorKind::ExpectFailed {
                expected: ownership_text(&wanted),
                found: ownership_text(&found),
            }));
        }
        self.collect_rounds();
        self.entries.push(Pending::Entry(Entry::ExpectHeld {
            at_ms: self.cluster.now_ms(),
            line: self.line,
        }));
        Ok(())
    }

    fn finish(mut self) -> Transcript {
        self.collect_rounds();
        let log = &self.cluster.rounds().rounds;
        let entries = self
            .entries
            .into_iter()
            .filter_map(|p| match p {
                Pending::Entry(e) => Some(e),
                Pending::Round(i) => log.get(i).map(|r| {
                    Entry::Round(Round {
                        at_ms: r.at_ms,
                        generation: r.generation.0,
                        leader: r.leader.clone(),
                        members: r
                            .members
                            .iter()
                            .map(|(id, m)| {
                                let round = MemberRound {
                                    assigned: m.assigned.clone(),
                                    revoked: m.revoked.clone(),
                                    delay_ms: u64::from(m.delay_ms),
                                };
                                (id.clone(), round)
                            })
                            .collect(),
                    })
                }),
            })
            .collect();
        Transcript {
            protocol: self.script.protocol,
            assignor: self.script.assignor.clone(),
            entries,
            final_ownership: self.cluster.ownership(),
        }
    }
}

/// An event as a script writes it.
#[must_use]
pub fn event_text(event: &Event) -> String {
    let list = |topics: &BTreeSet<String>| topics.iter().cloned().collect::<Vec<_>>().join(",");
    match event {
        Event::Join(id) => format!("join {id}"),
        Event::Leave(id) => format!("leave {id}"),
        Event::Crash(id) => format!("crash {id}"),
        Event::Isolate(id) => format!("isolate {id}"),
        Event::Heal(id) => format!("heal {id}"),
        Event::Bounce { from, to, after_ms } => format!("bounce {from} as {to} after {after_ms}"),
        Event::LeaderLeaves => "leader-leaves".to_owned(),
        Event::Failover => "failover".to_owned(),
        Event::Subscribe(id, topics) => format!("subscribe {id} {}", list(topics)),
        Event::Partitions(topic, count) => format!("partitions {topic} {count}"),
        Event::Wait(ms) => format!("wait {ms}"),
        Event::Run => "run".to_owned(),
        Event::RunUntil(until) => format!("run until {until}"),
        Event::Expect(ownership) => format!("expect {}", ownership_text(ownership)),
    }
}
