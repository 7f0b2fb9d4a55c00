//! The solver's buffers, kept across solves on each thread so that a solve reuses memory
//! already faulted in instead of fresh pages from the allocator.
//!
//! A [`Buf`] is a `Vec` taken from this thread's pool and given back, emptied, when dropped.
//! Nothing leaks between solves: a buffer is always handed out empty (length 0), so safe code
//! can read only the elements written since ([`Buf::filled`] writes every element it
//! returns); only its capacity, and so the speed, depends on earlier solves.
//!
//! Retention rule: a thread keeps at most [`SHELF_LEN`] buffers per element type and at most
//! [`POOL_BYTES`] bytes of capacity in all; a buffer given back beyond that (so any buffer
//! larger than [`POOL_BYTES`], such as one of a huge group's network) is freed. A shelf that
//! is full makes room by freeing its smallest buffer for a larger one.

use std::cell::RefCell;
use std::ops::{Deref, DerefMut};

use super::certify::{Label, Last, Packed};
use super::{Added, Arc, Cost};

/// The most buffers of one element type a thread keeps (a solve holds about a dozen of `u32`).
pub(super) const SHELF_LEN: usize = 16;

/// The most bytes of capacity a thread keeps in all.
pub(super) const POOL_BYTES: usize = 32 << 20;

/// This thread's spare buffers, by element type.
#[derive(Default)]
pub(super) struct Pool {
    bytes: usize,
    u32s: Vec<Vec<u32>>,
    i64s: Vec<Vec<i64>>,
    bools: Vec<Vec<bool>>,
    costs: Vec<Vec<Cost>>,
    arcs: Vec<Vec<Arc>>,
    added: Vec<Vec<Added>>,
    labels: Vec<Vec<Label<Cost>>>,
    packed_labels: Vec<Vec<Label<Packed>>>,
    last_labels: Vec<Vec<Label<Last>>>,
}

thread_local! {
    static POOL: RefCell<Pool> = RefCell::new(Pool::default());
}

#[cfg(test)]
thread_local! {
    /// Tests only, a planted fault: buffers go back to the pool with their contents.
    pub(crate) static KEEP_CONTENTS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// An element type the pool keeps buffers of.
pub(super) trait Shelved: Sized {
    fn shelf(pool: &mut Pool) -> &mut Vec<Vec<Self>>;
}

macro_rules! shelved {
    ($($t:ty => $field:ident),* $(,)?) => {$(
        impl Shelved for $t {
            fn shelf(pool: &mut Pool) -> &mut Vec<Vec<Self>> {
                &mut pool.$field
            }
        }
    )*};
}

shelved!(
    u32 => u32s,
    i64 => i64s,
    bool => bools,
    Cost => costs,
    Arc => arcs,
    Added => added,
    Label<Cost> => labels,
    Label<Packed> => packed_labels,
    Label<Last> => last_labels,
);

fn bytes_of<T>(v: &Vec<T>) -> usize {
    v.capacity() * size_of::<T>()
}

/// A buffer taken from this thread's pool: the smallest kept one of at least `len` elements'
/// capacity, or else the largest (grown as it fills); always empty.
fn take<T: Shelved>(len: usize) -> Vec<T> {
    POOL.try_with(|pool| {
        let pool = &mut *pool.borrow_mut();
        let shelf = T::shelf(pool);
        let fits = |v: &&Vec<T>| v.capacity() >= len;
        let pick = shelf
            .iter()
            .enumerate()
            .filter(|(_, v)| fits(v))
            .min_by_key(|(_, v)| v.capacity())
            .or_else(|| shelf.iter().enumerate().max_by_key(|(_, v)| v.capacity()))
            .map(|(i, _)| i)?;
        let v = shelf.swap_remove(pick);
        pool.bytes -= bytes_of(&v);
        Some(v)
    })
    .ok()
    .flatten()
    .unwrap_or_default()
}

/// Gives `v` back to this thread's pool, emptied, or frees it (the module's retention rule).
fn give<T: Shelved>(mut v: Vec<T>) {
    #[cfg(test)]
    let keep = KEEP_CONTENTS.with(std::cell::Cell::get);
    #[cfg(not(test))]
    let keep = false;
    if !keep {
        v.clear();
    }
    let bytes = bytes_of(&v);
    if bytes == 0 {
        return;
    }
    // Fails only while the thread is being torn down: the buffer is then freed.
    let _ = POOL.try_with(|pool| {
        let pool = &mut *pool.borrow_mut();
        let mut kept = pool.bytes;
        let shelf = T::shelf(pool);
        if shelf.len() == SHELF_LEN {
            let (i, smallest) = shelf
                .iter()
                .enumerate()
                .min_by_key(|(_, v)| v.capacity())
                .map(|(i, s)| (i, bytes_of(s)))
                .unwrap_or((0, 0));
            if smallest >= bytes {
                return;
            }
            kept -= smallest;
            shelf.swap_remove(i);
        }
        if kept + bytes > POOL_BYTES {
            pool.bytes = kept;
            return;
        }
        shelf.push(v);
        pool.bytes = kept + bytes;
    });
}

/// Frees every buffer this thread's pool keeps and returns the bytes of capacity freed (0 if
/// it kept none, or while the thread is being torn down). Buffers in use stay with their
/// solve and come back to the emptied pool when it ends.
pub(crate) fn release() -> usize {
    POOL.try_with(|pool| std::mem::take(&mut *pool.borrow_mut()).bytes)
        .unwrap_or(0)
}

/// A `Vec` from this thread's pool, given back to it when dropped (see the module docs).
pub(super) struct Buf<T: Shelved>(Vec<T>);

impl<T: Shelved> Buf<T> {
    /// An empty buffer, with room for `len` elements.
    pub(super) fn with_capacity(len: usize) -> Buf<T> {
        let mut v = take(len);
        v.reserve(len);
        Buf(v)
    }

    /// An empty buffer: the largest this thread keeps, for a length not known yet.
    pub(super) fn largest() -> Buf<T> {
        Buf(take(usize::MAX))
    }
}

impl<T: Shelved + Clone> Buf<T> {
    /// `len` copies of `value` (every element written).
    // Always: with the value known at the call, the fill becomes a `memset` where it is all
    // zero bytes.
    #[inline(always)]
    pub(super) fn filled(len: usize, value: T) -> Buf<T> {
        let mut v = take(len);
        v.resize(len, value);
        Buf(v)
    }
}

impl<T: Shelved> Default for Buf<T> {
    fn default() -> Buf<T> {
        Buf(Vec::new())
    }
}

impl<T: Shelved> Deref for Buf<T> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.0
    }
}

impl<T: Shelved> DerefMut for Buf<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.0
    }
}

impl<T: Shelved> Drop for Buf<T> {
    fn drop(&mut self) {
        give(std::mem::take(&mut self.0));
    }
}

impl<'a, T: Shelved> IntoIterator for &'a Buf<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> std::slice::Iter<'a, T> {
        self.0.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::release;
    use crate::assignor::flow::Planted;
    use crate::assignor::flow_reference;
    use crate::assignor::tests::warm::{reference, solve_with};

    /// After a solve the thread keeps buffers; `release` frees them all (a second call finds
    /// none), and the next solve, allocating afresh, finds the reference's flow.
    #[test]
    fn release_frees_the_kept_buffers_and_solves_still_agree() {
        let freed = std::thread::spawn(|| {
            let mut seed = 0x0dd5_eed5_u64;
            let mut below = |n: u64| {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                (seed >> 33) % n
            };
            let (nodes, edges) = flow_reference::tests::random_network(&mut below, 30);
            let want = reference(nodes, &edges);
            assert_eq!(solve_with(nodes, &edges, &[], Planted::None), want);
            let first = release();
            let second = release();
            assert_eq!(solve_with(nodes, &edges, &[], Planted::None), want);
            (first, second)
        })
        .join()
        .expect("the solving thread panicked");
        assert!(freed.0 > 0, "no buffers were kept after a solve");
        assert_eq!(freed.1, 0, "release left {} bytes kept", freed.1);
    }
}
