//! Placing a batch of apps: the order tried (name order, most constrained first, then the exact search's placement) and the groups each order gives.

use super::{demands, search};
use crate::input::app::AppId;
use crate::plan::Planner;
use demands::Model;

/// Whether a batch may open new groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NewGroups {
    Open,
    /// Only the groups in use (`plan`'s compaction empties some into the others).
    Closed,
}

/// The work searches may still do, in "does this app fit that group?" questions: enough for
/// an exact search of a few hundred apps, and a bounded cost at any size.
pub(crate) struct Budget(u64);

impl Default for Budget {
    fn default() -> Self {
        Budget(1_000_000)
    }
}

impl Budget {
    pub fn new() -> Self {
        Budget::default()
    }

    /// Takes `n` questions; None when the budget is spent.
    pub(super) fn spend(&mut self, n: u64) -> Option<()> {
        self.0 = self.0.checked_sub(n)?;
        Some(())
    }

    /// Whether `n` more questions fit.
    fn allows(&self, n: u64) -> bool {
        self.0 >= n
    }
}

impl<'a> Planner<'a> {
    /// Places `batch` (apps in no group yet) and returns where each went, in the order
    /// they were placed; None, placing nothing, when groups are [`NewGroups::Closed`] and
    /// the batch does not fit the groups in use.
    pub(in crate::plan) fn place_batch(
        &mut self,
        batch: &[AppId],
        new: NewGroups,
        budget: &mut Budget,
    ) -> Option<Vec<(AppId, u32)>> {
        let mut batch = batch.to_vec();
        batch.sort_by(|&a, &b| self.apps[a].name.cmp(&self.apps[b].name));
        // Building the model reads every path of the groups in use and of the batch.
        let paths = |ids: &mut dyn Iterator<Item = AppId>| -> u64 {
            ids.map(|id| self.apps[id].paths.len() as u64).sum()
        };
        let cost = paths(&mut batch.iter().copied())
            + paths(&mut self.groups.values().flat_map(|g| g.apps.iter().copied()));
        if batch.len() < 2 || !budget.allows(cost) {
            // Without a model, the largest apps first.
            batch.sort_by_key(|&id| std::cmp::Reverse(self.apps[id].rule_count()));
            return self.settle(self.trial(&batch, new)?);
        }
        let _ = budget.spend(cost);
        let model = Model::new(self, &batch);
        let bound = model.lower_bound();
        // Name order where it reaches the bound: groups then hold runs of names, as
        // one-at-a-time placement gave them.
        let by_name = self.trial(&batch, new);
        if by_name.as_ref().is_some_and(|t| t.0.groups.len() <= bound) {
            return self.settle(by_name?);
        }
        let order: Vec<AppId> = model.items.iter().map(|i| i.id).collect();
        let mut best = fewer_groups(by_name, self.trial(&order, new));
        loop {
            let limit = match &best {
                Some(b) if b.0.groups.len() > bound => b.0.groups.len() - 1,
                Some(_) => break,
                None => model.bins.len(),
            };
            // One descent asks about every unplaced app in every group at each level.
            let n = model.items.len() as u64;
            if !budget.allows(n * n * limit as u64 / 2) {
                break;
            }
            let Some(assign) = search::search(&model, limit, budget) else {
                break;
            };
            match self.trial(&self.order_of(&model, &assign), new) {
                Some(t)
                    if best
                        .as_ref()
                        .is_none_or(|b| t.0.groups.len() < b.0.groups.len()) =>
                {
                    best = Some(t)
                }
                _ => break,
            }
            if new == NewGroups::Closed {
                break;
            }
        }
        self.settle(best?)
    }

    /// The planner after the batch, and where each app went.
    fn settle(
        &mut self,
        (planner, placed): (Planner<'a>, Vec<(AppId, u32)>),
    ) -> Option<Vec<(AppId, u32)>> {
        *self = planner;
        Some(placed)
    }

    /// The batch placed in `order`, each app into the lowest-numbered group with room it
    /// may join, on a copy; None when groups are closed and one finds none.
    fn trial(&self, order: &[AppId], new: NewGroups) -> Option<(Planner<'a>, Vec<(AppId, u32)>)> {
        let mut planner = self.clone();
        let mut placed = Vec::with_capacity(order.len());
        for &id in order {
            let number = match new {
                NewGroups::Open => planner.first_fit(id),
                NewGroups::Closed => planner.first_fit_in_use(id)?,
            };
            planner.place(number, id);
            placed.push((id, number));
        }
        Some((planner, placed))
    }

    /// The lowest-numbered group in use with room for app `id`.
    fn first_fit_in_use(&self, id: AppId) -> Option<u32> {
        self.groups
            .keys()
            .copied()
            .find(|&n| self.fits(n, id).is_ok())
    }

    /// The order that makes first-fit follow a placement the search found: group by group,
    /// in the numbers first-fit gives them (groups in use keep theirs; new ones take the
    /// emptied numbers first, then the next ones), each group's apps most constrained first.
    fn order_of(&self, model: &Model, assign: &[u32]) -> Vec<AppId> {
        let mut fresh = self.gaps.iter().copied().chain(self.highest + 1..);
        let mut numbers = model.numbers.clone();
        let opened = assign.iter().copied().max().map_or(0, |m| m as usize + 1);
        let in_use = numbers.len();
        numbers.extend((in_use..opened).map(|_| fresh.next().unwrap_or(u32::MAX)));
        let mut keyed: Vec<(u32, usize)> = (assign.iter().enumerate())
            .map(|(item, &bin)| (numbers[bin as usize], item))
            .collect();
        keyed.sort_unstable();
        keyed
            .into_iter()
            .map(|(_, item)| model.items[item].id)
            .collect()
    }
}

/// The trial with fewer groups; `a` on a tie, and whichever placed the batch at all.
fn fewer_groups<'a, T>(
    a: Option<(Planner<'a>, T)>,
    b: Option<(Planner<'a>, T)>,
) -> Option<(Planner<'a>, T)> {
    match (a, b) {
        (Some(a), Some(b)) if b.0.groups.len() < a.0.groups.len() => Some(b),
        (Some(a), _) => Some(a),
        (None, b) => b,
    }
}
