//! `rebalance assign` (being built).

use std::process::ExitCode;

use super::Failure;

/// Arguments of `rebalance assign`.
#[derive(clap::Args)]
pub struct AssignArgs {}

/// Runs `rebalance assign`.
pub fn run(_args: AssignArgs) -> Result<ExitCode, Failure> {
    Err(Failure::input("rebalance assign is not built yet"))
}
