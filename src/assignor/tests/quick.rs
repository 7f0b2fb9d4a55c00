//! Tests of the quick choice of extras in the rack-aware fast path (`aligned.rs`, through
//! `homogeneous::quick_extras`): on groups of at least 16 members where no claim gains
//! (a first assignment) it is taken and its results equal the flow's in objective values;
//! where cells gain it is not taken; a planted fault (the rotation whoever gains, accepted
//! on the deal's check alone) is caught by the flow's objective values.

use super::super::aligned::{Variant, tally};
use super::super::homogeneous::Route;
use super::super::uniform::assign_with;
use super::super::*;
use super::aligned::{outcomes, random_racked, with_variant};
use super::oracle::{Rng, checked_against_flow, score};

/// Random rack-aware homogeneous specs of 16 to 40 members: every third one with random
/// claims, or none when `clear` (where the quick choice applies), the others a join or a
/// leave of a stable assignment.
fn large_racked(seed: u64, count: usize, clear: bool) -> Vec<GroupSpec> {
    let mut rng = Rng(seed);
    let mut specs = Vec::new();
    while specs.len() < count {
        let kind = specs.len() as u64 % 3;
        let mut spec = random_racked(&mut rng, 40, 6, kind);
        if spec.members.len() < 16 {
            continue;
        }
        if kind == 0 && clear {
            for m in &mut spec.members {
                m.owned.clear();
            }
        }
        specs.push(spec);
    }
    specs
}

#[test]
fn the_quick_choice_is_taken_without_claims_and_equals_the_flow() {
    let before = tally::quick();
    let mut rotations = [0usize; 3];
    for (case, spec) in large_racked(71, 300, true).iter().enumerate() {
        checked_against_flow(case, spec);
        rotations[case % 3] += outcomes(spec)
            .iter()
            .filter(|&&o| o == Some(Route::Rotation))
            .count();
    }
    let quick = tally::quick() - before;
    println!("quick choices: {quick}, rotations by kind (none, join, leave): {rotations:?}");
    // Joins and leaves of a stable assignment always have gaining cells: no rotation there.
    assert_eq!(rotations[1] + rotations[2], 0, "rotations {rotations:?}");
    assert!(rotations[0] >= 15, "rotations {rotations:?}");
    // Every rotation of `outcomes` ran the path a second time (the counts also include the
    // fixed-point runs).
    assert!(
        quick >= 2 * rotations[0],
        "quick {quick}, rotations {rotations:?}"
    );
}

#[test]
fn a_quick_rotation_ignoring_gains_is_caught() {
    // Every member in rack a: any member aligns any alignable partition, so the deal's check
    // accepts the rotation and only the kept claims can tell it is wrong.
    let mut specs = large_racked(73, 150, false);
    for spec in &mut specs {
        for m in &mut spec.members {
            m.rack = Some("a".to_owned());
        }
    }
    let before = tally::quick();
    let mut caught = 0;
    for spec in &specs {
        let Some(worse) = with_variant(spec, Variant::QuickIgnoresGains) else {
            continue;
        };
        let got = score(spec, &worse);
        assert!(
            got.is_some(),
            "the variant must stay valid: {}",
            spec.to_json()
        );
        if got != score(spec, &assign_with(spec, false).unwrap()) {
            caught += 1;
        }
    }
    let accepted = tally::quick() - before;
    println!(
        "quick rotations ignoring gains caught: {caught} of {accepted} accepted, {} specs",
        specs.len()
    );
    // 118 of 149 measured.
    assert!(caught >= 60, "only {caught} caught");
}
