//! The flow solver's warm start: preset flows are used only when certified minimum-cost for
//! their value, so the result is a minimum-cost maximum flow whatever the presets; and the
//! uniform v2 assignor, which presets every claim kept, stays optimal on groups that leave,
//! join or come back unchanged.

use super::super::flow::{self, CANCELLED, CERTIFIED, Network, Planted};
use super::super::flow_reference;
use super::super::uniform::assign_with;
use super::super::warm::GREEDY_OFF;
use super::*;

/// One edge of a random network: (from, to, cap, cost, convex base).
type Edge = flow_reference::tests::Spec;

/// A random layered network in the assignor's shape (the reference solver's tests' generator,
/// layers of 1 to 5 nodes).
fn random_network(rng: &mut Rng) -> (usize, Vec<Edge>) {
    flow_reference::tests::random_network(&mut |n| rng.below(n), 5)
}

/// The reference solver's flow on `edges` (value, per-edge flows).
pub(crate) fn reference(nodes: usize, edges: &[Edge]) -> (i64, Vec<i32>) {
    let mut net = flow_reference::Network::new(nodes);
    let ids: Vec<usize> = edges
        .iter()
        .map(|&(u, v, cap, c, convex)| match convex {
            None => net.edge(u, v, cap, c),
            Some(b) => net.convex_edge(u, v, cap, b),
        })
        .collect();
    let value = net.solve(0, nodes as u32 - 1);
    (value, ids.iter().map(|&id| net.flow(id)).collect())
}

/// The optimised solver on `edges` with `presets` proposed (value, per-edge flows).
pub(crate) fn solve_with(
    nodes: usize,
    edges: &[Edge],
    presets: &[i32],
    planted: Planted,
) -> (i64, Vec<i32>) {
    let mut net = Network::new(nodes);
    net.planted = planted;
    let ids: Vec<usize> = edges
        .iter()
        .map(|&(u, v, cap, c, convex)| match convex {
            None => net.edge(u, v, cap, c),
            Some(b) => net.convex_edge(u, v, cap, b),
        })
        .collect();
    for (&id, &x) in ids.iter().zip(presets) {
        net.preset(id, x);
    }
    let value = net.solve(0, nodes as u32 - 1);
    (value, ids.iter().map(|&id| net.flow(id)).collect())
}

/// The lexicographic cost of `flows` on `edges`, from the edge definitions alone.
fn cost_of(edges: &[Edge], flows: &[i32]) -> flow::Cost {
    let mut total = [0i64; 4];
    for (&(_, _, _, c, convex), &f) in edges.iter().zip(flows) {
        let f = i64::from(f);
        match convex {
            // Units 1..=f cost 2(b+k)−1 each: 2bf + f² in all.
            Some(b) => total[1] += 2 * b * f + f * f,
            None => {
                for (t, &x) in total.iter_mut().zip(&c) {
                    *t += i64::from(x) * f;
                }
            }
        }
    }
    total
}

/// Capacities hold and every node but the source and the sink is balanced.
fn is_flow(nodes: usize, edges: &[Edge], flows: &[i32]) -> bool {
    let mut balance = vec![0i64; nodes];
    for (&(u, v, cap, _, _), &f) in edges.iter().zip(flows) {
        if f < 0 || f > cap {
            return false;
        }
        balance[u as usize] -= i64::from(f);
        balance[v as usize] += i64::from(f);
    }
    balance[1..nodes - 1].iter().all(|&b| b == 0)
}

/// Presets of every kind: the optimum itself, a maximum flow optimal for other costs (often
/// with a negative cycle here), a smaller optimum (partial), and arbitrary numbers.
fn presets(rng: &mut Rng, nodes: usize, edges: &[Edge], optimum: &[i32]) -> Vec<Vec<i32>> {
    let recosted: Vec<Edge> = edges
        .iter()
        .map(|&(u, v, cap, c, convex)| {
            let c = c.map(|_| rng.below(3) as i8 - 1);
            (u, v, cap, c, convex.map(|_| rng.below(4) as i64))
        })
        .collect();
    let smaller: Vec<Edge> = edges
        .iter()
        .map(|&(u, v, cap, c, convex)| {
            let cap = if u == 0 {
                rng.below(cap as u64 + 1) as i32
            } else {
                cap
            };
            (u, v, cap, c, convex)
        })
        .collect();
    let arbitrary = edges
        .iter()
        .map(|e| rng.below(e.2 as u64 + 1) as i32)
        .collect();
    vec![
        optimum.to_vec(),
        reference(nodes, &recosted).1,
        reference(nodes, &smaller).1,
        arbitrary,
    ]
}

#[test]
fn warm_started_solver_finds_a_minimum_cost_maximum_flow_whatever_the_presets() {
    let mut rng = Rng(0x77a2_31f0_0c4e_9b15);
    let before = CERTIFIED.with(std::cell::Cell::get);
    let cancelled_before = CANCELLED.with(std::cell::Cell::get);
    let mut optimum_certified = 0;
    // Maximum flows that are optimal for other costs: (certified, tried).
    let mut recosted = (0, 0);
    for case in 0..1500 {
        let (nodes, edges) = random_network(&mut rng);
        let (value, optimum) = reference(nodes, &edges);
        let best = cost_of(&edges, &optimum);
        for (kind, preset) in presets(&mut rng, nodes, &edges, &optimum)
            .iter()
            .enumerate()
        {
            let certified = CERTIFIED.with(std::cell::Cell::get);
            let (v, flows) = solve_with(nodes, &edges, preset, Planted::None);
            assert_eq!(v, value, "case {case}, presets {kind}");
            assert!(
                is_flow(nodes, &edges, &flows),
                "case {case}, presets {kind}"
            );
            assert_eq!(cost_of(&edges, &flows), best, "case {case}, presets {kind}");
            if kind == 1 {
                let repaired = CERTIFIED.with(std::cell::Cell::get) > certified;
                recosted = (recosted.0 + usize::from(repaired), recosted.1 + 1);
            }
            if kind == 0 && value > 0 {
                // A (non-empty) optimum is certified (it has no negative cycle; these
                // networks settle well within the round limit) and comes back unchanged.
                assert_eq!(
                    CERTIFIED.with(std::cell::Cell::get),
                    certified + 1,
                    "case {case}"
                );
                assert_eq!(flows, optimum, "case {case}");
                optimum_certified += 1;
            }
        }
    }
    let certified = CERTIFIED.with(std::cell::Cell::get) - before;
    assert!(
        certified > optimum_certified + 500,
        "only {certified} warm starts certified"
    );
    // Proposals with negative cycles were repaired rather than dropped: a maximum flow
    // optimal for other costs is nearly always brought to the optimum by cancellations
    // (1,378 of these 1,500).
    assert!(
        recosted.0 * 100 >= recosted.1 * 90,
        "only {} of {} recosted maximum flows certified",
        recosted.0,
        recosted.1
    );
    let cancelled = CANCELLED.with(std::cell::Cell::get) - cancelled_before;
    assert!(
        cancelled > 2000,
        "only {cancelled} negative cycles cancelled"
    );
}

/// The test above has teeth: a solver that trusts presets it has not certified, or that
/// pushes more than the room left around a negative cycle, returns flows that are not
/// minimum-cost maximum flows.
#[test]
fn a_solver_trusting_uncertified_presets_or_overpushing_cycles_is_caught() {
    for planted in [Planted::TrustPresets, Planted::Overpush] {
        let mut rng = Rng(0x0dd5_eed5_1234_5678);
        let mut caught = 0;
        for _ in 0..300 {
            let (nodes, edges) = random_network(&mut rng);
            let (value, optimum) = reference(nodes, &edges);
            let best = cost_of(&edges, &optimum);
            let preset = presets(&mut rng, nodes, &edges, &optimum).swap_remove(1);
            let (v, flows) = solve_with(nodes, &edges, &preset, planted);
            if v != value || !is_flow(nodes, &edges, &flows) || cost_of(&edges, &flows) != best {
                caught += 1;
            }
        }
        assert!(
            caught > 100,
            "{planted:?}: only {caught} wrong flows caught"
        );
    }
}

/// A warm start given up after cancelling cycles is undone: the solver then finds the cold
/// start's flow, which is the reference solver's edge for edge. Without the undo, the flows
/// differ.
#[test]
fn a_warm_start_given_up_is_undone_to_zero_flow() {
    for planted in [Planted::GiveUp, Planted::GiveUpUndoingNothing] {
        let mut rng = Rng(0x91fe_0b5e_77c3_2a64);
        let (mut tried, mut differ) = (0, 0);
        let cancelled = CANCELLED.with(std::cell::Cell::get);
        for _ in 0..300 {
            let (nodes, edges) = random_network(&mut rng);
            let (value, optimum) = reference(nodes, &edges);
            for preset in presets(&mut rng, nodes, &edges, &optimum) {
                if preset.iter().all(|&x| x == 0) {
                    continue;
                }
                let (v, flows) = solve_with(nodes, &edges, &preset, planted);
                tried += 1;
                if planted == Planted::GiveUp {
                    assert_eq!((v, &flows), (value, &optimum));
                } else if (v, &flows) != (value, &optimum) {
                    differ += 1;
                }
            }
        }
        assert!(tried > 300, "{planted:?}: only {tried} proposals tried");
        let cancelled = CANCELLED.with(std::cell::Cell::get) - cancelled;
        assert!(
            cancelled > 100,
            "{planted:?}: only {cancelled} cycles cancelled before giving up"
        );
        if planted == Planted::GiveUpUndoingNothing {
            assert!(differ > 100, "only {differ} of {tried} kept flows caught");
        }
    }
}

/// A source-to-sink path of `edges` (edge indices), if any: the networks are layered DAGs.
fn a_path(nodes: usize, edges: &[Edge]) -> Option<Vec<usize>> {
    fn walk(u: u32, sink: u32, edges: &[Edge], path: &mut Vec<usize>) -> bool {
        if u == sink {
            return true;
        }
        for (i, e) in edges.iter().enumerate() {
            if e.0 == u && e.2 > 0 {
                path.push(i);
                if walk(e.1, sink, edges, path) {
                    return true;
                }
                path.pop();
            }
        }
        false
    }
    let mut path = Vec::new();
    walk(0, nodes as u32 - 1, edges, &mut path).then_some(path)
}

/// Proposals that conserve flow but break a capacity (one edge over it, or one below zero)
/// are refused, and the solver still returns a minimum-cost maximum flow.
#[test]
fn proposals_outside_the_capacities_are_refused() {
    let mut rng = Rng(0x5eed_cafe_0042_1701);
    let mut tried = 0;
    for case in 0..400 {
        let (nodes, edges) = random_network(&mut rng);
        let (value, optimum) = reference(nodes, &edges);
        let best = cost_of(&edges, &optimum);
        let Some(path) = a_path(nodes, &edges) else {
            continue;
        };
        // Along the path: k more units than the tightest edge has room for, or k fewer than
        // the emptiest edge carries. Both keep every node balanced.
        let room = path
            .iter()
            .map(|&i| edges[i].2 - optimum[i])
            .min()
            .unwrap_or(0);
        let carried = path.iter().map(|&i| optimum[i]).min().unwrap_or(0);
        for delta in [room + 1, -(carried + 1)] {
            let mut preset = optimum.clone();
            for &i in &path {
                preset[i] += delta;
            }
            let (v, flows) = solve_with(nodes, &edges, &preset, Planted::None);
            assert_eq!(v, value, "case {case}, delta {delta}");
            assert!(is_flow(nodes, &edges, &flows), "case {case}, delta {delta}");
            assert_eq!(cost_of(&edges, &flows), best, "case {case}, delta {delta}");
            tried += 1;
        }
    }
    assert!(
        tried > 400,
        "only {tried} proposals outside the capacities tried"
    );
}

/// `spec` without its last member (it leaves).
fn leave(spec: &GroupSpec) -> GroupSpec {
    let mut next = spec.clone();
    next.members.pop();
    next
}

/// `spec` with a new member subscribed like the first one, owning nothing (it joins).
fn join(spec: &GroupSpec) -> GroupSpec {
    let mut next = spec.clone();
    if let Some(first) = spec.members.first() {
        let mut joiner = first.clone();
        joiner.id = "J".into();
        joiner.owned.clear();
        joiner.generation = -1;
        next.members.push(joiner);
    }
    next
}

#[test]
fn uniform_v2_stays_optimal_when_members_stay_leave_or_join() {
    let mut rng = Rng(0x5ab1e);
    let before = CERTIFIED.with(std::cell::Cell::get);
    for case in 0..250 {
        let spec = random_spec(&mut rng, 256);
        let stable = feed_back(&spec, &UniformV2.assign(&spec).unwrap());
        for (kind, next) in [stable.clone(), leave(&stable), join(&stable)]
            .iter()
            .enumerate()
        {
            // The fast paths, and the class flow alone (whose warm starts are counted: the
            // fast paths take most of these groups).
            let best = Some(brute_force(next));
            for a in [UniformV2.assign(next), assign_with(next, false)] {
                assert_eq!(
                    score(next, &a.unwrap()),
                    best,
                    "case {case}, kind {kind}: {}",
                    next.to_json()
                );
            }
        }
    }
    let certified = CERTIFIED.with(std::cell::Cell::get) - before;
    assert!(certified > 100, "only {certified} warm starts certified");
}

/// `spec` with every claim dropped: a full assignment.
fn unowned(spec: &GroupSpec) -> GroupSpec {
    let mut next = spec.clone();
    for m in &mut next.members {
        m.owned.clear();
        m.generation = -1;
    }
    next
}

/// The flow for every component (no fast path), with the greedy completion or without it.
fn flow_result(spec: &GroupSpec, greedy: bool) -> Assignment {
    GREEDY_OFF.with(|g| g.set(!greedy));
    let a = assign_with(spec, false);
    GREEDY_OFF.with(|g| g.set(false));
    a.unwrap()
}

#[test]
fn full_assignments_certify_the_greedy_proposal_and_stay_optimal() {
    let mut rng = Rng(0x6eed_9e37_0f11_a55e);
    let before = CERTIFIED.with(std::cell::Cell::get);
    let cancelled_before = CANCELLED.with(std::cell::Cell::get);
    let mut solved = 0;
    for case in 0..300 {
        let spec = unowned(&random_spec(&mut rng, 256));
        let certified = CERTIFIED.with(std::cell::Cell::get);
        let a = flow_result(&spec, true);
        let got = score(&spec, &a);
        assert_eq!(
            got,
            Some(brute_force(&spec)),
            "case {case}: {}",
            spec.to_json()
        );
        // The same objective values as the solver's cold start.
        assert_eq!(got, score(&spec, &flow_result(&spec, false)), "case {case}");
        if CERTIFIED.with(std::cell::Cell::get) > certified {
            solved += 1;
        }
    }
    for case in 0..300 {
        let spec = unowned(&medium_spec(&mut rng));
        let got = score(&spec, &flow_result(&spec, true));
        assert!(got.is_some(), "medium case {case}");
        assert_eq!(
            got,
            score(&spec, &flow_result(&spec, false)),
            "medium case {case}: {}",
            spec.to_json()
        );
    }
    // Without the greedy completion a full assignment proposes nothing, so every
    // certification here is the greedy proposal's; some of them repaired it.
    let certified = CERTIFIED.with(std::cell::Cell::get) - before;
    let cancelled = CANCELLED.with(std::cell::Cell::get) - cancelled_before;
    assert!(
        solved > 150,
        "only {solved} of 300 tiny full assignments certified"
    );
    assert!(
        certified > 400,
        "only {certified} greedy proposals certified"
    );
    assert!(cancelled > 0, "no greedy proposal needed a repair");
}

#[test]
fn without_the_greedy_completion_full_assignments_start_cold() {
    // The counter above has teeth: a full assignment proposes nothing without it.
    let mut rng = Rng(0x0c01_d517_a77e_0017);
    let before = CERTIFIED.with(std::cell::Cell::get);
    for _ in 0..100 {
        let spec = unowned(&medium_spec(&mut rng));
        flow_result(&spec, false);
    }
    assert_eq!(CERTIFIED.with(std::cell::Cell::get), before);
}
