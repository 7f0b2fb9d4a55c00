//! `rebalance faults` (being built).

use std::process::ExitCode;

use super::Failure;

/// Arguments of `rebalance faults`.
#[derive(clap::Args)]
pub struct FaultsArgs {}

/// Runs `rebalance faults`.
pub fn run(_args: FaultsArgs) -> Result<ExitCode, Failure> {
    Err(Failure::input("rebalance faults is not built yet"))
}
