//! `rebalance replay FILE`: replays a saved counterexample and prints it as a numbered timeline
//! (or, with `--mermaid`, a Mermaid sequence diagram), then whether its property is violated at
//! the end. Exit status 0 when the file's expectation is met, 1 when not, 2 for a bad file.

use std::path::PathBuf;
use std::process::ExitCode;

use rebalance_model::Regression;
use rebalance_model::regression::violated_at_end;
use rebalance_model::timeline;

use super::Failure;

/// Arguments of `rebalance replay`.
#[derive(clap::Args)]
pub struct ReplayArgs {
    /// The regression file (JSON) to replay.
    file: PathBuf,
    /// Print a Mermaid sequence diagram instead of the numbered timeline.
    #[arg(long)]
    mermaid: bool,
}

/// Runs `rebalance replay`.
pub fn run(args: ReplayArgs) -> Result<ExitCode, Failure> {
    let regression = Regression::load(&args.file).map_err(Failure::input)?;
    let trace = regression.replay().map_err(Failure::input)?;
    if args.mermaid {
        print!("{}", timeline::mermaid(&trace));
    } else {
        print!("{}", timeline::numbered(&trace));
    }
    let violated = violated_at_end(&trace, &regression.property).map_err(Failure::input)?;
    let verdict = if violated { "violated" } else { "holds" };
    if !args.mermaid {
        println!("property `{}`: {verdict} at the end", regression.property);
    }
    if violated == (regression.expect == rebalance_model::Expect::Violated) {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(Failure::violated(format!(
            "{}: property `{}` {verdict} at the end, expected {:?}",
            args.file.display(),
            regression.property,
            regression.expect
        )))
    }
}
