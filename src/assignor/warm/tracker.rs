//! The warm start's moves without rescanning every subscription per move.
//!
//! [`Proposal::best_move`] looks at every (topic, subscriber) pair; a joiner of a large group
//! with overlapping subscriptions needs dozens of moves, so that scan dominated the warm
//! start. A move changes the loads of two members only, so [`Tracker`] keeps, per topic, the
//! sorted loads of its subscribers in each state the move rule tells apart (holding an extra,
//! short of the floor, exactly at the floor) and updates the entries of those two members.
//! The best topic then follows from the ends of those lists, and only that topic is scanned
//! to name the holder and the receiver. The moves are exactly those of
//! [`Proposal::best_move`] and [`Proposal::apply`] (a test replays both side by side).

use super::{Move, Proposal};

/// Which list of its topic a subscriber's load sits in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// More than the floor: it holds an extra.
    Holder,
    /// Less than the floor.
    Short,
    /// Exactly the floor: room for an extra.
    AtFloor,
}

/// Per topic, the subscribers' loads sorted by state, kept up to date across moves.
pub(crate) struct Tracker {
    /// Per local topic (only topics with an extra), ascending loads of its holders.
    holders: Vec<Vec<i64>>,
    /// Per local topic, ascending loads of its subscribers short of the floor.
    short: Vec<Vec<i64>>,
    /// Per local topic, ascending loads of its subscribers at the floor.
    at_floor: Vec<Vec<i64>>,
    /// Per local member, the start of its (topic, index) entries in `entries` (CSR).
    start: Vec<u32>,
    /// Every subscription of a topic with an extra, as (local topic, index in its
    /// subscribers), grouped by member.
    entries: Vec<(u32, u32)>,
}

impl Tracker {
    /// The lists of `proposal` as it stands (claims counted, extras counted in the loads).
    pub fn new(proposal: &Proposal) -> Tracker {
        let topics = proposal.subs.len();
        let members = proposal.load.len();
        let mut tracker = Tracker {
            holders: vec![Vec::new(); topics],
            short: vec![Vec::new(); topics],
            at_floor: vec![Vec::new(); topics],
            start: vec![0; members + 1],
            entries: Vec::new(),
        };
        for lt in (0..topics).filter(|&lt| proposal.has_extra[lt]) {
            for (i, &m) in proposal.subs[lt].iter().enumerate() {
                tracker.start[m as usize + 1] += 1;
                let load = proposal.load[m as usize];
                tracker.list(proposal, lt, i).push(load);
            }
            tracker.holders[lt].sort_unstable();
            tracker.short[lt].sort_unstable();
            tracker.at_floor[lt].sort_unstable();
        }
        for m in 0..members {
            tracker.start[m + 1] += tracker.start[m];
        }
        let mut fill = tracker.start.clone();
        tracker.entries = vec![(0, 0); tracker.start[members] as usize];
        for lt in (0..topics).filter(|&lt| proposal.has_extra[lt]) {
            for (i, &m) in proposal.subs[lt].iter().enumerate() {
                tracker.entries[fill[m as usize] as usize] = (lt as u32, i as u32);
                fill[m as usize] += 1;
            }
        }
        tracker
    }

    fn state(proposal: &Proposal, lt: usize, i: usize) -> State {
        let (k, f) = (proposal.count[lt][i], proposal.floor[lt]);
        match k.cmp(&f) {
            std::cmp::Ordering::Greater => State::Holder,
            std::cmp::Ordering::Less => State::Short,
            std::cmp::Ordering::Equal => State::AtFloor,
        }
    }

    /// The list subscriber `i` of topic `lt` belongs in.
    fn list(&mut self, proposal: &Proposal, lt: usize, i: usize) -> &mut Vec<i64> {
        match Self::state(proposal, lt, i) {
            State::Holder => &mut self.holders[lt],
            State::Short => &mut self.short[lt],
            State::AtFloor => &mut self.at_floor[lt],
        }
    }

    /// Takes member `m`'s entries out of (`insert` false) or into (true) its topics' lists.
    fn update(&mut self, proposal: &Proposal, m: u32, insert: bool) {
        let load = proposal.load[m as usize];
        let range = self.start[m as usize] as usize..self.start[m as usize + 1] as usize;
        for j in range {
            let (lt, i) = self.entries[j];
            let list = self.list(proposal, lt as usize, i as usize);
            let at = list.partition_point(|&x| x < load);
            if insert {
                list.insert(at, load);
            } else {
                debug_assert_eq!(list.get(at), Some(&load));
                list.remove(at);
            }
        }
    }

    /// The priority [`Proposal::best_in`] gives topic `lt`, from the lists alone.
    fn priority(&self, lt: usize) -> Option<i64> {
        let hi = *self.holders[lt].last()?;
        if !self.short[lt].is_empty() {
            return Some(i64::MAX);
        }
        let lo = *self.at_floor[lt].first()?;
        (hi >= lo + 2).then_some(hi - lo)
    }

    /// Whether the proposal certainly has a negative cycle, as [`Proposal::hopeless`].
    pub fn hopeless(&self) -> bool {
        (0..self.holders.len()).any(|lt| self.priority(lt).is_some())
    }

    /// The same move as [`Proposal::best_move`] on `proposal`, which must be the proposal
    /// this tracker was built from with every move since applied through [`Tracker::apply`].
    pub fn best_move(
        &self,
        proposal: &Proposal,
        suits: &dyn Fn(usize, usize, usize) -> bool,
    ) -> Option<Move> {
        let mut best: Option<(i64, usize)> = None;
        for lt in 0..self.holders.len() {
            if let Some(gap) = self.priority(lt)
                && best.is_none_or(|(g, _)| gap > g)
            {
                best = Some((gap, lt));
            }
        }
        let (_, topic) = best?;
        let (_, from, to) = proposal.best_in(topic, suits)?;
        Some(Move { topic, from, to })
    }

    /// Applies `mv` to `proposal` (as [`Proposal::apply`]) and updates the lists.
    pub fn apply(&mut self, proposal: &mut Proposal, mv: Move) {
        let (a, b) = (
            proposal.subs[mv.topic][mv.from],
            proposal.subs[mv.topic][mv.to],
        );
        self.update(proposal, a, false);
        self.update(proposal, b, false);
        proposal.apply(mv);
        self.update(proposal, a, true);
        self.update(proposal, b, true);
    }
}
