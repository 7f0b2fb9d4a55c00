//! Tests written for the survivors of the full `cargo mutants` run over `src/assignor` (see
//! `proofs/PROOFS.md`, "Mutation testing"). Each names the mutant it kills; each is a small,
//! hand-built case, fast in debug builds.

use super::super::flow::Network;
use super::*;
use crate::ids::Generation;

#[test]
fn homogeneous_load_quota_never_outweighs_balance() {
    // Kills the must-edge cost `-1` → `1` (uniform.rs, homogeneous components). Three members
    // subscribe to three topics of two partitions: shares are 0 or 1, loads must be (2, 2, 2).
    // A claims one partition of every topic, B two, C one: keeping all six gives loads
    // (3, 2, 1), which the quota edges must not prefer to balance.
    let all = ["T1", "T2", "T3"];
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T1", 2), topic("T2", 2), topic("T3", 2)],
        members: vec![
            with_owned(
                with_owned(with_owned(member("A", &all), "T1", &[0], 1), "T2", &[0], 1),
                "T3",
                &[0],
                1,
            ),
            with_owned(with_owned(member("B", &all), "T1", &[1], 1), "T2", &[1], 1),
            with_owned(member("C", &all), "T3", &[1], 1),
        ],
    };
    let a = UniformV2.assign(&spec).unwrap();
    for m in ["A", "B", "C"] {
        assert_eq!(parts(&a, m).len(), 2, "{m} in {}", a.to_json());
    }
    // Balanced, and five of the six claims kept (A gives one up to C).
    assert_eq!(score(&spec, &a), Some((12, 0, 5)));
    assert_eq!(score(&spec, &a), Some(brute_force(&spec)));
}

#[test]
fn an_assignment_survives_its_json_round_trip() {
    // Kills `Assignment::from_json` → `Ok(Default::default())`.
    let a = UniformV2.assign(&reference()).unwrap();
    let text = a.to_json();
    assert_eq!(Assignment::from_json(&text), Ok(a));
    let err = Assignment::from_json("{\"assignment\":").unwrap_err();
    assert!(matches!(err, SpecError::Json { line: 1, .. }), "{err:?}");
}

/// Solves the network below and returns the flows on s→b, s→e, a→b (convex) and a→c.
///
/// Two units leave `s` (through `s0`). The first shortest path is s→a→b→t (21: the convex
/// edge's first unit at base 10). The second unit then has two routes: s→e→t, costing
/// `(0, 34, 0, e_last)`, or s→b, undoing the convex unit and sending it on a→c→t, costing
/// 25 − 21 + 30 = `(0, 34, 0, 0)`. The sign of `e_last` decides, so any change of the
/// undone unit's cost (the backward convex arc) changes the flow in one of the two cases.
fn undo_or_not(e_last: i8) -> [i32; 4] {
    let (s0, s, a, b, c, e, t) = (0, 1, 2, 3, 4, 5, 6);
    let mut net = Network::new(7);
    let cost = |x: i8| [0, x, 0, 0];
    net.edge(s0, s, 2, [0; 4]);
    net.edge(s, a, 1, [0; 4]);
    let sb = net.edge(s, b, 1, cost(25));
    let se = net.edge(s, e, 1, [0, 34, 0, e_last]);
    let ab = net.convex_edge(a, b, 1, 10);
    let ac = net.edge(a, c, 1, cost(30));
    net.edge(b, t, 1, [0; 4]);
    net.edge(c, t, 1, [0; 4]);
    net.edge(e, t, 1, [0; 4]);
    assert_eq!(net.solve(s0, t), 2);
    [sb, se, ab, ac].map(|id| net.flow(id))
}

#[test]
fn the_solver_undoes_a_convex_unit_exactly_when_that_is_cheaper() {
    // Kills the backward convex arc's mutants: `lay_out`'s `a.convex == NONE` → `!=` (the
    // arc loses its cost), `REVERSE` `1 << 31` → `>>` (it is costed as a forward unit) and
    // every arithmetic mutant of `-(2 * (base + f) - 1)` in `Network::cost`. In the
    // networks of uniform.rs convex edges all end at the sink, whose arcs no search scans,
    // so only a network like this one can tell.
    // The undo route is cheaper by the last component: s→b, undo a→b, a→c.
    assert_eq!(undo_or_not(1), [1, 0, 0, 1]);
    // The direct route is cheaper by the last component: a→b stays, s→e.
    assert_eq!(undo_or_not(-1), [0, 1, 1, 0]);
}

#[test]
fn a_tie_at_the_top_generation_leaves_the_partition_unowned() {
    // Kills `claims.rs` `j - 1 > i` → `<` (ties never detected, the last claimant wins). A and
    // B both claim T-0 at generation 2: nobody owns it, so the default order gives T-0 to A.
    // Were B taken as the owner it would keep T-0 and A would get T-1.
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T", 2)],
        members: vec![
            with_owned(member("A", &["T"]), "T", &[0], 2),
            with_owned(member("B", &["T"]), "T", &[0], 2),
        ],
    };
    let problem = super::super::problem::Problem::new(&spec);
    assert_eq!(
        super::super::claims::previous_owners(&problem),
        vec![Vec::new()]
    );
    let a = UniformV2.assign(&spec).unwrap();
    assert_eq!(parts(&a, "A"), tp(&[("T", 0)]));
    assert_eq!(parts(&a, "B"), tp(&[("T", 1)]));
}

#[test]
fn homogeneous_plain_components_deal_their_extras_in_one_rotation() {
    // Pins the closed form of a homogeneous component with no claims and no racks (any
    // balanced spread assignment is optimal there; the rotation is the documented choice).
    // A and B subscribe to T1 (3 partitions) and T2 (1): T1's extra goes to A, the rotation
    // moves on and T2's goes to B. C alone on U is a second component, which must not
    // change the first one's closed form. Kills `Component::homogeneous` → `false` and
    // `find` → `0` (all topics in one component), which both send the group to the flow
    // solver, whose optimum here gives T2 to A instead.
    let both = ["T1", "T2"];
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T1", 3), topic("T2", 1), topic("U", 2)],
        members: vec![member("A", &both), member("B", &both), member("C", &["U"])],
    };
    let a = UniformV2.assign(&spec).unwrap();
    assert_eq!(parts(&a, "A"), tp(&[("T1", 0), ("T1", 1)]));
    assert_eq!(parts(&a, "B"), tp(&[("T1", 2), ("T2", 0)]));
    assert_eq!(parts(&a, "C"), tp(&[("U", 0), ("U", 1)]));
    assert_eq!(score(&spec, &a), Some(brute_force(&spec)));
}

#[test]
fn every_assignor_answers_to_the_name_it_is_found_by() {
    // Kills the `name` mutants (`""`, `"xyzzy"`) of the three assignors: the CLI prints and
    // looks up assignors by these names.
    for name in ASSIGNOR_NAMES {
        let assignor = assignor_by_name(name).unwrap();
        assert_eq!(assignor.name(), name);
    }
    assert_eq!(ASSIGNOR_NAMES[0], UniformV2.name());
    assert!(assignor_by_name("sticky").is_none());
}

#[test]
fn a_spec_survives_its_json_round_trip_and_a_missing_generation_is_none() {
    // Kills `GroupSpec::to_json` → `String::new()` / `"xyzzy"` and `no_generation` → `0` /
    // `1` (`-1` is the same value as `Generation::NONE`, an equivalent mutant).
    let mut spec = reference();
    spec.members[1] = with_owned(spec.members[1].clone(), "T2", &[0, 2], 7);
    spec.members[2].rack = Some("r1".into());
    assert_eq!(GroupSpec::from_json(&spec.to_json()), Ok(spec));
    let text = r#"{"rack_aware": false, "topics": [{"name": "T", "partitions": 1}],
        "members": [{"id": "A", "subscriptions": ["T"]}]}"#;
    let parsed = GroupSpec::from_json(text).unwrap();
    assert_eq!(parsed.members[0].generation, Generation::NONE.0);
}

#[test]
fn uniform_v1_gives_the_extra_to_the_member_the_cursor_is_on() {
    // Kills `uniform_v1.rs` `load[m] >= quota` → `<` (an extra counted as used whenever a
    // member below its quota takes a partition). Seven partitions over three members: quota
    // 2 and one extra, which A (first by id, where the cursor starts) takes: consecutive
    // slices [0, 3), [3, 5), [5, 7). The mutant spends the extra at once, and the last
    // partition then falls to the least-loaded member, A, out of order.
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T", 7)],
        members: vec![
            member("A", &["T"]),
            member("B", &["T"]),
            member("C", &["T"]),
        ],
    };
    let a = UniformV1.assign(&spec).unwrap();
    assert_eq!(parts(&a, "A"), tp(&[("T", 0), ("T", 1), ("T", 2)]));
    assert_eq!(parts(&a, "B"), tp(&[("T", 3), ("T", 4)]));
    assert_eq!(parts(&a, "C"), tp(&[("T", 5), ("T", 6)]));
}

#[test]
fn uniform_v1_resumes_from_its_cursor_on_the_next_topic() {
    // Kills `pick`'s `(m as usize) < cursor` → `>` (the search restarts at the first
    // subscriber instead of the cursor). B alone takes T1-0 (the cursor is on B); T2's first
    // partition goes to B too, which still has room, and A fills up with the rest.
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T1", 1), topic("T2", 3)],
        members: vec![member("A", &["T2"]), member("B", &["T1", "T2"])],
    };
    let a = UniformV1.assign(&spec).unwrap();
    assert_eq!(parts(&a, "A"), tp(&[("T2", 1), ("T2", 2)]));
    assert_eq!(parts(&a, "B"), tp(&[("T1", 0), ("T2", 0)]));
}

#[test]
fn a_path_of_convex_edges_carries_one_unit_per_augmentation() {
    // Kills `flow.rs` `arc.convex == NONE` → `!=` in the push amount (a convex arc would
    // pass its whole residual capacity at the price of one unit). Every edge is convex with
    // base 0 (units cost 1, 3): two units from s, split over a→t and a→b→t, cost 4 on the
    // last three edges plus 1 + 3 on s→a; both on a→t would cost 8 there.
    let (s, a, b, t) = (0, 1, 2, 3);
    let mut net = Network::new(4);
    let sa = net.convex_edge(s, a, 2, 0);
    let at = net.convex_edge(a, t, 2, 0);
    let ab = net.convex_edge(a, b, 2, 0);
    let bt = net.convex_edge(b, t, 2, 0);
    assert_eq!(net.solve(s, t), 2);
    assert_eq!([sa, at, ab, bt].map(|id| net.flow(id)), [2, 1, 1, 1]);
}

#[test]
fn the_extras_rotation_moves_on_by_one_member_per_extra() {
    // Kills mutants of `round_robin`'s window that run the rotation backwards. Three members,
    // three topics of four partitions: each topic has one extra, which goes to A, then B,
    // then C.
    let all = ["T1", "T2", "T3"];
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T1", 4), topic("T2", 4), topic("T3", 4)],
        members: vec![member("A", &all), member("B", &all), member("C", &all)],
    };
    let a = UniformV2.assign(&spec).unwrap();
    let t = |name: &str, ps: &[i32]| ps.iter().map(|&p| (name.to_owned(), p)).collect::<Vec<_>>();
    let cat = |lists: [Vec<(String, i32)>; 3]| lists.concat();
    assert_eq!(
        parts(&a, "A"),
        cat([t("T1", &[0, 1]), t("T2", &[0]), t("T3", &[0])])
    );
    assert_eq!(
        parts(&a, "B"),
        cat([t("T1", &[2]), t("T2", &[1, 2]), t("T3", &[1])])
    );
    assert_eq!(
        parts(&a, "C"),
        cat([t("T1", &[3]), t("T2", &[3]), t("T3", &[2, 3])])
    );
}

#[test]
fn the_round_robin_follows_its_definition_on_every_small_shape() {
    // The closed form without owners, defined directly: topic by topic (name order), the
    // extras go to the subscribers whose offset from a cursor over the members (id order) is
    // below the topic's extras, the cursor moves on by that many, and partitions are numbered
    // in member order. Covers floors of zero (only the window is visited) and windows that
    // wrap around the last member.
    let names = ["T0", "T1", "T2", "T3"];
    for n in 1..=5usize {
        let ids: Vec<String> = (0..n).map(|i| format!("M{i}")).collect();
        for seed in 0..12u64 {
            let counts: Vec<i64> = (0..4)
                .map(|k| ((seed * 7 + k * 5 + n as u64) % (2 * n as u64 + 2)) as i64)
                .collect();
            let spec = GroupSpec {
                rack_aware: false,
                topics: names
                    .iter()
                    .zip(&counts)
                    .map(|(t, &c)| topic(t, c))
                    .collect(),
                members: ids.iter().map(|id| member(id, &names)).collect(),
            };
            let a = UniformV2.assign(&spec).unwrap();
            let mut want: Vec<Vec<(String, i32)>> = vec![Vec::new(); n];
            let mut cursor = 0usize;
            for (t, &c) in names.iter().zip(&counts) {
                let (floor, extra) = (c as usize / n, c as usize % n);
                let mut next = 0i32;
                for (i, list) in want.iter_mut().enumerate() {
                    let count = floor + usize::from((i + n - cursor) % n < extra);
                    list.extend((next..next + count as i32).map(|p| (t.to_string(), p)));
                    next += count as i32;
                }
                cursor = (cursor + extra) % n;
            }
            for (id, list) in ids.iter().zip(&want) {
                assert_eq!(&parts(&a, id), list, "{id} with counts {counts:?}");
            }
        }
    }
}

#[test]
fn keeping_every_claim_is_refused_when_an_owner_is_two_off_its_share() {
    // Kills `keep_all`'s `count[lm] == floor + 1` → `!=` (a count two or more above the
    // floor passes as spread). A, B and C subscribe to T (2 partitions, shares 0 or 1), V
    // and W (5 each, shares 1 or 2). Every partition is claimed; loads are (4, 4, 4), but A
    // holds both of T, C three of V and B three of W: nothing here is spread, so the claims
    // cannot all be kept.
    let all = ["T", "V", "W"];
    let owned = |id: &str, claims: &[(&str, &[i32])]| {
        claims
            .iter()
            .fold(member(id, &all), |m, &(t, ps)| with_owned(m, t, ps, 1))
    };
    let spec = GroupSpec {
        rack_aware: false,
        topics: vec![topic("T", 2), topic("V", 5), topic("W", 5)],
        members: vec![
            owned("A", &[("T", &[0, 1]), ("V", &[0]), ("W", &[0])]),
            owned("B", &[("V", &[1]), ("W", &[1, 2, 3])]),
            owned("C", &[("V", &[2, 3, 4]), ("W", &[4])]),
        ],
    };
    let a = UniformV2.assign(&spec).unwrap();
    let (sumsq, _, kept) = score(&spec, &a).expect("spread");
    assert_eq!(sumsq, 48);
    // Spread lets A keep one of T, C two of its three of V and B two of its three of W: at
    // most 9 of the 12 claims are kept, and 9 is reachable with loads (4, 4, 4).
    assert_eq!(kept, 9, "{}", a.to_json());
}
