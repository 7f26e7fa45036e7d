//! The batch as the search sees it: each app's demands in small numbers, the apps it may not
//! share a group with, and the groups in use with what they hold. Built once per batch, in
//! O(n log n) over the paths, so that a question "does this app fit that group?" costs a
//! few comparisons and no look-up of a path.

use std::collections::HashMap;

use rayon::slice::ParallelSliceMut;

use crate::input::app::{AppId, Backend, MatchKind};
use crate::input::quotas::Quotas;
use crate::plan::{Planner, policies, rules_needed};

/// One app of the batch.
#[derive(Debug)]
pub(super) struct Item {
    pub id: AppId,
    pub rules: u32,
    /// Its target groups, interned ([`Model::backends`]).
    pub backends: Vec<u32>,
    pub isolate: bool,
    pub rps: Option<u64>,
    /// Bytes its auth policy statements take; 0 when auth is off.
    pub policy: usize,
    /// Items (by index) one request can reach together with this one.
    pub conflicts: Vec<u32>,
    /// Groups in use (by index into [`Model::bins`]) holding such an app.
    pub blocked: Vec<u32>,
}

/// What a group holds: the same sums the planner keeps.
#[derive(Debug, Clone, Default)]
pub(super) struct Bin {
    pub rules: u32,
    /// Target groups (interned) and how many apps of the bin route to each.
    pub backends: Vec<(u32, u32)>,
    pub isolated: bool,
    pub rps: u64,
    pub policy: usize,
    pub items: u32,
}

pub(super) struct Model {
    /// The batch, most constrained first (the order first-fit decreasing places them in).
    pub items: Vec<Item>,
    /// The groups in use, in number order, as the batch finds them.
    pub bins: Vec<Bin>,
    pub numbers: Vec<u32>,
    pub quotas: Quotas,
    pub rps_budget: u64,
    pub auth: bool,
    /// The longest chain of items one request can reach all of: no two share a group.
    pub chain: usize,
    /// Distinct target groups of the bins and the items together.
    pub backends: usize,
}

/// Who declared a path: an item of the batch, or an app in a group in use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Owner {
    Item(u32),
    Group(u32, AppId),
}

impl Model {
    pub fn new(planner: &Planner, batch: &[AppId]) -> Model {
        let apps = planner.apps;
        // Numbered in the order first met, so a hash map gives the same numbers as any map
        // (none is read in its own order); at 100,000 apps an ordered map's comparisons of
        // namespace and name took a tenth of a second.
        let mut interned: HashMap<Backend, u32, latgen_sim::routing::Hasher> = HashMap::default();
        let mut intern = |b: Backend| {
            let next = interned.len() as u32;
            *interned.entry(b).or_insert(next)
        };
        let numbers: Vec<u32> = planner.groups.keys().copied().collect();
        // An app over the budget on its own fills a group, as the planner counts it: one of
        // its own, which no other app that declares a peak joins.
        let rps_budget = planner.config.throughput.rps_per_service;
        let bins: Vec<Bin> = (planner.groups.values())
            .map(|g| Bin {
                rules: g.rules,
                backends: g
                    .backends
                    .iter()
                    .map(|(b, &n)| (intern(b.clone()), n))
                    .collect(),
                isolated: g.isolated.is_some(),
                rps: g.rps.min(rps_budget),
                policy: g.policy_bytes,
                items: 0,
            })
            .map(sorted)
            .collect();
        let items: Vec<Item> = (batch.iter())
            .map(|&id| {
                let app = &apps[id];
                let mut backends: Vec<u32> = app.backends().map(&mut intern).collect();
                backends.sort_unstable();
                backends.dedup();
                Item {
                    id,
                    rules: rules_needed(app, planner.config),
                    backends,
                    isolate: app.isolate,
                    rps: app.peak_rps.map(|r| r.min(rps_budget)),
                    policy: planner.auth_bytes.get(id.index()).copied().unwrap_or(0),
                    conflicts: Vec::new(),
                    blocked: Vec::new(),
                }
            })
            .collect();
        let config = planner.config;
        let mut model = Model {
            items,
            bins,
            numbers,
            quotas: config.quotas.clone(),
            rps_budget,
            auth: !planner.auth_bytes.is_empty(),
            chain: 0,
            backends: interned.len(),
        };
        model.chain = model.link(planner);
        model.sort_most_constrained_first(planner);
        model
    }

    /// Fills each item's conflicts and blocked groups from the paths, and returns the longest
    /// chain of items. Sorted by path, every path a prefix string-matches follows it, and the
    /// prefixes a path starts with are on a stack: a sweep finds every pair one request can
    /// reach (as [`latgen_sim::platform::lattice_matches_overlap`] says) without comparing
    /// all pairs.
    fn link(&mut self, planner: &Planner) -> usize {
        // Under header dispatch paths never keep apps apart (the planner keeps none).
        if planner.config.header_dispatch() {
            return usize::from(!self.items.is_empty());
        }
        let mut entries: Vec<(&str, MatchKind, Owner)> = Vec::new();
        for (i, g) in planner.groups.values().enumerate() {
            let owner = |app: AppId| Owner::Group(i as u32, app);
            let prefixes =
                (g.prefixes.iter()).map(|(p, &a)| (p.as_str(), MatchKind::Prefix, owner(a)));
            let exacts = (g.exacts.iter()).map(|(p, &a)| (p.as_str(), MatchKind::Exact, owner(a)));
            entries.extend(prefixes.chain(exacts));
        }
        for (i, item) in self.items.iter().enumerate() {
            let paths = planner.apps[item.id].paths.iter();
            entries.extend(paths.map(|p| (p.value.as_str(), p.kind, Owner::Item(i as u32))));
        }
        // Prefixes before Exact paths of the same value, so that an Exact path finds them
        // on the stack.
        // Stable and on all cores (the plan otherwise runs on one): 200,000 entries at
        // 100,000 apps.
        entries.par_sort_by(|a, b| {
            (a.0, a.1 != MatchKind::Prefix, a.2).cmp(&(b.0, b.1 != MatchKind::Prefix, b.2))
        });
        let mut stack: Vec<usize> = Vec::new();
        let mut run = 0;
        let mut chain = usize::from(!self.items.is_empty());
        for (i, &(path, kind, owner)) in entries.iter().enumerate() {
            if i > 0 && entries[i - 1].0 != path {
                run = i;
            }
            while stack
                .last()
                .is_some_and(|&top| !path.starts_with(entries[top].0))
            {
                stack.pop();
            }
            let equal_exacts = (run..i).filter(|&j| entries[j].1 == MatchKind::Exact);
            for j in stack.iter().copied().chain(equal_exacts) {
                self.pair(entries[j].2, owner);
            }
            if let Owner::Item(_) = owner {
                let mut above: Vec<u32> = (stack.iter())
                    .filter_map(|&j| match entries[j].2 {
                        Owner::Item(x) => Some(x),
                        Owner::Group(..) => None,
                    })
                    .collect();
                above.sort_unstable();
                above.dedup();
                chain = chain.max(above.iter().filter(|&&x| Owner::Item(x) != owner).count() + 1);
            }
            if kind == MatchKind::Prefix {
                stack.push(i);
            }
        }
        for item in &mut self.items {
            item.conflicts.sort_unstable();
            item.conflicts.dedup();
            item.blocked.sort_unstable();
            item.blocked.dedup();
        }
        chain
    }

    /// Records that one request can reach both owners' paths.
    fn pair(&mut self, a: Owner, b: Owner) {
        match (a, b) {
            (Owner::Item(x), Owner::Item(y)) if x != y => {
                self.items[x as usize].conflicts.push(y);
                self.items[y as usize].conflicts.push(x);
            }
            (Owner::Item(x), Owner::Group(g, app)) | (Owner::Group(g, app), Owner::Item(x))
                if self.items[x as usize].id != app =>
            {
                self.items[x as usize].blocked.push(g);
            }
            _ => {}
        }
    }

    /// Orders the items most constrained first: those that may share a group with the fewest
    /// others (overlapping paths, isolation), then the largest share of a group they take by
    /// their tightest limit (rules, target groups, rps or policy bytes), then by name. The
    /// conflict lists are renumbered to match.
    fn sort_most_constrained_first(&mut self, planner: &Planner) {
        let isolated = self.items.iter().filter(|i| i.isolate).count();
        let keys: Vec<(std::cmp::Reverse<(usize, u64)>, &str)> = (self.items.iter())
            .map(|item| {
                let others = if item.isolate { isolated - 1 } else { 0 };
                let degree = item.conflicts.len() + item.blocked.len() + others;
                let name = planner.apps[item.id].name.as_str();
                (std::cmp::Reverse((degree, self.share(item))), name)
            })
            .collect();
        let mut order: Vec<usize> = (0..self.items.len()).collect();
        order.par_sort_by(|&a, &b| keys[a].cmp(&keys[b]));
        let mut new_index = vec![0u32; order.len()];
        for (new, &old) in order.iter().enumerate() {
            new_index[old] = new as u32;
        }
        let mut old: Vec<Option<Item>> = std::mem::take(&mut self.items)
            .into_iter()
            .map(Some)
            .collect();
        self.items = (order.iter())
            .map(|&o| old[o].take().expect("each item once"))
            .collect();
        for item in &mut self.items {
            for c in &mut item.conflicts {
                *c = new_index[*c as usize];
            }
            item.conflicts.sort_unstable();
        }
    }

    /// The largest share of an empty group `item` takes by any one limit, in millionths.
    fn share(&self, item: &Item) -> u64 {
        let part = |need: u64, cap: u64| need.saturating_mul(1_000_000) / cap.max(1);
        [
            part(item.rules.into(), self.quotas.rules_per_group().into()),
            part(
                item.backends.len() as u64,
                self.quotas.target_groups() as u64,
            ),
            part(item.rps.unwrap_or(0), self.rps_budget),
            part(item.policy as u64, policies::statements_budget() as u64),
        ]
        .into_iter()
        .max()
        .unwrap_or(0)
    }

    /// The fewest groups the bins and the items can end in: each limit's total over its
    /// capacity, the isolated apps, the longest chain, and the groups already in use.
    pub fn lower_bound(&self) -> usize {
        let per = |total: u64, cap: u64| total.div_ceil(cap.max(1)) as usize;
        let rules = self.bins.iter().map(|b| u64::from(b.rules)).sum::<u64>()
            + self.items.iter().map(|i| u64::from(i.rules)).sum::<u64>();
        let rps = self.bins.iter().map(|b| b.rps).sum::<u64>()
            + self.items.iter().filter_map(|i| i.rps).sum::<u64>();
        let isolated = self.bins.iter().filter(|b| b.isolated).count()
            + self.items.iter().filter(|i| i.isolate).count();
        let policy = self.bins.iter().map(|b| b.policy).sum::<usize>()
            + self.items.iter().map(|i| i.policy).sum::<usize>();
        let policy = if self.auth {
            per(policy as u64, policies::statements_budget() as u64)
        } else {
            0
        };
        [
            self.bins.len(),
            self.quotas.groups_for_rules(rules),
            per(rps, self.rps_budget),
            isolated,
            per(self.backends as u64, self.quotas.target_groups() as u64),
            policy,
            self.chain,
        ]
        .into_iter()
        .max()
        .unwrap_or(0)
    }

    /// Whether item `i` fits `bin` as it stands (its conflicts checked by the caller).
    pub fn fits(&self, i: usize, bin: &Bin) -> bool {
        let item = &self.items[i];
        if !self.quotas.rules_fit(bin.rules, item.rules) {
            return false;
        }
        let new = (item.backends.iter())
            .filter(|b| bin.backends.binary_search_by_key(b, |e| &e.0).is_err())
            .count();
        if !self.quotas.target_groups_fit(bin.backends.len() + new) {
            return false;
        }
        if item.isolate && bin.isolated {
            return false;
        }
        if item.rps.is_some_and(|rps| bin.rps + rps > self.rps_budget) {
            return false;
        }
        !self.auth || Quotas::policy_fits(policies::policy_bytes(bin.policy + item.policy))
    }
}

impl Bin {
    /// Adds item `item`.
    pub fn add(&mut self, item: &Item) {
        self.rules += item.rules;
        for &b in &item.backends {
            match self.backends.binary_search_by_key(&b, |e| e.0) {
                Ok(k) => self.backends[k].1 += 1,
                Err(k) => self.backends.insert(k, (b, 1)),
            }
        }
        self.isolated |= item.isolate;
        self.rps += item.rps.unwrap_or(0);
        self.policy += item.policy;
        self.items += 1;
    }

    /// Takes item `item` out again.
    pub fn remove(&mut self, item: &Item) {
        self.rules -= item.rules;
        for &b in &item.backends {
            if let Ok(k) = self.backends.binary_search_by_key(&b, |e| e.0) {
                self.backends[k].1 -= 1;
                if self.backends[k].1 == 0 {
                    self.backends.remove(k);
                }
            }
        }
        // A bin holds at most one isolated app, so taking one out leaves none.
        if item.isolate {
            self.isolated = false;
        }
        self.rps -= item.rps.unwrap_or(0);
        self.policy -= item.policy;
        self.items -= 1;
    }
}

fn sorted(mut bin: Bin) -> Bin {
    bin.backends.sort_unstable();
    bin
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::app::App;
    use crate::input::config::Config;
    use latgen_sim::platform::lattice_matches_overlap;

    fn app(name: &str, paths: &[(MatchKind, &str)]) -> App {
        App::sample(name, paths)
    }

    /// The sweep finds exactly the pairs a comparison of every two paths finds: string
    /// prefixes, nesting, an Exact path under a prefix or equal to another, `/` over all;
    /// and not `/shopping` over the Exact `/shop`, nor two different Exact paths.
    #[test]
    fn the_sweep_finds_every_pair_one_request_reaches() {
        use MatchKind::{Exact, Prefix};
        let apps = vec![
            app("a", &[(Prefix, "/shop")]),
            app("b", &[(Prefix, "/shopping"), (Exact, "/blog")]),
            app("c", &[(Exact, "/shop")]),
            app("d", &[(Prefix, "/shop/cart"), (Exact, "/blogs")]),
            app("e", &[(Exact, "/shopping/x")]),
            app("f", &[(Prefix, "/help")]),
            app("g", &[(Exact, "/blog")]),
            app("h", &[(Prefix, "/")]),
            app("i", &[(Prefix, "/b")]),
        ];
        let config = Config::default();
        let (first, rest) = (&apps[..2], &apps[2..]);
        // Two apps in a group in use, the rest a batch.
        let mut planner = Planner::new(&apps, &config);
        for k in 0..first.len() {
            planner.place(1, AppId::new(k));
        }
        let batch: Vec<AppId> = (first.len()..apps.len()).map(AppId::new).collect();
        let model = Model::new(&planner, &batch);
        let clash = |x: &App, y: &App| {
            (x.paths.iter()).any(|p| {
                (y.paths.iter())
                    .any(|q| lattice_matches_overlap((p.kind, &p.value), (q.kind, &q.value)))
            })
        };
        for (i, item) in model.items.iter().enumerate() {
            let me = &apps[item.id];
            let want: Vec<&str> = (rest.iter())
                .filter(|o| o.name != me.name && clash(me, o))
                .map(|o| o.name.as_str())
                .collect();
            let mut got: Vec<&str> = (item.conflicts.iter())
                .map(|&c| apps[model.items[c as usize].id].name.as_str())
                .collect();
            got.sort();
            assert_eq!(got, want, "conflicts of {} (item {i})", me.name);
            let blocked = first.iter().any(|o| clash(me, o));
            assert_eq!(
                item.blocked == [0],
                blocked,
                "{} against the group in use",
                me.name
            );
        }
        // `/`, `/b` and the Exact `/blog` (or `/blogs`): three apps of the batch one
        // request reaches all of (`/shop` and `/shopping` are in the group in use).
        assert_eq!(model.chain, 3);
    }
}
