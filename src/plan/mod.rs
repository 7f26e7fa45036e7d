//! Layer 3, plan (stage 3): which shared group each path-routed app is in, and the order of
//! every route's rules.
//!
//! Apps keep the group the lock gives them, and an app in the middle of a move is in both its
//! groups until the move ends; a `group:` pin places a new app; other new apps go, as one
//! batch in the order that needs the fewest groups (`placement`), each to the lowest-numbered
//! group with room (an emptied group's number counts as a group with room, so it is reused
//! first). Room means: rules within the quota,
//! distinct backends within the target-group quota, no second isolated app, the declared rps
//! within the per-service budget, and no path of another app that one request could match
//! together with one of this app's (Lattice compares paths as strings: `/shop` and
//! `/shopping`, `/shop` and `/shop/cart`), so that every group routes right whatever order
//! the controller leaves its rules in. A locked placement is kept even where it breaks that
//! last rule (it was valid when it was written); `check` reports such a pair.

pub(crate) mod auth;
pub(crate) mod lattice_service;
pub(crate) mod observed;
pub(crate) mod placement;
pub(crate) mod prepared;
pub(crate) mod previews;
pub(crate) mod rebalance;
pub mod services;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::config::Config;
use crate::input::lock::{Lock, LockState, Move, MoveStep};
use crate::input::model::{App, AppId, Backend, MatchKind, PathMatch, Pos};
use crate::input::platform;
use crate::input::quotas::Quotas;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rule {
    pub kind: MatchKind,
    pub path: String,
    /// The owning app.
    pub app: AppId,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Group {
    pub number: u32,
    /// Apps in name order, by [`AppId::index`]; [`Group::members`] gives their ids.
    pub apps: Vec<usize>,
    /// Rules in Lattice evaluation order.
    pub rules: Vec<Rule>,
}

impl Group {
    /// The apps in the group, in name order.
    pub fn members(&self) -> impl Iterator<Item = AppId> + '_ {
        self.apps.iter().map(|&i| AppId::new(i))
    }
}

/// A host-routed app, with a Lattice route and service of its own.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Dedicated {
    pub app: AppId,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    pub groups: Vec<Group>,
    pub dedicated: Vec<Dedicated>,
    /// What the lock file records: path-routed app → group, and the moves in flight.
    pub lock: LockState,
    /// Path-routed app → the group its Kong side points at.
    pub kong_group: BTreeMap<AppId, u32>,
    /// Locked apps that no longer fit the group the lock gives them, placed anew.
    pub outgrown: Vec<Outgrown>,
    /// The previews and their preview groups.
    pub previews: previews::Previews,
    /// What was decided for each Lattice service: the groups' (in number order), then the
    /// host-routed apps' (see [`lattice_service`]).
    pub services: Vec<lattice_service::LatticeService>,
    /// Each app's own rules, one per path in evaluation order, by [`AppId::index`]: what
    /// its Kong routes match ([`Plan::rules_of`]).
    pub app_rules: Vec<Vec<Rule>>,
}

/// A locked app that no longer fits its group (it grew, or the group's limits shrank),
/// placed anew: a move the plan decides, shipped like any other (`render --base`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Outgrown {
    pub app: AppId,
    /// The group the lock gave it.
    pub from: u32,
    /// The group it goes to.
    pub to: u32,
    /// Why it no longer fits `from`.
    pub why: NoRoom,
}

/// How many rules of a group served an app in the output as last rendered. When a group no
/// longer holds its locked apps, this tells which of them grew: that app leaves, not the
/// one that comes last by name.
pub(crate) trait Previous {
    /// The rules of group `number` that served `app`; None when unknown.
    fn rules(&self, number: u32, app: &App) -> Option<u32>;
}

/// No output to ask: the locked apps of a group that do not fit are the last by name.
pub(crate) struct NoPrevious;

impl Previous for NoPrevious {
    fn rules(&self, _: u32, _: &App) -> Option<u32> {
        None
    }
}

impl Plan {
    /// Lattice services this plan provisions (each is billed per hour).
    pub fn service_count(&self) -> usize {
        self.groups.len() + self.dedicated.len()
    }

    /// The group that serves a path-routed app: where its bridge and rewrite host point.
    pub fn serving_group(&self, app: AppId) -> Option<u32> {
        self.kong_group.get(&app).copied()
    }
}

/// Lattice evaluation order: longer paths first; on equal length Exact before PathPrefix;
/// then lexicographic, so the order never depends on input order.
pub(crate) fn sort_rules(rules: &mut [Rule]) {
    rules.sort_by(|a, b| {
        b.path
            .len()
            .cmp(&a.path.len())
            .then(a.kind.cmp(&b.kind))
            .then_with(|| a.path.cmp(&b.path))
            .then(a.app.cmp(&b.app))
    });
}

/// Rules app `app` takes in a shared group: one per path, or one in all when the group
/// dispatches on the header Kong sets.
pub(crate) fn rules_needed(app: &App, config: &Config) -> u32 {
    if config.header_dispatch() {
        1
    } else {
        app.rule_count()
    }
}

/// Whether app `app` goes into a shared group: path-routed apps do, and under header
/// dispatch host-routed apps too (a route's hostnames no longer matter to Lattice).
pub(crate) fn in_groups(app: &App, config: &Config) -> bool {
    // An adopted app keeps its own route until it is consolidated.
    app.adopted.is_none() && (app.is_path_routed() || config.header_dispatch())
}

/// The header rule of app `id` in a group under header dispatch: it matches the header
/// Kong sets to the app's name, on every path (`PathPrefix /`, as the CRD defaults it).
fn header_rule(id: AppId) -> Rule {
    Rule {
        kind: MatchKind::Prefix,
        path: "/".into(),
        app: id,
    }
}

/// The rules of app `id`, one per path, in declaration order.
fn rules_of(apps: &[App], id: AppId) -> impl Iterator<Item = Rule> + '_ {
    apps[id].paths.iter().map(move |p| Rule {
        kind: p.kind,
        path: p.value.clone(),
        app: id,
    })
}

/// The rules of one app, in evaluation order.
pub(crate) fn app_rules(apps: &[App], id: AppId) -> Vec<Rule> {
    let mut rules: Vec<Rule> = rules_of(apps, id).collect();
    sort_rules(&mut rules);
    rules
}

/// What a group holds so far, kept so that "does this app fit?" costs no scan of its rules.
#[derive(Debug, Default, Clone)]
struct GroupState {
    rules: u32,
    backends: BTreeMap<Backend, u32>,
    isolated: Option<AppId>,
    rps: u64,
    /// PathPrefix values in the group and their app, for overlap look-ups.
    prefixes: BTreeMap<String, AppId>,
    /// Exact values in the group and their app.
    exacts: BTreeMap<String, AppId>,
    apps: Vec<AppId>,
    /// Bytes the apps' auth policy statements take, with a comma each.
    policy_bytes: usize,
}

/// Where a placement that failed came from.
#[derive(Debug, Clone, Copy)]
enum Origin {
    Lock,
    Pin,
}

/// Why an app does not fit a group, with the app in the way where there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NoRoom {
    /// The group's rules and the app's would be more than a group holds.
    Rules { have: u32, need: u32, cap: u32 },
    /// The app's Service would be one target group too many.
    Backends { have: usize, cap: u32 },
    /// The app is isolated and so is `other`, already in the group.
    Isolated { other: AppId },
    /// The app's declared rps would take the group over its budget.
    Rps { have: u64, budget: u64 },
    /// The app's auth policy statements would take the group's policy over its size limit.
    AuthPolicy {
        have: usize,
        need: usize,
        cap: usize,
    },
    /// The app's prefix `path` nests with `other_path`, of `other`, already in the group.
    Nested {
        path: String,
        other_path: String,
        other: AppId,
    },
    /// One request can match both the app's `path` and `other_path`, of `other`, already
    /// in the group (string-sharing prefixes, or an Exact path under a prefix): the group
    /// would route right only in one order of its rules, which the controller does not keep.
    Overlap {
        path: String,
        other_path: String,
        other: AppId,
    },
}

/// Whether a placement may keep a pair of apps whose paths overlap (see [`NoRoom::Overlap`]):
/// a locked one may, since it was valid when it was written and moving it is a rollout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Overlaps {
    Refuse,
    Keep,
}

#[derive(Clone)]
struct Planner<'a> {
    apps: &'a [App],
    config: &'a Config,
    /// Bytes each app's auth policy statements take in a group, by app index; empty when
    /// auth is off.
    auth_bytes: Vec<usize>,
    groups: BTreeMap<u32, GroupState>,
    /// Groups with at least one free rule: the only ones first-fit needs to look at.
    open: BTreeSet<u32>,
    /// Unused numbers below the highest group in use (emptied groups), reused first.
    gaps: BTreeSet<u32>,
    highest: u32,
}

impl<'a> Planner<'a> {
    fn fits(&self, number: u32, id: AppId) -> Result<(), NoRoom> {
        self.fits_keeping(number, id, Overlaps::Refuse)
    }

    fn fits_keeping(&self, number: u32, id: AppId, overlaps: Overlaps) -> Result<(), NoRoom> {
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
            let budget = self.config.throughput.rps_per_service;
            if g.rps + rps > budget {
                return Err(NoRoom::Rps {
                    have: g.rps,
                    budget,
                });
            }
        }
        if let Some(&need) = self.auth_bytes.get(id.index()) {
            let cap = auth::POLICY_MAX_BYTES;
            if !Quotas::policy_fits(auth::policy_bytes(g.policy_bytes + need)) {
                return Err(NoRoom::AuthPolicy {
                    have: auth::policy_bytes(g.policy_bytes),
                    need,
                    cap,
                });
            }
        }
        if let Some(why) = self
            .path_matches(app)
            .find_map(|p| clash(g, p, id, overlaps))
        {
            return Err(why);
        }
        Ok(())
    }

    fn place(&mut self, number: u32, id: AppId) {
        let app = &self.apps[id];
        let paths: Vec<(MatchKind, String)> = self
            .path_matches(app)
            .map(|p| (p.kind, p.value.clone()))
            .collect();
        let g = self.groups.entry(number).or_default();
        g.rules += rules_needed(app, self.config);
        for backend in app.backends() {
            *g.backends.entry(backend).or_default() += 1;
        }
        if app.isolate {
            g.isolated = Some(id);
        }
        g.rps += app.peak_rps.unwrap_or(0);
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
        if self.config.quotas.headroom(g.rules) > 0 {
            self.open.insert(number);
        } else {
            self.open.remove(&number);
        }
    }

    /// The app's paths that must not overlap another app's in its group: all of them when
    /// Lattice matches paths, none when it matches the header Kong sets (one value per app).
    fn path_matches<'b>(&self, app: &'b App) -> impl Iterator<Item = &'b PathMatch> {
        let header = self.config.header_dispatch();
        app.paths.iter().filter(move |_| !header)
    }

    /// The number a new group gets: an emptied group's first, else the next one.
    fn next_new(&self) -> u32 {
        self.gaps.first().copied().unwrap_or(self.highest + 1)
    }

    /// The lowest-numbered group with room: open groups in order, then the lowest number
    /// not in use (an emptied group's, or the next new one).
    fn first_fit(&self, id: AppId) -> u32 {
        let free_number = self.next_new();
        self.open
            .range(..free_number)
            .copied()
            .find(|&n| self.fits(n, id).is_ok())
            .unwrap_or(free_number)
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
/// (unless `overlaps` keeps them) another app's path overlaps it.
fn clash(g: &GroupState, p: &PathMatch, id: AppId, overlaps: Overlaps) -> Option<NoRoom> {
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
    if overlaps == Overlaps::Keep {
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
    fn new(apps: &'a [App], config: &'a Config) -> Self {
        Planner {
            apps,
            config,
            auth_bytes: group_auth_bytes(apps, config),
            groups: BTreeMap::new(),
            open: BTreeSet::new(),
            gaps: BTreeSet::new(),
            highest: 0,
        }
    }
}

/// The bytes each app's auth statements take in a shared group; empty when auth is off.
fn group_auth_bytes(apps: &[App], config: &Config) -> Vec<usize> {
    use rayon::prelude::*;
    if !config.auth.is_on() {
        return Vec::new();
    }
    let header = config
        .header_dispatch()
        .then_some(config.lattice.dispatch_header.as_str());
    (apps.par_iter())
        .map(|app| auth::app_bytes(app, config, header))
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

/// The message and help for group `number`, which is not in use and is not `next`, the
/// number a new group gets. One rule for a `group:` pin and for `latgen move --group`: a
/// group is one in use or the next new one, so that numbers leave no gaps.
pub(crate) fn no_such_group(config: &Config, number: u32, next: u32) -> (String, String) {
    let name = |n| config.group_name(n);
    (
        format!(
            "{} does not exist, and a new group would be {}",
            name(number),
            name(next)
        ),
        format!("name a group in use, or {} to open a new one", name(next)),
    )
}

pub fn plan(
    apps: &[App],
    lock: &Lock,
    lock_file: &Path,
    config: &Config,
    diags: &mut Diagnostics,
) -> Plan {
    plan_with(apps, lock, lock_file, config, &NoPrevious, diags)
}

/// [`plan`], asking `rendered` which app of a group that no longer fits grew.
pub(crate) fn plan_with(
    apps: &[App],
    lock: &Lock,
    lock_file: &Path,
    config: &Config,
    rendered: &dyn Previous,
    diags: &mut Diagnostics,
) -> Plan {
    let mut planner = Planner::new(apps, config);
    let placeable = placeable_in_name_order(apps, config, diags);
    // A lock planned for the other dispatch mode holds groups whose rules are of the other
    // kind: every app is placed anew, in groups numbered after the lock's, so that the old
    // groups serve until Kong has moved off them (the rollout drops them after).
    let fresh = Lock::default();
    let switching = lock.dispatch != config.lattice.dispatch && !lock.apps.is_empty();
    let lock = if switching {
        planner.highest = highest_group(lock);
        &fresh
    } else {
        lock
    };
    // The lock first (those placements were valid when written), then the second group of
    // each move in flight, then pins of new apps (a new pin is the change, so a conflict is
    // reported at the pin), then locked apps that no longer fit their group, then other
    // new apps; each pass in name order.
    let passes = Passes {
        apps,
        lock,
        lock_file,
        config,
        rendered,
    };
    let left = passes.place_locked(&mut planner, &placeable);
    let moves = passes.place_moves(&mut planner, &placeable, &left, diags);
    if !switching {
        passes.place_pinned(&mut planner, &placeable, &moves, diags);
    }
    let outgrown = passes.place_outgrown(&mut planner, left, diags);
    passes.place_new(&mut planner, &placeable, switching);
    let mut plan = passes.assemble(planner, moves);
    plan.outgrown = outgrown;
    plan.lock.dispatch = config.lattice.dispatch;
    lattice_service::record(&mut plan, apps, config);
    plan
}

/// The highest group number a lock uses, moves included.
fn highest_group(lock: &Lock) -> u32 {
    let homes = lock.apps.values().map(|g| g.0);
    let targets = lock.moves.values().map(|m| m.0.to);
    homes.chain(targets).max().unwrap_or(0)
}

/// The path-routed apps that fit a group at all, in name order whatever order the apps
/// come in; each of the others is reported.
fn placeable_in_name_order(apps: &[App], config: &Config, diags: &mut Diagnostics) -> Vec<AppId> {
    let (source, raisable) = config.quotas.rules_per_group_source();
    let help = if raisable {
        "merge paths under a common prefix, or give the app its own `host`; or have AWS raise the \"rules per listener\" quota (Service Quotas, VPC Lattice) and set `quotas.rulesPerService` to the new value"
    } else {
        "merge paths under a common prefix, or give the app its own `host`"
    };
    let mut path_apps: Vec<AppId> = AppId::enumerate(apps)
        .filter(|(_, app)| in_groups(app, config))
        .map(|(id, _)| id)
        .collect();
    path_apps.sort_by(|&a, &b| apps[a].name.cmp(&apps[b].name));
    for app in apps.iter().filter(|app| !in_groups(app, config)) {
        check_own_policy(app, config, None, diags);
    }
    let header = config
        .header_dispatch()
        .then_some(config.lattice.dispatch_header.as_str());
    path_apps.retain(|&id| check_own_policy(&apps[id], config, header, diags));
    path_apps.retain(|&id| {
        let app = &apps[id];
        if config.quotas.rules_fit(0, rules_needed(app, config)) {
            return true;
        }
        diags.push(
            Diagnostic::error(
                Code::AppTooBig,
                format!(
                    "app `{}` has {} paths; a shared group holds at most {} rules: {source}",
                    app.name,
                    app.rule_count(),
                    config.quotas.rules_per_group(),
                ),
            )
            .at(Span::new(
                &app.file,
                app.paths[0].pos.line,
                app.paths[0].pos.column,
            ))
            .help(help),
        );
        false
    });
    path_apps
}

/// Whether app `app`'s auth statements fit a policy of their own; reported when not.
fn check_own_policy(
    app: &App,
    config: &Config,
    header: Option<&str>,
    diags: &mut Diagnostics,
) -> bool {
    if !config.auth.is_on() {
        return true;
    }
    let bytes = auth::policy_bytes(auth::app_bytes(app, config, header));
    if Quotas::policy_fits(bytes) {
        return true;
    }
    diags.push(
        Diagnostic::error(
            Code::AuthPolicyTooLarge,
            format!(
                "the auth policy that lets app `{}`'s callers in takes {bytes} bytes on its own; a Lattice auth policy takes at most {}",
                app.name,
                auth::POLICY_MAX_BYTES
            ),
        )
        .at(Span::new(&app.file, app.name_pos.line, app.name_pos.column))
        .help("list fewer callers or paths: name an account or an organization rather than each role, or merge paths under a common prefix"),
    );
    false
}

/// What the planning passes read.
struct Passes<'a> {
    apps: &'a [App],
    lock: &'a Lock,
    lock_file: &'a Path,
    config: &'a Config,
    rendered: &'a dyn Previous,
}

impl Passes<'_> {
    fn in_lock(&self, id: AppId) -> bool {
        self.lock.apps.contains_key(&self.apps[id].name)
    }

    fn at_app(&self, id: AppId) -> Span {
        let app = &self.apps[id];
        Span::new(&app.file, app.name_pos.line, app.name_pos.column)
    }

    fn at_lock(&self, pos: Pos) -> Span {
        Span::new(self.lock_file, pos.line, pos.column)
    }

    /// Pass 1: every locked app into the group the lock gives it; those that no longer fit
    /// it come back, with the group and why.
    fn place_locked(&self, planner: &mut Planner, order: &[AppId]) -> Vec<(AppId, u32, NoRoom)> {
        let mut left = Vec::new();
        for id in self.locked_order(order) {
            let (number, _) = self.lock.apps[&self.apps[id].name];
            match planner.fits_keeping(number, id, Overlaps::Keep) {
                Ok(()) => planner.place(number, id),
                Err(why) => left.push((id, number, why)),
            }
        }
        left
    }

    /// The locked apps in name order, except that in a group whose locked apps need more
    /// rules than it holds, those that need more than the output last rendered gave them
    /// come last: the app whose declaration grew is the one that leaves.
    fn locked_order(&self, order: &[AppId]) -> Vec<AppId> {
        let home = |id: AppId| self.lock.apps[&self.apps[id].name].0;
        let need = |id: AppId| rules_needed(&self.apps[id], self.config);
        let locked: Vec<AppId> = order
            .iter()
            .copied()
            .filter(|&id| self.in_lock(id))
            .collect();
        let mut demand: BTreeMap<u32, u32> = BTreeMap::new();
        for &id in &locked {
            *demand.entry(home(id)).or_default() += need(id);
        }
        let quotas = &self.config.quotas;
        let mut keyed: Vec<(bool, AppId)> = locked
            .into_iter()
            .map(|id| {
                let grew = !quotas.rules_fit(demand[&home(id)], 0)
                    && (self.rendered.rules(home(id), &self.apps[id]))
                        .is_some_and(|had| need(id) > had);
                (grew, id)
            })
            .collect();
        // Stable: name order within each kind.
        keyed.sort_by_key(|&(grew, _)| grew);
        keyed.into_iter().map(|(_, id)| id).collect()
    }

    /// Pass 2: each app in the middle of a move into the group it is moving to as well.
    /// An app that no longer fits the group it is leaving (`left`) is placed later, as
    /// one that outgrew its group: its move is not in flight any more but decided anew.
    fn place_moves(
        &self,
        planner: &mut Planner,
        order: &[AppId],
        left: &[(AppId, u32, NoRoom)],
        diags: &mut Diagnostics,
    ) -> BTreeMap<AppId, Move> {
        let mut moves = BTreeMap::new();
        let placed = |id: AppId| self.in_lock(id) && !left.iter().any(|l| l.0 == id);
        for &id in order.iter().filter(|&&id| placed(id)) {
            let Some(&(m, pos)) = self.lock.moves.get(&self.apps[id].name) else {
                continue;
            };
            match planner.fits_keeping(m.to, id, Overlaps::Keep) {
                Ok(()) => {
                    planner.place(m.to, id);
                    moves.insert(id, m);
                }
                Err(why) => diags.push(
                    self.no_room(id, m.to, &why, self.at_lock(pos), Origin::Lock)
                        .related(self.at_app(id), "the app being moved"),
                ),
            }
        }
        moves
    }

    /// Pass 3: each new app with a `group:` pin into that group. The pin of an app already
    /// placed must agree with the lock.
    fn place_pinned(
        &self,
        planner: &mut Planner,
        order: &[AppId],
        moves: &BTreeMap<AppId, Move>,
        diags: &mut Diagnostics,
    ) {
        let apps = self.apps;
        let mut pinned: Vec<(u32, Pos, AppId)> = order
            .iter()
            .filter_map(|&id| apps[id].pin.map(|(number, pos)| (number, pos, id)))
            .collect();
        // In group order (name order within a group), so that pins to the next two new
        // groups open both whatever the apps' names.
        pinned.sort_by_key(|&(number, ..)| number);
        for (number, pos, id) in pinned {
            if number == 0 {
                continue;
            }
            let at_pin = Span::new(&apps[id].file, pos.line, pos.column);
            if let Some(&(home, _)) = self.lock.apps.get(&apps[id].name) {
                let target = moves.get(&id).map(|m| m.to);
                if number != home && Some(number) != target {
                    diags.push(self.pin_conflict(id, home, number, at_pin));
                }
                continue;
            }
            if !planner.groups.contains_key(&number) && number != planner.next_new() {
                let (message, help) = no_such_group(self.config, number, planner.next_new());
                diags.push(
                    Diagnostic::error(Code::InvalidGroup, message)
                        .at(at_pin)
                        .help(help),
                );
                continue;
            }
            match planner.fits(number, id) {
                Ok(()) => planner.place(number, id),
                Err(why) => diags.push(self.no_room(id, number, &why, at_pin, Origin::Pin)),
            }
        }
    }

    fn pin_conflict(&self, id: AppId, home: u32, number: u32, at_pin: Span) -> Diagnostic {
        let name = &self.apps[id].name;
        let group = |n| self.config.group_name(n);
        Diagnostic::error(
            Code::PinConflict,
            format!("app `{name}` is in {} (latgen.lock) but pinned to {}", group(home), group(number)),
        )
        .at(at_pin)
        .help(format!("move it with `latgen move {name} --group {number}`: that keeps it reachable at every step"))
    }

    /// Pass 4: each locked app that no longer fits its group into the group its move in
    /// flight goes to when it fits there, else the lowest-numbered group with room. A
    /// placement decision like any other, told as a warning: the lock is never the way out.
    fn place_outgrown(
        &self,
        planner: &mut Planner,
        left: Vec<(AppId, u32, NoRoom)>,
        diags: &mut Diagnostics,
    ) -> Vec<Outgrown> {
        let mut outgrown = Vec::new();
        for (id, from, why) in left {
            let name = &self.apps[id].name;
            let target = (self.lock.moves.get(name).map(|(m, _)| m.to))
                .filter(|&to| planner.fits(to, id).is_ok());
            let to = target.unwrap_or_else(|| planner.first_fit(id));
            planner.place(to, id);
            let o = Outgrown {
                app: id,
                from,
                to,
                why,
            };
            diags.push(self.outgrown_finding(&o, target.is_some()));
            outgrown.push(o);
        }
        outgrown
    }

    fn outgrown_finding(&self, o: &Outgrown, was_moving: bool) -> Diagnostic {
        let app = &self.apps[o.app];
        let group = |n| self.config.group_name(n);
        let (from, to, name) = (group(o.from), group(o.to), &app.name);
        let whither = if was_moving {
            "the group its move goes to"
        } else {
            "the lowest-numbered group with room"
        };
        let mut d = Diagnostic::warning(
            Code::OutgrownGroup,
            format!(
                "app `{name}` no longer fits {from} ({}): it moves to {to}, {whither}",
                o.why.message(self.apps, o.app, &from)
            ),
        )
        .at(Span::new(&app.file, app.paths[0].pos.line, app.paths[0].pos.column))
        .help(format!(
            "nothing to edit: `latgen render --base auto` ships the move in safe steps ({to} gains its rules, Kong switches, {from} drops them); to pick the group, `latgen move {name} --group N`"
        ));
        if let Some((_, pos)) = self.lock.apps.get(name) {
            d = d.related(self.at_lock(*pos), "its group in latgen.lock");
        }
        d
    }

    /// Pass 5: the new apps without a pin (everything placed so far was locked or pinned),
    /// as one batch (`placement`): each into the lowest-numbered group with room, in the
    /// order that needs the fewest groups; in a switch of dispatch mode, every app, pinned
    /// or not (a pin names a group of the old mode).
    fn place_new(&self, planner: &mut Planner, order: &[AppId], switching: bool) {
        let batch: Vec<AppId> = (order.iter().copied())
            .filter(|&id| (self.apps[id].pin.is_none() || switching) && !self.in_lock(id))
            .collect();
        let open = placement::NewGroups::Open;
        // Open groups always have room: a new one if none else.
        let _ = planner.place_batch(&batch, open, &mut placement::Budget::new());
    }

    /// The plan of the placed apps: each group's members and rules, the dedicated routes,
    /// and the lock to write.
    fn assemble(&self, planner: Planner, moves: BTreeMap<AppId, Move>) -> Plan {
        let apps = self.apps;
        let mut plan = Plan::default();
        for (number, state) in planner.groups {
            let mut members = state.apps;
            members.sort_by(|&a, &b| apps[a].name.cmp(&apps[b].name));
            let rules: Vec<Rule> = if self.config.header_dispatch() {
                // One rule per app, in name order: no two rules match one request.
                members.iter().map(|&id| header_rule(id)).collect()
            } else {
                let mut rules: Vec<Rule> =
                    members.iter().flat_map(|&id| rules_of(apps, id)).collect();
                sort_rules(&mut rules);
                rules
            };
            for &id in &members {
                self.record_member(&mut plan, id, number, moves.get(&id));
            }
            plan.groups.push(Group {
                number,
                apps: members.iter().map(|id| id.index()).collect(),
                rules,
            });
        }
        for (id, app) in AppId::enumerate(apps).filter(|(_, a)| !in_groups(a, self.config)) {
            if let Some(a) = &app.adopted {
                plan.lock.adopted.insert(app.name.clone(), a.clone());
            }
            plan.dedicated.push(Dedicated { app: id });
        }
        for (id, m) in moves {
            plan.lock.moves.insert(apps[id].name.clone(), m);
        }
        plan
    }

    /// Records app `id`, a member of group `number`, in the lock and the Kong side's
    /// targets; an app in two groups (moving) is recorded at home, in the one the lock names.
    fn record_member(&self, plan: &mut Plan, id: AppId, number: u32, moving: Option<&Move>) {
        let name = &self.apps[id].name;
        let home = self
            .lock
            .apps
            .get(name)
            .map(|h| h.0)
            .filter(|_| moving.is_some());
        if home.is_none_or(|h| h == number) {
            plan.lock.apps.insert(name.clone(), number);
            let serving = match moving {
                Some(m) if m.step == MoveStep::SwitchKong => m.to,
                _ => number,
            };
            plan.kong_group.insert(id, serving);
        }
    }

    /// The finding for app `id`, which does not fit group `number`, reported at `at`.
    fn no_room(
        &self,
        id: AppId,
        number: u32,
        why: &NoRoom,
        at: Span,
        origin: Origin,
    ) -> Diagnostic {
        let how = match origin {
            Origin::Lock => {
                "change the app so that it fits, or make room in the group with `latgen move` of another app"
            }
            Origin::Pin => {
                "pin another group, or remove `group` so that latgen picks one with room"
            }
        };
        let message = why.message(self.apps, id, &self.config.group_name(number));
        let mut d = Diagnostic::error(why.code(origin, self.config), message)
            .at(at)
            .help(how);
        if let Some((other, what)) = why.other_app() {
            d = d.related(self.at_app(other), what);
        }
        d
    }
}

impl NoRoom {
    /// Why app `id` does not fit the group named `group`, as a sentence.
    pub fn message(&self, apps: &[App], id: AppId, group: &str) -> String {
        let app = &apps[id];
        match self {
            NoRoom::Rules { have, need, cap } => format!(
                "{group} has {have}/{cap} rules; app `{}` needs {need}",
                app.name
            ),
            NoRoom::Backends { have, cap } => format!(
                "{group} already routes to {have}/{cap} target groups; app `{}` adds one",
                app.name
            ),
            NoRoom::Isolated { other } => format!(
                "apps `{}` and `{}` are both `isolate: true` and cannot share {group}",
                app.name, apps[*other].name
            ),
            NoRoom::Rps { have, budget } => format!(
                "{group} already carries {have} rps of its {budget} rps budget; app `{}` adds {}",
                app.name,
                app.peak_rps.unwrap_or(0)
            ),
            NoRoom::AuthPolicy { have, need, cap } => format!(
                "{group}'s auth policy takes {have} of its {cap} bytes; the statements that let app `{}`'s callers in add {need}",
                app.name
            ),
            NoRoom::Nested {
                path,
                other_path,
                other,
            } => {
                let (me, them) = (&app.name, &apps[*other].name);
                let ((inner, inner_app), (outer, outer_app)) = if path.len() > other_path.len() {
                    ((path, me), (other_path, them))
                } else {
                    ((other_path, them), (path, me))
                };
                format!(
                    "apps `{me}` ({path}) and `{them}` ({other_path}) cannot share {group}: their prefixes nest, and Lattice would send `{inner}x` to `{inner_app}` although it belongs to `{outer_app}` ({outer})"
                )
            }
            NoRoom::Overlap {
                path,
                other_path,
                other,
            } => {
                let (me, them) = (&app.name, &apps[*other].name);
                let longer = if path.len() >= other_path.len() {
                    path
                } else {
                    other_path
                };
                format!(
                    "apps `{me}` ({path}) and `{them}` ({other_path}) cannot share {group}: Lattice compares paths as strings, so `{longer}` matches both rules, and which app gets it would depend on an order of rules the controller does not keep"
                )
            }
        }
    }

    /// The finding's code, which for a full group depends on where the placement came from
    /// and on what limits the group's capacity.
    fn code(&self, origin: Origin, config: &Config) -> Code {
        match self {
            NoRoom::Rules { .. } if matches!(origin, Origin::Pin) => Code::PinnedGroupFull,
            NoRoom::Rules { .. } if config.quotas.crd_bounds_groups() => Code::CrdRuleLimit,
            NoRoom::Rules { .. } => Code::GroupOverQuota,
            NoRoom::Backends { .. } => Code::TargetGroupQuota,
            NoRoom::Isolated { .. } => Code::IsolationConflict,
            NoRoom::Rps { .. } => Code::RpsBudget,
            NoRoom::AuthPolicy { .. } => Code::AuthPolicyTooLarge,
            NoRoom::Nested { .. } => Code::NestedPrefix,
            NoRoom::Overlap { .. } => Code::OrderDependentGroup,
        }
    }

    /// The app in the way, if there is one, and what to call it.
    fn other_app(&self) -> Option<(AppId, &'static str)> {
        match self {
            NoRoom::Isolated { other } => Some((*other, "the other isolated app")),
            NoRoom::Nested { other, .. } | NoRoom::Overlap { other, .. } => {
                Some((*other, "the other app"))
            }
            _ => None,
        }
    }
}
