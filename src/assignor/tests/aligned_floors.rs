//! Tests of the exact rack-aware flow with floors (`aligned/floors.rs`), the last construction
//! of the rack-aware path: it runs on racked bucket and homogeneous joins and leaves where the
//! flow of extras could not be certified, its results have the class flow's objective values
//! (brute force on small groups), do not depend on input order, and a planted fault (keeps
//! ignored) is caught. Its warm start is certified on joins and leaves, and two planted
//! faults in it show.

use super::super::aligned::{
    EXTRAS_BY_ID, NO_KEEPS, Variant, exchange_tally, floors_tally, keep_all_tally, tally,
};
use super::super::claims::previous_owners;
use super::super::problem::Problem;
use super::super::uniform::assign_with;
use super::super::*;
use super::aligned::{random_racked, with_variant};
use super::aligned_flow::bench_like;
use super::homogeneous::small_enough;
use super::oracle::{
    Rng, brute_force, checked_against_flow, feed_back, misses_the_flow, permuted, score,
    worse_caught,
};
use super::{member, topic};

/// A bench-like group whose topics have more partitions than members (f_t > 0), one member
/// joined or left: the shape on which keeping the lowest claims first fails.
fn with_floors(rng: &mut Rng, case: usize) -> GroupSpec {
    loop {
        let spec = bench_like(rng, 24, 6, 1 + case / 2 % 3, case.is_multiple_of(2));
        let n = spec.members.len() as i64;
        if spec.topics.iter().any(|t| t.partitions > n) {
            return spec;
        }
    }
}

#[test]
fn floors_results_equal_the_flow_on_benchmark_like_groups() {
    let mut rng = Rng(97);
    let before = floors_tally::get();
    for case in 0..300 {
        let spec = with_floors(&mut rng, case);
        checked_against_flow(case, &spec);
    }
    let ran = floors_tally::get() - before;
    println!("benchmark-like groups with floors: the flow with floors assigned {ran} components");
    assert!(
        ran >= 20,
        "the flow with floors ran on {ran} components only"
    );
}

#[test]
fn floors_results_are_optimal_on_small_groups() {
    let mut rng = Rng(101);
    let before = floors_tally::get();
    let mut checked = 0;
    while checked < 600 {
        let spec = if checked % 2 == 0 {
            bench_like(&mut rng, 6, 3, 1, checked % 4 == 0)
        } else {
            random_racked(&mut rng, 4, 3, 1 + checked as u64 % 4 / 2)
        };
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
    }
    let ran = floors_tally::get() - before;
    println!("small groups: the flow with floors assigned {ran} components");
    assert!(
        ran >= 5,
        "the flow with floors ran on {ran} components only"
    );
}

#[test]
fn input_order_does_not_change_the_floors_result() {
    let mut rng = Rng(103);
    let before = floors_tally::get();
    for case in 0..150 {
        let spec = with_floors(&mut rng, case);
        let permuted = permuted(&mut rng, &spec);
        assert_eq!(
            UniformV2.assign(&spec).unwrap(),
            UniformV2.assign(&permuted).unwrap(),
            "case {case}"
        );
    }
    let ran = floors_tally::get() - before;
    assert!(
        ran >= 10,
        "the flow with floors ran on {ran} components only"
    );
}

#[test]
fn floors_ignoring_keeps_is_caught() {
    // The planted variant runs the flow with floors wherever the repaired greedy's deal does
    // not fit, with keep edges at no cost: still valid, spread, balanced and aligned, so only
    // stickiness can show it. Both oracles must see it.
    let mut rng = Rng(107);
    let (mut wrong, mut tried) = (0, 0);
    for case in 0..300 {
        let spec = with_floors(&mut rng, case);
        let Some(variant) = with_variant(&spec, Variant::FloorsIgnoreKeeps) else {
            continue;
        };
        tried += 1;
        let got = score(&spec, &variant);
        assert!(
            got.is_some(),
            "the variant must stay valid: {}",
            spec.to_json()
        );
        if got != score(&spec, &assign_with(&spec, false).unwrap()) {
            wrong += 1;
        }
    }
    println!("floors ignoring keeps: {wrong} of {tried} worse than the flow");
    assert!(wrong > 10, "only {wrong} of {tried} caught");
    let caught = worse_caught(
        &mut rng,
        300,
        &mut |rng| {
            let join = rng.below(2) == 0;
            bench_like(rng, 6, 3, 1, join)
        },
        &|spec| with_variant(spec, Variant::FloorsIgnoreKeeps),
    );
    assert!(
        caught > 3,
        "only {caught} worse results caught by the brute force"
    );
}

#[test]
fn a_final_refusal_leads_to_the_exact_flows() {
    // On racked components of 16 members or more the repair's first refusal ends the
    // greedy's attempts, and below 64 members a component with a floor skips the greedy
    // (where, on these groups, it used to refuse); the exact flows after either must still
    // give the class flow's objective values.
    let mut rng = Rng(109);
    let before = (tally::gave_up(), floors_tally::get());
    let mut checked = 0;
    while checked < 150 {
        let spec = bench_like(&mut rng, 40, 8, 1, checked % 2 == 0);
        if spec.members.len() < 16 {
            continue;
        }
        checked += 1;
        checked_against_flow(checked, &spec);
    }
    let gave_up = tally::gave_up() - before.0;
    let floors = floors_tally::get() - before.1;
    println!("large benchmark-like groups: {gave_up} final refusals, flow with floors on {floors}");
    assert!(
        gave_up + floors >= 5,
        "only {gave_up} + {floors} exact flows"
    );
}

/// Alignable partitions and keepable claims of a spec whose members form one homogeneous
/// component (every member subscribes to every topic), from the definitions.
fn alignable_and_keepable(spec: &GroupSpec) -> (i64, i64) {
    let problem = Problem::new(spec);
    let owners = previous_owners(&problem);
    let racks: Vec<&str> = spec
        .members
        .iter()
        .filter_map(|m| m.rack.as_deref())
        .collect();
    let (mut alignable, mut keepable) = (0, 0);
    for (ti, t) in problem.topics.iter().enumerate() {
        let Some(replicas) = &t.replica_racks else {
            continue;
        };
        let can = |p: usize| replicas[p].iter().any(|r| racks.contains(&r.as_str()));
        alignable += (0..t.partitions as usize).filter(|&p| can(p)).count() as i64;
        keepable += owners[ti]
            .iter()
            .filter(|&&(p, m)| {
                let rack = problem.members[m as usize].rack.as_deref();
                !can(p as usize)
                    || rack.is_some_and(|r| replicas[p as usize].iter().any(|x| x == r))
            })
            .count() as i64;
    }
    (alignable, keepable)
}

/// Verdicts of the keep-all placement on benchmark-like leaves and joins, with the planted
/// fault when `planted`: (results whose objective values are not the class flow's,
/// placements that succeeded although the class flow's optimum keeps fewer claims or aligns
/// fewer partitions, placements run, placements failed keeping every claim, placements with
/// claims released whose result was returned). A placement that succeeds is the result; without the fault it must
/// not depend on the input order.
fn keep_all_verdicts(planted: bool) -> (usize, usize, usize, usize, usize) {
    let mut rng = Rng(113);
    let mut shuffler = Rng(127);
    let (mut wrong, mut unsound, mut placed, mut failed, mut checked) = (0, 0, 0, 0, 0);
    let mut released = 0;
    keep_all_tally::plant(planted);
    while checked < 200 {
        let spec = bench_like(&mut rng, 40, 6, 1, checked % 4 == 0);
        let n = spec.members.len() as i64;
        if n < 16 || spec.topics.iter().any(|t| t.partitions >= n) {
            continue;
        }
        checked += 1;
        let before = keep_all_tally::get();
        let fast = UniformV2.assign(&spec).unwrap();
        let after = keep_all_tally::get();
        if after[keep_all_tally::PLACED] == before[keep_all_tally::PLACED] {
            continue;
        }
        placed += 1;
        let flow = assign_with(&spec, false).unwrap();
        let best = score(&spec, &flow).unwrap();
        if score(&spec, &fast) != Some(best) {
            wrong += 1;
        }
        if after[keep_all_tally::FAILED] > before[keep_all_tally::FAILED] {
            failed += 1;
            continue;
        }
        if !planted {
            let again = UniformV2.assign(&permuted(&mut shuffler, &spec)).unwrap();
            assert_eq!(again, fast, "input order leaked: {}", spec.to_json());
        }
        if after[keep_all_tally::RELEASED] > before[keep_all_tally::RELEASED] {
            // Keeping every claim was not balanced: only the objective values tell.
            if after[keep_all_tally::RETURNED] > before[keep_all_tally::RETURNED] {
                released += 1;
            }
            continue;
        }
        let (alignable, keepable) = alignable_and_keepable(&spec);
        if best.1 != alignable || best.2 != keepable {
            unsound += 1;
        }
    }
    keep_all_tally::plant(false);
    (wrong, unsound, placed, failed, released)
}

#[test]
fn the_keep_all_placement_succeeds_only_where_every_claim_can_be_kept() {
    // Where the placement fails, the greedy is skipped for the exact flow of extras; where it
    // succeeds, its placement is the result, keeping every claim, so the class flow's
    // optimum must align every alignable partition and keep every keepable claim. Every
    // result must have the class flow's objective values either way.
    let (wrong, unsound, placed, failed, released) = keep_all_verdicts(false);
    println!(
        "keep-all placement: {placed} run, {failed} failed, {released} releasing claims, \
         {unsound} unsound, {wrong} wrong"
    );
    assert!(
        failed >= 5 && placed >= failed + released + 20,
        "{placed} {failed} {released}"
    );
    assert!(
        released >= 10,
        "claims released on {released} components only"
    );
    assert_eq!((wrong, unsound), (0, 0));
    // Planted: a placement that ignores claims, racks and room succeeds where keeping every
    // claim is impossible, and its results (now returned) are not optimal or not even valid.
    let (wrong, unsound, placed, failed, released) = keep_all_verdicts(true);
    println!(
        "planted keep-all placement: {placed} run, {failed} failed, {released} releasing \
         claims, {unsound} unsound, {wrong} wrong"
    );
    assert!(unsound >= 5, "only {unsound} unsound placements caught");
    assert!(wrong >= 20, "only {wrong} wrong results caught");
}

#[test]
fn components_whose_claims_cannot_be_released_go_to_the_exact_flow() {
    // Where `release` finds no claims to release, the greedy is skipped for the flow of
    // extras (exact where every topic is open and every member racked): the results must
    // have the class flow's objective values.
    let mut rng = Rng(139);
    let before = keep_all_tally::get()[keep_all_tally::NO_RELEASE];
    let mut checked = 0;
    while checked < 150 {
        let spec = bench_like(&mut rng, 60, 40, 2, checked % 3 != 0);
        let n = spec.members.len() as i64;
        if n < 32 || spec.topics.iter().any(|t| t.partitions >= n / 2) {
            continue;
        }
        checked_against_flow(checked, &spec);
        checked += 1;
    }
    let sent = keep_all_tally::get()[keep_all_tally::NO_RELEASE] - before;
    println!("bucket joins and leaves: {sent} components with no claims to release");
    assert!(
        sent >= 10,
        "only {sent} components with no claims to release"
    );
}

/// A racked homogeneous group of 16 to 40 members on three racks after one member joined
/// (`join`) or left, with topics of fewer partitions than members whose replica racks are
/// mostly the first two (as on the benchmark's racked leave, where the partitions a member
/// frees are more than the members of their racks holding none of their topics).
fn skewed(rng: &mut Rng, join: bool) -> GroupSpec {
    let racks = ["a", "b", "c"];
    let n = 16 + rng.below(25) as usize;
    let k = 2 + rng.below(8) as usize;
    let names: Vec<String> = (0..k).map(|t| format!("T{t}")).collect();
    let pair = |x: u64| -> Vec<String> {
        let (a, b) = [(0, 1), (0, 1), (1, 2), (0, 2)][x as usize];
        vec![racks[a].to_owned(), racks[b].to_owned()]
    };
    let spec = GroupSpec {
        rack_aware: true,
        topics: names
            .iter()
            .map(|name| {
                let mut x = topic(name, 1 + rng.below(n as u64 - 2) as i64);
                x.replica_racks = Some((0..x.partitions).map(|_| pair(rng.below(4))).collect());
                x
            })
            .collect(),
        members: (0..n)
            .map(|m| {
                let subs: Vec<&str> = names.iter().map(String::as_str).collect();
                let mut x = member(&format!("M{m:02}"), &subs);
                x.rack = Some(racks[m % 3].to_owned());
                x
            })
            .collect(),
    };
    let stable = UniformV2.assign(&spec).unwrap();
    let mut next = feed_back(&spec, &stable);
    if join {
        let subs: Vec<&str> = names.iter().map(String::as_str).collect();
        let mut joiner = member("M99", &subs);
        joiner.rack = Some(racks[rng.below(3) as usize].to_owned());
        next.members.push(joiner);
    } else {
        let gone = rng.below(n as u64) as usize;
        next.members.remove(gone);
    }
    next
}

/// Verdicts of the keep-all placement's exchanges on benchmark-like leaves and joins, with
/// the planted fault (no augmenting paths) when `planted`: (results returned by the exchanges,
/// those whose objective values are not the class flow's).
fn exchange_verdicts(planted: bool) -> (usize, usize) {
    let mut rng = Rng(131);
    let mut shuffler = Rng(137);
    let (mut exchanged, mut wrong, mut checked) = (0, 0, 0);
    exchange_tally::plant(planted);
    while checked < 1200 {
        let spec = skewed(&mut rng, checked % 4 == 0);
        checked += 1;
        let before = exchange_tally::get();
        let fast = UniformV2.assign(&spec).unwrap();
        if exchange_tally::get()[exchange_tally::EXCHANGED] == before[exchange_tally::EXCHANGED] {
            continue;
        }
        exchanged += 1;
        let order = (!planted).then_some(&mut shuffler);
        wrong += usize::from(misses_the_flow(&spec, &fast, order));
    }
    exchange_tally::plant(false);
    (exchanged, wrong)
}

#[test]
fn the_keep_all_exchanges_move_the_fewest_claims() {
    // Where keeping every claim fails, the exchanges' result moves exactly as many claims as
    // the bound L - nu allows: it must have the class flow's objective values.
    let (exchanged, wrong) = exchange_verdicts(false);
    println!("keep-all exchanges: {exchanged} returned, {wrong} wrong");
    assert!(exchanged >= 20, "only {exchanged} results by exchanges");
    assert_eq!(wrong, 0);
    // Planted: without augmenting paths the flow may not be maximum, so more claims move
    // than needed, and the result keeps fewer than the optimum.
    let (exchanged, wrong) = exchange_verdicts(true);
    println!("planted keep-all exchanges: {exchanged} returned, {wrong} wrong");
    assert!(wrong >= 8, "only {wrong} wrong results caught");
}

/// A racked homogeneous group shaped like the benchmark's first assignments with one
/// partition per topic (every topic open): `members` members over three racks, `topics`
/// topics whose partition is on two of the racks.
fn first_assignment(members: usize, topics: usize) -> GroupSpec {
    let racks = ["r0", "r1", "r2"];
    let names: Vec<String> = (0..topics).map(|t| format!("t{t:04}")).collect();
    GroupSpec {
        rack_aware: true,
        topics: names
            .iter()
            .enumerate()
            .map(|(t, name)| TopicSpec {
                name: name.clone(),
                partitions: 1,
                replica_racks: Some(vec![vec![
                    racks[t % 3].to_owned(),
                    racks[(t + 1) % 3].to_owned(),
                ]]),
            })
            .collect(),
        members: (0..members)
            .map(|m| MemberSpec {
                id: format!("m{m:03}"),
                rack: Some(racks[m % 3].to_owned()),
                subscriptions: names.clone(),
                owned: Vec::new(),
                generation: -1,
            })
            .collect(),
    }
}

#[test]
fn first_assignments_do_not_run_the_keep_all_placement() {
    // With nothing claimed, the placement's failure says nothing about the greedy (whose
    // repair makes the choice fit), so it must not send the component to the flow of extras.
    let spec = first_assignment(20, 200);
    let before = keep_all_tally::get();
    let full = UniformV2.assign(&spec).unwrap();
    let after = keep_all_tally::get();
    assert_eq!(
        after[keep_all_tally::PLACED],
        before[keep_all_tally::PLACED]
    );
    // One round later a member leaves: now there are claims, and the placement runs.
    let mut spec = feed_back(&spec, &full);
    spec.members.pop();
    let before = keep_all_tally::get();
    let leave = UniformV2.assign(&spec).unwrap();
    let after = keep_all_tally::get();
    assert!(after[keep_all_tally::PLACED] > before[keep_all_tally::PLACED]);
    let flow = assign_with(&spec, false).unwrap();
    assert_eq!(score(&spec, &leave), score(&spec, &flow));
}

/// Runs `specs` with `fault` planted (if any), each result checked against the class flow's
/// objective values; returns the flow with floors' warm starts: (proposed, certified,
/// cycles cancelled by their certification).
fn floors_warm(
    specs: &[GroupSpec],
    fault: Option<&'static std::thread::LocalKey<std::cell::Cell<bool>>>,
) -> (usize, usize, usize) {
    let before = floors_tally::warm();
    if let Some(f) = fault {
        f.with(|x| x.set(true));
    }
    for (case, spec) in specs.iter().enumerate() {
        checked_against_flow(case, spec);
    }
    if let Some(f) = fault {
        f.with(|x| x.set(false));
    }
    let after = floors_tally::warm();
    (after.0 - before.0, after.1 - before.1, after.2 - before.2)
}

/// The flow with floors' warm start is certified on benchmark-like joins and leaves; two
/// planted faults in it (extras given by id, which breaks the members' extra caps so that
/// the proposal is no flow; no claim kept, which leaves it far from optimal) are undone for
/// a cold start or cost more cancelled cycles. Results are checked against the class flow
/// throughout: the proposal decides the speed only.
#[test]
fn the_floors_warm_start_is_certified() {
    let mut rng = Rng(131);
    let specs: Vec<GroupSpec> = (0..200).map(|case| with_floors(&mut rng, case)).collect();
    let (proposed, certified, cancelled) = floors_warm(&specs, None);
    println!("as is: {proposed} proposals, {certified} certified, {cancelled} cycles cancelled");
    assert!(proposed >= 20, "proposed {proposed}");
    assert!(
        10 * certified >= 9 * proposed,
        "{certified} of {proposed} certified"
    );
    let (_, by_id, _) = floors_warm(&specs, Some(&EXTRAS_BY_ID));
    println!("extras by id: {by_id} certified");
    assert!(2 * by_id < certified, "extras by id: {by_id} certified");
    let (_, no_keeps, more) = floors_warm(&specs, Some(&NO_KEEPS));
    println!("no keeps: {no_keeps} certified, {more} cycles cancelled");
    assert!(
        no_keeps < certified || more > 2 * cancelled,
        "no keeps: {no_keeps} certified, {more} cancelled"
    );
}
