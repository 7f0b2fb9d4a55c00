//! `rebalance faults`: the catalogue of known Kafka rebalancing bugs the model re-creates.
//!
//! Without options it lists them (id, component, mechanism, the property each breaks).
//! `--verify` runs every entry's finding configuration with the bug switched on (a violation of
//! the named property must be found and replayed; the time and states to it are printed) and
//! without it (the property must hold); exit status 1 when an expectation fails. `--json` prints
//! one JSON array of the verifications instead. `--only ID` restricts to some entries;
//! `--save-dir DIR` writes each counterexample as the regression file `DIR/<ID>.json`.

use std::path::PathBuf;
use std::process::ExitCode;

use rebalance_model::faults::{
    CATALOGUE, CatalogueEntry, Expectation, Outcome, Verification, entry, verify_all,
};

use super::Failure;

/// Arguments of `rebalance faults`.
#[derive(clap::Args)]
pub struct FaultsArgs {
    /// Check every fault: found with it, holds without it.
    #[arg(long)]
    verify: bool,
    /// Only these faults (repeatable), by id.
    #[arg(long = "only")]
    only: Vec<String>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Save each counterexample found as `<DIR>/<ID>.json` (with --verify).
    #[arg(long)]
    save_dir: Option<PathBuf>,
}

fn selected(args: &FaultsArgs) -> Result<Vec<&'static CatalogueEntry>, Failure> {
    if args.only.is_empty() {
        return Ok(CATALOGUE.iter().collect());
    }
    args.only
        .iter()
        .map(|id| entry(id).map_err(Failure::input))
        .collect()
}

fn list(entries: &[&CatalogueEntry], json: bool) {
    if json {
        let rows: Vec<serde_json::Value> = entries
            .iter()
            .map(|e| {
                serde_json::json!({
                    "id": e.id,
                    "component": e.component,
                    "mechanism": e.mechanism,
                    "property": e.property,
                    "switches": e.switches(),
                    "masked_by": match e.expect {
                        Expectation::Masked { by } => Some(by),
                        _ => None,
                    },
                    "not_separable": match e.expect {
                        Expectation::NotSeparable { why } => Some(why),
                        _ => None,
                    },
                })
            })
            .collect();
        println!("{}", serde_json::Value::Array(rows));
        return;
    }
    for e in entries {
        println!("{:<12} {}", e.id, e.component);
        println!("{:<12} mechanism: {}", "", e.mechanism);
        println!("{:<12} breaks:    {}", "", e.property);
        println!("{:<12} switches:  {}", "", e.switches());
        match e.expect {
            Expectation::Found => {}
            Expectation::Masked { by } => println!("{:<12} masked:    in this core, by {by}", ""),
            Expectation::NotSeparable { why } => {
                println!("{:<12} limitation: not separable yet: {why}", "")
            }
        }
    }
}

fn describe(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Violated(f) => format!(
            "violated: found in {:.2} s, {} states ({} unique) to the first violation; \
             counterexample of {} steps",
            f.seconds, f.states, f.unique_states, f.steps
        ),
        Outcome::Holds(h) => format!(
            "holds: {:.2} s, {} states ({} unique)",
            h.seconds, h.states, h.unique_states
        ),
        Outcome::Error { message } => format!("ERROR: {message}"),
    }
}

fn print_verification(v: &Verification) {
    let verdict = if v.ok() { "ok  " } else { "FAIL" };
    println!("{verdict} {:<12} breaks `{}`", v.id, v.property);
    if let Some(by) = v.masked_by {
        println!("       masked in this core by {by}");
    }
    if let Some(why) = v.not_separable {
        println!("       KNOWN LIMITATION, expected to fail without the fault too: {why}");
    }
    println!("       with the fault:    {}", describe(&v.with_fault));
    println!("       without the fault: {}", describe(&v.without_fault));
}

/// Runs `rebalance faults`.
pub fn run(args: FaultsArgs) -> Result<ExitCode, Failure> {
    let entries = selected(&args)?;
    if !args.verify {
        list(&entries, args.json);
        return Ok(ExitCode::SUCCESS);
    }
    let json = args.json;
    let verifications = verify_all(entries.iter().copied(), &mut |v| {
        if !json {
            print_verification(v);
        }
    });
    if let Some(dir) = &args.save_dir {
        for v in &verifications {
            if let Some(regression) = v.regression() {
                regression.save(dir, v.id).map_err(Failure::input)?;
            }
        }
    }
    if json {
        let rows: Vec<serde_json::Value> = verifications
            .iter()
            .map(|v| {
                let mut row = serde_json::to_value(v).unwrap_or_default();
                if let Some(obj) = row.as_object_mut() {
                    obj.insert("ok".to_owned(), serde_json::Value::Bool(v.ok()));
                }
                row
            })
            .collect();
        println!("{}", serde_json::Value::Array(rows));
    }
    let failed: Vec<&str> = verifications
        .iter()
        .filter(|v| !v.ok())
        .map(|v| v.id)
        .collect();
    if failed.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(Failure::violated(format!(
            "{} of {} faults failed their expectations: {}",
            failed.len(),
            verifications.len(),
            failed.join(", ")
        )))
    }
}
