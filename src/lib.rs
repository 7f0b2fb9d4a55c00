//! `rebalance`: Kafka-style group rebalancing as sans-IO state machines.
//!
//! The crate holds the real logic and nothing else: the embedded-protocol [`codec`], the
//! partition [`assignor`]s and the rebalance [`protocol`] (coordinator, member and leader state
//! machines). It performs no I/O, reads no clock and draws no random numbers: time and events
//! come in as inputs, so the model checker, the fuzzers and the command line all drive exactly
//! this code.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod assignor;
pub mod codec;
pub mod ids;
pub mod protocol;

pub use assignor::{ASSIGNOR_NAMES, Range, UniformV1, UniformV2, assignor_by_name};
pub use assignor::{
    Assignment, AssignmentMap, Assignor, GroupSpec, MemberSpec, MemberTopics, OwnedPartitions,
    SpecError, TopicSpec,
};
pub use codec::{
    ConsumerProtocolAssignment, ConsumerProtocolSubscription, CooperativeAssignment, DecodeError,
    EmbeddedMessage, EncodeError, TopicPartitions,
};
pub use ids::{CoordinatorEpoch, Generation, MemberId, TopicPartition};
pub use protocol::{
    AssignorRef, Cluster, ClusterError, Coordinator, CoordinatorConfig, CoordinatorTimer,
    ErrorCode, GroupRecord, GroupState, Member, MemberConfig, MemberEvent, MemberState,
    MemberTimer, RebalanceProtocol, Request, Response, RoundLog,
};
