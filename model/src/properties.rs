//! The model's properties, each defined once here and reused by the checker, the CLI, the
//! regression replays and the tests.
//!
//! - **Always** (safety): no partition consumed by two running members; members consume only
//!   partitions of topics they subscribe to; generations never go back; an offset commit is
//!   accepted only from the partition's owner in the committing generation; and convergence at
//!   quiescent states.
//! - **Sometimes** (non-vacuity): one example paired with each `always`, plus the scenarios
//!   the model must be able to reach (a deferred rebalance with a delay, a bounce that gets its
//!   partitions back, a failover mid-rebalance, and each enabled disruption kind).
//!
//! The liveness check proper (every fair bottom SCC converged) is in [`crate::liveness`], with
//! [`converged`] as its goal.
//!
//! A *stalled* member (a `stall` disruption: its application thread hangs for good, its
//! heartbeat thread goes on) consumes nothing, whatever its core state still holds. Like a
//! crashed member it is left out of "no partition owned twice", "members consume only subscribed
//! topics", the offset-commit check (it commits nothing; its holdings do not make another
//! member's commit a non-owner's) and the convergence of the others; see [`converged`] for the
//! one place it still counts.

use std::collections::BTreeMap;

use rebalance::TopicPartition;
use rebalance::protocol::{GroupState, Member, MemberState, Request};
use stateright::{Model, Property};

use crate::config::{DisruptionKind, ProtocolKind};
use crate::memo::AssignmentFacts;
use crate::model::RebalanceModel;
use crate::network::Payload;
use crate::state::{Action, MemTimer, ModelState, SlotStatus, note};

/// No partition is consumed by two running members (connected or cut off; stalled members
/// consume nothing) at once.
pub const NO_DOUBLE_OWNERSHIP: &str = "no partition owned twice";
/// Running members consume only partitions of topics they subscribe to (stalled members consume
/// nothing).
pub const SUBSCRIBED_ONLY: &str = "members consume only subscribed topics";
/// The group's generation never decreases (across failovers too).
pub const GENERATIONS_MONOTONIC: &str = "generations never go back";
/// An offset commit is accepted only from the member owning the partition in the committing
/// generation.
pub const COMMITS_FROM_OWNER: &str = "offset commits accepted only from the owner";
/// At every quiescent state the group has converged.
pub const CONVERGED_WHEN_QUIESCENT: &str = "converged when quiescent";
/// A connected member of the coordinator's current stable generation never loses its assignment
/// (stops partitions without a commit and forgets its generation) while the coordinator still
/// counts it in that generation: nothing told it that it was fenced, so the loss is needless.
pub const ASSIGNMENT_KEPT: &str = "stable members keep their assignment";
/// The coordinator's stored assignment (the leader's, for the current generation) gives each
/// partition to at most one member.
pub const ASSIGNMENT_EXCLUSIVE: &str = "an assignment gives a partition to one member";

/// Two members consume partitions at the same time (pairs with [`NO_DOUBLE_OWNERSHIP`]).
pub const EX_TWO_CONSUMERS: &str = "example: two members consume at once";
/// A member consumes a partition of a topic it subscribes to (pairs with [`SUBSCRIBED_ONLY`]).
pub const EX_CONSUMING: &str = "example: a member consumes";
/// A generation survives a failover (pairs with [`GENERATIONS_MONOTONIC`]).
pub const EX_GENERATION_SURVIVES: &str = "example: a generation survives failover";
/// An offset commit is accepted (pairs with [`COMMITS_FROM_OWNER`]).
pub const EX_COMMIT: &str = "example: an offset commit is accepted";
/// A quiescent converged state (pairs with [`CONVERGED_WHEN_QUIESCENT`]).
pub const EX_CONVERGED: &str = "example: converged";
/// A scheduled rebalance with a positive delay is announced.
pub const EX_DEFERRED: &str = "example: a deferred rebalance with a delay";
/// A bounced member's new incarnation gets all its partitions back.
pub const EX_BOUNCE_REGAINS: &str = "example: a bounce gets its partitions back";
/// A coordinator failover during a join or sync phase.
pub const EX_FAILOVER_MID_REBALANCE: &str = "example: failover mid-rebalance";
/// A member stops partitions without a commit, fenced or cut off (pairs with
/// [`ASSIGNMENT_KEPT`]).
pub const EX_LOST: &str = "example: a member loses its partitions";
/// A stored assignment gives partitions to two members (pairs with [`ASSIGNMENT_EXCLUSIVE`]).
pub const EX_SHARED_OUT: &str = "example: an assignment gives partitions to two members";

/// Names of the per-kind disruption examples, in [`DisruptionKind::ALL`] order.
pub const EX_KIND: [&str; 9] = [
    "example: disruption join",
    "example: disruption leave",
    "example: disruption crash",
    "example: disruption bounce",
    "example: disruption isolate",
    "example: disruption leader",
    "example: disruption failover",
    "example: disruption subscribe",
    "example: disruption stall",
];

/// Every partition consumed by each running member that is not stalled, with the consumers.
fn consumers(state: &ModelState) -> BTreeMap<&TopicPartition, usize> {
    let mut out = BTreeMap::new();
    for (_, m) in consuming_members(state) {
        for p in m.consuming() {
            *out.entry(p).or_insert(0) += 1;
        }
    }
    out
}

/// The running members that consume what their core state holds: all but the stalled ones.
fn consuming_members(state: &ModelState) -> impl Iterator<Item = (usize, &Member)> {
    state
        .running()
        .filter(|(slot, _)| !state.slots[*slot].stalled)
}

/// [`NO_DOUBLE_OWNERSHIP`].
#[must_use]
pub fn no_double_ownership(_: &RebalanceModel, state: &ModelState) -> bool {
    consumers(state).values().all(|n| *n <= 1)
}

/// [`SUBSCRIBED_ONLY`].
#[must_use]
pub fn subscribed_only(model: &RebalanceModel, state: &ModelState) -> bool {
    consuming_members(state).all(|(slot, m)| {
        let mask = state.slots[slot].topics;
        m.consuming().iter().all(|p| model.topic_in(mask, &p.topic))
    })
}

/// [`GENERATIONS_MONOTONIC`].
#[must_use]
pub fn generations_monotonic(_: &RebalanceModel, state: &ModelState) -> bool {
    !state.noted(note::GENERATION_BACK)
}

/// [`COMMITS_FROM_OWNER`].
#[must_use]
pub fn commits_from_owner(_: &RebalanceModel, state: &ModelState) -> bool {
    !state.noted(note::COMMIT_FROM_NON_OWNER)
}

/// [`ASSIGNMENT_KEPT`].
#[must_use]
pub fn assignment_kept(_: &RebalanceModel, state: &ModelState) -> bool {
    !state.noted(note::ASSIGNMENT_LOST_IN_STABLE_GENERATION)
}

/// Compares the states before and after a step: whether some running member lost partitions in
/// it (stopped them without a commit, its generation reset), and whether one of those was
/// connected and still counted by the stable coordinator in the generation it had (the
/// violation of [`ASSIGNMENT_KEPT`]). The model records both as step notes.
#[must_use]
pub fn lost_assignments(before: &ModelState, after: &ModelState) -> (bool, bool) {
    let mut lost = false;
    let mut in_stable = false;
    for (slot, (b, a)) in before.slots.iter().zip(&after.slots).enumerate() {
        let (Some(bm), Some(am)) = (b.running(), a.running()) else {
            continue;
        };
        if b.incarnation != a.incarnation
            || bm.generation() == rebalance::Generation::NONE
            || am.generation() != rebalance::Generation::NONE
            || bm.consuming().is_subset(am.consuming())
        {
            continue;
        }
        lost = true;
        let c = &after.coordinator;
        let id = RebalanceModel::slot_member_id(after, slot);
        if a.status == SlotStatus::Live
            && matches!(c.state(), GroupState::Stable { .. })
            && c.generation() == bm.generation()
            && c.members().contains_key(&id)
        {
            in_stable = true;
        }
    }
    (lost, in_stable)
}

/// How many members the coordinator's stored assignment gives each partition to.
fn assigned_counts(model: &RebalanceModel, state: &ModelState) -> BTreeMap<TopicPartition, usize> {
    let mut out = BTreeMap::new();
    let format = model.assignment_format();
    for bytes in state
        .coordinator
        .assignment()
        .into_iter()
        .flat_map(|a| a.values())
    {
        if bytes.is_empty() {
            continue;
        }
        if let Ok(info) = rebalance::protocol::embedded::decode_assignment(bytes, format) {
            for p in info.assigned {
                *out.entry(p).or_insert(0) += 1;
            }
        }
    }
    out
}

/// The facts of the coordinator's stored assignment, computed once per coordinator value
/// (see [`crate::memo`]).
fn assignment_facts(model: &RebalanceModel, state: &ModelState) -> AssignmentFacts {
    let format = model.assignment_format();
    state
        .coordinator
        .memo()
        .assignment_facts(format, || AssignmentFacts {
            exclusive: assigned_counts(model, state).values().all(|n| *n <= 1),
            shared_out: shared_out(model, state),
        })
}

/// Whether at least two members are given partitions by the stored assignment.
fn shared_out(model: &RebalanceModel, state: &ModelState) -> bool {
    let Some(assignment) = state.coordinator.assignment() else {
        return false;
    };
    let format = model.assignment_format();
    assignment
        .values()
        .filter(|bytes| {
            rebalance::protocol::embedded::decode_assignment(bytes, format)
                .is_ok_and(|info| !info.assigned.is_empty())
        })
        .count()
        >= 2
}

/// [`ASSIGNMENT_EXCLUSIVE`].
#[must_use]
pub fn assignment_exclusive(model: &RebalanceModel, state: &ModelState) -> bool {
    assignment_facts(model, state).exclusive
}

fn ex_shared_out(model: &RebalanceModel, state: &ModelState) -> bool {
    assignment_facts(model, state).shared_out
}

fn ex_lost(_: &RebalanceModel, state: &ModelState) -> bool {
    state.noted(note::ASSIGNMENT_LOST)
}

/// Whether the state is quiescent: the coordinator is stable, every connected running member is
/// stable, the disruption budget is spent (or no disruption is possible) and every enabled action
/// is heartbeat traffic — a member's
/// heartbeat timer, or delivering (or losing or duplicating) a heartbeat request of a group
/// member for the coordinator's current epoch and generation, or a successful heartbeat
/// response.
#[must_use]
pub fn quiescent(model: &RebalanceModel, state: &ModelState) -> bool {
    // Cheap filters first: the coordinator stable, and only heartbeats in flight — requests of
    // its members for its epoch and generation (others would be answered with an error), and
    // successful answers.
    let c = &state.coordinator;
    if !matches!(c.state(), GroupState::Stable { .. }) {
        return false;
    }
    // A connected member that is not stable (say, joining after a load-in-progress answer) still
    // has work to do: its next heartbeat answer sends it back to JoinGroup. Only stable members'
    // heartbeats are idle traffic.
    let unsettled = state.slots.iter().any(|s| {
        s.status != SlotStatus::Isolated
            && !s.stalled
            && s.running()
                .is_some_and(|m| !matches!(m.state(), MemberState::Stable))
    });
    if unsettled {
        return false;
    }
    let current = |p: &Payload| match p {
        Payload::Request(Request::Heartbeat {
            epoch,
            generation,
            member_id,
        }) => {
            *epoch == c.epoch()
                && *generation == c.generation()
                && c.members().contains_key(member_id)
        }
        other => other.is_heartbeat(),
    };
    // A stalled member's heartbeats and their answers, whatever they say, are all it will ever
    // exchange: idle traffic too.
    let stalled = |id: &rebalance::MemberId| {
        state
            .slot_of(id)
            .is_some_and(|slot| state.slots[slot].stalled)
    };
    let idle = |(member, _): &crate::network::ChannelId, p: &Payload| {
        current(p)
            || (stalled(member)
                && matches!(
                    p,
                    Payload::Request(Request::Heartbeat { .. })
                        | Payload::Response(rebalance::protocol::Response::Heartbeat { .. })
                ))
    };
    if !state.network.iter().all(|(channel, p)| idle(channel, p)) {
        return false;
    }
    let mut actions = Vec::new();
    model.actions(state, &mut actions);
    actions.iter().all(|a| match a {
        Action::MemberTimer { timer, .. } => *timer == MemTimer::Heartbeat,
        Action::Deliver { .. } | Action::Drop { .. } | Action::Duplicate { .. } => true,
        Action::CoordinatorTimer(_) | Action::Disrupt(_) => false,
    })
}

/// Whether the group has converged: the coordinator is stable; its members are exactly the
/// connected running members, each stable in the coordinator's generation; every partition of a
/// topic some connected member subscribes to is consumed by exactly one connected member that
/// subscribes to it; cut-off members consume nothing.
///
/// Stalled members: one the coordinator has evicted is left out, as a crashed one. One it still
/// counts must be in its generation, and the partitions its core state holds count as its own
/// (its state is otherwise not checked): they are not consumed, but only a poll-interval timeout
/// (Kafka's `max.poll.interval.ms`, which the core does not have) would free them, and the
/// rebalance protocol has done its part.
#[must_use]
pub fn converged(model: &RebalanceModel, state: &ModelState) -> bool {
    let c = &state.coordinator;
    if !matches!(c.state(), GroupState::Stable { .. }) {
        return false;
    }
    let mut owners: BTreeMap<TopicPartition, usize> = BTreeMap::new();
    let mut subscribed = 0u8;
    let mut connected = 0usize;
    for (slot, s) in state.slots.iter().enumerate() {
        let Some(m) = s.running() else { continue };
        if s.status == SlotStatus::Isolated {
            if !m.consuming().is_empty() {
                return false;
            }
            continue;
        }
        let id = RebalanceModel::slot_member_id(state, slot);
        if s.stalled && !c.members().contains_key(&id) {
            continue;
        }
        connected += 1;
        if !c.members().contains_key(&id)
            || m.generation() != c.generation()
            || (!s.stalled && *m.state() != MemberState::Stable)
        {
            return false;
        }
        subscribed |= s.topics;
        let topics = model.topics_of(s.topics);
        for p in m.consuming() {
            if !topics.contains(&p.topic) {
                return false;
            }
            *owners.entry(p.clone()).or_insert(0) += 1;
        }
    }
    if c.members().len() != connected {
        return false;
    }
    for topic in model.topics_of(subscribed) {
        for partition in 0..model.config.partitions {
            let tp = TopicPartition::new(topic.clone(), partition as i32);
            if owners.get(&tp) != Some(&1) {
                return false;
            }
        }
    }
    true
}

/// [`CONVERGED_WHEN_QUIESCENT`].
#[must_use]
pub fn converged_when_quiescent(model: &RebalanceModel, state: &ModelState) -> bool {
    !quiescent(model, state) || converged(model, state)
}

fn ex_two_consumers(_: &RebalanceModel, state: &ModelState) -> bool {
    state
        .running()
        .filter(|(_, m)| !m.consuming().is_empty())
        .count()
        >= 2
}

fn ex_consuming(_: &RebalanceModel, state: &ModelState) -> bool {
    state.running().any(|(_, m)| !m.consuming().is_empty())
}

fn ex_generation_survives(_: &RebalanceModel, state: &ModelState) -> bool {
    state.noted(note::GENERATION_SURVIVED_FAILOVER)
}

fn ex_commit(_: &RebalanceModel, state: &ModelState) -> bool {
    state.noted(note::COMMIT_ACCEPTED)
}

fn ex_converged(model: &RebalanceModel, state: &ModelState) -> bool {
    quiescent(model, state) && converged(model, state)
}

fn ex_deferred(_: &RebalanceModel, state: &ModelState) -> bool {
    state.noted(note::DEFERRED_DELAY)
}

fn ex_bounce_regains(_: &RebalanceModel, state: &ModelState) -> bool {
    state.noted(note::BOUNCE_REGAINED)
}

fn ex_failover_mid_rebalance(_: &RebalanceModel, state: &ModelState) -> bool {
    state.noted(note::FAILOVER_MID_REBALANCE)
}

macro_rules! kind_example {
    ($name:ident, $kind:ident) => {
        fn $name(_: &RebalanceModel, state: &ModelState) -> bool {
            state.note & u32::from(DisruptionKind::$kind.bit()) != 0
        }
    };
}
kind_example!(ex_join, Join);
kind_example!(ex_leave, Leave);
kind_example!(ex_crash, Crash);
kind_example!(ex_bounce, Bounce);
kind_example!(ex_isolate, Isolate);
kind_example!(ex_leader, Leader);
kind_example!(ex_failover, Failover);
kind_example!(ex_subscribe, Subscribe);

/// The stall example reads the slot flag: the step note has no bit left for its kind.
fn ex_stall(_: &RebalanceModel, state: &ModelState) -> bool {
    state.slots.iter().any(|s| s.stalled)
}

type Condition = fn(&RebalanceModel, &ModelState) -> bool;
const KIND_EXAMPLES: [Condition; 9] = [
    ex_join,
    ex_leave,
    ex_crash,
    ex_bounce,
    ex_isolate,
    ex_leader,
    ex_failover,
    ex_subscribe,
    ex_stall,
];

/// The properties of a model, depending on its configuration (examples that cannot happen in
/// it, such as a deferred delay under eager, are left out rather than reported as failures).
#[must_use]
pub fn properties(model: &RebalanceModel) -> Vec<Property<RebalanceModel>> {
    let c = &model.config;
    let kind = |k: DisruptionKind| c.disruptions > 0 && c.kinds.contains(&k);
    let mut out = vec![
        Property::always(NO_DOUBLE_OWNERSHIP, no_double_ownership),
        Property::always(SUBSCRIBED_ONLY, subscribed_only),
        Property::always(GENERATIONS_MONOTONIC, generations_monotonic),
        Property::always(COMMITS_FROM_OWNER, commits_from_owner),
        Property::always(CONVERGED_WHEN_QUIESCENT, converged_when_quiescent),
        Property::always(ASSIGNMENT_KEPT, assignment_kept),
        Property::always(ASSIGNMENT_EXCLUSIVE, assignment_exclusive),
        Property::sometimes(EX_CONSUMING, ex_consuming),
        Property::sometimes(EX_COMMIT, ex_commit),
        Property::sometimes(EX_CONVERGED, ex_converged),
    ];
    if c.members >= 2 && c.partitions >= 2 {
        out.push(Property::sometimes(EX_TWO_CONSUMERS, ex_two_consumers));
        out.push(Property::sometimes(EX_SHARED_OUT, ex_shared_out));
    }
    if kind(DisruptionKind::Failover) {
        out.push(Property::sometimes(
            EX_GENERATION_SURVIVES,
            ex_generation_survives,
        ));
        out.push(Property::sometimes(
            EX_FAILOVER_MID_REBALANCE,
            ex_failover_mid_rebalance,
        ));
    }
    if matches!(
        c.protocol,
        ProtocolKind::Deferred | ProtocolKind::Incremental
    ) && c.delay_ms > 0
        && (kind(DisruptionKind::Crash)
            || kind(DisruptionKind::Bounce)
            || kind(DisruptionKind::Isolate))
    {
        out.push(Property::sometimes(EX_DEFERRED, ex_deferred));
    }
    if kind(DisruptionKind::Bounce) {
        out.push(Property::sometimes(EX_BOUNCE_REGAINS, ex_bounce_regains));
    }
    if kind(DisruptionKind::Isolate) {
        // A cut-off member's own session timer stops its partitions.
        out.push(Property::sometimes(EX_LOST, ex_lost));
    }
    for (i, k) in DisruptionKind::ALL.into_iter().enumerate() {
        if kind(k) {
            out.push(Property::sometimes(EX_KIND[i], KIND_EXAMPLES[i]));
        }
    }
    out
}

/// The condition of a property by name (for regression replays).
#[must_use]
pub fn by_name(model: &RebalanceModel, name: &str) -> Option<Property<RebalanceModel>> {
    model.properties().into_iter().find(|p| p.name == name)
}

/// Evaluates one step's state against every `always` property; returns the first violated.
#[must_use]
pub fn first_violation(model: &RebalanceModel, state: &ModelState) -> Option<&'static str> {
    model
        .properties()
        .into_iter()
        .find(|p| p.expectation == stateright::Expectation::Always && !(p.condition)(model, state))
        .map(|p| p.name)
}
