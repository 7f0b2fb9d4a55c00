//! Bounded allocation measured, not estimated: a counting global allocator records the peak
//! heap in use while a decode runs (successful or not), which must stay within
//! `ALLOCATION_FACTOR` times the input plus a little for the error's text.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use rebalance::{
    ConsumerProtocolAssignment, ConsumerProtocolSubscription, CooperativeAssignment,
    EmbeddedMessage,
};
use rebalance_proofs::codec::ALLOCATION_FACTOR;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// Tests run on several threads: measurements take turns.
static TURN: Mutex<()> = Mutex::new(());

// SAFETY: forwards to the system allocator and only adds counting.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
        PEAK.fetch_max(live, Ordering::SeqCst);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Room for the error value's field path and its formatting.
const SLACK_BYTES: usize = 256;

/// The peak heap, above what was in use before, while `f` runs (its result dropped inside).
fn peak_during(f: impl FnOnce()) -> usize {
    let _turn = TURN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let base = LIVE.load(Ordering::SeqCst);
    PEAK.store(base, Ordering::SeqCst);
    f();
    PEAK.load(Ordering::SeqCst) - base
}

fn peak_decoding<M: EmbeddedMessage>(bytes: &[u8]) -> usize {
    peak_during(|| drop(std::hint::black_box(M::decode(bytes))))
}

fn assert_bounded(bytes: &[u8]) {
    let limit = ALLOCATION_FACTOR * bytes.len() + SLACK_BYTES;
    for (name, peak) in [
        (
            "subscription",
            peak_decoding::<ConsumerProtocolSubscription>(bytes),
        ),
        (
            "assignment",
            peak_decoding::<ConsumerProtocolAssignment>(bytes),
        ),
        ("cooperative", peak_decoding::<CooperativeAssignment>(bytes)),
    ] {
        assert!(
            peak <= limit,
            "{name}: {} input bytes peaked at {peak} heap bytes, limit {limit}",
            bytes.len()
        );
    }
}

fn be32(n: i32) -> [u8; 4] {
    n.to_be_bytes()
}

#[test]
fn hostile_counts_allocate_nothing_large() {
    // kafka-protocol reserves ~48 GB for this one and aborts.
    assert_bounded(&[0x00, 0x00, 0x59, 0x10, 0x29, 0x4a]);
    for count in [i32::MAX, 1 << 20, 1000, 3] {
        let mut b = vec![0, 1];
        b.extend_from_slice(&be32(count));
        b.extend_from_slice(&[0; 8]);
        assert_bounded(&b);
        // A huge partitions array inside a topic.
        let mut b = vec![0, 0];
        b.extend_from_slice(&be32(1));
        b.extend_from_slice(&[0, 1, b'a']);
        b.extend_from_slice(&be32(count));
        assert_bounded(&b);
        // A huge user_data length.
        let mut b = vec![0, 0, 0, 0, 0, 0];
        b.extend_from_slice(&be32(count));
        assert_bounded(&b);
    }
}

#[test]
fn large_valid_messages_stay_within_the_factor() {
    // Many empty topic names: the tightest ratio of heap to input.
    let n = 20_000;
    let mut b = vec![0, 0];
    b.extend_from_slice(&be32(n));
    b.extend(std::iter::repeat_n([0u8, 0], n as usize).flatten());
    b.extend_from_slice(&be32(-1));
    assert_bounded(&b);
    // Many empty (topic, partitions) pairs, then the input cut short.
    let mut b = vec![0, 1];
    b.extend_from_slice(&be32(0));
    b.extend_from_slice(&be32(-1));
    b.extend_from_slice(&be32(n));
    b.extend(std::iter::repeat_n([0u8, 0, 0, 0, 0, 0], n as usize).flatten());
    assert_bounded(&b);
    b.truncate(b.len() - 3);
    assert_bounded(&b);
}

/// The measurement has teeth: a decoder that trusts the wire count (as kafka-protocol does)
/// is caught on a small input. Capped at 64 MiB so the test itself stays safe.
#[test]
fn a_decoder_trusting_the_count_is_caught() {
    let bytes = [0x00, 0x00, 0x00, 0x10, 0x00, 0x00];
    let naive = |b: &[u8]| {
        let count = i32::from_be_bytes([b[2], b[3], b[4], b[5]]) as usize;
        let topics: Vec<String> = Vec::with_capacity(count.min(64 << 20));
        drop(std::hint::black_box(topics));
    };
    let peak = peak_during(|| naive(&bytes));
    assert!(
        peak > ALLOCATION_FACTOR * bytes.len() + SLACK_BYTES,
        "peak {peak}"
    );
}
