//! The deal of the rack-aware path: with the extras chosen, each topic's claims kept and its
//! left-over partitions placed aligned, topic by topic (the last step of [`super::assign_as`]).

use super::super::components::Component;
use super::super::racks::search_masks;
use super::extras::{self, TopicChoice};
#[cfg(test)]
use super::tally;
use super::transport::Transport;
use super::{Context, MAX_GROUPS, lengths, restore};
use holders::Holders;

mod holders;

/// Sorting the chosen by rack costs a few walk steps per chosen member plus a fixed part: the
/// deal walks only the chosen (instead of every member) where the members exceed this many per
/// chosen member plus [`SPARSE_MIN_MEMBERS`]. Either walk deals alike; this only picks the
/// cheaper (measured on the racked benchmark rows).
const SPARSE_MEMBERS_PER_CHOSEN: usize = 4;
/// See [`SPARSE_MEMBERS_PER_CHOSEN`].
const SPARSE_MIN_MEMBERS: usize = 32;

/// Buffers reused from topic to topic.
pub(super) struct Deal {
    /// Places left per local member in the current topic.
    room: Vec<u32>,
    /// In a topic with no floor, the only members that can have room: the chosen.
    holders: Holders,
    /// Left-over partitions that cannot be aligned.
    free: Vec<i32>,
    /// Left-over alignable partitions by mask, masks ascending.
    groups: Vec<(u64, Vec<i32>)>,
    flow: Transport,
    /// Per topic, reused: room per rack, how many of each group were handed out, and one
    /// rack's partitions.
    capacity: Vec<u64>,
    taken: Vec<usize>,
    bucket: Vec<i32>,
    /// [`extras::deal_open`]'s.
    open: extras::OpenBuffers,
    /// Off only in [`super::Variant::NoTransportCheck`].
    check: bool,
}

impl Deal {
    /// Empty buffers for a component of `members` members; `check` off only in
    /// [`super::Variant::NoTransportCheck`].
    pub(super) fn new(members: usize, check: bool) -> Deal {
        Deal {
            room: vec![0; members],
            holders: Holders::default(),
            free: Vec::new(),
            groups: Vec::new(),
            flow: Transport::default(),
            capacity: Vec::new(),
            taken: Vec::new(),
            bucket: Vec::new(),
            open: extras::OpenBuffers::default(),
            check,
        }
    }

    /// Deals every topic of the component with the extras `chosen_by_topic` ((topic, local
    /// ids) for the topics with extras, in `comp.topics` order); `false`, with `lists` as
    /// they were, when some topic's left-over alignable partitions cannot all be aligned.
    pub(super) fn all<'x>(
        &mut self,
        ctx: &Context<'_, '_>,
        chosen_by_topic: impl Iterator<Item = (u32, &'x [u32])>,
        lists: &mut [Vec<(u32, i32)>],
    ) -> bool {
        let before = lengths(ctx.comp, lists);
        let mut chosen_by_topic = chosen_by_topic.peekable();
        for (i, &t) in ctx.comp.topics.iter().enumerate() {
            let chosen: &[u32] = match chosen_by_topic.next_if(|x| x.0 == t) {
                Some((_, chosen)) => chosen,
                None => &[],
            };
            if !self.topic(ctx, t, ctx.topic_masks(i, t), chosen, lists) {
                restore(ctx.comp, &before, lists);
                return false;
            }
        }
        true
    }

    /// Deals every topic of the component as the rack-aware flow chose; `false`, with
    /// `lists` as they were, if some topic does not fit (which the flow rules out; the deal
    /// checks anyway).
    pub(super) fn chosen(
        &mut self,
        ctx: &Context<'_, '_>,
        chosen: &extras::Chosen,
        lists: &mut [Vec<(u32, i32)>],
    ) -> bool {
        let before = lengths(ctx.comp, lists);
        let mut by_topic = chosen.topics.iter().peekable();
        for (i, &t) in ctx.comp.topics.iter().enumerate() {
            let masks = ctx.topic_masks(i, t);
            let placed = match by_topic.next_if(|x| x.topic() == t) {
                Some(TopicChoice::Open(open)) => extras::deal_open(
                    &chosen.open(open),
                    ctx.comp,
                    ctx.index,
                    masks,
                    &ctx.keepable[t as usize],
                    ctx.racks,
                    lists,
                    &mut self.open,
                ),
                Some(TopicChoice::KeepFirst {
                    chosen: members, ..
                }) => self.topic(ctx, t, masks, chosen.members(members), lists),
                None => self.topic(ctx, t, masks, &[], lists),
            };
            if !placed {
                restore(ctx.comp, &before, lists);
                return false;
            }
        }
        #[cfg(test)]
        tally::add(if chosen.exact {
            tally::RACK_FLOW_EXACT
        } else {
            tally::RACK_FLOW
        });
        true
    }

    /// Deals topic `t`; `false` (with some of it already written to `lists`) when the
    /// left-over alignable partitions cannot all be aligned.
    pub(super) fn topic(
        &mut self,
        ctx: &Context<'_, '_>,
        t: u32,
        masks: &[u64],
        chosen: &[u32],
        lists: &mut [Vec<(u32, i32)>],
    ) -> bool {
        let (comp, index, rack_members) = (ctx.comp, ctx.index, ctx.rack_members);
        let keepable = &ctx.keepable[t as usize][..];
        let n = comp.members.len();
        let floor = masks.len() as u32 / n as u32;
        self.room.fill(floor);
        for &lm in chosen {
            self.room[lm as usize] += 1;
        }
        self.free.clear();
        for group in &mut self.groups {
            group.1.clear();
        }
        let mut claims = keepable.iter().peekable();
        for (p, &mask) in masks.iter().enumerate() {
            let p = p as i32;
            if let Some(&&(claimed, m)) = claims.peek()
                && claimed == p
            {
                claims.next();
                let lm = index.get(comp, m);
                if self.room[lm] > 0 {
                    self.room[lm] -= 1;
                    lists[m as usize].push((t, p));
                    continue;
                }
            }
            if mask == 0 {
                self.free.push(p);
            } else {
                match search_masks(&self.groups, mask, |g| g.0) {
                    Ok(i) => self.groups[i].1.push(p),
                    Err(i) => {
                        if self.groups.len() >= MAX_GROUPS {
                            return false;
                        }
                        self.groups.insert(i, (mask, vec![p]));
                    }
                }
            }
        }
        self.groups.retain(|g| !g.1.is_empty());

        // How many of each group go to each rack. With no floor only the chosen have room.
        let room = &self.room;
        self.capacity.clear();
        if floor == 0 {
            self.capacity.resize(ctx.racks, 0);
            for &lm in chosen {
                let bit = ctx.member_bit[lm as usize];
                if bit != 0 {
                    self.capacity[bit.trailing_zeros() as usize] += u64::from(room[lm as usize]);
                }
            }
        } else {
            self.capacity.extend(rack_members.iter().map(|ms| {
                ms.iter()
                    .map(|&lm| u64::from(room[lm as usize]))
                    .sum::<u64>()
            }));
        }
        if !self.flow.solve_groups(&self.groups, &self.capacity) {
            if self.check {
                return false;
            }
            for group in self.groups.drain(..) {
                self.free.extend(group.1);
            }
            self.free.sort_unstable();
        }
        let racks = self.capacity.len();
        // With no floor only the chosen have room, and the claims only take room away: the
        // walks below may visit them alone (rack by rack, ascending within each), which deals
        // every partition to the member the walk over every member would. Worth it where the
        // chosen are few against the members (see `SPARSE_MEMBERS_PER_CHOSEN`).
        let sparse =
            floor == 0 && n > SPARSE_MEMBERS_PER_CHOSEN * chosen.len() + SPARSE_MIN_MEMBERS;
        let holders = &mut self.holders;
        if sparse {
            let rank = |lm: u32| ctx.member_bit[lm as usize].trailing_zeros() as usize;
            holders.fill(chosen, racks, rank);
        }
        let (taken, bucket) = (&mut self.taken, &mut self.bucket);
        taken.clear();
        taken.resize(self.groups.len(), 0);
        for (r, members) in rack_members.iter().enumerate() {
            let members = if sparse { holders.rack(r) } else { members };
            bucket.clear();
            for (g, group) in self.groups.iter().enumerate() {
                let amount = self.flow.amount[g * racks + r] as usize;
                bucket.extend_from_slice(&group.1[taken[g]..taken[g] + amount]);
                taken[g] += amount;
            }
            if bucket.is_empty() {
                continue;
            }
            bucket.sort_unstable();
            let mut next = &bucket[..];
            let room = &mut self.room;
            hand_out(members.iter().copied(), &mut next, room, comp, t, lists);
        }
        let mut next = &self.free[..];
        if !next.is_empty() {
            // In local-id order, whatever the racks.
            let room = &mut self.room;
            if sparse {
                let members = holders.ascending().iter().copied();
                hand_out(members, &mut next, room, comp, t, lists);
            } else {
                let all = 0..comp.members.len() as u32;
                hand_out(all, &mut next, room, comp, t, lists);
            }
        }
        debug_assert!(next.is_empty(), "topic {t}: partitions left undealt");
        true
    }
}

/// Hands the partitions of topic `t` in `next` to `members` (local ids) in order, each
/// taking as many as its room allows (using that room up), until none are left; `next` keeps
/// the rest.
fn hand_out(
    members: impl Iterator<Item = u32>,
    next: &mut &[i32],
    room: &mut [u32],
    comp: &Component,
    t: u32,
    lists: &mut [Vec<(u32, i32)>],
) {
    for lm in members {
        if next.is_empty() {
            break;
        }
        let room = &mut room[lm as usize];
        let take = (*room as usize).min(next.len());
        if take == 0 {
            continue;
        }
        let (mine, rest) = next.split_at(take);
        let list = &mut lists[comp.members[lm as usize] as usize];
        for &p in mine {
            list.push((t, p));
        }
        *room -= take as u32;
        *next = rest;
    }
}
