//! Tests of the quota-steered placement of first assignments (`aligned/keep_all/fresh.rs`):
//! it runs and succeeds on racked first assignments where every topic is open, its results
//! have the class flow's objective values, do not depend on input order and are fixed
//! points, and a planted fault (quotas ignored) is caught.

use super::super::aligned::fresh_tally;
use super::super::*;
use super::oracle::{Rng, checked_against_flow, misses_the_flow};
use super::{member, topic};

/// A racked homogeneous first assignment with every topic open: 16 to 47 members in racks
/// a, b, c (round robin, or at random), each partition on two of a, b, c, d (no member runs
/// in d, so some partitions have one member rack); either many topics of one partition (the
/// benchmark's 100m × 10ppm × 1000t shape) or a few topics of a few partitions.
fn fresh_like(rng: &mut Rng, case: usize) -> GroupSpec {
    let racks = ["a", "b", "c", "d"];
    let n = 16 + rng.below(32) as usize;
    let (k, per) = if case.is_multiple_of(2) {
        (n + rng.below(2 * n as u64) as usize, 1)
    } else {
        let k = 1 + rng.below(4) as usize;
        (k, 1 + rng.below((n / k) as u64) as i64)
    };
    let names: Vec<String> = (0..k).map(|t| format!("T{t}")).collect();
    let subs: Vec<&str> = names.iter().map(String::as_str).collect();
    let skewed = case % 4 >= 2;
    GroupSpec {
        rack_aware: true,
        topics: names
            .iter()
            .map(|name| {
                let mut x = topic(name, per);
                x.replica_racks = Some(
                    (0..per)
                        .map(|_| {
                            let first = rng.below(4) as usize;
                            let second = (first + 1 + rng.below(3) as usize) % 4;
                            vec![racks[first].to_owned(), racks[second].to_owned()]
                        })
                        .collect(),
                );
                x
            })
            .collect(),
        members: (0..n)
            .map(|m| {
                let mut x = member(&format!("M{m:02}"), &subs);
                let r = if skewed { rng.below(3) as usize } else { m % 3 };
                x.rack = Some(racks[r].to_owned());
                x
            })
            .collect(),
    }
}

/// (results with objective values other than the class flow's, placements that succeeded,
/// placements that failed) on 120 first assignments, with the planted fault when `planted`.
fn fresh_verdicts(planted: bool) -> (usize, usize, usize) {
    let mut rng = Rng(131);
    let mut shuffler = Rng(137);
    let (mut wrong, mut placed, mut failed) = (0, 0, 0);
    fresh_tally::plant(planted);
    for case in 0..120 {
        let spec = fresh_like(&mut rng, case);
        let before = fresh_tally::get();
        let fast = if planted {
            UniformV2.assign(&spec).unwrap()
        } else {
            checked_against_flow(case, &spec)
        };
        let after = fresh_tally::get();
        failed += after[fresh_tally::FAILED] - before[fresh_tally::FAILED];
        if after[fresh_tally::PLACED] == before[fresh_tally::PLACED] {
            continue;
        }
        placed += 1;
        let order = (!planted).then_some(&mut shuffler);
        wrong += usize::from(misses_the_flow(&spec, &fast, order));
    }
    fresh_tally::plant(false);
    (wrong, placed, failed)
}

#[test]
fn the_fresh_placement_is_optimal_where_it_places_everything() {
    let (wrong, placed, failed) = fresh_verdicts(false);
    println!("first assignments: the quota placement placed {placed}, failed on {failed}");
    assert_eq!(wrong, 0);
    assert!(placed >= 30, "the quota placement placed only {placed}");
}

#[test]
fn a_fresh_placement_ignoring_its_quotas_is_caught() {
    let (wrong, placed, _) = fresh_verdicts(true);
    println!("planted fault: {wrong} of {placed} placements not optimal");
    assert!(
        wrong > 0,
        "the planted fault went unnoticed in {placed} placements"
    );
}
