//! `rebalance assign`: a group spec (JSON) in, its assignment (JSON) out.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use rebalance::{ASSIGNOR_NAMES, GroupSpec, assignor_by_name};

use super::{Failure, read_text};

/// Arguments of `rebalance assign`.
#[derive(clap::Args)]
pub struct AssignArgs {
    /// The assignor: uniform-v2 (default), uniform-v1 or range.
    #[arg(long, default_value = "uniform-v2")]
    assignor: String,
    /// The group spec file; `-` or nothing reads stdin.
    file: Option<PathBuf>,
}

/// Runs `rebalance assign`.
pub fn run(args: AssignArgs) -> Result<ExitCode, Failure> {
    let assignor = assignor_by_name(&args.assignor).ok_or_else(|| {
        Failure::input(format!(
            "unknown assignor {:?}; expected one of {}",
            args.assignor,
            ASSIGNOR_NAMES.join(", ")
        ))
    })?;
    let text = read_text(args.file.as_deref())?;
    let spec = GroupSpec::from_json(&text).map_err(Failure::input)?;
    let assignment = assignor.assign(&spec).map_err(Failure::input)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", assignment.to_json())
        .and_then(|()| out.flush())
        .map_err(|e| Failure::input(format!("cannot write the assignment: {e}")))?;
    Ok(ExitCode::SUCCESS)
}
