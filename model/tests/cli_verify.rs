//! `rebalance verify` on the reference's example: uniform-v1's output fails with named spread
//! violations (exit 1), uniform-v2's passes (exit 0), bad input exits 2 with one line.

use std::path::PathBuf;
use std::process::{Command, Output};

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../proofs/examples/reference-uniform-v2")
        .join(name)
}

fn verify(spec: &PathBuf, assignment: &PathBuf) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rebalance"))
        .arg("verify")
        .arg(spec)
        .arg(assignment)
        .output()
        .expect("the rebalance binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn uniform_v2_output_passes() {
    let out = verify(&example("spec.json"), &example("v2.json"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("ok: every property holds"));
    assert!(out.stderr.is_empty());
}

#[test]
fn uniform_v1_output_fails_with_named_spread_violations() {
    let out = verify(&example("spec.json"), &example("v1.json"));
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 9, "{stdout}");
    for line in [
        "A has 3 partitions of T1, spread allows 1..=1",
        "B has 0 partitions of T1, spread allows 1..=1",
        "B has 3 partitions of T2, spread allows 1..=1",
        "C has 3 partitions of T3, spread allows 1..=1",
    ] {
        assert!(
            stdout.lines().any(|l| l == line),
            "missing {line:?} in\n{stdout}"
        );
    }
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("rebalance: 9 violation(s)"), "{stderr}");
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let dir = std::env::temp_dir().join(format!("rebalance-cli-verify-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let cases = [
        ("malformed.json", "{\"topics\": [", "line 1"),
        (
            "duplicate.json",
            r#"{"topics": [], "members": [{"id": "A", "subscriptions": []}, {"id": "A", "subscriptions": []}]}"#,
            "duplicate member id \"A\"",
        ),
    ];
    for (name, body, expected) in cases {
        let path = dir.join(name);
        std::fs::write(&path, body).expect("write temp spec");
        let out = verify(&path, &example("v2.json"));
        assert_eq!(out.status.code(), Some(2), "{name}");
        let stderr = text(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(expected), "{name}: {stderr}");
    }
    // A group too large for the oracles is refused up front, without allocating for it.
    let path = dir.join("huge.json");
    std::fs::write(
        &path,
        r#"{"topics": [{"name": "T1", "partitions": 16777216}],
            "members": [{"id": "A", "subscriptions": ["T1"]}]}"#,
    )
    .expect("write temp spec");
    let out = verify(&path, &example("v2.json"));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("16777216 partitions to assign"),
        "{}",
        text(&out.stderr)
    );
    // The assignment in place of the spec, and a missing file.
    let out = verify(&example("v1.json"), &example("v2.json"));
    assert_eq!(out.status.code(), Some(2));
    let out = verify(&dir.join("absent.json"), &example("v2.json"));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot read"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `rebalance assign` piped into `rebalance verify SPEC -`, and the committed outputs are what
/// the assignors print.
#[test]
fn assign_then_verify_through_stdin() {
    use std::io::Write;
    use std::process::Stdio;

    for (assignor, committed, code) in [("uniform-v2", "v2.json", 0), ("uniform-v1", "v1.json", 1)]
    {
        let assigned = Command::new(env!("CARGO_BIN_EXE_rebalance"))
            .args(["assign", "--assignor", assignor])
            .arg(example("spec.json"))
            .output()
            .expect("rebalance assign runs");
        assert_eq!(
            assigned.status.code(),
            Some(0),
            "{}",
            text(&assigned.stderr)
        );
        let printed: serde_json::Value =
            serde_json::from_slice(&assigned.stdout).expect("assign prints JSON");
        let file = std::fs::read(example(committed)).expect("committed example");
        let expected: serde_json::Value = serde_json::from_slice(&file).expect("example is JSON");
        assert_eq!(printed, expected, "{assignor} no longer prints {committed}");

        let mut child = Command::new(env!("CARGO_BIN_EXE_rebalance"))
            .arg("verify")
            .arg(example("spec.json"))
            .arg("-")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("rebalance verify runs");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(&assigned.stdout)
            .expect("write stdin");
        let out = child.wait_with_output().expect("verify finishes");
        assert_eq!(
            out.status.code(),
            Some(code),
            "{assignor}: {}",
            text(&out.stdout)
        );
    }
}
