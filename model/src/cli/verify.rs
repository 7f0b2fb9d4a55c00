//! `rebalance verify` (being built).

use std::process::ExitCode;

use super::Failure;

/// Arguments of `rebalance verify`.
#[derive(clap::Args)]
pub struct VerifyArgs {}

/// Runs `rebalance verify`.
pub fn run(_args: VerifyArgs) -> Result<ExitCode, Failure> {
    Err(Failure::input("rebalance verify is not built yet"))
}
