//! Tests of the homogeneous fast path (`super::super::homogeneous`): its routes are exercised
//! and optimal against the brute force on small groups, its objective values equal the
//! flow's on larger ones, and a deliberately worse choice of extras is caught.

use super::super::claims::previous_owners;
use super::super::components::components;
use super::super::homogeneous::{self, Route};
use super::super::problem::Problem;
use super::super::uniform::assign_with;
use super::super::*;
use super::oracle::{
    Rng, brute_force, checked_against_flow, feed_back, permuted, score, worse_caught,
};
use super::{member, topic};

fn owning(mut m: MemberSpec, topic: &str, parts: &[i32], generation: i32) -> MemberSpec {
    m.owned.push(OwnedPartitions {
        topic: topic.into(),
        partitions: parts.to_vec(),
    });
    m.generation = generation;
    m
}

/// The routes the fast path takes on `spec`'s homogeneous components (empty if none).
pub(super) fn routes(spec: &GroupSpec) -> Vec<Route> {
    let problem = Problem::new(spec);
    let owners = previous_owners(&problem);
    let mut lists = vec![Vec::new(); problem.members.len()];
    components(&problem)
        .iter()
        .filter(|c| homogeneous::applies(&problem, c, spec.rack_aware))
        .map(|c| homogeneous::assign(&problem, c, &owners, &mut lists))
        .collect()
}

/// The assignment with the fast path's extras replaced by the rotation.
fn ignoring_gains(spec: &GroupSpec) -> Assignment {
    let problem = Problem::new(spec);
    let owners = previous_owners(&problem);
    let mut lists = vec![Vec::new(); problem.members.len()];
    for c in components(&problem) {
        assert!(homogeneous::applies(&problem, &c, spec.rack_aware));
        homogeneous::assign_ignoring_gains(&problem, &c, &owners, &mut lists);
    }
    problem.assignment(lists)
}

/// Checks `spec` against the brute force and the flow, and returns the fast path's routes.
fn check_small(spec: &GroupSpec) -> Vec<Route> {
    let fast = UniformV2.assign(spec).unwrap();
    let best = brute_force(spec);
    assert_eq!(score(spec, &fast), Some(best), "{}", spec.to_json());
    let flow = assign_with(spec, false).unwrap();
    assert_eq!(score(spec, &flow), Some(best), "flow: {}", spec.to_json());
    routes(spec)
}

/// A random homogeneous spec of up to `members` members and `topics` topics, with claims of
/// `kind`: 0 random (stale, conflicting, out of range), 1 a stable assignment plus one
/// joining member, 2 a stable assignment minus one member.
pub(super) fn random_homogeneous(rng: &mut Rng, members: u64, topics: u64, kind: u64) -> GroupSpec {
    let n_topics = 1 + rng.below(topics) as usize;
    let names: Vec<String> = (0..n_topics).map(|t| format!("T{t}")).collect();
    let subs: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut spec = GroupSpec {
        rack_aware: rng.below(2) == 0,
        topics: names
            .iter()
            .map(|n| topic(n, rng.below(2 * members + 2) as i64))
            .collect(),
        members: (0..1 + rng.below(members))
            .map(|m| member(&format!("M{m:02}"), &subs))
            .collect(),
    };
    // Racks that can never align: members in rack "a", replicas in "b" (or no racks at all).
    if rng.below(2) == 0 {
        for m in &mut spec.members {
            m.rack = Some("a".into());
        }
        for t in &mut spec.topics {
            t.replica_racks = Some(vec![vec!["b".into()]; t.partitions as usize]);
        }
    }
    match kind {
        0 => {
            for m in &mut spec.members {
                for t in &names {
                    let parts = (-1..2 * members as i32 + 3)
                        .filter(|_| rng.below(3) == 0)
                        .collect();
                    m.owned.push(OwnedPartitions {
                        topic: t.clone(),
                        partitions: parts,
                    });
                }
                m.generation = rng.below(3) as i32;
            }
        }
        _ => {
            // Any earlier assignment of the same topics to these members (random owners
            // first, so that it is not always the rotation), then a change of membership.
            let mut base = spec.clone();
            for m in &mut base.members {
                for t in &names {
                    let parts = (0..2 * members as i32 + 2)
                        .filter(|_| rng.below(2) == 0)
                        .collect();
                    m.owned.push(OwnedPartitions {
                        topic: t.clone(),
                        partitions: parts,
                    });
                }
                m.generation = rng.below(2) as i32;
            }
            let stable = UniformV2.assign(&base).unwrap();
            spec = feed_back(&spec, &stable);
            if kind == 1 {
                spec.members.push(member("M99", &subs));
            } else if spec.members.len() > 1 {
                let gone = rng.below(spec.members.len() as u64) as usize;
                spec.members.remove(gone);
            }
        }
    }
    spec
}

/// Whether brute force over `spec` tries at most `limit` assignments (Π |Sub(t)|^P_t).
pub(super) fn small_enough(spec: &GroupSpec, limit: f64) -> bool {
    let problem = Problem::new(spec);
    (0..problem.topics.len() as u32)
        .map(|t| {
            (problem.subscribers[t as usize].len().max(1) as f64).powi(problem.partitions(t) as i32)
        })
        .product::<f64>()
        <= limit
}

#[test]
fn every_route_is_taken_and_optimal_on_small_groups() {
    let mut rng = Rng(31);
    let mut seen = [0usize; 4];
    let mut checked = 0;
    while checked < 1500 {
        let kind = rng.below(3);
        let spec = random_homogeneous(&mut rng, 4, 3, kind);
        if !small_enough(&spec, 5_000.0) {
            continue;
        }
        checked += 1;
        for route in check_small(&spec) {
            seen[route as usize] += 1;
        }
    }
    // Rotation, greedy and flow all run (the flow when the greedy misses its bound); the
    // direct construction is tried only on larger components (`tests/direct.rs`).
    println!("small groups, routes (rotation, greedy, flow, direct): {seen:?}");
    assert!(seen[..3].iter().all(|&c| c > 0), "routes seen {seen:?}");
    assert_eq!(seen[Route::Direct as usize], 0, "routes seen {seen:?}");
}

#[test]
fn objective_values_equal_the_flow_on_larger_groups() {
    let mut rng = Rng(37);
    let mut seen = [0usize; 4];
    for case in 0..300 {
        let spec = random_homogeneous(&mut rng, 14, 6, case % 3);
        checked_against_flow(case, &spec);
        for route in routes(&spec) {
            seen[route as usize] += 1;
        }
    }
    println!("larger groups, routes (rotation, greedy, flow, direct): {seen:?}");
    assert!(seen[Route::Greedy as usize] > 0, "routes seen {seen:?}");
}

#[test]
fn a_join_keeps_all_but_what_the_newcomer_needs() {
    // A, B, C hold a stable assignment of T1 (5 partitions) and T2 (3); D joins.
    let subs = ["T1", "T2"];
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T1", 5), topic("T2", 3)],
        members: vec![
            owning(owning(member("A", &subs), "T1", &[0, 1], 3), "T2", &[0], 3),
            owning(owning(member("B", &subs), "T1", &[2, 3], 3), "T2", &[1], 3),
            owning(owning(member("C", &subs), "T1", &[4], 3), "T2", &[2], 3),
            member("D", &subs),
        ],
    };
    let a = UniformV2.assign(&spec).unwrap();
    // T1: f = 1, r = 1 (A and B gain); T2: f = 0, r = 3 (A, B, C gain). E = 4, q = 1, s = 0:
    // every member gets exactly one extra, D's cannot gain, so 3 of the 4 extras gain and
    // 3 (floors of T1) + 3 = 6 of 8 partitions stay; D gets 2.
    assert_eq!(score(&spec, &a), Some(brute_force(&spec)));
    assert_eq!(score(&spec, &a).map(|s| s.2), Some(6));
    assert_eq!(routes(&spec), vec![Route::Greedy]);
    assert_eq!(a.member("D").map(|d| d.partition_count()), Some(2));
}

#[test]
fn a_leave_hands_out_only_the_leavers_partitions() {
    let subs = ["T1"];
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T1", 7)],
        members: vec![
            owning(member("A", &subs), "T1", &[0, 1], 1),
            owning(member("C", &subs), "T1", &[4, 5], 1),
            owning(member("D", &subs), "T1", &[6], 1),
        ],
    };
    // B (2, 3) left: f = 2, r = 1. No cell gains (nobody owns more than 2), so the rotation
    // gives the extra to A; the freed 2 and 3 fill A, then D, in ascending order.
    let a = UniformV2.assign(&spec).unwrap();
    assert_eq!(score(&spec, &a), Some(brute_force(&spec)));
    assert_eq!(a.partitions("A", "T1").unwrap(), vec![0, 1, 2]);
    assert_eq!(a.partitions("C", "T1").unwrap(), vec![4, 5]);
    assert_eq!(a.partitions("D", "T1").unwrap(), vec![3, 6]);
    assert_eq!(routes(&spec), vec![Route::Rotation]);
}

#[test]
fn stale_and_conflicting_claims_count_only_the_newest_single_owner() {
    let subs = ["T1"];
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T1", 4)],
        members: vec![
            // A claims 0..3 at generation 2, B claims 0, 1 at 5 (newer), C claims 2 at 2
            // (a tie with A: partition 2 has no owner).
            owning(member("A", &subs), "T1", &[0, 1, 2, 3], 2),
            owning(member("B", &subs), "T1", &[0, 1], 5),
            owning(member("C", &subs), "T1", &[2], 2),
        ],
    };
    let a = UniformV2.assign(&spec).unwrap();
    assert_eq!(score(&spec, &a), Some(brute_force(&spec)));
    // Owners: 0, 1 → B; 3 → A; 2 none. f = 1, r = 1: B is the only gaining cell.
    assert_eq!(a.partitions("B", "T1").unwrap(), vec![0, 1]);
    assert_eq!(a.partitions("A", "T1").unwrap(), vec![3]);
    assert_eq!(a.partitions("C", "T1").unwrap(), vec![2]);
}

#[test]
fn owners_holding_everything_give_up_the_excess_highest_numbers_first() {
    let subs = ["T1", "T2"];
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T1", 5), topic("T2", 0)],
        members: vec![
            owning(member("A", &subs), "T1", &[0, 1, 2, 3, 4], 1),
            member("B", &subs),
            member("C", &subs),
        ],
    };
    let a = UniformV2.assign(&spec).unwrap();
    assert_eq!(score(&spec, &a), Some(brute_force(&spec)));
    // f = 1, r = 2: A keeps 2 (its extra is the gaining cell), lowest numbers first.
    assert_eq!(a.partitions("A", "T1").unwrap(), vec![0, 1]);
    assert_eq!(a.partitions("B", "T1").unwrap(), vec![2, 3]);
    assert_eq!(a.partitions("C", "T1").unwrap(), vec![4]);
    // T2 has no partitions: nobody lists it.
    assert!(a.iter().all(|(_, t)| t.get("T2").is_none()));
}

#[test]
fn a_member_without_subscriptions_next_to_buckets_gets_nothing() {
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T1", 3), topic("T2", 2)],
        members: vec![
            owning(member("A", &["T1"]), "T1", &[0, 1, 2], 1),
            member("B", &["T1"]),
            owning(member("C", &["T2"]), "T2", &[1], 1),
            member("D", &["T2"]),
            member("E", &[]),
        ],
    };
    let a = UniformV2.assign(&spec).unwrap();
    assert_eq!(score(&spec, &a), Some(brute_force(&spec)));
    assert!(a.member("E").is_some_and(|e| e.is_empty()));
    assert_eq!(routes(&spec).len(), 2);
}

#[test]
fn alignment_that_is_possible_leaves_the_fast_path() {
    let subs = ["T1"];
    let mut t = topic("T1", 2);
    t.replica_racks = Some(vec![vec!["r1".into()], vec!["r2".into()]]);
    let mut a = member("A", &subs);
    a.rack = Some("r2".into());
    let spec = GroupSpec {
        rack_aware: true,
        topics: vec![t],
        members: vec![a, member("B", &subs)],
    };
    assert!(routes(&spec).is_empty());
    let mut off = spec.clone();
    off.rack_aware = false;
    assert_eq!(routes(&off).len(), 1);
}

#[test]
fn ignoring_who_gains_is_caught_by_the_oracle() {
    // The rotation of extras with the same deal is valid, spread and balanced, but keeps less
    // on some groups: the brute-force comparison must see it, or it would prove nothing
    // about the fast path's choice of extras.
    let mut rng = Rng(41);
    let caught = worse_caught(
        &mut rng,
        300,
        &mut |rng| {
            let kind = 1 + rng.below(2);
            random_homogeneous(rng, 4, 3, kind)
        },
        &|spec| Some(ignoring_gains(spec)),
    );
    assert!(caught > 10, "only {caught} worse choices caught");
}

#[test]
fn input_order_does_not_change_the_fast_path() {
    let mut rng = Rng(43);
    for case in 0..200 {
        let spec = random_homogeneous(&mut rng, 10, 5, case % 3);
        let permuted = permuted(&mut rng, &spec);
        assert_eq!(
            UniformV2.assign(&spec).unwrap(),
            UniformV2.assign(&permuted).unwrap(),
            "case {case}"
        );
    }
}

// The tie rule (objective 6) among equally optimal choices of extras, pinned on groups where
// another ranking or the solver would pick a different optimum. The oracles above compare
// objective values only, so without these a change of ranking would go unnoticed.

/// The assignment of `spec` as (member, topic, partitions) triples, for compact expectations.
fn triples(a: &Assignment) -> Vec<(String, String, Vec<i32>)> {
    let mut out = Vec::new();
    for (m, topics) in a {
        for (t, parts) in topics.iter() {
            out.push((m.to_string(), t.to_owned(), parts.to_vec()));
        }
    }
    out
}

fn expect(spec: &GroupSpec, want: &[(&str, &str, &[i32])]) {
    let a = UniformV2.assign(spec).unwrap();
    assert_eq!(
        score(spec, &a),
        Some(brute_force(spec)),
        "{}",
        spec.to_json()
    );
    let want: Vec<(String, String, Vec<i32>)> = want
        .iter()
        .map(|(m, t, p)| ((*m).into(), (*t).into(), p.to_vec()))
        .collect();
    assert_eq!(triples(&a), want, "{}", spec.to_json());
}

#[test]
fn a_single_gaining_extra_is_placed_by_the_greedy() {
    // One partition, two members, B owns it: E = 1, q = 0, s = 1. The greedy must let a
    // member at q (here 0) go above it while s allows, so it meets its bound of 1.
    let subs = ["T1"];
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T1", 1)],
        members: vec![
            member("A", &subs),
            owning(member("B", &subs), "T1", &[0], 1),
        ],
    };
    expect(&spec, &[("B", "T1", &[0])]);
    assert_eq!(routes(&spec), vec![Route::Greedy]);
}

#[test]
fn the_greedy_serves_a_member_short_of_gains_first() {
    // A owns the only partition of T1 and of T2; B joins. E = 2, q = 1, s = 0. For T1, B (need
    // 1, no gaining topic left: short) outranks A (need 1, T2 still to gain), so B takes T1's
    // extra and A keeps T2.
    let subs = ["T1", "T2"];
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T1", 1), topic("T2", 1)],
        members: vec![
            owning(owning(member("A", &subs), "T1", &[0], 1), "T2", &[0], 1),
            member("B", &subs),
        ],
    };
    expect(&spec, &[("A", "T2", &[0]), ("B", "T1", &[0])]);
    assert_eq!(routes(&spec), vec![Route::Greedy]);
}

#[test]
fn the_greedy_ranks_need_minus_gaining_topics_left_before_id() {
    // Three members, T1 and T2 of one partition each, A owns T2's: E = 2, q = 0, s = 2. Nobody
    // needs anything; for T1, A has a gaining topic left (T2) so it ranks below B and C, and B
    // (the lower id) takes T1's extra; A then takes T2's. Ranking by id alone would give T1 to
    // A, which would then be full, losing the gaining cell: the greedy misses its bound.
    let subs = ["T1", "T2"];
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T1", 1), topic("T2", 1)],
        members: vec![
            owning(member("A", &subs), "T2", &[0], 1),
            member("B", &subs),
            member("C", &subs),
        ],
    };
    expect(&spec, &[("A", "T2", &[0]), ("B", "T1", &[0])]);
    assert_eq!(routes(&spec), vec![Route::Greedy]);
}

#[test]
fn the_greedy_ranks_larger_need_before_lower_id() {
    // Two members; T1 (5 partitions, f = 2), T2 (3, f = 1), T3 (1, f = 0): E = 3, q = 1, s = 1.
    // Only B's claim on T3 gains. T1's extra goes to A (short: needs 1, no gain left). For T2,
    // A (need 0) and B (need 1) tie on tier and surplus; the larger need wins, so B takes it,
    // and T3's extra too (its gaining cell, the one member allowed above q).
    let subs = ["T1", "T2", "T3"];
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T1", 5), topic("T2", 3), topic("T3", 1)],
        members: vec![
            owning(owning(member("A", &subs), "T1", &[2, 3], 1), "T2", &[2], 1),
            owning(
                owning(owning(member("B", &subs), "T1", &[4], 1), "T2", &[1], 1),
                "T3",
                &[0],
                1,
            ),
        ],
    };
    expect(
        &spec,
        &[
            ("A", "T1", &[0, 2, 3]),
            ("A", "T2", &[2]),
            ("B", "T1", &[1, 4]),
            ("B", "T2", &[0, 1]),
            ("B", "T3", &[0]),
        ],
    );
    assert_eq!(routes(&spec), vec![Route::Greedy]);
}

#[test]
fn reserve_makes_room_for_every_final_load() {
    // `reserve` promises room for each member's whole share, so that the deal never
    // reallocates: its capacities bound the lengths `assign` then produces.
    let mut rng = Rng(47);
    for case in 0..60 {
        let spec = random_homogeneous(&mut rng, 8, 4, case % 3);
        let problem = Problem::new(&spec);
        let owners = previous_owners(&problem);
        for c in components(&problem) {
            let mut reserved: Vec<Vec<(u32, i32)>> = vec![Vec::new(); problem.members.len()];
            homogeneous::reserve(&problem, &c, &mut reserved);
            let mut lists = vec![Vec::new(); problem.members.len()];
            homogeneous::assign(&problem, &c, &owners, &mut lists);
            for &m in &c.members {
                let (len, room) = (lists[m as usize].len(), reserved[m as usize].capacity());
                assert!(
                    len <= room,
                    "case {case}: member {m} got {len}, room {room}"
                );
            }
        }
    }
}

#[test]
fn the_greedy_bound_counts_only_members_with_more_gains_than_q() {
    // A owns the only partition of T1 and of T2; B and C own nothing. E = 2, q = 0, s = 2: A
    // can take one extra only (s lets one member above q per extra, A has 2 gaining cells but
    // room for q + 1 = 1), so at most one gaining cell is used. The bound is 1 (only A has
    // more gaining cells than q), which the greedy meets: A keeps T1's partition, B gets T2's.
    let subs = ["T1", "T2"];
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T1", 1), topic("T2", 1)],
        members: vec![
            owning(owning(member("A", &subs), "T1", &[0], 1), "T2", &[0], 1),
            member("B", &subs),
            member("C", &subs),
        ],
    };
    expect(&spec, &[("A", "T1", &[0]), ("B", "T2", &[0])]);
    assert_eq!(routes(&spec), vec![Route::Greedy]);
}

#[test]
fn at_most_s_members_go_above_q_when_more_rank_first() {
    // Four members. T1 (2 partitions) and T2 (2) have f = 0, r = 2; T3 (5) has f = 1, r = 1.
    // A and B own one partition of T2 each, C and D two of T3: E = 5, q = 1, s = 1. T1's
    // extras go to A and B (lowest ids); for T2 both rank first (gaining, at q) but only one
    // may go above q, so C takes the other. Then only D can take T3's extra and the greedy
    // uses 2 gaining cells of the 3 possible (A, B on T2, one of C, D on T3): the solver runs.
    let subs = ["T1", "T2", "T3"];
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T1", 2), topic("T2", 2), topic("T3", 5)],
        members: vec![
            owning(member("A", &subs), "T2", &[0], 1),
            owning(member("B", &subs), "T2", &[1], 1),
            owning(member("C", &subs), "T3", &[0, 1], 1),
            owning(member("D", &subs), "T3", &[2, 3], 1),
        ],
    };
    let fast = UniformV2.assign(&spec).unwrap();
    let flow = assign_with(&spec, false).unwrap();
    assert!(score(&spec, &fast).is_some());
    assert_eq!(score(&spec, &fast), score(&spec, &flow));
    // 3 gaining cells used: A and B keep their T2 partition, C or D both of T3's, the other
    // one of its two (its floor).
    assert_eq!(score(&spec, &fast).map(|s| s.2), Some(2 + 2 + 1));
    assert_eq!(routes(&spec), vec![Route::Flow]);
}

/// Found by the mutation run: a topic's second selection of the top r pulled in more members
/// at q than may still go above it, and the greedy's counter underflowed (a panic in debug
/// builds). The greedy must now give up on this group and the flow decide, optimally.
#[test]
fn a_second_selection_never_lets_too_many_members_above_q() {
    let spec = GroupSpec::from_json(SECOND_SELECTION).unwrap();
    assert_eq!(routes(&spec), vec![Route::Flow]);
    let fast = UniformV2.assign(&spec).unwrap();
    let flow = assign_with(&spec, false).unwrap();
    assert_eq!(score(&spec, &fast), score(&spec, &flow));
    assert_eq!(UniformV2.assign(&feed_back(&spec, &fast)).unwrap(), fast);
}

const SECOND_SELECTION: &str = r#"{"rack_aware":true,"topics":[{"name":"T0","partitions":12},{"name":"T1","partitions":4},{"name":"T2","partitions":9},{"name":"T3","partitions":15},{"name":"T4","partitions":9}],"members":[
 {"id":"M01","subscriptions":["T0","T1","T2","T3","T4"],"owned":[{"topic":"T0","partitions":[2,3]},{"topic":"T2","partitions":[1]},{"topic":"T3","partitions":[1,3]},{"topic":"T4","partitions":[1]}],"generation":10},
 {"id":"M02","subscriptions":["T0","T1","T2","T3","T4"],"owned":[{"topic":"T0","partitions":[4]},{"topic":"T1","partitions":[0]},{"topic":"T2","partitions":[2]},{"topic":"T3","partitions":[4,5]},{"topic":"T4","partitions":[2]}],"generation":10},
 {"id":"M03","subscriptions":["T0","T1","T2","T3","T4"],"owned":[{"topic":"T0","partitions":[6]},{"topic":"T1","partitions":[1]},{"topic":"T2","partitions":[3]},{"topic":"T3","partitions":[7]},{"topic":"T4","partitions":[4]}],"generation":10},
 {"id":"M04","subscriptions":["T0","T1","T2","T3","T4"],"owned":[{"topic":"T0","partitions":[8]},{"topic":"T1","partitions":[2]},{"topic":"T2","partitions":[5]},{"topic":"T3","partitions":[8]},{"topic":"T4","partitions":[5]}],"generation":10},
 {"id":"M05","subscriptions":["T0","T1","T2","T3","T4"],"owned":[{"topic":"T0","partitions":[9]},{"topic":"T2","partitions":[6]},{"topic":"T3","partitions":[9,10]},{"topic":"T4","partitions":[6]}],"generation":10},
 {"id":"M06","subscriptions":["T0","T1","T2","T3","T4"],"owned":[{"topic":"T0","partitions":[0,5]},{"topic":"T1","partitions":[3]},{"topic":"T2","partitions":[0]},{"topic":"T3","partitions":[2]},{"topic":"T4","partitions":[3]}],"generation":10},
 {"id":"M07","subscriptions":["T0","T1","T2","T3","T4"],"owned":[{"topic":"T0","partitions":[10]},{"topic":"T2","partitions":[7]},{"topic":"T3","partitions":[11,12]},{"topic":"T4","partitions":[7]}],"generation":10},
 {"id":"M08","subscriptions":["T0","T1","T2","T3","T4"],"owned":[{"topic":"T0","partitions":[11]},{"topic":"T2","partitions":[8]},{"topic":"T3","partitions":[13,14]},{"topic":"T4","partitions":[8]}],"generation":10}
]}"#;

#[test]
fn many_small_components_use_the_searched_index() {
    // 40 members in 20 buckets of two (each bucket its own topic): every component holds
    // under a sixteenth of the group, so the fast paths find local positions by binary
    // search instead of a table. Owners and racks vary; objective values must equal the
    // class flow's, and every member must get its share.
    let mut rng = Rng(71);
    for case in 0..40 {
        let racked = case % 2 == 1;
        let mut spec = GroupSpec {
            rack_aware: racked,
            topics: Vec::new(),
            members: Vec::new(),
        };
        for b in 0..20 {
            let name = format!("T{b:02}");
            let mut t = topic(&name, 1 + rng.below(7) as i64);
            if racked {
                t.replica_racks = Some(
                    (0..t.partitions)
                        .map(|_| vec![["a", "b"][rng.below(2) as usize].to_owned()])
                        .collect(),
                );
            }
            for i in 0..2 {
                let mut m = member(&format!("M{b:02}{i}"), &[name.as_str()]);
                if racked {
                    m.rack = Some(["a", "b"][i].to_owned());
                }
                let parts: Vec<i32> = (0..t.partitions as i32)
                    .filter(|_| rng.below(2) == 0)
                    .collect();
                m = owning(m, &name, &parts, rng.below(2) as i32);
                spec.members.push(m);
            }
            spec.topics.push(t);
        }
        let fast = UniformV2.assign(&spec).unwrap();
        let flow = assign_with(&spec, false).unwrap();
        let got = score(&spec, &fast);
        assert!(got.is_some(), "case {case}: invalid {}", spec.to_json());
        assert_eq!(got, score(&spec, &flow), "case {case}: {}", spec.to_json());
    }
}
