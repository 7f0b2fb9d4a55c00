//! Simple cooperative resolution: a partition changes owner over two rounds. In the first its
//! claimant is told to revoke it; in the next (the claimant rejoins at once after revoking) it is
//! assigned to its new owner. No partition is ever assigned while another member may still hold
//! it.

use std::collections::BTreeMap;

use super::claims::Claims;
use super::{LeaderInput, LeaderMemory, LeaderOutput, Ownership, target};
use crate::assignor::SpecError;
use crate::ids::MemberId;
use crate::protocol::embedded::AssignmentInfo;

/// Assigns the target minus partitions another member still claims, and revokes from every
/// member what it claims but is not assigned.
///
/// # Errors
/// The assignor's [`SpecError`].
pub fn assign(input: &LeaderInput<'_>) -> Result<LeaderOutput, SpecError> {
    let claims = Claims::collect(input.members, input.topics);
    let target = target(input, &claims)?;
    let assignments = resolve(input, &target, &claims);
    let previous = assignments
        .iter()
        .map(|(m, a)| (m.clone(), a.assigned.clone()))
        .collect();
    Ok(LeaderOutput {
        assignments,
        memory: LeaderMemory {
            previous,
            ..LeaderMemory::default()
        },
    })
}

/// One cooperative round from a target: member `m` is assigned the partitions of its target
/// that it rightfully owns already or that no other member claims; it must revoke everything
/// else it claims.
///
/// Claims are resolved by generation (the highest wins; equal-generation duplicates are dropped
/// from both, KAFKA-7026's fix), but *any* other claim, even a stale one, holds a partition back
/// from a new owner for a round, so that whoever may still hold it revokes first.
#[must_use]
pub fn resolve(
    input: &LeaderInput<'_>,
    target: &Ownership,
    claims: &Claims,
) -> BTreeMap<MemberId, AssignmentInfo> {
    let same_round = fault_on!(input, AssignRevokedSameRound);
    let trust_all = fault_on!(input, TrustAllClaims);
    target
        .iter()
        .map(|(m, wanted)| {
            let claimed = claims.claimed_by(m);
            let mut assigned: std::collections::BTreeSet<_> = if same_round {
                wanted.clone()
            } else {
                wanted
                    .iter()
                    .filter(|tp| claims.owner(tp) == Some(m) || !claims.claimed_by_other(tp, m))
                    .cloned()
                    .collect()
            };
            if trust_all {
                assigned.extend(claimed.iter().cloned());
            }
            let revoked = claimed.difference(&assigned).cloned().collect();
            (
                m.clone(),
                AssignmentInfo {
                    assigned,
                    revoked,
                    delay_ms: 0,
                },
            )
        })
        .collect()
}
