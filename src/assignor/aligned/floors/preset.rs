//! The warm start proposed to the solver for the flow with floors of the [parent](super),
//! built topic by topic, in topic order:
//!
//! 1. *Extras*: the topic's r_t extras go to the members that have received the fewest so
//!    far, those with more keepable claims than f_t first among equals, then by id. Every
//!    member then ends with q or q + 1 extras, exactly s of them with q + 1 (the loads stay
//!    within one of each other after every topic), so the member edges can carry them.
//! 2. *Keeps*: every member keeps its keepable claims, masks ascending, up to its count.
//! 3. *Placement*: the partitions left over go to the racks that can align them (the free
//!    node's to any rack) by the small maximum flow of [`Transport`], each rack up to its
//!    members' room; where it cannot place them all, members in the full racks the stuck
//!    units reach give up kept claims that another rack can take (a few rounds), as the
//!    [overlap network's proposal](super::super::super::overlap) does. A rack's partitions
//!    fill its members' room in id order. What does not fit stays at the source: the
//!    proposal is then a flow of smaller value, which the solver's phases complete.
//!
//! The solver uses the proposal only if it can certify it (see
//! [`super::super::super::flow`]), so it decides the speed, never the result: a cold solve
//! pushes every unit through its phases; from this proposal only the exchanges it missed
//! (negative cycles: a member keeping a claim it gave up, an extra moving to a member that
//! can keep more) and the units it left at the source are left to do.

use super::super::super::flow::Network;
use super::super::transport::{Keeps, Transport};
use super::{Arena, MemberEdges, Plan};

#[cfg(test)]
thread_local! {
    /// Tests only: a planted fault, the extras not offered to the members that received the
    /// fewest (every topic's go to the lowest ids), so that member loads break their caps and
    /// the proposal is no flow.
    pub(crate) static EXTRAS_BY_ID: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Tests only: a planted fault, no claim kept (every partition placed through the racks).
    pub(crate) static NO_KEEPS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// How many times a topic's keeps are loosened before the placement leaves units unplaced.
const PRESET_ROUNDS: usize = 4;

/// How many times a topic's extras are exchanged before its keeps are loosened.
const EXCHANGE_ROUNDS: usize = 4;

/// Proposes the flow of the [module docs](self) on `net`, built as the parent's `plans`
/// and `members` record; `rack_of` gives each local member's rack, `q` the extras every
/// member gets at least.
pub(super) fn propose(
    net: &mut Network,
    plans: &[Plan],
    arena: &Arena,
    members: &MemberEdges,
    rack_of: &dyn Fn(usize) -> usize,
    racks: usize,
    q: u64,
) {
    #[cfg(test)]
    let (by_id, no_keeps) = (
        EXTRAS_BY_ID.with(std::cell::Cell::get),
        NO_KEEPS.with(std::cell::Cell::get),
    );
    #[cfg(not(test))]
    let (by_id, no_keeps) = (false, false);
    let n = members.to_z.len();
    let rack: Vec<usize> = (0..n).map(rack_of).collect();
    let mut received = vec![0u64; n];
    let mut claimed = vec![0u64; n];
    let mut want = vec![0u64; n];
    let mut kept = vec![0u64; n];
    // Per member: the extras that reach it, over all topics.
    let mut delivered = vec![0u64; n];
    let mut transport = Transport::default();
    let mut givers = Vec::new();
    // Per topic, reused.
    let (mut keep, mut left_over, mut supply, mut masks) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut room, mut into_rack, mut plain_floor) =
        (vec![0u64; racks], vec![0u64; racks], vec![0u64; racks]);
    let mut sent = Vec::new();
    for plan in plans {
        let plan = arena.view(plan);
        let f = u64::from(plan.floor);
        let k = plan.groups.len();
        supply.clear();
        supply.extend(plan.groups.iter().map(|g| g.1));
        supply.push(plan.free);
        let extras = supply.iter().sum::<u64>() % n as u64;
        // All racks: the free node's mask.
        masks.clear();
        masks.extend(plan.groups.iter().map(|g| g.0));
        masks.push(if racks >= 64 {
            u64::MAX
        } else {
            (1u64 << racks) - 1
        });
        let entry_group = plan.entry_group;
        // 1. Extras.
        claimed.fill(0);
        for &(lm, _, count) in plan.claims {
            claimed[lm as usize] += count;
        }
        // The loads are within one of each other: the lowest level first, members with
        // more claims than f_t first within a level, then ids.
        want.fill(f);
        let low = received.iter().copied().min().unwrap_or(0);
        let mut left = extras;
        for (level, gaining) in [(low, true), (low, false), (low + 1, true), (low + 1, false)] {
            for lm in 0..n {
                if left == 0 {
                    break;
                }
                let fits = by_id || (received[lm] == level && (claimed[lm] > f) == gaining);
                if fits && want[lm] == f {
                    want[lm] += 1;
                    left -= 1;
                }
            }
        }
        // 2. Keeps and 3. placement, the extras exchanged at equal levels while the
        // placement fails.
        keep.clear();
        keep.resize(plan.claims.len(), 0);
        left_over.resize(k + 1, 0);
        for exchange in 0..=EXCHANGE_ROUNDS {
            kept.fill(0);
            for (e, &(lm, _, count)) in plan.claims.iter().enumerate() {
                let lm = lm as usize;
                keep[e] = if no_keeps {
                    0
                } else {
                    count.min(want[lm] - kept[lm])
                };
                kept[lm] += keep[e];
            }
            left_over.copy_from_slice(&supply);
            for (&g, &units) in entry_group.iter().zip(&keep) {
                left_over[g] -= units;
            }
            room.fill(0);
            for lm in 0..n {
                room[rack[lm]] += want[lm] - kept[lm];
            }
            if exchange == EXCHANGE_ROUNDS || transport.solve(&masks, &left_over, &room) {
                break;
            }
            // The racks the stuck units reach are full: a member there takes the extra of
            // one outside at the same level (it keeps one more claim or makes room).
            let reached = transport.reached;
            let inside = |lm: usize| (1u64 << rack[lm]) & reached != 0;
            // Best: the taker keeps one more claim, the giver keeps as many as before; the
            // first pair (taker, giver) by ids among the best.
            let Some((g, h)) = exchange_pair(&mut givers, f, &want, &received, &claimed, inside)
            else {
                break;
            };
            want[g] += 1;
            want[h] -= 1;
        }
        for lm in 0..n {
            received[lm] += want[lm] - f;
        }
        let keeps = Keeps {
            claims: plan.claims,
            entry_group,
            rack: &rack,
            keep: &mut keep,
            kept: &mut kept,
        };
        transport.place_giving_up(&masks, &mut left_over, &mut room, keeps, PRESET_ROUNDS);
        let amount = &transport.amount;
        into_rack.fill(0);
        for (g, sent) in amount.chunks(racks.max(1)).enumerate() {
            if g <= k {
                for (r, &units) in sent.iter().enumerate() {
                    into_rack[r] += units;
                }
            }
        }
        for (e, &units) in keep.iter().enumerate() {
            net.preset(plan.keep_edge[e], units as i32);
        }
        for &(g, r, id) in plan.to_rack {
            net.preset(id, amount[g * racks + r] as i32);
        }
        keep_by_group(entry_group, &keep, k + 1, &mut sent);
        for (g, s) in sent.iter_mut().enumerate() {
            *s += amount[g * racks..(g + 1) * racks].iter().sum::<u64>();
            if let Some(id) = plan.source_edge[g] {
                net.preset(id, *s as i32);
            }
        }
        plain_floor.fill(0);
        for lm in 0..n {
            let r = rack[lm];
            let pool = (want[lm] - kept[lm]).min(into_rack[r]);
            into_rack[r] -= pool;
            let total = kept[lm] + pool;
            let extra = total.saturating_sub(f);
            let slot = &plan.slots[lm];
            if slot.pair {
                if let Some(id) = slot.pool_edge {
                    net.preset(id, pool as i32);
                }
                if let Some(id) = slot.floor_edge {
                    net.preset(id, total.min(f) as i32);
                }
                if let Some(id) = slot.extra_edge {
                    net.preset(id, extra as i32);
                }
            } else {
                plain_floor[r] += total.min(f);
                if let Some(id) = slot.pool_edge {
                    net.preset(id, extra as i32);
                }
            }
            delivered[lm] += extra;
        }
        for (r, &units) in plain_floor.iter().enumerate() {
            if let Some(id) = plan.plain_floor[r] {
                net.preset(id, units as i32);
            }
        }
    }
    let mut above = 0i32;
    for (lm, &extras) in delivered.iter().enumerate() {
        if let Some(id) = members.to_sink[lm] {
            net.preset(id, extras.min(q) as i32);
        }
        if extras > q {
            if let Some(id) = members.to_z[lm] {
                net.preset(id, (extras - q) as i32);
            }
            above += (extras - q) as i32;
        }
    }
    if let Some(id) = members.z_sink {
        net.preset(id, above);
    }
}

/// The exchange of extras the placement's loop makes: among the takers g (`want[g] == f`,
/// `inside(g)`) and the givers h (`want[h] > f`, not `inside(h)`) at the same level
/// (`received`), the pair of the highest score 1 + [claimed[g] > f] − [claimed[h] > f], the
/// first by (g, h) among those. The score is a sum of a taker's part and a giver's part, so
/// a taker's best giver is the first giver of its level whose own claims do not pass f, else
/// the first of its level: one pass over the members records those firsts per level, where a
/// scan of every pair cost n² per exchange. `givers` is scratch.
fn exchange_pair(
    givers: &mut Vec<(u64, bool, usize)>,
    f: u64,
    want: &[u64],
    received: &[u64],
    claimed: &[u64],
    inside: impl Fn(usize) -> bool,
) -> Option<(usize, usize)> {
    let n = want.len();
    // Per (level, whether its claims pass f): the first giver, in id order.
    givers.clear();
    for h in (0..n).filter(|&h| want[h] > f && !inside(h)) {
        let key = (received[h], claimed[h] > f);
        if !givers.iter().any(|&(level, over, _)| (level, over) == key) {
            givers.push((key.0, key.1, h));
        }
    }
    let first = |level: u64, over: bool| {
        givers
            .iter()
            .find(|&&(l, o, _)| l == level && o == over)
            .map(|&(_, _, h)| h)
    };
    let mut found: Option<(u8, usize, usize)> = None;
    for g in (0..n).filter(|&g| want[g] == f && inside(g)) {
        let level = received[g];
        let best = first(level, false)
            .map(|h| (0u8, h))
            .or_else(|| first(level, true).map(|h| (1u8, h)));
        if let Some((minus, h)) = best {
            let score = 1 + u8::from(claimed[g] > f) - minus;
            if found.is_none_or(|x| score > x.0) {
                found = Some((score, g, h));
            }
        }
    }
    found.map(|(_, g, h)| (g, h))
}

/// Per group (`groups` of them): the claims kept of its partitions, into `sent`.
fn keep_by_group(entry_group: &[usize], keep: &[u64], groups: usize, sent: &mut Vec<u64>) {
    sent.clear();
    sent.resize(groups, 0);
    for (&g, &units) in entry_group.iter().zip(keep) {
        sent[g] += units;
    }
}
