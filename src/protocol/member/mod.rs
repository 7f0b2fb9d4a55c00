//! A group member (a consumer) as a sans-IO state machine, including the leader role.
//!
//! # Calling protocol
//!
//! 1. Create with [`Member::new`]; it is `Down`. Give it partition counts with
//!    [`Member::handle_metadata`] (the leader needs them) and call [`Member::start`].
//! 2. Feed inputs: [`Member::handle_response`] for every response delivered to it,
//!    [`Member::handle_timer`] to fire one armed timer (whatever its deadline), or
//!    [`Member::handle_timeout`] to fire every timer due at `now_ms`; application calls
//!    [`Member::leave`] (graceful), [`Member::subscribe`], [`Member::handle_metadata`]. A crash is
//!    the driver's business: it drops the member (a restart is a new member with a new id).
//! 3. After each input drain [`Member::poll_transmit`] (requests to the coordinator, in order)
//!    and [`Member::poll_event`].
//! 4. Ask [`Member::timers`] / [`Member::poll_timeout`] when to call it next.
//!
//! # Behaviour
//!
//! Eager members commit and stop everything before they rejoin. Cooperative members keep
//! consuming through a rebalance, claim what they own with the generation it was assigned in,
//! stop exactly what they are no longer assigned (committing first), rejoin at once when they
//! gave something up, and rejoin after the leader's scheduled delay when one is set. A member
//! that hears nothing from the coordinator within its session timeout, or whose rejoin takes
//! longer than its rebalance timeout, stops consuming on its own. Errors for a request sent under
//! a generation the member has since left are ignored.

pub mod config;
mod lead;

use std::collections::{BTreeMap, BTreeSet, VecDeque};

pub use config::{MemberConfig, MemberEvent, MemberTimer, RebalanceProtocol, RoundInfo};

use crate::ids::{CoordinatorEpoch, Generation, MemberId, TopicPartition};
use crate::protocol::embedded::{self, AssignmentInfo, SubscriptionInfo};
use crate::protocol::leader::LeaderMemory;
use crate::protocol::messages::{ErrorCode, JoinGroupOk, Request, Response};

/// A member's lifecycle state, with the data that only exists in it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MemberState {
    /// Not running.
    Down,
    /// Looking for the coordinator before the first join.
    DiscoveringCoordinator,
    /// Waiting for the JoinGroup answer.
    Joining,
    /// Joined `generation`; waiting for the SyncGroup answer.
    AwaitingSync {
        /// The generation joined.
        generation: Generation,
        /// Its leader.
        leader: MemberId,
    },
    /// Holding an assignment and heartbeating.
    Stable,
    /// Lost the coordinator; looking for the new one while still consuming.
    RediscoveringCoordinator {
        /// Whether to rejoin (rather than resume heartbeating) once it is found.
        rejoin: bool,
    },
}

/// A group member. See the module documentation for the calling protocol.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Member {
    config: MemberConfig,
    state: MemberState,
    epoch: Option<CoordinatorEpoch>,
    generation: Generation,
    owned: BTreeSet<TopicPartition>,
    topics: BTreeMap<String, u32>,
    memory: Option<LeaderMemory>,
    rejoin_needed: bool,
    heartbeat_since_join: bool,
    timers: BTreeMap<MemberTimer, u64>,
    transmit: VecDeque<Request>,
    events: VecDeque<MemberEvent>,
}

impl Member {
    /// A member that is `Down`, owning nothing.
    #[must_use]
    pub fn new(config: MemberConfig) -> Member {
        Member {
            config,
            state: MemberState::Down,
            epoch: None,
            generation: Generation::NONE,
            owned: BTreeSet::new(),
            topics: BTreeMap::new(),
            memory: None,
            rejoin_needed: false,
            heartbeat_since_join: false,
            timers: BTreeMap::new(),
            transmit: VecDeque::new(),
            events: VecDeque::new(),
        }
    }

    /// Starts a `Down` member: it looks for the coordinator, then joins.
    pub fn start(&mut self, now_ms: u64) {
        if self.state == MemberState::Down {
            self.state = MemberState::DiscoveringCoordinator;
            self.find_coordinator(now_ms);
        }
    }

    /// Leaves the group gracefully: commits and stops everything, sends LeaveGroup, goes `Down`.
    pub fn leave(&mut self, _now_ms: u64) {
        if self.state == MemberState::Down {
            return;
        }
        self.give_up_committing(self.owned.clone());
        if let Some(epoch) = self.epoch {
            self.transmit.push_back(Request::LeaveGroup {
                epoch,
                member_id: self.config.member_id.clone(),
            });
        }
        self.state = MemberState::Down;
        self.timers.clear();
        self.memory = None;
        self.generation = Generation::NONE;
        self.events.push_back(MemberEvent::Stopped);
    }

    /// Changes the subscription; a stable member rejoins at once, others after their current
    /// round.
    pub fn subscribe(&mut self, now_ms: u64, topics: BTreeSet<String>) {
        if topics == self.config.subscriptions {
            return;
        }
        self.config.subscriptions = topics;
        // Partitions of a topic no longer subscribed to stop at once (committed first), as
        // Kafka's consumer revokes them before it rejoins.
        let unsubscribed = self.unsubscribed(&self.owned);
        self.give_up_committing(unsubscribed);
        self.request_rejoin(now_ms);
    }

    /// The partitions in `partitions` of topics the member does not subscribe to.
    fn unsubscribed(&self, partitions: &BTreeSet<TopicPartition>) -> BTreeSet<TopicPartition> {
        partitions
            .iter()
            .filter(|tp| !self.config.subscriptions.contains(&tp.topic))
            .cloned()
            .collect()
    }

    /// New partition counts. When a subscribed topic changed, the member rejoins so the leader
    /// reassigns.
    pub fn handle_metadata(&mut self, now_ms: u64, topics: BTreeMap<String, u32>) {
        let changed = self
            .config
            .subscriptions
            .iter()
            .any(|t| self.topics.get(t) != topics.get(t));
        self.topics = topics;
        if changed {
            self.request_rejoin(now_ms);
        }
    }

    /// Handles one response from the coordinator.
    pub fn handle_response(&mut self, now_ms: u64, response: Response) {
        if self.state == MemberState::Down {
            return;
        }
        if self.epoch.is_some_and(|known| response.epoch() < known) {
            return; // from a coordinator epoch that has since been replaced
        }
        if self.timers.contains_key(&MemberTimer::Session) {
            self.arm(MemberTimer::Session, now_ms, self.config.session_timeout_ms);
        }
        match response {
            Response::FindCoordinator { epoch } => self.found_coordinator(now_ms, epoch),
            Response::JoinGroup { result, .. } => {
                if self.state == MemberState::Joining {
                    match result {
                        Ok(ok) => self.joined(now_ms, ok),
                        Err(code) => self.join_failed(now_ms, code),
                    }
                }
            }
            Response::SyncGroup {
                generation, result, ..
            } => {
                let MemberState::AwaitingSync {
                    generation: joined,
                    leader,
                } = &self.state
                else {
                    return;
                };
                if *joined != generation {
                    return;
                }
                let leader = leader.clone();
                match result {
                    Ok(bytes) => self.synced(now_ms, generation, leader, &bytes),
                    Err(ErrorCode::CoordinatorLoadInProgress) => {
                        self.state = MemberState::Joining;
                        self.arm(MemberTimer::Retry, now_ms, self.config.retry_backoff_ms);
                    }
                    Err(code) => self.join_failed(now_ms, code),
                }
            }
            Response::Heartbeat {
                generation, result, ..
            } => self.heartbeat_answered(now_ms, generation, result),
            Response::OffsetCommit {
                generation, result, ..
            } => {
                if let Err(code) = result {
                    self.stable_error(now_ms, generation, code);
                }
            }
            Response::LeaveGroup { .. } => {}
        }
    }

    /// Fires `timer` if it is armed, whatever its deadline; does nothing otherwise.
    pub fn handle_timer(&mut self, now_ms: u64, timer: MemberTimer) {
        if self.timers.remove(&timer).is_none() {
            return;
        }
        match timer {
            MemberTimer::Heartbeat => {
                // Cooperative members keep consuming through a rebalance, so they keep their
                // session alive while joining and syncing too.
                let joining = self.state == MemberState::Joining;
                if joining
                    || matches!(
                        self.state,
                        MemberState::Stable | MemberState::AwaitingSync { .. }
                    )
                {
                    self.heartbeat_since_join |= joining;
                    if let Some(epoch) = self.epoch {
                        self.transmit.push_back(Request::Heartbeat {
                            epoch,
                            generation: self.generation,
                            member_id: self.config.member_id.clone(),
                        });
                    }
                    self.arm(
                        MemberTimer::Heartbeat,
                        now_ms,
                        self.config.heartbeat_interval_ms,
                    );
                }
            }
            MemberTimer::Session | MemberTimer::Rebalance => {
                // Cut off from the coordinator (or it lost our join): it has surely evicted us
                // by now, so stop consuming before anyone else is given our partitions
                // (KAFKA-9184's fix), then find the coordinator again and rejoin.
                if !fault_on!(self.config, NoOwnSessionTimer) {
                    self.lose_all();
                }
                self.state = MemberState::RediscoveringCoordinator { rejoin: true };
                self.timers.remove(&MemberTimer::Heartbeat);
                self.timers.remove(&MemberTimer::Session);
                self.timers.remove(&MemberTimer::ScheduledRejoin);
                self.timers.remove(&MemberTimer::Retry);
                self.find_coordinator(now_ms);
            }
            // A scheduled rejoin that comes due while the member is away from the stable state
            // (e.g. rediscovering the coordinator after a failover) is kept, not dropped: the
            // partitions held back for a departed member wait for that round.
            MemberTimer::ScheduledRejoin => self.request_rejoin(now_ms),
            MemberTimer::Retry => match self.state {
                MemberState::Joining => self.send_join(),
                MemberState::DiscoveringCoordinator
                | MemberState::RediscoveringCoordinator { .. } => self.find_coordinator(now_ms),
                _ => {}
            },
        }
    }

    /// Fires every timer due at `now_ms`, earliest first (ties in [`MemberTimer`] order).
    pub fn handle_timeout(&mut self, now_ms: u64) {
        while let Some(timer) = self
            .timers
            .iter()
            .filter(|(_, d)| **d <= now_ms)
            .min_by_key(|(t, d)| (**d, **t))
            .map(|(t, _)| *t)
        {
            self.handle_timer(now_ms, timer);
        }
    }

    /// The next request to send to the coordinator.
    #[must_use]
    pub fn poll_transmit(&mut self) -> Option<Request> {
        self.transmit.pop_front()
    }

    /// The next event for the application.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<MemberEvent> {
        self.events.pop_front()
    }

    /// Every armed timer with its deadline, in [`MemberTimer`] order.
    pub fn timers(&self) -> impl Iterator<Item = (MemberTimer, u64)> + '_ {
        self.timers.iter().map(|(t, d)| (*t, *d))
    }

    /// The earliest deadline of an armed timer.
    #[must_use]
    pub fn poll_timeout(&self) -> Option<u64> {
        self.timers.values().copied().min()
    }

    /// The partitions the member consumes now.
    #[must_use]
    pub fn consuming(&self) -> &BTreeSet<TopicPartition> {
        &self.owned
    }

    /// The generation its partitions were assigned in ([`Generation::NONE`] before any).
    #[must_use]
    pub fn generation(&self) -> Generation {
        self.generation
    }

    /// Its lifecycle state.
    #[must_use]
    pub fn state(&self) -> &MemberState {
        &self.state
    }

    /// Its id.
    #[must_use]
    pub fn id(&self) -> &MemberId {
        &self.config.member_id
    }

    /// Its configuration.
    #[must_use]
    pub fn config(&self) -> &MemberConfig {
        &self.config
    }

    /// The coordinator epoch it talks to.
    #[must_use]
    pub fn epoch(&self) -> Option<CoordinatorEpoch> {
        self.epoch
    }

    /// The leader memory it holds (only while it leads).
    #[must_use]
    pub fn leader_memory(&self) -> Option<&LeaderMemory> {
        self.memory.as_ref()
    }

    fn arm(&mut self, timer: MemberTimer, now_ms: u64, after_ms: u64) {
        self.timers.insert(timer, now_ms.saturating_add(after_ms));
    }

    /// Asks for the coordinator, and again after the retry backoff until an answer comes.
    fn find_coordinator(&mut self, now_ms: u64) {
        self.transmit.push_back(Request::FindCoordinator {
            epoch: self.epoch.unwrap_or_default(),
        });
        self.arm(MemberTimer::Retry, now_ms, self.config.retry_backoff_ms);
    }

    fn found_coordinator(&mut self, now_ms: u64, epoch: CoordinatorEpoch) {
        self.epoch = Some(self.epoch.map_or(epoch, |e| e.max(epoch)));
        self.timers.remove(&MemberTimer::Retry);
        match self.state {
            MemberState::DiscoveringCoordinator
            | MemberState::RediscoveringCoordinator { rejoin: true } => self.rejoin(now_ms),
            MemberState::RediscoveringCoordinator { rejoin: false } if self.rejoin_needed => {
                self.rejoin(now_ms);
            }
            MemberState::RediscoveringCoordinator { rejoin: false } => {
                self.state = MemberState::Stable;
                self.arm(MemberTimer::Heartbeat, now_ms, 0);
            }
            _ => {}
        }
    }

    fn request_rejoin(&mut self, now_ms: u64) {
        if self.state == MemberState::Stable {
            self.rejoin(now_ms);
        } else if self.state != MemberState::Down {
            self.rejoin_needed = true;
        }
    }

    /// Sends a JoinGroup; eager members first commit and give up everything.
    fn rejoin(&mut self, now_ms: u64) {
        if !self.config.protocol.cooperative() {
            self.give_up_committing(self.owned.clone());
        }
        self.rejoin_needed = false;
        self.state = MemberState::Joining;
        self.timers.remove(&MemberTimer::ScheduledRejoin);
        self.timers.remove(&MemberTimer::Retry);
        if !self.owned.is_empty() && !self.timers.contains_key(&MemberTimer::Heartbeat) {
            self.arm(
                MemberTimer::Heartbeat,
                now_ms,
                self.config.heartbeat_interval_ms,
            );
        }
        if !self.timers.contains_key(&MemberTimer::Rebalance) {
            self.arm(
                MemberTimer::Rebalance,
                now_ms,
                self.config.rebalance_timeout_ms,
            );
        }
        self.send_join();
    }

    fn send_join(&mut self) {
        let Some(epoch) = self.epoch else {
            return;
        };
        self.heartbeat_since_join = false;
        let cooperative = self.config.protocol.cooperative();
        let sub = SubscriptionInfo {
            topics: self.config.subscriptions.clone(),
            owned: self.owned.clone(),
            generation: if self.owned.is_empty() {
                Generation::NONE
            } else {
                self.generation
            },
            rack: self.config.rack.clone(),
        };
        // A subscription the codec cannot write (an over-long topic name) is reported and sent
        // empty: the leader then treats the member as subscribing to nothing.
        let metadata = embedded::encode_subscription(&sub, cooperative).unwrap_or_else(|e| {
            self.events.push_back(MemberEvent::Malformed(e.to_string()));
            Vec::new()
        });
        self.transmit.push_back(Request::JoinGroup {
            epoch,
            member_id: self.config.member_id.clone(),
            session_timeout_ms: self.config.session_timeout_ms,
            rebalance_timeout_ms: self.config.rebalance_timeout_ms,
            metadata,
        });
    }

    fn joined(&mut self, now_ms: u64, ok: JoinGroupOk) {
        self.state = MemberState::AwaitingSync {
            generation: ok.generation,
            leader: ok.leader.clone(),
        };
        let assignments = if ok.leader == self.config.member_id {
            match self.lead(now_ms, ok.generation, &ok.members) {
                Ok(assignments) => assignments,
                Err(reason) => {
                    self.events.push_back(MemberEvent::AssignorFailed(reason));
                    self.memory = None;
                    self.rejoin(now_ms);
                    return;
                }
            }
        } else {
            // Leadership moved: the memory of earlier rounds no longer describes the group.
            self.memory = None;
            BTreeMap::new()
        };
        if let Some(epoch) = self.epoch {
            self.transmit.push_back(Request::SyncGroup {
                epoch,
                generation: ok.generation,
                member_id: self.config.member_id.clone(),
                assignments,
            });
        }
    }

    fn synced(&mut self, now_ms: u64, generation: Generation, leader: MemberId, bytes: &[u8]) {
        let format = self.config.protocol.assignment_format();
        let info = if bytes.is_empty() {
            AssignmentInfo::default()
        } else {
            match embedded::decode_assignment(bytes, format) {
                Ok(info) => info,
                Err(e) => {
                    self.events.push_back(MemberEvent::Malformed(e.to_string()));
                    self.rejoin(now_ms);
                    return;
                }
            }
        };
        let mut new_owned: BTreeSet<TopicPartition> =
            info.assigned.difference(&info.revoked).cloned().collect();
        // A leader that decided before our subscription changed may hand us partitions of a
        // topic we left: we do not take them, and we rejoin so that they go elsewhere.
        let unsubscribed = self.unsubscribed(&new_owned);
        if !unsubscribed.is_empty() {
            new_owned.retain(|tp| !unsubscribed.contains(tp));
            self.rejoin_needed = true;
        }
        let revoked: BTreeSet<TopicPartition> =
            self.owned.difference(&new_owned).cloned().collect();
        // Commit before giving partitions up, under the new generation: it is the only one the
        // coordinator accepts now.
        self.generation = generation;
        self.give_up_committing(revoked.clone());
        let assigned: BTreeSet<TopicPartition> =
            new_owned.difference(&self.owned).cloned().collect();
        self.owned = new_owned;
        if !assigned.is_empty() {
            self.events
                .push_back(MemberEvent::Assigned(assigned.clone()));
        }
        self.events
            .push_back(MemberEvent::RebalanceRound(RoundInfo {
                generation,
                leader,
                assigned,
                revoked: revoked.clone(),
                delay_ms: info.delay_ms,
            }));
        self.state = MemberState::Stable;
        self.timers.remove(&MemberTimer::Rebalance);
        self.arm(
            MemberTimer::Heartbeat,
            now_ms,
            self.config.heartbeat_interval_ms,
        );
        self.arm(MemberTimer::Session, now_ms, self.config.session_timeout_ms);
        if (self.config.protocol.cooperative() && !revoked.is_empty()) || self.rejoin_needed {
            self.rejoin(now_ms);
        } else if info.delay_ms > 0 {
            self.arm(
                MemberTimer::ScheduledRejoin,
                now_ms,
                u64::from(info.delay_ms),
            );
        }
    }

    fn join_failed(&mut self, now_ms: u64, code: ErrorCode) {
        match code {
            ErrorCode::NotCoordinator => {
                self.state = MemberState::RediscoveringCoordinator { rejoin: true };
                self.find_coordinator(now_ms);
            }
            ErrorCode::CoordinatorLoadInProgress => {
                self.state = MemberState::Joining;
                self.arm(MemberTimer::Retry, now_ms, self.config.retry_backoff_ms);
            }
            ErrorCode::IllegalGeneration | ErrorCode::UnknownMemberId => {
                self.lose_all();
                self.rejoin(now_ms);
            }
            ErrorCode::RebalanceInProgress => self.rejoin(now_ms),
        }
    }

    /// A heartbeat answer. While stable, errors are acted on; while joining or syncing, only a
    /// lost coordinator matters, and an `Ok` to a heartbeat sent after the JoinGroup means the
    /// coordinator is not holding our join (it was lost in a failover): send it again.
    fn heartbeat_answered(
        &mut self,
        now_ms: u64,
        sent_under: Generation,
        result: Result<(), ErrorCode>,
    ) {
        match (&self.state, result) {
            (MemberState::Stable, Err(code)) => self.stable_error(now_ms, sent_under, code),
            (MemberState::Joining, Ok(())) if self.heartbeat_since_join => self.send_join(),
            (
                MemberState::Joining | MemberState::AwaitingSync { .. },
                Err(ErrorCode::NotCoordinator),
            ) => {
                self.state = MemberState::RediscoveringCoordinator { rejoin: true };
                self.timers.remove(&MemberTimer::Heartbeat);
                self.find_coordinator(now_ms);
            }
            _ => {}
        }
    }

    /// An error answering a heartbeat or commit sent under `sent_under`.
    fn stable_error(&mut self, now_ms: u64, sent_under: Generation, code: ErrorCode) {
        if self.state != MemberState::Stable {
            return; // a join or sync is under way and will settle the member's fate
        }
        if sent_under != self.generation && !fault_on!(self.config, StaleErrorResets) {
            return; // KAFKA-9823's fix: the error is about a generation we have left
        }
        match code {
            ErrorCode::RebalanceInProgress => self.rejoin(now_ms),
            ErrorCode::IllegalGeneration | ErrorCode::UnknownMemberId => {
                self.lose_all();
                self.rejoin(now_ms);
            }
            ErrorCode::NotCoordinator => {
                self.state = MemberState::RediscoveringCoordinator { rejoin: false };
                self.timers.remove(&MemberTimer::Heartbeat);
                self.find_coordinator(now_ms);
            }
            ErrorCode::CoordinatorLoadInProgress => {}
        }
    }

    /// Commits and stops `partitions` (a clean hand-over).
    fn give_up_committing(&mut self, partitions: BTreeSet<TopicPartition>) {
        if partitions.is_empty() {
            return;
        }
        if let Some(epoch) = self.epoch {
            for partition in &partitions {
                self.transmit.push_back(Request::OffsetCommit {
                    epoch,
                    generation: self.generation,
                    member_id: self.config.member_id.clone(),
                    partition: partition.clone(),
                    offset: i64::from(self.generation.0),
                });
            }
        }
        self.owned.retain(|p| !partitions.contains(p));
        self.events.push_back(MemberEvent::Revoked(partitions));
    }

    /// Stops everything without committing (fenced, or cut off).
    fn lose_all(&mut self) {
        if !self.owned.is_empty() {
            let lost = std::mem::take(&mut self.owned);
            self.events.push_back(MemberEvent::Lost(lost));
        }
        self.generation = Generation::NONE;
    }
}
