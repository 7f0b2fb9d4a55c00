//! `rebalance bench assignor`: speed and peak memory of an assignor against uniform-v1 over a
//! matrix in the shape of Kafka's own assignor benchmark.
//!
//! Matrix: members {100, 1000, 10000} × partitions per member {10, 50} × topics {10, 100,
//! 1000} (partitions per topic = members × ratio / topics; cells where that is below one are
//! skipped) × subscriptions (homogeneous, 5 disjoint buckets, each member a random half of the
//! topics) × full / one member joins / one member leaves × racks off / on; `--members`,
//! `--ratios`, `--topics` and `--subscriptions` pick a part of it. Incremental cases
//! start from the stable assignment that the same assignor gives the full case (not timed).
//! Times are CPU time of the measuring thread (wall time where Linux's per-thread schedstat is
//! missing), so that other processes on a shared machine do not inflate them.
//! Peak memory comes from a counting global allocator: the highest number of live heap bytes
//! during the call, above what was live before it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};
use std::time::Instant;

use rebalance::{
    Assignment, Assignor, GroupSpec, MemberSpec, OwnedPartitions, TopicSpec, UniformV1,
    assignor_by_name,
};

use super::{Failure, read_text};

/// Counts live heap bytes and their peak, on top of the system allocator, once `bench
/// assignor` has switched counting on: the binary's other commands (the model checker
/// allocates on every step) pay one relaxed load per allocation and nothing else.
struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
/// Net bytes allocated since counting started (negative when memory allocated before was freed).
static CURRENT: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

/// Records `grow` more live bytes (negative: fewer) and the new peak.
fn count(grow: isize) {
    let now = CURRENT.fetch_add(grow, Ordering::Relaxed) + grow;
    if grow > 0 {
        PEAK.fetch_max(now, Ordering::Relaxed);
    }
}

// SAFETY: every call forwards to `System` unchanged; the counters never affect allocation.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() && COUNTING.load(Ordering::Relaxed) {
            count(layout.size() as isize);
        }
        p
    }

    // Without this override the default `alloc_zeroed` calls `alloc` and then writes the zeros
    // itself, so every `vec![0; n]` would pay a memset that the system allocator avoids for fresh
    // pages: the benchmark would then time an allocator the library never runs under.
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() && COUNTING.load(Ordering::Relaxed) {
            count(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) };
        if COUNTING.load(Ordering::Relaxed) {
            count(-(layout.size() as isize));
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() && COUNTING.load(Ordering::Relaxed) {
            count(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Arguments of `rebalance bench assignor`.
#[derive(clap::Args)]
pub struct BenchAssignorArgs {
    /// The assignor measured against uniform-v1.
    #[arg(long, default_value = "uniform-v2")]
    assignor: String,
    /// Measure this one group spec instead of the matrix.
    #[arg(long)]
    spec: Option<PathBuf>,
    /// Print the rows as one JSON document.
    #[arg(long)]
    json: bool,
    /// A small subset of the matrix (100 members, 10 topics), for smoke tests.
    #[arg(long)]
    quick: bool,
    /// The member counts of the matrix to run (comma-separated).
    #[arg(long, value_delimiter = ',', default_values_t = [100, 1000, 10_000])]
    members: Vec<usize>,
    /// The partitions-per-member ratios of the matrix to run (comma-separated).
    #[arg(long, value_delimiter = ',', default_values_t = [10, 50])]
    ratios: Vec<usize>,
    /// The topic counts of the matrix to run (comma-separated).
    #[arg(long, value_delimiter = ',', default_values_t = [10, 100, 1000])]
    topics: Vec<usize>,
    /// The subscription kinds of the matrix to run (comma-separated: homog, buckets, overlap).
    #[arg(long, value_delimiter = ',', default_values_t = ["homog".to_owned(), "buckets".to_owned(), "overlap".to_owned()])]
    subscriptions: Vec<String>,
    /// Timed runs per case after the warm-up (fewer for cases slower than a second).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Join and leave rows start both assignors from the measured assignor's stable
    /// assignment, instead of each from its own: the same input, so the ratio compares the
    /// algorithms rather than the sizes of their earlier outputs.
    #[arg(long)]
    shared_input: bool,
    /// Write each matrix case's inputs into this directory instead of timing them:
    /// `CASE.json` is the measured assignor's input and, for join and leave cases without
    /// `--shared-input`, `CASE.v1.json` is uniform-v1's. A row can then be rerun alone with
    /// `--spec`, profiled, or kept as a regression case.
    #[arg(long, value_name = "DIR", conflicts_with = "spec")]
    write_specs: Option<PathBuf>,
}

/// One measured case.
#[derive(serde::Serialize)]
struct Row {
    case: String,
    partitions: u64,
    members: usize,
    rack_aware: bool,
    v2_median_ms: f64,
    v2_max_ms: f64,
    v2_peak_mib: f64,
    v1_median_ms: f64,
    v1_max_ms: f64,
    v1_peak_mib: f64,
    ratio: f64,
}

#[derive(Clone, Copy)]
enum Subs {
    Homogeneous,
    Buckets,
    Overlap,
}

impl Subs {
    /// The kind's name in case names and in `--subscriptions`.
    fn name(self) -> &'static str {
        match self {
            Subs::Homogeneous => "homog",
            Subs::Buckets => "buckets",
            Subs::Overlap => "overlap",
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Full,
    Join,
    Leave,
}

/// Runs `rebalance bench assignor`.
pub fn run(args: BenchAssignorArgs) -> Result<ExitCode, Failure> {
    let assignor = assignor_by_name(&args.assignor)
        .ok_or_else(|| Failure::input(format!("unknown assignor {:?}", args.assignor)))?;
    // The smoke test only needs each case to run.
    let runs = if args.quick { 1 } else { args.runs.max(1) };
    if let Some(kind) = args
        .subscriptions
        .iter()
        .find(|k| !["homog", "buckets", "overlap"].contains(&k.as_str()))
    {
        return Err(Failure::input(format!(
            "unknown subscription kind {kind:?} (homog, buckets, overlap)"
        )));
    }
    let mut rows = Vec::new();
    if let Some(dir) = &args.write_specs {
        std::fs::create_dir_all(dir)
            .map_err(|e| Failure::input(format!("cannot create {}: {e}", dir.display())))?;
    }
    if let Some(path) = &args.spec {
        let spec = GroupSpec::from_json(&read_text(Some(path))?).map_err(Failure::input)?;
        let row = measure(&path.display().to_string(), &spec, assignor.as_ref(), runs)?;
        print_row(&row, args.json, true);
        rows.push(row);
    } else {
        let members: &[usize] = if args.quick { &[100] } else { &args.members };
        let ratios: &[usize] = if args.quick { &[10] } else { &args.ratios };
        let topic_counts: &[usize] = if args.quick { &[10] } else { &args.topics };
        let mut first = true;
        let mut written = 0usize;
        for &n in members {
            for &ratio in ratios {
                for &topics in topic_counts {
                    let per_topic = n * ratio / topics;
                    if per_topic < 1 {
                        continue;
                    }
                    for subs in [Subs::Homogeneous, Subs::Buckets, Subs::Overlap] {
                        if !args.subscriptions.iter().any(|k| k == subs.name()) {
                            continue;
                        }
                        for racks in [false, true] {
                            let full = matrix_spec(n, topics, per_topic, subs, racks);
                            for mode in [Mode::Full, Mode::Join, Mode::Leave] {
                                let name = format!(
                                    "{n}m x {ratio}ppm x {topics}t {} {} racks-{}",
                                    subs.name(),
                                    match mode {
                                        Mode::Full => "full",
                                        Mode::Join => "join",
                                        Mode::Leave => "leave",
                                    },
                                    if racks { "on" } else { "off" }
                                );
                                let (spec, base) =
                                    inputs(&full, mode, assignor.as_ref(), args.shared_input)?;
                                if let Some(dir) = &args.write_specs {
                                    write_case(dir, &name, &spec, base.as_ref())?;
                                    written += 1;
                                    continue;
                                }
                                let base = base.as_ref().unwrap_or(&spec);
                                let row = row(
                                    &name,
                                    &spec,
                                    (&spec, assignor.as_ref()),
                                    (base, &UniformV1),
                                    runs,
                                )?;
                                print_row(&row, args.json, first);
                                first = false;
                                rows.push(row);
                            }
                        }
                    }
                }
            }
        }
        if let Some(dir) = &args.write_specs {
            println!("wrote the inputs of {written} cases to {}", dir.display());
            return Ok(ExitCode::SUCCESS);
        }
    }
    let summaries: Vec<Summary> = [false, true]
        .into_iter()
        .filter_map(|racks| Summary::of(racks, &rows))
        .collect();
    if args.json {
        let doc = serde_json::json!({
            "assignor": args.assignor,
            "baseline": "uniform-v1",
            "rows": rows,
            "summary": summaries,
        });
        println!("{doc}");
    } else if rows.len() > 1 {
        for summary in &summaries {
            println!("{summary}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The ratios of the rows with racks on or off against the goal's thresholds (1x without
/// racks, 2x with).
#[derive(serde::Serialize, Debug, PartialEq)]
struct Summary {
    rack_aware: bool,
    rows: usize,
    at_most_1x: usize,
    from_1x_to_2x: usize,
    above_2x: usize,
    median_ratio: f64,
    worst_ratio: f64,
    worst_case: String,
}

impl Summary {
    /// The summary of the rows whose racks are `rack_aware`, or `None` if there are none.
    fn of(rack_aware: bool, rows: &[Row]) -> Option<Summary> {
        let mut picked: Vec<&Row> = rows.iter().filter(|r| r.rack_aware == rack_aware).collect();
        if picked.is_empty() {
            return None;
        }
        picked.sort_by(|a, b| a.ratio.total_cmp(&b.ratio));
        let n = picked.len();
        let median_ratio = if n % 2 == 1 {
            picked[n / 2].ratio
        } else {
            (picked[n / 2 - 1].ratio + picked[n / 2].ratio) / 2.0
        };
        let worst = picked[n - 1];
        Some(Summary {
            rack_aware,
            rows: n,
            at_most_1x: picked.iter().filter(|r| r.ratio <= 1.0).count(),
            from_1x_to_2x: picked
                .iter()
                .filter(|r| r.ratio > 1.0 && r.ratio <= 2.0)
                .count(),
            above_2x: picked.iter().filter(|r| r.ratio > 2.0).count(),
            median_ratio,
            worst_ratio: worst.ratio,
            worst_case: worst.case.clone(),
        })
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "summary racks-{}: {} rows, ratio <= 1x: {}, 1-2x: {}, > 2x: {}; median {:.2}x, worst {:.2}x ({})",
            if self.rack_aware { "on" } else { "off" },
            self.rows,
            self.at_most_1x,
            self.from_1x_to_2x,
            self.above_2x,
            self.median_ratio,
            self.worst_ratio,
            self.worst_case
        )
    }
}

fn print_row(row: &Row, json: bool, header: bool) {
    if json {
        return;
    }
    if header {
        println!(
            "{:<46} {:>9} {:>10} {:>10} {:>9} {:>10} {:>10} {:>9} {:>7}",
            "case", "parts", "med ms", "max ms", "peak MiB", "v1 med", "v1 max", "v1 MiB", "ratio"
        );
    }
    println!(
        "{:<46} {:>9} {:>10} {:>10} {:>9.1} {:>10} {:>10} {:>9.1} {:>7.2}",
        row.case,
        row.partitions,
        ms(row.v2_median_ms),
        ms(row.v2_max_ms),
        row.v2_peak_mib,
        ms(row.v1_median_ms),
        ms(row.v1_max_ms),
        row.v1_peak_mib,
        row.ratio
    );
}

/// A time in ms with three significant digits (at least two decimals), so that rows of a
/// few µs keep their precision.
fn ms(value: f64) -> String {
    let decimals = if value >= 100.0 {
        2
    } else {
        let digits = if value > 0.0 {
            value.log10().floor() as i32
        } else {
            0
        };
        (2 - digits).clamp(2, 6) as usize
    };
    format!("{value:.decimals$}")
}

/// A full (no owners) matrix spec.
fn matrix_spec(
    members: usize,
    topics: usize,
    per_topic: usize,
    subs: Subs,
    racks: bool,
) -> GroupSpec {
    let rack_names = ["r0", "r1", "r2"];
    let topic_specs = (0..topics)
        .map(|t| TopicSpec {
            name: format!("t{t:04}"),
            partitions: per_topic as i64,
            replica_racks: racks.then(|| {
                (0..per_topic)
                    .map(|p| {
                        let r = (p + t) % 3;
                        vec![rack_names[r].to_owned(), rack_names[(r + 1) % 3].to_owned()]
                    })
                    .collect()
            }),
        })
        .collect();
    let mut rng = SplitMix(0x5eed);
    let member_specs = (0..members)
        .map(|m| {
            let chosen: Vec<usize> = match subs {
                Subs::Homogeneous => (0..topics).collect(),
                Subs::Buckets => (0..topics).filter(|t| t % 5 == m % 5).collect(),
                Subs::Overlap => {
                    let mut all: Vec<usize> = (0..topics).collect();
                    let half = topics.div_ceil(2);
                    for i in 0..half {
                        let j = i + (rng.next() % (topics - i) as u64) as usize;
                        all.swap(i, j);
                    }
                    all.truncate(half);
                    all.sort_unstable();
                    all
                }
            };
            MemberSpec {
                id: format!("m{m:05}"),
                rack: racks.then(|| rack_names[m % 3].to_owned()),
                subscriptions: chosen.iter().map(|t| format!("t{t:04}")).collect(),
                owned: Vec::new(),
                generation: -1,
            }
        })
        .collect();
    GroupSpec {
        rack_aware: racks,
        topics: topic_specs,
        members: member_specs,
    }
}

/// A fixed-seed splitmix64 generator (no `rand` dependency needed).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// The spec after `assignment` became stable: every member owns its part at generation 1.
fn with_owned(full: &GroupSpec, assignment: &Assignment) -> GroupSpec {
    let mut spec = full.clone();
    for member in &mut spec.members {
        if let Some(topics) = assignment.member(&member.id) {
            member.owned = topics
                .iter()
                .map(|(t, ps)| OwnedPartitions {
                    topic: t.to_owned(),
                    partitions: ps.to_vec(),
                })
                .collect();
            member.generation = 1;
        }
    }
    spec
}

/// The incremental spec for `mode`, from the stable assignment of `assignor` on `full`.
fn incremental(
    full: &GroupSpec,
    mode: Mode,
    assignor: &dyn Assignor,
) -> Result<GroupSpec, Failure> {
    if mode == Mode::Full {
        return Ok(full.clone());
    }
    let stable = assignor.assign(full).map_err(Failure::input)?;
    let mut spec = with_owned(full, &stable);
    match mode {
        Mode::Join => {
            let mut joiner = spec.members[0].clone();
            joiner.id = "m-joiner".to_owned();
            joiner.owned.clear();
            joiner.generation = -1;
            spec.members.push(joiner);
        }
        _ => {
            spec.members.pop();
        }
    }
    Ok(spec)
}

/// The measured assignor's input for `mode` and, when it differs, uniform-v1's: each starts
/// from its own stable assignment unless the input is shared.
fn inputs(
    full: &GroupSpec,
    mode: Mode,
    assignor: &dyn Assignor,
    shared_input: bool,
) -> Result<(GroupSpec, Option<GroupSpec>), Failure> {
    let spec = incremental(full, mode, assignor)?;
    let base = if shared_input || mode == Mode::Full {
        None
    } else {
        Some(incremental(full, mode, &UniformV1)?)
    };
    Ok((spec, base))
}

/// Writes a case's inputs under `dir`, named after the case with its spaces as dashes.
fn write_case(
    dir: &Path,
    name: &str,
    spec: &GroupSpec,
    base: Option<&GroupSpec>,
) -> Result<(), Failure> {
    let stem: String = name
        .chars()
        .map(|c| if c == ' ' { '-' } else { c })
        .collect();
    let write = |file: String, spec: &GroupSpec| {
        let path = dir.join(file);
        std::fs::write(&path, spec.to_json())
            .map_err(|e| Failure::input(format!("cannot write {}: {e}", path.display())))
    };
    write(format!("{stem}.json"), spec)?;
    if let Some(base) = base {
        write(format!("{stem}.v1.json"), base)?;
    }
    Ok(())
}

fn measure(
    name: &str,
    spec: &GroupSpec,
    assignor: &dyn Assignor,
    runs: usize,
) -> Result<Row, Failure> {
    row(name, spec, (spec, assignor), (spec, &UniformV1), runs)
}

/// Times the measured assignor and the v1 baseline, each on its own spec, into one row
/// (`shape` gives the row's partition and member counts).
fn row(
    name: &str,
    shape: &GroupSpec,
    (spec, assignor): (&GroupSpec, &dyn Assignor),
    (base, baseline): (&GroupSpec, &dyn Assignor),
    runs: usize,
) -> Result<Row, Failure> {
    let (v2_median_ms, v2_max_ms, v2_peak_mib) = time(spec, assignor, runs)?;
    let (v1_median_ms, v1_max_ms, v1_peak_mib) = time(base, baseline, runs)?;
    Ok(Row {
        case: name.to_owned(),
        partitions: total_partitions(shape),
        members: shape.members.len(),
        rack_aware: shape.rack_aware,
        v2_median_ms,
        v2_max_ms,
        v2_peak_mib,
        v1_median_ms,
        v1_max_ms,
        v1_peak_mib,
        ratio: v2_median_ms / v1_median_ms.max(1e-6),
    })
}

fn total_partitions(spec: &GroupSpec) -> u64 {
    spec.topics.iter().map(|t| t.partitions.max(0) as u64).sum()
}

/// The clock of a batch: CPU ns of this thread (`CLOCK_THREAD_CPUTIME_ID`, exact to the
/// nanosecond, unlike `/proc/thread-self/schedstat`, which a running thread only sees
/// advance at scheduler ticks of a few ms) when the platform has it, else wall ns.
/// The benchmark reports CPU time because the wall time of a shared machine mostly
/// measures the other processes.
struct Clock {
    cpu: Option<cpu_time::ThreadTime>,
    wall: Instant,
}

impl Clock {
    fn start() -> Self {
        Self {
            cpu: cpu_time::ThreadTime::try_now().ok(),
            wall: Instant::now(),
        }
    }

    /// Nanoseconds since [`Clock::start`].
    fn elapsed_ns(&self) -> u64 {
        let spent = match &self.cpu {
            Some(cpu) => cpu.try_elapsed().unwrap_or_else(|_| self.wall.elapsed()),
            None => self.wall.elapsed(),
        };
        u64::try_from(spent.as_nanos()).unwrap_or(u64::MAX)
    }
}

/// Runs `f` in a batch of calls lasting at least 40 ms of CPU, so that a fast call is timed
/// over many, and returns the mean per call in ms.
fn timed_batch<T>(mut f: impl FnMut() -> T) -> f64 {
    let clock = Clock::start();
    let mut calls = 0u32;
    loop {
        drop(f());
        calls += 1;
        let spent = clock.elapsed_ns();
        if spent >= 40_000_000 || calls >= 10_000 {
            return spent as f64 / 1e6 / f64::from(calls);
        }
    }
}

/// Median and max CPU time per call (ms) over `runs` batches after one warm-up, and the
/// warm-up's peak MiB (allocations are counted during the warm-up only).
fn time(
    spec: &GroupSpec,
    assignor: &dyn Assignor,
    runs: usize,
) -> Result<(f64, f64, f64), Failure> {
    COUNTING.store(true, Ordering::Relaxed);
    let before = CURRENT.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let start = Instant::now();
    drop(assignor.assign(spec).map_err(Failure::input)?);
    let warm_ms = start.elapsed().as_secs_f64() * 1e3;
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(before).max(0);
    // The timed runs do not count: two atomic updates per allocation would be measured too,
    // and weigh most on the assignor that allocates most.
    COUNTING.store(false, Ordering::Relaxed);
    // Slow cases get fewer runs so the whole matrix stays practical.
    let runs = if warm_ms > 2000.0 { 1 } else { runs };
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        times.push(timed_batch(|| assignor.assign(spec)));
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    let max = times.last().copied().unwrap_or(median);
    Ok((median, max, peak as f64 / (1024.0 * 1024.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(case: &str, rack_aware: bool, ratio: f64) -> Row {
        Row {
            case: case.to_owned(),
            partitions: 0,
            members: 0,
            rack_aware,
            v2_median_ms: ratio,
            v2_max_ms: ratio,
            v2_peak_mib: 0.0,
            v1_median_ms: 1.0,
            v1_max_ms: 1.0,
            v1_peak_mib: 0.0,
            ratio,
        }
    }

    #[test]
    fn times_keep_three_significant_digits() {
        assert_eq!(ms(0.02134), "0.0213");
        assert_eq!(ms(0.1456), "0.146");
        assert_eq!(ms(3.25), "3.25");
        assert_eq!(ms(21.333), "21.33");
        assert_eq!(ms(1234.5), "1234.50");
        assert_eq!(ms(0.0), "0.00");
    }

    #[test]
    fn the_summary_counts_each_side_of_the_thresholds_and_names_the_worst_row() {
        let rows = [
            row("a", false, 0.5),
            row("b", false, 1.0),
            row("c", false, 1.5),
            row("d", false, 2.0),
            row("e", false, 2.5),
            row("f", true, 3.0),
            row("g", true, 1.2),
        ];
        let off = Summary::of(false, &rows).unwrap();
        assert_eq!(
            (off.rows, off.at_most_1x, off.from_1x_to_2x, off.above_2x),
            (5, 2, 2, 1)
        );
        assert_eq!((off.median_ratio, off.worst_ratio), (1.5, 2.5));
        assert_eq!(off.worst_case, "e");
        let on = Summary::of(true, &rows).unwrap();
        assert_eq!(
            (on.rows, on.median_ratio, on.worst_case.as_str()),
            (2, 2.1, "f")
        );
        assert!(Summary::of(true, &rows[..5]).is_none());
    }
}
