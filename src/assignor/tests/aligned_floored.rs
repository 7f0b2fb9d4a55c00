//! Tests of the keep-all placement with floors (`aligned/keep_all/floored.rs`): on racked
//! homogeneous joins and leaves where every topic has at least as many partitions as members,
//! it succeeds often, its results have the class flow's objective values and do not depend on
//! input order, and planted faults (the bound without its min(s, …) term; left-over
//! partitions to any rack) are caught.

use super::super::aligned::floored_tally;
use super::super::*;
use super::oracle::{Rng, checked_against_flow, feed_back, misses_the_flow};
use super::{member, topic};

/// A racked homogeneous group of 16 to 39 members after one member joined or left, every
/// topic with at least as many partitions as members (f_t ≥ 1), claims from the assignor's
/// own stable assignment: members round robin over racks a, b, c (or at random), partitions
/// on two racks (the benchmark's pattern, or two of a, b, c, d at random, d running no
/// member).
fn floored_like(rng: &mut Rng, case: usize) -> GroupSpec {
    let racks = ["a", "b", "c", "d"];
    let n = 16 + rng.below(24) as usize;
    let k = 1 + rng.below(5) as usize;
    let names: Vec<String> = (0..k).map(|t| format!("T{t}")).collect();
    let subs: Vec<&str> = names.iter().map(String::as_str).collect();
    let bench = case.is_multiple_of(2);
    let spec = GroupSpec {
        rack_aware: true,
        topics: names
            .iter()
            .enumerate()
            .map(|(t, name)| {
                let per = (n + 1) as i64 + rng.below(2 * n as u64) as i64;
                let mut x = topic(name, per);
                x.replica_racks = Some(
                    (0..per as usize)
                        .map(|p| {
                            let (a, b) = if bench {
                                ((p + t) % 3, (p + t + 1) % 3)
                            } else {
                                let first = rng.below(4) as usize;
                                (first, (first + 1 + rng.below(3) as usize) % 4)
                            };
                            vec![racks[a].to_owned(), racks[b].to_owned()]
                        })
                        .collect(),
                );
                x
            })
            .collect(),
        members: (0..n)
            .map(|m| {
                let mut x = member(&format!("M{m:02}"), &subs);
                let r = if case % 4 >= 2 {
                    rng.below(3) as usize
                } else {
                    m % 3
                };
                x.rack = Some(racks[r].to_owned());
                x
            })
            .collect(),
    };
    let stable = UniformV2.assign(&spec).unwrap();
    let mut next = feed_back(&spec, &stable);
    if case.is_multiple_of(3) {
        let gone = rng.below(n as u64) as usize;
        next.members.remove(gone);
    } else {
        let mut joiner = member("M99", &subs);
        joiner.rack = Some(racks[rng.below(3) as usize].to_owned());
        next.members.push(joiner);
    }
    next
}

/// (results with objective values other than the class flow's, placements that succeeded,
/// placements tried that failed) on 150 groups, with planted fault `fault` when given.
fn floored_verdicts(fault: Option<usize>) -> (usize, usize, usize) {
    let mut rng = Rng(149);
    let mut shuffler = Rng(151);
    let (mut wrong, mut placed, mut failed) = (0, 0, 0);
    if let Some(fault) = fault {
        floored_tally::set_fault(fault);
    }
    floored_tally::plant(fault.is_some());
    for case in 0..150 {
        let spec = floored_like(&mut rng, case);
        let before = floored_tally::get();
        let fast = if fault.is_some() {
            UniformV2.assign(&spec).unwrap()
        } else {
            checked_against_flow(case, &spec)
        };
        let after = floored_tally::get();
        failed += after[floored_tally::FAILED] - before[floored_tally::FAILED];
        if after[floored_tally::PLACED] == before[floored_tally::PLACED] {
            continue;
        }
        placed += 1;
        let order = fault.is_none().then_some(&mut shuffler);
        wrong += usize::from(misses_the_flow(&spec, &fast, order));
    }
    floored_tally::plant(false);
    (wrong, placed, failed)
}

#[test]
fn the_floored_placement_is_optimal_where_it_places_everything() {
    let (wrong, placed, failed) = floored_verdicts(None);
    println!("joins and leaves with floors: the placement placed {placed}, failed on {failed}");
    assert_eq!(wrong, 0);
    assert!(placed >= 25, "the placement placed only {placed}");
}

#[test]
fn a_floored_placement_without_the_plus_term_is_caught() {
    let (wrong, placed, _) = floored_verdicts(Some(floored_tally::NO_PLUS_TERM));
    println!("planted fault (no min(s, …) term): {wrong} of {placed} placements not optimal");
    assert!(
        wrong >= 5,
        "the planted fault went unnoticed in {placed} placements"
    );
}

#[test]
fn a_floored_placement_ignoring_racks_is_caught() {
    let (wrong, placed, _) = floored_verdicts(Some(floored_tally::ANY_RACK));
    println!("planted fault (any rack): {wrong} of {placed} placements not optimal");
    assert!(
        wrong >= 5,
        "the planted fault went unnoticed in {placed} placements"
    );
}
