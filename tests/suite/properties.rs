//! Property tests of the planner: for any set of apps and any sequence of adds, removals
//! and moves, no group exceeds its quotas, no app is lost or duplicated, no app changes
//! group except by an explicit move, rules are in capture-free order, and the output does
//! not depend on the order the apps come in. A rollout judged on what a change can reroute
//! agrees with one that follows every request through every file. Every group routes right
//! in any order of its rules (the controller does not keep latgen's), and the packer meets
//! the lower bound `latgen plan` reports where only paths keep apps apart.

use super::project;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use latgen::diag::Diagnostics;
use latgen::input::app::{App, MatchKind, PathMatch, Pos};
use latgen::input::config::Config;
use latgen::input::lock::{Lock, LockState, Move, MoveStep};
use latgen::plan::{self, Plan};
use latgen_sim::platform::{lattice_matches_overlap, nests_under};
use proptest::prelude::*;

const ROOTS: &[&str] = &[
    "/shop",
    "/shopping",
    "/shop-admin",
    "/api",
    "/a",
    "/ab",
    "/pay",
    "/payment",
    "/help",
];
const SUBS: &[&str] = &["", "/cart", "/v2", "/v22", "/x", "/faq"];

#[derive(Debug, Clone)]
pub(super) struct Spec {
    paths: Vec<(usize, usize, bool)>,
    backend: u8,
    isolate: bool,
    rps: Option<u16>,
}

pub(super) fn spec() -> impl Strategy<Value = Spec> {
    (
        prop::collection::vec((0..ROOTS.len(), 0..SUBS.len(), any::<bool>()), 1..4),
        0u8..6,
        prop::bool::weighted(0.1),
        prop::option::weighted(0.2, 500u16..6000),
    )
        .prop_map(|(paths, backend, isolate, rps)| Spec {
            paths,
            backend,
            isolate,
            rps,
        })
}

/// A concrete app: `app-<id>`, with its paths made unique against every path handed out
/// before (a declared path belongs to one app, which validation enforces before planning).
fn make_app(id: usize, s: &Spec, used: &mut BTreeSet<String>) -> App {
    let mut paths = Vec::new();
    for (r, sub, exact) in &s.paths {
        let value = format!("{}{}", ROOTS[*r], SUBS[*sub]);
        let kind = if *exact {
            MatchKind::Exact
        } else {
            MatchKind::Prefix
        };
        if used.insert(value.clone()) {
            paths.push(PathMatch {
                kind,
                value,
                pos: Pos::default(),
            });
        }
    }
    if paths.is_empty() {
        paths.push(PathMatch {
            kind: MatchKind::Prefix,
            value: format!("/own-{id}"),
            pos: Pos::default(),
        });
    }
    App {
        name: format!("app-{id:03}"),
        file: format!("apps/app-{id:03}.yaml").into(),
        name_pos: Pos::default(),
        namespace: "team".into(),
        service: format!("svc-{}", s.backend),
        port: 8080,
        host: None,
        paths,
        pin: None,
        peak_rps: s.rps.map(u64::from),
        peak_rps_pos: Pos::default(),
        isolate: s.isolate,
        health_check: None,
        callers: Vec::new(),
        kong: Default::default(),
        // The apps of one backend have a canary: a second target group on their rules.
        canary: (s.backend == 5).then(|| latgen::input::canary::Canary {
            service: "svc-5-canary".into(),
            port: 8080,
            readiness_gate: None,
        }),
        adopted: None,
    }
}

pub(super) fn apps_from(specs: &[Spec]) -> Vec<App> {
    let mut used = BTreeSet::new();
    specs
        .iter()
        .enumerate()
        .map(|(id, s)| make_app(id, s, &mut used))
        .collect()
}

fn config() -> Config {
    let mut c = Config::default();
    c.quotas.rules_per_service = 6;
    c.quotas.target_groups_per_service = 4;
    c
}

fn plan_of(apps: &[App], lock: &LockState) -> (Plan, Diagnostics) {
    let mut diags = Diagnostics::new();
    let p = plan::plan(
        apps,
        &lock.positioned(),
        Path::new("latgen.lock"),
        &config(),
        &mut diags,
    );
    (p, diags)
}

fn check_invariants(apps: &[App], p: &Plan) -> Result<(), TestCaseError> {
    let c = config();
    let mut homes: BTreeMap<usize, usize> = BTreeMap::new();
    for g in &p.groups {
        prop_assert!(
            g.rules.len() <= c.quotas.rules_per_group() as usize,
            "group {} has {} rules",
            g.number,
            g.rules.len()
        );
        // A canary's Service is a target group too.
        let backends: BTreeSet<_> = g.apps.iter().flat_map(|&i| apps[i].backends()).collect();
        prop_assert!(backends.len() <= c.quotas.target_groups_per_service as usize);
        prop_assert!(g.apps.iter().filter(|&&i| apps[i].isolate).count() <= 1);
        let rps: u64 = g.apps.iter().filter_map(|&i| apps[i].peak_rps).sum();
        prop_assert!(rps <= c.throughput.rps_per_service);
        for (n, a) in g.rules.iter().enumerate() {
            for b in &g.rules[n + 1..] {
                // Sorted: longest first, Exact before PathPrefix on ties.
                prop_assert!(
                    (a.path.len(), std::cmp::Reverse(a.kind))
                        >= (b.path.len(), std::cmp::Reverse(b.kind))
                );
                // Capture-free: an earlier prefix never string-matches a later rule of
                // another app, and no two apps' prefixes nest.
                if a.app != b.app {
                    prop_assert!(
                        !(a.kind == MatchKind::Prefix && b.path.starts_with(&a.path)),
                        "{} captures {}",
                        a.path,
                        b.path
                    );
                    if a.kind == MatchKind::Prefix && b.kind == MatchKind::Prefix {
                        prop_assert!(
                            !nests_under(&a.path, &b.path) && !nests_under(&b.path, &a.path)
                        );
                    }
                    // Order-independent: no request matches both (string prefixes, Exact).
                    prop_assert!(
                        !lattice_matches_overlap((a.kind, &a.path), (b.kind, &b.path)),
                        "{} and {} of two apps share group {}",
                        a.path,
                        b.path,
                        g.number
                    );
                }
            }
        }
        for &i in &g.apps {
            *homes.entry(i).or_default() += 1;
        }
    }
    for (i, app) in apps.iter().enumerate() {
        let moving = p.lock.moves.contains_key(&app.name);
        let want = if moving { 2 } else { 1 };
        prop_assert_eq!(
            homes.get(&i).copied().unwrap_or(0),
            want,
            "app {} is in the wrong number of groups",
            app.name
        );
        prop_assert!(p.lock.apps.contains_key(&app.name));
    }
    Ok(())
}

#[derive(Debug, Clone)]
enum Op {
    Add(Spec),
    Remove(usize),
    Move(usize, u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => spec().prop_map(Op::Add),
        1 => (0usize..100).prop_map(Op::Remove),
        1 => (0usize..100, 1u32..8).prop_map(|(a, g)| Op::Move(a, g)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn any_set_of_apps_is_planned_within_quotas(specs in prop::collection::vec(spec(), 1..40)) {
        let apps = apps_from(&specs);
        let (p, diags) = plan_of(&apps, &LockState::default());
        prop_assert!(!diags.has_errors(), "{diags:?}");
        check_invariants(&apps, &p)?;
    }

    #[test]
    fn the_plan_does_not_depend_on_input_order(specs in prop::collection::vec(spec(), 1..30), seed in any::<u64>()) {
        let apps = apps_from(&specs);
        let mut shuffled = apps.clone();
        shuffle(&mut shuffled, seed);
        let (a, _) = plan_of(&apps, &LockState::default());
        let (b, _) = plan_of(&shuffled, &LockState::default());
        prop_assert_eq!(&a.lock, &b.lock);
        let t = latgen::render::Templates::load(None).unwrap();
        let ra = latgen::render::render(&a, &apps, &config(), &t).unwrap();
        let rb = latgen::render::render(&b, &shuffled, &config(), &t).unwrap();
        prop_assert!(ra == rb, "the rendered trees differ");
    }

    #[test]
    fn apps_stay_put_through_adds_removals_and_moves(initial in prop::collection::vec(spec(), 1..20), ops in prop::collection::vec(op(), 1..15)) {
        let mut used = BTreeSet::new();
        let mut live: Vec<App> = initial.iter().enumerate().map(|(id, s)| make_app(id, s, &mut used)).collect();
        let mut next_id = live.len();
        let mut apps = live.clone();
        let (p, _) = plan_of(&apps, &LockState::default());
        let mut lock = p.lock.clone();
        for op in ops {
            let mut explicit: Option<String> = None;
            match op {
                Op::Add(s) => { live.push(make_app(next_id, &s, &mut used)); next_id += 1; }
                Op::Remove(k) if !live.is_empty() => { live.remove(k % live.len()); }
                Op::Remove(_) => {}
                Op::Move(k, g) if !live.is_empty() => {
                    let name = live[k % live.len()].name.clone();
                    // Through the same validation `latgen move` does; a refused move changes nothing.
                    let (p, d) = plan_of(&apps, &lock);
                    if !d.has_errors() {
                        let prepared = latgen::plan::prepared::Prepared { config: config(), apps: apps.clone(), plan: p, finished_moves: Vec::new(), rollout: None };
                        if let Ok(r) = latgen::plan::rebalance::moves::move_app(&prepared, &name, Some(g), false) {
                            lock = r.lock;
                            explicit = Some(name);
                        }
                    }
                }
                Op::Move(..) => {}
            }
            apps = live.clone();
            let before = lock.clone();
            let (p, diags) = plan_of(&apps, &lock);
            prop_assert!(!diags.has_errors(), "{diags:?}");
            check_invariants(&apps, &p)?;
            for (name, group) in &p.lock.apps {
                if let Some(old) = before.apps.get(name) {
                    prop_assert_eq!(old, group, "{} moved without a move", name);
                }
            }
            if let Some(name) = explicit {
                prop_assert_eq!(p.lock.moves.get(&name).map(|m| m.step), Some(MoveStep::AddRules));
            }
            // Finish any move in flight, as `latgen move --continue` twice does.
            lock = p.lock.clone();
            let moves: Vec<(String, Move)> = lock.moves.iter().map(|(k, v)| (k.clone(), *v)).collect();
            for (name, m) in moves {
                lock.moves.remove(&name);
                lock.apps.insert(name, m.to);
            }
            let (p, diags) = plan_of(&apps, &lock);
            prop_assert!(!diags.has_errors(), "{diags:?}");
            check_invariants(&apps, &p)?;
            lock = p.lock;
        }
    }
}

/// Under header dispatch: a group holds 6 apps (rules) and any 6 Services.
fn header_config() -> Config {
    let mut c = Config::default();
    c.lattice.dispatch = latgen::input::config::Dispatch::Header;
    c.quotas.rules_per_service = 6;
    c
}

/// A header-dispatch app set: path-routed apps as above (nested prefixes, shared string
/// prefixes, Exact beside PathPrefix), some of them on a host of their own, with their
/// paths or with none (`/`); no isolation or rps, so only the rule quota bounds a group.
fn header_apps(specs: &[(Spec, Option<bool>)]) -> Vec<App> {
    let mut used = BTreeSet::new();
    specs
        .iter()
        .enumerate()
        .map(|(id, (s, host))| {
            let mut app = make_app(id, s, &mut used);
            (app.isolate, app.peak_rps) = (false, None);
            if let Some(with_paths) = host {
                app.host = Some(format!("h{id}.example.com"));
                if !with_paths {
                    app.paths = vec![PathMatch {
                        kind: MatchKind::Prefix,
                        value: "/".into(),
                        pos: Pos::default(),
                    }];
                }
            }
            app
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Header dispatch routes every probe where Gateway API semantics say, a forged
    /// dispatch header from the client included, and packs the apps into exactly the
    /// fewest groups the rule quota allows.
    #[test]
    fn header_dispatch_routes_every_probe_in_the_fewest_groups(
        specs in prop::collection::vec((spec(), prop::option::weighted(0.3, any::<bool>())), 1..30)
    ) {
        let apps = header_apps(&specs);
        let config = header_config();
        let mut diags = Diagnostics::new();
        let p = plan::plan(&apps, &Lock::default(), Path::new("latgen.lock"), &config, &mut diags);
        prop_assert!(!diags.has_errors(), "{diags:?}");
        prop_assert_eq!(p.dedicated.len(), 0);
        prop_assert_eq!(p.groups.len(), apps.len().div_ceil(6));
        let t = latgen::render::Templates::load(None).unwrap();
        let out = latgen::render::render(&p, &apps, &config, &t).unwrap();
        let net = project::network(&out.files);
        let forged: Vec<latgen_sim::routing::Headers> = [None, Some("app-000"), Some("APP-001")]
            .iter()
            .map(|v| v.iter().map(|v| ("x-latgen-app".to_string(), v.to_string())).collect())
            .collect();
        if let Err(e) = project::oracle::misroutes(&apps, &config, &net, &forged) {
            prop_assert!(false, "{}", e);
        }
    }
}

/// The output of `apps` planned over `lock` (a lock from an earlier plan keeps its groups),
/// and the lock that plan writes; None when the change cannot be planned (an app grown
/// over its group's quota).
fn rendered(apps: &[App], lock: &LockState) -> Option<(latgen::manifest::tree::Tree, LockState)> {
    let (p, diags) = plan_of(apps, lock);
    if diags.has_errors() {
        return None;
    }
    let t = latgen::render::Templates::load(None).unwrap();
    let out = latgen::render::render(&p, apps, &config(), &t).unwrap();
    Some((out.files, p.lock))
}

/// One side of `a` with the other side of `b`: a state Argo CD can be in.
fn sides(
    lattice: &latgen::manifest::tree::Tree,
    kong: &latgen::manifest::tree::Tree,
) -> latgen::manifest::tree::Tree {
    use latgen::manifest::layout::{Side, side_of};
    let take = |tree: &latgen::manifest::tree::Tree, side| {
        tree.iter()
            .filter(move |(p, _)| side_of(p) == side)
            .map(|(p, t)| (p.clone(), t.clone()))
            .collect::<Vec<_>>()
    };
    take(lattice, Side::Lattice)
        .into_iter()
        .chain(take(kong, Side::Kong))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Judging only what a change can reroute (the requests a changed file can claim or
    /// serve, in networks of the files on their way) gives the same verdict on every
    /// state of the change as following every request through every file.
    #[test]
    fn a_scoped_rollout_judgement_agrees_with_a_full_one(
        initial in prop::collection::vec(spec(), 1..14),
        added in prop::collection::vec(spec(), 0..4),
        removed in prop::collection::vec(0usize..14, 0..3),
        changed in prop::collection::vec((0usize..14, spec()), 0..3),
    ) {
        let before = apps_from(&initial);
        let (base, lock) = rendered(&before, &LockState::default()).expect("a first plan fits");
        let mut specs = initial.clone();
        for (i, s) in &changed {
            if let Some(slot) = specs.get_mut(*i) {
                *slot = s.clone();
            }
        }
        specs.extend(added);
        let mut after = apps_from(&specs);
        for i in removed.iter().rev() {
            if *i < after.len() && after.len() > 1 {
                after.remove(*i);
            }
        }
        let target = rendered(&after, &lock).map(|(files, _)| files);
        prop_assume!(target.is_some());
        let target = target.unwrap_or_default();
        let limit = config().quotas.rules_per_service as usize;
        let scoped = latgen::rollout::judge::Judge::new(&base, &target, limit);
        let full = latgen::rollout::judge::Judge::unscoped(&base, &target, limit);
        let t = latgen::render::Templates::load(None).unwrap();
        let versions = latgen::render::between::Between { templates: &t, config: &config(), apps: &after };
        // The steps each judge would take, besides the states any change has.
        let states = [
            ("the target", target.clone()),
            ("the Lattice side first", sides(&target, &base)),
            ("the Kong side first", sides(&base, &target)),
            ("the next step", latgen::rollout::judge::next_step(&scoped, &base, &target, &versions)),
            ("the full judge's next step", latgen::rollout::judge::next_step(&full, &base, &target, &versions)),
        ];
        for (what, state) in &states {
            prop_assert_eq!(
                scoped.safe(&scoped.docs(state)),
                full.safe(&full.docs(state)),
                "{} is judged differently", what
            );
        }
    }
}

/// `items` in another order: a Fisher-Yates shuffle driven by `seed` (xorshift).
fn shuffle<T>(items: &mut [T], seed: u64) {
    let mut s = seed | 1;
    for i in (1..items.len()).rev() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        items.swap(i, (s % (i as u64 + 1)) as usize);
    }
}

/// `net` with every Lattice route's rules in another order (driven by `seed`): an order the
/// controller could leave them in.
fn with_rules_shuffled(
    net: &latgen_sim::routing::Network,
    seed: u64,
) -> latgen_sim::routing::Network {
    let mut out = net.clone();
    for (k, route) in out.lattice.iter_mut().enumerate() {
        let mut r = (**route).clone();
        shuffle(&mut r.rules, seed.wrapping_add(k as u64));
        *route = std::sync::Arc::new(r);
    }
    out
}

/// Apps for the order tests: as `apps_from` makes them, each with a Service of its own (so
/// that a request reaching another app's rule shows as a wrong backend), neither isolated
/// nor with a declared rps.
pub(super) fn own_backend_apps(specs: &[Spec]) -> Vec<App> {
    let mut apps = apps_from(specs);
    for app in &mut apps {
        app.service = app.name.clone();
        (app.isolate, app.peak_rps) = (false, None);
    }
    apps
}

/// The settings of the order tests: 10 rules a group, as the example's, in either mode, and
/// target groups enough that only the rules and the paths bound a group.
fn order_config(header: bool) -> Config {
    let mut c = if header { header_config() } else { config() };
    c.quotas.rules_per_service = 10;
    c.quotas.target_groups_per_service = 10;
    c
}

/// Plans, renders and models `apps`: the plan and the routing model of its output.
fn planned_network(apps: &[App], config: &Config) -> (Plan, latgen_sim::routing::Network) {
    let (p, files) = project::plan_and_render(apps, config);
    (p, project::network(&files))
}

/// The lower bound `latgen plan` reports for `plan`.
fn lower_bound(apps: &[App], config: &Config, plan: &Plan) -> usize {
    let prepared = latgen::plan::prepared::Prepared {
        config: config.clone(),
        apps: apps.to_vec(),
        plan: plan.clone(),
        finished_moves: Vec::new(),
        rollout: None,
    };
    latgen::plan::rebalance::compaction::compaction(&prepared)
        .unwrap()
        .lower_bound
}

/// A spec of one path (a root, a sub-path, Exact or PathPrefix).
fn one_path_spec() -> impl Strategy<Value = Spec> {
    ((0..ROOTS.len(), 0..SUBS.len(), any::<bool>()), 0u8..6).prop_map(|(path, backend)| Spec {
        paths: vec![path],
        backend,
        isolate: false,
        rps: None,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The controller does not keep the order of a route's rules (a rule new to a listener
    /// is created after all others; reordering more than 5 fails). For random apps with
    /// string-sharing, nested and Exact paths, in both dispatch modes, every probe (and, in
    /// header mode, forged dispatch headers) reaches the app Gateway API semantics name with
    /// each group's rules shuffled 32 times; and the plan uses no fewer groups than the
    /// lower bound `latgen plan` reports.
    #[test]
    fn every_group_routes_right_in_any_order_of_its_rules(
        specs in prop::collection::vec(spec(), 1..30),
        header in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let apps = own_backend_apps(&specs);
        let config = order_config(header);
        let (p, net) = planned_network(&apps, &config);
        let forged: Vec<latgen_sim::routing::Headers> = if header {
            [None, Some("app-000"), Some("APP-001")]
                .iter()
                .map(|v| v.iter().map(|v| ("x-latgen-app".to_string(), v.to_string())).collect())
                .collect()
        } else {
            vec![latgen_sim::routing::Headers::new()]
        };
        for k in 0..32u64 {
            let shuffled = with_rules_shuffled(&net, seed.wrapping_add(k.wrapping_mul(0x9e37_79b9)));
            if let Err(e) = project::oracle::misroutes(&apps, &config, &shuffled, &forged) {
                prop_assert!(false, "order {k}: {e}");
            }
        }
        let bound = lower_bound(&apps, &config, &p);
        prop_assert!(p.groups.len() >= bound, "{} groups, lower bound {bound}", p.groups.len());
    }

    /// With one path per app and fewer apps than a group has rules, only the paths keep apps
    /// apart, and the packer reaches the lower bound `latgen plan` reports: the longest
    /// chain of apps whose paths one request can match all. (Apps whose paths are string
    /// prefixes of one another's form a forest order, whose comparability graph any
    /// first-fit colours with the fewest colours.)
    #[test]
    fn the_packer_uses_no_more_groups_than_the_lower_bound(
        specs in prop::collection::vec(one_path_spec(), 1..10),
    ) {
        let apps = own_backend_apps(&specs);
        let config = order_config(false);
        let (p, _) = planned_network(&apps, &config);
        let bound = lower_bound(&apps, &config, &p);
        prop_assert_eq!(p.groups.len(), bound);
    }
}

/// Callers an app may declare: IAM roles (a long name, so that a few callers fill a
/// policy), an account, the organization, VPCs and methods.
pub(super) fn caller() -> impl Strategy<Value = latgen::input::auth::Caller> {
    let roles: Vec<String> = (0..8)
        .map(|i| format!("arn:aws:iam::111122223333:role/team-{i}/a-service-role-with-a-long-name"))
        .collect();
    (
        prop::sample::subsequence(roles, 0..6),
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.2),
        prop::sample::subsequence(vec!["vpc-0123456789abcdef0", "vpc-0fedcba987654321f"], 0..2),
        prop::sample::subsequence(vec!["GET", "POST"], 0..2),
    )
        .prop_map(|(mut principals, account, org, vpcs, methods)| {
            if account {
                principals.push("222233334444".into());
            }
            let mut c = latgen::input::auth::Caller {
                principals,
                orgs: if org {
                    vec!["o-a1b2c3d4e5".into()]
                } else {
                    Vec::new()
                },
                vpcs: vpcs.into_iter().map(String::from).collect(),
                methods: methods.into_iter().map(String::from).collect(),
            };
            if c.principals.is_empty() && c.orgs.is_empty() && c.vpcs.is_empty() {
                c.vpcs.push("vpc-0123456789abcdef0".into());
            }
            c
        })
}

/// The order tests' settings with auth on: Kong calls from its own VPC.
pub(super) fn auth_config(header: bool) -> Config {
    let mut c = order_config(header);
    c.auth = latgen::input::auth::AuthConfig {
        mode: latgen::input::auth::AuthMode::Iam,
        account: Some("111122223333".into()),
        region: Some("ap-northeast-2".into()),
        kong: Some(latgen::input::auth::Caller {
            vpcs: vec!["vpc-0a1b2c3d4e5f67890".into()],
            ..Default::default()
        }),
        ..Default::default()
    };
    c
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// For random apps with nested and string-sharing prefixes and random callers, in both
    /// dispatch modes, the auth policies let every declared caller in on every request that
    /// reaches its app, keep every other caller out (near misses and a stranger included),
    /// and none is over the 10,000 bytes Lattice takes: the planner sizes groups by them.
    #[test]
    fn every_declared_caller_and_no_other_reaches_each_app(
        specs in prop::collection::vec(spec(), 1..24),
        callers in prop::collection::vec(prop::collection::vec(caller(), 0..3), 24),
        header in any::<bool>(),
    ) {
        let mut apps = own_backend_apps(&specs);
        for (app, c) in apps.iter_mut().zip(callers) {
            app.callers = c;
        }
        let config = auth_config(header);
        let (_, files) = project::plan_and_render(&apps, &config);
        let net = project::network(&files);
        prop_assert_eq!(net.lattice.len(), files.keys().filter(|p| p.to_string_lossy().contains("iamauthpolicy-")).count());
        for route in &net.lattice {
            let policy = net.auth_policy(route);
            prop_assert!(policy.is_some(), "{} has no policy", route.name);
            let bytes = policy.unwrap().bytes;
            prop_assert!(bytes <= latgen::plan::policies::POLICY_MAX_BYTES, "{}: {bytes} bytes", route.name);
        }
        if let Err(e) = project::auth::holes(&apps, &config, &net) {
            prop_assert!(false, "{e}");
        }
    }
}
