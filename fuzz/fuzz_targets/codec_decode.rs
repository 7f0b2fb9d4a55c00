//! Raw bytes into every embedded-protocol message: no panic, clean errors, canonical bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rebalance_proofs::fuzz::codec::codec_decode(data));
