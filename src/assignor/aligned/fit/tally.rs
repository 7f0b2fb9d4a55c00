//! Test-only counts of the repair's successful exchanges on the current thread, so that tests
//! can show that each kind does work (tests run one per thread).

use std::cell::Cell;

/// Index of exchanges within a topic.
pub(crate) const WITHIN: usize = 0;
/// Index of exchanges across topics.
pub(crate) const ACROSS: usize = 1;
/// Index of greedy runs that met their bound after a refused topic was moved first.
pub(crate) const REORDERED: usize = 2;
/// Index of runs of the rack-aware flow of extras that found a flow of full value.
pub(crate) const RACK_FLOW_RUN: usize = 3;
/// Index of components certified with the rack-aware flow's extras against the bound.
pub(crate) const RACK_FLOW: usize = 4;
/// Index of components assigned by the rack-aware flow where it is exact (every topic
/// open).
pub(crate) const RACK_FLOW_EXACT: usize = 5;

thread_local! {
    static COUNTS: Cell<[usize; 6]> = const { Cell::new([0; 6]) };
}

/// Counts one event of kind `k`.
pub(crate) fn add(k: usize) {
    crate::assignor::tests::bump(&COUNTS, k);
}

/// The counts so far on this thread.
pub(crate) fn get() -> [usize; 6] {
    COUNTS.with(Cell::get)
}

thread_local! {
    static QUICK: Cell<usize> = const { Cell::new(0) };
}

/// Counts one component certified with the quick choice of extras (kept apart from
/// the counts above, which tests of small groups expect all to be non-zero).
pub(crate) fn add_quick() {
    QUICK.with(|c| c.set(c.get() + 1));
}

/// Components certified with the quick choice of extras so far on this thread.
pub(crate) fn quick() -> usize {
    QUICK.with(Cell::get)
}

thread_local! {
    static GAVE_UP: Cell<usize> = const { Cell::new(0) };
}

/// Counts one component whose repair refused a topic with its first refusal final.
pub(crate) fn add_gave_up() {
    GAVE_UP.with(|c| c.set(c.get() + 1));
}

/// Components whose repair gave up at its first refusal so far on this thread.
pub(crate) fn gave_up() -> usize {
    GAVE_UP.with(Cell::get)
}
