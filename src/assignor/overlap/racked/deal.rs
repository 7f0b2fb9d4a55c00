//! The deal of one topic with racks in view, for the certificate of [`super`]: each member
//! keeps its keepable partitions up to its count, the small flow ([`Transport`]) splits the
//! left-over alignable partitions over racks, and each rack's partitions fill its
//! subscribers with room, as the parent's docs and tie rule describe.

use super::super::super::aligned::MAX_GROUPS;
use super::super::super::aligned::transport::Transport;
use super::super::Counts;
use super::exchange::Scope;

/// Deals local topic `lt` with `counts` (see [`RackDeal::topic`]).
pub(super) fn deal_topic(
    deal: &mut RackDeal,
    x: &Scope<'_, '_>,
    masks: &[Vec<u64>],
    counts: &Counts,
    lt: usize,
    lists: &mut [Vec<(u32, i32)>],
) -> bool {
    let t = x.comp.topics[lt];
    let topic = Topic {
        topic: t,
        masks: &masks[lt],
        subscribers: &x.problem.subscribers[t as usize],
        local: &counts.subs[lt],
        member_bit: x.member_bit,
        floor: counts.floor[lt],
        chosen: &counts.chosen[lt],
        keepable: &x.keepable[t as usize],
        claim_at: &x.claim_at[x.claim_at_start[lt]..x.claim_at_start[lt + 1]],
        keep_within: x.keep_within[lt].get(),
    };
    deal.topic(&topic, lists)
}

/// One topic to deal with racks in view.
struct Topic<'a> {
    topic: u32,
    /// Per partition: the racks of its replicas among its subscribers' racks.
    masks: &'a [u64],
    /// Sub(t): member indices, ascending.
    subscribers: &'a [u32],
    /// Per subscriber: its local member index.
    local: &'a [u32],
    /// Per local member: its rack's bit (0 without a rack).
    member_bit: &'a [u64],
    floor: u32,
    /// Indices of the subscribers given one more, ascending.
    chosen: &'a [u32],
    /// The keepable claims: (partition, member), ascending by partition.
    keepable: &'a [(i32, u32)],
    /// Per keepable claim: its owner's index among the subscribers.
    claim_at: &'a [u32],
    /// Racks whose claims are kept first (see [`Scope::keep_within`]).
    keep_within: u64,
}

/// Scratch space of the deal, reused across topics (a deal per topic: allocations per
/// topic would cost more than the deal's own work on small topics).
pub(super) struct RackDeal {
    /// Per subscriber index: room left.
    room: Vec<u32>,
    /// The current topic's left-over partitions that cannot be aligned.
    free: Vec<i32>,
    /// The current topic's left-over alignable partitions by mask, masks ascending.
    groups: Vec<(u64, Vec<i32>)>,
    /// Emptied lists of groups, for the next masks.
    spare: Vec<Vec<i32>>,
    pub(super) flow: Transport,
    /// How many racks the component's members run in.
    racks: usize,
    /// The current topic's subscribers with room left after their claims, ascending.
    open: Vec<u32>,
    /// Per rack: the room its subscribers have left.
    capacity: Vec<u64>,
    /// Per rack: the partitions the small flow sends there, ascending.
    buckets: Vec<Vec<i32>>,
    /// Per rack: how many of its bucket's partitions are dealt.
    cursor: Vec<usize>,
    /// The current topic's masks of keepable claims left over for want of their owners' room.
    pub(super) released: Vec<u64>,
    /// Per rack, during [`RackDeal::direct`]: the room left.
    left: Vec<u64>,
}

impl RackDeal {
    /// Empty scratch space for topics of up to `widest` subscribers over `racks` racks.
    pub(super) fn new(widest: usize, racks: usize) -> Self {
        RackDeal {
            room: vec![0; widest],
            free: Vec::new(),
            released: Vec::new(),
            groups: Vec::new(),
            spare: Vec::new(),
            flow: Transport::default(),
            racks,
            open: Vec::new(),
            capacity: Vec::new(),
            buckets: vec![Vec::new(); racks],
            cursor: Vec::new(),
            left: Vec::new(),
        }
    }

    /// The small flow's first step, done here: each group, in mask order, sends its
    /// partitions in order to the racks of its mask in rack order, to each as many as it has
    /// room for, as [`Transport::solve`] starts. When that places every partition the flow
    /// stops there with these amounts, so the buckets filled here (each group's share split
    /// over the racks in rack order) are those its amounts give; returns whether it did
    /// (otherwise the buckets are refilled from the flow). Most topics need no more.
    fn direct(
        groups: &[(u64, Vec<i32>)],
        capacity: &[u64],
        left: &mut Vec<u64>,
        buckets: &mut [Vec<i32>],
    ) -> bool {
        left.clear();
        left.extend_from_slice(capacity);
        for bucket in buckets.iter_mut() {
            bucket.clear();
        }
        for (mask, parts) in groups {
            let (mut mask, mut taken) = (*mask, 0);
            while taken < parts.len() && mask != 0 {
                let r = mask.trailing_zeros() as usize;
                mask &= mask - 1;
                let (Some(left), Some(bucket)) = (left.get_mut(r), buckets.get_mut(r)) else {
                    return false;
                };
                let send = (parts.len() - taken).min(*left as usize);
                *left -= send as u64;
                // A share is a partition or two: pushes cost less than a call to copy them.
                for &p in &parts[taken..taken + send] {
                    bucket.push(p);
                }
                taken += send;
            }
            if taken < parts.len() {
                return false;
            }
        }
        true
    }

    /// Deals one topic as the [module docs](self) describe, or returns false when some
    /// alignable partition left over cannot be placed aligned (or too many masks), having
    /// written part of it.
    fn topic(&mut self, x: &Topic<'_>, lists: &mut [Vec<(u32, i32)>]) -> bool {
        let t = x.topic;
        let room = &mut self.room[..x.subscribers.len()];
        room.fill(x.floor);
        for &i in x.chosen {
            room[i as usize] += 1;
        }
        self.free.clear();
        self.released.clear();
        for group in &mut self.groups {
            group.1.clear();
        }
        // Claims whose masks lie within `keep_within` take their owners' room first.
        let mut early: Vec<bool> = Vec::new();
        if x.keep_within != 0 {
            #[cfg(test)]
            let taken = u32::from(!super::EARLY_FREE.with(std::cell::Cell::get));
            #[cfg(not(test))]
            let taken = 1;
            early.resize(x.keepable.len(), false);
            for (c, (&(p, _), &i)) in x.keepable.iter().zip(x.claim_at).enumerate() {
                let mask = x.masks[p as usize];
                let i = i as usize;
                if mask != 0 && mask & !x.keep_within == 0 && room[i] > 0 {
                    room[i] -= taken;
                    early[c] = true;
                }
            }
        }
        // The next claim (number c) and its partition (-1 past the last).
        let mut c = 0;
        let claimed_at = |c: usize| x.keepable.get(c).map_or(-1, |&(p, _)| p);
        let mut claimed = claimed_at(c);
        for (p, &mask) in x.masks.iter().enumerate() {
            let p = p as i32;
            if claimed == p {
                let (m, i) = (x.keepable[c].1, x.claim_at[c] as usize);
                let first = x.keep_within != 0 && early[c];
                c += 1;
                claimed = claimed_at(c);
                if first {
                    lists[m as usize].push((t, p));
                    continue;
                }
                if room[i] > 0 {
                    room[i] -= 1;
                    lists[m as usize].push((t, p));
                    continue;
                }
                self.released.push(mask);
            }
            if mask == 0 {
                self.free.push(p);
                continue;
            }
            // Groups ascending by mask: among a few, a scan finds the place a search would,
            // for less.
            let g = if self.groups.len() <= 8 {
                let g = self.groups.iter().position(|g| g.0 >= mask);
                g.unwrap_or(self.groups.len())
            } else {
                self.groups.partition_point(|g| g.0 < mask)
            };
            match self.groups.get_mut(g) {
                Some(group) if group.0 == mask => group.1.push(p),
                _ => {
                    if self.groups.len() >= MAX_GROUPS {
                        // Nothing for `swap_extras` to do about it.
                        self.flow.reached = 0;
                        self.flow.unplaced = 0;
                        return false;
                    }
                    let mut list = self.spare.pop().unwrap_or_default();
                    list.push(p);
                    self.groups.insert(g, (mask, list));
                }
            }
        }
        // The groups left empty go (their lists kept for later masks); the others keep
        // their order.
        let mut kept = 0;
        for g in 0..self.groups.len() {
            if self.groups[g].1.is_empty() {
                self.spare.push(std::mem::take(&mut self.groups[g].1));
            } else {
                // Mostly none went before: then the group stays where it is.
                if kept != g {
                    self.groups.swap(kept, g);
                }
                kept += 1;
            }
        }
        self.groups.truncate(kept);
        // The passes below visit only the subscribers with room left, ascending (a
        // subscriber without room adds no capacity and takes no partition). With f_t = 0 only
        // the chosen ones can have any, and without claims each of them has its one.
        self.open.clear();
        let open: &[u32] = if x.floor == 0 && x.keepable.is_empty() {
            x.chosen
        } else {
            if x.floor == 0 {
                self.open
                    .extend(x.chosen.iter().copied().filter(|&i| room[i as usize] > 0));
            } else {
                self.open
                    .extend((0..room.len() as u32).filter(|&i| room[i as usize] > 0));
            }
            &self.open
        };
        let bit = |i: usize| x.member_bit[x.local[i] as usize];
        self.capacity.clear();
        self.capacity.resize(self.racks, 0);
        for &i in open {
            let i = i as usize;
            if bit(i) != 0 {
                self.capacity[bit(i).trailing_zeros() as usize] += u64::from(room[i]);
            }
        }
        if !Self::direct(
            &self.groups,
            &self.capacity,
            &mut self.left,
            &mut self.buckets,
        ) {
            if !self.flow.solve_groups(&self.groups, &self.capacity) {
                return false;
            }
            // Each group's partitions, in order, split over the racks in rack order.
            for bucket in &mut self.buckets {
                bucket.clear();
            }
            for (g, group) in self.groups.iter().enumerate() {
                let mut taken = 0;
                for (r, bucket) in self.buckets.iter_mut().enumerate() {
                    let amount = self.flow.amount[g * self.racks + r] as usize;
                    bucket.extend_from_slice(&group.1[taken..taken + amount]);
                    taken += amount;
                }
            }
        }
        for bucket in &mut self.buckets {
            // One group's share is in order already.
            if !bucket.is_sorted() {
                bucket.sort_unstable();
            }
        }
        // In id order, each subscriber with room takes its rack's partitions, then the ones
        // that cannot be aligned: a rack's partitions reach only its own subscribers, so this
        // one pass deals them as a pass per rack followed by one for the rest would.
        self.cursor.clear();
        self.cursor.resize(self.racks, 0);
        let mut next = self.free.iter();
        for &i in open {
            let i = i as usize;
            let mut left = room[i] as usize;
            let m = x.subscribers[i];
            // Pushes, not extends: a subscriber takes a partition or two here, and its list
            // was reserved to its final length.
            let list = &mut lists[m as usize];
            if bit(i) != 0 {
                let r = bit(i).trailing_zeros() as usize;
                let bucket = &self.buckets[r][self.cursor[r]..];
                let take = left.min(bucket.len());
                for &p in &bucket[..take] {
                    list.push((t, p));
                }
                self.cursor[r] += take;
                left -= take;
            }
            for &p in next.by_ref().take(left) {
                list.push((t, p));
            }
        }
        debug_assert!(next.next().is_none(), "topic {t}: partitions left undealt");
        true
    }
}
