//! Incremental resolution: like deferred resolution, but a round moves at most `max_moves`
//! partitions away from their rightful owners; the rest stay where they are and follow in later
//! scheduled rounds, so heavy and light partitions are not all stopped together.

use super::Ownership;
use super::claims::Claims;

/// What [`limit_moves`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoveStep {
    /// Partitions allowed to move this round.
    pub moved: u32,
    /// Whether moves remain for a later round.
    pub pending: bool,
}

/// Limits the moves in `target` to `max_moves`: a *move* is a partition the target gives to a
/// member other than its rightful owner (per [`Claims::owner`]). Moves are taken in partition
/// order; the others are put back with their owner.
pub fn limit_moves(target: &mut Ownership, claims: &Claims, max_moves: u32) -> MoveStep {
    let mut moves = Vec::new();
    for (member, partitions) in target.iter() {
        for tp in partitions {
            if let Some(owner) = claims.owner(tp)
                && owner != member
                && target.contains_key(owner)
            {
                moves.push((tp.clone(), owner.clone(), member.clone()));
            }
        }
    }
    moves.sort();
    let allowed = usize::try_from(max_moves).unwrap_or(usize::MAX);
    let pending = moves.len() > allowed;
    let moved = u32::try_from(moves.len().min(allowed)).unwrap_or(u32::MAX);
    for (tp, owner, to) in moves.into_iter().skip(allowed) {
        if let Some(set) = target.get_mut(&to) {
            set.remove(&tp);
        }
        if let Some(set) = target.get_mut(&owner) {
            set.insert(tp);
        }
    }
    MoveStep { moved, pending }
}
