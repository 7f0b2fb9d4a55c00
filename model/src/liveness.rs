//! A real liveness check, independent of stateright's `eventually` (which only looks at terminal
//! states and so misses livelocks in a protocol with heartbeat cycles).
//!
//! It builds the explicit state graph of a small model by breadth-first search (states are
//! identified by a 64-bit hash of the whole state, as stateright's own checkers do, and kept
//! once, in BFS order), keeps the *fair* edges only (deliveries and timers;
//! not disruptions or network faults, which the environment may simply stop doing), computes the
//! strongly connected components with an iterative Tarjan, and checks that every *bottom* SCC
//! (one no fair edge leaves) holds only goal states. Under strong fairness (an action enabled
//! infinitely often is eventually taken) every infinite run that stops being disrupted ends in a
//! bottom SCC, so "every bottom SCC is all goal" means "the goal is eventually reached and kept".

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, Hash};

use stateright::Model;

/// An explicit state graph: states by index, and for each its successors over fair edges and
/// over all edges.
#[derive(Debug)]
pub struct StateGraph<S, A> {
    /// States, in BFS order (index 0.. are the initial states).
    pub states: Vec<S>,
    /// For each state: `(action, successor, fair)` for every enabled action with a successor.
    pub edges: Vec<Vec<(A, u32, bool)>>,
    /// For each state: the BFS parent and the action from it (None for initial states).
    pub parent: Vec<Option<(u32, A)>>,
}

/// The graph exceeded the state limit given to [`StateGraph::build`].
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("the state graph has more than {limit} states; use a smaller configuration")]
pub struct TooManyStates {
    /// The limit that was exceeded.
    pub limit: usize,
}

impl<S: Clone + Hash + Eq, A: Clone> StateGraph<S, A> {
    /// Builds the graph of every state reachable from `roots`, marking each edge fair or not.
    /// States outside the model's boundary are not entered.
    ///
    /// # Errors
    /// [`TooManyStates`] once more than `limit` states are found.
    pub fn build<M>(
        model: &M,
        roots: Vec<S>,
        is_fair: impl Fn(&A) -> bool,
        limit: usize,
    ) -> Result<Self, TooManyStates>
    where
        M: Model<State = S, Action = A>,
    {
        // Fixed keys: the graph (and so a reported counterexample) is the same on every run.
        let hasher =
            std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default();
        let key = |s: &S| hasher.hash_one(s);
        let mut index: HashMap<u64, u32> = HashMap::new();
        let mut graph = StateGraph {
            states: Vec::new(),
            edges: Vec::new(),
            parent: Vec::new(),
        };
        let mut queue = VecDeque::new();
        for s in roots {
            if let std::collections::hash_map::Entry::Vacant(slot) = index.entry(key(&s)) {
                let i = graph.states.len() as u32;
                slot.insert(i);
                graph.states.push(s);
                graph.parent.push(None);
                queue.push_back(i);
            }
        }
        let mut actions = Vec::new();
        while let Some(i) = queue.pop_front() {
            let state = graph.states[i as usize].clone();
            model.actions(&state, &mut actions);
            let mut out = Vec::new();
            for action in actions.drain(..) {
                let fair = is_fair(&action);
                let Some(next) = model.next_state(&state, action.clone()) else {
                    continue;
                };
                if !model.within_boundary(&next) {
                    continue;
                }
                let k = key(&next);
                let j = match index.get(&k) {
                    Some(&j) => j,
                    None => {
                        if graph.states.len() >= limit {
                            return Err(TooManyStates { limit });
                        }
                        let j = graph.states.len() as u32;
                        index.insert(k, j);
                        graph.states.push(next);
                        graph.parent.push(Some((i, action.clone())));
                        queue.push_back(j);
                        j
                    }
                };
                out.push((action, j, fair));
            }
            graph.edges.push(out);
        }
        Ok(graph)
    }

    /// The actions leading from an initial state to state `i` (a shortest path).
    #[must_use]
    pub fn path_to(&self, mut i: u32) -> Vec<A> {
        let mut actions = Vec::new();
        while let Some((p, a)) = &self.parent[i as usize] {
            actions.push(a.clone());
            i = *p;
        }
        actions.reverse();
        actions
    }

    /// The strongly connected components of the graph restricted to fair edges.
    #[must_use]
    pub fn fair_sccs(&self) -> Sccs {
        tarjan(self.states.len(), |v| {
            self.edges[v as usize]
                .iter()
                .filter(|(_, _, fair)| *fair)
                .map(|(_, w, _)| *w)
        })
    }
}

/// Strongly connected components: `component[v]` numbers the component of each vertex;
/// components are numbered in reverse topological order (a component's successors have
/// smaller numbers), as Tarjan's algorithm emits them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sccs {
    /// Component number of each vertex.
    pub component: Vec<u32>,
    /// Number of components.
    pub count: u32,
}

/// Tarjan's algorithm, iterative (no recursion, so deep graphs cannot overflow the stack).
pub fn tarjan<I>(n: usize, successors: impl Fn(u32) -> I) -> Sccs
where
    I: Iterator<Item = u32>,
{
    const UNVISITED: u32 = u32::MAX;
    let mut index = vec![UNVISITED; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut component = vec![UNVISITED; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut next_index = 0u32;
    let mut count = 0u32;
    // Call stack frames: the vertex and its remaining successors.
    let mut frames: Vec<(u32, I)> = Vec::new();
    for root in 0..n as u32 {
        if index[root as usize] != UNVISITED {
            continue;
        }
        index[root as usize] = next_index;
        low[root as usize] = next_index;
        next_index += 1;
        stack.push(root);
        on_stack[root as usize] = true;
        frames.push((root, successors(root)));
        while let Some((v, iter)) = frames.last_mut() {
            let v = *v;
            if let Some(w) = iter.next() {
                if index[w as usize] == UNVISITED {
                    index[w as usize] = next_index;
                    low[w as usize] = next_index;
                    next_index += 1;
                    stack.push(w);
                    on_stack[w as usize] = true;
                    frames.push((w, successors(w)));
                } else if on_stack[w as usize] {
                    low[v as usize] = low[v as usize].min(index[w as usize]);
                }
                continue;
            }
            frames.pop();
            if let Some((u, _)) = frames.last() {
                let u = *u as usize;
                low[u] = low[u].min(low[v as usize]);
            }
            if low[v as usize] == index[v as usize] {
                while let Some(w) = stack.pop() {
                    on_stack[w as usize] = false;
                    component[w as usize] = count;
                    if w == v {
                        break;
                    }
                }
                count += 1;
            }
        }
    }
    Sccs { component, count }
}

/// The outcome of a liveness check.
#[derive(Debug)]
pub struct LivenessReport<A> {
    /// States in the graph.
    pub states: usize,
    /// Edges in the graph (all kinds).
    pub edges: usize,
    /// Bottom SCCs of the fair graph.
    pub bottom_sccs: usize,
    /// A violation: the actions to a non-goal state of a bottom SCC, if any.
    pub counterexample: Option<Vec<A>>,
}

/// Checks that every bottom SCC of the fair graph holds only goal states.
pub fn check_bottom_sccs<S, A>(
    graph: &StateGraph<S, A>,
    goal: impl Fn(&S) -> bool,
) -> LivenessReport<A>
where
    S: Clone + Hash + Eq,
    A: Clone,
{
    let sccs = graph.fair_sccs();
    let mut is_bottom = vec![true; sccs.count as usize];
    for (v, out) in graph.edges.iter().enumerate() {
        let c = sccs.component[v];
        if out
            .iter()
            .any(|(_, w, fair)| *fair && sccs.component[*w as usize] != c)
        {
            is_bottom[c as usize] = false;
        }
    }
    let mut counterexample = None;
    for (v, s) in graph.states.iter().enumerate() {
        if is_bottom[sccs.component[v] as usize] && !goal(s) {
            counterexample = Some(graph.path_to(v as u32));
            break;
        }
    }
    LivenessReport {
        states: graph.states.len(),
        edges: graph.edges.iter().map(Vec::len).sum(),
        bottom_sccs: is_bottom.iter().filter(|b| **b).count(),
        counterexample,
    }
}

/// Whether `state` is stuck: it lies in a bottom SCC of the fair graph reachable from it and is
/// not a goal state. Used to re-check a recorded liveness counterexample.
///
/// # Errors
/// [`TooManyStates`] if the graph from `state` exceeds `limit`.
pub fn is_stuck<M, S, A>(
    model: &M,
    state: S,
    is_fair: impl Fn(&A) -> bool,
    goal: impl Fn(&S) -> bool,
    limit: usize,
) -> Result<bool, TooManyStates>
where
    M: Model<State = S, Action = A>,
    S: Clone + Hash + Eq,
    A: Clone,
{
    if goal(&state) {
        return Ok(false);
    }
    let graph = StateGraph::build(model, vec![state], is_fair, limit)?;
    let sccs = graph.fair_sccs();
    let c0 = sccs.component[0];
    // State 0 is in a bottom SCC iff no fair edge from its component leaves it.
    Ok(graph.edges.iter().enumerate().all(|(v, out)| {
        sccs.component[v] != c0
            || out
                .iter()
                .all(|(_, w, fair)| !*fair || sccs.component[*w as usize] == c0)
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-made graph as a model: states are numbers, actions are (to, fair) pairs.
    struct Graph(Vec<Vec<(u32, bool)>>);

    impl Model for Graph {
        type State = u32;
        type Action = (u32, bool);
        fn init_states(&self) -> Vec<u32> {
            vec![0]
        }
        fn actions(&self, s: &u32, actions: &mut Vec<(u32, bool)>) {
            actions.extend(self.0[*s as usize].iter().copied());
        }
        fn next_state(&self, _: &u32, a: (u32, bool)) -> Option<u32> {
            Some(a.0)
        }
    }

    fn check(g: &Graph, goal: &[u32]) -> LivenessReport<(u32, bool)> {
        let graph = StateGraph::build(g, g.init_states(), |a| a.1, 1000).unwrap();
        check_bottom_sccs(&graph, |s| goal.contains(s))
    }

    #[test]
    fn tarjan_finds_components_in_reverse_topological_order() {
        // 0 -> 1 <-> 2 -> 3, 3 -> 3
        let succ: Vec<Vec<u32>> = vec![vec![1], vec![2], vec![1, 3], vec![3]];
        let sccs = tarjan(4, |v| succ[v as usize].clone().into_iter());
        assert_eq!(sccs.count, 3);
        assert_eq!(sccs.component[1], sccs.component[2]);
        assert!(sccs.component[3] < sccs.component[1]);
        assert!(sccs.component[1] < sccs.component[0]);
    }

    #[test]
    fn tarjan_handles_a_long_chain_without_recursion() {
        let n = 200_000u32;
        let sccs = tarjan(n as usize, |v| (v + 1 < n).then_some(v + 1).into_iter());
        assert_eq!(sccs.count, n);
    }

    #[test]
    fn converging_graph_passes() {
        // 0 -> 1 -> 2 (goal, self-loop heartbeat); 1 -> 0 (retry cycle that can leave).
        let g = Graph(vec![
            vec![(1, true)],
            vec![(2, true), (0, true)],
            vec![(2, true)],
        ]);
        let report = check(&g, &[2]);
        assert_eq!(report.bottom_sccs, 1);
        assert!(report.counterexample.is_none());
    }

    #[test]
    fn livelock_cycle_fails() {
        // 0 -> 1 -> 0 forever, the goal 2 only reachable through an unfair (disruption) edge.
        let g = Graph(vec![
            vec![(1, true)],
            vec![(0, true), (2, false)],
            vec![(2, true)],
        ]);
        let report = check(&g, &[2]);
        let cex = report
            .counterexample
            .expect("the 0<->1 cycle is a bottom SCC");
        assert!(cex.is_empty() || cex == vec![(1, true)]);
        assert!(is_stuck(&g, 0, |a: &(u32, bool)| a.1, |s| *s == 2, 100).unwrap());
        assert!(!is_stuck(&g, 2, |a: &(u32, bool)| a.1, |s| *s == 2, 100).unwrap());
    }

    #[test]
    fn terminal_non_goal_state_fails_and_limit_is_enforced() {
        let g = Graph(vec![vec![(1, true), (2, true)], vec![], vec![(2, true)]]);
        let report = check(&g, &[2]);
        assert_eq!(report.counterexample, Some(vec![(1, true)]));
        assert_eq!(
            StateGraph::build(&g, vec![0], |a: &(u32, bool)| a.1, 2).unwrap_err(),
            TooManyStates { limit: 2 }
        );
    }
}
