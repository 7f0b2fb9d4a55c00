//! The warm start the uniform v2 assignor proposes to its flow solver: every claim kept,
//! then, where that is evidently not optimal, a few extras moved from heavy holders to light
//! subscribers (tracked per topic by [`tracker`], so that a move costs no scan of every
//! subscription); when the claims keep little (nothing in a full assignment), the other units
//! handed out greedily ([`greedy`]); otherwise the floors still short filled from the units
//! no claim keeps ([`Proposal::fill_floors`]), so that the proposal has no negative cycle
//! through a free unit and a short floor.
//!
//! Nothing here decides the result. The solver uses a proposal only if it certifies it as
//! minimum-cost for its value (see [`super::flow`]), and starts from zero flow otherwise:
//! these rules only make certification likely in the common cases (members leaving, nothing
//! changed, one member joining) and skip it where it would certainly fail.

mod greedy;
mod ragged;
mod tracker;

#[cfg(test)]
pub(crate) use greedy::GREEDY_OFF;
pub(crate) use greedy::{ClassRoute, greedy_wanted, route_topic};
pub(crate) use ragged::Ragged;
pub(crate) use tracker::Tracker;

#[cfg(test)]
thread_local! {
    /// Tests only: nothing is proposed (the solver starts cold), for a reference result.
    pub(crate) static WARM_OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: [`Proposal::fill_floors`] reports the units it hands out but forgets to
    /// count them (a planted fault: the proposal is then no flow).
    pub(crate) static FILL_PLANTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: the proposals whose short floors [`Proposal::fill_floors`] filled.
    pub(crate) static FILLED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Whether a warm start is proposed at all (always, except in tests asking for a cold
/// reference).
pub(crate) fn warm_wanted() -> bool {
    #[cfg(test)]
    if WARM_OFF.with(std::cell::Cell::get) {
        return false;
    }
    true
}

use super::components::Component;
use super::problem::Problem;

/// Units held per (topic, subscriber) and the resulting loads, for one component.
#[derive(Clone)]
pub(crate) struct Proposal {
    /// Per local topic: f_t.
    pub floor: Vec<i32>,
    /// Per local topic: whether r_t > 0 (an extra exists).
    pub has_extra: Vec<bool>,
    /// Per local topic: r_t, the number of extras.
    pub extra: Vec<i32>,
    /// Per local topic: its subscribers as local member indices, ascending.
    pub subs: Ragged<u32>,
    /// Per local topic, per subscriber (same order as `subs`): units of the topic held.
    pub count: Ragged<i32>,
    /// Per local member: B_m plus the extras held (the load the convex costs see).
    pub load: Vec<i64>,
}

/// One extra moved: of local topic `topic`, from subscriber `from` to subscriber `to`
/// (indices into that topic's subscribers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Move {
    /// Local topic.
    pub topic: usize,
    /// Index of the holder among the topic's subscribers.
    pub from: usize,
    /// Index of the receiver among the topic's subscribers.
    pub to: usize,
}

/// At most this many extras are moved before the proposal is given up: a joiner needs about
/// its fair share; more moves mean the claims are far from optimal anyway.
pub(crate) const MAX_MOVES: usize = 64;

/// Every topic's subscribers of `comp` as local indices of its members, ascending.
fn local_subscribers(problem: &Problem<'_>, comp: &Component) -> Ragged<u32> {
    let subscribers = |t: u32| &problem.subscribers[t as usize];
    let total = comp.topics.iter().map(|&t| subscribers(t).len()).sum();
    let mut subs = Ragged::with_capacity(comp.topics.len(), total);
    // A component of every member (the usual case) numbers them as the problem does.
    let whole = comp.holds_every_member(problem.members.len());
    for &t in &comp.topics {
        if whole {
            subs.push_slice(subscribers(t));
        } else {
            subs.push(
                subscribers(t)
                    .iter()
                    .map(|&m| comp.members.partition_point(|&x| x < m) as u32),
            );
        }
    }
    subs
}

impl Proposal {
    /// An empty proposal for `comp`, whose topics have floors `floor` and remainders
    /// `extra`, and whose members have B_m = `base`.
    pub fn new(
        problem: &Problem<'_>,
        comp: &Component,
        floor: &[u32],
        extra: &[u32],
        base: &[i64],
    ) -> Proposal {
        let subs = local_subscribers(problem, comp);
        Proposal {
            floor: floor.iter().map(|&f| f as i32).collect(),
            has_extra: extra.iter().map(|&r| r > 0).collect(),
            extra: extra.iter().map(|&r| r as i32).collect(),
            count: subs.filled(0),
            subs,
            load: base.to_vec(),
        }
    }

    /// [`Proposal::new`] with every subscriber at its floor: `count[lt]` all f_t and `load`
    /// B_m (Σ of the floors of m's topics), computed here in the pass that lists the
    /// subscribers, so that the caller needs no pass of its own for B.
    // Inlined: out of line, the loops of its caller (`overlap::choose_with`) compiled slower.
    #[inline]
    pub fn at_floors(
        problem: &Problem<'_>,
        comp: &Component,
        floor: &[u32],
        extra: &[u32],
    ) -> Proposal {
        let mut load = vec![0i64; comp.members.len()];
        let subs = local_subscribers(problem, comp);
        // Row by row: a short fill each (one long zeroed buffer costs more, per byte).
        let mut count = Ragged::with_capacity(subs.len(), subs.iter().map(<[u32]>::len).sum());
        for (local, &f) in subs.iter().zip(floor) {
            // Overlapping groups are mostly topics with more subscribers than partitions.
            if f > 0 {
                for &lm in local {
                    load[lm as usize] += i64::from(f);
                }
            }
            count.push_filled(f as i32, local.len());
        }
        Proposal {
            floor: floor.iter().map(|&f| f as i32).collect(),
            has_extra: extra.iter().map(|&r| r > 0).collect(),
            extra: extra.iter().map(|&r| r as i32).collect(),
            count,
            subs,
            load,
        }
    }

    /// Adds the extras held (units beyond the floor) to the loads, once the claims are
    /// counted in.
    pub fn count_extras(&mut self) {
        for (lt, counts) in self.count.iter().enumerate() {
            for (&lm, &k) in self.subs[lt].iter().zip(counts) {
                self.load[lm as usize] += i64::from((k - self.floor[lt]).max(0));
            }
        }
    }

    /// Fills the floors still short with the units no subscriber holds: to the short
    /// subscribers of each topic in index order. Loads do not change (they count floors in
    /// full). Returns the units each subscriber of each topic took, or `None` (nothing
    /// changed) when no floor is short or no unit is free.
    pub fn fill_floors(&mut self) -> Option<Vec<Vec<i32>>> {
        let mut taken: Option<Vec<Vec<i32>>> = None;
        for lt in 0..self.subs.len() {
            let f = self.floor[lt];
            let n = self.subs[lt].len() as i64;
            let held: i64 = self.count[lt].iter().map(|&k| i64::from(k)).sum();
            let mut free = i64::from(f) * n + i64::from(self.extra[lt]) - held;
            for i in 0..self.subs[lt].len() {
                if free <= 0 {
                    break;
                }
                let short = i64::from(f - self.count[lt][i]);
                if short <= 0 {
                    continue;
                }
                let x = short.min(free) as i32;
                free -= i64::from(x);
                #[cfg(test)]
                if FILL_PLANTED.with(std::cell::Cell::get) {
                    self.count[lt][i] -= x;
                }
                self.count[lt][i] += x;
                let taken = taken
                    .get_or_insert_with(|| self.subs.iter().map(|s| vec![0; s.len()]).collect());
                taken[lt][i] += x;
            }
        }
        #[cfg(test)]
        if taken.is_some() {
            FILLED.with(|c| c.set(c.get() + 1));
        }
        taken
    }

    /// Whether the proposal certainly has a negative residual cycle, so that certifying it
    /// would be wasted work: some subscriber of a topic misses part of its floor while another
    /// holds an extra of it (moving the extra fills a floor), or a subscriber with room for an
    /// extra is at least two units lighter than a holder of one (moving it lowers Σ load²).
    pub fn hopeless(&self) -> bool {
        (0..self.subs.len()).any(|lt| self.best_in(lt, &|_, _, _| false).is_some())
    }

    /// The move of topic `lt` from its heaviest holder of an extra to its lightest
    /// subscriber short of its floor, or else to its lightest subscriber with room for an
    /// extra if they differ by two or more: (priority, from, to). Filling a floor comes first
    /// (it gains in a more important objective). Among the heaviest holders, one for which
    /// `suits(lt, from, to)` is preferred (the caller's rack alignment); other ties go to the
    /// lower index.
    fn best_in(
        &self,
        lt: usize,
        suits: &dyn Fn(usize, usize, usize) -> bool,
    ) -> Option<(i64, usize, usize)> {
        if !self.has_extra[lt] {
            return None;
        }
        let f = self.floor[lt];
        let mut heaviest: Option<i64> = None;
        let mut short: Option<(i64, usize)> = None;
        let mut light: Option<(i64, usize)> = None;
        for (&m, &k) in self.subs[lt].iter().zip(&self.count[lt]) {
            let load = self.load[m as usize];
            if k > f {
                heaviest = Some(heaviest.map_or(load, |l| l.max(load)));
            }
        }
        for (i, (&m, &k)) in self.subs[lt].iter().zip(&self.count[lt]).enumerate() {
            let load = self.load[m as usize];
            let lighter = |best: Option<(i64, usize)>| best.is_none_or(|(l, _)| load < l);
            if k < f && lighter(short) {
                short = Some((load, i));
            } else if k == f && lighter(light) {
                light = Some((load, i));
            }
        }
        let hi = heaviest?;
        let (priority, to) = match (short, light) {
            (Some((_, to)), _) => (i64::MAX, to),
            (None, Some((lo, to))) if hi >= lo + 2 => (hi - lo, to),
            _ => return None,
        };
        let holders = self.subs[lt].iter().zip(&self.count[lt]).enumerate();
        let mut heavy = holders.filter(|&(_, (&m, &k))| k > f && self.load[m as usize] == hi);
        let first = heavy.clone().next()?.0;
        let from = heavy
            .find(|&(i, _)| suits(lt, i, to))
            .map_or(first, |(i, _)| i);
        Some((priority, from, to))
    }

    /// The move with the largest priority over all topics (ties to the lower topic), if any;
    /// `suits` as for the holder choice above.
    pub fn best_move(&self, suits: &dyn Fn(usize, usize, usize) -> bool) -> Option<Move> {
        let mut best: Option<(i64, Move)> = None;
        for lt in 0..self.subs.len() {
            if let Some((gap, from, to)) = self.best_in(lt, suits)
                && best.is_none_or(|(g, _)| gap > g)
            {
                best = Some((
                    gap,
                    Move {
                        topic: lt,
                        from,
                        to,
                    },
                ));
            }
        }
        best.map(|(_, mv)| mv)
    }

    /// Applies `mv`: the holder loses its extra; the receiver fills a floor unit (its load,
    /// which counts floors in full, stays) or gains an extra.
    pub fn apply(&mut self, mv: Move) {
        let subs = &self.subs[mv.topic];
        let filled_floor = self.count[mv.topic][mv.to] < self.floor[mv.topic];
        self.count[mv.topic][mv.from] -= 1;
        self.count[mv.topic][mv.to] += 1;
        self.load[subs[mv.from] as usize] -= 1;
        if !filled_floor {
            self.load[subs[mv.to] as usize] += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One topic (f = 0, an extra exists) held by members 0 and 1, member 2 holding nothing.
    fn joiner() -> Proposal {
        Proposal {
            floor: vec![0],
            has_extra: vec![true],
            extra: vec![2],
            subs: vec![vec![0, 1, 2]].into(),
            count: vec![vec![1, 1, 0]].into(),
            load: vec![5, 4, 0],
        }
    }

    #[test]
    fn a_light_subscriber_takes_an_extra_from_the_heaviest_holder() {
        let mut p = joiner();
        assert!(p.hopeless());
        let mv = p.best_move(&|_, _, _| false).unwrap();
        assert_eq!(
            mv,
            Move {
                topic: 0,
                from: 0,
                to: 2
            }
        );
        p.apply(mv);
        assert_eq!(p.load, vec![4, 4, 1]);
        assert_eq!(p.count, vec![vec![0, 1, 1]]);
    }

    #[test]
    fn a_suitable_holder_is_preferred_among_the_heaviest() {
        let mut p = joiner();
        p.load = vec![5, 5, 0];
        assert_eq!(p.best_move(&|_, _, _| false).unwrap().from, 0);
        assert_eq!(p.best_move(&|_, from, _| from == 1).unwrap().from, 1);
    }

    #[test]
    fn loads_within_one_are_left_alone() {
        let mut p = joiner();
        p.load = vec![3, 3, 2];
        assert!(!p.hopeless());
        assert_eq!(p.best_move(&|_, _, _| false), None);
    }

    #[test]
    fn a_missing_floor_is_filled_first_from_a_held_extra() {
        let mut p = joiner();
        p.floor = vec![1];
        p.count = vec![vec![2, 1, 0]].into();
        p.load = vec![2, 1, 1];
        assert!(p.hopeless());
        let mv = p.best_move(&|_, _, _| false).unwrap();
        assert_eq!(
            mv,
            Move {
                topic: 0,
                from: 0,
                to: 2
            }
        );
        p.apply(mv);
        assert_eq!(p.load, vec![1, 1, 1]);
        assert!(!p.hopeless());
    }
}
