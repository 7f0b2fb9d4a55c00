//! The scenario runner behind `rebalance simulate`: a small script language describing a group
//! and the events that befall it ([`script`]), a runner that drives the core's deterministic
//! `Cluster` with a logical clock and in-order delivery while checking the safety invariant
//! after every step ([`runner`]), and the printing of every rebalance round in the reference's
//! notation or as JSON ([`render`]).

pub mod render;
pub mod runner;
pub mod script;
pub mod transcript;

pub use runner::{RunError, RunErrorKind, run};
pub use script::{
    Event, ProtocolChoice, Script, ScriptError, ScriptErrorKind, Stable, Step, Until, parse,
};
pub use transcript::{Entry, MemberRound, Round, Transcript};
