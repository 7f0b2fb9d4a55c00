//! Runs every scenario script of `model/scenarios/` through the real protocol core and compares
//! its printed transcript (text and JSON) with the committed expected output. `UPDATE_EXPECT=1`
//! rewrites the expected files instead.
//!
//! A script that is meant to fail (a switched-on fault) has its error as the last line of its
//! expected text output (`error: ...`).
//!
//! The snapshots alone could be regenerated wrongly, so the reference's example tables and the
//! failover stages are also asserted structurally below.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use rebalance::{MemberId, TopicPartition};
use rebalance_model::scenario::{self, Round, RunErrorKind, Transcript, render};

fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

/// Parses and runs `scenarios/NAME.scn` (named by its path relative to the package, so outputs
/// do not depend on where the repository lives).
fn run_named(name: &str) -> Result<Transcript, Box<scenario::runner::RunFailure>> {
    let path = scenarios_dir().join(format!("{name}.scn"));
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {path:?}: {e}"));
    let script =
        scenario::parse(&format!("scenarios/{name}.scn"), &text).unwrap_or_else(|e| panic!("{e}"));
    scenario::run(&script)
}

fn ok(name: &str) -> Transcript {
    run_named(name)
        .unwrap_or_else(|f| panic!("{name}: {}\n{}", f.error, render::text(&f.transcript)))
}

fn tps(list: &[i32]) -> BTreeSet<TopicPartition> {
    list.iter().map(|&p| TopicPartition::new("T", p)).collect()
}

fn id(s: &str) -> MemberId {
    MemberId::from(s)
}

/// What a round told each member: (assigned, revoked, delay_ms).
fn told(round: &Round, member: &str) -> (BTreeSet<TopicPartition>, BTreeSet<TopicPartition>, u64) {
    let m = round
        .members
        .get(&id(member))
        .unwrap_or_else(|| panic!("{member} is not in round {round:?}"));
    (m.assigned.clone(), m.revoked.clone(), m.delay_ms)
}

fn members(round: &Round) -> Vec<&str> {
    round.members.keys().map(MemberId::as_str).collect()
}

#[test]
fn every_script_matches_its_expected_output() {
    let update = std::env::var_os("UPDATE_EXPECT").is_some_and(|v| v == "1");
    let mut scripts: Vec<PathBuf> = fs::read_dir(scenarios_dir())
        .expect("scenarios directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "scn"))
        .collect();
    scripts.sort();
    assert!(scripts.len() >= 10, "scenario scripts missing: {scripts:?}");
    let mut mismatches = Vec::new();
    for path in &scripts {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("UTF-8 script name");
        let (text, json) = match run_named(name) {
            Ok(t) => (render::text(&t), render::json(&t)),
            Err(f) => (
                format!("{}error: {}\n", render::text(&f.transcript), f.error),
                render::json(&f.transcript),
            ),
        };
        for (ext, actual) in [("expected", &text), ("expected.json", &json)] {
            let expected_path = path.with_extension(ext);
            if update {
                fs::write(&expected_path, actual).expect("write expected output");
                continue;
            }
            let expected = fs::read_to_string(&expected_path).unwrap_or_default();
            if &expected != actual {
                mismatches.push(format!(
                    "{}:\n--- expected\n{expected}--- actual\n{actual}",
                    expected_path.display()
                ));
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} outputs differ (UPDATE_EXPECT=1 rewrites them):\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
}

#[test]
fn cooperative_member_joins_matches_the_reference_table() {
    let t = ok("coop-member-joins");
    let rounds: Vec<&Round> = t.rounds().collect();
    assert_eq!(rounds.len(), 2, "two rounds: revoke, then assign");
    // Round 1: A must give up T4 (T-3); nobody, D included, is assigned anything new.
    assert_eq!(members(rounds[0]), ["A", "B", "C", "D"]);
    assert_eq!(told(rounds[0], "A").1, tps(&[3]));
    for m in ["A", "B", "C", "D"] {
        assert_eq!(told(rounds[0], m).0, tps(&[]), "{m} assigned in round 1");
    }
    for m in ["B", "C", "D"] {
        assert_eq!(told(rounds[0], m).1, tps(&[]), "{m} revoked in round 1");
    }
    // Round 2: D gets T4; nothing else moves.
    assert_eq!(told(rounds[1], "D"), (tps(&[3]), tps(&[]), 0));
    for m in ["A", "B", "C"] {
        assert_eq!(
            told(rounds[1], m),
            (tps(&[]), tps(&[]), 0),
            "{m} in round 2"
        );
    }
    assert_eq!(t.final_ownership[&id("D")], tps(&[3]));
    assert_eq!(t.final_ownership[&id("A")], tps(&[0]));
}

#[test]
fn cooperative_member_leaves_matches_the_reference_table() {
    let t = ok("coop-member-leaves");
    let rounds: Vec<&Round> = t.rounds().collect();
    assert_eq!(rounds.len(), 1, "a leave needs a single round");
    assert_eq!(members(rounds[0]), ["A", "B", "C"]);
    // T4 (T-3) was nobody's any more: assigned at once, nothing revoked.
    assert_eq!(told(rounds[0], "A"), (tps(&[3]), tps(&[]), 0));
    assert_eq!(t.final_ownership[&id("A")], tps(&[0, 3]));
}

#[test]
fn deferred_member_leaves_matches_the_reference_table() {
    let t = ok("deferred-member-leaves");
    let rounds: Vec<&Round> = t.rounds().collect();
    assert_eq!(rounds.len(), 2);
    // Round 1: T4 is lost; nothing assigned or revoked; everyone told to come back after t1.
    for m in ["A", "B", "C"] {
        assert_eq!(
            told(rounds[0], m),
            (tps(&[]), tps(&[]), 3000),
            "{m} in round 1"
        );
    }
    // Round 2, after t1: T4 goes to A and no delay is set.
    assert!(
        rounds[1].at_ms >= rounds[0].at_ms + 3000,
        "round 2 waits for t1"
    );
    assert_eq!(told(rounds[1], "A"), (tps(&[3]), tps(&[]), 0));
    for m in ["B", "C"] {
        assert_eq!(
            told(rounds[1], m),
            (tps(&[]), tps(&[]), 0),
            "{m} in round 2"
        );
    }
}

#[test]
fn deferred_bounce_within_the_delay_matches_the_reference_table() {
    let t = ok("deferred-bounce-returns");
    let rounds: Vec<&Round> = t.rounds().collect();
    assert_eq!(rounds.len(), 2);
    for m in ["A", "B", "C"] {
        assert_eq!(
            told(rounds[0], m),
            (tps(&[]), tps(&[]), 3000),
            "{m} in round 1"
        );
    }
    // D' (D2) returned before t1 and gets T4 in a round that comes before t1 ran out.
    assert!(
        rounds[1].at_ms < rounds[0].at_ms + 3000,
        "round 2 comes before t1"
    );
    assert_eq!(members(rounds[1]), ["A", "B", "C", "D2"]);
    assert_eq!(told(rounds[1], "D2"), (tps(&[3]), tps(&[]), 0));
    for m in ["A", "B", "C"] {
        assert_eq!(
            told(rounds[1], m),
            (tps(&[]), tps(&[]), 0),
            "{m} in round 2"
        );
    }
}

/// Every failover stage ends converged: each partition of T consumed by exactly one running
/// member (the runner already checked there was never a second consumer).
#[test]
fn failover_at_every_stage_converges_without_double_ownership() {
    for name in [
        "failover-1-before-noticed",
        "failover-2-errors-returned",
        "failover-3-mid-join",
        "failover-4b-generation-persisted",
        "failover-4-persisted",
        "failover-5-some-answered",
    ] {
        let t = ok(name);
        let text = render::text(&t);
        assert!(
            text.contains("failover (coordinator epoch 1)"),
            "{name} fails over:\n{text}"
        );
        let mut owners: BTreeMap<&TopicPartition, usize> = BTreeMap::new();
        for owned in t.final_ownership.values() {
            for tp in owned {
                *owners.entry(tp).or_default() += 1;
            }
        }
        let all: BTreeSet<&TopicPartition> = owners.keys().copied().collect();
        assert_eq!(
            all.len(),
            4,
            "{name}: every partition owned at the end:\n{text}"
        );
        assert!(
            owners.values().all(|&n| n == 1),
            "{name}: single owners:\n{text}"
        );
    }
}

/// The safety check fails loudly on a protocol that breaks it: with KAFKA-9184's fault an
/// isolated member keeps consuming after the group gave its partitions away.
#[test]
fn the_runner_fails_loudly_when_safety_breaks() {
    let failure = run_named("fault-kafka-9184-zombie").expect_err("the fault breaks safety");
    assert!(
        matches!(failure.error.kind, RunErrorKind::DoubleOwnership { .. }),
        "{}",
        failure.error
    );
    // The same scenario with the fault off (the fix: the member stops on its own) is safe.
    let path = scenarios_dir().join("fault-kafka-9184-zombie.scn");
    let text = fs::read_to_string(path).expect("script");
    let fixed = text.replace("fault KAFKA-9184", "");
    let script = scenario::parse("fixed.scn", &fixed).expect("valid");
    let t = scenario::run(&script).unwrap_or_else(|f| panic!("{}", f.error));
    assert!(
        t.final_ownership[&id("B")].is_empty(),
        "the cut-off member stopped"
    );
}

#[test]
fn a_false_expectation_fails_the_run() {
    let path = scenarios_dir().join("coop-member-leaves.scn");
    let text = fs::read_to_string(path).expect("script");
    let wrong = text.replace(
        "expect A=T-0,T-3 B=T-1 C=T-2",
        "expect A=T-0 B=T-1,T-3 C=T-2",
    );
    assert_ne!(wrong, text);
    let script = scenario::parse("wrong.scn", &wrong).expect("valid");
    let failure = scenario::run(&script).expect_err("the expectation is false");
    assert!(
        matches!(failure.error.kind, RunErrorKind::ExpectFailed { .. }),
        "{}",
        failure.error
    );
    let line = 1 + wrong
        .lines()
        .position(|l| l.starts_with("expect"))
        .expect("an expect line");
    assert_eq!(
        failure.error.to_string(),
        format!(
            "wrong.scn:{line}: expected A(T-0) B(T-1,T-3) C(T-2), found A(T-0,T-3) B(T-1) C(T-2)"
        )
    );
}

fn run_text(text: &str) -> Result<Transcript, Box<scenario::runner::RunFailure>> {
    let script = scenario::parse("inline.scn", text).unwrap_or_else(|e| panic!("{e}"));
    scenario::run(&script)
}

const PAIR: &str = "topic T 2\nmember A subscribe T\nmember B subscribe T\nstable A=T-0 B=T-1\n";

#[test]
fn run_until_a_condition_that_never_holds_fails() {
    // A settled group never rebalances on its own: `joined A` cannot hold.
    let failure = run_text(&format!("{PAIR}run until joined A\n")).expect_err("never holds");
    assert!(
        matches!(&failure.error.kind, RunErrorKind::NeverHeld { condition, .. } if condition == "joined A"),
        "{}",
        failure.error
    );
    assert_eq!(failure.error.line, 5);
}

#[test]
fn run_until_stops_before_the_round_completes() {
    let t = run_text(&format!("{PAIR}leave B\nrun until persisted generation\n")).expect("runs");
    assert_eq!(
        t.rounds().count(),
        0,
        "stopped after the join phase, before any member synced"
    );
    let t = run_text(&format!("{PAIR}leave B\nrun until synced A\n")).expect("runs");
    assert_eq!(t.rounds().count(), 1);
    assert_eq!(t.final_ownership[&id("A")], tps(&[0, 1]));
}

#[test]
fn events_that_cannot_apply_name_their_line() {
    for (events, reason) in [
        ("join A\n", "A is already running"),
        ("leave B\nleave B\n", "B is not running"),
        (
            "crash A\ncrash B\nleader-leaves\n",
            "the group has no running leader",
        ),
        ("bounce A as A2\nisolate A\n", "A is not running"),
    ] {
        let failure = run_text(&format!("{PAIR}{events}")).expect_err(events);
        let RunErrorKind::Inapplicable { reason: found, .. } = &failure.error.kind else {
            panic!("{events:?}: {}", failure.error);
        };
        assert_eq!(found, reason, "{events:?}");
        assert_eq!(failure.error.line, 4 + events.lines().count(), "{events:?}");
    }
}

#[test]
fn wait_moves_the_clock_and_delivers_what_falls_due() {
    let t = run_text(&format!(
        "{PAIR}wait 250\ncrash B\nwait 50\nexpect A=T-0\nrun\n"
    ))
    .expect("runs");
    let times: Vec<u64> = t
        .entries
        .iter()
        .filter_map(|e| match e {
            scenario::Entry::Event { at_ms, .. } => Some(*at_ms),
            _ => None,
        })
        .collect();
    assert_eq!(
        times[..3],
        [100, 350, 350],
        "events at the clock's time: {times:?}"
    );
    assert_eq!(t.final_ownership[&id("A")], tps(&[0, 1]));
}

/// KAFKA-15693's fault leaves a lost partition unassigned with a zero delay; the fixed protocol
/// assigns it in the same round.
#[test]
fn zero_delay_reassigns_at_once_unless_the_fault_withholds() {
    let t = ok("deferred-zero-delay");
    assert_eq!(t.rounds().count(), 1);
    assert_eq!(t.final_ownership[&id("A")], tps(&[0, 3]));
    let failure = run_named("fault-kafka-15693-zero-delay").expect_err("the fault withholds T-3");
    assert!(
        matches!(failure.error.kind, RunErrorKind::ExpectFailed { .. }),
        "{}",
        failure.error
    );
    let owned: BTreeSet<&TopicPartition> = failure
        .transcript
        .final_ownership
        .values()
        .flatten()
        .collect();
    assert!(
        !owned.contains(&TopicPartition::new("T", 3)),
        "T-3 is owned by nobody"
    );
}
