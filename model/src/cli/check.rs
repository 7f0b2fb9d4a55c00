//! `rebalance check`: model-checks the rebalance protocol.
//!
//! Output: progress on stderr every few seconds; then, per protocol, a summary with every
//! property's status on stdout — or with `--json` one JSON object per protocol
//! (`{"protocol", "unique_states", "states", "max_depth", "seconds", "properties": [{"name",
//! "expectation", "status", "counterexample"}]}`), and a JSON array of them for
//! `--protocol all`. Every counterexample is replayed before it is reported and saved to
//! `--save-dir` (default `model/regressions`). Exit status 0 when every property passes (every
//! `always` holds, every `sometimes` is found, liveness holds or is skipped as too large), 1
//! otherwise, 2 for bad options.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use rebalance_model::{
    CheckOptions, CheckReport, DisruptionKind, ModelConfig, Preset, Progress, ProtocolKind,
    Strategy, check,
};

use super::Failure;

/// The model configuration options, shared with `rebalance explore`.
#[derive(clap::Args)]
pub struct ConfigArgs {
    /// Protocol to check: eager, cooperative, deferred, incremental or all.
    #[arg(long, default_value = "all")]
    pub protocol: String,
    /// Size preset: quick (seconds), ci (exhaustive CI run), deep (manual runs).
    #[arg(long, default_value = "quick")]
    preset: String,
    /// Assignor the leader uses.
    #[arg(long)]
    assignor: Option<String>,
    /// Members started at the beginning.
    #[arg(long)]
    members: Option<usize>,
    /// Topics.
    #[arg(long)]
    topics: Option<usize>,
    /// Partitions per topic.
    #[arg(long)]
    partitions: Option<u32>,
    /// Disruption budget.
    #[arg(long)]
    disruptions: Option<u8>,
    /// Enabled disruption kinds, comma-separated:
    /// join,leave,crash,bounce,isolate,leader,failover,subscribe,stall.
    #[arg(long)]
    kinds: Option<String>,
    /// Network: ordered, unordered, lossy or duplicating.
    #[arg(long)]
    network: Option<String>,
    /// Drops or duplications per run on a lossy or duplicating network.
    #[arg(long)]
    network_faults: Option<u8>,
    /// Scheduled rebalance delay (deferred, incremental).
    #[arg(long)]
    delay_ms: Option<u64>,
    /// Partition moves per round (incremental).
    #[arg(long)]
    max_moves: Option<u32>,
    /// Switch a timing rule off (repeatable): evict-only-stopped,
    /// member-timeouts-only-when-cut-off, resend-not-while-pending, isolation-permanent,
    /// scheduled-delay-passes.
    #[arg(long = "rule-off")]
    rules_off: Vec<String>,
    /// Switch a fault on (repeatable): a catalogue id (`rebalance faults`) or a core fault's
    /// variant or kebab-case name.
    #[arg(long = "fault")]
    faults: Vec<String>,
    /// Generation bound of the checked space.
    #[arg(long)]
    max_generation: Option<i32>,
    /// Start from the formed group (true; the ci preset's default) or from the cold start.
    #[arg(long)]
    start_stable: Option<bool>,
}

/// Arguments of `rebalance check`.
#[derive(clap::Args)]
pub struct CheckArgs {
    #[command(flatten)]
    config: ConfigArgs,
    /// Strategy: dfs, bfs or simulate.
    #[arg(long, default_value = "dfs")]
    strategy: String,
    /// Seed of the random walks (simulate).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Run only shard i of n of the random walks (simulate), as `i/n`.
    #[arg(long, default_value = "0/1")]
    shard: String,
    /// Random walks before sharding (simulate).
    #[arg(long, default_value_t = 20_000)]
    traces: u64,
    /// Steps per random walk (simulate).
    #[arg(long, default_value_t = 300)]
    max_steps: usize,
    /// Checker threads.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Largest state graph the liveness check builds (0 skips it).
    #[arg(long, default_value_t = 120_000)]
    liveness_limit: usize,
    /// Where counterexamples are saved.
    #[arg(long, default_value = "model/regressions")]
    save_dir: PathBuf,
    /// Do not save counterexamples.
    #[arg(long)]
    no_save: bool,
    /// Print one JSON object per protocol (an array for `--protocol all`).
    #[arg(long)]
    json: bool,
}

pub fn parse<T: std::str::FromStr>(value: &str) -> Result<T, Failure>
where
    T::Err: std::fmt::Display,
{
    value.parse::<T>().map_err(Failure::input)
}

/// The configuration for one protocol from the preset and the overrides.
pub fn config_for(args: &ConfigArgs, protocol: ProtocolKind) -> Result<ModelConfig, Failure> {
    let preset: Preset = parse(&args.preset)?;
    let mut c = preset.config(protocol);
    if let Some(a) = &args.assignor {
        c.assignor = a.clone();
    }
    c.members = args.members.unwrap_or(c.members);
    c.topics = args.topics.unwrap_or(c.topics);
    c.partitions = args.partitions.unwrap_or(c.partitions);
    c.disruptions = args.disruptions.unwrap_or(c.disruptions);
    if let Some(kinds) = &args.kinds {
        c.kinds = kinds
            .split(',')
            .filter(|k| !k.is_empty())
            .map(parse::<DisruptionKind>)
            .collect::<Result<_, _>>()?;
    }
    if let Some(n) = &args.network {
        c.network = parse(n)?;
    }
    c.network_faults = args.network_faults.unwrap_or(c.network_faults);
    c.delay_ms = args.delay_ms.unwrap_or(c.delay_ms);
    c.max_moves = args.max_moves.unwrap_or(c.max_moves);
    c.max_generation = args.max_generation.unwrap_or(c.max_generation);
    c.start_stable = args.start_stable.unwrap_or(c.start_stable);
    for rule in &args.rules_off {
        c.rules.switch_off(rule).map_err(Failure::input)?;
    }
    for fault in &args.faults {
        rebalance_model::faults::switch_on(&mut c, fault).map_err(Failure::input)?;
    }
    Ok(c)
}

fn options(args: &CheckArgs) -> Result<CheckOptions, Failure> {
    let strategy = match args.strategy.as_str() {
        "dfs" => Strategy::Dfs,
        "bfs" => Strategy::Bfs,
        "simulate" => Strategy::Simulate,
        other => {
            return Err(Failure::input(format!(
                "unknown strategy `{other}` (expected one of: dfs, bfs, simulate)"
            )));
        }
    };
    let shard = args
        .shard
        .split_once('/')
        .and_then(|(i, n)| Some((i.parse::<u64>().ok()?, n.parse::<u64>().ok()?)))
        .filter(|(i, n)| *n > 0 && i < n)
        .ok_or_else(|| {
            Failure::input(format!(
                "bad shard `{}` (expected i/n with 0 <= i < n)",
                args.shard
            ))
        })?;
    if args.threads == 0 || args.threads > 256 {
        return Err(Failure::input(format!(
            "threads must be between 1 and 256, got {}",
            args.threads
        )));
    }
    Ok(CheckOptions {
        strategy,
        threads: args.threads,
        seed: args.seed,
        shard,
        traces: args.traces,
        max_steps: args.max_steps,
        liveness_limit: args.liveness_limit,
        progress_every: Duration::from_secs(3),
    })
}

fn print_summary(report: &CheckReport) {
    let rate = report.unique_states as f64 / report.seconds.max(1e-9);
    println!(
        "protocol {}: {} unique states, {} states, max depth {}, {:.1} s ({:.0} unique states/s)",
        report.protocol,
        report.unique_states,
        report.states,
        report.max_depth,
        report.seconds,
        rate
    );
    for p in &report.properties {
        let mark = if p.is_failure() { "FAIL" } else { "ok  " };
        println!("  {mark} {:<9} {:<12} {}", p.expectation, p.status, p.name);
        if let Some(cex) = &p.counterexample {
            let file = cex.file.as_deref().unwrap_or("(not saved)");
            println!(
                "       counterexample: {} steps, {file}; see `rebalance replay {file}`",
                cex.steps
            );
        }
    }
}

/// Runs `rebalance check`.
pub fn run(args: CheckArgs) -> Result<ExitCode, Failure> {
    let protocols: Vec<ProtocolKind> = if args.config.protocol == "all" {
        ProtocolKind::ALL.to_vec()
    } else {
        vec![parse(&args.config.protocol)?]
    };
    let options = options(&args)?;
    let mut reports = Vec::new();
    for protocol in &protocols {
        let config = config_for(&args.config, *protocol)?;
        let model = config.into_model().map_err(Failure::input)?;
        let name = protocol.name();
        let mut progress = |p: &Progress| {
            eprintln!(
                "[{name}] {:.0}s: {} states, {} unique, {:.0} states/s, depth {}",
                p.seconds,
                p.states,
                p.unique_states,
                p.states as f64 / p.seconds.max(1e-9),
                p.max_depth
            );
        };
        let mut report = check(&model, &options, &mut progress);
        if !args.no_save {
            for (slug, regression) in report.regressions(&model) {
                let path = regression
                    .save(&args.save_dir, &slug)
                    .map_err(Failure::input)?;
                if let Some(p) = report
                    .properties
                    .iter_mut()
                    .find(|p| p.name == regression.property)
                    && let Some(cex) = p.counterexample.as_mut()
                {
                    cex.file = Some(path.display().to_string());
                }
            }
        }
        if !args.json {
            print_summary(&report);
        }
        reports.push(report);
    }
    if args.json {
        let text = if protocols.len() == 1 {
            serde_json::to_string(&reports[0])
        } else {
            serde_json::to_string(&reports)
        };
        println!("{}", text.unwrap_or_default());
    }
    let failed: Vec<String> = reports
        .iter()
        .flat_map(|r| {
            r.properties
                .iter()
                .filter(|p| p.is_failure())
                .map(move |p| format!("{}: {} ({})", r.protocol, p.name, p.status))
        })
        .collect();
    if failed.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Err(Failure::violated(format!(
            "{} propert{} failed: {}",
            failed.len(),
            if failed.len() == 1 { "y" } else { "ies" },
            failed.join("; ")
        )))
    }
}
