//! The rebalance protocol: coordinator, member and leader state machines, sans-IO.
//!
//! - [`messages`]: the requests and responses between members and the coordinator.
//! - [`coordinator`] and [`group`]: the group coordinator and its durable records.
//! - [`member`]: a group member (consumer), including the leader role's memory.
//! - [`leader`]: the leader's rebalance policies (eager, simple cooperative, deferred and
//!   incremental resolution) on top of an [`Assignor`](crate::Assignor).
//! - [`embedded`]: the single bridge to the embedded-protocol wire format.
//! - [`cluster`]: a deterministic in-memory driver (one coordinator, its log, members, an
//!   in-order network and a logical clock) for tests and the scenario runner.
//! - `fault` (feature `faults`): switchable re-creations of known Kafka bugs.

/// Whether the fault `$variant` is switched on in `$holder.faults`. Without the `faults`
/// feature the holder has no such field and the check is the constant `false`.
#[cfg(feature = "faults")]
macro_rules! fault_on {
    ($holder:expr, $variant:ident) => {
        $holder.faults.has($crate::protocol::fault::Fault::$variant)
    };
}

/// Whether the fault `$variant` is switched on: never, without the `faults` feature.
#[cfg(not(feature = "faults"))]
macro_rules! fault_on {
    ($holder:expr, $variant:ident) => {{
        let _ = &$holder;
        false
    }};
}

pub mod cluster;
#[cfg(test)]
mod cluster_tests;
pub mod coordinator;
#[cfg(test)]
mod coordinator_tests;
pub mod embedded;
#[cfg(feature = "faults")]
pub mod fault;
pub mod group;
pub mod leader;
#[cfg(test)]
mod leader_tests;
pub mod member;
#[cfg(test)]
mod member_tests;
pub mod messages;
#[cfg(test)]
mod test_support;

pub use cluster::{Cluster, ClusterError, MemberRound, RoundLog, RoundRecord};
pub use coordinator::{Coordinator, CoordinatorConfig, CoordinatorTimer};
pub use embedded::{AssignmentFormat, AssignmentInfo, EmbeddedError, SubscriptionInfo};
#[cfg(feature = "faults")]
pub use fault::{Fault, FaultSet};
pub use group::{GroupMember, GroupRecord, GroupState, LoadedGroup};
pub use leader::{AssignorRef, LeaderMemory, LeaderOutput};
pub use member::{
    Member, MemberConfig, MemberEvent, MemberState, MemberTimer, RebalanceProtocol, RoundInfo,
};
pub use messages::{ErrorCode, JoinGroupOk, Request, Response};
