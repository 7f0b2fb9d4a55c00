//! The codec laws of `rebalance_proofs::codec` on generated values and byte strings, for all
//! three messages, and the teeth tests: each law pointed at a deliberately broken codec must
//! report the violation.

use arbitrary::{Arbitrary, Unstructured};
use proptest::prelude::*;
use rebalance::{
    ConsumerProtocolAssignment, ConsumerProtocolSubscription, CooperativeAssignment, DecodeError,
    EmbeddedMessage,
};
use rebalance_proofs::codec::{self, Checked, Codec, HeapSize, LawViolation};

type Sub = ConsumerProtocolSubscription;

/// The `arbitrary` → proptest adapter: a byte vector mapped through `arbitrary_take_rest`.
fn arb<M: for<'a> Arbitrary<'a> + std::fmt::Debug>() -> impl Strategy<Value = M> {
    proptest::collection::vec(any::<u8>(), 0..192).prop_filter_map("arbitrary", |b| {
        M::arbitrary_take_rest(Unstructured::new(&b)).ok()
    })
}

/// A value at a known version: most arbitrary versions are future ones.
fn known<M: EmbeddedMessage>(mut x: M) -> M {
    x.set_version(x.version().rem_euclid(M::HIGHEST_KNOWN_VERSION + 1));
    x
}

/// Byte mutations of an encoding: flip, insert, delete, truncate.
fn mutate(mut bytes: Vec<u8>, op: u8, at: usize, value: u8) -> Vec<u8> {
    let at = if bytes.is_empty() {
        0
    } else {
        at % bytes.len()
    };
    match op % 4 {
        0 if !bytes.is_empty() => bytes[at] ^= value | 1,
        1 => bytes.insert(at, value),
        2 if !bytes.is_empty() => {
            bytes.remove(at);
        }
        _ => bytes.truncate(at),
    }
    bytes
}

/// Drops what the value's version cannot carry, so every known version gets encodable values.
fn fit_subscription(mut x: Sub) -> Sub {
    if x.version < 1 {
        x.owned_partitions.clear();
    }
    if x.version < 2 {
        x.generation_id = -1;
    }
    if x.version < 3 {
        x.rack_id = None;
    }
    x
}

fn fit_cooperative(mut x: CooperativeAssignment) -> CooperativeAssignment {
    if x.version < 1 {
        x.scheduled_rebalance_timeout_ms = 0;
    }
    x
}

fn all_laws<M>(
    x: M,
    fit: fn(M) -> M,
    (op, at, value): (u8, usize, u8),
    suffix: &[u8],
) -> Result<(), LawViolation>
where
    M: EmbeddedMessage + HeapSize,
{
    let real = Codec::<M>::real();
    codec::round_trip(&real, &x)?;
    let x = known(x);
    codec::round_trip(&real, &x)?;
    let x = fit(x);
    assert_eq!(codec::round_trip(&real, &x)?, Checked::Held, "fitted {x:?}");
    codec::version_compatibility(&real, &x, value % 4, suffix)?;
    if let Ok(bytes) = x.encode() {
        assert_eq!(codec::canonical(&real, &bytes)?, Checked::Held);
        codec::canonical(&real, &mutate(bytes, op, at, value))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn subscription_laws(x in arb::<Sub>(), op: u8, at: usize, value: u8,
                         suffix in proptest::collection::vec(any::<u8>(), 0..4)) {
        all_laws(x, fit_subscription, (op, at, value), &suffix).map_err(|v| TestCaseError::fail(v.to_string()))?;
    }

    #[test]
    fn assignment_laws(x in arb::<ConsumerProtocolAssignment>(), op: u8, at: usize, value: u8,
                       suffix in proptest::collection::vec(any::<u8>(), 0..4)) {
        all_laws(x, |x| x, (op, at, value), &suffix).map_err(|v| TestCaseError::fail(v.to_string()))?;
    }

    #[test]
    fn cooperative_laws(x in arb::<CooperativeAssignment>(), op: u8, at: usize, value: u8,
                        suffix in proptest::collection::vec(any::<u8>(), 0..4)) {
        all_laws(x, fit_cooperative, (op, at, value), &suffix).map_err(|v| TestCaseError::fail(v.to_string()))?;
    }

    #[test]
    fn random_bytes_decode_cleanly(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        for r in [
            codec::canonical(&Codec::<Sub>::real(), &bytes).map(drop),
            codec::canonical(&Codec::<ConsumerProtocolAssignment>::real(), &bytes).map(drop),
            codec::canonical(&Codec::<CooperativeAssignment>::real(), &bytes).map(drop),
        ] {
            r.map_err(|v| TestCaseError::fail(v.to_string()))?;
        }
    }
}

fn hex(text: &str) -> Vec<u8> {
    rebalance::codec::hex::from_hex(text, true).expect("test hex")
}

fn sample() -> Sub {
    Sub {
        version: 3,
        topics: vec!["a".into()],
        user_data: Some(vec![]),
        ..Default::default()
    }
}

// ---- teeth: each law catches a broken codec ----

fn encode_dropping_user_data(x: &Sub) -> Result<Vec<u8>, rebalance::EncodeError> {
    let mut y = x.clone();
    y.user_data = None;
    y.encode()
}

#[test]
fn round_trip_law_catches_an_encoder_that_drops_a_field() {
    let broken = Codec {
        encode: encode_dropping_user_data,
        ..Codec::<Sub>::real()
    };
    assert!(matches!(
        codec::round_trip(&broken, &sample()),
        Err(LawViolation::RoundTrip { .. })
    ));
    assert_eq!(
        codec::round_trip(&Codec::real(), &sample()),
        Ok(Checked::Held)
    );
}

fn lossy_decode_prefix(bytes: &[u8]) -> Result<(Sub, usize), DecodeError> {
    let (mut x, used) = Sub::decode_prefix(bytes)?;
    if x.user_data.as_deref() == Some(&[]) {
        x.user_data = None;
    }
    Ok((x, used))
}

fn lossy_decode(bytes: &[u8]) -> Result<Sub, DecodeError> {
    lossy_decode_prefix(bytes).map(|(x, _)| x)
}

#[test]
fn canonical_law_catches_a_decoder_that_merges_empty_into_null() {
    let broken = Codec {
        encode: Sub::encode,
        decode_prefix: lossy_decode_prefix,
        decode: lossy_decode,
    };
    let bytes = hex("0000 00000000 00000000");
    assert!(matches!(
        codec::canonical(&broken, &bytes),
        Err(LawViolation::Canonical { .. })
    ));
    assert_eq!(
        codec::canonical(&Codec::<Sub>::real(), &bytes),
        Ok(Checked::Held)
    );
}

fn decode_ignoring_trailing(bytes: &[u8]) -> Result<Sub, DecodeError> {
    Sub::decode_prefix(bytes).map(|(x, _)| x)
}

#[test]
fn canonical_law_catches_a_decoder_that_accepts_trailing_bytes_on_known_versions() {
    let broken = Codec {
        decode: decode_ignoring_trailing,
        ..Codec::<Sub>::real()
    };
    let bytes = hex("0000 00000000 ffffffff 00");
    assert!(matches!(
        codec::canonical(&broken, &bytes),
        Err(LawViolation::Canonical { .. })
    ));
    assert!(matches!(
        codec::canonical(&Codec::<Sub>::real(), &bytes),
        Ok(Checked::Refused(DecodeError::TrailingBytes {
            offset: 10,
            ..
        }))
    ));
}

fn decode_refusing_future_versions(bytes: &[u8]) -> Result<Sub, DecodeError> {
    let x = Sub::decode(bytes)?;
    if x.version > Sub::HIGHEST_KNOWN_VERSION {
        // What kafka-protocol does.
        return Err(DecodeError::NegativeVersion {
            field: "version".into(),
            offset: 0,
            found: x.version,
        });
    }
    Ok(x)
}

#[test]
fn version_law_catches_a_decoder_that_refuses_future_versions() {
    let broken = Codec {
        decode: decode_refusing_future_versions,
        ..Codec::<Sub>::real()
    };
    let x = Sub {
        version: 1,
        ..sample()
    };
    assert!(matches!(
        codec::version_compatibility(&broken, &x, 0, &[1, 2]),
        Err(LawViolation::VersionCompatibility { .. })
    ));
    assert_eq!(
        codec::version_compatibility(&Codec::real(), &x, 0, &[1, 2]),
        Ok(Checked::Held)
    );
}

fn encode_v1_generation_first(x: &Sub) -> Result<Vec<u8>, rebalance::EncodeError> {
    // A layout that is not append-only: at v2 the generation goes before owned_partitions.
    let mut bytes = x.encode()?;
    if x.version == 2 {
        let tail = bytes.split_off(bytes.len() - 4);
        let body_start = bytes.len() - 4; // empty owned_partitions count
        bytes.splice(body_start..body_start, tail);
    }
    Ok(bytes)
}

#[test]
fn version_law_catches_a_layout_that_is_not_append_only() {
    let broken = Codec {
        encode: encode_v1_generation_first,
        ..Codec::<Sub>::real()
    };
    let x = Sub {
        version: 1,
        ..sample()
    };
    assert!(matches!(
        codec::version_compatibility(&broken, &x, 0, &[]),
        Err(LawViolation::VersionCompatibility { .. })
    ));
}

#[test]
fn allocation_law_catches_a_value_holding_more_than_its_input() {
    let bytes = hex("0000 00000001 0001 61 ffffffff");
    let mut x = Sub::decode(&bytes).expect("valid");
    assert_eq!(codec::bounded_allocation(bytes.len(), &x), Ok(()));
    x.topics.reserve_exact(1000);
    assert!(matches!(
        codec::bounded_allocation(bytes.len(), &x),
        Err(LawViolation::BoundedAllocation { .. })
    ));
}

/// The tightest case the allocation factor was chosen for: many empty topic names.
#[test]
fn allocation_factor_holds_for_arrays_of_empty_names() {
    let n = 10_000;
    let mut bytes = vec![0, 0];
    bytes.extend_from_slice(&(n as i32).to_be_bytes());
    bytes.extend(std::iter::repeat_n([0u8, 0], n).flatten());
    bytes.extend_from_slice(&[0xff; 4]);
    let x = Sub::decode(&bytes).expect("valid");
    assert_eq!(x.topics.len(), n);
    assert_eq!(codec::bounded_allocation(bytes.len(), &x), Ok(()));
}
