//! Tests of the leaner steps of the homogeneous path: the gaining members listed as counts
//! pass the floor equal their definition (and a planted stale count is caught), and the
//! extras flow's proposed start (every gaining cell within the caps) is certified by the solver and
//! leaves the objective values those of the class flow (and a proposal past them is refused).
//! The direct construction's running count of gaining cells is checked against its
//! definition inside the construction itself, in every test that reaches it.

use super::super::claims::previous_owners;
use super::super::components::components;
use super::super::flow::CERTIFIED;
use super::super::homogeneous::{self, Route, planted};
use super::super::problem::Problem;
use super::super::*;
use super::homogeneous::{random_homogeneous, routes};
use super::oracle::{Rng, checked_against_flow, feed_back};
use super::{member, topic};

/// Random claims on buckets: `buckets` components, each its own topics and members, so that
/// with many buckets the components hold under a sixteenth of the group (the searched index).
fn random_buckets(rng: &mut Rng, buckets: usize) -> GroupSpec {
    let mut spec = GroupSpec {
        rack_aware: false,
        topics: Vec::new(),
        members: Vec::new(),
    };
    for b in 0..buckets {
        let names: Vec<String> = (0..1 + rng.below(4))
            .map(|t| format!("T{b:02}{t}"))
            .collect();
        let subs: Vec<&str> = names.iter().map(String::as_str).collect();
        let size = 1 + rng.below(4) as i64;
        for name in &names {
            spec.topics
                .push(topic(name, rng.below(3 * size as u64 + 2) as i64));
        }
        for i in 0..size {
            let mut m = member(&format!("M{b:02}{i}"), &subs);
            for name in &names {
                m.owned.push(OwnedPartitions {
                    topic: name.clone(),
                    partitions: (0..3 * size as i32 + 2)
                        .filter(|_| rng.below(3) != 0)
                        .collect(),
                });
            }
            m.generation = rng.below(2) as i32;
            spec.members.push(m);
        }
    }
    spec
}

/// Whether every homogeneous component's gaining members equal their definition: per topic
/// with r_t > 0, the local ids m with more than f_t previous-owner partitions, ascending.
fn gaining_as_defined(spec: &GroupSpec) -> bool {
    let problem = Problem::new(spec);
    let owners = previous_owners(&problem);
    components(&problem)
        .iter()
        .filter(|c| homogeneous::applies(&problem, c, spec.rack_aware))
        .all(|comp| {
            let n = comp.members.len() as u32;
            let want: Vec<(u32, u32, Vec<u32>)> = comp
                .topics
                .iter()
                .filter(|&&t| !problem.partitions(t).is_multiple_of(n))
                .map(|&t| {
                    let floor = problem.partitions(t) / n;
                    let gaining = (0..n)
                        .filter(|&lm| {
                            let m = comp.members[lm as usize];
                            let owned = owners[t as usize].iter().filter(|&&(_, o)| o == m);
                            owned.count() as u32 > floor
                        })
                        .collect();
                    (t, problem.partitions(t) % n, gaining)
                })
                .collect();
            homogeneous::gaining_members(&problem, comp, &owners) == want
        })
}

fn specs_for_gaining(seed: u64) -> Vec<GroupSpec> {
    let mut rng = Rng(seed);
    let mut specs = Vec::new();
    for case in 0..120 {
        specs.push(match case % 4 {
            3 => random_buckets(&mut rng, 20),
            kind => random_homogeneous(&mut rng, 24, 6, kind as u64),
        });
    }
    specs
}

#[test]
fn gaining_members_equal_their_definition() {
    for (case, spec) in specs_for_gaining(0x6a1).iter().enumerate() {
        assert!(gaining_as_defined(spec), "case {case}: {}", spec.to_json());
    }
}

#[test]
fn resetting_counts_through_the_gaining_members_alone_is_caught() {
    let specs = specs_for_gaining(0x6a1);
    planted::RESET_BY_GAINING.set(true);
    let caught = specs.iter().filter(|s| !gaining_as_defined(s)).count();
    planted::RESET_BY_GAINING.set(false);
    println!("stale counts caught in {caught} of {}", specs.len());
    // 46 of 120 measured (only topics with f_t > 0 and owners that do not gain can go stale).
    assert!(caught >= 20, "only {caught} caught");
}

/// Homogeneous groups of 16 to 30 members over topics of fewer partitions than members, as
/// they stand after a member leaves the stable assignment of the uniform v2 assignor: the
/// leaver's co-owners often cannot take its extras, so no choice meets the direct
/// construction's bound and the extras flow decides.
fn leaves(seed: u64, count: usize) -> Vec<GroupSpec> {
    let mut rng = Rng(seed);
    (0..count)
        .map(|_| {
            let n = 16 + rng.below(15);
            let names: Vec<String> = (0..20 + rng.below(60))
                .map(|t| format!("T{t:03}"))
                .collect();
            let subs: Vec<&str> = names.iter().map(String::as_str).collect();
            let partitions = 1 + rng.below(n - 1) as i64;
            let full = GroupSpec {
                rack_aware: false,
                topics: names.iter().map(|t| topic(t, partitions)).collect(),
                members: (0..n).map(|m| member(&format!("M{m:02}"), &subs)).collect(),
            };
            let stable = UniformV2.assign(&full).unwrap();
            let mut spec = feed_back(&full, &stable);
            let gone = if rng.below(2) == 0 {
                spec.members.len() - 1
            } else {
                rng.below(n) as usize
            };
            spec.members.remove(gone);
            spec
        })
        .collect()
}

fn certified() -> usize {
    CERTIFIED.with(std::cell::Cell::get)
}

/// Over the leaves of `leaves(seed, 60)`: (cases where the extras flow ran, cases where its
/// proposed start was certified), each result checked against the class flow.
fn flows_and_certified_starts(seed: u64) -> (usize, usize) {
    let (mut flows, mut starts) = (0, 0);
    for (case, spec) in leaves(seed, 60).iter().enumerate() {
        let before = certified();
        if routes(spec).contains(&Route::Flow) {
            flows += 1;
            starts += usize::from(certified() > before);
        }
        checked_against_flow(case, spec);
    }
    (flows, starts)
}

#[test]
fn the_extras_flow_starts_from_every_gaining_cell_within_the_caps_certified_and_optimal() {
    let (flows, starts) = flows_and_certified_starts(0x1ea7);
    println!("extras flows {flows}, certified starts {starts}");
    assert!(flows >= 10, "only {flows} cases reached the extras flow");
    // 28 of 30 measured: the certification may give up within its limits (then the solver
    // starts from zero, as before the proposal existed).
    assert!(
        starts * 10 >= flows * 9,
        "only {starts} of {flows} starts certified"
    );
}

#[test]
fn a_proposed_start_past_the_caps_is_refused_and_the_result_stays_optimal() {
    let (_, clean) = flows_and_certified_starts(0x1ea7);
    planted::PRESET_PAST_CAP.set(true);
    let (flows, planted) = flows_and_certified_starts(0x1ea7);
    planted::PRESET_PAST_CAP.set(false);
    println!("extras flows {flows}, certified starts {clean}, past the caps {planted}");
    // Where a member holds more gaining cells than its cap, the proposal breaks a capacity
    // and the solver must refuse it (and still find an optimum: checked above).
    assert!(planted < clean, "every start past the caps was certified");
}
