use std::cell::Cell;

/// Components on which the placement succeeded.
pub(crate) const PLACED: usize = 0;
/// Components on which it was tried and failed.
pub(crate) const FAILED: usize = 1;
/// [`super::Fault::AnyRack`].
pub(crate) const ANY_RACK: usize = 0;
/// [`super::Fault::NoPlusTerm`].
pub(crate) const NO_PLUS_TERM: usize = 1;

thread_local! {
    static FAULT: Cell<usize> = const { Cell::new(0) };
}

/// Which fault [`plant`] turns on.
pub(crate) fn set_fault(fault: usize) {
    FAULT.with(|f| f.set(fault));
}

pub(super) fn fault() -> usize {
    FAULT.with(Cell::get)
}

crate::assignor::tests::counts_and_fault!(2);
