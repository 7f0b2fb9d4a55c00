//! Tests of the rack-aware fast path (`super::super::aligned`): where its certificate holds
//! it is optimal against the brute force on small groups and equal in objective values to the
//! flow on larger ones, it leaves the rest to the flow, it is deterministic, and two
//! deliberately broken variants are caught.

use super::super::aligned::{self, Variant};
use super::super::claims::previous_owners;
use super::super::components::components;
use super::super::homogeneous::Route;
use super::super::problem::Problem;
use super::super::uniform::assign_with;
use super::super::*;
use super::homogeneous::small_enough;
use super::oracle::{
    Rng, brute_force, checked_against_flow, feed_back, permuted, score, worse_caught,
};
use super::{member, topic};

/// A random homogeneous, rack-aware spec of up to `members` members and `topics` topics:
/// members in racks a, b, c or none, each partition on up to two of a, b, c, d (no member runs
/// in d). Claims of `kind`: 0 random (stale, conflicting, out of range), 1 a stable
/// assignment plus one joining member, 2 a stable assignment minus one member.
pub(super) fn random_racked(rng: &mut Rng, members: u64, topics: u64, kind: u64) -> GroupSpec {
    let racks = ["a", "b", "c", "d"];
    let n_topics = 1 + rng.below(topics) as usize;
    let names: Vec<String> = (0..n_topics).map(|t| format!("T{t}")).collect();
    let subs: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut spec = GroupSpec {
        rack_aware: true,
        topics: names
            .iter()
            .map(|n| {
                let mut t = topic(n, rng.below(2 * members + 2) as i64);
                t.replica_racks = Some(
                    (0..t.partitions)
                        .map(|_| {
                            (0..rng.below(3))
                                .map(|_| racks[rng.below(4) as usize].to_owned())
                                .collect()
                        })
                        .collect(),
                );
                t
            })
            .collect(),
        members: (0..1 + rng.below(members))
            .map(|m| {
                let mut spec = member(&format!("M{m:02}"), &subs);
                spec.rack = racks[..3]
                    .get(rng.below(4) as usize)
                    .map(|r| (*r).to_owned());
                spec
            })
            .collect(),
    };
    let claims = |rng: &mut Rng, spec: &mut GroupSpec, from: i32, to: i32, one_in: u64| {
        for m in &mut spec.members {
            for t in &names {
                let parts = (from..to).filter(|_| rng.below(one_in) == 0).collect();
                m.owned.push(OwnedPartitions {
                    topic: t.clone(),
                    partitions: parts,
                });
            }
            m.generation = rng.below(3) as i32;
        }
    };
    if kind == 0 {
        claims(rng, &mut spec, -1, 2 * members as i32 + 3, 3);
        return spec;
    }
    let mut base = spec.clone();
    claims(rng, &mut base, 0, 2 * members as i32 + 2, 2);
    let stable = UniformV2.assign(&base).unwrap();
    spec = feed_back(&spec, &stable);
    if kind == 1 {
        let mut joiner = member("M99", &subs);
        joiner.rack = Some(racks[rng.below(3) as usize].to_owned());
        spec.members.push(joiner);
    } else if spec.members.len() > 1 {
        let gone = rng.below(spec.members.len() as u64) as usize;
        spec.members.remove(gone);
    }
    spec
}

/// Per homogeneous rack-aware component of `spec`: the route of the fast path, or `None`
/// when its certificate failed (the flow then runs).
pub(super) fn outcomes(spec: &GroupSpec) -> Vec<Option<Route>> {
    let problem = Problem::new(spec);
    let owners = previous_owners(&problem);
    let mut lists = vec![Vec::new(); problem.members.len()];
    components(&problem)
        .iter()
        .filter(|c| aligned::applies(&problem, c, spec.rack_aware))
        .map(|c| aligned::assign(&problem, c, &owners, &mut lists))
        .collect()
}

/// The assignment by `variant` of the fast path, the flow where it gives up; `None` when the
/// path does not apply to every component.
pub(super) fn with_variant(spec: &GroupSpec, variant: Variant) -> Option<Assignment> {
    let problem = Problem::new(spec);
    let owners = previous_owners(&problem);
    let mut lists = vec![Vec::new(); problem.members.len()];
    for c in components(&problem) {
        if !aligned::applies(&problem, &c, spec.rack_aware) {
            return None;
        }
        if aligned::assign_as(&problem, &c, &owners, &mut lists, variant).is_none() {
            return Some(assign_with(spec, false).unwrap());
        }
    }
    Some(problem.assignment(lists))
}

/// Counts of (certified, given up) components over the specs checked.
#[derive(Debug, Default)]
struct Seen {
    certified: usize,
    given_up: usize,
}

impl Seen {
    fn add(&mut self, spec: &GroupSpec) {
        for outcome in outcomes(spec) {
            match outcome {
                Some(_) => self.certified += 1,
                None => self.given_up += 1,
            }
        }
    }
}

#[test]
fn certified_results_are_optimal_on_small_groups() {
    let mut rng = Rng(53);
    let mut seen = Seen::default();
    let mut checked = 0;
    while checked < 1500 {
        let spec = random_racked(&mut rng, 4, 3, checked % 3);
        if !small_enough(&spec, 5_000.0) {
            continue;
        }
        checked += 1;
        let fast = UniformV2.assign(&spec).unwrap();
        assert_eq!(
            score(&spec, &fast),
            Some(brute_force(&spec)),
            "{}",
            spec.to_json()
        );
        seen.add(&spec);
    }
    let repairs = aligned::tally::get();
    println!("small rack-aware groups: {seen:?}, repairs (within, across, reordered) {repairs:?}");
    // Both outcomes occur: the certificate holds on most groups, and fails on some. Every
    // kind of repair succeeds somewhere, so none of them is dead code.
    assert!(seen.certified > 500 && seen.given_up > 0, "{seen:?}");
    assert!(repairs.iter().all(|&c| c > 0), "repairs {repairs:?}");
}

/// The greedy brings its ranking up to date after a repair only when the repair says it
/// moved an earlier topic's extra: a repair that moves extras without saying so is caught by
/// the greedy's test-only checks of its kept keys and count of places above q.
#[test]
fn unreported_moves_of_extras_are_caught() {
    assert!(
        caught_when_planted(&aligned::fit_planted::MOVES_UNREPORTED, 53, 1500, 4, 3),
        "a repair hiding its moves went unnoticed"
    );
}

/// The repair remembers the small flow's answer for each pair of effects of an exchange:
/// remembering it by the effect taken away alone is caught by the test-only comparison of
/// every remembered answer with a fresh one.
#[test]
fn answers_remembered_for_other_exchanges_are_caught() {
    assert!(
        caught_when_planted(&aligned::fit_planted::MEMO_BY_OUT_ONLY, 59, 300, 14, 6),
        "answers remembered for other exchanges went unnoticed"
    );
}

/// Whether assigning `cases` random racked groups (seed, sizes as [`random_racked`]) passes
/// with the repair's fault `planted` off and panics with it on (a test-only check firing).
fn caught_when_planted(
    planted: &'static std::thread::LocalKey<std::cell::Cell<bool>>,
    seed: u64,
    cases: usize,
    members: u64,
    topics: u64,
) -> bool {
    let run = || {
        let mut rng = Rng(seed);
        for case in 0..cases {
            let spec = random_racked(&mut rng, members, topics, case as u64 % 3);
            UniformV2.assign(&spec).unwrap();
        }
    };
    run();
    planted.set(true);
    let caught = std::panic::catch_unwind(run).is_err();
    planted.set(false);
    caught
}

#[test]
fn objective_values_equal_the_flow_on_larger_groups() {
    let mut rng = Rng(59);
    let mut seen = Seen::default();
    for case in 0..300 {
        let spec = random_racked(&mut rng, 14, 6, case % 3);
        checked_against_flow(case, &spec);
        seen.add(&spec);
    }
    println!("larger rack-aware groups: {seen:?}");
    assert!(seen.certified > 100, "{seen:?}");
}

#[test]
fn broken_variants_are_caught_by_the_oracle() {
    // Both variants stay valid, spread and balanced; the brute force must see that they align
    // or keep less on some groups, or the tests above would prove nothing about the
    // keepability rule and the check of left-over partitions.
    for variant in [Variant::AllClaimsKeepable, Variant::NoTransportCheck] {
        let mut rng = Rng(61);
        let caught = worse_caught(
            &mut rng,
            400,
            &mut |rng| {
                let kind = rng.below(3);
                random_racked(rng, 4, 3, kind)
            },
            &|spec| with_variant(spec, variant),
        );
        assert!(caught > 5, "only {caught} worse results caught");
    }
}

#[test]
fn input_order_does_not_change_the_rack_aware_path() {
    let mut rng = Rng(67);
    for case in 0..200 {
        let spec = random_racked(&mut rng, 10, 5, case % 3);
        let permuted = permuted(&mut rng, &spec);
        assert_eq!(
            UniformV2.assign(&spec).unwrap(),
            UniformV2.assign(&permuted).unwrap(),
            "case {case}"
        );
    }
}

#[test]
fn a_joiner_takes_partitions_it_can_align() {
    // Three members in racks a, b, c each own two partitions of T1 (6 partitions, each on
    // one rack). D joins in rack a: the member giving one up must be the one in rack a,
    // since only a partition with a replica in a can move to D aligned.
    let subs = ["T1"];
    let mut t = topic("T1", 6);
    t.replica_racks = Some(
        ["a", "a", "b", "b", "c", "c"]
            .iter()
            .map(|r| vec![(*r).to_owned()])
            .collect(),
    );
    let mut members = Vec::new();
    for (i, (id, rack)) in [("A", "a"), ("B", "b"), ("C", "c"), ("D", "a")]
        .iter()
        .enumerate()
    {
        let mut m = member(id, &subs);
        m.rack = Some((*rack).to_owned());
        if i < 3 {
            m.owned.push(OwnedPartitions {
                topic: "T1".into(),
                partitions: vec![2 * i as i32, 2 * i as i32 + 1],
            });
            m.generation = 1;
        }
        members.push(m);
    }
    let spec = GroupSpec {
        rack_aware: true,
        topics: vec![t],
        members,
    };
    let a = UniformV2.assign(&spec).unwrap();
    assert_eq!(score(&spec, &a), Some(brute_force(&spec)));
    assert_eq!(a.partitions("D", "T1").unwrap(), vec![1]);
    // The greedy alone would take the extras from the highest id (C); the repair moved it.
    assert!(matches!(outcomes(&spec)[..], [Some(_)]));
}

#[test]
fn too_many_rack_masks_leave_the_work_to_the_flow() {
    // 12 members in 12 racks and a topic whose 300 partitions each sit on a different set of
    // racks: more masks than the small flows accept, so the path declines at once and the
    // class flow assigns (still exactly, as the oracle's comparison with it shows).
    let racks: Vec<String> = (0..12).map(|r| format!("r{r}")).collect();
    let mut t = topic("T1", 300);
    t.replica_racks = Some(
        (0..300u32)
            .map(|p| {
                (0..12)
                    .filter(|r| (p + 1) >> r & 1 == 1)
                    .map(|r| racks[r].clone())
                    .collect()
            })
            .collect(),
    );
    let members = (0..12)
        .map(|i| {
            let mut m = member(&format!("M{i:02}"), &["T1"]);
            m.rack = Some(racks[i].clone());
            m
        })
        .collect();
    let spec = GroupSpec {
        rack_aware: true,
        topics: vec![t],
        members,
    };
    assert!(matches!(outcomes(&spec)[..], [None]));
    let a = UniformV2.assign(&spec).unwrap();
    assert_eq!(
        score(&spec, &a),
        score(&spec, &assign_with(&spec, false).unwrap())
    );
}
