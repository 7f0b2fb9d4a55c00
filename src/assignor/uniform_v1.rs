//! The `uniform-v1` baseline: the uniform assignor as it behaves today.
//!
//! It balances only the total number of partitions per member. Every partition of every
//! subscribed topic, in topic order then partition order, forms one list; each member's quota
//! is ⌊N/n⌋ or ⌈N/n⌉ over the n members with at least one existing subscription. A sticky
//! first pass lets every previous owner (members by id) keep its partitions up to its quota;
//! the remaining partitions are then cut into consecutive slices: a cursor walks the members
//! by id and stays on a member until it is full. With heterogeneous subscriptions the cursor
//! skips members not subscribed to the partition's topic, and a partition that no subscriber
//! with room can take goes to its least-loaded subscriber.

use super::claims::previous_owners;
use super::problem::Problem;
use super::{Assignment, Assignor, GroupSpec, SpecError};

/// Today's uniform assignor: balances total counts, ignores per-topic spread and racks.
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformV1;

impl Assignor for UniformV1 {
    fn name(&self) -> &'static str {
        "uniform-v1"
    }

    fn assign(&self, spec: &GroupSpec) -> Result<Assignment, SpecError> {
        spec.validate()?;
        let problem = Problem::new(spec);
        let n_members = problem.members.len();
        let mut lists: Vec<Vec<(u32, i32)>> = vec![Vec::new(); n_members];
        let active = problem
            .subscriptions
            .iter()
            .filter(|s| !s.is_empty())
            .count();
        let total: u64 = (0..problem.topics.len() as u32)
            .filter(|&t| !problem.subscribers[t as usize].is_empty())
            .map(|t| u64::from(problem.partitions(t)))
            .sum();
        if active == 0 || total == 0 {
            return Ok(problem.assignment(lists));
        }
        let quota = (total / active as u64) as usize;
        let mut extras = (total % active as u64) as usize;
        let mut load = vec![0usize; n_members];
        let mut taken: Vec<Vec<bool>> = problem
            .topics
            .iter()
            .map(|t| vec![false; t.partitions as usize])
            .collect();

        // Sticky pass: previous owners keep what they had, up to their quota.
        let owners = previous_owners(&problem);
        let mut kept: Vec<Vec<(u32, i32)>> = vec![Vec::new(); n_members];
        for (t, list) in owners.iter().enumerate() {
            for &(p, m) in list {
                kept[m as usize].push((t as u32, p));
            }
        }
        for (m, claims) in kept.iter().enumerate() {
            for &(t, p) in claims {
                let room = load[m] < quota || (load[m] == quota && extras > 0);
                if !room {
                    break;
                }
                if load[m] == quota {
                    extras -= 1;
                }
                load[m] += 1;
                taken[t as usize][p as usize] = true;
                lists[m].push((t, p));
            }
        }

        // Consecutive slices over the rest.
        let mut cursor = 0usize;
        for (t, subs) in problem.subscribers.iter().enumerate() {
            if subs.is_empty() {
                continue;
            }
            for (p, &was_taken) in taken[t].iter().enumerate() {
                if was_taken {
                    continue;
                }
                let m = pick(subs, &load, quota, extras, cursor);
                let m = match m {
                    Some(m) => {
                        cursor = m;
                        m
                    }
                    None => least_loaded(subs, &load),
                };
                if load[m] >= quota {
                    extras = extras.saturating_sub(1);
                }
                load[m] += 1;
                lists[m].push((t as u32, p as i32));
            }
        }
        Ok(problem.assignment(lists))
    }
}

/// The first subscriber at or after `cursor` (cyclically, by id) with room under its quota.
fn pick(subs: &[u32], load: &[usize], quota: usize, extras: usize, cursor: usize) -> Option<usize> {
    let start = subs.partition_point(|&m| (m as usize) < cursor);
    (0..subs.len())
        .map(|i| subs[(start + i) % subs.len()] as usize)
        .find(|&m| load[m] < quota || (load[m] == quota && extras > 0))
}

fn least_loaded(subs: &[u32], load: &[usize]) -> usize {
    subs.iter()
        .map(|&m| m as usize)
        .min_by_key(|&m| (load[m], m))
        .unwrap_or(0)
}
