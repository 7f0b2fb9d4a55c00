//! Unit tests of the codec on hand-written bytes. The property suites (differential against
//! the kafka-protocol crate, the codec laws) live in the `rebalance-proofs` package.

use super::*;

fn hex(text: &str) -> Vec<u8> {
    hex::from_hex(text, true).expect("test hex")
}

fn tp(topic: &str, partitions: &[i32]) -> TopicPartitions {
    TopicPartitions {
        topic: topic.to_owned(),
        partitions: partitions.to_vec(),
    }
}

/// The v1 vector checked against two independent implementations.
const V1_VECTOR: &str =
    "0001 00000002 0002 7431 0002 7432 00000002 7564 00000001 0002 7431 00000002 00000000 00000002";

fn v1_subscription() -> ConsumerProtocolSubscription {
    ConsumerProtocolSubscription {
        version: 1,
        topics: vec!["t1".into(), "t2".into()],
        user_data: Some(b"ud".to_vec()),
        owned_partitions: vec![tp("t1", &[0, 2])],
        ..Default::default()
    }
}

#[test]
fn known_v1_subscription_vector_encodes_and_decodes() {
    let bytes = hex(V1_VECTOR);
    assert_eq!(v1_subscription().encode(), Ok(bytes.clone()));
    assert_eq!(
        ConsumerProtocolSubscription::decode(&bytes),
        Ok(v1_subscription())
    );
}

/// The kafka-protocol crate reserves ~48 GB for this input and aborts; ours refuses it before
/// allocating anything.
#[test]
fn six_byte_subscription_that_aborts_kafka_protocol_is_a_clean_error() {
    let bytes = hex("00 00 59 10 29 4a");
    let err = ConsumerProtocolSubscription::decode(&bytes).expect_err("must not decode");
    assert_eq!(
        err,
        DecodeError::LengthExceedsInput {
            field: "topics".into(),
            offset: 2,
            count: 0x5910_294a,
            expected_bytes: 2 * 0x5910_294a,
            found_bytes: 0,
        }
    );
    assert!(
        err.to_string()
            .starts_with("topics at byte offset 2: count 1494231370")
    );
}

#[test]
fn every_version_of_every_message_has_its_layout() {
    let full = ConsumerProtocolSubscription {
        version: 3,
        topics: vec!["a".into()],
        user_data: Some(vec![0xab]),
        owned_partitions: vec![tp("a", &[7])],
        generation_id: 5,
        rack_id: Some("r".into()),
    };
    let expected = [
        "0000 00000001 0001 61 00000001 ab",
        "0001 00000001 0001 61 00000001 ab 00000001 0001 61 00000001 00000007",
        "0002 00000001 0001 61 00000001 ab 00000001 0001 61 00000001 00000007 00000005",
        "0003 00000001 0001 61 00000001 ab 00000001 0001 61 00000001 00000007 00000005 0001 72",
    ];
    for (v, want) in expected.iter().enumerate() {
        let mut m = full.clone();
        m.version = v as i16;
        if v < 1 {
            m.owned_partitions.clear();
        }
        if v < 2 {
            m.generation_id = -1;
        }
        if v < 3 {
            m.rack_id = None;
        }
        assert_eq!(m.encode(), Ok(hex(want)), "subscription v{v}");
        assert_eq!(ConsumerProtocolSubscription::decode(&hex(want)), Ok(m));
    }
    for v in 0..=3 {
        let m = ConsumerProtocolAssignment {
            version: v,
            assigned_partitions: vec![tp("a", &[1, 2])],
            user_data: None,
        };
        let want = hex(&format!(
            "000{v} 00000001 0001 61 00000002 00000001 00000002 ffffffff"
        ));
        assert_eq!(m.encode(), Ok(want.clone()));
        assert_eq!(ConsumerProtocolAssignment::decode(&want), Ok(m));
    }
    let coop = CooperativeAssignment {
        version: 1,
        assigned_partitions: vec![tp("a", &[1])],
        revoked_partitions: vec![tp("b", &[])],
        scheduled_rebalance_timeout_ms: 3000,
    };
    let want = hex("0001 00000001 0001 61 00000001 00000001 00000001 0001 62 00000000 00000bb8");
    assert_eq!(coop.encode(), Ok(want.clone()));
    assert_eq!(CooperativeAssignment::decode(&want), Ok(coop.clone()));
    let v0 = CooperativeAssignment {
        version: 0,
        scheduled_rebalance_timeout_ms: 0,
        ..coop
    };
    let want = hex("0000 00000001 0001 61 00000001 00000001 00000001 0001 62 00000000");
    assert_eq!(v0.encode(), Ok(want.clone()));
    assert_eq!(CooperativeAssignment::decode(&want), Ok(v0));
}

#[test]
fn fields_a_version_cannot_carry_are_refused_not_dropped() {
    let owned_at_v0 = ConsumerProtocolSubscription {
        version: 0,
        owned_partitions: vec![tp("a", &[])],
        ..Default::default()
    };
    assert_eq!(
        owned_at_v0.encode(),
        Err(EncodeError::FieldNotInVersion {
            field: "owned_partitions",
            version: 0,
            min_version: 1
        })
    );
    let generation_at_v1 = ConsumerProtocolSubscription {
        version: 1,
        generation_id: 4,
        ..Default::default()
    };
    assert!(matches!(
        generation_at_v1.encode(),
        Err(EncodeError::FieldNotInVersion {
            field: "generation_id",
            ..
        })
    ));
    let rack_at_v2 = ConsumerProtocolSubscription {
        version: 2,
        rack_id: Some(String::new()),
        ..Default::default()
    };
    assert!(matches!(
        rack_at_v2.encode(),
        Err(EncodeError::FieldNotInVersion {
            field: "rack_id",
            ..
        })
    ));
    let delay_at_v0 = CooperativeAssignment {
        version: 0,
        scheduled_rebalance_timeout_ms: 1,
        ..Default::default()
    };
    assert!(matches!(
        delay_at_v0.encode(),
        Err(EncodeError::FieldNotInVersion {
            field: "scheduled_rebalance_timeout_ms",
            ..
        })
    ));
    let negative = ConsumerProtocolAssignment {
        version: -1,
        ..Default::default()
    };
    assert_eq!(
        negative.encode(),
        Err(EncodeError::NegativeVersion { version: -1 })
    );
}

#[test]
fn over_long_strings_are_refused() {
    let m = ConsumerProtocolSubscription {
        version: 0,
        topics: vec!["ok".into(), "x".repeat(32_768)],
        ..Default::default()
    };
    assert_eq!(
        m.encode(),
        Err(EncodeError::StringTooLong {
            field: "topics[1]".into(),
            max: 32_767,
            found: 32_768
        })
    );
    let fits = ConsumerProtocolSubscription {
        version: 0,
        topics: vec!["x".repeat(32_767)],
        ..Default::default()
    };
    let bytes = fits.encode().expect("i16::MAX bytes fit");
    assert_eq!(ConsumerProtocolSubscription::decode(&bytes), Ok(fits));
}

#[test]
fn null_and_empty_are_distinct_and_null_arrays_are_refused() {
    let null_ud = hex("0000 00000000 ffffffff");
    let empty_ud = hex("0000 00000000 00000000");
    let a = ConsumerProtocolSubscription::decode(&null_ud).expect("null user data");
    let b = ConsumerProtocolSubscription::decode(&empty_ud).expect("empty user data");
    assert_eq!(
        (a.user_data.clone(), b.user_data.clone()),
        (None, Some(vec![]))
    );
    assert_eq!(a.encode(), Ok(null_ud));
    assert_eq!(b.encode(), Ok(empty_ud));

    let null_rack = hex("0003 00000000 ffffffff 00000000 ffffffff ffff");
    let empty_rack = hex("0003 00000000 ffffffff 00000000 ffffffff 0000");
    let a = ConsumerProtocolSubscription::decode(&null_rack).expect("null rack");
    let b = ConsumerProtocolSubscription::decode(&empty_rack).expect("empty rack");
    assert_eq!((a.rack_id, b.rack_id), (None, Some(String::new())));

    assert_eq!(
        ConsumerProtocolSubscription::decode(&hex("0000 ffffffff ffffffff")),
        Err(DecodeError::InvalidLength {
            field: "topics".into(),
            offset: 2,
            expected: "a length >= 0 (this field is not nullable)",
            found: -1
        })
    );
    // -2 is not another spelling of null: it would not re-encode to the same bytes.
    assert!(matches!(
        ConsumerProtocolSubscription::decode(&hex("0000 00000000 fffffffe")),
        Err(DecodeError::InvalidLength {
            found: -2,
            offset: 6,
            ..
        })
    ));
    assert!(matches!(
        ConsumerProtocolAssignment::decode(&hex("0000 00000001 ffff 00000000 ffffffff")),
        Err(DecodeError::InvalidLength { ref field, offset: 6, .. }) if field == "assigned_partitions[0].topic"
    ));
}

#[test]
fn errors_name_field_offset_and_what_was_found() {
    let cases: &[(&str, &str)] = &[
        (
            "",
            "version at byte offset 0: expected 2 more bytes, found 0",
        ),
        (
            "ffff",
            "version at byte offset 0: expected a version >= 0, found -1",
        ),
        (
            "0000 00000001 0002 61",
            "topics[0] at byte offset 6: count 2 needs at least 2 bytes, found 1 left",
        ),
        (
            "0000 00000001 0001 ff 00000000",
            "topics[0] at byte offset 6: expected UTF-8, found an invalid byte at offset 8",
        ),
        (
            // The invalid byte is the string's second: its offset counts the valid prefix.
            "0000 00000001 0002 61ff 00000000",
            "topics[0] at byte offset 6: expected UTF-8, found an invalid byte at offset 9",
        ),
        (
            "0001 00000000 ffffffff 00000001 0001 61 00000002 00000001",
            "owned_partitions[0].partitions at byte offset 17: count 2 needs at least 8 bytes, found 4 left",
        ),
        (
            "0002 00000000 ffffffff 00000000 0000",
            "generation_id at byte offset 14: expected 4 more bytes, found 2",
        ),
        (
            "0000 00000000 ffffffff 00",
            "end of message at byte offset 10: expected the end of a version 0 message, found 1 more bytes",
        ),
    ];
    for (input, message) in cases {
        let err = ConsumerProtocolSubscription::decode(&hex(input)).expect_err(input);
        assert_eq!(err.to_string(), *message, "input {input}");
    }
}

#[test]
fn future_versions_read_with_the_highest_layout_and_ignore_the_rest() {
    let bytes = hex("0009 00000000 ffffffff 00000000 ffffffff ffff 0102 03");
    let m = ConsumerProtocolSubscription::decode(&bytes).expect("future version");
    assert_eq!(m.version, 9);
    let re = m.encode().expect("re-encodes");
    assert_eq!(re[..], bytes[..re.len()], "the understood prefix");
    let (_, used) = ConsumerProtocolSubscription::decode_prefix(&bytes).expect("prefix");
    assert_eq!(used, re.len());

    let coop = hex("0002 00000000 00000000 00000064 ffff");
    let c = CooperativeAssignment::decode(&coop).expect("future cooperative");
    assert_eq!((c.version, c.scheduled_rebalance_timeout_ms), (2, 100));
    // A future version still needs every field of the highest known layout.
    assert!(matches!(
        CooperativeAssignment::decode(&hex("0002 00000000 00000000")),
        Err(DecodeError::Truncated { ref field, offset: 10, .. }) if field == "scheduled_rebalance_timeout_ms"
    ));
}

#[test]
fn json_shape_uses_hex_user_data_and_defaults() {
    let json = serde_json::to_value(v1_subscription()).expect("serialises");
    assert_eq!(
        json,
        serde_json::json!({"version": 1, "topics": ["t1", "t2"], "user_data": "7564",
            "owned_partitions": [{"topic": "t1", "partitions": [0, 2]}],
            "generation_id": -1, "rack_id": null})
    );
    let back: ConsumerProtocolSubscription = serde_json::from_value(json).expect("deserialises");
    assert_eq!(back, v1_subscription());
    let minimal: ConsumerProtocolSubscription =
        serde_json::from_str(r#"{"version": 0}"#).expect("defaults");
    assert_eq!(minimal.generation_id, -1);
    assert!(
        serde_json::from_str::<ConsumerProtocolSubscription>(r#"{"version":0,"user_data":"zz"}"#)
            .is_err()
    );
    assert!(
        serde_json::from_str::<ConsumerProtocolSubscription>(r#"{"version":0,"topic":[]}"#)
            .is_err()
    );
    assert!(serde_json::from_str::<ConsumerProtocolSubscription>(r#"{"topics":[]}"#).is_err());
}

// ---- tests added from mutation testing (cargo-mutants survivors) ----

/// One message of each kind at each known version, with every field it can carry set.
fn every_known_version() -> (
    Vec<ConsumerProtocolSubscription>,
    Vec<ConsumerProtocolAssignment>,
    Vec<CooperativeAssignment>,
) {
    let subs = (0..=3)
        .map(|version| ConsumerProtocolSubscription {
            version,
            topics: vec!["a".into(), "bc".into()],
            user_data: Some(vec![1, 2, 3]),
            owned_partitions: if version >= 1 {
                vec![tp("a", &[0, 5]), tp("bc", &[])]
            } else {
                Vec::new()
            },
            generation_id: if version >= 2 { 7 } else { -1 },
            rack_id: (version >= 3).then(|| "rack".to_owned()),
        })
        .collect();
    let assignments = (0..=3)
        .map(|version| ConsumerProtocolAssignment {
            version,
            assigned_partitions: vec![tp("a", &[1, 2, 3])],
            user_data: Some(vec![9]),
        })
        .collect();
    let coops = (0..=1)
        .map(|version| CooperativeAssignment {
            version,
            assigned_partitions: vec![tp("a", &[1])],
            revoked_partitions: vec![tp("b", &[2, 3]), tp("c", &[])],
            scheduled_rebalance_timeout_ms: if version >= 1 { 250 } else { 0 },
        })
        .collect();
    (subs, assignments, coops)
}

/// `version` is the message's version field, passed separately so that a broken
/// `EmbeddedMessage::version` accessor cannot make the test agree with itself.
fn check_exact_len_and_trailing<M: EmbeddedMessage>(m: &M, version: i16) {
    assert_eq!(m.version(), version, "{m:?}");
    let bytes = m.encode().expect("encodable");
    assert_eq!(m.encoded_len(), Ok(bytes.len()), "{m:?}");
    assert_eq!(M::decode_prefix(&bytes), Ok((m.clone(), bytes.len())));
    let mut longer = bytes.clone();
    longer.extend_from_slice(&[0, 0]);
    assert_eq!(
        M::decode(&longer),
        Err(DecodeError::TrailingBytes {
            field: "end of message".into(),
            offset: bytes.len(),
            version,
            found_bytes: 2,
        }),
        "{m:?}"
    );
    // The same bytes labelled one version past the highest known are read, tail ignored.
    let mut future = longer;
    future[..2].copy_from_slice(&(M::HIGHEST_KNOWN_VERSION + 1).to_be_bytes());
    if version == M::HIGHEST_KNOWN_VERSION {
        let mut want = m.clone();
        want.set_version(M::HIGHEST_KNOWN_VERSION + 1);
        assert_eq!(M::decode(&future), Ok(want));
    }
}

#[test]
fn encoded_len_is_exact_and_known_versions_refuse_trailing_bytes() {
    let (subs, assignments, coops) = every_known_version();
    for m in &subs {
        check_exact_len_and_trailing(m, m.version);
    }
    for m in &assignments {
        check_exact_len_and_trailing(m, m.version);
    }
    for m in &coops {
        check_exact_len_and_trailing(m, m.version);
    }
}

#[test]
fn error_paths_nest_and_accessors_report_field_and_offset() {
    let truncated = |field: &str| DecodeError::Truncated {
        field: field.into(),
        offset: 11,
        expected_bytes: 4,
        found_bytes: 1,
    };
    assert_eq!(truncated("").within("topics", 2).field(), "topics[2]");
    assert_eq!(truncated("[1]").within("a", 0).field(), "a[0][1]");
    assert_eq!(truncated("topic").within("a", 3).field(), "a[3].topic");
    let all = [
        truncated("f"),
        DecodeError::NegativeVersion {
            field: "f".into(),
            offset: 11,
            found: -1,
        },
        DecodeError::InvalidLength {
            field: "f".into(),
            offset: 11,
            expected: "x",
            found: -2,
        },
        DecodeError::LengthExceedsInput {
            field: "f".into(),
            offset: 11,
            count: 1,
            expected_bytes: 2,
            found_bytes: 0,
        },
        DecodeError::InvalidUtf8 {
            field: "f".into(),
            offset: 11,
            invalid_at: 12,
        },
        DecodeError::TrailingBytes {
            field: "f".into(),
            offset: 11,
            version: 0,
            found_bytes: 1,
        },
    ];
    for e in all {
        assert_eq!((e.field(), e.offset()), ("f", 11), "{e:?}");
        let nested = e.within("arr", 4);
        assert_eq!((nested.field(), nested.offset()), ("arr[4].f", 11));
    }
}

/// The int32 length check itself, on lengths no test could afford to allocate: the encoder
/// must refuse a byte string or array of 2^31 elements rather than write a wrong count.
#[test]
fn lengths_past_the_int32_limit_are_refused() {
    let max = i32::MAX as usize;
    assert_eq!(wire::check_i32_len(max, || "f".into()), Ok(()));
    assert_eq!(wire::check_i32_len(0, || "f".into()), Ok(()));
    assert_eq!(
        wire::check_i32_len(max + 1, || "user_data".into()),
        Err(EncodeError::TooLong {
            field: "user_data".into(),
            max,
            found: max + 1,
        })
    );
    assert!(wire::check_i32_len(usize::MAX, String::new).is_err());
}

/// A header claiming an int32 byte string of `i32::MAX` bytes with only a few bytes behind it:
/// refused as too long for the input before anything is allocated.
#[test]
fn an_int32_max_length_with_few_bytes_behind_it_is_refused() {
    let bytes = hex("0000 00000000 7fffffff 0102");
    assert_eq!(
        ConsumerProtocolSubscription::decode(&bytes),
        Err(DecodeError::LengthExceedsInput {
            field: "user_data".into(),
            offset: 6,
            count: i32::MAX as usize,
            expected_bytes: i32::MAX as usize,
            found_bytes: 2,
        })
    );
}
