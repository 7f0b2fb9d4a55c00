//! The hand-outs of [`Proposal::complete_held`] by load level: the members of a component
//! as one bitset per load, and each topic's subscribers with room as a bitset, so that the
//! lightest subscribers with room of a topic are found a few words per load at a time
//! instead of by a pass over the topic's subscribers.
//!
//! It chooses exactly what [`Proposal::hand_out`] does: the `left` smallest (load, index)
//! pairs among the subscribers with room (all of them if they are no more). A topic's
//! subscribers are ascending local members, so a lower index is a lower member: the lowest
//! levels first, and within the last level taken, its lowest members.

use super::super::Proposal;
#[cfg(test)]
use super::{SAME_OVERRIDE, SPARED};

/// Members by load and topics' rooms as bitsets over a component's local members.
pub(super) struct Levels {
    /// Words per bitset.
    words: usize,
    /// The load of level 0: the lightest member's when built (no load falls below it: the
    /// hand-outs take back only what they gave).
    low: i64,
    /// Level l's members (load `low + l`) at `bits[l * words..(l + 1) * words]`.
    bits: Vec<u64>,
    /// A level below which no level holds a member: the levels of the lightest loads after
    /// hand-outs raised every member are skipped, not read word by word.
    lowest: usize,
    /// Local topic lt's subscribers at their floor (room for an extra) at
    /// `room[lt * words..(lt + 1) * words]`.
    room: Vec<u64>,
    /// Local topic lt's subscribers at `subscribed[lt * words..(lt + 1) * words]`: with
    /// `before`, a member's index among them by a count of bits, not a search.
    subscribed: Vec<u64>,
    /// Per local topic, per word w: the topic's subscribers below member 64·w, at
    /// `before[lt * words + w]`.
    before: Vec<u32>,
}

/// The widest spread of loads (lightest to heaviest) for which levels are built.
const SPREAD: i64 = 64;

impl Levels {
    /// The levels of `p` (every count at its floor or one above, `held[lt]` of topic lt's
    /// above), or `None` where a pass over a topic's subscribers costs less: members' loads
    /// spread wider than [`SPREAD`], few subscribers per topic for the words of a bitset, or
    /// most subscriptions in topics with at most one extra to hand out (one pass finds it),
    /// or many extras for the subscriptions (each taken back and handed out again in every
    /// improving pass, where a pass over the subscribers mostly finds them unchanged).
    pub fn new(p: &Proposal, held: &[i32]) -> Option<Levels> {
        #[cfg(test)]
        if LEVELS_OFF.with(std::cell::Cell::get) {
            return None;
        }
        let n = p.load.len();
        let words = n.div_ceil(64);
        let topics = p.subs.len();
        let subscriptions: usize = p.subs.iter().map(<[u32]>::len).sum();
        let low = *p.load.iter().min()?;
        let high = *p.load.iter().max()?;
        let several: usize = (0..topics)
            .filter(|&lt| p.extra[lt] - held[lt] > 1)
            .map(|lt| p.subs[lt].len())
            .sum();
        let extras: usize = (0..topics)
            .map(|lt| (p.extra[lt] - held[lt]) as usize)
            .sum();
        if high - low > SPREAD
            || topics == 0
            || 16 * words * topics > subscriptions
            || 2 * several < subscriptions
            || 16 * extras > subscriptions
        {
            return None;
        }
        let mut levels = Levels {
            words,
            low,
            bits: vec![0; (high - low + 1) as usize * words],
            lowest: 0,
            room: vec![0; topics * words],
            subscribed: vec![0; topics * words],
            before: vec![0; topics * words],
        };
        for (lm, &l) in p.load.iter().enumerate() {
            let at = levels.at(l) + lm / 64;
            levels.bits[at] |= 1 << (lm % 64);
        }
        for (lt, &h) in held.iter().enumerate() {
            let words = lt * words..(lt + 1) * words;
            let subscribed = &mut levels.subscribed[words.clone()];
            index_words(subscribed, &mut levels.before[words.clone()], &p.subs[lt]);
            let (f, room) = (p.floor[lt], &mut levels.room[words]);
            if h == 0 {
                // Every subscriber is at its floor.
                room.copy_from_slice(subscribed);
            } else {
                let subs = p.subs[lt].iter().zip(&p.count[lt]);
                set_ascending(room, subs.map(|(&lm, &k)| (lm, k == f)));
            }
        }
        Some(levels)
    }

    /// Where the bitset of load `l` starts, the levels grown to hold it.
    fn at(&mut self, l: i64) -> usize {
        let start = (l - self.low) as usize * self.words;
        if self.bits.len() < start + self.words {
            self.bits.resize(start + self.words, 0);
        }
        start
    }

    /// Moves local member `lm` from load `from` to load `from + by` (by ±1).
    fn shift(&mut self, lm: usize, from: i64, by: i64) {
        let (w, bit) = (lm / 64, 1u64 << (lm % 64));
        let at = self.at(from);
        self.bits[at + w] &= !bit;
        let at = self.at(from + by);
        self.bits[at + w] |= bit;
        self.lowest = self.lowest.min(at / self.words);
    }

    /// The lowest level that holds a member (or the number of levels, if none does): the
    /// empty ones below are passed over once, not at every look.
    fn lowest(&mut self) -> usize {
        let words = self.words;
        while let Some(level) = self
            .bits
            .get(self.lowest * words..(self.lowest + 1) * words)
            && level.iter().all(|&b| b == 0)
        {
            self.lowest += 1;
        }
        self.lowest
    }

    /// Whether taking back topic `lt`'s extras of its subscribers `mine` (indices) and
    /// handing them out again would give them to `mine` again: the hand-out takes the
    /// smallest (load, member) pairs with room, so it does exactly when no other subscriber
    /// with room comes before the last of `mine` one unit lighter. A few words per level up
    /// to that one, instead of the take-back and the hand-out.
    pub fn hands_out_the_same(&mut self, p: &Proposal, lt: usize, mine: &[u32]) -> bool {
        #[cfg(test)]
        if let Some(same) = SAME_OVERRIDE.with(std::cell::Cell::get) {
            return same;
        }
        let subs = &p.subs[lt];
        let Some((load, lm)) = mine
            .iter()
            .map(|&i| {
                let lm = subs[i as usize] as usize;
                (p.load[lm] - 1, lm)
            })
            .max()
        else {
            return true;
        };
        let lowest = self.lowest();
        let words = self.words;
        let room = &self.room[lt * words..(lt + 1) * words];
        // Every one of `mine` was raised from `low` or above, so `load` is a level.
        let last = (load - self.low) as usize;
        let level = |l: usize| &self.bits[l * words..(l + 1) * words];
        let lighter = (lowest..last).any(|l| level(l).iter().zip(room).any(|(&b, &r)| b & r != 0));
        let (w, below) = (lm / 64, (1u64 << (lm % 64)) - 1);
        let at = level(last);
        let before =
            at[..w].iter().zip(room).any(|(&b, &r)| b & r != 0) || at[w] & room[w] & below != 0;
        let same = !lighter && !before;
        #[cfg(test)]
        if same {
            SPARED.with(|c| c.set(c.get() + 1));
        }
        same
    }

    /// Takes back topic `lt`'s extras of its subscribers `mine` (indices).
    pub fn take_back(&mut self, p: &mut Proposal, lt: usize, mine: &[u32]) {
        let words = self.words;
        for &i in mine {
            let lm = p.subs[lt][i as usize] as usize;
            p.count[lt][i as usize] -= 1;
            self.shift(lm, p.load[lm], -1);
            p.load[lm] -= 1;
            self.room[lt * words + lm / 64] |= 1 << (lm % 64);
        }
    }

    /// [`Proposal::hand_out`] of topic `lt`'s `left` extras, found by level.
    pub fn hand_out(&mut self, p: &mut Proposal, lt: usize, left: usize, mine: &mut Vec<u32>) {
        mine.clear();
        if left == 0 {
            return;
        }
        let lowest = self.lowest();
        let words = self.words;
        let levels = self.bits.len() / words;
        let room = lt * words..(lt + 1) * words;
        // The members taken, level by level, lowest first within each.
        for level in lowest..levels {
            let bits = &self.bits[level * words..(level + 1) * words];
            for (w, (&b, &r)) in bits.iter().zip(&self.room[room.clone()]).enumerate() {
                let mut here = b & r;
                while here != 0 && mine.len() < left {
                    mine.push((w * 64) as u32 + here.trailing_zeros());
                    here &= here - 1;
                }
            }
            if mine.len() == left {
                break;
            }
        }
        // Members ascending are indices ascending (so are the topic's subscribers).
        mine.sort_unstable();
        let base = lt * words;
        for x in mine.iter_mut() {
            let lm = *x as usize;
            let (w, bit) = (base + lm / 64, 1u64 << (lm % 64));
            // Every member taken subscribes to lt (its room bit is set): its index is the
            // count of the topic's subscribers below it.
            let i =
                self.before[w] as usize + (self.subscribed[w] & (bit - 1)).count_ones() as usize;
            #[cfg(test)]
            assert_eq!(p.subs[lt][i] as usize, lm);
            p.count[lt][i] += 1;
            self.shift(lm, p.load[lm], 1);
            p.load[lm] += 1;
            self.room[w] &= !bit;
            *x = i as u32;
        }
    }
}

/// Writes into `bits` (zeroed) the bitset of `members` (ascending, each below 64 ·
/// `bits.len()`), and into `before[w]` the count of members below 64·w. A word's bits are
/// gathered in a register and written once, as in [`set_ascending`]; and eight members at a
/// time whose last is still in the register's word (so are the others: they are ascending)
/// are gathered without a test each.
fn index_words(bits: &mut [u64], before: &mut [u32], members: &[u32]) {
    // The word being gathered: its index and its bits.
    let mut word = (0, 0u64);
    let mut chunks = members.chunks_exact(CHUNK);
    let mut i = 0;
    for chunk in &mut chunks {
        if chunk[CHUNK - 1] as usize / 64 == word.0 {
            word.1 |= chunk.iter().fold(0, |bits, &lm| bits | 1 << (lm % 64));
        } else {
            for (j, &lm) in chunk.iter().enumerate() {
                index_one(bits, before, &mut word, i + j, lm);
            }
        }
        i += CHUNK;
    }
    for (j, &lm) in chunks.remainder().iter().enumerate() {
        index_one(bits, before, &mut word, i + j, lm);
    }
    if let Some(last) = bits.get_mut(word.0) {
        *last = word.1;
    }
    if let Some(rest) = before.get_mut(word.0 + 1..) {
        rest.fill(members.len() as u32);
    }
}

/// One member `lm`, the `i`-th, of [`index_words`]: the word being gathered, `word`, written
/// out and the counts below the words up to `lm`'s set when `lm` is past it.
#[inline(always)]
fn index_one(bits: &mut [u64], before: &mut [u32], word: &mut (usize, u64), i: usize, lm: u32) {
    let w = lm as usize / 64;
    if w != word.0 {
        bits[word.0] = word.1;
        before[word.0 + 1..=w].fill(i as u32);
        *word = (w, 0);
    }
    word.1 |= 1 << (lm % 64);
}

/// The members [`index_words`] gathers at a time when they share a word.
const CHUNK: usize = 8;

/// Sets in the bitset `bits` the bit of every member `lm` of `members` (ascending, each below
/// 64 · `bits.len()`) paired with `true`. A word's bits are gathered in a register and
/// written once, when the members move on to the next word: one store a word where a
/// read-modify-write a member cost a few instructions more each.
fn set_ascending(bits: &mut [u64], members: impl Iterator<Item = (u32, bool)>) {
    let (mut at, mut word) = (0, 0u64);
    for (lm, set) in members {
        let w = lm as usize / 64;
        if w != at {
            bits[at] |= word;
            (at, word) = (w, 0);
        }
        word |= u64::from(set) << (lm % 64);
    }
    if let Some(last) = bits.get_mut(at) {
        *last |= word;
    }
}

#[cfg(test)]
thread_local! {
    /// Tests only: no levels are built (every hand-out passes over its subscribers), for a
    /// reference.
    pub(crate) static LEVELS_OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
mod tests {
    use super::{index_words, set_ascending};
    use crate::assignor::tests::Rng;

    /// Gathering a word's bits before writing it sets what setting each bit in place does.
    #[test]
    fn bits_set_by_word_are_those_set_one_by_one() {
        let mut rng = Rng(11);
        for _ in 0..1_000 {
            let words = 1 + rng.below(4) as usize;
            let mut members: Vec<(u32, bool)> = (0..rng.below(3 * 64))
                .map(|_| (rng.below(64 * words as u64) as u32, rng.below(3) != 0))
                .collect();
            members.sort_unstable_by_key(|&(lm, _)| lm);
            members.dedup_by_key(|&mut (lm, _)| lm);
            let before: Vec<u64> = (0..words).map(|_| rng.next() & rng.next()).collect();
            let mut want = before.clone();
            for &(lm, set) in &members {
                want[lm as usize / 64] |= u64::from(set) << (lm % 64);
            }
            let mut got = before;
            set_ascending(&mut got, members.iter().copied());
            assert_eq!(got, want);
        }
    }

    /// The bitset and the counts below each word, gathered by word and by chunk, are those
    /// of the members set one by one and counted.
    #[test]
    fn indexed_words_are_the_members_and_their_counts() {
        let mut rng = Rng(13);
        for _ in 0..1_000 {
            let words = 1 + rng.below(5) as usize;
            let dense = 1 + rng.below(8);
            let members: Vec<u32> = (0..64 * words as u32)
                .filter(|_| rng.below(dense + 1) != 0)
                .collect();
            let mut want = vec![0u64; words];
            for &lm in &members {
                want[lm as usize / 64] |= 1 << (lm % 64);
            }
            let counts: Vec<u32> = (0..words)
                .map(|w| members.iter().filter(|&&lm| (lm as usize) < 64 * w).count() as u32)
                .collect();
            let (mut got, mut before) = (vec![0u64; words], vec![0u32; words]);
            index_words(&mut got, &mut before, &members);
            assert_eq!((got, before), (want, counts));
        }
    }
}
