//! The `range` baseline: Kafka's RangeAssignor.
//!
//! Per topic, the subscribers sorted by id get contiguous ranges of partitions: each gets
//! ⌊P/|Sub|⌋ and the first P mod |Sub| get one more. Previous owners and racks are ignored.

use super::problem::Problem;
use super::{Assignment, Assignor, GroupSpec, SpecError};

/// Kafka's range assignor (per-topic contiguous ranges; not sticky, not rack-aware).
#[derive(Clone, Copy, Debug, Default)]
pub struct Range;

impl Assignor for Range {
    fn name(&self) -> &'static str {
        "range"
    }

    fn assign(&self, spec: &GroupSpec) -> Result<Assignment, SpecError> {
        spec.validate()?;
        let problem = Problem::new(spec);
        let mut lists = vec![Vec::new(); problem.members.len()];
        for (t, subs) in problem.subscribers.iter().enumerate() {
            if subs.is_empty() {
                continue;
            }
            let total = problem.partitions(t as u32) as usize;
            let base = total / subs.len();
            let extra = total % subs.len();
            let mut next = 0usize;
            for (i, &m) in subs.iter().enumerate() {
                let count = base + usize::from(i < extra);
                for p in next..next + count {
                    lists[m as usize].push((t as u32, p as i32));
                }
                next += count;
            }
        }
        Ok(problem.assignment(lists))
    }
}
