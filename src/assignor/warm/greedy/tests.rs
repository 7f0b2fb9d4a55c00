//! Unit tests of the greedy completion and of the alignment of units to racks.

use super::*;

/// Two topics over three members: topic 0 (f = 1, r = 1) on all three, topic 1
/// (f = 0, r = 1) on members 0 and 1.
fn empty() -> Proposal {
    Proposal {
        floor: vec![1, 0],
        has_extra: vec![true, true],
        extra: vec![1, 1],
        subs: vec![vec![0, 1, 2], vec![0, 1]].into(),
        count: vec![vec![0, 0, 0], vec![0, 0]].into(),
        load: vec![1, 1, 1],
    }
}

#[test]
fn floors_are_filled_and_extras_go_to_the_lightest() {
    let mut p = empty();
    assert!(p.complete());
    // Topic 0's extra to member 0 (ties to the lower index), topic 1's to member 1.
    assert_eq!(p.count, vec![vec![2, 1, 1], vec![0, 1]]);
    assert_eq!(p.load, vec![2, 2, 1]);
    assert!(!p.hopeless());
}

#[test]
fn held_units_are_kept_and_too_many_extras_refused() {
    let mut p = empty();
    p.count = vec![vec![0, 0, 2], vec![0, 0]].into();
    p.load = vec![1, 1, 2];
    assert!(p.complete());
    assert_eq!(p.count, vec![vec![1, 1, 2], vec![1, 0]]);
    let mut p = empty();
    p.count = vec![vec![2, 2, 0], vec![0, 0]].into();
    assert!(!p.complete());
    assert_eq!(p.count, vec![vec![2, 2, 0], vec![0, 0]]);
}

/// The extras a caller says are held must be those the counts hold: a miscount (here
/// none said held where one is) is caught before the hand-out.
#[test]
#[should_panic(expected = "held 0, above 1")]
fn a_miscounted_held_extra_is_caught() {
    let mut p = empty();
    p.count = vec![vec![1, 1, 2], vec![0, 0]].into();
    p.load = vec![1, 1, 2];
    p.complete_held(&[0, 0], &|_| false);
}

/// One topic with f = 0 and `extra` extras over subscribers of the given loads.
fn one_topic(loads: &[i64], extra: i32) -> Proposal {
    Proposal {
        floor: vec![0],
        has_extra: vec![extra > 0],
        extra: vec![extra],
        subs: vec![(0..loads.len() as u32).collect()].into(),
        count: vec![vec![0; loads.len()]].into(),
        load: loads.to_vec(),
    }
}

#[test]
fn extras_go_to_the_lightest_lowest_indices_at_the_threshold() {
    let mut p = one_topic(&[5, 5, 5, 4, 5], 3);
    assert!(p.complete());
    assert_eq!(p.count, vec![vec![1, 1, 0, 1, 0]]);
    // Loads too far apart for the histogram: the selection gives the same rule.
    let mut p = one_topic(&[1000, 0, 500, 500, 0], 3);
    assert!(p.complete());
    assert_eq!(p.count, vec![vec![0, 1, 1, 0, 1]]);
    assert_eq!(p.load, vec![1000, 1, 501, 500, 1]);
}

/// A random proposal: `topics` topics over `n` members with loads from 0 to 5 above
/// their extras, some claims held (a few floors short, a few extras).
fn random(rng: &mut crate::assignor::tests::Rng, n: u32, topics: usize) -> Proposal {
    let mut p = Proposal {
        floor: Vec::new(),
        has_extra: Vec::new(),
        extra: Vec::new(),
        subs: Default::default(),
        count: Default::default(),
        load: (0..n).map(|_| rng.below(6) as i64).collect(),
    };
    for _ in 0..topics {
        let subs: Vec<u32> = (0..n).filter(|_| rng.below(3) > 0).collect();
        let len = subs.len() as u64;
        let f = rng.below(3) as i32;
        let r = if len > 1 { rng.below(len) as i32 } else { 0 };
        let mut held = 0;
        let count: Vec<i32> = (0..subs.len())
            .map(|_| match rng.below(8) {
                0 => (f - 1).max(0),
                1 if held < r => {
                    held += 1;
                    f + 1
                }
                _ => f,
            })
            .collect();
        for (&m, &k) in subs.iter().zip(&count) {
            p.load[m as usize] += i64::from(k > f);
        }
        p.floor.push(f);
        p.has_extra.push(r > 0);
        p.extra.push(r);
        p.subs.push(subs);
        p.count.push(count);
    }
    p
}

/// The improving passes skip a topic only when handing it out again would change
/// nothing: the same proposals as handing every topic out again, on random ones, with
/// topics spared (some by the per-load counts alone, without a pass); the planted fault (no
/// topic handed out again) is caught.
#[test]
fn spared_topics_are_exactly_those_a_hand_out_keeps() {
    let mut rng = crate::assignor::tests::Rng(29);
    let complete = completed_same;
    let (mut differs, mut spared, mut counted) = (0, 0, 0);
    for _ in 0..300 {
        let n = 2 + rng.below(12) as u32;
        let topics = 1 + rng.below(6) as usize;
        let p = random(&mut rng, n, topics);
        SPARED.with(|c| c.set(0));
        COUNTED_SAME.with(|c| c.set(0));
        let got = complete(&p, None);
        spared += SPARED.with(std::cell::Cell::get);
        counted += COUNTED_SAME.with(std::cell::Cell::get);
        assert_eq!(got, complete(&p, Some(false)));
        differs += usize::from(got != complete(&p, Some(true)));
    }
    println!("spared {spared}, by the per-load counts alone {counted}");
    assert!(spared > 50, "spared {spared}");
    assert!(counted > 10, "by the per-load counts alone {counted}");
    assert!(differs > 10, "planted fault caught {differs} times");
}

/// A copy of `p` completed with the sameness test overridden by `same` (cleared after):
/// whether it completed, its counts and its loads.
fn completed_same(p: &Proposal, same: Option<bool>) -> (bool, super::super::Ragged<i32>, Vec<i64>) {
    SAME_OVERRIDE.with(|c| c.set(same));
    let mut q = p.clone();
    let done = q.complete();
    SAME_OVERRIDE.with(|c| c.set(None));
    (done, q.count, q.load)
}

/// A copy of `p` completed with the test switch `switch` set to `value` (and cleared after):
/// whether it completed, its counts and its loads.
fn completed_with(
    p: &Proposal,
    switch: &'static std::thread::LocalKey<std::cell::Cell<bool>>,
    value: bool,
) -> (bool, super::super::Ragged<i32>, Vec<i64>) {
    switch.with(|c| c.set(value));
    let mut q = p.clone();
    let done = q.complete();
    switch.with(|c| c.set(false));
    (done, q.count, q.load)
}

/// A single extra handed out by the one-pass minimum goes where the general path (the
/// histogram and the threshold scan) puts it: the same proposals on random ones whose topics
/// mostly have one extra left (nothing held above the floors), with and without the switch.
#[test]
fn a_single_extra_goes_where_the_general_path_puts_it() {
    let mut rng = crate::assignor::tests::Rng(31);
    let complete = |p: &Proposal, general: bool| completed_with(p, &SINGLE_OFF, general);
    let mut singles = 0;
    for round in 0..300 {
        let n = 2 + rng.below(12) as u32;
        let topics = 1 + rng.below(6) as usize;
        let mut p = random(&mut rng, n, topics);
        // Every extra taken back, and most topics left with one, some loads far apart (the
        // general path's selection).
        for lt in 0..p.subs.len() {
            let f = p.floor[lt];
            for (&m, k) in p.subs[lt].iter().zip(&mut p.count[lt]) {
                if *k > f {
                    *k = f;
                    p.load[m as usize] -= 1;
                }
            }
            if p.subs[lt].len() > 1 && rng.below(4) > 0 {
                p.extra[lt] = 1;
                p.has_extra[lt] = true;
                singles += 1;
            }
        }
        if round % 5 == 0 {
            p.load[0] += 100;
        }
        assert_eq!(complete(&p, false), complete(&p, true));
    }
    assert!(singles > 300, "singles {singles}");
}

/// A random wide proposal: 64 to 213 members with loads 0 to 3, 2 to 7
/// topics (f = 0) on most of them, a few extras each, some held; with the extras held per
/// topic.
fn wide(rng: &mut crate::assignor::tests::Rng) -> (Proposal, Vec<i32>) {
    let n = 64 + rng.below(150) as u32;
    let mut p = Proposal {
        floor: Vec::new(),
        has_extra: Vec::new(),
        extra: Vec::new(),
        subs: Default::default(),
        count: Default::default(),
        load: (0..n).map(|_| rng.below(4) as i64).collect(),
    };
    let mut held = Vec::new();
    for _ in 0..2 + rng.below(6) {
        let subs: Vec<u32> = (0..n).filter(|_| rng.below(8) > 0).collect();
        let r = 2 + rng.below(subs.len() as u64 / 20) as i32;
        let mut h = 0;
        let count: Vec<i32> = (0..subs.len())
            .map(|_| {
                let k = i32::from(h < r / 2 && rng.below(40) == 0);
                h += k;
                k
            })
            .collect();
        for (&m, &k) in subs.iter().zip(&count) {
            p.load[m as usize] += i64::from(k);
        }
        p.floor.push(0);
        p.has_extra.push(true);
        p.extra.push(r);
        p.subs.push(subs);
        p.count.push(count);
        held.push(h);
    }
    (p, held)
}

/// Two topics over 128 members whose improving pass changes the first one's choice: topic 0
/// (all of them) gives its 4 extras to the lightest, members 124 to 127, which topic 1 (them
/// and members 0 to 63, heavier) then raises again; handed out again, topic 0's extras go to
/// members 64 to 67, as light by then and lower.
fn revised() -> (Proposal, Vec<i32>) {
    let load: Vec<i64> = (0..128)
        .map(|lm| [2, 1, 0][lm / 64 + usize::from(lm >= 124)])
        .collect();
    let second: Vec<u32> = (0..64).chain(124..128).collect();
    let subs = vec![(0..128).collect::<Vec<u32>>(), second];
    let p = Proposal {
        floor: vec![0, 0],
        has_extra: vec![true, true],
        extra: vec![4, 4],
        count: vec![vec![0; 128], vec![0; 68]].into(),
        subs: subs.into(),
        load,
    };
    (p, vec![0, 0])
}

/// The improving passes skip a topic only when handing it out again would change nothing,
/// also on wide proposals: on random ones of 64 to 213 members (and one whose improving pass
/// changes a choice), the same completions as handing every topic out again, with topics
/// spared; the planted fault (no topic handed out again) is caught.
#[test]
fn topics_spared_on_wide_proposals_are_those_a_hand_out_keeps() {
    let mut rng = crate::assignor::tests::Rng(41);
    let complete = completed_same;
    let (mut with_held, mut spared, mut differs) = (0, 0, 0);
    for round in 0..300 {
        let (p, held) = if round == 0 {
            revised()
        } else {
            wide(&mut rng)
        };
        with_held += usize::from(held.iter().any(|&h| h > 0));
        SPARED.with(|c| c.set(0));
        let got = complete(&p, None);
        spared += SPARED.with(std::cell::Cell::get);
        assert_eq!(got, complete(&p, Some(false)));
        differs += usize::from(got != complete(&p, Some(true)));
    }
    println!("with extras held {with_held}, spared {spared}, planted fault caught {differs}");
    assert!(with_held > 100, "with extras held {with_held}");
    assert!(spared > 100, "spared {spared}");
    assert!(differs > 0, "planted fault caught {differs} times");
}

#[test]
fn constrained_classes_align_first() {
    // Class 0 reaches racks 0 and 1, class 1 only rack 0: class 1 must take rack 0.
    let mut supply = vec![2, 2];
    let mut demand = vec![2, 2];
    let sends = align(&mut supply, &[vec![0, 1], vec![0]], &mut demand);
    assert_eq!(sends, vec![(0, 1, 2), (1, 0, 2)]);
    assert_eq!((supply, demand), (vec![0, 0], vec![0, 0]));
}

#[test]
fn an_augmenting_path_repairs_a_greedy_choice() {
    // Class 0 (racks 0, 1) first takes rack 1, the pool with the most demand, which class
    // 1 (racks 1, 2) needed: moving class 0 to rack 0 aligns everything.
    let mut supply = vec![1, 2];
    let mut demand = vec![1, 2, 0];
    let sends = align(&mut supply, &[vec![0, 1], vec![1, 2]], &mut demand);
    assert_eq!(sends, vec![(0, 0, 1), (1, 1, 2)]);
    assert_eq!((supply, demand), (vec![0, 0], vec![0, 0, 0]));
}

#[test]
fn units_no_rack_pool_wants_are_left_unaligned() {
    let mut supply = vec![3];
    let mut demand = vec![1, 0];
    let sends = align(&mut supply, &[vec![0, 1]], &mut demand);
    assert_eq!(sends, vec![(0, 0, 1)]);
    assert_eq!((supply, demand), (vec![2], vec![0, 0]));
}

/// Several extras handed out by the two-level pass go where the general path puts them: the
/// same completed proposals, with and without it, on random ones whose loads are mostly
/// within one or two of each other (the fast path taken, and declined where too few are at
/// the lightest load or one above), most topics without extras held (the others take the
/// general path); it was taken for many topics.
#[test]
fn extras_by_two_levels_go_where_the_general_path_puts_them() {
    let mut rng = crate::assignor::tests::Rng(43);
    let complete = |p: &Proposal, off: bool| completed_with(p, &NARROW_OFF, off);
    let mut fast = 0;
    for round in 0..300 {
        let n = 4 + rng.below(40) as u32;
        let topics = 2 + rng.below(8) as usize;
        let mut p = random(&mut rng, n, topics);
        // Loads mostly equal, a few one or two apart, some far apart (only the choices
        // matter here, not what the loads count).
        for l in &mut p.load {
            *l = match rng.below(10) {
                0 => 2,
                1..=3 => 1,
                _ => 0,
            };
        }
        if round % 7 == 0 {
            p.load[0] += 50;
        }
        // Most topics without extras held (the fast path is for those), the others keep
        // theirs.
        for lt in 0..p.subs.len() {
            if rng.below(4) > 0 {
                let f = p.floor[lt];
                p.count[lt].iter_mut().for_each(|k| *k = (*k).min(f));
            }
        }
        NARROW_TAKEN.with(|c| c.set(0));
        let got = complete(&p, false);
        fast += NARROW_TAKEN.with(std::cell::Cell::get);
        assert_eq!(got, complete(&p, true));
    }
    assert!(fast > 200, "two-level hand-outs {fast}");
}

/// The two-level pass started at the cursor (the lowest member at the lightest load) chooses
/// what the pass over every subscriber does: the same completed proposals, with and without
/// the cursor, on random ones shaped as a greedy completion leaves them (the lower members
/// one unit heavier, a few lighter ones left among them), nothing held above the floors, so
/// that the pass is taken and the improving passes take extras back below the cursor; the
/// planted fault (the cursor not lowered by a take-back) is caught.
#[test]
fn two_levels_from_the_cursor_choose_what_the_whole_pass_does() {
    let mut rng = crate::assignor::tests::Rng(47);
    let complete = |p: &Proposal, off: bool| completed_with(p, &CURSOR_OFF, off);
    let (mut fast, mut caught) = (0, 0);
    for _ in 0..300 {
        let n = 8 + rng.below(120) as u32;
        let topics = 2 + rng.below(10) as usize;
        let mut p = random(&mut rng, n, topics);
        let cut = rng.below(u64::from(n)) as usize;
        for (lm, l) in p.load.iter_mut().enumerate() {
            *l = i64::from(lm < cut && rng.below(8) > 0) + i64::from(rng.below(16) == 0);
        }
        for lt in 0..p.subs.len() {
            let f = p.floor[lt];
            p.count[lt].iter_mut().for_each(|k| *k = (*k).min(f));
        }
        NARROW_TAKEN.with(|c| c.set(0));
        let got = complete(&p, false);
        fast += NARROW_TAKEN.with(std::cell::Cell::get);
        assert_eq!(got, complete(&p, true));
        caught += usize::from(completed_with(&p, &CURSOR_KEPT, true) != got);
    }
    println!("two-level hand-outs {fast}, planted fault caught {caught} times");
    assert!(fast > 300, "two-level hand-outs {fast}");
    assert!(caught > 5, "planted fault caught {caught} times");
}
