//! `rebalance replay` (being built).

use std::process::ExitCode;

use super::Failure;

/// Arguments of `rebalance replay`.
#[derive(clap::Args)]
pub struct ReplayArgs {}

/// Runs `rebalance replay`.
pub fn run(_args: ReplayArgs) -> Result<ExitCode, Failure> {
    Err(Failure::input("rebalance replay is not built yet"))
}
