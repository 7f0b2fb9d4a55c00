//! `rebalance verify SPEC ASSIGNMENT`: checks an assignment against a group spec with the
//! independent checker of `rebalance-proofs` (validity, spread, balance, rack alignment and
//! stickiness, each against an oracle's optimum).
//!
//! Prints every violation on stdout, one per line. Exit status: 0 when every property holds,
//! 1 when one does not, 2 when an input cannot be read or parsed.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;

use rebalance::{Assignment, GroupSpec};
use rebalance_proofs::assignor::check;

use super::{Failure, read_text};

/// The largest number of partitions `verify` accepts: the flow oracle is quadratic, and this
/// bound keeps a check within about a minute.
pub const MAX_VERIFY_PARTITIONS: i64 = 20_000;

/// Arguments of `rebalance verify`.
#[derive(clap::Args)]
pub struct VerifyArgs {
    /// The group spec (JSON; `-` for stdin).
    pub spec: PathBuf,
    /// The assignment to check (JSON, as `rebalance assign` prints it; `-` for stdin).
    pub assignment: PathBuf,
}

/// Runs `rebalance verify`.
pub fn run(args: VerifyArgs) -> Result<ExitCode, Failure> {
    if args.spec.as_os_str() == "-" && args.assignment.as_os_str() == "-" {
        return Err(Failure::input(
            "the spec and the assignment cannot both be read from stdin",
        ));
    }
    let spec_text = read_text(Some(&args.spec))?;
    let spec = GroupSpec::from_json(&spec_text)
        .map_err(|e| Failure::input(format!("{}: {e}", args.spec.display())))?;
    // Counted from the spec itself, before the checker allocates anything per partition.
    let subscribed: BTreeSet<&str> = spec
        .members
        .iter()
        .flat_map(|m| m.subscriptions.iter().map(String::as_str))
        .collect();
    let assignable: i64 = spec
        .topics
        .iter()
        .filter(|t| subscribed.contains(t.name.as_str()))
        .map(|t| t.partitions)
        .sum();
    if assignable > MAX_VERIFY_PARTITIONS {
        return Err(Failure::input(format!(
            "{}: {assignable} partitions to assign; the checker's oracles handle at most {MAX_VERIFY_PARTITIONS}",
            args.spec.display(),
        )));
    }
    let output_text = read_text(Some(&args.assignment))?;
    let output = Assignment::from_json(&output_text)
        .map_err(|e| Failure::input(format!("{}: {e}", args.assignment.display())))?;
    let report = check(&spec, &output);
    if report.is_ok() {
        println!("ok: every property holds; {}", report.summary());
        return Ok(ExitCode::SUCCESS);
    }
    print!("{report}");
    let first = report
        .violations
        .first()
        .map(ToString::to_string)
        .unwrap_or_default();
    Err(Failure::violated(format!(
        "{} violation(s) of the assignor properties; first: {first}",
        report.violations.len()
    )))
}
