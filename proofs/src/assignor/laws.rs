//! The laws of an assignor as a function, beyond any single output: determinism (input order
//! does not matter) and the fixed point (its own output, fed back as the previous assignment,
//! comes back unchanged). These take the assignor under test as an argument; they never
//! compute an assignment themselves.

use std::collections::BTreeMap;

use rebalance::{Assignment, GroupSpec, OwnedPartitions, SpecError};

use super::check::{Oracle, Report, check_with};
use super::violation::Violation;

/// The spec with `output` as every member's previous assignment, all at one generation above
/// the highest in `spec`: the input of the next rebalance when nothing else changed.
#[must_use]
pub fn with_owned(spec: &GroupSpec, output: &Assignment) -> GroupSpec {
    let generation = spec
        .members
        .iter()
        .map(|m| m.generation)
        .max()
        .unwrap_or(0)
        .max(0)
        .saturating_add(1);
    let mut next = spec.clone();
    for member in &mut next.members {
        member.generation = generation;
        member.owned = output
            .member(&member.id)
            .map(|topics| {
                topics
                    .iter()
                    .map(|(topic, partitions)| OwnedPartitions {
                        topic: topic.to_owned(),
                        partitions: partitions.to_vec(),
                    })
                    .collect()
            })
            .unwrap_or_default();
    }
    next
}

/// A reordering of a spec's lists that leaves its content unchanged.
pub type Reordering = (&'static str, fn(&mut GroupSpec));

/// The reorderings [`check_determinism`] applies.
pub const REORDERINGS: [Reordering; 5] = [
    ("members reversed", |s| s.members.reverse()),
    ("topics reversed", |s| s.topics.reverse()),
    ("subscriptions reversed", |s| {
        s.members.iter_mut().for_each(|m| m.subscriptions.reverse());
    }),
    ("claims and claimed partitions reversed", |s| {
        for m in &mut s.members {
            m.owned.reverse();
            m.owned.iter_mut().for_each(|o| o.partitions.reverse());
        }
    }),
    ("everything rotated by one", |s| {
        rotate(&mut s.members);
        rotate(&mut s.topics);
        for m in &mut s.members {
            rotate(&mut m.subscriptions);
            rotate(&mut m.owned);
        }
    }),
];

fn rotate<T>(items: &mut [T]) {
    if !items.is_empty() {
        items.rotate_left(1);
    }
}

/// Determinism: runs `assign` on `spec` and on each of [`REORDERINGS`] of it and reports every
/// reordering whose output differs (naming the first member that differs).
#[must_use]
pub fn check_determinism<F>(spec: &GroupSpec, assign: F) -> Report
where
    F: Fn(&GroupSpec) -> Result<Assignment, SpecError>,
{
    let mut report = Report::default();
    match assign(spec) {
        Ok(base) => determinism(spec, &base, &assign, &REORDERINGS, &mut report.violations),
        Err(error) => report.violations.push(Violation::AssignorFailed { error }),
    }
    report
}

/// Fixed point: runs `assign` on `spec`, feeds the output back as every member's `owned` at a
/// higher generation ([`with_owned`]) and reports a violation if the second output differs.
#[must_use]
pub fn check_fixed_point<F>(spec: &GroupSpec, assign: F) -> Report
where
    F: Fn(&GroupSpec) -> Result<Assignment, SpecError>,
{
    let mut report = Report::default();
    match assign(spec) {
        Ok(first) => fixed_point(spec, &first, &assign, &mut report.violations),
        Err(error) => report.violations.push(Violation::AssignorFailed { error }),
    }
    report
}

/// All six properties of an assignor on one spec: runs `assign` once, checks its output
/// ([`check_with`], properties 1–5), then determinism under the given reorderings (a subset of
/// [`REORDERINGS`], to bound the cost in exhaustive runs) and the fixed point.
#[must_use]
pub fn check_assignor<F>(
    spec: &GroupSpec,
    assign: F,
    reorderings: &[Reordering],
    oracle: Option<Oracle>,
) -> Report
where
    F: Fn(&GroupSpec) -> Result<Assignment, SpecError>,
{
    let output = match assign(spec) {
        Ok(a) => a,
        Err(error) => {
            return Report {
                violations: vec![Violation::AssignorFailed { error }],
                ..Report::default()
            };
        }
    };
    let mut report = check_with(spec, &output, oracle);
    determinism(spec, &output, &assign, reorderings, &mut report.violations);
    fixed_point(spec, &output, &assign, &mut report.violations);
    report
}

fn determinism<F>(
    spec: &GroupSpec,
    base: &Assignment,
    assign: &F,
    reorderings: &[Reordering],
    out: &mut Vec<Violation>,
) where
    F: Fn(&GroupSpec) -> Result<Assignment, SpecError>,
{
    for (name, reorder) in reorderings {
        let mut permuted = spec.clone();
        reorder(&mut permuted);
        match assign(&permuted) {
            Err(error) => out.push(Violation::AssignorFailed { error }),
            Ok(other) if &other != base => {
                let (member, original, reordered) = first_difference(base, &other);
                out.push(Violation::Nondeterministic {
                    reordering: name,
                    member,
                    original,
                    reordered,
                });
            }
            Ok(_) => {}
        }
    }
}

fn fixed_point<F>(spec: &GroupSpec, first: &Assignment, assign: &F, out: &mut Vec<Violation>)
where
    F: Fn(&GroupSpec) -> Result<Assignment, SpecError>,
{
    match assign(&with_owned(spec, first)) {
        Err(error) => out.push(Violation::AssignorFailed { error }),
        Ok(second) if &second != first => {
            let (member, before, after) = first_difference(first, &second);
            out.push(Violation::NotFixedPoint {
                member,
                before,
                after,
            });
        }
        Ok(_) => {}
    }
}

fn first_difference(a: &Assignment, b: &Assignment) -> (String, String, String) {
    let (a, b) = (a.to_map(), b.to_map());
    let members: std::collections::BTreeSet<_> = a.keys().chain(b.keys()).collect();
    for m in members {
        let (x, y) = (a.get(m), b.get(m));
        if x != y {
            return (m.0.clone(), show(x), show(y));
        }
    }
    (String::new(), String::new(), String::new())
}

fn show(topics: Option<&BTreeMap<String, Vec<i32>>>) -> String {
    match topics {
        None => "no entry".to_owned(),
        Some(t) => serde_json::to_string(t).unwrap_or_default(),
    }
}
