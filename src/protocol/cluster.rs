//! A deterministic in-memory driver: one coordinator with its durable log, members, an in-order
//! network and a logical clock. Unit tests and the scenario runner drive the real state machines
//! through it, like quinn-proto's test `Pair`.
//!
//! Messages are delivered one per [`Cluster::step`] in send order, with no latency; when none is
//! in flight, the earliest timer fires (members before the coordinator at equal deadlines, then
//! by member id). Records the coordinator persists are appended to the log before the responses
//! of the same step are sent. Every completed round is recorded in a [`RoundLog`].

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde::Serialize;
use thiserror::Error;

use crate::ids::{CoordinatorEpoch, Generation, MemberId, TopicPartition};

use super::coordinator::{Coordinator, CoordinatorConfig};
use super::group::{GroupRecord, GroupState};
use super::member::{Member, MemberConfig, MemberEvent, MemberState, MemberTimer};
use super::messages::{Request, Response};

/// Why a cluster operation failed.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ClusterError {
    /// The safety invariant broke: live members consume the same partition.
    #[error("partition {partition} is consumed by {members:?} at {now_ms} ms")]
    DoubleOwnership {
        /// The partition.
        partition: TopicPartition,
        /// Every live member consuming it.
        members: Vec<MemberId>,
        /// When.
        now_ms: u64,
    },
    /// The group did not settle within the step budget.
    #[error("no quiescence after {steps} steps (at {now_ms} ms)")]
    NotQuiescent {
        /// Steps taken.
        steps: usize,
        /// The clock then.
        now_ms: u64,
    },
    /// No live member has this id.
    #[error("no live member {0}")]
    UnknownMember(MemberId),
    /// A live member already has this id.
    #[error("member {0} already exists")]
    DuplicateMember(MemberId),
}

/// One member's part in a round.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Default)]
pub struct MemberRound {
    /// Partitions it newly got.
    pub assigned: BTreeSet<TopicPartition>,
    /// Partitions it gave up.
    pub revoked: BTreeSet<TopicPartition>,
    /// The scheduled delay it was told (0: none).
    pub delay_ms: u32,
}

/// One completed rebalance round.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RoundRecord {
    /// The generation it created.
    pub generation: Generation,
    /// Its leader.
    pub leader: MemberId,
    /// When the first member completed it.
    pub at_ms: u64,
    /// Each member that completed it.
    pub members: BTreeMap<MemberId, MemberRound>,
}

/// Every completed round, in order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Default)]
pub struct RoundLog {
    /// The rounds.
    pub rounds: Vec<RoundRecord>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Envelope {
    ToCoordinator(MemberId, Request),
    ToMember(MemberId, Response),
}

/// The driver. See the module documentation.
#[derive(Clone, Debug)]
pub struct Cluster {
    now_ms: u64,
    config: CoordinatorConfig,
    coordinator: Coordinator,
    log: Vec<GroupRecord>,
    members: BTreeMap<MemberId, Member>,
    network: VecDeque<Envelope>,
    topics: BTreeMap<String, u32>,
    isolated: BTreeSet<MemberId>,
    rounds: RoundLog,
    events: Vec<(u64, MemberId, MemberEvent)>,
}

/// The most steps [`Cluster::drive`] takes before giving up.
pub const DRIVE_STEP_LIMIT: usize = 100_000;

impl Cluster {
    /// A cluster at time 0 with a fresh coordinator (epoch 0) and the given topics.
    #[must_use]
    pub fn new(config: CoordinatorConfig, topics: BTreeMap<String, u32>) -> Cluster {
        Cluster {
            now_ms: 0,
            coordinator: Coordinator::new(CoordinatorEpoch(0), config.clone()),
            config,
            log: Vec::new(),
            members: BTreeMap::new(),
            network: VecDeque::new(),
            topics,
            isolated: BTreeSet::new(),
            rounds: RoundLog::default(),
            events: Vec::new(),
        }
    }

    /// Adds and starts a member.
    ///
    /// # Errors
    /// [`ClusterError::DuplicateMember`] when a live member has its id.
    pub fn join(&mut self, config: MemberConfig) -> Result<(), ClusterError> {
        let id = config.member_id.clone();
        if self.members.contains_key(&id) {
            return Err(ClusterError::DuplicateMember(id));
        }
        let mut member = Member::new(config);
        member.handle_metadata(self.now_ms, self.topics.clone());
        member.start(self.now_ms);
        self.members.insert(id.clone(), member);
        self.flush_member(&id);
        Ok(())
    }

    /// Makes a member leave gracefully; it is gone once its LeaveGroup is sent.
    ///
    /// # Errors
    /// [`ClusterError::UnknownMember`].
    pub fn leave(&mut self, id: &MemberId) -> Result<(), ClusterError> {
        let now = self.now_ms;
        self.member_mut(id)?.leave(now);
        self.flush_member(id);
        self.members.remove(id);
        Ok(())
    }

    /// Kills a member: it vanishes without a word (messages it sent are still delivered).
    ///
    /// # Errors
    /// [`ClusterError::UnknownMember`].
    pub fn crash(&mut self, id: &MemberId) -> Result<(), ClusterError> {
        self.members
            .remove(id)
            .map(|_| ())
            .ok_or_else(|| ClusterError::UnknownMember(id.clone()))
    }

    /// Restarts a member under `new_id` (a crash, then a join with the same configuration).
    ///
    /// # Errors
    /// [`ClusterError::UnknownMember`] or [`ClusterError::DuplicateMember`].
    pub fn bounce(&mut self, id: &MemberId, new_id: MemberId) -> Result<(), ClusterError> {
        let mut config = self
            .members
            .get(id)
            .ok_or_else(|| ClusterError::UnknownMember(id.clone()))?
            .config()
            .clone();
        if self.members.contains_key(&new_id) {
            return Err(ClusterError::DuplicateMember(new_id));
        }
        self.crash(id)?;
        config.member_id = new_id;
        self.join(config)
    }

    /// Coordinator failover: the current coordinator dies with the responses it had not yet
    /// delivered; a coordinator with the next epoch loads the durable log. Requests in flight
    /// reach the new coordinator, which refuses them (`NotCoordinator`).
    pub fn failover(&mut self) {
        let epoch = CoordinatorEpoch(self.coordinator.epoch().0.saturating_add(1));
        self.coordinator.resign();
        self.network
            .retain(|e| matches!(e, Envelope::ToCoordinator(..)));
        self.coordinator = Coordinator::recover(epoch, self.config.clone(), &self.log, self.now_ms);
        self.flush_coordinator();
    }

    /// Changes a member's subscription.
    ///
    /// # Errors
    /// [`ClusterError::UnknownMember`].
    pub fn subscribe(
        &mut self,
        id: &MemberId,
        topics: BTreeSet<String>,
    ) -> Result<(), ClusterError> {
        let now = self.now_ms;
        self.member_mut(id)?.subscribe(now, topics);
        self.flush_member(id);
        Ok(())
    }

    /// Changes the topics' partition counts and tells every member.
    pub fn set_topics(&mut self, topics: BTreeMap<String, u32>) {
        self.topics = topics;
        let ids: Vec<MemberId> = self.members.keys().cloned().collect();
        for id in ids {
            if let Some(m) = self.members.get_mut(&id) {
                m.handle_metadata(self.now_ms, self.topics.clone());
            }
            self.flush_member(&id);
        }
    }

    /// Cuts a member off: every message from or to it is dropped until [`Cluster::heal`].
    pub fn isolate(&mut self, id: &MemberId) {
        self.isolated.insert(id.clone());
    }

    /// Reconnects an isolated member.
    pub fn heal(&mut self, id: &MemberId) {
        self.isolated.remove(id);
    }

    /// Delivers one message, or else fires the earliest timer (advancing the clock to it), then
    /// checks the safety invariant. Returns whether anything happened.
    ///
    /// # Errors
    /// [`ClusterError::DoubleOwnership`] when two live members consume one partition.
    pub fn step(&mut self) -> Result<bool, ClusterError> {
        let progressed = if let Some(envelope) = self.network.pop_front() {
            self.deliver(envelope);
            true
        } else {
            self.fire_earliest(None)
        };
        self.check_safety()?;
        Ok(progressed)
    }

    /// Steps until the group is quiescent: nothing in flight, the coordinator stable (or empty)
    /// with exactly the reachable (not isolated) live members, each of them stable in the
    /// coordinator's generation with only heartbeat and session timers armed.
    ///
    /// # Errors
    /// [`ClusterError::DoubleOwnership`], or [`ClusterError::NotQuiescent`] after
    /// [`DRIVE_STEP_LIMIT`] steps.
    pub fn drive(&mut self) -> Result<(), ClusterError> {
        for _ in 0..DRIVE_STEP_LIMIT {
            if self.is_quiescent() {
                return Ok(());
            }
            if !self.step()? {
                return Err(ClusterError::NotQuiescent {
                    steps: 0,
                    now_ms: self.now_ms,
                });
            }
        }
        Err(ClusterError::NotQuiescent {
            steps: DRIVE_STEP_LIMIT,
            now_ms: self.now_ms,
        })
    }

    /// Steps through everything due up to `until_ms` (messages, then timers), then sets the clock
    /// to `until_ms`.
    ///
    /// # Errors
    /// [`ClusterError::DoubleOwnership`], or [`ClusterError::NotQuiescent`] after
    /// [`DRIVE_STEP_LIMIT`] steps.
    pub fn run_until(&mut self, until_ms: u64) -> Result<(), ClusterError> {
        for _ in 0..DRIVE_STEP_LIMIT {
            if let Some(envelope) = self.network.pop_front() {
                self.deliver(envelope);
            } else if !self.fire_earliest(Some(until_ms)) {
                self.now_ms = self.now_ms.max(until_ms);
                return Ok(());
            }
            self.check_safety()?;
        }
        Err(ClusterError::NotQuiescent {
            steps: DRIVE_STEP_LIMIT,
            now_ms: self.now_ms,
        })
    }

    /// Whether the group has settled (see [`Cluster::drive`]).
    #[must_use]
    pub fn is_quiescent(&self) -> bool {
        if !self.network.is_empty() {
            return false;
        }
        let coordinator_settled = match self.coordinator.state() {
            GroupState::Stable { .. } => true,
            GroupState::Empty => self.members.is_empty(),
            _ => false,
        };
        // Isolated members are exempt: they cannot settle until healed.
        let reachable: Vec<&MemberId> = self
            .members
            .keys()
            .filter(|id| !self.isolated.contains(*id))
            .collect();
        coordinator_settled
            && self
                .coordinator
                .members()
                .keys()
                .eq(reachable.iter().copied())
            && self
                .members
                .iter()
                .filter(|(id, _)| !self.isolated.contains(*id))
                .all(|(_, m)| {
                    *m.state() == MemberState::Stable
                        && m.generation() == self.coordinator.generation()
                        && m.timers().all(|(t, _)| {
                            matches!(t, MemberTimer::Heartbeat | MemberTimer::Session)
                        })
                })
    }

    /// The safety invariant: no partition is consumed by two live members.
    ///
    /// # Errors
    /// [`ClusterError::DoubleOwnership`] naming the first such partition.
    pub fn check_safety(&self) -> Result<(), ClusterError> {
        let mut owners: BTreeMap<&TopicPartition, Vec<MemberId>> = BTreeMap::new();
        for (id, m) in &self.members {
            for tp in m.consuming() {
                owners.entry(tp).or_default().push(id.clone());
            }
        }
        match owners.into_iter().find(|(_, ms)| ms.len() > 1) {
            Some((partition, members)) => Err(ClusterError::DoubleOwnership {
                partition: partition.clone(),
                members,
                now_ms: self.now_ms,
            }),
            None => Ok(()),
        }
    }

    /// What every live member consumes now.
    #[must_use]
    pub fn ownership(&self) -> BTreeMap<MemberId, BTreeSet<TopicPartition>> {
        self.members
            .iter()
            .map(|(id, m)| (id.clone(), m.consuming().clone()))
            .collect()
    }

    /// The completed rounds.
    #[must_use]
    pub fn rounds(&self) -> &RoundLog {
        &self.rounds
    }

    /// Every member event so far, with its time and member (rounds are in [`Cluster::rounds`]).
    #[must_use]
    pub fn events(&self) -> &[(u64, MemberId, MemberEvent)] {
        &self.events
    }

    /// The logical clock.
    #[must_use]
    pub fn now_ms(&self) -> u64 {
        self.now_ms
    }

    /// The current coordinator.
    #[must_use]
    pub fn coordinator(&self) -> &Coordinator {
        &self.coordinator
    }

    /// The durable log.
    #[must_use]
    pub fn log(&self) -> &[GroupRecord] {
        &self.log
    }

    /// A live member.
    #[must_use]
    pub fn member(&self, id: &MemberId) -> Option<&Member> {
        self.members.get(id)
    }

    /// Every live member.
    #[must_use]
    pub fn members(&self) -> &BTreeMap<MemberId, Member> {
        &self.members
    }

    /// Messages in flight.
    #[must_use]
    pub fn in_flight(&self) -> usize {
        self.network.len()
    }

    fn member_mut(&mut self, id: &MemberId) -> Result<&mut Member, ClusterError> {
        self.members
            .get_mut(id)
            .ok_or_else(|| ClusterError::UnknownMember(id.clone()))
    }

    fn deliver(&mut self, envelope: Envelope) {
        let now = self.now_ms;
        match envelope {
            Envelope::ToCoordinator(from, request) => {
                self.coordinator.handle_request(now, from, request);
                self.flush_coordinator();
            }
            Envelope::ToMember(to, response) => {
                if let Some(m) = self.members.get_mut(&to) {
                    m.handle_response(now, response);
                    self.flush_member(&to);
                }
            }
        }
    }

    /// Fires the earliest timer due (at or before `limit`, if given). Members go before the
    /// coordinator at equal deadlines, so a member cut off stops consuming no later than the
    /// coordinator gives its partitions away.
    fn fire_earliest(&mut self, limit: Option<u64>) -> bool {
        let member_next = self
            .members
            .iter()
            .filter_map(|(id, m)| m.poll_timeout().map(|d| (d, id.clone())))
            .min();
        let coordinator_next = self.coordinator.poll_timeout();
        let earliest = [member_next.as_ref().map(|(d, _)| *d), coordinator_next]
            .into_iter()
            .flatten()
            .min();
        let Some(deadline) = earliest else {
            return false;
        };
        if limit.is_some_and(|l| deadline > l) {
            return false;
        }
        self.now_ms = self.now_ms.max(deadline);
        let now = self.now_ms;
        match member_next {
            Some((d, id)) if d == deadline => {
                if let Some(m) = self.members.get_mut(&id) {
                    m.handle_timeout(now);
                }
                self.flush_member(&id);
            }
            _ => {
                self.coordinator.handle_timeout(now);
                self.flush_coordinator();
            }
        }
        true
    }

    fn flush_coordinator(&mut self) {
        while let Some(record) = self.coordinator.poll_persist() {
            self.log.push(record);
        }
        while let Some((to, response)) = self.coordinator.poll_transmit() {
            if !self.isolated.contains(&to) {
                self.network.push_back(Envelope::ToMember(to, response));
            }
        }
    }

    fn flush_member(&mut self, id: &MemberId) {
        let Some(m) = self.members.get_mut(id) else {
            return;
        };
        let isolated = self.isolated.contains(id);
        while let Some(request) = m.poll_transmit() {
            if !isolated {
                self.network
                    .push_back(Envelope::ToCoordinator(id.clone(), request));
            }
        }
        while let Some(event) = m.poll_event() {
            if let MemberEvent::RebalanceRound(info) = &event {
                let round = MemberRound {
                    assigned: info.assigned.clone(),
                    revoked: info.revoked.clone(),
                    delay_ms: info.delay_ms,
                };
                match self.rounds.rounds.last_mut() {
                    Some(last)
                        if last.generation == info.generation && last.leader == info.leader =>
                    {
                        last.members.insert(id.clone(), round);
                    }
                    _ => self.rounds.rounds.push(RoundRecord {
                        generation: info.generation,
                        leader: info.leader.clone(),
                        at_ms: self.now_ms,
                        members: BTreeMap::from([(id.clone(), round)]),
                    }),
                }
            }
            self.events.push((self.now_ms, id.clone(), event));
        }
    }
}
