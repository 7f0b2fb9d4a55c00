//! The gaining cells of the [count path](super) (subscribers holding more than f_t of their
//! topic's claims), listed and flagged by topic, and where a topic's claimants sit among its
//! subscribers.
//!
//! A topic with few claims for its subscribers (a join or a leave of a large group: at most
//! P_t claims against many more subscribers) finds its claimants' positions by one binary
//! search each, and its gaining cells from those positions, with no pass over its
//! subscribers; the deal then reads the same positions. Any other topic counts its claims by
//! member and finds its cells in one pass over its subscribers, and the deal writes every
//! subscriber's position. Both find the same cells.

use std::cell::OnceCell;

use crate::assignor::gallop::gallop;

/// The gaining cells of a component listed by topic: those of local topic lt are the
/// subscriber indices `at[start[lt]..start[lt + 1]]` (in no particular order), also flagged
/// per subscriber by [`Cells::gains`] (built for a topic when first asked for: the moves look
/// at few topics).
pub(super) struct Cells {
    /// The cells' subscriber indices, topic after topic.
    pub at: Vec<u32>,
    /// Per local topic: where its cells start in `at`; one more entry, the end.
    pub start: Vec<usize>,
    /// Per local topic: its number of subscribers.
    width: Vec<usize>,
    /// Per local topic: its flags, once built.
    flags: Vec<OnceCell<Vec<bool>>>,
}

impl Cells {
    /// No cells yet, room for `topics` topics.
    pub fn new(topics: usize) -> Cells {
        let mut start = Vec::with_capacity(topics + 1);
        start.push(0);
        Cells {
            at: Vec::new(),
            start,
            width: Vec::with_capacity(topics),
            flags: (0..topics).map(|_| OnceCell::new()).collect(),
        }
    }

    /// The gaining cells of local topic `lt`, as indices among its subscribers.
    pub fn of(&self, lt: usize) -> &[u32] {
        &self.at[self.start[lt]..self.start[lt + 1]]
    }

    /// Ends the next topic, of `width` subscribers: its cells are those pushed onto `at`
    /// since the last one ended.
    pub fn end_topic(&mut self, width: usize) {
        self.start.push(self.at.len());
        self.width.push(width);
    }

    /// Lists and ends the next topic, of subscribers `subs`, from `at`, its claims'
    /// positions among them (as [`locate`] finds them): its cells are the subscribers
    /// holding more than `f` claims. Each cell gets an extra in `count` (per subscriber) and
    /// in `heavy` (per local member). `owned` is scratch space, zero and left so, at least
    /// `subs` long.
    pub fn list_by_position(
        &mut self,
        subs: &[u32],
        at: &[u32],
        f: u32,
        owned: &mut [u32],
        count: &mut [i32],
        heavy: &mut [i64],
    ) {
        for &i in at {
            owned[i as usize] += 1;
        }
        // Read (and cleared) at a subscriber's first claim.
        for &i in at {
            if std::mem::take(&mut owned[i as usize]) > f {
                self.at.push(i);
                count[i as usize] += 1;
                heavy[subs[i as usize] as usize] += 1;
            }
        }
        self.end_topic(subs.len());
    }

    /// [`Cells::list_by_position`] with `owned` (per local member, cleared here) holding the
    /// claims of each of `subs` instead, read in one pass over them; with `flag`, the
    /// topic's flags are built in that pass too.
    #[inline(always)]
    pub fn list_by_pass(
        &mut self,
        subs: &[u32],
        f: u32,
        owned: &mut [u32],
        count: &mut [i32],
        heavy: &mut [i64],
        flag: bool,
    ) {
        let (first, at) = (self.at.len(), &mut self.at);
        let lt = self.width.len();
        if flag {
            let mut flags = vec![false; subs.len()];
            let cells = flags.iter_mut().zip(subs).zip(count.iter_mut());
            for (i, ((flag, &lm), k)) in cells.enumerate() {
                if std::mem::take(&mut owned[lm as usize]) > f {
                    *flag = true;
                    *k += 1;
                    heavy[lm as usize] += 1;
                    at.push(i as u32);
                }
            }
            if at.len() > first {
                // Set only here: empty until now.
                let _ = self.flags[lt].set(flags);
            }
        } else {
            for (i, (&lm, k)) in subs.iter().zip(count.iter_mut()).enumerate() {
                if std::mem::take(&mut owned[lm as usize]) > f {
                    *k += 1;
                    heavy[lm as usize] += 1;
                    at.push(i as u32);
                }
            }
        }
        self.end_topic(subs.len());
    }

    /// Per subscriber of local topic `lt`: whether it is a gaining cell; empty for a topic
    /// without any.
    pub fn gains(&self, lt: usize) -> &[bool] {
        let of = self.of(lt);
        if of.is_empty() {
            return &[];
        }
        self.flags[lt].get_or_init(|| flagged(self.width[lt], of))
    }

    /// Per local topic: [`Cells::gains`] as a list of its own.
    pub fn into_lists(self) -> Vec<Vec<bool>> {
        let Cells {
            at,
            start,
            width,
            flags,
        } = self;
        flags
            .into_iter()
            .enumerate()
            .map(|(lt, flags)| {
                let of = &at[start[lt]..start[lt + 1]];
                flags.into_inner().unwrap_or_else(|| flagged(width[lt], of))
            })
            .collect()
    }
}

/// Per subscriber of a topic of `width` subscribers: whether it is one of `cells`; empty
/// without any.
fn flagged(width: usize, cells: &[u32]) -> Vec<bool> {
    if cells.is_empty() {
        return Vec::new();
    }
    let mut flags = vec![false; width];
    for &i in cells {
        flags[i as usize] = true;
    }
    flags
}

/// The gaining flags of a component by topic, as the proposal's moves ([`super::pull`])
/// read them.
pub(crate) trait Gaining {
    /// Per subscriber of local topic `lt`: whether it gains from the topic's extra; an empty
    /// list when none does.
    fn flags(&self, lt: usize) -> &[bool];
}

impl Gaining for Cells {
    fn flags(&self, lt: usize) -> &[bool] {
        self.gains(lt)
    }
}

impl Gaining for [Vec<bool>] {
    fn flags(&self, lt: usize) -> &[bool] {
        &self[lt]
    }
}

/// Whether a topic of `claims` claims and `subscribers` subscribers finds its cells from its
/// claimants' positions (see the [module docs](self)): those cost about twenty instructions
/// a claim beyond finding the positions (at most a pass of about nine a subscriber), where
/// the cells' pass over the subscribers and the deal's cost about nineteen a subscriber.
pub(super) fn by_position(claims: usize, subscribers: usize) -> bool {
    #[cfg(test)]
    if let Some(forced) = BY_POSITION.get() {
        return forced;
    }
    17 * claims < 10 * subscribers
}

/// Appends to `out`, per claim of `claims` in order, the claimant's index among `subs` (a
/// topic's subscribers as local member indices, ascending; every claimant is one, as
/// `claims::previous_owners` guarantees); `local(m)` is member m's local index and `slot`
/// (one entry per local member) scratch space. By search where a binary search would cost
/// less (about six instructions a halving and thirty more a claim) than writing every
/// subscriber's position (about nine a subscriber); the search starts at the last claimant's
/// position ([`gallop`]), which costs less again when the claims come in subscriber order.
pub(super) fn locate(
    subs: &[u32],
    claims: &[(i32, u32)],
    local: impl Fn(u32) -> usize,
    slot: &mut [u32],
    out: &mut Vec<u32>,
) {
    let halvings = (usize::BITS - subs.len().leading_zeros()) as usize;
    let search = claims.len() * (6 * halvings + 23) < 9 * subs.len();
    #[cfg(test)]
    let search = SEARCH.get().unwrap_or(search);
    if search {
        // Claims usually come in subscriber order, often on consecutive subscribers (a deal
        // hands consecutive partitions to consecutive members), so each search starts just
        // after the last claimant's position. Every claimant is a subscriber: found.
        let mut next = 0;
        out.extend(claims.iter().map(|&(_, m)| {
            let lm = local(m) as u32;
            let (Ok(i) | Err(i)) = gallop(subs, next, |x| x.cmp(&lm));
            next = i + 1;
            i as u32
        }));
    } else {
        for (i, &lm) in subs.iter().enumerate() {
            slot[lm as usize] = i as u32;
        }
        out.extend(claims.iter().map(|&(_, m)| slot[local(m)]));
    }
}

#[cfg(test)]
thread_local! {
    /// Tests only: every topic finds its cells by position (`Some(true)`) or by the pass over
    /// its subscribers (`Some(false)`), whatever its sizes.
    pub(crate) static BY_POSITION: std::cell::Cell<Option<bool>> =
        const { std::cell::Cell::new(None) };
    /// Tests only: positions are found by binary search (`Some(true)`) or by writing every
    /// subscriber's (`Some(false)`), whatever the sizes.
    pub(crate) static SEARCH: std::cell::Cell<Option<bool>> = const { std::cell::Cell::new(None) };
}
