//! The exact fallback of the [count path](super): the min-cost flow of extras of the module
//! docs there (topics × subscribers, a convex edge per member), warm-started with the
//! proposal, for a component whose proposal does not meet the bounds.

use super::super::flow::Network;
use super::super::warm::{Proposal, warm_wanted};
#[cfg(test)]
use super::GAINS_IGNORED;
use super::cells::Cells;

/// Per local member: its convex edge from node `member_base + lm` to `sink`, carrying its
/// extras (at most `degree[lm]`, the k-th costing the load B_m + k above `base[lm]`), or
/// `None` for a member with no topic that has extras.
pub(super) fn member_edges(
    net: &mut Network,
    member_base: u32,
    sink: u32,
    degree: &[i32],
    base: &[i64],
) -> Vec<Option<usize>> {
    (0..degree.len())
        .map(|lm| {
            (degree[lm] > 0)
                .then(|| net.convex_edge(member_base + lm as u32, sink, degree[lm], base[lm]))
        })
        .collect()
}

/// The extras by the min-cost flow of the [module docs](super), warm-started with `proposal`:
/// per topic, the indices of the subscribers given its extra.
pub(super) fn solve_extras(
    proposal: &Proposal,
    cells: &Cells,
    base: &[i64],
    degree: &[i32],
) -> Vec<Vec<u32>> {
    let n = base.len();
    let topics = proposal.subs.len();
    let source = 0u32;
    let mut next = 1u32;
    let mut topic_node = vec![0u32; topics];
    for lt in (0..topics).filter(|&lt| proposal.has_extra[lt]) {
        topic_node[lt] = next;
        next += 1;
    }
    let member_base = next;
    let sink = member_base + n as u32;
    let mut net = Network::new(sink as usize + 1);
    let edges: usize = (0..topics)
        .filter(|&lt| proposal.has_extra[lt])
        .map(|lt| proposal.subs[lt].len())
        .sum();
    net.reserve(topics + edges + n);
    let mut topic_edge = vec![usize::MAX; topics];
    for lt in (0..topics).filter(|&lt| proposal.has_extra[lt]) {
        topic_edge[lt] = net.edge(source, topic_node[lt], proposal.extra[lt], [0; 4]);
    }
    // Per topic with extras: the id of its first cell; a topic's cells are consecutive, two
    // ids apart (see `Network::edge`).
    let mut first_cell = vec![usize::MAX; topics];
    #[cfg(test)]
    let ignored = GAINS_IGNORED.with(std::cell::Cell::get);
    #[cfg(not(test))]
    let ignored = false;
    for lt in 0..topics {
        if !proposal.has_extra[lt] {
            continue;
        }
        let gains = cells.gains(lt);
        for (i, &lm) in proposal.subs[lt].iter().enumerate() {
            let gain = gains.get(i).is_some_and(|&g| g);
            let cost = [0, 0, 0, -i8::from(gain && !ignored)];
            let id = net.edge(topic_node[lt], member_base + lm, 1, cost);
            first_cell[lt] = first_cell[lt].min(id);
        }
    }
    let member_edge = member_edges(&mut net, member_base, sink, degree, base);
    if warm_wanted() {
        for (lt, &first) in first_cell.iter().enumerate() {
            if first == usize::MAX {
                continue;
            }
            let f = proposal.floor[lt];
            let mut held = 0;
            for (i, &k) in proposal.count[lt].iter().enumerate() {
                net.preset(first + 2 * i, k - f);
                held += k - f;
            }
            net.preset(topic_edge[lt], held);
        }
        for (lm, edge) in member_edge.iter().enumerate() {
            if let Some(e) = *edge {
                net.preset(e, (proposal.load[lm] - base[lm]) as i32);
            }
        }
    }
    net.solve(source, sink);
    first_cell
        .iter()
        .zip(&proposal.subs)
        .map(|(&first, subs)| {
            if first == usize::MAX {
                return Vec::new();
            }
            (0..subs.len() as u32)
                .filter(|&i| net.flow(first + 2 * i as usize) > 0)
                .collect()
        })
        .collect()
}
