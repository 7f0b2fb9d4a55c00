//! `rebalance codec` end to end: the binary, its output and its failures.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn rebalance(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rebalance"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs the binary");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin)
        .expect("writes stdin");
    child.wait_with_output().expect("waits")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("UTF-8 stdout")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("UTF-8 stderr")
}

const V1_HEX: &str =
    "0001 00000002 0002 7431 0002 7432 00000002 7564 00000001 0002 7431 00000002 00000000 00000002";

#[test]
fn decodes_hex_to_json_and_encodes_it_back() {
    let out = rebalance(
        &["codec", "decode", "--message", "subscription", "--hex"],
        format!("{V1_HEX}\n").as_bytes(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(
        json,
        serde_json::json!({"version": 1, "topics": ["t1", "t2"], "user_data": "7564",
            "owned_partitions": [{"topic": "t1", "partitions": [0, 2]}],
            "generation_id": -1, "rack_id": null})
    );
    let back = rebalance(
        &["codec", "encode", "--message", "subscription"],
        stdout(&out).as_bytes(),
    );
    assert!(back.status.success(), "{}", stderr(&back));
    assert_eq!(stdout(&back).trim(), V1_HEX.replace(' ', ""));
}

#[test]
fn decodes_raw_bytes_of_every_message() {
    let raw = [0u8, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0b, 0xb8];
    let out = rebalance(
        &["codec", "decode", "--message", "cooperative-assignment"],
        &raw,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(json["scheduled_rebalance_timeout_ms"], 3000);
    let out = rebalance(
        &["codec", "decode", "--message", "assignment", "--hex"],
        b"0003 00000000 ffffffff",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains(r#""user_data":null"#));
}

fn assert_input_error(out: &Output, needle: &str) {
    assert_eq!(out.status.code(), Some(2), "stderr: {}", stderr(out));
    let err = stderr(out);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains(needle), "{err:?} should mention {needle:?}");
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_input_exits_2_with_one_line() {
    // The 6 bytes that make kafka-protocol abort.
    let out = rebalance(
        &["codec", "decode", "--message", "subscription", "--hex"],
        b"00 00 59 10 29 4a",
    );
    assert_input_error(&out, "topics at byte offset 2");
    let out = rebalance(
        &["codec", "decode", "--message", "subscription", "--hex"],
        b"00 0",
    );
    assert_input_error(&out, "not hex");
    let out = rebalance(&["codec", "decode", "--message", "assignment"], &[0, 0, 0]);
    assert_input_error(&out, "assigned_partitions at byte offset 2");
    let out = rebalance(
        &["codec", "encode", "--message", "subscription"],
        br#"{"version": 0, "owned_partitions": [{"topic": "t", "partitions": [1]}]}"#,
    );
    assert_input_error(&out, "owned_partitions");
    let out = rebalance(
        &["codec", "encode", "--message", "cooperative-assignment"],
        br#"{"version": 1, "revoked": []}"#,
    );
    assert_input_error(&out, "invalid cooperative-assignment JSON");
    let out = rebalance(
        &["codec", "encode", "--message", "assignment"],
        br#"{"version": 0, "user_data": "abc"}"#,
    );
    assert_input_error(&out, "hex digits");
}
