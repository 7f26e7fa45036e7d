//! An exact search, within a budget, for a placement of the batch into at most `limit`
//! groups: depth first, each time on the app with the fewest groups it may still join (a
//! dead end shows at once), trying those groups lowest first. Empty new groups are all
//! alike, so only the first is tried; and the search gives up where the rules or rps left
//! exceed what the groups can still take.

use super::Budget;
use super::demands::{Bin, Model};

/// Each item's bin (an index into the model's bins, the new ones after those in use), or
/// None when there is no such placement or the budget ran out first.
pub(super) fn search(model: &Model, limit: usize, budget: &mut Budget) -> Option<Vec<u32>> {
    if limit < model.bins.len() {
        return None;
    }
    let mut bins = model.bins.clone();
    bins.resize(limit, Bin::default());
    let mut s = Search {
        model,
        in_use: model.bins.len(),
        bins,
        assign: vec![None; model.items.len()],
        budget,
    };
    match s.dive(model.items.len()) {
        Some(true) => Some(s.assign.into_iter().map(|b| b.unwrap_or(0)).collect()),
        _ => None,
    }
}

struct Search<'a> {
    model: &'a Model,
    bins: Vec<Bin>,
    /// Bins that hold something or were in use before: the next one is the first new one.
    in_use: usize,
    assign: Vec<Option<u32>>,
    budget: &'a mut Budget,
}

impl Search<'_> {
    /// Places the `left` unplaced items; Some(false) at a dead end, None when the budget
    /// ran out.
    fn dive(&mut self, left: usize) -> Option<bool> {
        if left == 0 {
            return Some(true);
        }
        if !self.room_left() {
            return Some(false);
        }
        let Some(item) = self.most_constrained()? else {
            return Some(false);
        };
        for bin in self.candidates() {
            if !self.may_join(item, bin) {
                continue;
            }
            self.put(item, bin);
            let found = self.dive(left - 1);
            // A placement found stays as it is, to be read.
            if found != Some(false) {
                return found;
            }
            self.take(item, bin);
        }
        Some(false)
    }

    /// The bins an item may be tried in: those in use, and the first new one.
    fn candidates(&self) -> std::ops::Range<usize> {
        0..(self.in_use + 1).min(self.bins.len())
    }

    /// The unplaced item with the fewest bins it may join (the first in the model's order
    /// on a tie); Some(None) when one has none, None when the budget ran out.
    fn most_constrained(&mut self) -> Option<Option<usize>> {
        let mut best: Option<(usize, usize)> = None;
        for item in 0..self.model.items.len() {
            if self.assign[item].is_some() {
                continue;
            }
            let bound = best.map_or(usize::MAX, |b| b.1);
            let mut count = 0;
            for bin in self.candidates() {
                self.budget.spend(1)?;
                if self.may_join(item, bin) {
                    count += 1;
                    if count >= bound {
                        break;
                    }
                }
            }
            if count == 0 {
                return Some(None);
            }
            if count < bound {
                best = Some((item, count));
            }
        }
        Some(best.map(|b| b.0))
    }

    fn may_join(&self, item: usize, bin: usize) -> bool {
        let it = &self.model.items[item];
        self.model.fits(item, &self.bins[bin])
            && it.blocked.binary_search(&(bin as u32)).is_err()
            && !(it.conflicts.iter()).any(|&c| self.assign[c as usize] == Some(bin as u32))
    }

    /// Whether the rules and the declared rps of the unplaced items can still fit the room
    /// the bins have left.
    fn room_left(&self) -> bool {
        let m = self.model;
        let unplaced = (0..m.items.len()).filter(|&i| self.assign[i].is_none());
        let (rules, rps) = unplaced.fold((0u64, 0u64), |(r, q), i| {
            let it = &m.items[i];
            (r + u64::from(it.rules), q + it.rps.unwrap_or(0))
        });
        let free_rules: u64 = (self.bins.iter())
            .map(|b| u64::from(m.quotas.headroom(b.rules)))
            .sum();
        let free_rps: u64 = (self.bins.iter())
            .map(|b| m.rps_budget.saturating_sub(b.rps))
            .sum();
        rules <= free_rules && rps <= free_rps
    }

    fn put(&mut self, item: usize, bin: usize) {
        self.bins[bin].add(&self.model.items[item]);
        self.assign[item] = Some(bin as u32);
        if bin == self.in_use {
            self.in_use += 1;
        }
    }

    fn take(&mut self, item: usize, bin: usize) {
        self.bins[bin].remove(&self.model.items[item]);
        self.assign[item] = None;
        // Bins open in order, so the one emptied here is the last one opened.
        if bin + 1 == self.in_use && bin >= self.model.bins.len() && self.bins[bin].items == 0 {
            self.in_use -= 1;
        }
    }
}
