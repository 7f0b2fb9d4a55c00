//! `rebalance simulate SCRIPT [--json]`: runs a scenario script through the real protocol core
//! with a logical clock and in-order delivery, and prints every rebalance round.
//!
//! Exit status: 0 when the script ran to its end with every `expect` holding; 2 for a malformed
//! script (the message names the line) or an event that cannot apply; 1 when the safety invariant
//! broke, an `expect` failed or the group never settled.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use rebalance_model::scenario::{self, RunErrorKind};

use super::{Failure, read_text};

/// Arguments of `rebalance simulate`.
#[derive(clap::Args)]
pub struct SimulateArgs {
    /// The scenario script (`-` for stdin). See the README's "Scenarios" section for the
    /// language.
    pub script: PathBuf,
    /// Print the rounds and the final ownership as JSON instead of the reference's notation.
    #[arg(long)]
    pub json: bool,
}

/// Runs `rebalance simulate`.
pub fn run(args: SimulateArgs) -> Result<ExitCode, Failure> {
    let text = read_text(Some(&args.script))?;
    let name = args.script.display().to_string();
    let script = scenario::parse(&name, &text).map_err(Failure::input)?;
    let render = |transcript| {
        if args.json {
            scenario::render::json(transcript)
        } else {
            scenario::render::text(transcript)
        }
    };
    let transcript = match scenario::run(&script) {
        Ok(transcript) => transcript,
        Err(failure) => {
            // What happened up to the failure is the most useful context: print it first.
            emit(&render(&failure.transcript))?;
            let inapplicable = matches!(
                failure.error.kind,
                RunErrorKind::Inapplicable { .. }
                    | RunErrorKind::UnknownAssignor(_)
                    | RunErrorKind::Cluster(_)
            );
            return Err(if inapplicable {
                Failure::input(failure.error)
            } else {
                Failure::violated(failure.error)
            });
        }
    };
    emit(&render(&transcript))?;
    Ok(ExitCode::SUCCESS)
}

/// Writes to stdout. A reader that went away (`rebalance simulate x.scn | head`) is not an
/// error worth a panic: the rest of the output is simply not wanted.
fn emit(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::input(format!("cannot write stdout: {e}")))
        }
        _ => Ok(()),
    }
}
