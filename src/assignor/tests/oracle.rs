//! Test oracles and generators: objective values written from the definitions alone, a
//! brute-force optimum for tiny groups, and fixed-seed random groups.

use std::collections::BTreeMap;

use super::super::problem::Problem;
use super::super::uniform::assign_with;
use super::super::*;

/// The objectives' values of an assignment: `None` when validity or spread fails, else
/// (Σ load², aligned partitions, kept partitions). Written from the definitions in `mod.rs`,
/// independently of the assignor's network.
pub(super) fn score(spec: &GroupSpec, a: &Assignment) -> Option<(i64, i64, i64)> {
    let problem = Problem::new(spec);
    let owners = super::claims::previous_owners(&problem);
    let mut holder: BTreeMap<(String, i32), String> = BTreeMap::new();
    for (m, topics) in &a.to_map() {
        let spec_member = spec.members.iter().find(|x| x.id == m.0)?;
        for (t, ps) in topics {
            for &p in ps {
                let key = (t.clone(), p);
                if holder.insert(key, m.0.clone()).is_some() {
                    return None;
                }
                let sub = spec_member.subscriptions.iter().any(|s| s == t);
                let exists = spec
                    .topics
                    .iter()
                    .any(|x| &x.name == t && p >= 0 && i64::from(p) < x.partitions);
                if !sub || !exists {
                    return None;
                }
            }
        }
    }
    let (mut aligned, mut kept) = (0, 0);
    for (ti, subs) in problem.subscribers.iter().enumerate() {
        if subs.is_empty() {
            continue;
        }
        let t = problem.topics[ti];
        let mut count: BTreeMap<&str, i64> = BTreeMap::new();
        for p in 0..t.partitions as i32 {
            let m = holder.get(&(t.name.clone(), p))?;
            *count.entry(m.as_str()).or_default() += 1;
            let ms = spec.members.iter().find(|x| &x.id == m)?;
            if spec.rack_aware
                && let (Some(r), Some(rr)) = (&ms.rack, &t.replica_racks)
                && rr[p as usize].contains(r)
            {
                aligned += 1;
            }
            if owners[ti]
                .iter()
                .any(|&(q, o)| q == p && problem.members[o as usize].id == *m)
            {
                kept += 1;
            }
        }
        let lo = t.partitions / subs.len() as i64;
        for &m in subs {
            let c = count
                .get(problem.members[m as usize].id.as_str())
                .copied()
                .unwrap_or(0);
            if c != lo && c != lo + 1 {
                return None;
            }
        }
    }
    let sumsq = a
        .iter()
        .map(|(_, ts)| (ts.partition_count() as i64).pow(2))
        .sum();
    Some((sumsq, aligned, kept))
}

/// Lexicographic key to minimise.
pub(super) fn key(s: (i64, i64, i64)) -> (i64, i64, i64) {
    (s.0, -s.1, -s.2)
}

/// The best objective values over every valid assignment (tiny specs only).
pub(super) fn brute_force(spec: &GroupSpec) -> (i64, i64, i64) {
    let problem = Problem::new(spec);
    let mut slots: Vec<(u32, i32, &[u32])> = Vec::new();
    for (t, subs) in problem.subscribers.iter().enumerate() {
        if !subs.is_empty() {
            for p in 0..problem.partitions(t as u32) as i32 {
                slots.push((t as u32, p, subs));
            }
        }
    }
    let mut choice = vec![0usize; slots.len()];
    let mut best: Option<(i64, i64, i64)> = None;
    loop {
        let mut lists = vec![Vec::new(); problem.members.len()];
        for (i, &(t, p, subs)) in slots.iter().enumerate() {
            lists[subs[choice[i]] as usize].push((t, p));
        }
        if let Some(s) = score(spec, &problem.assignment(lists))
            && best.is_none_or(|b| key(s) < key(b))
        {
            best = Some(s);
        }
        let mut i = 0;
        loop {
            if i == slots.len() {
                return best.unwrap_or((0, 0, 0));
            }
            choice[i] += 1;
            if choice[i] < slots[i].2.len() {
                break;
            }
            choice[i] = 0;
            i += 1;
        }
    }
}

/// The assignor tests' one seeded generator (splitmix64).
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random small spec: up to 4 members, 3 topics, few partitions, racks, stale claims.
pub(super) fn random_spec(rng: &mut Rng, max_slots: usize) -> GroupSpec {
    let racks = ["r1", "r2", "r3"];
    let n_topics = 1 + rng.below(3) as usize;
    let n_members = 1 + rng.below(4) as usize;
    let mut topics = Vec::new();
    for t in 0..n_topics {
        let p = rng.below(5) as i64;
        let replica_racks = (rng.below(2) == 0).then(|| {
            (0..p)
                .map(|_| {
                    racks
                        .iter()
                        .filter(|_| rng.below(2) == 0)
                        .map(|r| (*r).to_owned())
                        .collect()
                })
                .collect()
        });
        topics.push(TopicSpec {
            name: format!("T{t}"),
            partitions: p,
            replica_racks,
        });
    }
    let mut members = Vec::new();
    for m in 0..n_members {
        let subs: Vec<String> = (0..n_topics + 1)
            .filter(|_| rng.below(3) != 0)
            .map(|t| format!("T{t}"))
            .collect();
        let owned = (0..n_topics)
            .map(|t| OwnedPartitions {
                topic: format!("T{t}"),
                partitions: (-1..5).filter(|_| rng.below(3) == 0).collect(),
            })
            .collect();
        members.push(MemberSpec {
            id: format!("M{m}"),
            rack: (rng.below(4) != 0).then(|| racks[rng.below(3) as usize].to_owned()),
            subscriptions: subs,
            owned,
            generation: rng.below(3) as i32,
        });
    }
    let spec = GroupSpec {
        rack_aware: rng.below(3) != 0,
        topics,
        members,
    };
    // Keep the brute force small.
    let problem = Problem::new(&spec);
    let mut combos = 1usize;
    for (t, subs) in problem.subscribers.iter().enumerate() {
        for _ in 0..problem.partitions(t as u32) {
            combos = combos.saturating_mul(subs.len().max(1));
        }
    }
    if combos > max_slots {
        return random_spec(rng, max_slots);
    }
    spec
}

pub(super) fn shuffle<T>(rng: &mut Rng, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        items.swap(i, j);
    }
}

/// How many of `tries` small groups (from `generate`, at most 5,000 brute-force candidates,
/// and where `variant` gives an assignment) get a worse assignment from `variant` than the
/// brute-force optimum. Panics when the variant is not even valid and spread: the broken
/// variants the tests plant must fail only on the objectives.
pub(super) fn worse_caught(
    rng: &mut Rng,
    tries: usize,
    generate: &mut dyn FnMut(&mut Rng) -> GroupSpec,
    variant: &dyn Fn(&GroupSpec) -> Option<Assignment>,
) -> usize {
    let (mut caught, mut tried) = (0, 0);
    while tried < tries {
        let spec = generate(rng);
        if !super::homogeneous::small_enough(&spec, 5_000.0) {
            continue;
        }
        let Some(worse) = variant(&spec) else {
            continue;
        };
        tried += 1;
        let s = score(&spec, &worse);
        assert!(
            s.is_some(),
            "the variant must stay valid: {}",
            spec.to_json()
        );
        if s != Some(brute_force(&spec)) {
            caught += 1;
        }
    }
    caught
}

/// `spec` in another input order: topics, members, each member's subscriptions and claims,
/// and each claim's partitions shuffled. The same group, so every assignor must give the same
/// output (objective 6).
pub(super) fn permuted(rng: &mut Rng, spec: &GroupSpec) -> GroupSpec {
    let mut permuted = spec.clone();
    shuffle(rng, &mut permuted.topics);
    shuffle(rng, &mut permuted.members);
    for m in &mut permuted.members {
        shuffle(rng, &mut m.subscriptions);
        shuffle(rng, &mut m.owned);
        for o in &mut m.owned {
            shuffle(rng, &mut o.partitions);
        }
    }
    permuted
}

/// A larger random spec (not for the brute force): up to 12 members and 6 topics.
pub(super) fn medium_spec(rng: &mut Rng) -> GroupSpec {
    let mut spec = GroupSpec::default();
    let n_topics = 1 + rng.below(6) as usize;
    for t in 0..n_topics {
        let p = rng.below(20) as i64;
        let replica_racks = (rng.below(2) == 0).then(|| {
            (0..p)
                .map(|_| vec![format!("r{}", rng.below(3)), format!("r{}", rng.below(3))])
                .collect()
        });
        spec.topics.push(TopicSpec {
            name: format!("T{t}"),
            partitions: p,
            replica_racks,
        });
    }
    for m in 0..1 + rng.below(12) {
        let subscriptions = (0..n_topics + 1)
            .filter(|_| rng.below(3) != 0)
            .map(|t| format!("T{t}"))
            .collect();
        let owned = (0..n_topics)
            .map(|t| OwnedPartitions {
                topic: format!("T{t}"),
                partitions: (0..22).filter(|_| rng.below(5) == 0).collect(),
            })
            .collect();
        spec.members.push(MemberSpec {
            id: format!("M{m:02}"),
            rack: (rng.below(4) != 0).then(|| format!("r{}", rng.below(3))),
            subscriptions,
            owned,
            generation: rng.below(3) as i32,
        });
    }
    spec.rack_aware = rng.below(2) == 0;
    spec
}

/// `spec` with every member owning what `a` gives it, at a generation above all others.
pub(super) fn feed_back(spec: &GroupSpec, a: &Assignment) -> GroupSpec {
    let mut next = spec.clone();
    for m in &mut next.members {
        m.owned = a
            .member(&m.id)
            .iter()
            .flat_map(|ts| ts.iter())
            .map(|(t, ps)| OwnedPartitions {
                topic: t.to_owned(),
                partitions: ps.to_vec(),
            })
            .collect();
        m.generation = 10;
    }
    next
}

/// Whether `fast`, the assignor's result on `spec`, misses the class flow's objective values
/// (`uniform::assign_with(spec, false)`); with `shuffler`, also asserts that a shuffled copy
/// of the input gives `fast` back (for the runs without a planted fault).
pub(super) fn misses_the_flow(
    spec: &GroupSpec,
    fast: &Assignment,
    shuffler: Option<&mut Rng>,
) -> bool {
    let wrong = score(spec, fast) != score(spec, &assign_with(spec, false).unwrap());
    if let Some(rng) = shuffler {
        let again = UniformV2.assign(&permuted(rng, spec)).unwrap();
        assert_eq!(&again, fast, "input order leaked: {}", spec.to_json());
    }
    wrong
}

/// The assignor's result on `spec`, checked against the class flow alone
/// (`uniform::assign_with(spec, false)`, no fast path): valid, with the flow's objective
/// values, and given back unchanged when fed back as the owners. `case` names the spec in
/// failure messages.
pub(super) fn checked_against_flow(case: impl std::fmt::Display, spec: &GroupSpec) -> Assignment {
    let fast = UniformV2.assign(spec).unwrap();
    let got = score(spec, &fast);
    assert!(got.is_some(), "case {case}: invalid {}", spec.to_json());
    let flow = assign_with(spec, false).unwrap();
    assert_eq!(got, score(spec, &flow), "case {case}: {}", spec.to_json());
    assert_eq!(
        UniformV2.assign(&feed_back(spec, &fast)).unwrap(),
        fast,
        "case {case}: fixed point"
    );
    fast
}
