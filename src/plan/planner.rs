//! The planner's state: what each group holds so far, kept so that "does this app fit?"
//! costs no scan of its rules, and whether an app fits a group by each rule of room (see
//! `passes`); and [`Occupancy`], the same questions asked of a plan after planning.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::input::app::{App, AppId, Backend, MatchKind, PathMatch};
use crate::input::config::Config;
use crate::input::quotas::Quotas;
use crate::plan::{NoRoom, Plan, placement, policies, rules_needed};
use latgen_sim::platform;

/// What a group holds so far, kept so that "does this app fit?" costs no scan of its rules.
#[derive(Debug, Default, Clone)]
pub(super) struct GroupState {
    pub(super) rules: u32,
    pub(super) backends: BTreeMap<Backend, u32>,
    pub(super) isolated: Option<AppId>,
    /// The declared peaks of its apps, summed.
    pub(super) rps: u64,
    /// The part of `rps` that apps over a service's whole budget on their own declare.
    pub(super) rps_alone_over: u64,
    /// PathPrefix values in the group and their app, for overlap look-ups.
    pub(super) prefixes: BTreeMap<String, AppId>,
    /// Exact values in the group and their app.
    pub(super) exacts: BTreeMap<String, AppId>,
    pub(super) apps: Vec<AppId>,
    /// Bytes the apps' auth policy statements take, with a comma each.
    pub(super) policy_bytes: usize,
}

/// Whether a placement is new or the lock's. A locked one may keep a pair of apps whose
/// paths overlap (see [`NoRoom::Overlap`]), since it was valid when it was written and
/// moving it is a rollout; and an app over a service's whole budget on its own (see
/// [`Planner::fits_keeping`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Placing {
    New,
    Locked,
}

/// The groups as planning fills them.
#[derive(Clone)]
pub(super) struct Planner<'a> {
    pub(super) apps: &'a [App],
    pub(super) config: &'a Config,
    /// Bytes each app's auth policy statements take in a group, by app index; empty when
    /// auth is off.
    pub(super) auth_bytes: Vec<usize>,
    /// Those statements, by app index, for the groups' policies; shared, as trial
    /// placements copy the planner.
    pub(super) statements: Arc<Vec<Vec<String>>>,
    pub(super) groups: BTreeMap<u32, GroupState>,
    /// Groups with at least one free rule, the only ones first-fit needs to look at, by the
    /// rules they hold: an app then looks only at groups with room for its rules, not at
    /// the many left with a rule or two free.
    pub(super) open: BTreeMap<u32, BTreeSet<u32>>,
    /// Unused numbers below the highest group in use (emptied groups), reused first.
    pub(super) gaps: BTreeSet<u32>,
    pub(super) highest: u32,
}

impl<'a> Planner<'a> {
    pub(super) fn fits(&self, number: u32, id: AppId) -> Result<(), NoRoom> {
        self.fits_keeping(number, id, Placing::New)
    }

    pub(super) fn fits_keeping(
        &self,
        number: u32,
        id: AppId,
        placing: Placing,
    ) -> Result<(), NoRoom> {
        let app = &self.apps[id];
        let Some(g) = self.groups.get(&number) else {
            return Ok(());
        };
        let quotas = &self.config.quotas;
        let need = rules_needed(app, self.config);
        if !quotas.rules_fit(g.rules, need) {
            return Err(NoRoom::Rules {
                have: g.rules,
                need,
                cap: quotas.rules_per_group(),
            });
        }
        // A canary's Service is a target group of its own.
        let new = app
            .backends()
            .filter(|b| !g.backends.contains_key(b))
            .count();
        if !quotas.target_groups_fit(g.backends.len() + new) {
            return Err(NoRoom::Backends {
                have: g.backends.len(),
                cap: quotas.target_groups_per_service,
            });
        }
        if app.isolate
            && let Some(other) = g.isolated
        {
            return Err(NoRoom::Isolated { other });
        }
        if let Some(rps) = app.peak_rps {
            // An app over the budget on its own overloads any service it is in: a group it
            // is locked in keeps it (a move costs a rollout and a service and only takes
            // the overload elsewhere; `app-over-budget` says what helps), and the others
            // locked there are judged without it, whatever order they are placed in. A new
            // placement gives it a group of its own, like any app that takes a group's
            // whole budget, and no app that declares a peak joins it there.
            let budget = self.config.throughput.rps_per_service;
            let locked = placing == Placing::Locked;
            let have = if locked {
                g.rps - g.rps_alone_over
            } else {
                g.rps
            };
            if !(locked && rps > budget) && have + rps > budget {
                return Err(NoRoom::Rps { have, budget });
            }
        }
        if let Some(&need) = self.auth_bytes.get(id.index()) {
            let cap = policies::POLICY_MAX_BYTES;
            if !Quotas::policy_fits(policies::policy_bytes(g.policy_bytes + need)) {
                return Err(NoRoom::AuthPolicy {
                    have: policies::policy_bytes(g.policy_bytes),
                    need,
                    cap,
                });
            }
        }
        if let Some(why) = self
            .path_matches(app)
            .find_map(|p| clash(g, p, id, placing))
        {
            return Err(why);
        }
        Ok(())
    }

    pub(super) fn place(&mut self, number: u32, id: AppId) {
        let app = &self.apps[id];
        let paths: Vec<(MatchKind, String)> = self
            .path_matches(app)
            .map(|p| (p.kind, p.value.clone()))
            .collect();
        let g = self.groups.entry(number).or_default();
        let held = g.rules;
        g.rules += rules_needed(app, self.config);
        for backend in app.backends() {
            *g.backends.entry(backend).or_default() += 1;
        }
        if app.isolate {
            g.isolated = Some(id);
        }
        let rps = app.peak_rps.unwrap_or(0);
        g.rps += rps;
        if rps > self.config.throughput.rps_per_service {
            g.rps_alone_over += rps;
        }
        g.policy_bytes += self.auth_bytes.get(id.index()).copied().unwrap_or(0);
        for (kind, path) in paths {
            match kind {
                MatchKind::Prefix => g.prefixes.insert(path, id),
                MatchKind::Exact => g.exacts.insert(path, id),
            };
        }
        g.apps.push(id);
        if number > self.highest {
            self.gaps.extend(self.highest + 1..number);
            self.highest = number;
        }
        self.gaps.remove(&number);
        let rules = g.rules;
        if let Some(level) = self.open.get_mut(&held) {
            level.remove(&number);
            if level.is_empty() {
                self.open.remove(&held);
            }
        }
        if self.config.quotas.headroom(rules) > 0 {
            self.open.entry(rules).or_default().insert(number);
        }
    }

    /// The app's paths that must not overlap another app's in its group: all of them when
    /// Lattice matches paths, none when it matches the header Kong sets (one value per app).
    pub(super) fn path_matches<'b>(&self, app: &'b App) -> impl Iterator<Item = &'b PathMatch> {
        let header = self.config.header_dispatch();
        app.paths.iter().filter(move |_| !header)
    }

    /// The number a new group gets: an emptied group's first, else the next one.
    pub(super) fn next_new(&self) -> u32 {
        self.gaps.first().copied().unwrap_or(self.highest + 1)
    }

    /// The lowest-numbered group with room: open groups in order, then the lowest number
    /// not in use (an emptied group's, or the next new one).
    pub(super) fn first_fit(&self, id: AppId) -> u32 {
        // Only groups that hold few enough rules for the app's can fit it: each such level's
        // lowest that fits, below the best found so far, is the answer if any is.
        let need = rules_needed(&self.apps[id], self.config);
        let most = self.config.quotas.rules_per_group().saturating_sub(need);
        let mut best = self.next_new();
        for numbers in self.open.range(..=most).map(|(_, numbers)| numbers) {
            if let Some(n) = (numbers.range(..best).copied()).find(|&n| self.fits(n, id).is_ok()) {
                best = n;
            }
        }
        best
    }
}

/// The prefixes segment-wise above `path`, nearest first, `/` last: `/shop/cart` lies under
/// `/shop` and `/`.
pub(crate) fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    let mut cut = Some(path.len());
    std::iter::from_fn(move || {
        let i = path[..cut?].rfind('/')?;
        cut = (i > 0).then_some(i);
        Some(if i == 0 { "/" } else { &path[..i] })
    })
    .filter(move |a| *a != path)
}

/// Another app's prefix that nests with `path` (under or over it), if any.
fn nested_with(
    prefixes: &BTreeMap<String, AppId>,
    path: &str,
    me: AppId,
) -> Option<(String, AppId)> {
    for ancestor in ancestors(path) {
        if let Some(&other) = prefixes.get(ancestor)
            && other != me
        {
            return Some((ancestor.to_string(), other));
        }
    }
    // Prefixes below `path`: those starting with `path/` (every path for `/`).
    let below = if path == "/" {
        "/".to_string()
    } else {
        format!("{path}/")
    };
    prefixes
        .range(below.clone()..)
        .take_while(|(p, _)| p.starts_with(&below))
        .find(|(p, other)| **other != me && platform::nests_under(p, path))
        .map(|(p, &other)| (p.clone(), other))
}

/// Why app `id`'s path `p` cannot join group `g`: another app's prefix nests with it, or
/// (unless a locked placement keeps them) another app's path overlaps it.
fn clash(g: &GroupState, p: &PathMatch, id: AppId, placing: Placing) -> Option<NoRoom> {
    let path = p.value.clone();
    if p.kind == MatchKind::Prefix
        && let Some((other_path, other)) = nested_with(&g.prefixes, &p.value, id)
    {
        return Some(NoRoom::Nested {
            path,
            other_path,
            other,
        });
    }
    if placing == Placing::Locked {
        return None;
    }
    let (other_path, other) = overlapping(g, p.kind, &p.value, id)?;
    Some(NoRoom::Overlap {
        path,
        other_path,
        other,
    })
}

/// Another app's path in group `g` that one request could match together with `path` (of
/// kind `kind`), as [`platform::lattice_matches_overlap`] says. A group holds at most 16
/// paths (the CRD's rules; under header dispatch none are kept), so they are scanned.
fn overlapping(g: &GroupState, kind: MatchKind, path: &str, me: AppId) -> Option<(String, AppId)> {
    let prefixes = g.prefixes.iter().map(|(p, &a)| (MatchKind::Prefix, p, a));
    let exacts = g.exacts.iter().map(|(p, &a)| (MatchKind::Exact, p, a));
    prefixes
        .chain(exacts)
        .find(|&(k, p, other)| {
            other != me && platform::lattice_matches_overlap((kind, path), (k, p))
        })
        .map(|(_, p, other)| (p.clone(), other))
}

impl<'a> Planner<'a> {
    pub(super) fn new(apps: &'a [App], config: &'a Config) -> Self {
        let statements = group_statements(apps, config);
        Planner {
            apps,
            config,
            auth_bytes: statements
                .iter()
                .map(|s| policies::statements_bytes(s))
                .collect(),
            statements: Arc::new(statements),
            groups: BTreeMap::new(),
            open: BTreeMap::new(),
            gaps: BTreeSet::new(),
            highest: 0,
        }
    }
}

/// Each app's auth statements as a shared group holds them, made once: the planner sizes
/// groups by them and the groups' policies are made of them. Empty when auth is off.
fn group_statements(apps: &[App], config: &Config) -> Vec<Vec<String>> {
    use rayon::prelude::*;
    if !config.auth.is_on() {
        return Vec::new();
    }
    let header = config
        .header_dispatch()
        .then_some(config.lattice.dispatch_header.as_str());
    (apps.par_iter().with_max_len(crate::diag::PIECE))
        .map(|app| policies::app_statements(app, config, header))
        .collect()
}

/// Groups as a plan fills them, for questions asked after planning: does this app fit
/// that group, and where would first-fit put it.
pub(crate) struct Occupancy<'a> {
    planner: Planner<'a>,
}

impl<'a> Occupancy<'a> {
    /// The groups of `plan`, or only those for which `keep` says so.
    pub fn of(
        plan: &Plan,
        apps: &'a [App],
        config: &'a Config,
        keep: impl Fn(u32) -> bool,
    ) -> Self {
        let mut planner = Planner::new(apps, config);
        for g in plan.groups.iter().filter(|g| keep(g.number)) {
            for id in g.members() {
                planner.place(g.number, id);
            }
        }
        Occupancy { planner }
    }

    /// None when `app` fits group `number`; otherwise why not.
    pub fn no_room(&self, app: AppId, number: u32) -> Option<NoRoom> {
        self.planner.fits(number, app).err()
    }

    /// Places `batch` as one batch (see `placement`) and returns where each app went; None,
    /// placing nothing, when `new` keeps to the groups in use and they have no room for it.
    pub fn place_batch(
        &mut self,
        batch: &[AppId],
        new: placement::NewGroups,
        budget: &mut placement::Budget,
    ) -> Option<Vec<(AppId, u32)>> {
        self.planner.place_batch(batch, new, budget)
    }

    /// The lowest-numbered group in use with room for `app`, if any.
    pub fn first_with_room(&self, app: AppId) -> Option<u32> {
        let n = self.planner.first_fit(app);
        self.planner.groups.contains_key(&n).then_some(n)
    }

    /// The number a new group would get: an emptied group's first, else the next one.
    pub fn next_new_group(&self) -> u32 {
        self.planner.next_new()
    }

    /// Whether group `number` is in use.
    pub fn in_use(&self, number: u32) -> bool {
        self.planner.groups.contains_key(&number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::app::MatchKind::Prefix;

    /// First-fit by the rules each group holds finds the group a scan of every group in
    /// number order finds: groups left with a rule or two free are passed over only by the
    /// apps that need more, and the lowest-numbered group that fits wins across levels
    /// (apps with paths nested in another's fail to fit for a reason of their own).
    #[test]
    fn first_fit_by_rules_held_is_a_scan_of_every_group() {
        let config = Config::default();
        let apps: Vec<App> = (0..300)
            .map(|i| {
                let mut paths: Vec<String> = (0..1 + i % 3).map(|k| format!("/a{i}/{k}")).collect();
                if i % 4 == 0 {
                    paths.push(format!("/shared{}", "/x".repeat(i % 3)));
                }
                let paths: Vec<(MatchKind, &str)> =
                    paths.iter().map(|p| (Prefix, p.as_str())).collect();
                App::sample(&format!("app{i}"), &paths)
            })
            .collect();
        let mut planner = Planner::new(&apps, &config);
        let mut skipped = 0;
        for (i, app) in apps.iter().enumerate() {
            let id = AppId::new(i);
            let free = planner.next_new();
            let scan = (planner.groups.keys().copied())
                .filter(|&n| n < free)
                .find(|&n| planner.fits(n, id).is_ok())
                .unwrap_or(free);
            assert_eq!(planner.first_fit(id), scan, "app {i}");
            let need = rules_needed(app, &config);
            skipped += (planner.groups.iter())
                .filter(|&(&n, g)| n < scan && !config.quotas.rules_fit(g.rules, need))
                .count();
            // Filled unevenly: every fifth app opens a group of its own.
            let n = if i % 5 == 0 { free } else { scan };
            planner.place(n, id);
        }
        assert!(
            skipped > 0,
            "some app passes over a group without room for its rules"
        );
    }
}
