//! Partition assignors: the uniform v2 assignor (the default) and two baselines.
//!
//! # Definitions
//!
//! For a [`GroupSpec`]: let *Sub(t)* be the members subscribed to a topic *t* that exists in
//! the spec, *P_t* its partition count and *load(m)* the total number of partitions assigned to
//! member *m*.
//!
//! The *previous owner* of a partition is, among the members that claim it in `owned` (and
//! still subscribe to its topic, and the partition exists), the one with the highest
//! `generation`. When two or more claim it at that highest generation, it has no previous
//! owner (the KAFKA-7026 rule: stale and conflicting claims never yield double ownership).
//!
//! The uniform v2 assignor optimises, in priority order, each objective over the assignments
//! that are optimal for all the earlier ones:
//!
//! 1. **Validity** (hard): every partition of every topic with subscribers goes to exactly one
//!    member of *Sub(t)*; nothing else is assigned.
//! 2. **Spread** (hard): every member of *Sub(t)* gets ⌊P_t/|Sub(t)|⌋ or ⌈P_t/|Sub(t)|⌉
//!    partitions of *t*.
//! 3. **Balance**: minimise Σ_m load(m)². This implies that no partition could move to another
//!    subscriber of its topic with at least two partitions fewer in total while keeping spread,
//!    and, with homogeneous subscriptions, that all loads are within one of each other.
//! 4. **Rack alignment**, when `rack_aware`: maximise the number of partitions assigned to a
//!    member whose rack is one of the partition's replica racks.
//! 5. **Stickiness**: maximise the number of partitions that stay with their previous owner. An
//!    assignment already optimal for 1–4 comes back unchanged.
//! 6. **Determinism**: the output depends only on the spec's content, never on the order of
//!    members, topics, subscriptions or claims in the input; remaining ties are broken by
//!    member id, topic name and partition number.

pub mod assignment;
pub mod spec;

pub use assignment::{Assignment, AssignmentMap, MemberTopics};
pub use spec::{
    GroupSpec, MAX_PARTITIONS_PER_TOPIC, MemberSpec, OwnedPartitions, SpecError, TopicSpec,
};

/// A partition assignor: a pure function from a group spec to an assignment.
///
/// Implementations validate the spec first and must be deterministic: the same spec content in
/// any input order gives the same assignment.
pub trait Assignor: Send + Sync {
    /// The assignor's name as the CLI spells it (`uniform-v2`, `uniform-v1`, `range`).
    fn name(&self) -> &'static str;

    /// Assigns the spec's partitions to its members.
    ///
    /// # Errors
    /// Any [`SpecError`] of [`GroupSpec::validate`].
    fn assign(&self, spec: &GroupSpec) -> Result<Assignment, SpecError>;
}

mod aligned;
mod claims;
mod classes;
mod components;
mod deal;
mod flow;
#[cfg(test)]
mod flow_reference;
mod gallop;
mod homogeneous;
mod overlap;
mod problem;
mod racks;
pub mod range;
mod settled;
pub mod uniform;
pub mod uniform_v1;
mod warm;

pub use range::Range;
pub use uniform::UniformV2;
pub use uniform_v1::UniformV1;

/// The assignor named `name` as the CLI spells it (`uniform-v2`, `uniform-v1`, `range`), or
/// `None` for an unknown name.
#[must_use]
pub fn assignor_by_name(name: &str) -> Option<Box<dyn Assignor>> {
    match name {
        "uniform-v2" => Some(Box::new(UniformV2)),
        "uniform-v1" => Some(Box::new(UniformV1)),
        "range" => Some(Box::new(Range)),
        _ => None,
    }
}

/// The names [`assignor_by_name`] knows, the default first.
pub const ASSIGNOR_NAMES: [&str; 3] = ["uniform-v2", "uniform-v1", "range"];

#[cfg(test)]
mod tests;
