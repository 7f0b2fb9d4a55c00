//! Memoised actor steps: feeding an actor value one input gives the same next value and the
//! same output every time, so each thread remembers recent steps and replays them.
//!
//! # Why
//!
//! The checker generates each unique state about three times over, and most generated states
//! feed a coordinator or member value the very input it was already fed in another state (a
//! heartbeat, the same JoinGroup answer): copying the actor, running the core and dropping the
//! copy was a third of the run. A remembered step costs one lookup, and its next value is
//! shared (hash already cached, memo already filled) by every state that reaches it.
//!
//! # Why it is sound
//!
//! The core is sans-IO: no clock but the `now_ms` it is given, no randomness, no I/O, and the
//! leader's assignor is a pure function of its input. So a step's result is a function of the
//! actor value, the clock and the input, which is exactly the key (the value compared by hash
//! then equality, the clock and the input by equality). The outputs (records, responses,
//! requests, events) are drained into the outcome in order, and the model applies them as
//! [`RebalanceModel::pump`](super::RebalanceModel) would have. The tables are per thread and
//! bounded ([`STEPS_MAX`] entries each, cleared when full), so they cost no lock and bounded
//! memory; which entries they hold changes only speed, never a result. The durable log's
//! compaction after a step that wrote records is remembered the same way ([`log`]).

use std::cell::RefCell;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use rebalance::MemberId;
use rebalance::protocol::{
    Coordinator, CoordinatorTimer, GroupRecord, Member, MemberEvent, MemberTimer, Request, Response,
};

use crate::memo::{CoordinatorMemo, intern_coordinator};
use crate::shared::{FoldHasher, PrehashedMap, Shared};

/// Most steps one thread remembers per kind of actor before it starts afresh.
pub const STEPS_MAX: usize = 1 << 15;

/// What the coordinator is fed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CoordinatorInput {
    /// A request from a member.
    Request(MemberId, Request),
    /// An armed timer fires.
    Timer(CoordinatorTimer),
}

/// The coordinator after a step, drained, with what it output.
#[derive(Debug)]
pub struct CoordinatorOutcome {
    /// The next value (interned, see [`intern_coordinator`]).
    pub coordinator: Shared<Coordinator, CoordinatorMemo>,
    /// Records to append to the durable log, in order.
    pub records: Vec<GroupRecord>,
    /// Responses to send, in order.
    pub responses: Vec<(MemberId, Response)>,
}

/// What a member is fed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MemberInput {
    /// A response from the coordinator.
    Response(Response),
    /// An armed timer fires.
    Timer(MemberTimer),
}

/// A member after a step, drained, with what it output.
#[derive(Debug)]
pub struct MemberOutcome {
    /// The next value.
    pub member: Shared<Member>,
    /// Requests to send, in order.
    pub requests: Vec<Request>,
    /// Events it reported, in order.
    pub events: Vec<MemberEvent>,
}

/// One remembered step: its key in full (the table is indexed by a hash of it).
struct Entry<T, M, I, O> {
    source: Shared<T, M>,
    clock_ms: u64,
    input: I,
    outcome: Arc<O>,
}

type Table<T, M, I, O> = RefCell<PrehashedMap<Entry<T, M, I, O>>>;

thread_local! {
    static COORDINATOR_STEPS: Table<Coordinator, CoordinatorMemo, CoordinatorInput, CoordinatorOutcome> =
        RefCell::new(PrehashedMap::default());
    static MEMBER_STEPS: Table<Member, (), MemberInput, MemberOutcome> =
        RefCell::new(PrehashedMap::default());
    static LOG_STEPS: Table<Vec<GroupRecord>, (), Vec<GroupRecord>, Shared<Vec<GroupRecord>>> =
        RefCell::new(PrehashedMap::default());
}

/// Forgets every step this thread remembers (for tests that compare remembered steps with
/// fresh ones; the checker never needs it).
pub fn forget() {
    COORDINATOR_STEPS.with(|t| t.borrow_mut().clear());
    MEMBER_STEPS.with(|t| t.borrow_mut().clear());
    LOG_STEPS.with(|t| t.borrow_mut().clear());
}

fn key<T: Hash, M, I: Hash>(source: &Shared<T, M>, clock_ms: u64, input: &I) -> u64 {
    let mut h = FoldHasher::default();
    h.write_u64(source.value_hash());
    h.write_u64(clock_ms);
    input.hash(&mut h);
    h.finish()
}

/// The remembered outcome of this step, or `compute`'s (then remembered).
fn memoised<T, M, I, O>(
    table: &'static std::thread::LocalKey<Table<T, M, I, O>>,
    source: &Shared<T, M>,
    clock_ms: u64,
    input: &I,
    compute: impl FnOnce(&Shared<T, M>, u64, I) -> O,
) -> Arc<O>
where
    T: Hash + Eq,
    I: Hash + Eq + Clone,
{
    let k = key(source, clock_ms, input);
    let known = table.with(|t| {
        t.borrow().get(&k).and_then(|e| {
            (e.clock_ms == clock_ms && e.input == *input && e.source == *source)
                .then(|| Arc::clone(&e.outcome))
        })
    });
    if let Some(outcome) = known {
        return outcome;
    }
    let outcome = Arc::new(compute(source, clock_ms, input.clone()));
    table.with(|t| {
        let mut t = t.borrow_mut();
        if t.len() >= STEPS_MAX {
            t.clear();
        }
        // On a 64-bit key clash the newer step replaces the older: both stay correct, as the
        // full key is compared on lookup.
        t.insert(
            k,
            Entry {
                source: source.clone(),
                clock_ms,
                input: input.clone(),
                outcome: Arc::clone(&outcome),
            },
        );
    });
    outcome
}

/// The coordinator `source` fed `input` at `clock_ms` (remembered, see the module docs).
#[must_use]
pub fn coordinator(
    source: &Shared<Coordinator, CoordinatorMemo>,
    clock_ms: u64,
    input: &CoordinatorInput,
) -> Arc<CoordinatorOutcome> {
    memoised(
        &COORDINATOR_STEPS,
        source,
        clock_ms,
        input,
        |source, clock_ms, input| {
            let mut c = Coordinator::clone(source);
            match input {
                CoordinatorInput::Request(from, request) => {
                    c.handle_request(clock_ms, from, request);
                }
                CoordinatorInput::Timer(timer) => c.handle_timer(clock_ms, timer),
            }
            let records = std::iter::from_fn(|| c.poll_persist()).collect();
            let responses = std::iter::from_fn(|| c.poll_transmit()).collect();
            let mut coordinator = Shared::new(c);
            intern_coordinator(&mut coordinator);
            CoordinatorOutcome {
                coordinator,
                records,
                responses,
            }
        },
    )
}

/// The member `source` fed `input` at `clock_ms` (remembered, see the module docs).
#[must_use]
pub fn member(source: &Shared<Member>, clock_ms: u64, input: &MemberInput) -> Arc<MemberOutcome> {
    memoised(
        &MEMBER_STEPS,
        source,
        clock_ms,
        input,
        |source, clock_ms, input| {
            let mut m = Member::clone(source);
            match input {
                MemberInput::Response(response) => m.handle_response(clock_ms, response),
                MemberInput::Timer(timer) => m.handle_timer(clock_ms, timer),
            }
            let requests = std::iter::from_fn(|| m.poll_transmit()).collect();
            let events = std::iter::from_fn(|| m.poll_event()).collect();
            MemberOutcome {
                member: Shared::new(m),
                requests,
                events,
            }
        },
    )
}

/// The durable log `source` with `records` appended, compacted ([`super::compact_log`];
/// remembered like a step: the compacted log is a function of the two).
#[must_use]
pub fn log(source: &Shared<Vec<GroupRecord>>, records: &[GroupRecord]) -> Shared<Vec<GroupRecord>> {
    let records = records.to_vec();
    let outcome = memoised(&LOG_STEPS, source, 0, &records, |source, _, records| {
        let mut log = Vec::clone(source);
        log.extend(records);
        Shared::new(super::compact_log(&log))
    });
    Shared::clone(&outcome)
}
