//! `rebalance simulate` (being built).

use std::process::ExitCode;

use super::Failure;

/// Arguments of `rebalance simulate`.
#[derive(clap::Args)]
pub struct SimulateArgs {}

/// Runs `rebalance simulate`.
pub fn run(_args: SimulateArgs) -> Result<ExitCode, Failure> {
    Err(Failure::input("rebalance simulate is not built yet"))
}
