//! Differential tests: our encoder against the kafka-protocol crate, byte for byte, for every
//! version of the consumer protocol's Subscription and Assignment.
//!
//! kafka-protocol is used on the encode side only (its decoder aborts the process on some
//! hostile inputs); it is fed to decode only bytes our decoder already accepted. It writes no
//! version prefix, so the test writes it; it refuses versions above 3.

use bytes::Bytes;
use kafka_protocol::messages as kp;
use proptest::prelude::*;
use rebalance::{ConsumerProtocolAssignment, ConsumerProtocolSubscription, TopicPartitions};
use rebalance_proofs::kafka::{
    self, assignment as theirs_assignment, subscription as theirs_subscription,
};

fn kafka_encode<T: kafka_protocol::protocol::Encodable>(m: &T, version: i16) -> Vec<u8> {
    kafka::encode(m, version)
        .expect("kafka-protocol encodes v0-3")
        .to_vec()
}

fn kafka_decode<T: kafka_protocol::protocol::Decodable>(bytes: &[u8]) -> T {
    kafka::decode(&Bytes::copy_from_slice(bytes)).expect("kafka-protocol decodes what we accepted")
}

/// Names that exercise UTF-8 and lengths, including empty.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9._-]{0,12}",
        "\\PC{0,6}",
        Just(String::new()),
        (0usize..40).prop_map(|n| "é".repeat(n)),
    ]
}

fn user_data() -> impl Strategy<Value = Option<Vec<u8>>> {
    proptest::option::of(proptest::collection::vec(any::<u8>(), 0..24))
}

fn topic_partitions() -> impl Strategy<Value = Vec<TopicPartitions>> {
    proptest::collection::vec(
        (name(), proptest::collection::vec(any::<i32>(), 0..8))
            .prop_map(|(topic, partitions)| TopicPartitions { topic, partitions }),
        0..6,
    )
}

/// A subscription that its version can carry.
fn subscription() -> impl Strategy<Value = ConsumerProtocolSubscription> {
    (
        0i16..=3,
        proptest::collection::vec(name(), 0..8),
        user_data(),
        topic_partitions(),
        any::<i32>(),
        proptest::option::of(name()),
    )
        .prop_map(|(version, topics, user_data, owned, generation, rack)| {
            ConsumerProtocolSubscription {
                version,
                topics,
                user_data,
                owned_partitions: if version >= 1 { owned } else { Vec::new() },
                generation_id: if version >= 2 { generation } else { -1 },
                rack_id: if version >= 3 { rack } else { None },
            }
        })
}

fn assignment() -> impl Strategy<Value = ConsumerProtocolAssignment> {
    (0i16..=3, topic_partitions(), user_data()).prop_map(
        |(version, assigned_partitions, user_data)| ConsumerProtocolAssignment {
            version,
            assigned_partitions,
            user_data,
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn subscription_bytes_match_kafka_protocol(x in subscription()) {
        let ours = x.encode().expect("representable in its version");
        prop_assert_eq!(&ours, &kafka_encode(&theirs_subscription(&x), x.version));
        prop_assert_eq!(ConsumerProtocolSubscription::decode(&ours), Ok(x.clone()));
        let back: kp::ConsumerProtocolSubscription = kafka_decode(&ours);
        prop_assert_eq!(back, theirs_subscription(&x));
    }

    #[test]
    fn assignment_bytes_match_kafka_protocol(x in assignment()) {
        let ours = x.encode().expect("representable in its version");
        prop_assert_eq!(&ours, &kafka_encode(&theirs_assignment(&x), x.version));
        prop_assert_eq!(ConsumerProtocolAssignment::decode(&ours), Ok(x.clone()));
        let back: kp::ConsumerProtocolAssignment = kafka_decode(&ours);
        prop_assert_eq!(back, theirs_assignment(&x));
    }
}

#[test]
fn known_v1_vector_matches_kafka_protocol() {
    let x = ConsumerProtocolSubscription {
        version: 1,
        topics: vec!["t1".into(), "t2".into()],
        user_data: Some(b"ud".to_vec()),
        owned_partitions: vec![TopicPartitions {
            topic: "t1".into(),
            partitions: vec![0, 2],
        }],
        ..Default::default()
    };
    let vector = rebalance::codec::hex::from_hex(
        "0001 00000002 0002 7431 0002 7432 00000002 7564 00000001 0002 7431 00000002 00000000 00000002",
        true,
    )
    .expect("hex");
    assert_eq!(x.encode(), Ok(vector.clone()));
    assert_eq!(kafka_encode(&theirs_subscription(&x), 1), vector);
}

/// The differential test has teeth: a value ours refuses at v0 (owned partitions) is silently
/// dropped by kafka-protocol, so the bytes would differ if we encoded it the same way.
#[test]
fn kafka_protocol_drops_what_we_refuse() {
    let x = ConsumerProtocolSubscription {
        version: 0,
        owned_partitions: vec![TopicPartitions {
            topic: "t".into(),
            partitions: vec![1],
        }],
        ..Default::default()
    };
    assert!(x.encode().is_err());
    let theirs = kafka_encode(&theirs_subscription(&x), 0);
    let mut dropped = x.clone();
    dropped.owned_partitions.clear();
    assert_eq!(dropped.encode(), Ok(theirs));
}
