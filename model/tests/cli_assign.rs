//! `rebalance assign` and `rebalance bench assignor` from the outside: output format, exit
//! statuses and the one-line errors on bad input.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn rebalance(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rebalance"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rebalance");
    // The tool may exit before reading stdin (bad arguments): a broken pipe is fine.
    let _ = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes());
    child.wait_with_output().expect("wait rebalance")
}

const REFERENCE: &str = r#"{"topics": [{"name": "T1", "partitions": 3}, {"name": "T2", "partitions": 3},
  {"name": "T3", "partitions": 3}],
 "members": [{"id": "C", "subscriptions": ["T1", "T2", "T3"]},
             {"id": "A", "subscriptions": ["T3", "T2", "T1"]},
             {"id": "B", "subscriptions": ["T1", "T2", "T3"]}]}"#;

#[test]
fn assigns_the_reference_example_with_each_assignor() {
    let out = rebalance(&["assign"], REFERENCE);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        r#"{"assignment":{"A":{"T1":[0],"T2":[0],"T3":[0]},"B":{"T1":[1],"T2":[1],"T3":[1]},"C":{"T1":[2],"T2":[2],"T3":[2]}}}"#
    );
    let out = rebalance(&["assign", "--assignor", "uniform-v1", "-"], REFERENCE);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        r#"{"assignment":{"A":{"T1":[0,1,2]},"B":{"T2":[0,1,2]},"C":{"T3":[0,1,2]}}}"#
    );
    let out = rebalance(&["assign", "--assignor", "range"], REFERENCE);
    assert!(out.status.success());
}

fn refused(args: &[&str], input: &str, expect: &str) {
    let out = rebalance(args, input);
    assert_eq!(out.status.code(), Some(2), "{args:?} {input}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains(expect), "{err:?} should contain {expect:?}");
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_input_exits_2_with_one_line_naming_the_problem() {
    refused(
        &["assign"],
        "{\"topics\": [\n  {\"name\": ",
        "line 2, column",
    );
    refused(
        &["assign"],
        r#"{"topics": [], "members": [{"id": "A", "subscriptions": []}, {"id": "A", "subscriptions": []}]}"#,
        "duplicate member id \"A\"",
    );
    refused(
        &["assign"],
        r#"{"topics": [{"name": "T", "partitions": 1}, {"name": "T", "partitions": 2}], "members": []}"#,
        "duplicate topic name \"T\"",
    );
    refused(
        &["assign"],
        r#"{"topics": [{"name": "T", "partitions": -1}], "members": []}"#,
        "topic \"T\" has -1 partitions",
    );
    refused(
        &["assign"],
        r#"{"topics": [{"name": "T", "partitions": 16777217}], "members": []}"#,
        "topic \"T\" has 16777217 partitions",
    );
    refused(
        &["assign"],
        r#"{"topics": [{"name": "T", "partitions": 2, "replica_racks": [["r1"]]}], "members": []}"#,
        "2 partitions but 1 replica_racks entries",
    );
    refused(
        &["assign", "--assignor", "sticky"],
        REFERENCE,
        "unknown assignor \"sticky\"",
    );
    refused(&["assign", "/nonexistent/spec.json"], "", "cannot read");
}

#[test]
fn quick_assignor_bench_runs_and_prints_json() {
    let out = rebalance(&["bench", "assignor", "--quick", "--json"], "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let value: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("bench --json prints JSON");
    let rows = value["rows"].as_array().expect("rows");
    assert!(!rows.is_empty());
    for row in rows {
        assert!(row["v2_median_ms"].as_f64().is_some());
        assert!(row["v1_median_ms"].as_f64().is_some());
    }
}

#[test]
fn write_specs_writes_each_cases_inputs_and_they_replay() {
    let dir = std::env::temp_dir().join(format!("rebalance-write-specs-{}", std::process::id()));
    let path = dir.to_str().expect("UTF-8 temp dir");
    let out = rebalance(&["bench", "assignor", "--quick", "--write-specs", path], "");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .expect("the directory exists")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    // 100 members, 10 per member, 10 topics: 3 subscription kinds x racks off/on x full, join,
    // leave; v1 gets its own input for the 12 join and leave cases.
    assert_eq!(
        names.iter().filter(|n| !n.ends_with(".v1.json")).count(),
        18
    );
    assert_eq!(names.iter().filter(|n| n.ends_with(".v1.json")).count(), 12);
    let join = dir.join("100m-x-10ppm-x-10t-homog-join-racks-on.json");
    let spec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&join).expect("join spec")).expect("JSON");
    let members = spec["members"].as_array().expect("members");
    assert_eq!(members.len(), 101, "the joiner is added");
    assert!(members.iter().any(|m| m["id"] == "m-joiner"));
    assert!(members.iter().all(|m| m["rack"].is_string()));
    let owners = members.iter().filter(|m| m["generation"] == 1).count();
    assert_eq!(owners, 100, "every other member owns its stable part");
    let join = join.to_str().expect("UTF-8 path");
    let out = rebalance(&["assign", join], "");
    assert!(out.status.success());
    let out = rebalance(&["bench", "assignor", "--spec", join, "--runs", "1"], "");
    assert!(out.status.success());
    std::fs::remove_dir_all(&dir).expect("clean up");
}
