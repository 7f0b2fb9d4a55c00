//! `rebalance check` (being built).

use std::process::ExitCode;

use super::Failure;

/// Arguments of `rebalance check`.
#[derive(clap::Args)]
pub struct CheckArgs {}

/// Runs `rebalance check`.
pub fn run(_args: CheckArgs) -> Result<ExitCode, Failure> {
    Err(Failure::input("rebalance check is not built yet"))
}
