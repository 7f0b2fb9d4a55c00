//! The class flow network of the [parent module's docs](super): built for one component,
//! warm-started, solved, and turned back into partitions.

use std::cmp::Reverse;
use std::collections::BTreeMap;

use super::super::classes::Classes;
use super::super::components::Component;
use super::super::flow::Network;
use super::super::problem::Problem;
use super::super::warm::{
    ClassRoute, MAX_MOVES, Proposal, Ragged, Tracker, greedy_wanted, route_topic, warm_wanted,
};

/// Where a pool's outgoing edge leads.
#[derive(Clone, Copy)]
enum Target {
    /// A subscriber (through its (m,t) node or straight to its member node).
    Member(u32),
    /// A rack pool fed by its topic pool.
    Pool(u32),
}

/// Builds the flow network of the module docs for one component, solves it and turns the flow
/// into partitions.
pub(super) fn solve(
    problem: &Problem<'_>,
    classes: &Classes,
    comp: &Component,
    ids: &[usize],
    homogeneous: bool,
    lists: &mut [Vec<(u32, i32)>],
) {
    let n_topics = comp.topics.len();
    let n_members = comp.members.len();
    // A component of every member, or of every topic (the usual cases), numbers them as
    // the problem does: no search.
    let all_topics = comp.topics.len() == problem.topics.len();
    let all_members = comp.holds_every_member(problem.members.len());
    let local_topic = |t: u32| {
        if all_topics {
            t as usize
        } else {
            comp.topics.partition_point(|&x| x < t)
        }
    };
    let local_member = |m: u32| {
        if all_members {
            m
        } else {
            comp.members.partition_point(|&x| x < m) as u32
        }
    };
    let floor: Vec<u32> = comp
        .topics
        .iter()
        .map(|&t| problem.partitions(t) / problem.subscribers[t as usize].len() as u32)
        .collect();
    let extra: Vec<u32> = comp
        .topics
        .iter()
        .map(|&t| problem.partitions(t) % problem.subscribers[t as usize].len() as u32)
        .collect();

    // Node numbering, in topological order: source, classes, pools, (m,t) nodes, members, sink.
    // Per topic: its topic pool, then its rack pools (the topic pool feeds them).
    let source = 0u32;
    let class_base = 1u32;
    // Pools come right after the classes; the per-pool lists below are indexed from here.
    let pool_base = class_base + ids.len() as u32;
    let mut next = pool_base;
    // Rack pools: for every topic, the racks some subscriber runs in.
    let mut rack_pool: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n_topics]; // (rack, node)
    let mut topic_pool = vec![u32::MAX; n_topics];
    let any_rack = ids.iter().any(|&i| !classes.classes[i].racks.is_empty());
    for (lt, &t) in comp.topics.iter().enumerate() {
        topic_pool[lt] = next;
        next += 1;
        if any_rack {
            let mut present: Vec<u32> = problem.subscribers[t as usize]
                .iter()
                .filter_map(|&m| classes.member_rack[m as usize])
                .collect();
            present.sort_unstable();
            present.dedup();
            for r in present {
                rack_pool[lt].push((r, next));
                next += 1;
            }
        }
    }
    // The one pool a subscriber of a topic is reached from: its rack's, else the topic pool.
    let entry = |m: u32, lt: usize| -> u32 {
        if !any_rack {
            return topic_pool[lt];
        }
        match classes.member_rack[m as usize] {
            Some(r) => match rack_pool[lt].binary_search_by_key(&r, |&(r, _)| r) {
                Ok(j) => rack_pool[lt][j].1,
                Err(_) => topic_pool[lt],
            },
            None => topic_pool[lt],
        }
    };
    // (m,t) nodes exist only where needed: a subscriber with a floor to fill, or an owner of a
    // class of t (reached by its owner edge besides its pool). Elsewhere f_t = 0 and the node
    // would only pass one unit from the member's one pool to the member, so that pool links
    // straight to the member with capacity 1.
    let mut class_start = 0;
    let mut pair_base = Vec::with_capacity(n_topics);
    let first_pair = next;
    let mut pair_members: Vec<Vec<u32>> = Vec::with_capacity(n_topics);
    for (lt, &t) in comp.topics.iter().enumerate() {
        let subs = &problem.subscribers[t as usize];
        let mut needed: Vec<u32> = if floor[lt] > 0 {
            subs.clone()
        } else {
            let mut owners = Vec::new();
            while class_start < ids.len() && classes.classes[ids[class_start]].topic == t {
                owners.extend(classes.classes[ids[class_start]].owner);
                class_start += 1;
            }
            owners
        };
        while class_start < ids.len() && classes.classes[ids[class_start]].topic == t {
            class_start += 1;
        }
        needed.sort_unstable();
        needed.dedup();
        pair_base.push(next);
        next += needed.len() as u32;
        pair_members.push(needed);
    }
    let member_base = next;
    next += n_members as u32;
    let sink = next;
    let mut net = Network::new(sink as usize + 1);
    // Edges: per class its supply, owner, rack and topic edges; per topic its rack pools'
    // edges; per subscriber its pool edge; per (m,t) node a floor and an extra edge; per
    // member two. Reserved at once rather than grown by copies.
    let class_racks: usize = ids.iter().map(|&i| classes.classes[i].racks.len()).sum();
    let subscriptions: usize = comp
        .topics
        .iter()
        .map(|&t| problem.subscribers[t as usize].len())
        .sum();
    let pools: usize = rack_pool.iter().map(Vec::len).sum();
    net.reserve(
        3 * ids.len()
            + class_racks
            + pools
            + subscriptions
            + 2 * (member_base - first_pair) as usize
            + 2 * n_members,
    );

    // The (m,t) node, or the member node when the pair has none.
    let pair = |m: u32, lt: usize| -> u32 {
        match pair_members[lt].binary_search(&m) {
            Ok(pos) => pair_base[lt] + pos as u32,
            Err(_) => member_base + local_member(m),
        }
    };

    // Class edges, remembered for extraction.
    struct ClassEdges {
        supply: usize,
        owner: Option<usize>,
        racks: Vec<(usize, u32)>, // (edge, rack pool node)
        topic: usize,
    }
    let mut class_edges = Vec::with_capacity(ids.len());
    for (k, &i) in ids.iter().enumerate() {
        let class = &classes.classes[i];
        let c = class_base + k as u32;
        let lt = local_topic(class.topic);
        let size = class.partitions.len() as i32;
        let supply = net.edge(source, c, size, [0; 4]);
        let owner = class.owner.map(|o| {
            let aligned = classes.member_rack[o as usize]
                .is_some_and(|r| class.racks.binary_search(&r).is_ok());
            let cap = size.min(floor[lt] as i32 + 1);
            net.edge(c, pair(o, lt), cap, [0, 0, -i8::from(aligned), -1])
        });
        let mut racks = Vec::new();
        for &r in &class.racks {
            if let Ok(j) = rack_pool[lt].binary_search_by_key(&r, |&(r, _)| r) {
                let node = rack_pool[lt][j].1;
                racks.push((net.edge(c, node, size, [0, 0, -1, 0]), node));
            }
        }
        let topic = net.edge(c, topic_pool[lt], size, [0; 4]);
        class_edges.push(ClassEdges {
            supply,
            owner,
            racks,
            topic,
        });
    }
    // Pool edges. The topic pool feeds every rack pool of its topic and the subscribers
    // without a rack pool; a rack pool feeds the subscribers in its rack. A topic pool lists
    // its rack pools first, then its subscribers by id.
    let mut pool_out: Vec<Vec<(usize, Target)>> =
        vec![Vec::new(); (first_pair - pool_base) as usize];
    // Per topic, per subscriber: (its pool edge, that pool).
    let mut pool_edges: Vec<Vec<(usize, u32)>> = Vec::with_capacity(n_topics);
    for (lt, &t) in comp.topics.iter().enumerate() {
        let subs = &problem.subscribers[t as usize];
        let cap = floor[lt] as i32 + 1;
        let node = topic_pool[lt];
        for &(_, group) in &rack_pool[lt] {
            let e = net.edge(node, group, problem.partitions(t) as i32, [0; 4]);
            pool_out[(node - pool_base) as usize].push((e, Target::Pool(group)));
        }
        // Its subscribers' pool edges, in subscriber order.
        pool_edges.push(Vec::with_capacity(subs.len()));
        for &m in subs {
            let from = entry(m, lt);
            let e = net.edge(from, pair(m, lt), cap, [0; 4]);
            pool_out[(from - pool_base) as usize].push((e, Target::Member(m)));
            pool_edges[lt].push((e, from));
        }
    }
    // Floors, extras and loads.
    let mut degree = vec![0i32; n_members];
    let mut base = vec![0i64; n_members];
    // Per (m,t) node: its floor and extra edges; per member: its mandatory and convex edges.
    let pair_nodes = pair_base.first().copied().unwrap_or(member_base)..member_base;
    let mut pair_out = vec![(None, None); pair_nodes.len()];
    let mut member_out = vec![(None, None); n_members];
    for (lt, &t) in comp.topics.iter().enumerate() {
        for &m in &problem.subscribers[t as usize] {
            let lm = local_member(m);
            base[lm as usize] += i64::from(floor[lt]);
            if extra[lt] > 0 {
                degree[lm as usize] += 1;
            }
        }
        for &m in &pair_members[lt] {
            let node = pair(m, lt);
            let floor_edge =
                (floor[lt] > 0).then(|| net.edge(node, sink, floor[lt] as i32, [-1, 0, 0, 0]));
            let extra_edge =
                (extra[lt] > 0).then(|| net.edge(node, member_base + local_member(m), 1, [0; 4]));
            pair_out[(node - pair_nodes.start) as usize] = (floor_edge, extra_edge);
        }
    }
    // In a homogeneous component every balance-optimal assignment gives each member at least
    // q = ⌊N/n⌋ partitions. Units of load up to q are then as mandatory as the floors: they
    // get the floors' cost, and the convex costs start above q. Among the flows that fill
    // them (which include every optimum) the costs differ by a constant only, so the optima
    // are the same; the solver just skips one phase per load level below q.
    let total: u64 = comp
        .topics
        .iter()
        .map(|&t| u64::from(problem.partitions(t)))
        .sum();
    let quota = total / n_members as u64;
    for lm in 0..n_members {
        let mut from = base[lm];
        let mut cap = degree[lm];
        if homogeneous {
            let must = (quota as i64 - base[lm]).clamp(0, i64::from(cap)) as i32;
            if must > 0 {
                let e = net.edge(member_base + lm as u32, sink, must, [-1, 0, 0, 0]);
                member_out[lm].0 = Some((e, must));
                from += i64::from(must);
                cap -= must;
            }
        }
        if cap > 0 {
            member_out[lm].1 = Some(net.convex_edge(member_base + lm as u32, sink, cap, from));
        }
    }

    // Warm start: every claim kept, as far as its owner edge and the spread ceiling allow,
    // then a few extras moved where that is evidently not optimal (see `super::warm`). The
    // solver certifies the proposal or starts from zero, so this only decides speed.
    let mut proposal = Proposal::new(problem, comp, &floor, &extra, &base);
    // Class k → (supply edge, owner edge, units kept).
    let mut kept: Vec<(usize, usize, usize, i32)> = Vec::with_capacity(class_edges.len());
    for (k, edges) in class_edges.iter().enumerate() {
        let class = &classes.classes[ids[k]];
        if let (Some(e), Some(o)) = (edges.owner, class.owner) {
            let lt = local_topic(class.topic);
            let lo = local_member(o);
            let i = proposal.subs[lt].partition_point(|&x| x < lo);
            let ceiling = proposal.floor[lt] + i32::from(proposal.has_extra[lt]);
            let x = (ceiling - proposal.count[lt][i]).min(class.partitions.len() as i32);
            if x > 0 {
                proposal.count[lt][i] += x;
                kept.push((k, edges.supply, e, x));
            }
        }
    }
    proposal.count_extras();
    let mut moves = Vec::new();
    // Whether the proposal certainly has a negative cycle (never with no claims: no extra
    // is held).
    let mut evident = !kept.is_empty() && proposal.hopeless();
    if evident {
        // A holder suits a receiver when one of its kept classes of the topic is aligned
        // with the receiver's rack (the move then keeps the alignment).
        // (holder, topic, class) of every kept class, sorted: a holder's classes of a topic
        // are a range (a lookup only, so no order leaks into the result).
        // Without racks nothing suits better than anything else: no lookup to build.
        let mut kept_by: Vec<(u32, usize, usize)> = Vec::new();
        let mut subs = Ragged::default();
        if any_rack {
            kept_by = kept
                .iter()
                .filter_map(|&(k, _, _, _)| {
                    let class = &classes.classes[ids[k]];
                    class.owner.map(|o| (o, local_topic(class.topic), k))
                })
                .collect();
            kept_by.sort_unstable();
            subs.clone_from(&proposal.subs);
        }
        let suits = |lt: usize, from: usize, to: usize| {
            if !any_rack {
                return false;
            }
            let Some(r) = classes.member_rack[comp.members[subs[lt][to] as usize] as usize] else {
                return false;
            };
            let o = comp.members[subs[lt][from] as usize];
            let first = kept_by.partition_point(|&(x, y, _)| (x, y) < (o, lt));
            kept_by[first..]
                .iter()
                .take_while(|&&(x, y, _)| (x, y) == (o, lt))
                .any(|&(_, _, k)| classes.classes[ids[k]].racks.binary_search(&r).is_ok())
        };
        let mut tracker = Tracker::new(&proposal);
        while moves.len() < MAX_MOVES {
            let Some(mv) = tracker.best_move(&proposal, &suits) else {
                break;
            };
            tracker.apply(&mut proposal, mv);
            moves.push(mv);
        }
        evident = tracker.hopeless();
    }
    // When claims keep at most half of the units (all of them unkept in a full assignment),
    // the rest are handed out greedily and improved by a few moves (see `super::warm`), if
    // that leaves nothing evidently wrong. Per topic and subscriber: the units it took this
    // way (through its pool).
    let kept_units: u64 = kept.iter().map(|&(_, _, _, x)| x as u64).sum();
    let mut handed: Option<Vec<Vec<i32>>> = None;
    if greedy_wanted(kept_units, total)
        && !evident
        && let Some((full, taken)) = proposal.completed()
    {
        proposal = full;
        handed = Some(taken);
    }
    // Otherwise the floors still short take units no claim keeps: a joiner can leave a topic
    // without extras while a former holder's unit above the new ceiling stays unkept, and a
    // flow that leaves a floor short next to a free unit has a negative cycle.
    if handed.is_none() && !kept.is_empty() && !evident {
        handed = proposal.fill_floors();
    }
    if (!kept.is_empty() || handed.is_some()) && !evident && warm_wanted() {
        // Route every moved extra: from one of the holder's classes of the topic (the one
        // whose racks suit the receiver best) through the receiver's pool.
        for &(_, supply, e, x) in &kept {
            net.preset(supply, x);
            net.preset(e, x);
        }
        // The kept classes of each (holder, topic) a move takes from, in class order.
        let mut kept_at: BTreeMap<(u32, usize), Vec<usize>> = moves
            .iter()
            .map(|mv| {
                let from = comp.members[proposal.subs[mv.topic][mv.from] as usize];
                ((from, mv.topic), Vec::new())
            })
            .collect();
        for (j, &(k, _, _, _)) in kept.iter().enumerate() {
            let class = &classes.classes[ids[k]];
            if let Some(list) = class
                .owner
                .and_then(|o| kept_at.get_mut(&(o, local_topic(class.topic))))
            {
                list.push(j);
            }
        }
        for mv in &moves {
            let (from, to) = (
                proposal.subs[mv.topic][mv.from],
                proposal.subs[mv.topic][mv.to],
            );
            let (o, m) = (comp.members[from as usize], comp.members[to as usize]);
            let rack = classes.member_rack[m as usize];
            let Some(&(k, _, e, _)) = kept_at[&(o, mv.topic)]
                .iter()
                .map(|&j| &kept[j])
                .filter(|&&(_, _, e, _)| net.preset_on(e) > 0)
                .max_by_key(|&&(k, _, _, _)| {
                    let racks = &classes.classes[ids[k]].racks;
                    (
                        rack.is_some_and(|r| racks.binary_search(&r).is_ok()),
                        Reverse(k),
                    )
                })
            else {
                continue;
            };
            net.add_preset(e, -1);
            let edges = &class_edges[k];
            let mut route = Vec::new();
            let aligned = edges
                .racks
                .iter()
                .find(|&&(_, node)| node == entry(m, mv.topic) && node != topic_pool[mv.topic]);
            let pool = match aligned {
                Some(&(edge, node)) => {
                    route.push(edge);
                    node
                }
                None => {
                    route.push(edges.topic);
                    let node = entry(m, mv.topic);
                    let topic = (topic_pool[mv.topic] - pool_base) as usize;
                    if node != topic_pool[mv.topic] {
                        route.extend(
                            pool_out[topic]
                                .iter()
                                .filter(|&&(_, to)| matches!(to, Target::Pool(p) if p == node))
                                .map(|&(edge, _)| edge),
                        );
                    }
                    node
                }
            };
            route.extend(
                pool_out[(pool - pool_base) as usize]
                    .iter()
                    .filter(|&&(_, to)| matches!(to, Target::Member(x) if x == m))
                    .map(|&(edge, _)| edge),
            );
            for edge in route {
                net.add_preset(edge, 1);
            }
        }
        if let Some(taken) = &handed {
            // Per topic: the classes' units left go to the rack pools they align with as far
            // as those pools' members take units, the rest through the topic pool. Rack pool j
            // of a topic is node pool + 1 + j.
            let mut k = 0;
            for (lt, taken) in taken.iter().enumerate() {
                // The units to route, from the classes in order (all their units left when
                // the greedy completion handed everything out).
                let mut need: i32 = taken.iter().sum();
                let pool = topic_pool[lt];
                let rack = |node: u32| (node - pool - 1) as usize;
                let mut routes = Vec::new();
                while k < ids.len() && local_topic(classes.classes[ids[k]].topic) == lt {
                    let edges = &class_edges[k];
                    let size = classes.classes[ids[k]].partitions.len() as i32;
                    let left = (size - net.preset_on(edges.supply)).min(need);
                    need -= left;
                    routes.push(ClassRoute {
                        supply: edges.supply,
                        left,
                        racks: edges
                            .racks
                            .iter()
                            .map(|&(e, node)| (e, rack(node)))
                            .collect(),
                        topic: edges.topic,
                    });
                    k += 1;
                }
                let subscribers: Vec<(usize, Option<usize>)> = pool_edges[lt]
                    .iter()
                    .map(|&(e, node)| (e, (node != pool).then(|| rack(node))))
                    .collect();
                let to_racks: Vec<usize> = pool_out[(pool - pool_base) as usize]
                    .iter()
                    .filter(|(_, to)| matches!(to, Target::Pool(_)))
                    .map(|&(e, _)| e)
                    .collect();
                route_topic(&mut net, &routes, taken, &subscribers, &to_racks);
            }
        }
        for (lt, members) in pair_members.iter().enumerate() {
            // Both lists ascend and the (m,t) nodes' members are subscribers: walk them
            // together.
            let subs = &problem.subscribers[comp.topics[lt] as usize];
            let mut i = 0;
            for (pos, &m) in members.iter().enumerate() {
                while subs[i] < m {
                    i += 1;
                }
                let x = proposal.count[lt][i];
                let node = pair_base[lt] + pos as u32;
                let (floor_edge, extra_edge) = pair_out[(node - pair_nodes.start) as usize];
                let on_floor = x.min(proposal.floor[lt]);
                if let Some(e) = floor_edge {
                    net.preset(e, on_floor);
                }
                if let Some(e) = extra_edge {
                    net.preset(e, x - on_floor);
                }
            }
        }
        for (lm, &(must, convex)) in member_out.iter().enumerate() {
            let mut x = (proposal.load[lm] - base[lm]) as i32;
            if let Some((e, cap)) = must {
                net.preset(e, x.min(cap));
                x -= x.min(cap);
            }
            if let Some(e) = convex {
                net.preset(e, x);
            }
        }
    }

    net.solve(source, sink);

    // Back to partitions: class pieces (member, count), pools matched in class order.
    let mut pieces: Vec<Vec<(u32, u32)>> = vec![Vec::new(); ids.len()];
    // Pool node → incoming (class, count) in class order.
    let mut pool_in: Vec<Vec<(usize, u32)>> = vec![Vec::new(); pool_out.len()];
    for (k, (&i, edges)) in ids.iter().zip(&class_edges).enumerate() {
        let class = &classes.classes[i];
        if let (Some(e), Some(o)) = (edges.owner, class.owner) {
            let f = net.flow(e);
            if f > 0 {
                pieces[k].push((o, f as u32));
            }
        }
        for &(e, node) in &edges.racks {
            let f = net.flow(e);
            if f > 0 {
                pool_in[(node - pool_base) as usize].push((k, f as u32));
            }
        }
        let f = net.flow(edges.topic);
        if f > 0 {
            pool_in[(topic_pool[local_topic(class.topic)] - pool_base) as usize]
                .push((k, f as u32));
        }
    }
    // Pools in node order: a topic pool hands its classes' units on to its rack pools before
    // those are matched to members.
    for node in 0..pool_in.len() {
        let mut incoming = std::mem::take(&mut pool_in[node]);
        if incoming.is_empty() {
            continue;
        }
        // Class order (a rack pool hears from its classes, then from its topic pool).
        incoming.sort_by_key(|&(k, _)| k);
        let mut outgoing = pool_out[node]
            .iter()
            .map(|&(e, to)| (to, net.flow(e) as u32))
            .filter(|&(_, f)| f > 0);
        let mut current = outgoing.next();
        for (k, mut amount) in incoming {
            while amount > 0 {
                let Some((to, left)) = current.as_mut() else {
                    break;
                };
                let take = amount.min(*left);
                match *to {
                    Target::Member(m) => pieces[k].push((m, take)),
                    Target::Pool(p) => pool_in[(p - pool_base) as usize].push((k, take)),
                }
                amount -= take;
                *left -= take;
                if *left == 0 {
                    current = outgoing.next();
                }
            }
        }
    }
    // A member takes at most its floors plus one extra per topic: room made once rather
    // than by doubling.
    for (lm, &m) in comp.members.iter().enumerate() {
        lists[m as usize].reserve(base[lm] as usize + degree[lm] as usize);
    }
    for (&i, mut piece) in ids.iter().zip(pieces) {
        let class = &classes.classes[i];
        piece.sort_unstable();
        let mut parts = classes.partitions(class).iter();
        for (m, take) in piece {
            for &p in parts.by_ref().take(take as usize) {
                lists[m as usize].push((class.topic, p));
            }
        }
    }
}
