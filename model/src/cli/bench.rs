//! `rebalance bench`: measurements of the codec and the assignors.

use std::process::ExitCode;

use clap::Subcommand;

use super::Failure;

/// Arguments of `rebalance bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    target: BenchTarget,
}

#[derive(Subcommand)]
enum BenchTarget {
    /// Codec throughput, side by side with the kafka-protocol crate.
    Codec(super::bench_codec::BenchCodecArgs),
    /// Assignor speed and memory over a matrix of groups.
    Assignor,
}

/// Runs `rebalance bench`.
pub fn run(args: BenchArgs) -> Result<ExitCode, Failure> {
    match args.target {
        BenchTarget::Codec(args) => super::bench_codec::run(args),
        BenchTarget::Assignor => Err(Failure::input("this benchmark is not built yet")),
    }
}
