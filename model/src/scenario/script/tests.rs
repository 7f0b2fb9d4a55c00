use super::parser::usage;
use super::*;

const HEADER: &str = "\
protocol deferred   # comment after a command
delay 3000
topic T 4
member A subscribe T
member B rack r1 subscribe T,U
member D subscribe T
stable A=T-0,T-3 B=T-1,T-2
";

fn err(text: &str) -> ScriptError {
    match parse("s.scn", text) {
        Ok(script) => panic!("parsed a bad script: {script:?}"),
        Err(e) => e,
    }
}

fn tp(t: &str, p: i32) -> TopicPartition {
    TopicPartition::new(t, p)
}

#[test]
fn parses_setup_and_events() {
    let text = format!(
        "{HEADER}\n# events\njoin D\nrun\nbounce D as D2 after 500\nrun until joined D2\n\
         leave A\ncrash B\nleader-leaves\nfailover\nsubscribe D2 T,U\npartitions U 3\n\
         wait 10\nrun until told A\nrun until persisted generation\nrun until persisted assignment\nrun until synced D2\n\
         run until rebalancing\nexpect A=T-0 D2=\n"
    );
    let script = parse("s.scn", &text).expect("valid script");
    assert_eq!(script.protocol, ProtocolChoice::Deferred);
    assert_eq!(script.delay_ms, 3000);
    assert_eq!(script.assignor, "uniform-v2");
    assert!(script.faults.is_empty());
    assert_eq!(script.topics, BTreeMap::from([("T".to_owned(), 4)]));
    assert_eq!(
        script.members[&MemberId::from("B")].rack.as_deref(),
        Some("r1")
    );
    let stable = script.stable.as_ref().expect("stable line");
    assert_eq!(stable.line, 7);
    let stable = &stable.ownership;
    assert_eq!(
        stable[&MemberId::from("A")],
        BTreeSet::from([tp("T", 0), tp("T", 3)])
    );
    // The bounce replacement inherits the configuration.
    assert_eq!(
        script.members[&MemberId::from("D2")],
        script.members[&MemberId::from("D")]
    );
    let events: Vec<&Event> = script.steps.iter().map(|s| &s.event).collect();
    assert_eq!(events[0], &Event::Join("D".into()));
    assert_eq!(script.steps[0].line, 10);
    assert_eq!(
        events[2],
        &Event::Bounce {
            from: "D".into(),
            to: "D2".into(),
            after_ms: 500
        }
    );
    assert_eq!(events[3], &Event::RunUntil(Until::Joined("D2".into())));
    assert_eq!(
        events[8],
        &Event::Subscribe(
            "D2".into(),
            BTreeSet::from(["T".to_owned(), "U".to_owned()])
        )
    );
    assert_eq!(events[9], &Event::Partitions("U".to_owned(), 3));
    assert_eq!(events[10], &Event::Wait(10));
    assert_eq!(events[12], &Event::RunUntil(Until::GenerationPersisted));
    assert_eq!(events[13], &Event::RunUntil(Until::AssignmentPersisted));
    assert_eq!(events[15], &Event::RunUntil(Until::Rebalancing));
    let Event::Expect(expect) = events[16] else {
        panic!("expect line")
    };
    assert_eq!(expect[&MemberId::from("D2")], BTreeSet::new());
}

#[test]
fn topic_names_with_dashes_split_at_the_last_dash() {
    let text = "assignor range\nfault kafka-9184\ntopic my-topic 2\nmember A subscribe my-topic\n\
                stable A=my-topic-1\n";
    let script = parse("s.scn", text).expect("valid");
    assert_eq!(script.assignor, "range");
    assert_eq!(script.faults, BTreeSet::from([Fault::NoOwnSessionTimer]));
    let stable = script.stable.expect("stable").ownership;
    assert_eq!(
        stable[&MemberId::from("A")],
        BTreeSet::from([tp("my-topic", 1)])
    );
}

#[test]
fn unknown_command_names_file_and_line() {
    let e = err("topic T 1\nmember A subscribe T\n\njion A\n");
    assert_eq!(e.line, 4);
    assert_eq!(e.kind, ScriptErrorKind::UnknownCommand("jion".into()));
    assert_eq!(e.to_string(), "s.scn:4: unknown command \"jion\"");
}

#[test]
fn each_malformed_line_gets_its_own_error() {
    let cases: &[(&str, ScriptErrorKind)] = &[
        (
            "protocol lazy",
            ScriptErrorKind::UnknownProtocol("lazy".into()),
        ),
        (
            "assignor sticky",
            ScriptErrorKind::UnknownAssignor("sticky".into()),
        ),
        (
            "fault KAFKA-1",
            ScriptErrorKind::UnknownFault("KAFKA-1".into()),
        ),
        ("fault", usage("fault", "fault KAFKA-N")),
        (
            "member A subscribe T\nisolate",
            usage("isolate", "isolate ID"),
        ),
        (
            "protocol",
            usage(
                "protocol",
                "protocol eager|cooperative|deferred|incremental",
            ),
        ),
        (
            "delay -5",
            ScriptErrorKind::Number {
                what: "delay",
                text: "-5".into(),
                max: MAX_SCENARIO_MS,
            },
        ),
        (
            "topic T 99999999",
            ScriptErrorKind::Number {
                what: "partition count",
                text: "99999999".into(),
                max: u64::from(MAX_SCENARIO_PARTITIONS),
            },
        ),
        (
            "topic T 1\ntopic T 2",
            ScriptErrorKind::DuplicateTopic("T".into()),
        ),
        (
            "member A subscribe T\nmember A subscribe T",
            ScriptErrorKind::DuplicateMember("A".into()),
        ),
        ("member A subscribe ,", ScriptErrorKind::EmptyTopics),
        (
            "member A/1 subscribe T",
            ScriptErrorKind::Name {
                what: "member id",
                text: "A/1".into(),
            },
        ),
        ("join Z", ScriptErrorKind::UnknownMember("Z".into())),
        (
            "topic T 2\nmember A subscribe T\nstable A=T0",
            ScriptErrorKind::PartitionSyntax("T0".into()),
        ),
        (
            "topic T 2\nmember A subscribe T\nstable A=T-2",
            ScriptErrorKind::PartitionRange {
                partition: tp("T", 2),
                count: 2,
            },
        ),
        (
            "topic T 2\nmember A subscribe T\nstable A=U-0",
            ScriptErrorKind::UnknownTopic(tp("U", 0)),
        ),
        (
            "topic T 2\ntopic U 1\nmember A subscribe T\nstable A=U-0",
            ScriptErrorKind::NotSubscribed {
                member: "A".into(),
                partition: tp("U", 0),
            },
        ),
        (
            "topic T 2\nmember A subscribe T\nmember B subscribe T\nstable A=T-0 B=T-0",
            ScriptErrorKind::DuplicatePartition(tp("T", 0)),
        ),
        (
            "topic T 2\nmember A subscribe T\nstable A=T-0 A=T-1",
            ScriptErrorKind::DuplicateEntry("A".into()),
        ),
        (
            "run\nprotocol eager",
            ScriptErrorKind::SetupAfterEvents("protocol"),
        ),
        ("delay 1\ndelay 2", ScriptErrorKind::Repeated("delay")),
        (
            "member A subscribe T\nbounce A as A",
            ScriptErrorKind::DuplicateMember("A".into()),
        ),
        (
            "member A subscribe T\nbounce A to B",
            usage("bounce", "bounce ID as ID2 [after MS]"),
        ),
        ("failover now", usage("failover", "failover")),
        (
            "member A subscribe T\nrun until done A",
            usage(
                "run",
                "run until rebalancing|told ID|joined ID|persisted generation|persisted assignment|synced ID",
            ),
        ),
        (
            "member A subscribe T\nexpect A",
            usage("ownership", "MEMBER=T-0,T-1 (or MEMBER= for nothing)"),
        ),
    ];
    for (text, kind) in cases {
        let e = err(text);
        assert_eq!(&e.kind, kind, "script {text:?}");
        assert_eq!(
            e.line,
            text.lines().count(),
            "line of the error in {text:?}"
        );
    }
}

#[test]
fn comments_and_blank_lines_are_ignored_but_counted() {
    let text =
        "# header\n\n   # indented comment\ntopic T 1 # trailing\nmember A subscribe T\njoin A\n";
    let script = parse("s.scn", text).expect("valid");
    assert_eq!(script.steps.len(), 1);
    assert_eq!(script.steps[0].line, 6);
}

#[test]
fn a_kafka_bug_switches_on_every_core_fault_it_takes() {
    let text = "fault KAFKA-12890\ntopic t 2\nmember A subscribe t\n";
    let script = parse("s.scn", text).expect("valid");
    assert_eq!(
        script.faults,
        BTreeSet::from([
            Fault::NoSyncTimeout,
            Fault::HeartbeatKeepsSessionWhileAwaitingSync
        ])
    );
}
