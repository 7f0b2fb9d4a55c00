//! `rebalance-proofs`: the executable specification of rebalance.
//!
//! Independent checkers (oracles) of every property the project promises. A checker here never
//! calls the code it checks: it computes what must hold another way (brute force, a separate
//! flow solver, a direct definition). The model, the fuzzers and the CLI reuse these checkers.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod assignor;
pub mod codec;
pub mod fuzz;
pub mod kafka;

pub use assignor::{
    Report as AssignorReport, Violation as AssignorViolation, check as check_assignment,
    check_assignor, check_determinism, check_fixed_point,
};
