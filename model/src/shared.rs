//! [`Shared`]: a part of the model's state (an actor, the log, a network channel) shared between
//! a state and its successors, copied only when a step changes it, with its hash computed once
//! and, optionally, a memo of facts derived from it.
//!
//! # Why
//!
//! The checker hashes every generated state to look it up in its visited set, and most of a
//! successor is its predecessor unchanged: a step feeds one actor. Hashing a [`Shared`] writes
//! one cached `u64`, the hash of its value, so a state's hash re-reads only what the step changed.
//!
//! # Soundness
//!
//! - The cached hash is a pure function of the value ([`FoldHasher`] has no random keys, so it
//!   is the same in every thread and run), so equal values give equal cached hashes and `Hash`
//!   stays consistent with `Eq` ([`Shared`]'s `Eq` compares the values).
//! - The cache is never stale: the only ways to change the value ([`Shared::make_mut`],
//!   [`Shared::get_mut`]) clear it before handing out `&mut`, and while that borrow lives nothing
//!   can read the cache; it is filled again on the next hash. The memo is reset the same way.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

/// A value shared copy-on-write between states, with its hash cached and a memo `M` of facts
/// derived from it (see the module docs).
///
/// `M` must hold only what is a function of the value (and of inputs it records with each
/// fact, see [`crate::memo`]): it is reset whenever the value changes, and never compared or
/// hashed.
pub struct Shared<T, M = ()> {
    inner: Arc<Cached<T, M>>,
}

struct Cached<T, M> {
    value: T,
    hash: OnceLock<u64>,
    memo: M,
}

impl<T: Clone, M: Default> Clone for Cached<T, M> {
    fn clone(&self) -> Self {
        // Only `make_mut` clones a `Cached`, and it changes the value right after.
        Cached {
            value: self.value.clone(),
            hash: OnceLock::new(),
            memo: M::default(),
        }
    }
}

impl<T, M: Default> Shared<T, M> {
    /// Wraps a value (its hash is computed when first needed).
    #[must_use]
    pub fn new(value: T) -> Shared<T, M> {
        Shared {
            inner: Arc::new(Cached {
                value,
                hash: OnceLock::new(),
                memo: M::default(),
            }),
        }
    }

    /// The value, mutably, if no other state shares it (no copy); `None` otherwise. Clears the
    /// cached hash and the memo.
    pub fn get_mut(&mut self) -> Option<&mut T> {
        let cached = Arc::get_mut(&mut self.inner)?;
        cached.hash = OnceLock::new();
        cached.memo = M::default();
        Some(&mut cached.value)
    }
}

impl<T, M> Shared<T, M> {
    /// Whether two handles share one value (so they are equal without a comparison).
    #[must_use]
    pub fn ptr_eq(a: &Shared<T, M>, b: &Shared<T, M>) -> bool {
        Arc::ptr_eq(&a.inner, &b.inner)
    }

    /// The memo of facts derived from the current value.
    #[must_use]
    pub fn memo(&self) -> &M {
        &self.inner.memo
    }
}

impl<T: Clone, M: Default> Shared<T, M> {
    /// The value, mutably: copied first if another state shares it. Clears the cached hash and
    /// the memo.
    pub fn make_mut(&mut self) -> &mut T {
        let cached = Arc::make_mut(&mut self.inner);
        cached.hash = OnceLock::new();
        cached.memo = M::default();
        &mut cached.value
    }
}

impl<T: Hash, M> Shared<T, M> {
    /// The value's hash (computed on the first call after a change, then cached).
    #[must_use]
    pub fn value_hash(&self) -> u64 {
        *self.inner.hash.get_or_init(|| {
            let mut hasher = FoldHasher::default();
            self.inner.value.hash(&mut hasher);
            hasher.finish()
        })
    }
}

impl<T, M> Clone for Shared<T, M> {
    fn clone(&self) -> Self {
        Shared {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<T, M> Deref for Shared<T, M> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.inner.value
    }
}

impl<T: Hash, M> Hash for Shared<T, M> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.value_hash());
    }
}

impl<T: PartialEq + Hash, M> PartialEq for Shared<T, M> {
    fn eq(&self, other: &Self) -> bool {
        // Shared means equal; different cached hashes mean different values (the hash is a
        // function of the value); only then compare the values.
        Shared::ptr_eq(self, other)
            || (self.value_hash() == other.value_hash() && self.inner.value == other.inner.value)
    }
}

impl<T: Eq + Hash, M> Eq for Shared<T, M> {}

impl<T: fmt::Debug, M> fmt::Debug for Shared<T, M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.value.fmt(f)
    }
}

/// The hasher of cached hashes: a folded 64×64→128-bit multiply per word (the construction of
/// ahash's fallback and foldhash), with fixed constants.
///
/// Why not `DefaultHasher`: SipHash costs several times more per word, and the core's types
/// hash as many small writes. Why it is good enough: the checker keeps visited states as 64-bit
/// hashes of which these are inputs, so a weak hash could merge distinct states; each word goes
/// through a full multiply whose high and low halves are folded together, which spreads every
/// input bit over the whole state (`model/src/shared.rs` tests check that near-identical inputs
/// differ).
#[derive(Clone, Copy, Debug)]
pub struct FoldHasher {
    state: u64,
}

const SEED: u64 = 0x243f_6a88_85a3_08d3;
const MULTIPLE: u64 = 0x5851_f42d_4c95_7f2d;
const FINISH: u64 = 0x9e37_79b9_7f4a_7c15;

fn folded_multiply(a: u64, b: u64) -> u64 {
    let full = u128::from(a) * u128::from(b);
    // Truncations on purpose: the two halves of the product are folded together.
    #[allow(clippy::cast_possible_truncation)]
    let (low, high) = (full as u64, (full >> 64) as u64);
    low ^ high
}

impl Default for FoldHasher {
    fn default() -> Self {
        FoldHasher { state: SEED }
    }
}

impl Hasher for FoldHasher {
    fn write(&mut self, bytes: &[u8]) {
        // The length first, so that byte strings of different lengths never line up.
        self.write_u64(bytes.len() as u64);
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
        let tail = chunks.remainder();
        if !tail.is_empty() {
            let mut word = [0u8; 8];
            word[..tail.len()].copy_from_slice(tail);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, i: u8) {
        self.write_u64(u64::from(i));
    }

    fn write_u16(&mut self, i: u16) {
        self.write_u64(u64::from(i));
    }

    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }

    fn write_u64(&mut self, i: u64) {
        self.state = folded_multiply(self.state ^ i, MULTIPLE);
    }

    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }

    fn finish(&self) -> u64 {
        folded_multiply(self.state ^ FINISH, MULTIPLE).rotate_left((self.state & 63) as u32)
    }
}

/// A hasher for keys that already are hashes (the memo tables' `u64` keys): passes them
/// through instead of hashing them again.
#[derive(Clone, Copy, Debug, Default)]
pub struct Prehashed(u64);

impl Hasher for Prehashed {
    fn write(&mut self, bytes: &[u8]) {
        // Only `u64` keys are meant; anything else is still hashed, not dropped.
        let mut h = FoldHasher { state: self.0 };
        h.write(bytes);
        self.0 = h.finish();
    }

    fn write_u64(&mut self, i: u64) {
        self.0 = i;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A map keyed by hashes already computed.
pub type PrehashedMap<V> =
    std::collections::HashMap<u64, V, std::hash::BuildHasherDefault<Prehashed>>;

#[cfg(test)]
mod tests {
    use super::*;

    type Shared<T> = super::Shared<T, ()>;

    fn hash_of<T: Hash>(value: &T) -> u64 {
        let mut h = std::hash::DefaultHasher::new();
        value.hash(&mut h);
        h.finish()
    }

    #[test]
    fn equal_values_hash_equally_however_they_were_reached() {
        let a = Shared::new(vec![1, 2, 3]);
        let mut b = a.clone();
        b.make_mut().push(4);
        b.make_mut().pop();
        let c = Shared::new(vec![1, 2, 3]);
        assert!(!Shared::ptr_eq(&a, &b));
        assert_eq!(a, b);
        assert_eq!(a, c);
        assert_eq!(hash_of(&a), hash_of(&b));
        assert_eq!(hash_of(&a), hash_of(&c));
    }

    #[test]
    fn a_change_clears_the_cached_hash() {
        // A stale cache would make a changed value hash (and compare) as the old one.
        let mut a = Shared::new(vec![1, 2, 3]);
        let before = hash_of(&a);
        a.make_mut().push(4);
        assert_ne!(hash_of(&a), before);
        assert_eq!(hash_of(&a), hash_of(&Shared::new(vec![1, 2, 3, 4])));
        let after_push = hash_of(&a);
        a.get_mut().expect("not shared").pop();
        assert_ne!(hash_of(&a), after_push);
        assert_eq!(hash_of(&a), before);
        assert_ne!(a, Shared::new(vec![1, 2, 3, 4]));
    }

    #[test]
    fn near_identical_inputs_hash_apart() {
        // Every single-bit change of a word, and every one-byte change or extension of a string,
        // gives a distinct hash (a weak mix would merge some, and the checker with them states).
        let mut seen = std::collections::BTreeSet::new();
        let base = [0x0123_4567_89ab_cdefu64, 7, 0];
        for word in 0..base.len() {
            for bit in 0..64 {
                let mut v = base;
                v[word] ^= 1 << bit;
                assert!(seen.insert(hash_fold(&v)), "word {word} bit {bit}");
            }
        }
        assert!(seen.insert(hash_fold(&base)));
        let mut strings = std::collections::BTreeSet::new();
        for len in 1..20 {
            for byte in 0..=255u8 {
                let s: Vec<u8> = (0..len)
                    .map(|i| if i + 1 == len { byte } else { b'm' })
                    .collect();
                assert!(strings.insert(hash_fold(&s)), "len {len} byte {byte}");
            }
        }
        // Splitting bytes differently between fields changes the hash.
        assert_ne!(hash_fold(&("ab", "c")), hash_fold(&("a", "bc")));
    }

    fn hash_fold<T: Hash + ?Sized>(value: &T) -> u64 {
        let mut h = FoldHasher::default();
        value.hash(&mut h);
        h.finish()
    }

    #[test]
    fn copy_on_write_leaves_the_other_state_alone() {
        let a = Shared::new(vec![1]);
        let mut b = a.clone();
        assert!(
            b.get_mut().is_none(),
            "shared: no mutable access without a copy"
        );
        b.make_mut().push(2);
        assert_eq!(*a, vec![1]);
        assert_eq!(*b, vec![1, 2]);
        assert!(b.get_mut().is_some());
    }
}
