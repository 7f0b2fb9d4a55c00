//! `rebalance`: the command-line tool of the rebalance harness.
//!
//! Every subcommand prints its result on stdout. On failure it prints one readable line on
//! stderr and exits non-zero (2 for bad input, 1 for a violated property).

mod cli;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Build, check and fuzz Kafka-style group rebalancing.
#[derive(Parser)]
#[command(name = "rebalance", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Model-check the rebalance protocol (the project's main job).
    Check(cli::check::CheckArgs),
    /// Encode or decode embedded-protocol messages.
    Codec(cli::codec::CodecArgs),
    /// Assign a group spec's partitions with an assignor.
    Assign(cli::assign::AssignArgs),
    /// Check an assignment against a group spec with the independent checker.
    Verify(cli::verify::VerifyArgs),
    /// Measure the codec or the assignors.
    Bench(cli::bench::BenchArgs),
    /// Run a rebalance scenario script through the real protocol core.
    Simulate(cli::simulate::SimulateArgs),
    /// Replay a saved counterexample as a timeline.
    Replay(cli::replay::ReplayArgs),
    /// Serve stateright's Explorer over the model's state space.
    Explore(cli::explore::ExploreArgs),
    /// List the catalogue of known rebalancing bugs the model re-creates.
    Faults(cli::faults::FaultsArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(args) => cli::check::run(args),
        Command::Codec(args) => cli::codec::run(args),
        Command::Assign(args) => cli::assign::run(args),
        Command::Verify(args) => cli::verify::run(args),
        Command::Bench(args) => cli::bench::run(args),
        Command::Simulate(args) => cli::simulate::run(args),
        Command::Replay(args) => cli::replay::run(args),
        Command::Explore(args) => cli::explore::run(args),
        Command::Faults(args) => cli::faults::run(args),
    };
    match result {
        Ok(code) => code,
        Err(failure) => {
            eprintln!("rebalance: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}
