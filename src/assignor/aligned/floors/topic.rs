//! The topics of the flow with floors' network. Every topic's vectors lie end to end in one
//! [`Arena`] (a call builds a few dozen topics, each with about ten vectors of a few dozen
//! entries: allocating and freeing them one by one cost more than filling them); a [`Plan`]
//! says where a topic's parts are, and [`Arena::view`] lends them as the slices of a
//! [`TopicFlow`].

use std::ops::Range;

use super::entries::TopicEntries;

/// Every topic's vectors, end to end: the fields of [`TopicFlow`], which see them.
#[derive(Default)]
pub(super) struct Arena {
    pub(super) groups: Vec<(u64, u64)>,
    /// The claim entries (`claims`, `entry_group`) and the keepable claims' entries
    /// (`entry_of`, each relative to its topic's first entry).
    pub(super) entries: TopicEntries,
    pub(super) keep_edge: Vec<usize>,
    pub(super) slots: Vec<Slot>,
    pub(super) to_rack: Vec<(usize, usize, usize)>,
    pub(super) source_edge: Vec<Option<usize>>,
    pub(super) plain_floor: Vec<Option<usize>>,
}

/// Where one topic's parts lie in the [`Arena`], and its scalars.
pub(super) struct Plan {
    /// Index of the topic in `comp.topics`.
    pub(super) index: usize,
    pub(super) topic: u32,
    pub(super) floor: u32,
    /// Partitions of mask 0.
    pub(super) free: u64,
    /// Its `groups`.
    pub(super) groups: Range<usize>,
    /// Its claim entries: `claims`, `entry_group` and `keep_edge`.
    pub(super) claims: Range<usize>,
    /// Its `entry_of`.
    pub(super) owners: Range<usize>,
    /// Its local members: `slots`.
    pub(super) slots: Range<usize>,
    /// Its `to_rack`.
    pub(super) to_rack: Range<usize>,
    /// Its groups and free node: `source_edge`.
    pub(super) sources: Range<usize>,
    /// Its racks: `plain_floor`.
    pub(super) racks: Range<usize>,
}

/// One topic of the network, as slices of the [`Arena`].
pub(super) struct TopicFlow<'a> {
    pub(super) floor: u32,
    /// Distinct non-zero masks of the topic's partitions, ascending, with their counts.
    pub(super) groups: &'a [(u64, u64)],
    /// Partitions of mask 0.
    pub(super) free: u64,
    /// (local member, mask, keepable claims of that mask), ascending.
    pub(super) claims: &'a [(u32, u64, u64)],
    /// Per claim entry: the index of its mask's group, `groups.len()` (the free node) for 0.
    pub(super) entry_group: &'a [usize],
    /// Per keepable claim of the topic (in the order of `ctx.keepable`): its entry in
    /// `claims`.
    pub(super) entry_of: &'a [u32],
    /// Per claim entry: its keep edge.
    pub(super) keep_edge: &'a [usize],
    /// Per local member: its edges.
    pub(super) slots: &'a [Slot],
    /// (group, rack, edge) of each edge from a group (the free node as group `groups.len()`)
    /// to a rack.
    pub(super) to_rack: &'a [(usize, usize, usize)],
    /// Per group, the free node last: its edge from the source, if any.
    pub(super) source_edge: &'a [Option<usize>],
    /// Per rack: the floors edge of its members without a pair node, if any.
    pub(super) plain_floor: &'a [Option<usize>],
}

/// One local member's edges in one topic.
#[derive(Clone, Copy, Default)]
pub(super) struct Slot {
    /// The edge bringing its partitions from the pool (pair members) or its extra edge
    /// (others), if any.
    pub(super) pool_edge: Option<usize>,
    /// Whether it has a pair node.
    pub(super) pair: bool,
    /// Pair members: the floor edge (pair → sink), if f_t > 0.
    pub(super) floor_edge: Option<usize>,
    /// Pair members: the extra edge (pair → member), if r_t > 0.
    pub(super) extra_edge: Option<usize>,
}

impl Arena {
    /// The topic of `plan`, as slices of the arena.
    #[inline]
    pub(super) fn view(&self, plan: &Plan) -> TopicFlow<'_> {
        TopicFlow {
            floor: plan.floor,
            groups: &self.groups[plan.groups.clone()],
            free: plan.free,
            claims: &self.entries.claims[plan.claims.clone()],
            entry_group: &self.entries.entry_group[plan.claims.clone()],
            entry_of: &self.entries.entry_of[plan.owners.clone()],
            keep_edge: &self.keep_edge[plan.claims.clone()],
            slots: &self.slots[plan.slots.clone()],
            to_rack: &self.to_rack[plan.to_rack.clone()],
            source_edge: &self.source_edge[plan.sources.clone()],
            plain_floor: &self.plain_floor[plan.racks.clone()],
        }
    }
}
