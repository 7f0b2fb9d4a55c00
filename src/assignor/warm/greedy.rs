//! The greedy completion of a warm start: the units no claim keeps (all of them in a full
//! assignment) handed out so that the proposal is close to optimal, and the split of each
//! topic's classes among its rack pools.
//!
//! Like the rest of the warm start, nothing here decides the result: the solver certifies
//! the proposal (repairing it by cancelling the negative cycles it meets) or drops it.

use super::super::flow::Network;
use super::{MAX_MOVES, Proposal};
use narrow::Narrow;

mod narrow;
mod same;
#[cfg(test)]
pub(crate) use narrow::{CURSOR_KEPT, CURSOR_OFF, NARROW_OFF, NARROW_TAKEN};

impl Proposal {
    /// Hands out the units of every topic that nobody holds yet: every subscriber short of
    /// its floor is brought up to it, then the extras left go, one each, to the subscribers
    /// with room for one that are the lightest at that point (ties to the lower index).
    /// Topics go in local (canonical) order and the loads are updated as they go; then, for
    /// up to [`PASSES`] passes over the topics, each topic's handed-out extras are taken back
    /// and handed out again to the lightest given all the others (for that topic alone, the
    /// best choice), until a pass changes nothing. A topic order that saw the later topics
    /// first would have chosen differently; the passes make up for it.
    ///
    /// Returns false, changing nothing, when some topic has more extras held than it has
    /// (the floors could not all be filled).
    pub fn complete(&mut self) -> bool {
        // Per topic: the extras held already.
        let held: Vec<i32> = (0..self.subs.len())
            .map(|lt| {
                let f = self.floor[lt];
                self.count[lt].iter().filter(|&&k| k > f).count() as i32
            })
            .collect();
        if held.iter().zip(&self.extra).any(|(&h, &r)| h > r) {
            return false;
        }
        for lt in 0..self.count.len() {
            let f = self.floor[lt];
            for k in &mut self.count[lt] {
                // The floor units: the load already counts them.
                *k = (*k).max(f);
            }
        }
        self.complete_held(&held, &|_| false);
        true
    }

    /// [`Proposal::complete`] of a proposal whose every subscriber is at its floor or above,
    /// `held[lt]` (at most r_t) of topic lt's above (a caller that counted them as it placed
    /// them spares the passes over every subscription that would find them), except
    /// that the improving passes stop early once `done` holds (checked before each pass): for
    /// a caller whose own test of the proposal would not gain from more passes.
    pub fn complete_held(&mut self, held: &[i32], done: &dyn Fn(&Proposal) -> bool) {
        #[cfg(test)]
        for (lt, &h) in held.iter().enumerate() {
            let f = self.floor[lt];
            assert!(self.count[lt].iter().all(|&k| k >= f));
            let above = self.count[lt].iter().filter(|&&k| k > f).count();
            assert!(
                above == h as usize && h <= self.extra[lt],
                "held {h}, above {above}"
            );
        }
        // Per topic: the subscribers given an extra here, ascending, at
        // `handed[start[lt]..start[lt + 1]]` (a topic hands out as many in every pass).
        let mut handed: Vec<u32> = Vec::new();
        let mut start: Vec<usize> = Vec::with_capacity(self.subs.len() + 1);
        let mut mine = Vec::new();
        let mut candidates = Vec::new();
        let mut narrow = Narrow::new(&self.load);
        for (lt, &held) in held.iter().enumerate() {
            let left = (self.extra[lt] - held) as usize;
            self.hand_out(lt, left, held == 0, &mut mine, &mut candidates, &mut narrow);
            start.push(handed.len());
            handed.extend_from_slice(&mine);
        }
        start.push(handed.len());
        for _ in 0..PASSES {
            if done(self) {
                break;
            }
            let mut changed = false;
            for lt in 0..self.subs.len() {
                let was = &mut handed[start[lt]..start[lt + 1]];
                if was.is_empty() {
                    continue;
                }
                // Without claims held, every subscriber but those of `was` is at its floor.
                let bare = held[lt] == 0;
                if self.hands_out_the_same(lt, was, bare, &narrow) {
                    continue;
                }
                for &i in was.iter() {
                    self.count[lt][i as usize] -= 1;
                    let m = self.subs[lt][i as usize] as usize;
                    narrow.lower(m, self.load[m]);
                    self.load[m] -= 1;
                }
                self.hand_out(lt, was.len(), bare, &mut mine, &mut candidates, &mut narrow);
                if mine != was {
                    changed = true;
                    was.copy_from_slice(&mine);
                }
            }
            if !changed {
                break;
            }
        }
        #[cfg(test)]
        assert!(narrow.counts(&self.load));
    }

    /// This proposal [completed](Proposal::complete), then improved by up to [`MAX_MOVES`]
    /// moves while a negative cycle is evident, with the units each subscriber of each topic
    /// took (through its pool); or `None` if it could not be completed, a cycle is still
    /// evident, or a move took back a unit the proposal already held (a kept claim).
    pub fn completed(&self) -> Option<(Proposal, Vec<Vec<i32>>)> {
        let mut full = self.clone();
        if !full.complete() {
            return None;
        }
        // The moves stop when nothing is evident any more (`best_move` finds nothing).
        let mut evident = true;
        for _ in 0..MAX_MOVES {
            let Some(mv) = full.best_move(&|_, _, _| false) else {
                evident = false;
                break;
            };
            full.apply(mv);
        }
        if evident && full.hopeless() {
            return None;
        }
        let taken: Vec<Vec<i32>> = full
            .count
            .iter()
            .zip(&self.count)
            .map(|(now, was)| now.iter().zip(was).map(|(a, b)| a - b).collect())
            .collect();
        taken
            .iter()
            .flatten()
            .all(|&x| x >= 0)
            .then_some((full, taken))
    }

    /// Gives one extra of topic `lt` to each of the `left` lightest subscribers with room for
    /// one (ties to the lower index); writes their indices, ascending, into `mine`.
    /// `bare`: every subscriber is at its floor (has room), so no count is read.
    /// `candidates` is scratch space; `narrow` the members counted per load (kept up to date
    /// here) and the scratch space of its fast path.
    fn hand_out(
        &mut self,
        lt: usize,
        left: usize,
        bare: bool,
        mine: &mut Vec<u32>,
        candidates: &mut Vec<(i64, u32)>,
        narrow: &mut Narrow,
    ) {
        mine.clear();
        if left == 0 {
            return;
        }
        let f = self.floor[lt];
        let (subs, count, load) = (&self.subs[lt], &mut self.count[lt], &mut self.load);
        #[cfg(test)]
        let single = !SINGLE_OFF.with(std::cell::Cell::get);
        #[cfg(not(test))]
        let single = true;
        if left == 1 && single {
            // The one smallest (load, index) pair: the first of the lightest, in one pass
            // (loads count partitions: every one is below i64::MAX) that stops at the first
            // at the component's lightest load (none is lighter).
            let (mut low, mut at) = (i64::MAX, usize::MAX);
            let bottom = narrow.low().unwrap_or(i64::MIN);
            if bare {
                for (i, &m) in subs.iter().enumerate() {
                    let l = load[m as usize];
                    if l < low {
                        (low, at) = (l, i);
                        if l == bottom {
                            break;
                        }
                    }
                }
            } else {
                for (i, (&m, &k)) in subs.iter().zip(count.iter()).enumerate() {
                    if k == f {
                        let l = load[m as usize];
                        if l < low {
                            (low, at) = (l, i);
                            if l == bottom {
                                break;
                            }
                        }
                    }
                }
            }
            if at != usize::MAX {
                mine.push(at as u32);
                give(mine, subs, count, load, narrow);
            }
            return;
        }
        if bare && narrow.two_levels(subs, load, left, mine) {
            give(mine, subs, count, load, narrow);
            return;
        }
        // The loads of the subscribers with room, counted by load modulo HISTOGRAM: with the
        // loads within HISTOGRAM of each other, the buckets from the lightest's on,
        // cyclically, are the loads in ascending order.
        let mut histogram = [0u32; HISTOGRAM];
        let (mut low, mut high, mut room) = (i64::MAX, i64::MIN, 0usize);
        for (&m, &k) in subs.iter().zip(count.iter()) {
            if k == f {
                let l = load[m as usize];
                low = low.min(l);
                high = high.max(l);
                histogram[bucket(l)] += 1;
                room += 1;
            }
        }
        mine.reserve(left.min(room));
        // The subscribers with room, (load, index) in index order.
        let with_room = subs
            .iter()
            .zip(count.iter())
            .enumerate()
            .filter(|&(_, (_, &k))| k == f)
            .map(|(i, (&m, _))| (load[m as usize], i as u32));
        if room <= left {
            mine.extend(with_room.map(|(_, i)| i));
        } else {
            // The threshold load: the `left` smallest (load, index) pairs are those below it
            // and the lowest indices at it. Loads are usually within a few units of each
            // other, so the histogram finds it; a wide spread falls back to a selection.
            let (threshold, mut at_threshold) = if high - low < HISTOGRAM as i64 {
                let mut below = 0;
                let mut d = 0;
                loop {
                    let n = histogram[bucket(low + d)] as usize;
                    if below + n >= left {
                        break (low + d, left - below);
                    }
                    below += n;
                    d += 1;
                }
            } else {
                candidates.clear();
                candidates.extend(with_room.clone());
                candidates.select_nth_unstable(left - 1);
                let threshold = candidates[left - 1].0;
                let below = candidates[..left]
                    .iter()
                    .filter(|&&(l, _)| l < threshold)
                    .count();
                (threshold, left - below)
            };
            for (l, i) in with_room {
                if l > threshold || (l == threshold && at_threshold == 0) {
                    continue;
                }
                if l == threshold {
                    at_threshold -= 1;
                }
                mine.push(i);
                // The rest are past the threshold or beyond its quota.
                if mine.len() == left {
                    break;
                }
            }
        }
        give(mine, subs, count, load, narrow);
    }
}

/// Gives one extra of a topic to each of its subscribers at indices `mine` (`subs` its
/// subscribers, `count` their counts of it): their counts, loads and `narrow`'s per-load
/// counts each go up by one.
#[inline(always)]
fn give(mine: &[u32], subs: &[u32], count: &mut [i32], load: &mut [i64], narrow: &mut Narrow) {
    for &i in mine {
        count[i as usize] += 1;
        let m = subs[i as usize] as usize;
        narrow.raise(load[m]);
        load[m] += 1;
    }
}

/// Distinct loads above the lightest that [`Proposal::complete`] counts in a histogram
/// before it falls back to a selection (a power of two: a load's bucket is its low bits).
const HISTOGRAM: usize = 64;

/// The histogram bucket of load `l`: `l` modulo [`HISTOGRAM`] (also for a negative `l`).
fn bucket(l: i64) -> usize {
    (l as u64 % HISTOGRAM as u64) as usize
}

/// One class of a topic, for [`route_topic`].
pub(crate) struct ClassRoute {
    /// Its supply edge (source → class).
    pub supply: usize,
    /// Its units not routed yet.
    pub left: i32,
    /// Its edges to rack pools: (edge, rack pool index within the topic).
    pub racks: Vec<(usize, usize)>,
    /// Its edge to the topic pool.
    pub topic: usize,
}

/// Presets the flow of one topic's units not routed yet: `taken[i]` units to subscriber i
/// over its pool edge `subscribers[i].0` (from rack pool `subscribers[i].1`, or from the topic
/// pool), supplied by `classes` (all their units left), aligned as far as [`align`] finds,
/// the rest through the topic pool and its edges `to_racks[j]` to rack pool j.
pub(crate) fn route_topic(
    net: &mut Network,
    classes: &[ClassRoute],
    taken: &[i32],
    subscribers: &[(usize, Option<usize>)],
    to_racks: &[usize],
) {
    let mut demand = vec![0i32; to_racks.len()];
    for (&(e, rack), &x) in subscribers.iter().zip(taken) {
        net.add_preset(e, x);
        if let Some(j) = rack {
            demand[j] += x;
        }
    }
    let mut supply: Vec<i32> = classes.iter().map(|c| c.left).collect();
    for c in classes {
        net.add_preset(c.supply, c.left);
    }
    let racks: Vec<Vec<usize>> = classes
        .iter()
        .map(|c| c.racks.iter().map(|&(_, j)| j).collect())
        .collect();
    for (k, j, x) in align(&mut supply, &racks, &mut demand) {
        if let Some(&(e, _)) = classes[k].racks.iter().find(|&&(_, r)| r == j) {
            net.add_preset(e, x);
        }
    }
    for (c, &x) in classes.iter().zip(&supply) {
        net.add_preset(c.topic, x);
    }
    for (&e, &x) in to_racks.iter().zip(&demand) {
        net.add_preset(e, x);
    }
}

/// Whether a component whose claims keep `kept` of its `total` units gets the greedy
/// completion: when they keep at most half. Measured on 1000 members × 50 partitions each
/// × 100 topics (overlapping subscriptions) with the claims of a stable assignment: with
/// none kept (a full assignment) the completion is certified at once, 3–4× faster than the
/// solver's cold phases; with 40% kept (60% of the members gone) 4× faster; with 70% or
/// more kept (a few members gone or joined) it saves nothing and, with racks, its
/// alignment misses cost more cancellations than the phases it saves.
pub(crate) fn greedy_wanted(kept: u64, total: u64) -> bool {
    #[cfg(test)]
    if GREEDY_OFF.with(std::cell::Cell::get) {
        return false;
    }
    2 * kept <= total
}

#[cfg(test)]
thread_local! {
    /// Tests only: no greedy completion on this thread (the solver starts from the claims'
    /// proposal or from zero, as before it existed).
    pub(crate) static GREEDY_OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: what [`Proposal::hands_out_the_same`] answers instead of looking
    /// (`Some(false)`: every topic handed out again, the reference; `Some(true)`: a planted
    /// fault, none is).
    pub(crate) static SAME_OVERRIDE: std::cell::Cell<Option<bool>> = const { std::cell::Cell::new(None) };
    /// Tests only: [`Proposal::hand_out`] of a single extra takes the general path (the
    /// histogram and the threshold scan), for a reference.
    pub(crate) static SINGLE_OFF: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: the topics [`Proposal::hands_out_the_same`] spared a hand-out.
    pub(crate) static SPARED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Tests only: the topics of [`SPARED`] the per-load counts alone answered for.
    pub(crate) static COUNTED_SAME: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The most passes [`Proposal::complete`] makes over the topics to improve its first choice.
pub(crate) const PASSES: usize = 8;

/// Splits the units of one topic's classes among its rack pools so that as many as possible
/// are aligned: class k has `supply[k]` units and reaches the rack pools `racks[k]` (indices
/// into `demand`) aligned; rack pool j still takes `demand[j]` units. Classes with fewer racks
/// go first (they have fewer choices), each filling its rack pools with the most demand left
/// first; then augmenting paths (a class with units left, a rack pool it reaches, a class
/// sending there that could send elsewhere, …, a rack pool with demand left) raise the
/// aligned total, up to [`AUGMENTATIONS`] of them: a maximum when they run out. Returns the
/// aligned sends as (class, rack pool, units), leaving in `supply` and `demand` what is left
/// for the topic pool to carry unaligned. Deterministic in its input.
pub(crate) fn align(
    supply: &mut [i32],
    racks: &[Vec<usize>],
    demand: &mut [i32],
) -> Vec<(usize, usize, i32)> {
    let (classes, pools) = (supply.len(), demand.len());
    // Units of class k sent to rack pool j, at k * pools + j.
    let mut sent = vec![0i32; classes * pools];
    let mut order: Vec<usize> = (0..classes).collect();
    order.sort_by_key(|&k| (racks[k].len(), k));
    for k in order {
        while supply[k] > 0 {
            let Some(&j) = racks[k]
                .iter()
                .filter(|&&j| demand[j] > 0)
                .max_by_key(|&&j| (demand[j], std::cmp::Reverse(j)))
            else {
                break;
            };
            let x = supply[k].min(demand[j]);
            supply[k] -= x;
            demand[j] -= x;
            sent[k * pools + j] += x;
        }
    }
    // Breadth-first over classes (0..classes) and rack pools (classes..): a class reaches its
    // rack pools, a rack pool the classes sending to it.
    let mut parent = vec![usize::MAX; classes + pools];
    let mut queue: Vec<usize> = Vec::new();
    for _ in 0..AUGMENTATIONS {
        if demand.iter().all(|&d| d == 0) {
            break;
        }
        parent.fill(usize::MAX);
        queue.clear();
        for k in 0..classes {
            if supply[k] > 0 && !racks[k].is_empty() {
                parent[k] = k;
                queue.push(k);
            }
        }
        let mut end = None;
        let mut head = 0;
        'search: while head < queue.len() {
            let node = queue[head];
            head += 1;
            if node < classes {
                for &j in &racks[node] {
                    let v = classes + j;
                    if parent[v] == usize::MAX {
                        parent[v] = node;
                        if demand[j] > 0 {
                            end = Some(j);
                            break 'search;
                        }
                        queue.push(v);
                    }
                }
            } else {
                let j = node - classes;
                for k in 0..classes {
                    if parent[k] == usize::MAX && sent[k * pools + j] > 0 {
                        parent[k] = node;
                        queue.push(k);
                    }
                }
            }
        }
        let Some(j_end) = end else {
            break;
        };
        // The bottleneck, then the push, along the path back to its first class.
        let mut push = demand[j_end];
        let mut v = classes + j_end;
        loop {
            let k = parent[v];
            if parent[k] == k {
                push = push.min(supply[k]);
                break;
            }
            let w = parent[k];
            push = push.min(sent[k * pools + (w - classes)]);
            v = w;
        }
        demand[j_end] -= push;
        let mut v = classes + j_end;
        loop {
            let k = parent[v];
            sent[k * pools + (v - classes)] += push;
            if parent[k] == k {
                supply[k] -= push;
                break;
            }
            let w = parent[k];
            sent[k * pools + (w - classes)] -= push;
            v = w;
        }
    }
    let mut sends = Vec::new();
    for k in 0..classes {
        for j in 0..pools {
            let x = sent[k * pools + j];
            if x > 0 {
                sends.push((k, j, x));
            }
        }
    }
    sends
}

/// The most augmenting paths [`align`] looks for per topic.
pub(crate) const AUGMENTATIONS: usize = 64;

#[cfg(test)]
mod tests;
