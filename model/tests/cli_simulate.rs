//! `rebalance simulate` as a user runs it: exit statuses, stdout formats and one-line errors.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rebalance"))
}

fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name)
}

/// A script written to a fresh file of the system's temp directory.
fn temp_script(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("rebalance-cli-simulate-{}", std::process::id()));
    fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    fs::write(&path, text).expect("write script");
    path
}

fn simulate(args: &[&str]) -> Output {
    bin()
        .arg("simulate")
        .args(args)
        .output()
        .expect("run rebalance")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const GOOD: &str = "\
topic T 2
member A subscribe T
member B subscribe T
join A
join B
run
";

#[test]
fn prints_rounds_in_the_reference_notation() {
    let path = scenario("coop-member-joins.scn");
    let out = simulate(&[path.to_str().expect("UTF-8 path")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("A(assigned:,revoked:T-3)"),
        "round 1 revokes T-3 from A:\n{text}"
    );
    assert!(text.contains("D(assigned:T-3,revoked:)"), "{text}");
    assert!(
        text.ends_with("final: A(T-0) B(T-1) C(T-2) D(T-3)\n"),
        "{text}"
    );
    assert!(out.stderr.is_empty());
}

#[test]
fn prints_the_delay_with_deferred_resolution() {
    let path = scenario("deferred-member-leaves.scn");
    let out = simulate(&[path.to_str().expect("UTF-8 path")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("B(assigned:,revoked:,3000ms)"), "{text}");
    assert!(text.contains("A(assigned:T-3,revoked:,-)"), "{text}");
}

#[test]
fn json_output_has_the_documented_shape() {
    let path = scenario("coop-member-joins.scn");
    let out = simulate(&[path.to_str().expect("UTF-8 path"), "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let rounds = value["rounds"].as_array().expect("rounds array");
    assert_eq!(rounds.len(), 2);
    assert_eq!(rounds[0]["leader"], "A");
    assert!(rounds[0]["generation"].is_i64());
    assert_eq!(
        rounds[0]["members"]["A"]["revoked"],
        serde_json::json!({"T": [3]})
    );
    assert_eq!(rounds[0]["members"]["A"]["assigned"], serde_json::json!({}));
    assert_eq!(rounds[0]["members"]["A"]["delay_ms"], 0);
    assert_eq!(
        rounds[1]["members"]["D"]["assigned"],
        serde_json::json!({"T": [3]})
    );
    assert_eq!(
        value["final"],
        serde_json::json!({"A": {"T": [0]}, "B": {"T": [1]}, "C": {"T": [2]}, "D": {"T": [3]}})
    );
}

#[test]
fn reads_the_script_from_stdin() {
    let mut child = bin()
        .args(["simulate", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(GOOD.as_bytes())
        .expect("write stdin");
    let out = child.wait_with_output().expect("wait");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("final: A(T-0) B(T-1)\n"), "{text}");
}

#[test]
fn a_malformed_script_names_its_line_and_exits_2() {
    let text = "# a typo on line 7\n\ntopic T 2\nmember A subscribe T\nmember B subscribe T\njoin A\njion B\nrun\n";
    let path = temp_script("typo.scn", text);
    let out = simulate(&[path.to_str().expect("UTF-8 path")]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        format!(
            "rebalance: {}:7: unknown command \"jion\"\n",
            path.display()
        )
    );
    assert!(
        out.stdout.is_empty(),
        "nothing runs when the script is malformed"
    );
}

#[test]
fn malformed_arguments_name_the_line_and_exit_2() {
    for (text, line, message) in [
        ("topic T x\n", 1, "partition count \"x\" is not a number"),
        (
            "topic T 2\nmember A subscribe T\nstable A=T-5\n",
            3,
            "partition T-5 is out of range",
        ),
        (
            "topic T 2\nmember A subscribe T\nleave Z\n",
            3,
            "unknown member \"Z\"",
        ),
        ("protocol lazy\n", 1, "unknown protocol \"lazy\""),
        (
            "run\ntopic T 1\n",
            2,
            "setup command `topic` must come before the first event",
        ),
        ("fault KAFKA-1\n", 1, "unknown fault \"KAFKA-1\""),
    ] {
        let path = temp_script("bad.scn", text);
        let out = simulate(&[path.to_str().expect("UTF-8 path")]);
        assert_eq!(out.status.code(), Some(2), "{text:?}");
        let err = stderr(&out);
        let prefix = format!("rebalance: {}:{line}: ", path.display());
        assert!(err.starts_with(&prefix), "{text:?}: {err}");
        assert!(err.contains(message), "{text:?}: {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
    }
}

#[test]
fn an_event_that_cannot_apply_exits_2() {
    let path = temp_script(
        "inapplicable.scn",
        "topic T 2\nmember A subscribe T\nmember B subscribe T\njoin A\nrun\nleave B\n",
    );
    let out = simulate(&[path.to_str().expect("UTF-8 path")]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        format!(
            "rebalance: {}:6: `leave B` cannot apply: B is not running\n",
            path.display()
        )
    );
}

#[test]
fn a_safety_violation_exits_1_after_printing_what_happened() {
    let path = scenario("fault-kafka-9184-zombie.scn");
    let out = simulate(&[path.to_str().expect("UTF-8 path")]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains(":15: safety violated at"), "{err}");
    assert!(err.contains("is consumed by B and C"), "{err}");
    assert!(
        stdout(&out).contains("@200 isolate B"),
        "the transcript so far is printed"
    );
}

#[test]
fn a_false_expectation_exits_1() {
    let text = format!("{GOOD}expect A=T-0,T-1\n");
    let path = temp_script("expect.scn", &text);
    let out = simulate(&[path.to_str().expect("UTF-8 path")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(":7: expected A(T-0,T-1) B(), found A(T-0) B(T-1)"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_missing_file_exits_2() {
    let out = simulate(&["no/such/script.scn"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).starts_with("rebalance: cannot read no/such/script.scn"));
}
