//! Replays the committed corpus and regressions of the `assignor` fuzz target.

#[test]
fn assignor_corpus_replays_clean() {
    let ran =
        rebalance_proofs::fuzz::replay_dir("assignor", rebalance_proofs::fuzz::assignor::assignor);
    assert!(ran > 0, "the assignor seed corpus is missing");
}
