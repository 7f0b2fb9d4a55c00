//! How the runner moves time: one cluster step at a time (each followed by the runner's own
//! safety check), bounce replacements joining on schedule, quiescence, and `run until`.

use std::collections::{BTreeMap, BTreeSet};

use rebalance::protocol::{GroupRecord, GroupState, MemberEvent, MemberState, MemberTimer};
use rebalance::{MemberId, TopicPartition};

use super::{RunError, RunErrorKind, Runner, STEP_LIMIT};
use crate::scenario::script::Until;

impl Runner<'_> {
    /// The runner's own safety check over what every live member consumes.
    pub(super) fn check(&self) -> Result<(), RunError> {
        let mut owners: BTreeMap<&TopicPartition, Vec<MemberId>> = BTreeMap::new();
        for (id, member) in self.cluster.members() {
            for tp in member.consuming() {
                owners.entry(tp).or_default().push(id.clone());
            }
        }
        match owners.into_iter().find(|(_, m)| m.len() > 1) {
            Some((partition, members)) => Err(self.error(RunErrorKind::DoubleOwnership {
                partition: partition.clone(),
                members,
                at_ms: self.cluster.now_ms(),
            })),
            None => Ok(()),
        }
    }

    /// One step of the cluster, then the safety check. Returns whether anything happened.
    pub(super) fn step(&mut self) -> Result<bool, RunError> {
        let progressed = self.cluster.step().map_err(|e| self.cluster_error(e))?;
        self.check()?;
        Ok(progressed)
    }

    /// When the cluster will next do something on its own: now if a message is in flight,
    /// else its earliest timer.
    pub(super) fn next_due(&self) -> Option<u64> {
        if self.cluster.in_flight() > 0 {
            return Some(self.cluster.now_ms());
        }
        let members = self
            .cluster
            .members()
            .values()
            .filter_map(|m| m.poll_timeout());
        members
            .chain(self.cluster.coordinator().poll_timeout())
            .min()
    }

    pub(super) fn next_scheduled_join(&self) -> Option<u64> {
        self.scheduled_joins.iter().map(|(at, _)| *at).min()
    }

    /// Starts every bounce replacement due by now, in schedule order.
    pub(super) fn start_due_joins(&mut self) -> Result<(), RunError> {
        let now = self.cluster.now_ms();
        self.scheduled_joins.sort();
        while let Some((at, _)) = self.scheduled_joins.first()
            && *at <= now
        {
            let (_, id) = self.scheduled_joins.remove(0);
            self.note(format!("join {id} (bounce replacement)"));
            self.start_member(&id)?;
        }
        Ok(())
    }

    /// Moves the clock to `at_ms`, where nothing is due earlier.
    pub(super) fn set_clock(&mut self, at_ms: u64) -> Result<(), RunError> {
        self.cluster
            .run_until(at_ms)
            .map_err(|e| self.cluster_error(e))?;
        self.check()
    }

    /// Does the next thing in time order: a step of the cluster, or a scheduled join if that
    /// comes first. Returns false when nothing at all is left to do.
    pub(super) fn advance_once(&mut self) -> Result<bool, RunError> {
        match (self.next_due(), self.next_scheduled_join()) {
            (Some(due), Some(join)) if join < due => {
                self.set_clock(join)?;
                self.start_due_joins()?;
                Ok(true)
            }
            (None, Some(join)) => {
                self.set_clock(join)?;
                self.start_due_joins()?;
                Ok(true)
            }
            (Some(_), _) => self.step(),
            (None, None) => Ok(false),
        }
    }

    /// Whether the group has settled: nothing in flight; the coordinator stable (or empty) with
    /// exactly the running, connected members; each of them stable in its generation with only
    /// heartbeat and session timers armed. Unlike
    /// [`Cluster::is_quiescent`](rebalance::protocol::Cluster::is_quiescent) this waits for the
    /// coordinator to notice crashed or isolated members, whose sessions are still running.
    /// Isolated members are left out: cut off, they cannot settle.
    pub(super) fn quiescent(&self) -> bool {
        if self.cluster.in_flight() > 0 {
            return false;
        }
        let connected: BTreeSet<&MemberId> = self
            .cluster
            .members()
            .keys()
            .filter(|id| !self.isolated.contains(*id))
            .collect();
        let coordinator = self.cluster.coordinator();
        let settled = match coordinator.state() {
            GroupState::Stable { .. } => true,
            GroupState::Empty => connected.is_empty(),
            _ => false,
        };
        settled
            && coordinator.members().keys().collect::<BTreeSet<_>>() == connected
            && connected.iter().all(|id| {
                self.cluster.member(id).is_some_and(|m| {
                    *m.state() == MemberState::Stable
                        && m.generation() == coordinator.generation()
                        && m.timers().all(|(t, _)| {
                            matches!(t, MemberTimer::Heartbeat | MemberTimer::Session)
                        })
                })
            })
    }

    /// Steps until the group is quiescent and no replacement is waiting to join.
    pub(super) fn settle(&mut self) -> Result<(), RunError> {
        for steps in 0..STEP_LIMIT {
            if self.quiescent() && self.scheduled_joins.is_empty() {
                return Ok(());
            }
            if !self.advance_once()? {
                return Err(self.error(RunErrorKind::NotQuiescent {
                    at_ms: self.cluster.now_ms(),
                    steps,
                }));
            }
        }
        Err(self.error(RunErrorKind::NotQuiescent {
            at_ms: self.cluster.now_ms(),
            steps: STEP_LIMIT,
        }))
    }

    /// Does everything due up to `until_ms`, then sets the clock there.
    pub(super) fn advance_to(&mut self, until_ms: u64) -> Result<(), RunError> {
        for _ in 0..STEP_LIMIT {
            let due = [self.next_due(), self.next_scheduled_join()]
                .into_iter()
                .flatten()
                .min();
            match due {
                Some(at) if at <= until_ms => {
                    self.advance_once()?;
                }
                _ => return self.set_clock(until_ms),
            }
        }
        Err(self.error(RunErrorKind::NotQuiescent {
            at_ms: self.cluster.now_ms(),
            steps: STEP_LIMIT,
        }))
    }

    pub(super) fn run_until(&mut self, until: &Until) -> Result<(), RunError> {
        let log_start = self.cluster.log().len();
        let events_start = self.cluster.events().len();
        for steps in 0..STEP_LIMIT {
            if self.holds(until, log_start, events_start) {
                return Ok(());
            }
            if !self.advance_once()? {
                return Err(self.never_held(until, steps));
            }
        }
        Err(self.never_held(until, STEP_LIMIT))
    }

    pub(super) fn never_held(&self, until: &Until, steps: usize) -> RunError {
        self.error(RunErrorKind::NeverHeld {
            condition: until.to_string(),
            at_ms: self.cluster.now_ms(),
            steps,
        })
    }

    pub(super) fn holds(&self, until: &Until, log_start: usize, events_start: usize) -> bool {
        let new_records = || self.cluster.log().get(log_start..).unwrap_or(&[]).iter();
        match until {
            Until::Rebalancing => matches!(
                self.cluster.coordinator().state(),
                GroupState::PreparingRebalance { .. }
            ),
            Until::Told(id) => self
                .cluster
                .member(id)
                .is_some_and(|m| *m.state() == MemberState::Joining),
            Until::Joined(id) => matches!(
                self.cluster.coordinator().state(),
                GroupState::PreparingRebalance { joined } if joined.contains(id)
            ),
            Until::GenerationPersisted => {
                new_records().any(|r| matches!(r, GroupRecord::Generation { .. }))
            }
            Until::AssignmentPersisted => {
                new_records().any(|r| matches!(r, GroupRecord::Assignment { .. }))
            }
            Until::Synced(id) => self
                .cluster
                .events()
                .get(events_start..)
                .unwrap_or(&[])
                .iter()
                .any(|(_, m, e)| m == id && matches!(e, MemberEvent::RebalanceRound(_))),
        }
    }
}
