//! Deferred resolution: partitions of a member that left ("lost" partitions) are held back for
//! the scheduled rebalance delay instead of being reassigned at once, in case the member — or a
//! replacement under a new id — comes back. Every member is told the remaining delay and rejoins
//! when it runs out; the leader then spreads what is still lost.
//!
//! A leader that did not lead the previous round has no memory of who owned what. It uses the
//! reference design's heuristic: if some member claims nothing although there are enough
//! partitions for every member to have had one, that member is taken to be the one that
//! returned, and unclaimed partitions are assigned now; otherwise unclaimed partitions are
//! taken to be lost and held back.

use std::collections::BTreeSet;

use super::claims::Claims;
use super::{
    LeaderInput, LeaderMemory, LeaderOutput, cooperative, incremental, subscribed_partitions,
    target,
};
use crate::assignor::SpecError;
use crate::ids::TopicPartition;

/// One deferred round; with `max_moves` it is an incremental round (at most that many
/// partitions change owner per scheduled step).
///
/// # Errors
/// The assignor's [`SpecError`].
pub fn assign(
    input: &LeaderInput<'_>,
    delay_ms: u32,
    max_moves: Option<u32>,
) -> Result<LeaderOutput, SpecError> {
    let claims = Claims::collect(input.members, input.topics);
    let all = subscribed_partitions(input);
    let unclaimed: BTreeSet<TopicPartition> = all.difference(&claims.claimed()).cloned().collect();
    let now = input.now_ms;

    let (lost, newcomer, deadline, next_move) = match input.memory {
        Some(memory) => {
            let departed: BTreeSet<TopicPartition> = memory
                .previous
                .iter()
                .filter(|(m, _)| !input.members.contains_key(*m))
                .flat_map(|(_, owned)| owned.iter().cloned())
                .chain(memory.lost.iter().cloned())
                .collect();
            let lost = departed.intersection(&unclaimed).cloned().collect();
            let newcomer = input
                .members
                .keys()
                .any(|m| !memory.previous.contains_key(m));
            (lost, newcomer, memory.lost_deadline_ms, memory.next_move_ms)
        }
        None => {
            let should_all_own = all.len() >= input.members.len();
            let returned = should_all_own
                && input
                    .members
                    .keys()
                    .any(|m| claims.claimed_by(m).is_empty());
            let lost = if returned || claims.claimed().is_empty() {
                BTreeSet::new()
            } else {
                unclaimed.clone()
            };
            (lost, false, None, None)
        }
    };

    // Delay 0 means "reassign now" (KAFKA-15693's fix); the fault keeps withholding.
    let no_delay = delay_ms == 0 && !fault_on!(input, ZeroDelayWithholds);
    let expired = deadline.is_some_and(|d| now >= d);
    let release = lost.is_empty() || no_delay || newcomer || expired;
    let (held, lost_deadline_ms) = if release {
        (BTreeSet::new(), None)
    } else {
        (
            lost,
            Some(deadline.unwrap_or(now.saturating_add(u64::from(delay_ms)))),
        )
    };

    let mut wanted = target(input, &claims)?;
    for partitions in wanted.values_mut() {
        partitions.retain(|tp| !held.contains(tp));
    }

    let mut next_move_ms = None;
    if let Some(max_moves) = max_moves {
        // A batch of moves may start only once the previous batch's delay has run out.
        let allowed = next_move.is_none_or(|t| now >= t);
        let step =
            incremental::limit_moves(&mut wanted, &claims, if allowed { max_moves } else { 0 });
        if step.pending {
            next_move_ms = if allowed {
                Some(now.saturating_add(u64::from(delay_ms)))
            } else {
                next_move
            };
        }
    }

    let mut assignments = cooperative::resolve(input, &wanted, &claims);
    let remaining = [lost_deadline_ms, next_move_ms]
        .into_iter()
        .flatten()
        .map(|d| d.saturating_sub(now))
        .min()
        .unwrap_or(0);
    let delay = u32::try_from(remaining).unwrap_or(u32::MAX);
    for a in assignments.values_mut() {
        a.delay_ms = delay;
    }
    let previous = assignments
        .iter()
        .map(|(m, a)| (m.clone(), a.assigned.clone()))
        .collect();
    Ok(LeaderOutput {
        assignments,
        memory: LeaderMemory {
            previous,
            lost: held,
            lost_deadline_ms,
            next_move_ms,
        },
    })
}
