//! Fuzz target `assignor`: see `rebalance_proofs::fuzz::assignor`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    rebalance_proofs::fuzz::assignor::assignor(data);
});
