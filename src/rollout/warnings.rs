//! What a change to the Lattice routes does while the controller applies it.

use crate::manifest::tree::Tree;
use std::collections::BTreeSet;
use std::path::Path;

use crate::diag::codes::{Code, Severity};
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::app::App;
use crate::manifest::layout::Side;
use crate::manifest::layout::{route_of, side_of};
use latgen_sim::routing::{BackendRef, LatticeRoute, LatticeRule, OrderDependence};

/// A rule's matches as `Type path` keys.
fn match_keys(rule: &LatticeRule) -> impl Iterator<Item = String> + '_ {
    rule.matches
        .iter()
        .map(|m| format!("{} {}", m.kind.gateway_api_type(), m.path))
}

/// What a change to the Lattice routes does while the controller applies it, comparing
/// each route in `old` with the same file in `new` (files by path under the output folder;
/// each changed route is read once per side):
/// - `group-at-quota`: the controller creates the new rules before it deletes the old
///   ones, so for a while the route holds both; over the quota, the extra rules are
///   dropped without an error.
/// - `order-dependent-group`, of severity `created` (an error for the PR gate, a warning
///   for `render`), naming apps from `apps`: the change puts two apps whose paths one
///   request can match both into one route, which then routes right only in an order of
///   rules the controller does not keep. Pairs the old route had already are the committed
///   findings' (warnings). A route new to the tree is not read here (reading every new
///   route would double a first render's time): the planner puts no such pair into a new
///   group (a new app is placed apart, a move's target is checked when it starts), and the
///   committed findings still warn of one a hand-edited lock makes.
pub(crate) fn change_warnings(
    old: &Tree,
    new: &Tree,
    quota: usize,
    out_dir: &Path,
    (apps, created, env): (&[App], Severity, Option<&str>),
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    // Both trees are sorted alike: walked side by side, not looked up file by file.
    for (rel, text, before) in crate::manifest::tree::beside(new.iter(), old.iter()) {
        let Some(before_text) = before.filter(|t| *t != text) else {
            continue;
        };
        if side_of(rel) != Side::Lattice {
            continue;
        }
        let (Some(before), Some(after)) = (
            LatticeRoute::parse(rel, before_text),
            LatticeRoute::parse(rel, text),
        ) else {
            continue;
        };
        let at = |m: &latgen_sim::routing::PathRule| {
            Span::new(out_dir.join(rel), m.pos.line.max(1), m.pos.column)
        };
        let had: BTreeSet<_> = before.order_dependent().iter().map(|p| p.key()).collect();
        for pair in after.order_dependent() {
            if !had.contains(&pair.key()) {
                let found = order_dependence(&after, &pair, (apps, env), created, &at);
                diags.push(found);
            }
        }
        let span = Span::new(out_dir.join(rel), after.name_pos.line.max(1), 0);
        if let Some(d) = group_at_quota(&before, &after, quota) {
            diags.push(d.at(span));
        }
    }
    diags
}

/// The app a Lattice rule for `path` to `backend` serves (a rule names only its backend):
/// the app on that Service that declares the path, else any app on it, else the Service.
/// Asked only for findings, which are few: a scan, not an index built on every check.
fn app_name(apps: &[App], backend: Option<&BackendRef>, path: &str) -> String {
    let Some(b) = backend else {
        return "no backend".to_string();
    };
    let mut on_it = apps.iter().filter(|a| a.is_backend(b));
    let declares = |a: &&App| a.paths.iter().any(|p| p.value == path);
    match (on_it.clone().find(declares), on_it.next()) {
        (Some(a), _) | (None, Some(a)) => a.name.clone(),
        (None, None) => b.to_string(),
    }
}

/// `order-dependent-group` for `pair` of `route`, as `severity`: an error where a change
/// creates the pair, a warning where it is committed already. `env` is the environment the
/// project is built for, whose lock and `--env` the help names.
pub(crate) fn order_dependence(
    route: &LatticeRoute,
    pair: &OrderDependence<'_>,
    (apps, env): (&[App], Option<&str>),
    severity: Severity,
    at: &dyn Fn(&latgen_sim::routing::PathRule) -> Span,
) -> Diagnostic {
    let ((first, first_backend), (then, then_backend)) = (pair.first, pair.then);
    let right = app_name(apps, first_backend, &first.path);
    let wrong = app_name(apps, then_backend, &then.path);
    let shown = |m: &latgen_sim::routing::PathRule| match m.kind {
        crate::input::app::MatchKind::Exact => format!("`{}` (Exact)", m.path),
        crate::input::app::MatchKind::Prefix => format!("`{}`", m.path),
    };
    let message = format!(
        "{}: {} (app `{right}`) and {} (app `{wrong}`) share one Lattice service, which compares paths as strings, so `{}` matches both rules; it reaches `{right}` only while {} comes first, and the controller does not keep that order (a rule added later is created after every other one, and a reorder of more than 5 rules fails): then `{wrong}` gets `{}`",
        route.name,
        shown(first),
        shown(then),
        first.path,
        shown(first),
        first.path,
    );
    let mut d = Diagnostic::error(Code::OrderDependentGroup, message);
    d.severity = severity;
    d.at(at(then))
        .related(at(first), "matches the same requests")
        .help(format!(
            "keep the two apps in different groups: once no move is in flight, `latgen plan{flag}` lists the moves that separate every such pair, `latgen plan{flag} --apply` records them in {}, and `latgen render{flag} --base auto` ships them in safe steps",
            crate::input::environments::lock_shown(env),
            flag = crate::input::environments::env_flag(env),
        ))
}

/// `group-at-quota`: the old and new rules together are over the quota.
fn group_at_quota(before: &LatticeRoute, after: &LatticeRoute, quota: usize) -> Option<Diagnostic> {
    let keys =
        |r: &LatticeRoute| -> BTreeSet<String> { r.rules.iter().flat_map(match_keys).collect() };
    let (was, will) = (keys(before), keys(after));
    let peak = was.union(&will).count();
    if peak <= quota || was == will {
        return None;
    }
    let shown = |s: &String| match s.split_once(' ') {
        Some(("Exact", p)) => format!("{p} (Exact)"),
        Some((_, p)) => p.to_string(),
        None => s.clone(),
    };
    let added: Vec<String> = will.difference(&was).map(shown).collect();
    let removed: Vec<String> = was.difference(&will).map(shown).collect();
    Some(
        Diagnostic::warning(
            Code::GroupAtQuota,
            format!(
                "{} would briefly hold {peak} rules (quota {quota}) while the controller replaces {} with {}: the rules over the quota are dropped without an error",
                after.name,
                removed.join(", "),
                added.join(", ")
            ),
        )
        .help("ship the removal and the addition as two changes, or keep a rule free with `quotas.reservedRules: 1`"),
    )
}

/// `auth-open-window`: each Lattice route `new` creates (a file `old` does not have) makes a
/// Lattice service, which the controller creates with auth type `NONE` and which stays open
/// to every caller until it has attached the route's auth policy, unless the service
/// network's own policy keeps strangers out (`auth.serviceNetworkPolicy`).
pub(crate) fn open_windows(
    old: &Tree,
    new: &Tree,
    config: &crate::input::config::Config,
    out_dir: &Path,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let auth = &config.auth;
    if !auth.is_on() || auth.service_network_policy {
        return diags;
    }
    let created = new.keys().filter_map(|rel| {
        let route = route_of(rel)?;
        (side_of(rel) == Side::Lattice && !old.contains_key(rel)).then_some((rel, route))
    });
    for (rel, route) in created {
        diags.push(
            Diagnostic::warning(
                Code::AuthOpenWindow,
                format!(
                    "route `{route}` is new, and the controller creates its Lattice service with auth type NONE: until it has attached the service's auth policy, every caller in a VPC of the service network reaches its apps, and latgen.yaml does not say that the service network has an auth policy behind it"
                ),
            )
            .at(Span::file(out_dir.join(rel)))
            .help("give the service network an auth policy that admits only your own callers (an IAMAuthPolicy that targets the Lattice Gateway, e.g. on `aws:PrincipalOrgID`), then set `auth.serviceNetworkPolicy: true` in latgen.yaml"),
        );
    }
    diags
}

/// `canary-route-change`: each Lattice route the change rewrites (its file differs from
/// the base's) that holds canary apps in the base (a rule with more than one backendRef).
/// The route in Git carries every weight at the stable Service; Argo CD applies a route
/// that differs from Git as Git has it, weights and all (a `kubectl apply` replaces
/// `spec.rules` whole), so the sync of this step takes the traffic off any canary of those
/// apps that runs. Argo CD leaves a route alone while only its weights differ, so a change
/// that does not touch the route does not warn.
pub(crate) fn canary_route_changes(
    old: &Tree,
    new: &Tree,
    apps: &[App],
    out_dir: &Path,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    if apps.iter().all(|a| a.canary.is_none()) {
        return diags;
    }
    for (rel, text) in new {
        let Some(before_text) = old.get(rel).filter(|t| *t != text) else {
            continue;
        };
        if side_of(rel) != Side::Lattice || !before_text.contains("weight: 0") {
            continue;
        }
        let (Some(before), Some(after)) = (
            LatticeRoute::parse(rel, before_text),
            LatticeRoute::parse(rel, text),
        ) else {
            continue;
        };
        let mut canaries: Vec<String> = Vec::new();
        for rule in before.rules.iter().filter(|r| r.weighted.len() > 1) {
            let path = rule.matches.first().map_or("", |m| m.path.as_str());
            let name = app_name(apps, rule.backend.as_ref(), path);
            if !canaries.contains(&name) {
                canaries.push(name);
            }
        }
        if canaries.is_empty() {
            continue;
        }
        let span = Span::new(out_dir.join(rel), after.name_pos.line.max(1), 0);
        diags.push(canary_route_change(&after.name, &canaries).at(span));
    }
    diags
}

fn canary_route_change(route: &str, canaries: &[String]) -> Diagnostic {
    let names: Vec<String> = canaries.iter().map(|c| format!("`{c}`")).collect();
    let (apps, names) = match names.len() {
        1 => ("app", names[0].clone()),
        n => (
            "apps",
            format!("{} and {}", names[..n - 1].join(", "), names[n - 1]),
        ),
    };
    Diagnostic::warning(
        Code::CanaryRouteChange,
        format!(
            "this step changes route `{route}`, which holds the canary {apps} {names}: Argo CD applies the route as Git has it, weights included, so while a canary of theirs runs the sync puts all its traffic back on the stable Service, until Argo Rollouts sets the weight again (an analysis meanwhile measures a canary that gets no traffic)"
        ),
    )
    .help(format!(
        "merge this step while no canary of {names} runs (between canaries), or pause their Rollouts first (`kubectl argo rollouts pause`) and resume them once Argo CD has synced the route"
    ))
}
