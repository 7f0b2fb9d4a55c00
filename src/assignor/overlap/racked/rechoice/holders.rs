//! The re-choice's holders per topic (the subscriber indices whose cells that gain nothing
//! hold a placed extra), all topics in one buffer: a topic has a few, and a list per topic
//! cost more in allocations and growth than the network's own work on many small topics.

/// Per local topic, its holders ascending, in a segment of `at` as long as the topic has
/// subscribers: holders are distinct subscribers, so a segment never overflows (a topic's
/// partitions would bound the holders between augmentations, but not within one: a path
/// turns a cell on before the next turns one off).
pub(super) struct Holders {
    at: Vec<u32>,
    /// Per local topic: where its segment starts in `at` (one more entry at the end).
    start: Vec<usize>,
    /// Per local topic: how many holders it has.
    len: Vec<u32>,
}

impl Holders {
    /// No holders, with segments of `widths` (per local topic, its subscribers).
    pub(super) fn new(widths: impl ExactSizeIterator<Item = usize>) -> Self {
        let mut start = Vec::with_capacity(widths.len() + 1);
        start.push(0);
        for w in widths {
            start.push(start[start.len() - 1] + w);
        }
        Holders {
            at: vec![0; start[start.len() - 1]],
            len: vec![0; start.len() - 1],
            start,
        }
    }

    /// Local topic `lt`'s holders, ascending.
    pub(super) fn of(&self, lt: usize) -> &[u32] {
        let from = self.start[lt];
        &self.at[from..from + self.len[lt] as usize]
    }

    /// How many holders local topic `lt` has.
    pub(super) fn len(&self, lt: usize) -> usize {
        self.len[lt] as usize
    }

    /// Appends `i` to local topic `lt`'s holders, above all of them (the start's, in
    /// subscriber order).
    pub(super) fn push(&mut self, lt: usize, i: u32) {
        let (from, len) = (self.start[lt], self.len[lt] as usize);
        debug_assert!(self.of(lt).last().is_none_or(|&last| last < i));
        if let Some(slot) = self.at[from..self.start[lt + 1]].get_mut(len) {
            *slot = i;
            self.len[lt] += 1;
        }
    }

    /// Adds `i` to local topic `lt`'s holders (no-op when it holds already).
    pub(super) fn insert(&mut self, lt: usize, i: u32) {
        let (from, len) = (self.start[lt], self.len[lt] as usize);
        let room = self.start[lt + 1] - from;
        let seg = &mut self.at[from..from + room];
        // Holders come mostly in subscriber order (the start's): then `i` goes last.
        let at = match seg[..len].last() {
            Some(&last) if last >= i => match seg[..len].binary_search(&i) {
                Ok(_) => return,
                Err(at) => at,
            },
            _ => len,
        };
        debug_assert!(len < room, "topic {lt}: more holders than subscribers");
        if len == room {
            return;
        }
        // A few holders per topic: a shift in place costs less than a call to move them.
        for k in (at..len).rev() {
            seg[k + 1] = seg[k];
        }
        seg[at] = i;
        self.len[lt] += 1;
    }

    /// Removes `i` from local topic `lt`'s holders (no-op when it holds none).
    pub(super) fn remove(&mut self, lt: usize, i: u32) {
        let (from, len) = (self.start[lt], self.len[lt] as usize);
        let seg = &mut self.at[from..from + len];
        if let Ok(at) = seg.binary_search(&i) {
            for k in at + 1..len {
                seg[k - 1] = seg[k];
            }
            self.len[lt] -= 1;
        }
    }
}
