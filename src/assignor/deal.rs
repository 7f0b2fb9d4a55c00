//! The partition deal of the count paths: once every subscriber's count of a topic is fixed
//! (f_t, plus one for the members chosen for its extras), the partitions themselves follow.
//!
//! With no partition alignable, partitions of a topic differ only by their previous owner.
//! A member m whose count is c_tm can keep at most min(o_tm, c_tm) of its own partitions
//! (o_tm owned); this deal keeps exactly that many for every member at once (distinct members
//! own distinct partitions), lowest numbers first, and hands every other partition, in
//! ascending number, to the subscribers with room in ascending id order. The places left
//! equal the partitions left (both are P_t − Σ min(o_tm, c_tm)), so every count is met. The
//! result is a function of the counts and the canonical claims only (objective 6).
//!
//! Used by [`super::homogeneous`] (every member subscribes to every topic) and
//! [`super::overlap`] (overlapping subscriptions).

/// Scratch space for dealing topic after topic without allocating per topic.
pub(crate) struct Dealer {
    /// Per subscriber index: places still open in the current topic (its count, less the
    /// partitions it kept or was handed so far); all zero between topics.
    room: Vec<i32>,
    /// The current topic's partitions nobody keeps, ascending.
    free: Vec<i32>,
}

/// One topic to deal by floor and extras: the topic and the counts chosen for its
/// subscribers.
pub(crate) struct TopicDeal<'a> {
    /// The topic, its subscribers and its previous owners.
    pub topic: Topic<'a>,
    /// f_t: what every subscriber gets at least.
    pub floor: u32,
    /// Indices into `topic.subscribers` of the members given one more, ascending.
    pub chosen: &'a [u32],
}

impl Dealer {
    /// Room for topics of up to `subscribers` subscribers.
    pub fn new(subscribers: usize) -> Dealer {
        Dealer {
            room: vec![0; subscribers],
            free: Vec::new(),
        }
    }

    /// Appends the partitions of `deal.topic` to `lists` (by member index) as the
    /// [module docs](self) describe. `index(m)` is m's position in `deal.subscribers`.
    pub fn topic(
        &mut self,
        deal: &TopicDeal<'_>,
        index: impl Fn(u32) -> usize,
        lists: &mut [Vec<(u32, i32)>],
    ) {
        let floor = deal.floor;
        if floor == 0 && kept_whole(deal, &index) {
            // Each owner keeps its one partition, and no partition is left to hand.
            let t = deal.topic.topic;
            for &(p, m) in deal.topic.owners {
                lists[m as usize].push((t, p));
            }
            return;
        }
        let room = &mut self.room[..deal.topic.subscribers.len()];
        if floor > 0 {
            room.fill(floor as i32);
        }
        for &i in deal.chosen {
            room[i as usize] += 1;
        }
        // Only members given the extra have room when the floor is 0: the hand visits them
        // alone.
        let holders = (floor == 0).then_some(deal.chosen);
        deal_room(&deal.topic, room, holders, &mut self.free, index, lists);
    }

    /// [`Dealer::topic`] with the counts given per subscriber instead: `room[i]` is the count
    /// of `topic.subscribers[i]` (f_t, or f_t + 1 for one given an extra). The counts are
    /// used up: every entry is 0 on return.
    // Out of line, with the deal inlined into it: fewer instructions on the overlap rows than
    // either inlined into its caller or calling the deal.
    #[inline(never)]
    pub fn topic_counted(
        &mut self,
        topic: &Topic<'_>,
        room: &mut [i32],
        index: impl Fn(u32) -> usize,
        lists: &mut [Vec<(u32, i32)>],
    ) {
        #[cfg(test)]
        let direct = !UNCLAIMED_OFF.get();
        #[cfg(not(test))]
        let direct = true;
        if direct
            && topic.owners.is_empty()
            && (topic.partitions as usize) < topic.subscribers.len()
        {
            unclaimed(topic, room, lists);
            return;
        }
        deal_room(topic, room, None, &mut self.free, index, lists);
    }
}

/// The deal of a topic nobody claims with f_t = 0 (fewer partitions than subscribers), by
/// counts per subscriber in `room` (used up): partitions 0, 1, … in turn to the subscribers
/// with room, ascending, as many as each has room for — what [`deal_room`] does with no
/// claim. Few of the many subscribers have room (one each), so the zeros are skipped
/// [`UNCLAIMED_WIDTH`] at a time, by one test of a block's bits.
fn unclaimed(topic: &Topic<'_>, room: &mut [i32], lists: &mut [Vec<(u32, i32)>]) {
    let (t, partitions) = (topic.topic, topic.partitions as i32);
    let mut next = 0;
    let mut hand = |from: usize, block: &mut [i32]| {
        for (k, &m) in block.iter_mut().zip(&topic.subscribers[from..]) {
            let open = std::mem::take(k).min(partitions - next);
            if open > 0 {
                lists[m as usize].extend((next..next + open).map(|p| (t, p)));
                next += open;
            }
        }
        next == partitions
    };
    let n = room.len();
    let mut blocks = room.chunks_exact_mut(UNCLAIMED_WIDTH);
    let done = blocks.by_ref().enumerate().any(|(b, block)| {
        block.iter().fold(0, |bits, &k| bits | k) != 0 && hand(b * UNCLAIMED_WIDTH, block)
    });
    if !done {
        let rest = blocks.into_remainder();
        hand(n - rest.len(), rest);
    }
    #[cfg(test)]
    assert!(
        room.iter().all(|&r| r == 0),
        "counts of topic {t} do not add up to its partitions"
    );
}

/// Subscribers' counts [`unclaimed`] tests at once: 16 of i32, four 128-bit words.
const UNCLAIMED_WIDTH: usize = 16;

/// Whether `deal` (f_t = 0) gives every partition to its previous owner: the owners, by
/// partition, are one per partition (as many as P_t) and are the chosen members, in order.
/// Then each chosen member's one place is its one claim, kept by the deal of the
/// [module docs](self), and no partition is free: each owner simply keeps its partition (a
/// settled topic of a join or leave, where the extras went to exactly its owners).
fn kept_whole(deal: &TopicDeal<'_>, index: impl Fn(u32) -> usize) -> bool {
    let owners = deal.topic.owners;
    if owners.len() != deal.topic.partitions as usize || owners.len() != deal.chosen.len() {
        return false;
    }
    #[cfg(test)]
    if planted::WHOLE_BY_COUNTS.get() {
        return true;
    }
    owners
        .iter()
        .zip(deal.chosen)
        .all(|(&(_, m), &i)| index(m) == i as usize)
}

#[cfg(test)]
thread_local! {
    /// Tests only: [`Dealer::topic_counted`] deals unclaimed topics as any other, for a
    /// reference.
    static UNCLAIMED_OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Faults a test may plant on its thread, to show the tests catch them.
#[cfg(test)]
pub(crate) mod planted {
    thread_local! {
        /// [`super::Dealer::topic`] takes a topic with as many owners as chosen members, one
        /// per partition, as kept whole without checking that the owners are the chosen.
        pub(crate) static WHOLE_BY_COUNTS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
}

/// One topic to deal: what every deal reads besides the counts.
pub(crate) struct Topic<'a> {
    /// Topic index.
    pub topic: u32,
    /// P_t.
    pub partitions: u32,
    /// Sub(t): member indices, ascending.
    pub subscribers: &'a [u32],
    /// The previous owners of the topic's partitions: (partition, member), ascending by
    /// partition, every member a subscriber.
    pub owners: &'a [(i32, u32)],
}

/// The deal of the [module docs](self) with every subscriber's count in `room` (used up),
/// `holders` (ascending) the only subscribers with room if given; `free` is scratch space.
// Inlined into both entries (see `Dealer::topic_counted`).
#[inline(always)]
fn deal_room(
    deal: &Topic<'_>,
    room: &mut [i32],
    holders: Option<&[u32]>,
    free: &mut Vec<i32>,
    index: impl Fn(u32) -> usize,
    lists: &mut [Vec<(u32, i32)>],
) {
    let t = deal.topic;
    // Claims are ascending and distinct (one per partition at most), so the partitions
    // between two of them are unclaimed and go to the free list whole (after a balanced
    // deal most claims follow one another: no run is checked for then).
    free.clear();
    let mut unclaimed = 0;
    for &(p, m) in deal.owners {
        if p > unclaimed {
            free.extend(unclaimed..p);
        }
        unclaimed = p + 1;
        let open = &mut room[index(m)];
        if *open > 0 {
            *open -= 1;
            lists[m as usize].push((t, p));
        } else {
            free.push(p);
        }
    }
    if (deal.partitions as i32) > unclaimed {
        free.extend(unclaimed..deal.partitions as i32);
    }
    // Every count is met: the places left equal the partitions left (module docs), and
    // both fall by the same amount at every hand, so once no partition is left every
    // place is closed and the rest of `room` is already zero.
    let mut free = free.as_slice();
    let all_kept = free.is_empty();
    let mut hand = |open: i32, list: &mut Vec<(u32, i32)>| {
        let (given, rest) = free.split_at((open as usize).min(free.len()));
        list.extend(given.iter().map(|&p| (t, p)));
        free = rest;
        free.is_empty()
    };
    if all_kept {
        // Every place was closed by a kept claim: nothing to hand.
    } else if let Some(holders) = holders {
        // Visited alone, ascending: the same order as the loop below.
        for &i in holders {
            let open = std::mem::take(&mut room[i as usize]);
            if open > 0 && hand(open, &mut lists[deal.subscribers[i as usize] as usize]) {
                break;
            }
        }
    } else {
        for (open, &m) in room.iter_mut().zip(deal.subscribers) {
            let open = std::mem::take(open);
            if open > 0 && hand(open, &mut lists[m as usize]) {
                break;
            }
        }
    }
    #[cfg(test)]
    assert!(
        room.iter().all(|&r| r == 0),
        "counts of topic {t} do not add up to its partitions"
    );
}

#[cfg(test)]
mod tests {
    use super::{Dealer, Topic, TopicDeal};

    /// Deals one topic to members 0..n (index = member) and returns their lists.
    fn deal(
        n: usize,
        partitions: u32,
        floor: u32,
        chosen: &[u32],
        owners: &[(i32, u32)],
    ) -> Vec<Vec<i32>> {
        let subscribers: Vec<u32> = (0..n as u32).collect();
        let mut lists = vec![Vec::new(); n];
        let mut dealer = Dealer::new(n);
        let topic = TopicDeal {
            topic: Topic {
                topic: 7,
                partitions,
                subscribers: &subscribers,
                owners,
            },
            floor,
            chosen,
        };
        dealer.topic(&topic, |m| m as usize, &mut lists);
        // The scratch space is left clean for the next topic.
        assert!(dealer.room.iter().all(|&r| r == 0));
        lists
            .iter()
            .map(|l| {
                l.iter()
                    .map(|&(t, p)| {
                        assert_eq!(t, 7);
                        p
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn owners_keep_up_to_their_count_and_the_rest_go_out_in_ascending_order() {
        // 3 members, 7 partitions, floor 2, member 1 gets the extra. Member 0 owns 0, 1, 2
        // (keeps two), member 2 owns 5; 3, 4, 6 are unclaimed (runs between claims).
        let lists = deal(3, 7, 2, &[1], &[(0, 0), (1, 0), (2, 0), (5, 2)]);
        assert_eq!(lists, vec![vec![0, 1], vec![2, 3, 4], vec![5, 6]]);
    }

    #[test]
    fn the_hand_stops_where_the_partitions_run_out_and_leaves_no_room_open() {
        // Floor 2 over 3 members, 7 partitions, member 2 gets the extra: members 1 and 2 keep
        // all they have room for, so member 0 takes the last two free partitions and the
        // members after it are not visited (their room is already closed).
        let owners = [(2, 1), (3, 1), (4, 2), (5, 2), (6, 2)];
        let lists = deal(3, 7, 2, &[2], &owners);
        assert_eq!(lists, vec![vec![0, 1], vec![2, 3], vec![4, 5, 6]]);
        // Floor 0, all chosen: the first chosen member without a claim takes the one free
        // partition; the others kept theirs.
        let lists = deal(4, 3, 0, &[0, 1, 3], &[(0, 0), (1, 3)]);
        assert_eq!(lists, vec![vec![0], vec![2], vec![], vec![1]]);
        // Every place closed by a kept claim: nothing handed.
        let lists = deal(3, 3, 1, &[], &[(0, 2), (1, 0), (2, 1)]);
        assert_eq!(lists, vec![vec![1], vec![2], vec![0]]);
    }

    #[test]
    fn with_floor_zero_only_the_chosen_get_one_each() {
        // 4 members, 2 partitions, member 3 owns 1 but is not chosen; 0 and 2 are.
        let lists = deal(4, 2, 0, &[0, 2], &[(1, 3)]);
        assert_eq!(lists, vec![vec![0], vec![], vec![1], vec![]]);
        // A chosen owner keeps its own.
        let lists = deal(4, 2, 0, &[0, 2], &[(1, 2)]);
        assert_eq!(lists, vec![vec![0], vec![], vec![1], vec![]]);
        let lists = deal(4, 3, 0, &[1, 2, 3], &[(0, 3)]);
        assert_eq!(lists, vec![vec![], vec![1], vec![2], vec![0]]);
    }

    /// The general deal by counts (`Dealer::topic_counted`) of a topic of `n` subscribers
    /// 0..n, each given `floor` plus one if chosen: every subscriber's partitions, and the
    /// room left.
    fn counted(
        n: usize,
        partitions: u32,
        floor: u32,
        chosen: &[u32],
        owners: &[(i32, u32)],
    ) -> (Vec<Vec<i32>>, Vec<i32>) {
        let subscribers: Vec<u32> = (0..n as u32).collect();
        let mut room = vec![floor as i32; n];
        for &i in chosen {
            room[i as usize] += 1;
        }
        let mut lists = vec![Vec::new(); n];
        let topic = Topic {
            topic: 7,
            partitions,
            subscribers: &subscribers,
            owners,
        };
        Dealer::new(n).topic_counted(&topic, &mut room, |m| m as usize, &mut lists);
        let lists = lists
            .iter()
            .map(|l| l.iter().map(|&(_, p)| p).collect())
            .collect();
        (lists, room)
    }

    /// Random topics with f_t = 0 where every partition is claimed, one per member: the
    /// owners are the chosen members in order (kept whole) or, half the time, some other
    /// members (one of them perhaps repeated out of order). Returns how many deals by floor
    /// and chosen differ from the general deal by counts (`Dealer::topic_counted`), and how
    /// many were kept whole.
    fn whole_topics_differing() -> (usize, usize) {
        let mut rng = crate::assignor::tests::Rng(0x701e);
        let (mut differ, mut whole) = (0, 0);
        for _ in 0..300 {
            let n = 2 + rng.below(8) as usize;
            let chosen: Vec<u32> = (0..n as u32).filter(|_| rng.below(2) == 0).collect();
            let partitions = chosen.len() as u32;
            let mut members = chosen.clone();
            if rng.below(2) == 0 {
                for m in &mut members {
                    if rng.below(3) == 0 {
                        *m = rng.below(n as u64) as u32;
                    }
                }
            }
            let owners: Vec<(i32, u32)> = members
                .iter()
                .enumerate()
                .map(|(p, &m)| (p as i32, m))
                .collect();
            whole += usize::from(members == chosen);
            let (general, _) = counted(n, partitions, 0, &chosen, &owners);
            differ += usize::from(deal(n, partitions, 0, &chosen, &owners) != general);
        }
        (differ, whole)
    }

    #[test]
    fn a_topic_kept_whole_deals_as_the_general_deal() {
        let (differ, whole) = whole_topics_differing();
        assert_eq!(differ, 0);
        assert!(whole >= 150, "only {whole} kept whole");
    }

    #[test]
    fn keeping_whole_by_counts_alone_is_caught() {
        super::planted::WHOLE_BY_COUNTS.set(true);
        let (differ, _) = whole_topics_differing();
        super::planted::WHOLE_BY_COUNTS.set(false);
        println!("kept whole by counts alone caught in {differ} of 300");
        assert!(differ >= 30, "only {differ} caught");
    }

    /// Unclaimed topics with f_t = 0 dealt by blocks of counts (`unclaimed`) are dealt as
    /// the general deal deals them: the same lists and room used up, on random topics of 1 to
    /// 80 subscribers (blocks and their remainder) with a few chosen, sometimes none in a
    /// block or all in the remainder.
    #[test]
    fn unclaimed_topics_by_blocks_deal_as_the_general_deal() {
        let mut rng = crate::assignor::tests::Rng(0xb10c);
        let mut direct = 0;
        for _ in 0..500 {
            let n = 1 + rng.below(80) as usize;
            let odds = 1 + rng.below(20);
            let chosen: Vec<u32> = (0..n as u32).filter(|_| rng.below(odds) == 0).collect();
            let partitions = chosen.len() as u32;
            direct += usize::from((partitions as usize) < n);
            let by_blocks = counted(n, partitions, 0, &chosen, &[]);
            super::UNCLAIMED_OFF.set(true);
            let general = counted(n, partitions, 0, &chosen, &[]);
            super::UNCLAIMED_OFF.set(false);
            assert_eq!(by_blocks, general, "{n} subscribers, chosen {chosen:?}");
            assert!(by_blocks.1.iter().all(|&r| r == 0));
        }
        assert!(direct > 400, "only {direct} dealt by blocks");
    }

    /// The deal by counts per subscriber is the deal by floor and chosen indices, on random
    /// topics (claims on random subscribers, some partitions unclaimed), and uses the counts
    /// up.
    #[test]
    fn counts_per_subscriber_deal_as_floor_and_chosen() {
        let mut rng = crate::assignor::tests::Rng(0xdea1);
        for _ in 0..300 {
            let n = 1 + rng.below(8) as usize;
            let floor = rng.below(3) as u32;
            let chosen: Vec<u32> = (0..n as u32).filter(|_| rng.below(3) == 0).collect();
            let partitions = floor * n as u32 + chosen.len() as u32;
            let mut owners: Vec<(i32, u32)> = Vec::new();
            for p in 0..partitions as i32 {
                if rng.below(3) > 0 {
                    owners.push((p, rng.below(n as u64) as u32));
                }
            }
            let (lists, room) = counted(n, partitions, floor, &chosen, &owners);
            assert!(room.iter().all(|&r| r == 0));
            assert_eq!(lists, deal(n, partitions, floor, &chosen, &owners));
        }
    }
}
