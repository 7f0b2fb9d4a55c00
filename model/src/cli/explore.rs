//! `rebalance explore` (being built).

use std::process::ExitCode;

use super::Failure;

/// Arguments of `rebalance explore`.
#[derive(clap::Args)]
pub struct ExploreArgs {}

/// Runs `rebalance explore`.
pub fn run(_args: ExploreArgs) -> Result<ExitCode, Failure> {
    Err(Failure::input("rebalance explore is not built yet"))
}
