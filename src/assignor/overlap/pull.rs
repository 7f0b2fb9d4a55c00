//! The proposal's moves towards light members: each extra moved from a holder of one of a
//! light member's topics that is at least two units heavier, for one light member at a time,
//! lightest first.
//!
//! This replaces, on the count path, the warm start's tracked moves ([`super::super::warm`]),
//! which keep every topic's loads sorted: here the light members (a joiner, typically) are few
//! and only their topics are looked at, each topic's heaviest holder found by a scan that is
//! repeated only for the topic a move was made in or a stale maximum was read from. Nothing
//! here decides the result: the bounds, else the flow, do.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::super::warm::{MAX_MOVES, Proposal};
use super::cells::Gaining;

/// Moves up to [`MAX_MOVES`] extras in `proposal` (every subscriber at f_t or f_t + 1) towards
/// the light members: those with room for an extra (fewer than `degree[lm]`) at least two
/// units lighter than the heaviest holder of an extra. For each, lightest first (ties to the
/// lower index): while one of its topics where it has room has a holder at least two units
/// heavier, the extra moves from the heaviest such holder of the topic with the heaviest
/// holder (ties to the lower topic), preferring a holder that does not gain from it
/// (`gaining.flags(lt)[i]`; an empty list: none gains), then one that `suits(lt, holder, receiver)`
/// (indices among the topic's subscribers; the rack-aware path prefers a holder whose
/// partition the receiver could align; `None`: none suits better than another), then the
/// lower index. `topics_of(lm, out)` lists lm's local topics.
pub(crate) fn pull(
    proposal: &mut Proposal,
    gaining: &(impl Gaining + ?Sized),
    base: &[i64],
    degree: &[i32],
    topics_of: &dyn Fn(usize, &mut Vec<usize>),
    suits: Option<&dyn Fn(usize, usize, usize) -> bool>,
) {
    let n = base.len();
    let extras = |p: &Proposal, lm: usize| p.load[lm] - base[lm];
    let Some(heaviest) = (0..n)
        .filter(|&lm| extras(proposal, lm) > 0)
        .map(|lm| proposal.load[lm])
        .max()
    else {
        return;
    };
    let mut light: Vec<(i64, usize)> = (0..n)
        .filter(|&lm| extras(proposal, lm) < i64::from(degree[lm]))
        .map(|lm| (proposal.load[lm], lm))
        .filter(|&(load, _)| load + 2 <= heaviest)
        .collect();
    light.sort_unstable();
    // Per topic: the heaviest holder's load as last scanned (`None`: not scanned since a
    // move in it).
    let mut top: Vec<Option<i64>> = vec![None; proposal.subs.len()];
    let mut topics = Vec::new();
    let mut moves = 0;
    for (at, &(_, v)) in light.iter().enumerate() {
        // The last light member scans a topic only once it could be the best (see
        // `lazy_bound`); the others scan all theirs first, as the members after them read
        // those maxima.
        let lazy = at + 1 == light.len() && lazy_wanted();
        topics_of(v, &mut topics);
        // (topic, v's index among its subscribers) where v has room.
        let open: Vec<(usize, usize)> = topics
            .iter()
            .filter(|&&lt| proposal.has_extra[lt])
            .filter_map(|&lt| {
                let i = proposal.subs[lt].binary_search(&(v as u32)).ok()?;
                (proposal.count[lt][i] == proposal.floor[lt]).then_some((lt, i))
            })
            .collect();
        let scan = |proposal: &Proposal, lt: usize, i: usize| {
            heaviest_holder(proposal, gaining, lt, i, suits).map_or(i64::MIN, |h| h.0)
        };
        if moves >= MAX_MOVES || open.is_empty() {
            continue;
        }
        if !lazy {
            for &(lt, i) in &open {
                if top[lt].is_none() {
                    top[lt] = Some(scan(proposal, lt, i));
                }
            }
        }
        let bound = lazy_bound(heaviest);
        // The open topics by (maximum read, lower topic first): a topic unscanned reads the
        // bound. Only the topic taken out changes its maximum (scanned, rescanned, or moved
        // in and closed), and it goes back with its new one, so the queue's first is always
        // the open topic of the largest (maximum read, reversed topic), as a pass over them
        // would find (topics are distinct, so no two keys tie): O(log) a step, not O(open).
        let mut queue: BinaryHeap<(i64, Reverse<usize>, usize)> = open
            .iter()
            .map(|&(lt, i)| (top[lt].unwrap_or(bound), Reverse(lt), i))
            .collect();
        while moves < MAX_MOVES {
            let need = proposal.load[v] + 2;
            let Some((_, Reverse(lt), i)) = queue.pop() else {
                break;
            };
            let Some(read) = top[lt] else {
                // Unscanned (the last member's lazy scan): read, then compared again.
                let read = scan(proposal, lt, i);
                top[lt] = Some(read);
                queue.push((read, Reverse(lt), i));
                continue;
            };
            if read < need {
                break;
            }
            // The cached maximum may be stale (its holder gave an extra elsewhere): rescan.
            let Some((load, from)) = heaviest_holder(proposal, gaining, lt, i, suits) else {
                top[lt] = Some(i64::MIN);
                queue.push((i64::MIN, Reverse(lt), i));
                continue;
            };
            if load != read {
                top[lt] = Some(load);
                queue.push((load, Reverse(lt), i));
                continue;
            }
            let holder = proposal.subs[lt][from] as usize;
            proposal.count[lt][from] -= 1;
            proposal.count[lt][i] += 1;
            proposal.load[holder] -= 1;
            proposal.load[v] += 1;
            top[lt] = None;
            moves += 1;
        }
    }
}

/// What the last light member takes a topic it has not scanned to hold at most: `heaviest`,
/// the heaviest load of a member holding an extra when the moves began, which no holder ever
/// exceeds (holders only lose extras; a receiver gains only while two units lighter than the
/// holder it takes from). The choice of a topic picks the largest value read, scans it if it
/// was not scanned, rescans it if its holder changed: it ends on the same topic whether an
/// unscanned topic reads this bound or its scanned maximum (both are at least the topic's
/// heaviest holder, and those from members before are read alike either way), so the moves
/// are those of scanning every topic first (proofs/PROOFS.md, "the last light member scans
/// lazily"). Only the last member: the members after one read the maxima it scanned.
fn lazy_bound(heaviest: i64) -> i64 {
    #[cfg(test)]
    if BOUND_LOW.get() {
        return heaviest - 1;
    }
    heaviest
}

/// Whether the last light member scans lazily (always, except in tests asking for the
/// general path).
fn lazy_wanted() -> bool {
    #[cfg(test)]
    if EAGER.get() {
        return false;
    }
    true
}

/// The heaviest holder of topic `lt`'s extra: (its load, its index), preferring one that does
/// not gain from it, then one that suits receiver `to` (with `suits`), then the lower index.
fn heaviest_holder(
    proposal: &Proposal,
    gaining: &(impl Gaining + ?Sized),
    lt: usize,
    to: usize,
    suits: Option<&dyn Fn(usize, usize, usize) -> bool>,
) -> Option<(i64, usize)> {
    let f = proposal.floor[lt];
    let Some(suits) = suits else {
        // Nothing suits better: the first holder of the greatest (load, gains nothing), as
        // 2·load + 1 for one that gains nothing (an integer, so that the scan can select
        // without branching). Most holders tie on the load, so asking `suits` of each cost
        // most of the scan.
        let (subs, count, load) = (&proposal.subs[lt], &proposal.count[lt], &proposal.load);
        let mut best = (i64::MIN, 0);
        // Only holders are looked at (read by count first: most subscribers hold none).
        let mut consider = |i: usize, gains: bool| {
            let key = 2 * load[subs[i] as usize] + i64::from(!gains);
            #[cfg(test)]
            if LAST_OF_TIES.get() && key == best.0 {
                best = (key, i);
            }
            if key > best.0 {
                best = (key, i);
            }
        };
        let gains = gaining.flags(lt);
        if gains.is_empty() {
            for (i, &k) in count.iter().enumerate() {
                if k > f {
                    consider(i, false);
                }
            }
        } else {
            for (i, (&k, &g)) in count.iter().zip(gains).enumerate() {
                if k > f {
                    consider(i, g);
                }
            }
        }
        return (best.0 > i64::MIN).then_some((best.0 >> 1, best.1));
    };
    let gains = gaining.flags(lt);
    let mut best: Option<(i64, bool, bool, usize)> = None;
    for (i, (&lm, &k)) in proposal.subs[lt]
        .iter()
        .zip(&proposal.count[lt])
        .enumerate()
    {
        if k <= f {
            continue;
        }
        let load = proposal.load[lm as usize];
        let free = !gains.get(i).is_some_and(|&g| g);
        // Not better, or only as good as a suited holder of a lower index: `suits` is not
        // asked.
        if best.is_some_and(|(l, g, s, _)| (load, free) < (l, g) || ((load, free) == (l, g) && s)) {
            continue;
        }
        let suited = suits(lt, i, to);
        if best.is_none_or(|(l, g, s, _)| (load, free, suited) > (l, g, s)) {
            best = Some((load, free, suited, i));
        }
    }
    best.map(|(load, _, _, i)| (load, i))
}

#[cfg(test)]
thread_local! {
    /// Tests only: a planted fault, without `suits` the last of the holders tied on (load,
    /// gains nothing) is taken instead of the first.
    static LAST_OF_TIES: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: the last light member scans every topic first, as the others do (the
    /// general path).
    static EAGER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: a planted fault, the last light member takes a topic it has not scanned to
    /// hold at most one unit less than the heaviest holder of an extra.
    static BOUND_LOW: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assignor::warm::Ragged;

    /// Two topics (f = 0): members 0–2 hold one extra of each, member 3 (a joiner on both)
    /// holds nothing. Member 0's extra of topic 0 gains, member 1's does not.
    fn joiner() -> Proposal {
        Proposal {
            floor: vec![0, 0],
            has_extra: vec![true, true],
            extra: vec![3, 3],
            subs: vec![vec![0, 1, 2, 3], vec![0, 1, 2, 3]].into(),
            count: vec![vec![1, 1, 1, 0], vec![1, 1, 1, 0]].into(),
            load: vec![2, 2, 2, 0],
        }
    }

    fn topics_of(_: usize, out: &mut Vec<usize>) {
        out.clear();
        out.extend([0, 1]);
    }

    #[test]
    fn the_joiner_takes_from_the_heaviest_holder_that_does_not_gain() {
        let mut p = joiner();
        let gaining = [vec![true, false, false, false], vec![false; 4]];
        pull(&mut p, &gaining[..], &[0; 4], &[2; 4], &topics_of, None);
        // Topic 0 first (ties to the lower topic), from member 1 (member 0 gains); then no
        // holder of topic 1 is two units heavier than the joiner any more.
        assert_eq!(p.count, vec![vec![1, 0, 1, 1], vec![1, 1, 1, 0]]);
        assert_eq!(p.load, vec![2, 1, 2, 1]);
    }

    /// A random input of [`pull`], with every member's local topics.
    struct Case {
        proposal: Proposal,
        gaining: Vec<Vec<bool>>,
        base: Vec<i64>,
        degree: Vec<i32>,
        topics: Vec<Vec<usize>>,
    }

    impl Case {
        /// The counts and loads [`pull`] leaves on a copy of the case's proposal.
        fn pulled(
            &self,
            suits: Option<&dyn Fn(usize, usize, usize) -> bool>,
        ) -> (Ragged<i32>, Vec<i64>) {
            let topics_of = |lm: usize, out: &mut Vec<usize>| {
                out.clear();
                out.extend(&self.topics[lm]);
            };
            let mut q = self.proposal.clone();
            pull(
                &mut q,
                &self.gaining[..],
                &self.base,
                &self.degree,
                &topics_of,
                suits,
            );
            (q.count, q.load)
        }
    }

    /// A random case over `n` members: each topic on about two thirds of them, f_t 0 or 1,
    /// some of its r_t extras held; B_m random plus the floors, loads B_m plus the extras
    /// held; about a quarter of the subscribers gaining.
    fn random(rng: &mut crate::assignor::tests::Rng, n: usize, topics: usize) -> Case {
        let mut c = Case {
            proposal: Proposal {
                floor: Vec::new(),
                has_extra: Vec::new(),
                extra: Vec::new(),
                subs: Default::default(),
                count: Default::default(),
                load: Vec::new(),
            },
            gaining: Vec::new(),
            base: (0..n).map(|_| rng.below(4) as i64).collect(),
            degree: vec![0; n],
            topics: vec![Vec::new(); n],
        };
        let mut extras = vec![0i64; n];
        for lt in 0..topics {
            let subs: Vec<u32> = (0..n as u32).filter(|_| rng.below(3) > 0).collect();
            let f = rng.below(2) as i32;
            let r = if subs.len() > 1 {
                rng.below(subs.len() as u64) as i32
            } else {
                0
            };
            let mut held = 0;
            let mut count = Vec::with_capacity(subs.len());
            for &m in &subs {
                let extra = held < r && rng.below(3) > 0;
                held += i32::from(extra);
                count.push(f + i32::from(extra));
                c.base[m as usize] += i64::from(f);
                extras[m as usize] += i64::from(extra);
                c.degree[m as usize] += i32::from(r > 0);
                c.topics[m as usize].push(lt);
            }
            c.gaining
                .push(subs.iter().map(|_| rng.below(4) == 0).collect());
            let p = &mut c.proposal;
            p.floor.push(f);
            p.has_extra.push(r > 0);
            p.extra.push(r);
            p.subs.push(subs);
            p.count.push(count);
        }
        c.proposal.load = c.base.iter().zip(&extras).map(|(b, e)| b + e).collect();
        c
    }

    /// Without `suits`, the moves are those with a `suits` that prefers no holder, on random
    /// proposals; taking the last holder of a tie instead of the first (a planted fault) is
    /// caught.
    #[test]
    fn no_suits_moves_as_a_suits_that_prefers_none() {
        let mut rng = crate::assignor::tests::Rng(0x9011);
        let (mut moved, mut caught) = (0, 0);
        for _ in 0..300 {
            let n = 3 + rng.below(10) as usize;
            let topics = 1 + rng.below(5) as usize;
            let c = random(&mut rng, n, topics);
            let run = |suits: Option<&dyn Fn(usize, usize, usize) -> bool>, planted: bool| {
                LAST_OF_TIES.set(planted);
                let pulled = c.pulled(suits);
                LAST_OF_TIES.set(false);
                pulled
            };
            let none = run(None, false);
            assert_eq!(none, run(Some(&|_, _, _| false), false));
            moved += usize::from(none.0 != c.proposal.count);
            caught += usize::from(run(None, true) != none);
        }
        assert!(moved > 50, "moves made in {moved} cases");
        assert!(caught > 10, "planted fault caught {caught} times");
    }

    #[test]
    fn members_within_one_of_every_holder_pull_nothing() {
        let mut p = joiner();
        p.load = vec![2, 2, 2, 1];
        p.count = vec![vec![1, 1, 1, 0], vec![1, 1, 0, 1]].into();
        let before = p.clone();
        pull(
            &mut p,
            &[vec![false; 4], vec![false; 4]][..],
            &[0; 4],
            &[2; 4],
            &topics_of,
            None,
        );
        assert_eq!(p.count, before.count);
        assert_eq!(p.load, before.load);
    }

    /// The last light member's lazy scans move as scanning every topic first (the general
    /// path) on random proposals, with and without a `suits`; an unscanned topic bounded one
    /// unit too low (a planted fault) is caught.
    #[test]
    fn lazy_scans_move_as_scanning_every_topic_first() {
        let mut rng = crate::assignor::tests::Rng(0x1a2b);
        let (mut moved, mut caught) = (0, 0);
        for round in 0..2000 {
            let n = 3 + rng.below(12) as usize;
            let topics = 1 + rng.below(6) as usize;
            let c = random(&mut rng, n, topics);
            let odd = |_: usize, from: usize, _: usize| from % 2 == 1;
            let suits: Option<&dyn Fn(usize, usize, usize) -> bool> =
                if round % 2 == 0 { None } else { Some(&odd) };
            let run = |eager: bool, planted: bool| {
                EAGER.set(eager);
                BOUND_LOW.set(planted);
                let pulled = c.pulled(suits);
                EAGER.set(false);
                BOUND_LOW.set(false);
                pulled
            };
            let general = run(true, false);
            assert_eq!(run(false, false), general);
            moved += usize::from(general.0 != c.proposal.count);
            caught += usize::from(run(false, true) != general);
        }
        println!("lazy scans: moves in {moved} of 2000 cases, planted fault caught {caught}");
        assert!(moved > 400, "moves made in {moved} cases");
        assert!(caught > 10, "planted fault caught {caught} times");
    }
}
