//! Fuzz targets `codec_decode` (raw bytes into every message) and `codec_roundtrip`
//! (`Arbitrary` values through encode and decode). Both panic on a broken codec law.

use arbitrary::{Arbitrary, Unstructured};
use rebalance::{
    ConsumerProtocolAssignment, ConsumerProtocolSubscription, CooperativeAssignment,
    EmbeddedMessage,
};

use crate::codec::{self, Codec, HeapSize};

fn decode_one<M: EmbeddedMessage + HeapSize>(data: &[u8]) {
    if let Err(violation) = codec::canonical(&Codec::<M>::real(), data) {
        panic!("{violation}");
    }
}

/// Decodes `data` as each of the three messages: no panic, a clean error or bytes that
/// re-encode to exactly the prefix the decoder used, and bounded allocation.
pub fn codec_decode(data: &[u8]) {
    decode_one::<ConsumerProtocolSubscription>(data);
    decode_one::<ConsumerProtocolAssignment>(data);
    decode_one::<CooperativeAssignment>(data);
}

fn roundtrip_one<M>(data: &[u8])
where
    M: EmbeddedMessage + for<'a> Arbitrary<'a>,
{
    let Some((&future_offset, rest)) = data.split_first() else {
        return;
    };
    let suffix_len = usize::from(future_offset % 5);
    let (suffix, rest) = rest.split_at(suffix_len.min(rest.len()));
    let Ok(mut x) = M::arbitrary_take_rest(Unstructured::new(rest)) else {
        return;
    };
    let codec = Codec::<M>::real();
    let check = |r: Result<codec::Checked, codec::LawViolation>| {
        if let Err(violation) = r {
            panic!("{violation}");
        }
    };
    check(codec::round_trip(&codec, &x));
    // Most arbitrary versions are future ones; also check the value at a known version.
    let known = x.version().rem_euclid(M::HIGHEST_KNOWN_VERSION + 1);
    x.set_version(known);
    check(codec::round_trip(&codec, &x));
    check(codec::version_compatibility(
        &codec,
        &x,
        future_offset,
        suffix,
    ));
}

/// Builds a value of the message chosen by the first byte from the rest, and checks the
/// round-trip and version-compatibility laws on it.
pub fn codec_roundtrip(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    match which % 3 {
        0 => roundtrip_one::<ConsumerProtocolSubscription>(rest),
        1 => roundtrip_one::<ConsumerProtocolAssignment>(rest),
        _ => roundtrip_one::<CooperativeAssignment>(rest),
    }
}
