//! Eager resolution: every member released everything before joining, so the leader hands out
//! the whole target at once.

use super::claims::Claims;
use super::{LeaderInput, LeaderMemory, LeaderOutput, target};
use crate::assignor::SpecError;
use crate::protocol::embedded::AssignmentInfo;

/// Assigns the assignor's target in full; nothing is revoked or scheduled.
///
/// # Errors
/// The assignor's [`SpecError`].
pub fn assign(input: &LeaderInput<'_>) -> Result<LeaderOutput, SpecError> {
    let claims = Claims::collect(input.members, input.topics);
    let target = target(input, &claims)?;
    let assignments = target
        .iter()
        .map(|(m, assigned)| {
            (
                m.clone(),
                AssignmentInfo {
                    assigned: assigned.clone(),
                    ..AssignmentInfo::default()
                },
            )
        })
        .collect();
    Ok(LeaderOutput {
        assignments,
        memory: LeaderMemory {
            previous: target,
            ..LeaderMemory::default()
        },
    })
}
