//! Replays the committed corpora and regressions of the codec fuzz targets through the same
//! bodies cargo-fuzz runs.

use rebalance_proofs::fuzz::{codec, replay_dir};

#[test]
fn codec_decode_corpus_replays() {
    let n = replay_dir("codec_decode", codec::codec_decode);
    assert!(n > 0, "no codec_decode corpus found");
}

#[test]
fn codec_roundtrip_corpus_replays() {
    let n = replay_dir("codec_roundtrip", codec::codec_roundtrip);
    assert!(n > 0, "no codec_roundtrip corpus found");
}
