//! The stateright model: the core's real coordinator and members, a network, a durable log, and
//! an environment that delivers messages, fires armed timers and injects disruptions.
//!
//! # Why a custom `Model` rather than stateright's `ActorModel`
//!
//! The core is sans-IO (inputs in, `poll_*` outputs out), not stateright actors; failover must
//! swap the coordinator for a *new* epoch recovered from a durable log while messages to and
//! from the old one stay in flight; the timing rules need to look across actors (a coordinator
//! timer may fire only once the member it evicts has stopped); and disruptions need a budget.
//! A hand-written [`Model`] says all of that directly and keeps every action serialisable for
//! regression files.
//!
//! # Time
//!
//! The clock ([`ModelState::clock_ms`]) starts at [`NOW_MS`] and stands still except when a
//! member's scheduled rejoin fires: it then moves to that timer's deadline, so a leader deciding
//! the next round sees the scheduled delay as passed (deferred partitions are released, the next
//! incremental batch may move). A timer's deadline is `clock + timeout`, so re-arming at a given
//! clock gives an equal state; the clock moves only with scheduled rounds, which the generation
//! bound limits, so the state space stays finite. Which armed timer fires next is the model's
//! nondeterministic choice, restricted only by the timing [`Rules`].

use std::collections::{BTreeMap, BTreeSet};

use rebalance::protocol::embedded::{AssignmentFormat, decode_assignment};
use rebalance::protocol::{
    AssignorRef, Coordinator, CoordinatorConfig, CoordinatorTimer, Fault, FaultSet, GroupRecord,
    GroupState, LoadedGroup, Member, MemberConfig, MemberEvent, MemberTimer, RebalanceProtocol,
    Request, Response,
};
use rebalance::{CoordinatorEpoch, MemberId, TopicPartition};
use stateright::{Model, Property};

use crate::config::{ConfigError, DisruptionKind, ModelConfig, NetworkKind, ProtocolKind};
use crate::network::{Direction, Network, Payload};
use crate::shared::Shared;
use crate::state::{
    Action, CoordTimer, MemTimer, ModelState, Slot, SlotStatus, core_member_timer, member_id,
    model_member_timer, note,
};
use step::{CoordinatorInput, MemberInput};

mod disruption;
mod rules;
pub mod step;

/// The model's constant clock.
pub const NOW_MS: u64 = 1_000_000;
/// Members' session timeout.
pub const SESSION_TIMEOUT_MS: u64 = 10_000;
/// Members' rebalance timeout.
pub const REBALANCE_TIMEOUT_MS: u64 = 30_000;
/// Members' heartbeat interval.
pub const HEARTBEAT_INTERVAL_MS: u64 = 3_000;

/// The longest schedule [`RebalanceModel::settle`] runs.
pub const SETTLE_STEPS: usize = 1_000;

/// The rebalance model for one configuration.
#[derive(Clone, Debug)]
pub struct RebalanceModel {
    /// The configuration it was built from.
    pub config: ModelConfig,
    faults: FaultSet,
    topic_names: Vec<String>,
    assignor: AssignorRef,
}

/// Parses a fault name: the variant name (`TrustAllClaims`), its kebab-case form
/// (`trust-all-claims`) or its Kafka issue key (`KAFKA-7026`).
///
/// # Errors
/// [`ConfigError::Unknown`] for anything else.
pub fn parse_fault(name: &str) -> Result<Fault, ConfigError> {
    Fault::ALL
        .into_iter()
        .find(|f| {
            let variant = format!("{f:?}");
            variant == name
                || crate::faults::fault_name(*f) == name
                || f.issue().eq_ignore_ascii_case(name)
        })
        .ok_or_else(|| ConfigError::Unknown {
            what: "fault",
            value: name.to_owned(),
            expected: "a rebalance::protocol::Fault variant, in kebab-case, or its KAFKA-nnnn key",
        })
}

/// Compacts a durable log to the shortest log that replays to the same group: the latest
/// generation (or empty) record, its assignment if persisted, and the latest offset of each
/// partition. Keeps the log (and so the state space) bounded.
#[must_use]
pub fn compact_log(log: &[GroupRecord]) -> Vec<GroupRecord> {
    let loaded = LoadedGroup::replay(log);
    let mut out = Vec::new();
    if let Some(last) = log.iter().rev().find(|r| {
        matches!(
            r,
            GroupRecord::Generation { .. } | GroupRecord::Empty { .. }
        )
    }) {
        out.push(last.clone());
        if let Some(assignment) = loaded.assignment {
            out.push(GroupRecord::Assignment {
                generation: loaded.generation,
                assignment,
            });
        }
    }
    for (partition, offset) in loaded.offsets {
        out.push(GroupRecord::Offset { partition, offset });
    }
    out
}

impl RebalanceModel {
    /// Builds the model. Prefer [`ModelConfig::into_model`].
    ///
    /// # Errors
    /// [`ConfigError::Unknown`] for an unknown fault or assignor name.
    pub fn new(config: ModelConfig) -> Result<RebalanceModel, ConfigError> {
        let mut faults = FaultSet::none();
        for name in &config.faults {
            faults.insert(parse_fault(name)?);
        }
        let assignor = rebalance::assignor::assignor_by_name(&config.assignor)
            .map(|a| AssignorRef(std::sync::Arc::from(a)))
            .ok_or_else(|| ConfigError::Unknown {
                what: "assignor",
                value: config.assignor.clone(),
                expected: "uniform-v2, uniform-v1, range",
            })?;
        let topic_names = (0..config.topics).map(|t| format!("t{t}")).collect();
        Ok(RebalanceModel {
            config,
            faults,
            topic_names,
            assignor,
        })
    }

    /// The topic names with their partition counts (every member's metadata).
    #[must_use]
    pub fn metadata(&self) -> BTreeMap<String, u32> {
        self.topic_names
            .iter()
            .map(|t| (t.clone(), self.config.partitions))
            .collect()
    }

    /// The topic names selected by a bitmask.
    #[must_use]
    pub fn topics_of(&self, mask: u8) -> BTreeSet<String> {
        self.topic_names
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(_, t)| t.clone())
            .collect()
    }

    /// Whether `topic` is among the topics selected by a bitmask (no allocation, unlike
    /// [`RebalanceModel::topics_of`]).
    #[must_use]
    pub fn topic_in(&self, mask: u8, topic: &str) -> bool {
        self.topic_names
            .iter()
            .position(|t| t == topic)
            .is_some_and(|i| mask & (1 << i) != 0)
    }

    /// The encoding the leader uses for assignments under the configured protocol.
    #[must_use]
    pub fn assignment_format(&self) -> AssignmentFormat {
        match self.config.protocol {
            ProtocolKind::Eager => AssignmentFormat::Eager,
            ProtocolKind::Cooperative => AssignmentFormat::CooperativeV0,
            ProtocolKind::Deferred | ProtocolKind::Incremental => AssignmentFormat::CooperativeV1,
        }
    }

    fn protocol(&self) -> RebalanceProtocol {
        let delay_ms = u32::try_from(self.config.delay_ms).unwrap_or(u32::MAX);
        match self.config.protocol {
            ProtocolKind::Eager => RebalanceProtocol::Eager,
            ProtocolKind::Cooperative => RebalanceProtocol::SimpleCooperative,
            ProtocolKind::Deferred => RebalanceProtocol::Deferred { delay_ms },
            ProtocolKind::Incremental => RebalanceProtocol::Incremental {
                delay_ms,
                max_moves: self.config.max_moves,
            },
        }
    }

    fn coordinator_config(&self) -> CoordinatorConfig {
        CoordinatorConfig {
            faults: self.faults.clone(),
            ..CoordinatorConfig::default()
        }
    }

    fn new_member(&self, now_ms: u64, slot: usize, incarnation: u8, topics: u8) -> Member {
        let mut config = MemberConfig::new(
            member_id(slot, incarnation),
            self.topics_of(topics),
            self.protocol(),
            self.assignor.clone(),
        );
        config.session_timeout_ms = SESSION_TIMEOUT_MS;
        config.rebalance_timeout_ms = REBALANCE_TIMEOUT_MS;
        config.heartbeat_interval_ms = HEARTBEAT_INTERVAL_MS;
        config.faults = self.faults.clone();
        let mut member = Member::new(config);
        member.handle_metadata(now_ms, self.metadata());
        member.start(now_ms);
        member
    }

    /// Runs one fixed schedule from `state` until the group has converged (or
    /// [`SETTLE_STEPS`] steps): deliver the first message in flight, else fire the first
    /// timer that is not a heartbeat, else the first heartbeat; never a disruption or a network
    /// fault. Every step is an ordinary model step, so the result is a reachable state and a
    /// path from it is a path of the full model.
    #[must_use]
    pub fn settle(&self, mut state: ModelState) -> ModelState {
        let rank = |a: &Action| match a {
            Action::Deliver { .. } => 0,
            Action::CoordinatorTimer(_) => 1,
            Action::MemberTimer { timer, .. } if *timer != MemTimer::Heartbeat => 2,
            Action::MemberTimer { .. } => 3,
            Action::Drop { .. } | Action::Duplicate { .. } | Action::Disrupt(_) => 4,
        };
        let mut actions = Vec::new();
        for _ in 0..SETTLE_STEPS {
            if crate::properties::converged(self, &state) {
                break;
            }
            actions.clear();
            self.actions(&state, &mut actions);
            let Some(action) = actions
                .drain(..)
                .filter(|a| rank(a) < 4)
                .min_by_key(|a| rank(a))
            else {
                break;
            };
            match self.next_state(&state, action) {
                Some(next) => state = next,
                None => break,
            }
        }
        state.note = 0;
        state
    }

    /// Drains every output of the coordinator and the running members into the log and the
    /// network, recording events in the step notes.
    ///
    /// Only actors this step changed in place can have output: every stored state is fully
    /// drained, a step copies an actor (`Shared::make_mut`) before feeding it, so an actor still
    /// shared with the previous state is untouched and skipped without a copy, and a memoised
    /// step ([`step`]) hands back a drained actor with its output, emitted at once.
    fn pump(&self, state: &mut ModelState) {
        self.pump_coordinator(state, &mut |_, _| {});
        for slot in 0..state.slots.len() {
            let Some(member) = state.slots[slot].member.as_mut().and_then(Shared::get_mut) else {
                continue;
            };
            let requests: Vec<Request> = std::iter::from_fn(|| member.poll_transmit()).collect();
            let events: Vec<MemberEvent> = std::iter::from_fn(|| member.poll_event()).collect();
            Self::emit_member(state, slot, requests, &events);
        }
    }

    /// Moves what the member in `slot` output into the network (as far as its slot lets it
    /// through) and the step notes, and checks whether a bounced member has its partitions back.
    fn emit_member(
        state: &mut ModelState,
        slot: usize,
        requests: impl IntoIterator<Item = Request>,
        events: &[MemberEvent],
    ) {
        let s = &state.slots[slot];
        let Some(member) = s.member.as_ref() else {
            return;
        };
        let connected = s.status == SlotStatus::Live;
        for request in requests {
            // What a heartbeat answer makes a stalled member do (rejoin, commit) is the hung
            // application thread's work in a real client: it is never sent.
            if connected && (!s.stalled || matches!(request, Request::Heartbeat { .. })) {
                state.network.send(
                    (member.id().clone(), Direction::ToCoordinator),
                    Payload::Request(request),
                );
            }
        }
        for event in events {
            if let MemberEvent::RebalanceRound(round) = event
                && round.delay_ms > 0
            {
                state.note |= note::DEFERRED_DELAY;
            }
        }
        if let Some(before) = &s.bounced_from
            && before.is_subset(member.consuming())
        {
            if !before.is_empty() {
                state.note |= note::BOUNCE_REGAINED;
            }
            state.slots[slot].bounced_from = None;
        }
    }

    /// Drains the coordinator's records into the log and its responses into the network
    /// (`inspect` sees every response first), when this step changed it in place.
    fn pump_coordinator(
        &self,
        state: &mut ModelState,
        inspect: &mut dyn FnMut(&MemberId, &Response),
    ) {
        let Some(coordinator) = state.coordinator.get_mut() else {
            return;
        };
        let records: Vec<GroupRecord> = std::iter::from_fn(|| coordinator.poll_persist()).collect();
        let responses: Vec<(MemberId, Response)> =
            std::iter::from_fn(|| coordinator.poll_transmit()).collect();
        Self::emit_coordinator(state, &records, responses, inspect);
    }

    /// Appends the coordinator's records to the log and sends its responses to the members
    /// still connected (`inspect` sees every response first).
    fn emit_coordinator(
        state: &mut ModelState,
        records: &[GroupRecord],
        responses: impl IntoIterator<Item = (MemberId, Response)>,
        inspect: &mut dyn FnMut(&MemberId, &Response),
    ) {
        if !records.is_empty() {
            state.log = step::log(&state.log, records);
        }
        for (to, response) in responses {
            inspect(&to, &response);
            // A stalled member's application thread never reads another answer: only its
            // heartbeat thread's answers reach it (see `Disruption::Stall`).
            let connected = state.slot_of(&to).is_some_and(|s| {
                state.slots[s].status == SlotStatus::Live
                    && (!state.slots[s].stalled || matches!(response, Response::Heartbeat { .. }))
            });
            if connected {
                state
                    .network
                    .send((to, Direction::ToMember), Payload::Response(response));
            }
        }
    }

    /// Feeds the coordinator one input (a memoised step) and emits its output; `inspect` sees
    /// every response first.
    fn step_coordinator(
        state: &mut ModelState,
        input: &CoordinatorInput,
        inspect: &mut dyn FnMut(&MemberId, &Response),
    ) {
        let outcome = step::coordinator(&state.coordinator, state.clock_ms, input);
        state.coordinator = outcome.coordinator.clone();
        Self::emit_coordinator(
            state,
            &outcome.records,
            outcome.responses.iter().cloned(),
            inspect,
        );
    }

    /// Feeds the member in `slot` one input (a memoised step) and emits its output; `None` when
    /// no member runs there.
    fn step_member(state: &mut ModelState, slot: usize, input: &MemberInput) -> Option<()> {
        let source = state.slots.get(slot)?.member.as_ref()?;
        let outcome = step::member(source, state.clock_ms, input);
        state.slots[slot].member = Some(outcome.member.clone());
        Self::emit_member(
            state,
            slot,
            outcome.requests.iter().cloned(),
            &outcome.events,
        );
        Some(())
    }

    /// Checks an accepted offset commit: the committing generation must be the group's, the
    /// member one of its members, the partition the member's in the stored assignment (assigned
    /// or being revoked) when the group is stable, and no other running member may consume it.
    fn commit_from_owner(
        &self,
        state: &ModelState,
        from: &MemberId,
        generation: rebalance::Generation,
        partition: &TopicPartition,
    ) -> bool {
        let c = &state.coordinator;
        if generation != c.generation() || !c.members().contains_key(from) {
            return false;
        }
        if let Some(assignment) = c.assignment() {
            let owns = assignment
                .get(from)
                .and_then(|bytes| decode_assignment(bytes, self.assignment_format()).ok())
                .is_some_and(|a| a.assigned.contains(partition) || a.revoked.contains(partition));
            if !owns {
                return false;
            }
        }
        state.running().all(|(slot, m)| {
            *Self::slot_member_id(state, slot) == *from
                || state.slots[slot].stalled
                || !m.consuming().contains(partition)
        })
    }

    fn deliver(&self, state: &mut ModelState, member: MemberId, direction: Direction, p: Payload) {
        match (direction, p) {
            (Direction::ToCoordinator, Payload::Request(request)) => {
                // An offset commit's answer is looked at as it goes out (the committer's id is
                // copied for that; other requests hand theirs to the coordinator).
                let commit = match &request {
                    Request::OffsetCommit {
                        generation,
                        partition,
                        ..
                    } => Some((member.clone(), *generation, partition.clone())),
                    _ => None,
                };
                let mut accepted = false;
                let input = CoordinatorInput::Request(member, request);
                Self::step_coordinator(state, &input, &mut |to, r| {
                    if let Some((member, _, partition)) = &commit
                        && to == member
                        && let Response::OffsetCommit {
                            partition: p,
                            result: Ok(()),
                            ..
                        } = r
                        && p == partition
                    {
                        accepted = true;
                    }
                });
                if let Some((member, generation, partition)) = commit
                    && accepted
                {
                    state.note |= note::COMMIT_ACCEPTED;
                    if !self.commit_from_owner(state, &member, generation, &partition) {
                        state.note |= note::COMMIT_FROM_NON_OWNER;
                    }
                }
            }
            (Direction::ToMember, Payload::Response(response)) => {
                if let Some(slot) = state.slot_of(&member)
                    && state.slots[slot].status == SlotStatus::Live
                    && (!state.slots[slot].stalled
                        || matches!(response, Response::Heartbeat { .. }))
                {
                    Self::step_member(state, slot, &MemberInput::Response(response));
                }
            }
            // A payload never travels the wrong way; nothing to do.
            _ => {}
        }
    }
}

impl Model for RebalanceModel {
    type State = ModelState;
    type Action = Action;

    fn init_states(&self) -> Vec<ModelState> {
        let all_topics = ((1u16 << self.config.topics) - 1) as u8;
        let joins = if self.config.kinds.contains(&DisruptionKind::Join) {
            usize::from(self.config.disruptions)
        } else {
            0
        };
        let slots = (0..self.config.members + joins)
            .map(|slot| {
                let started = slot < self.config.members;
                Slot {
                    status: if started {
                        SlotStatus::Live
                    } else {
                        SlotStatus::Unstarted
                    },
                    incarnation: 0,
                    member: started
                        .then(|| Shared::new(self.new_member(NOW_MS, slot, 0, all_topics))),
                    topics: all_topics,
                    bounced_from: None,
                    stalled: false,
                }
            })
            .collect();
        let mut state = ModelState {
            coordinator: Shared::new(Coordinator::new(
                CoordinatorEpoch(1),
                self.coordinator_config(),
            )),
            log: Shared::new(Vec::new()),
            slots,
            network: Network::new(self.config.network != NetworkKind::Unordered),
            disruptions_used: 0,
            network_faults_used: 0,
            max_generation: rebalance::Generation(0),
            note: 0,
            clock_ms: NOW_MS,
        };
        self.pump(&mut state);
        state.note = 0;
        if self.config.start_stable {
            state = self.settle(state);
        }
        vec![state]
    }

    fn actions(&self, state: &ModelState, actions: &mut Vec<Action>) {
        let network_faults = state.network_faults_used < self.config.network_faults;
        for ((member, direction), index, _) in state.network.deliverable() {
            let (member, direction) = (member.clone(), *direction);
            actions.push(Action::Deliver {
                member: member.clone(),
                direction,
                index,
            });
            if network_faults && self.config.network == NetworkKind::Lossy {
                actions.push(Action::Drop {
                    member: member.clone(),
                    direction,
                    index,
                });
            }
            if network_faults && self.config.network == NetworkKind::Duplicating {
                actions.push(Action::Duplicate {
                    member,
                    direction,
                    index,
                });
            }
        }
        for (timer, _) in state.coordinator.timers() {
            if self.coordinator_timer_allowed(state, &timer) {
                actions.push(Action::CoordinatorTimer(CoordTimer::from(&timer)));
            }
        }
        for (slot, member) in state.running() {
            for (timer, _) in member.timers() {
                let timer = model_member_timer(&timer);
                if self.member_timer_allowed(state, slot, timer) {
                    actions.push(Action::MemberTimer { slot, timer });
                }
            }
        }
        self.disruptions(state, actions);
    }

    fn next_state(&self, last: &ModelState, action: Action) -> Option<ModelState> {
        let mut state = last.clone();
        state.note = 0;
        // The action is taken apart by value: a delivery's member id moves on without a copy.
        match action {
            Action::Deliver {
                member,
                direction,
                index,
            } => {
                let payload = state.network.take(&member, direction, index)?;
                self.deliver(&mut state, member, direction, payload);
            }
            Action::Drop {
                member,
                direction,
                index,
            } => {
                state.network.take(&member, direction, index)?;
                state.network_faults_used += 1;
            }
            Action::Duplicate {
                member,
                direction,
                index,
            } => {
                let payload = state.network.get(&member, direction, index)?.clone();
                state.network_faults_used += 1;
                self.deliver(&mut state, member, direction, payload);
            }
            Action::CoordinatorTimer(timer) => {
                let loading = matches!(state.coordinator.state(), GroupState::Loading { .. });
                Self::step_coordinator(
                    &mut state,
                    &CoordinatorInput::Timer(CoordinatorTimer::from(&timer)),
                    &mut |_, _| {},
                );
                if loading && state.coordinator.generation().0 >= 1 {
                    state.note |= note::GENERATION_SURVIVED_FAILOVER;
                }
            }
            Action::MemberTimer { slot, timer } => {
                let timer = core_member_timer(timer);
                let m = state.slots.get(slot)?.member.as_ref()?;
                if timer == MemberTimer::ScheduledRejoin
                    && self.config.rules.scheduled_delay_passes
                    && let Some((_, deadline_ms)) = m.timers().find(|(t, _)| *t == timer)
                {
                    state.clock_ms = state.clock_ms.max(deadline_ms);
                }
                Self::step_member(&mut state, slot, &MemberInput::Timer(timer))?;
            }
            Action::Disrupt(d) => self.disrupt(&mut state, &d),
        }
        self.pump(&mut state);
        if !Shared::ptr_eq(&state.coordinator, &last.coordinator) {
            crate::memo::intern_coordinator(&mut state.coordinator);
        }
        let (lost, lost_in_stable) = crate::properties::lost_assignments(last, &state);
        if lost {
            state.note |= note::ASSIGNMENT_LOST;
        }
        if lost_in_stable {
            state.note |= note::ASSIGNMENT_LOST_IN_STABLE_GENERATION;
        }
        let generation = state.coordinator.generation();
        if generation < state.max_generation {
            state.note |= note::GENERATION_BACK;
        }
        state.max_generation = state.max_generation.max(generation);
        Some(state)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        crate::properties::properties(self)
    }

    fn within_boundary(&self, state: &ModelState) -> bool {
        state.disruptions_used <= self.config.disruptions
            && state.network_faults_used <= self.config.network_faults
            && state.max_generation.0 <= self.config.max_generation
    }
}
