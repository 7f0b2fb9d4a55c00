//! Independent checkers of the assignor objectives (defined in `rebalance::assignor`).
//!
//! - [`problem`]: the checker's own reading of a spec (subscribers, racks, previous owners).
//! - [`check`]: the checker of one output ([`check()`]) and its [`Report`].
//! - [`laws`]: the laws of an assignor ([`check_determinism`], [`check_fixed_point`],
//!   [`check_assignor`] for all six properties).
//! - [`brute`] and [`flow`]: two oracles for the optimum, cross-checked against each other.
//! - [`enumerate`]: every small group up to a bound, for the exhaustive proof.
//! - [`generate`]: generators of valid specs and event sequences from unstructured bytes.

pub mod brute;
pub mod check;
pub mod enumerate;
pub mod flow;
pub mod generate;
pub mod laws;
pub mod problem;
pub mod violation;

pub use check::{Oracle, Report, check, check_with, optimum_of, oracle_assignment, to_assignment};
pub use laws::{
    REORDERINGS, Reordering, check_assignor, check_determinism, check_fixed_point, with_owned,
};
pub use problem::{Objectives, Problem};
pub use violation::Violation;
