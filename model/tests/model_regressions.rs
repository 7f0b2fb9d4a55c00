//! Replays every saved run in `model/regressions/`: a counterexample must still violate its
//! property at the end, a "holds" replay must still satisfy it. Every action must still be
//! enabled where the run takes it.

use std::path::Path;

use rebalance_model::Regression;

#[test]
fn every_regression_file_replays_as_recorded() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("model/regressions exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "no regression files in {}",
        dir.display()
    );
    for file in files {
        let regression = Regression::load(&file).unwrap();
        let met = regression
            .check()
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        assert!(
            met,
            "{}: property `{}` no longer {:?}",
            file.display(),
            regression.property,
            regression.expect
        );
    }
}

#[test]
fn a_tampered_regression_is_refused() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .unwrap();
    let mut regression = Regression::load(&file).unwrap();
    // Replaying the first action twice in a row: the second is no longer enabled (its message
    // was delivered) or the run ends elsewhere; either way the file no longer checks out as is.
    let first = regression.actions[0].clone();
    regression.actions.insert(0, first);
    let outcome = regression.check();
    assert!(!matches!(outcome, Ok(true)), "tampered file still passes");
}
