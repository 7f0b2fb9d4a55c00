//! `rebalance codec` (being built).

use std::process::ExitCode;

use super::Failure;

/// Arguments of `rebalance codec`.
#[derive(clap::Args)]
pub struct CodecArgs {}

/// Runs `rebalance codec`.
pub fn run(_args: CodecArgs) -> Result<ExitCode, Failure> {
    Err(Failure::input("rebalance codec is not built yet"))
}
