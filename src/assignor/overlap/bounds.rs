//! The bounds of the [count path](super) that make the flow unnecessary: a proposal meeting
//! them is optimal for objectives 1–5 (see the module docs there for why).

use super::super::warm::Proposal;
#[cfg(test)]
use super::TRUST_PROPOSAL;
use super::cells::Cells;

/// What the bounds of the [module docs](super) read besides the proposal: the gaining cells
/// (`cells`), each member's number of them (`gains_of`), B_m (`base`) and d_m (`degree`).
pub(super) struct Bounds<'a> {
    /// The gaining cells.
    pub cells: &'a Cells,
    /// Per local member: its gaining cells, G_m.
    pub gains_of: &'a [i64],
    /// Per local member: B_m.
    pub base: &'a [i64],
    /// Per local member: d_m.
    pub degree: &'a [i32],
}

impl Bounds<'_> {
    /// Whether `proposal` (every subscriber at its floor or one above) is lexicographically
    /// optimal for balance and stickiness by the bounds of the [module docs](super): no extra
    /// can move to a member with room that is two units lighter, even ignoring which topics it
    /// subscribes to, and it uses as many gaining cells as any balance-optimal choice can.
    pub fn met(&self, proposal: &Proposal) -> bool {
        #[cfg(test)]
        if TRUST_PROPOSAL.with(std::cell::Cell::get) {
            return true;
        }
        let (base, degree) = (self.base, self.degree);
        let Some(level) = balanced(proposal, base, degree) else {
            return false;
        };
        let n = base.len();
        let extras = |lm: usize| proposal.load[lm] - base[lm];
        // Gaining cells used by the proposal; per topic, min(r_t, g_t).
        let mut used = 0i64;
        let mut by_topics = 0i64;
        for lt in 0..proposal.subs.len() {
            let (f, count) = (proposal.floor[lt], &proposal.count[lt][..]);
            let of = self.cells.of(lt);
            for &i in of {
                used += i64::from(count[i as usize] > f);
            }
            by_topics += (of.len() as i64).min(i64::from(proposal.extra[lt]));
        }
        // Every balance-optimal choice gives m between lower(m) and upper(m) extras, with
        // exactly E − Σ lower at the upper end where they differ.
        let clamp = |x: i64, lm: usize| x.clamp(0, i64::from(degree[lm]));
        let total: i64 = (0..n).map(extras).sum();
        // The relaxation places every extra: so must the proposal (the hand-out always does).
        if total != proposal.extra.iter().map(|&r| i64::from(r)).sum::<i64>() {
            return false;
        }
        let mut lower_sum = 0;
        let mut by_members = 0;
        let mut could_gain_more = 0;
        for (lm, &g) in self.gains_of.iter().enumerate() {
            let lower = clamp(level - base[lm], lm);
            let upper = clamp(level + 1 - base[lm], lm);
            lower_sum += lower;
            by_members += g.min(lower);
            if upper > lower && g > lower {
                could_gain_more += 1;
            }
        }
        by_members += could_gain_more.min(total - lower_sum);
        used == by_topics.min(by_members)
    }
}

/// The balance test of the [module docs](super): `Some(L)`, the lightest load among members
/// with room for another extra (a large number if none has room), when no member holding an
/// extra is above L + 1; `None` otherwise.
pub(super) fn balanced(proposal: &Proposal, base: &[i64], degree: &[i32]) -> Option<i64> {
    let n = base.len();
    let extras = |lm: usize| proposal.load[lm] - base[lm];
    let level = (0..n)
        .filter(|&lm| extras(lm) < i64::from(degree[lm]))
        .map(|lm| proposal.load[lm])
        .min()
        .unwrap_or(i64::MAX - 1);
    (0..n)
        .all(|lm| extras(lm) == 0 || proposal.load[lm] <= level + 1)
        .then_some(level)
}
