//! Tests of the settled-component shortcut (`settled.rs`): claims that already form an
//! assignment optimal for objectives 1–5 come back as they are, the result is exactly the one
//! the exact paths give, and claims that fail a condition are left to those paths.

use std::cell::Cell;

use super::super::settled::{
    ASCENT_UNCHECKED, CEILING_UNCOUNTED, LOADS_UNCHECKED, OFF, RACKS_UNCHECKED, SETTLED,
};
use super::super::*;
use super::aligned_flow::bench_like;
use super::oracle::{Rng, brute_force, feed_back, score};
use super::overlap::caught_with;
use super::{member, topic};

/// A claim of `partitions` of `topic`.
fn claim(topic: &str, partitions: Vec<i32>) -> OwnedPartitions {
    OwnedPartitions {
        topic: topic.into(),
        partitions,
    }
}

/// Components returned by the shortcut on this thread so far.
fn settled() -> usize {
    SETTLED.with(Cell::get)
}

/// The assignment with the shortcut switched off.
fn without_shortcut(spec: &GroupSpec) -> Assignment {
    OFF.with(|off| off.set(true));
    let a = UniformV2.assign(spec).unwrap();
    OFF.with(|off| off.set(false));
    a
}

/// A homogeneous group of `n` members (racks a, b, c when `racked`) and `k` topics whose
/// claims are a random spread assignment: each topic's partitions shuffled, f_t to every
/// member and the extras to the next r_t members of one rotation over all topics when
/// `balanced` (loads within one), else to r_t random members.
fn spread_claims(rng: &mut Rng, n: usize, k: usize, racked: bool, balanced: bool) -> GroupSpec {
    let racks: &[&str] = if racked { &["a", "b", "c"] } else { &[] };
    spread_claims_in(rng, n, k, racks, false, balanced)
}

/// [`spread_claims`] with the members in racks `racks` in turn (none when empty), each
/// partition's one replica in one of them or, with `strangers`, one time in eight in a rack
/// named as the first with one more byte, where no member runs.
fn spread_claims_in(
    rng: &mut Rng,
    n: usize,
    k: usize,
    racks: &[&str],
    strangers: bool,
    balanced: bool,
) -> GroupSpec {
    let racked = !racks.is_empty();
    let stranger = racks.first().filter(|_| strangers).map(|r| format!("{r}x"));
    let names: Vec<String> = (0..k).map(|t| format!("T{t}")).collect();
    let subs: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut spec = GroupSpec {
        rack_aware: racked,
        topics: names
            .iter()
            .map(|name| {
                let mut x = topic(name, rng.below(3 * n as u64 + 1) as i64);
                if racked {
                    x.replica_racks = Some(
                        (0..x.partitions)
                            .map(|_| match &stranger {
                                Some(name) if rng.below(8) == 0 => vec![name.clone()],
                                _ => vec![racks[rng.below(racks.len() as u64) as usize].to_owned()],
                            })
                            .collect(),
                    );
                }
                x
            })
            .collect(),
        members: (0..n)
            .map(|m| {
                let mut x = member(&format!("M{m}"), &subs);
                if racked {
                    x.rack = Some(racks[m % racks.len()].to_owned());
                }
                x.generation = 1;
                x
            })
            .collect(),
    };
    let mut cursor = 0usize;
    for (t, name) in names.iter().enumerate() {
        let count = spec.topics[t].partitions as usize;
        let mut partitions: Vec<i32> = (0..count as i32).collect();
        super::oracle::shuffle(rng, &mut partitions);
        let (floor, extra) = (count / n, count % n);
        let mut takers: Vec<usize> = if balanced {
            (0..extra).map(|i| (cursor + i) % n).collect()
        } else {
            let mut all: Vec<usize> = (0..n).collect();
            super::oracle::shuffle(rng, &mut all);
            all.truncate(extra);
            all
        };
        cursor = (cursor + extra) % n;
        takers.sort_unstable();
        let mut next = partitions.into_iter();
        for m in 0..n {
            let take = floor + usize::from(takers.binary_search(&m).is_ok());
            let owned: Vec<i32> = next.by_ref().take(take).collect();
            if !owned.is_empty() {
                spec.members[m].owned.push(OwnedPartitions {
                    topic: name.clone(),
                    partitions: owned,
                });
            }
        }
    }
    spec
}

#[test]
fn stable_groups_come_back_unchanged_with_no_choice_made() {
    let mut rng = Rng(91);
    let before = settled();
    for case in 0..200 {
        let buckets = 1 + case % 3;
        let spec = bench_like(&mut rng, 30, 6, buckets, case % 2 == 0);
        let mut spec = spec;
        spec.rack_aware = case % 4 < 2;
        let first = UniformV2.assign(&spec).unwrap();
        assert_eq!(
            first,
            without_shortcut(&spec),
            "case {case}: {}",
            spec.to_json()
        );
        let stable = feed_back(&spec, &first);
        let at = settled();
        let again = UniformV2.assign(&stable).unwrap();
        assert_eq!(again, first, "case {case}: fixed point");
        assert!(
            settled() > at,
            "case {case}: a stable group was not recognised"
        );
    }
    println!("settled components: {}", settled() - before);
}

#[test]
fn claims_short_of_optimal_are_left_to_the_exact_paths() {
    let mut rng = Rng(93);
    let mut taken = 0;
    for case in 0..300 {
        let n = 2 + rng.below(12) as usize;
        let spec = spread_claims(&mut rng, n, 1 + case % 4, case % 2 == 0, case % 3 != 0);
        let at = settled();
        let fast = UniformV2.assign(&spec).unwrap();
        taken += settled() - at;
        assert_eq!(
            fast,
            without_shortcut(&spec),
            "case {case}: {}",
            spec.to_json()
        );
        if n <= 3 && spec.topics.iter().map(|t| t.partitions).sum::<i64>() <= 6 {
            let got = score(&spec, &fast);
            assert_eq!(
                got,
                Some(brute_force(&spec)),
                "case {case}: {}",
                spec.to_json()
            );
        }
    }
    // Balanced spread claims with every partition aligned or unalignable are settled.
    println!("spread claims settled: {taken} of 300");
    assert!(taken >= 30, "settled {taken}");
}

#[test]
fn unbalanced_loads_are_not_settled() {
    // Two members, two one-partition topics, both owned by A: spread holds, loads 2 and 0.
    let mut a = member("A", &["T1", "T2"]);
    a.owned = vec![
        OwnedPartitions {
            topic: "T1".into(),
            partitions: vec![0],
        },
        OwnedPartitions {
            topic: "T2".into(),
            partitions: vec![0],
        },
    ];
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T1", 1), topic("T2", 1)],
        members: vec![a, member("B", &["T1", "T2"])],
    };
    let got = UniformV2.assign(&spec).unwrap();
    assert_eq!(score(&spec, &got).map(|s| s.0), Some(2), "{got:?}");
    assert_eq!(
        caught_with(&LOADS_UNCHECKED, std::slice::from_ref(&spec)),
        1
    );
}

#[test]
fn planted_faults_are_caught_on_spread_claims() {
    let mut rng = Rng(97);
    let unbalanced: Vec<GroupSpec> = (0..150)
        .map(|case| spread_claims(&mut rng, 2 + case % 9, 2 + case % 3, false, false))
        .collect();
    let misaligned: Vec<GroupSpec> = (0..150)
        .map(|case| spread_claims(&mut rng, 2 + case % 9, 1 + case % 3, true, true))
        .collect();
    let loads = caught_with(&LOADS_UNCHECKED, &unbalanced);
    let racks = caught_with(&RACKS_UNCHECKED, &misaligned);
    println!("planted faults caught: loads {loads} of 150, racks {racks} of 150");
    assert!(loads >= 20 && racks >= 20, "loads {loads}, racks {racks}");
}

/// Claims handed from member to member across topics: loads unchanged, spread broken.
fn swapped(rng: &mut Rng, mut spec: GroupSpec) -> GroupSpec {
    for _ in 0..3 {
        let n = spec.members.len();
        let (a, b) = (rng.below(n as u64) as usize, rng.below(n as u64) as usize);
        if a == b || spec.members[a].owned.is_empty() || spec.members[b].owned.is_empty() {
            continue;
        }
        let i = rng.below(spec.members[a].owned.len() as u64) as usize;
        let j = rng.below(spec.members[b].owned.len() as u64) as usize;
        let (Some(p), Some(q)) = (
            spec.members[a].owned[i].partitions.pop(),
            spec.members[b].owned[j].partitions.pop(),
        ) else {
            continue;
        };
        let (ta, tb) = (
            spec.members[a].owned[i].topic.clone(),
            spec.members[b].owned[j].topic.clone(),
        );
        spec.members[a].owned.push(OwnedPartitions {
            topic: tb,
            partitions: vec![q],
        });
        spec.members[b].owned.push(OwnedPartitions {
            topic: ta,
            partitions: vec![p],
        });
    }
    spec
}

#[test]
fn claims_breaking_spread_are_not_settled() {
    // Two members, two topics of two partitions: A owns all of T1, B all of T2. Complete and
    // balanced, but each should have one partition of each topic.
    let mut a = member("A", &["T1", "T2"]);
    a.owned = vec![OwnedPartitions {
        topic: "T1".into(),
        partitions: vec![0, 1],
    }];
    let mut b = member("B", &["T1", "T2"]);
    b.owned = vec![OwnedPartitions {
        topic: "T2".into(),
        partitions: vec![0, 1],
    }];
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T1", 2), topic("T2", 2)],
        members: vec![a, b],
    };
    let at = settled();
    let got = UniformV2.assign(&spec).unwrap();
    assert_eq!(settled(), at, "spread-breaking claims settled");
    assert_eq!(score(&spec, &got).map(|s| s.2), Some(2), "{got:?}");

    // Random balanced spread claims with claims swapped across topics.
    let mut rng = Rng(99);
    for case in 0..200 {
        let n = 2 + rng.below(10) as usize;
        let base = spread_claims(&mut rng, n, 2 + case % 3, case % 2 == 0, true);
        let spec = swapped(&mut rng, base);
        let fast = UniformV2.assign(&spec).unwrap();
        assert!(
            score(&spec, &fast).is_some(),
            "case {case}: {}",
            spec.to_json()
        );
        assert_eq!(
            fast,
            without_shortcut(&spec),
            "case {case}: {}",
            spec.to_json()
        );
    }
}

/// The per-topic test counts the members at the ceiling: with only the ceiling checked,
/// claims leaving a member below its floor while none passes its ceiling would pass.
#[test]
fn claims_below_a_floor_under_every_ceiling_are_not_settled() {
    // Three members, two topics of four partitions (floor 1, one extra each). T1: A and B
    // two each, C none; T2: A one, B one, C two. Complete, loads 3, 3, 2, no count above a
    // ceiling of 2, but C is below its floor of T1.
    let subs = ["T1", "T2"];
    let mut a = member("A", &subs);
    a.owned = vec![claim("T1", vec![0, 1]), claim("T2", vec![0])];
    let mut b = member("B", &subs);
    b.owned = vec![claim("T1", vec![2, 3]), claim("T2", vec![1])];
    let mut c = member("C", &subs);
    c.owned = vec![claim("T2", vec![2, 3])];
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T1", 4), topic("T2", 4)],
        members: vec![a, b, c],
    };
    let at = settled();
    let got = UniformV2.assign(&spec).unwrap();
    assert_eq!(settled(), at, "claims below a floor settled");
    assert_eq!(got, without_shortcut(&spec));
    assert_eq!(
        caught_with(&CEILING_UNCOUNTED, std::slice::from_ref(&spec)),
        1
    );
}

/// `spec` with each topic's partitions renumbered so that every member's claims on it form
/// one run, the runs in member order (as a deal leaves them): the same counts and loads.
fn in_runs(mut spec: GroupSpec) -> GroupSpec {
    let mut next: std::collections::HashMap<String, i32> = std::collections::HashMap::new();
    for m in &mut spec.members {
        for claim in &mut m.owned {
            let at = next.entry(claim.topic.clone()).or_insert(0);
            for p in &mut claim.partitions {
                *p = *at;
                *at += 1;
            }
        }
    }
    spec
}

/// Claims in ascending runs, one per owner, are counted per run; a member owning two runs
/// of a topic, or one run past the ceiling, must still be caught (the count decides then).
#[test]
fn runs_of_claims_are_counted_as_the_claims_would_be() {
    // Four members; T of five partitions (floor 1, one extra: ceiling 2), T2 and T3 of two
    // (floor 0, two extras). A owns 0-1 of T, B 2-4; C and D one of T2 and of T3 each.
    // Complete, loads 2, 3, 2, 2, exactly one run of T at its ceiling, but B passes it.
    let subs = ["T", "T2", "T3"];
    let mut a = member("A", &subs);
    a.owned = vec![claim("T", vec![0, 1])];
    let mut b = member("B", &subs);
    b.owned = vec![claim("T", vec![2, 3, 4])];
    let mut c = member("C", &subs);
    c.owned = vec![claim("T2", vec![0]), claim("T3", vec![0])];
    let mut d = member("D", &subs);
    d.owned = vec![claim("T2", vec![1]), claim("T3", vec![1])];
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T", 5), topic("T2", 2), topic("T3", 2)],
        members: vec![a, b, c, d],
    };
    let at = settled();
    let got = UniformV2.assign(&spec).unwrap();
    assert_eq!(settled(), at, "a run past the ceiling settled");
    assert_eq!(got, without_shortcut(&spec));
    assert_eq!(
        caught_with(&ASCENT_UNCHECKED, std::slice::from_ref(&spec)),
        1
    );
    // Balanced spread claims in runs: settled; then some swapped across topics.
    let mut rng = Rng(97);
    let at = settled();
    let mut specs = Vec::new();
    for case in 0..150 {
        let n = 2 + rng.below(10) as usize;
        let base = in_runs(spread_claims(&mut rng, n, 2 + case % 3, false, true));
        assert_eq!(UniformV2.assign(&base).unwrap(), without_shortcut(&base));
        specs.push(swapped(&mut rng, base));
    }
    assert_eq!(settled() - at, 150, "claims in runs not all settled");
    for (case, spec) in specs.iter().enumerate() {
        let fast = UniformV2.assign(spec).unwrap();
        assert_eq!(
            fast,
            without_shortcut(spec),
            "case {case}: {}",
            spec.to_json()
        );
    }
    let caught = caught_with(&ASCENT_UNCHECKED, &specs);
    println!("unchecked runs caught in {caught} of 150");
    assert!(caught >= 10, "only {caught} caught");
}

#[test]
fn rack_names_of_every_length_are_compared_as_names() {
    // Members' racks of one short length (compared at that length), of mixed lengths, and
    // longer than a packed short name; replicas also in a rack no member runs in, named as
    // a member's rack with one more byte.
    let rack_sets: [&[&str]; 6] = [
        &["a", "b", "c"],
        &["r1", "r2", "r3"],
        &["us-east", "us-west", "eu-west"],
        &["rack", "rock"],
        &["a", "bb", "ccc"],
        &["rack-number-one", "rack-number-two", "rack-number-three"],
    ];
    let mut rng = Rng(101);
    let mut specs = Vec::new();
    for case in 0..240 {
        let racks = rack_sets[case % rack_sets.len()];
        let n = 2 + rng.below(10) as usize;
        let balanced = case % 5 != 0;
        specs.push(spread_claims_in(
            &mut rng,
            n,
            1 + case % 3,
            racks,
            true,
            balanced,
        ));
    }
    // The claims as drawn (mostly misaligned), then the assignment fed back (settled where
    // it aligns every alignable partition).
    let mut taken = [0usize; 6];
    for (case, spec) in specs.iter().enumerate() {
        let first = UniformV2.assign(spec).unwrap();
        assert_eq!(
            first,
            without_shortcut(spec),
            "case {case}: {}",
            spec.to_json()
        );
        let stable = feed_back(spec, &first);
        let at = settled();
        let again = UniformV2.assign(&stable).unwrap();
        taken[case % rack_sets.len()] += settled() - at;
        assert_eq!(again, first, "case {case}: fixed point");
    }
    let racks = caught_with(&RACKS_UNCHECKED, &specs);
    println!("fed back and settled {taken:?} of 40 each, unchecked racks caught in {racks}");
    assert!(
        taken.iter().all(|&x| x >= 5) && racks >= 20,
        "settled {taken:?}, caught {racks}"
    );
}
