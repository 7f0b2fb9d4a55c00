//! What the [rack-aware flow of extras](super) chose, per topic with extras, as the deal
//! reads it: the members given the extra in a keep-first topic, the keeps, takers and
//! amounts of an open one. Every topic's lists are ranges of lists shared by all topics.

use std::ops::Range;

/// How the flow deals one topic with extras. Its lists are ranges of the lists of
/// [`Chosen`], shared by every topic: one allocation per kind instead of several per topic.
pub(in super::super) enum TopicChoice {
    /// Keep-first: the members given the extra; the parent's deal places the rest.
    KeepFirst {
        /// Topic index.
        topic: u32,
        /// Where the local ids of the members given the extra, ascending, lie in
        /// [`Chosen`]'s list of them.
        chosen: Range<usize>,
    },
    /// An open topic (f_t = 0), dealt as the flow says by [`deal_open`](super::deal_open).
    Open(OpenTopic),
}

/// Where an open topic's lists lie in those of [`Chosen`] (see [`OpenView`]).
pub(in super::super) struct OpenTopic {
    pub(super) topic: u32,
    pub(super) keeps: Range<usize>,
    pub(super) takers: Range<usize>,
    pub(super) masks: Range<usize>,
    pub(super) amount: Range<usize>,
}

/// The flow's deal of an open topic: who keeps a claim of which mask, and how many
/// partitions of each mask each rack's takers receive.
pub(in super::super) struct OpenView<'a> {
    pub(super) topic: u32,
    /// (local member, mask of the claim it keeps), ascending.
    pub(super) keeps: &'a [(u32, u64)],
    /// (rack, local member) of the members taking one partition from their rack's pool,
    /// ascending, then (racks, local member) of those in no rack, taking one partition that
    /// cannot be aligned.
    pub(super) takers: &'a [(u32, u32)],
    /// Masks of the groups, ascending, then 0 for the partitions that cannot be aligned.
    pub(super) masks: &'a [u64],
    /// Units of group g sent to rack r, at `g * racks + r`.
    pub(super) amount: &'a [u64],
}

impl TopicChoice {
    /// The topic dealt.
    pub(in super::super) fn topic(&self) -> u32 {
        match self {
            TopicChoice::KeepFirst { topic, .. } => *topic,
            TopicChoice::Open(open) => open.topic,
        }
    }
}

/// The result of [`choose`](super::choose).
pub(in super::super) struct Chosen {
    /// One entry per topic with r_t > 0, in `comp.topics` order.
    pub(in super::super) topics: Vec<TopicChoice>,
    /// Whether the network was exact (every topic open, every member in a rack), so that
    /// the result is optimal without comparing with a bound (tests count both kinds).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(in super::super) exact: bool,
    /// The lists the topics' ranges point into.
    pub(super) chosen: Vec<u32>,
    pub(super) keeps: Vec<(u32, u64)>,
    pub(super) takers: Vec<(u32, u32)>,
    pub(super) masks: Vec<u64>,
    pub(super) amount: Vec<u64>,
}

impl Chosen {
    /// The members given the extra in a keep-first topic (`range` from its
    /// [`TopicChoice::KeepFirst`]).
    pub(in super::super) fn members(&self, range: &Range<usize>) -> &[u32] {
        &self.chosen[range.clone()]
    }

    /// The deal of the open topic `open`.
    pub(in super::super) fn open(&self, open: &OpenTopic) -> OpenView<'_> {
        OpenView {
            topic: open.topic,
            keeps: &self.keeps[open.keeps.clone()],
            takers: &self.takers[open.takers.clone()],
            masks: &self.masks[open.masks.clone()],
            amount: &self.amount[open.amount.clone()],
        }
    }
}
