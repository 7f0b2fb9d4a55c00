//! `Arbitrary` embedded-protocol messages: encode then decode is the identity.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rebalance_proofs::fuzz::codec::codec_roundtrip(data));
