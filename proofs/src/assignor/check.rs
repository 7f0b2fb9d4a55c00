//! The assignor checker: decides whether an assignment satisfies objectives 1–5 for a spec.
//!
//! # What is checked
//!
//! Let *Sub(t)* be the members subscribed to an existing topic *t*, *P_t* its partition count,
//! *load(m)* the number of partitions assigned to *m*, and *prev(p)* the previous owner of *p*
//! (recomputed by [`Problem::from_spec`]). An output *A* is accepted iff:
//!
//! 1. **Validity**: every member of the spec has an entry and no one else does; every listed
//!    topic exists, every listed partition is in range and listed once (lists strictly
//!    ascending, no empty lists); every partition of every *t* with Sub(t) ≠ ∅ is assigned to
//!    exactly one member, and that member is in Sub(t).
//! 2. **Spread**: ∀t, ∀m ∈ Sub(t): ⌊P_t/|Sub(t)|⌋ ≤ |A(m) ∩ t| ≤ ⌈P_t/|Sub(t)|⌉.
//! 3. **Balance**: no partition of *t* held by *m* could move to *m'* ∈ Sub(t) with
//!    load(m') ≤ load(m) − 2 while keeping spread (the local rule), and Σ_m load(m)² equals the
//!    minimum over all assignments satisfying 1–2.
//! 4. **Rack alignment** (when `rack_aware`): among assignments satisfying 1–3 with optimal
//!    Σload², none has more partitions on a member in one of their replica racks.
//! 5. **Stickiness**: among assignments optimal for 1–4, none keeps more partitions with
//!    prev(p).
//!
//! Objectives 3–5 are judged only when 1–2 hold (an invalid assignment has no meaningful
//! score), and 4 and 5 each only when the ones before them are optimal (the local rule and the
//! Σload² optimum are both reported when both fail).
//!
//! The optimum comes from [`brute::optimum`] when the group is small enough, else from
//! [`flow::optimum`]; neither calls the assignor. Determinism and the fixed-point property
//! concern an assignor, not one output: see [`super::laws`].

use std::collections::BTreeMap;
use std::fmt;

use rebalance::{Assignment, AssignmentMap, GroupSpec, SpecError, TopicPartition};

use super::problem::{Objectives, Owners, Problem, TopicView, objectives};
use super::violation::Violation;
use super::{brute, flow};

/// Which oracle computed the optimum.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Oracle {
    /// Exhaustive enumeration ([`brute::optimum`]).
    Brute,
    /// Min-cost flow ([`flow::optimum`]).
    Flow,
}

/// The checker's verdict on one output: every violation found, and the scores it compared.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Report {
    /// Every violated property, in the order 1–5.
    pub violations: Vec<Violation>,
    /// The output's objectives, when it is valid and spread.
    pub achieved: Option<Objectives>,
    /// The optimum, when it was computed, and by which oracle.
    pub optimum: Option<(Objectives, Oracle)>,
}

impl Report {
    /// Whether every checked property holds.
    #[must_use]
    pub fn is_ok(&self) -> bool {
        self.violations.is_empty()
    }

    /// One line summarising the scores, for humans (e.g. the CLI's success message).
    #[must_use]
    pub fn summary(&self) -> String {
        match (&self.achieved, &self.optimum) {
            (Some(a), Some((o, oracle))) => format!(
                "Σload² {} (optimum {}), rack-aligned {} (optimum {}), retained {} (optimum {}); oracle: {oracle:?}",
                a.sum_load_sq,
                o.sum_load_sq,
                a.rack_aligned,
                o.rack_aligned,
                a.retained,
                o.retained
            ),
            _ => format!("{} violation(s)", self.violations.len()),
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for v in &self.violations {
            writeln!(f, "{v}")?;
        }
        Ok(())
    }
}

/// Checks `output` against `spec` (properties 1–5), picking the oracle by size.
#[must_use]
pub fn check(spec: &GroupSpec, output: &Assignment) -> Report {
    check_with(spec, output, None)
}

/// Like [`check`], with the oracle forced (`None`: brute force when the group is small enough,
/// else the flow).
#[must_use]
pub fn check_with(spec: &GroupSpec, output: &Assignment, oracle: Option<Oracle>) -> Report {
    let problem = match Problem::from_spec(spec) {
        Ok(p) => p,
        Err(e) => {
            return Report {
                violations: vec![Violation::InvalidSpec(e)],
                ..Report::default()
            };
        }
    };
    let mut report = Report::default();
    let Some(owners) = validity(&problem, output, &mut report.violations) else {
        return report;
    };
    let loads = loads(&problem, &owners);
    spread(&problem, &owners, &mut report.violations);
    if !report.violations.is_empty() {
        return report;
    }
    local_balance(&problem, &owners, &loads, &mut report.violations);
    let achieved = objectives(&problem, &owners);
    let (optimum, used) = optimum(&problem, oracle);
    report.achieved = Some(achieved);
    report.optimum = Some((optimum, used));
    report.violations.extend(compare(&achieved, &optimum));
    report
}

/// The optimum of a valid spec with the chosen oracle (see [`check_with`]).
///
/// # Errors
/// The spec's [`SpecError`].
pub fn optimum_of(
    spec: &GroupSpec,
    oracle: Option<Oracle>,
) -> Result<(Objectives, Oracle), SpecError> {
    Ok(optimum(&Problem::from_spec(spec)?, oracle))
}

fn optimum(problem: &Problem, oracle: Option<Oracle>) -> (Objectives, Oracle) {
    if oracle != Some(Oracle::Flow) {
        if let Some((value, _)) = brute::optimum(problem) {
            return (value, Oracle::Brute);
        }
        assert!(
            oracle.is_none(),
            "the brute-force oracle was forced on a group too large for it"
        );
    }
    (flow::optimum(problem).0, Oracle::Flow)
}

/// Compares objectives 3–5 with the optimum, each only when the earlier ones are optimal.
fn compare(achieved: &Objectives, optimum: &Objectives) -> Vec<Violation> {
    let steps = [
        ("Σload²", achieved.sum_load_sq, optimum.sum_load_sq, true),
        (
            "rack-aligned",
            achieved.rack_aligned,
            optimum.rack_aligned,
            false,
        ),
        ("retained", achieved.retained, optimum.retained, false),
    ];
    for (objective, value, best, minimise) in steps {
        let worse = if minimise { value > best } else { value < best };
        let beyond = if minimise { value < best } else { value > best };
        if beyond {
            return vec![Violation::BeyondOptimum {
                objective,
                value,
                optimum: best,
            }];
        }
        if worse {
            return vec![match objective {
                "Σload²" => Violation::Balance {
                    sum_load_sq: value,
                    optimum: best,
                },
                "rack-aligned" => Violation::Rack {
                    aligned: value,
                    optimum: best,
                },
                _ => Violation::Sticky {
                    retained: value,
                    optimum: best,
                },
            }];
        }
    }
    Vec::new()
}

/// Property 1. Returns the owner table when the output is valid.
fn validity(problem: &Problem, output: &Assignment, out: &mut Vec<Violation>) -> Option<Owners> {
    let mut holders: Vec<Vec<Vec<usize>>> = problem
        .topics
        .iter()
        .map(|t| vec![Vec::new(); t.partitions as usize])
        .collect();
    // The checker reads the output as plain maps: what it lists, independently of how the
    // crate stores it.
    let output = output.to_map();
    for m in &problem.members {
        if !output.keys().any(|k| k.as_str() == m.id) {
            out.push(Violation::MissingMember {
                member: m.id.clone(),
            });
        }
    }
    for (member_id, topics) in &output {
        let Some(m) = problem.member_index(member_id.as_str()) else {
            out.push(Violation::UnknownMember {
                member: member_id.0.clone(),
            });
            continue;
        };
        for (topic, partitions) in topics {
            if partitions.is_empty() || partitions.windows(2).any(|w| w[0] >= w[1]) {
                out.push(Violation::NotCanonical {
                    member: member_id.0.clone(),
                    topic: topic.clone(),
                });
            }
            let Some(t) = problem.topic_index(topic) else {
                out.push(Violation::UnknownTopic {
                    member: member_id.0.clone(),
                    topic: topic.clone(),
                });
                continue;
            };
            for &p in partitions {
                match u32::try_from(p) {
                    Ok(q) if q < problem.topics[t].partitions => holders[t][q as usize].push(m),
                    _ => out.push(Violation::OutOfRange {
                        member: member_id.0.clone(),
                        topic: topic.clone(),
                        partition: p,
                        partitions: problem.topics[t].partitions,
                    }),
                }
            }
        }
    }
    let mut owners: Owners = Vec::with_capacity(problem.topics.len());
    for (t, topic) in problem.topics.iter().enumerate() {
        let mut row = Vec::with_capacity(topic.partitions as usize);
        for (p, held) in holders[t].iter_mut().enumerate() {
            let tp = TopicPartition::new(topic.name.clone(), p as i32);
            held.sort_unstable();
            match held.as_slice() {
                [] if topic.subscribers.is_empty() => {}
                [] => out.push(Violation::Unassigned { partition: tp }),
                [m] => {
                    if !topic.subscribers.contains(m) {
                        out.push(Violation::NotSubscribed {
                            partition: tp,
                            member: problem.members[*m].id.clone(),
                        });
                    }
                    row.push(*m);
                }
                many => out.push(Violation::Duplicate {
                    partition: tp,
                    members: many
                        .iter()
                        .map(|&m| problem.members[m].id.clone())
                        .collect(),
                }),
            }
        }
        owners.push(row);
    }
    out.is_empty().then_some(owners)
}

fn loads(problem: &Problem, owners: &Owners) -> Vec<u32> {
    let mut loads = vec![0u32; problem.members.len()];
    for row in owners {
        for &m in row {
            loads[m] += 1;
        }
    }
    loads
}

/// Property 2, on a valid assignment.
fn spread(problem: &Problem, owners: &Owners, out: &mut Vec<Violation>) {
    for (t, topic) in problem.topics.iter().enumerate() {
        let (min, max) = (topic.spread_min(), topic.spread_max());
        for (&m, &count) in &counts(topic, &owners[t]) {
            if !(min..=max).contains(&count) {
                out.push(Violation::Spread {
                    member: problem.members[m].id.clone(),
                    topic: topic.name.clone(),
                    count,
                    min,
                    max,
                });
            }
        }
    }
}

/// Each subscriber's number of partitions of one topic.
fn counts(topic: &TopicView, row: &[usize]) -> BTreeMap<usize, u32> {
    let mut counts: BTreeMap<usize, u32> = topic.subscribers.iter().map(|&m| (m, 0)).collect();
    for &m in row {
        *counts.entry(m).or_default() += 1;
    }
    counts
}

/// The local balance rule of property 3, on a valid, spread assignment: for each topic and each
/// member that could give a partition away, names the least-loaded subscriber that could take
/// it.
fn local_balance(problem: &Problem, owners: &Owners, loads: &[u32], out: &mut Vec<Violation>) {
    for (t, topic) in problem.topics.iter().enumerate() {
        let (min, max) = (topic.spread_min(), topic.spread_max());
        // A move from m to m' keeps spread only if m is at the top and m' at the bottom.
        if min == max {
            continue;
        }
        let counts = counts(topic, &owners[t]);
        for (&from, &count_from) in &counts {
            if count_from != max {
                continue;
            }
            let target = counts
                .iter()
                .filter(|&(&to, &c)| c == min && loads[to] + 2 <= loads[from])
                .min_by_key(|&(&to, _)| (loads[to], to));
            if let Some((&to, _)) = target {
                let p = owners[t].iter().position(|&m| m == from).unwrap_or(0);
                out.push(Violation::LocalBalance {
                    partition: TopicPartition::new(topic.name.clone(), p as i32),
                    from: problem.members[from].id.clone(),
                    from_load: loads[from],
                    to: problem.members[to].id.clone(),
                    to_load: loads[to],
                });
            }
        }
    }
}

/// An assignment in the output format from the index form (used by generators and oracles).
#[must_use]
pub fn to_assignment(problem: &Problem, owners: &Owners) -> Assignment {
    let mut out = AssignmentMap::new();
    for m in &problem.members {
        out.insert(m.id.as_str().into(), BTreeMap::new());
    }
    for (t, row) in owners.iter().enumerate() {
        for (p, &m) in row.iter().enumerate() {
            out.entry(problem.members[m].id.as_str().into())
                .or_default()
                .entry(problem.topics[t].name.clone())
                .or_default()
                .push(p as i32);
        }
    }
    Assignment::from(out)
}

/// One optimal assignment of a valid spec, computed by the flow oracle (never the assignor).
///
/// # Errors
/// The spec's [`SpecError`].
pub fn oracle_assignment(spec: &GroupSpec) -> Result<Assignment, SpecError> {
    let problem = Problem::from_spec(spec)?;
    let (_, owners) = flow::optimum(&problem);
    Ok(to_assignment(&problem, &owners))
}
