//! Where an app's direct callers reach it: the Lattice services that hold its rules, each a
//! domain and what a request there must match (its paths, or the dispatch header). An app
//! that declares callers of its own is called at that address, not through Kong, so a
//! change that takes its rules off a service strands those callers unless they are told:
//! `check --base` warns of such a step (`direct-callers-moved`), `render --base` holds it
//! until the user lets the old address go (see [`super::held`]), and `status` and `trace`
//! give each app's address.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Value, json};

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::app::{App, AppId, MatchKind};
use crate::manifest::layout::{Side, side_of};
use crate::manifest::tree::{Tree, changed_files};
use crate::plan::prepared::Prepared;
use latgen_sim::routing::{BackendRef, LatticeRoute, LatticeRule};

/// One place an app answers requests sent straight to Lattice.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Address {
    /// The Lattice service's custom domain.
    pub domain: String,
    /// Its route, as `namespace/name`, and the Lattice service's name.
    pub route: String,
    pub service: String,
    /// What a request there matches to reach the app: its paths (`/shop`, `/healthz
    /// (exact)`), or the dispatch header (`x-latgen-app: shop`).
    pub paths: Vec<String>,
}

impl Address {
    /// `group-01.lattice.internal on /shop, /shop-api`, or under header dispatch
    /// `group-01.lattice.internal with header x-latgen-app: shop`.
    pub fn show(&self) -> String {
        let (paths, headers): (Vec<&str>, Vec<&str>) =
            (self.paths.iter().map(String::as_str)).partition(|p| p.starts_with('/'));
        let mut out = self.domain.clone();
        if !paths.is_empty() {
            out.push_str(&format!(" on {}", paths.join(", ")));
        }
        if !headers.is_empty() {
            out.push_str(&format!(" with header {}", headers.join(", ")));
        }
        out
    }

    pub fn to_json(&self) -> Value {
        json!({
            "domain": self.domain,
            "route": self.route,
            "service": self.service,
            "paths": self.paths,
        })
    }

    /// The address the rules of `route` that `owns` picks make; None when it picks none.
    pub fn of_route(route: &LatticeRoute, owns: impl Fn(&LatticeRule) -> bool) -> Option<Self> {
        let paths: Vec<String> = (route.rules.iter())
            .filter(|r| owns(r))
            .map(crate::rollout::summary::apps::describe)
            .collect();
        Some(Address {
            domain: route.domain()?.to_string(),
            route: format!("{}/{}", route.namespace, route.name),
            service: route.service_name.clone(),
            paths: dedup(paths),
        })
        .filter(|a| !a.paths.is_empty())
    }
}

fn dedup(mut paths: Vec<String>) -> Vec<String> {
    let mut seen = BTreeSet::new();
    paths.retain(|p| seen.insert(p.clone()));
    paths
}

/// Whether `rule` is `app`'s: its backend is the app's Service, and the match is one the
/// app writes or one no other app on that Service writes (an old path of the app's, during
/// a change of its paths). Apps that share a Service are told apart by their paths.
pub(crate) fn is_apps(rule: &LatticeRule, app: &App, apps: &[App]) -> bool {
    let Some(b) = &rule.backend else {
        return false;
    };
    let writes = |a: &App| rule.matches.iter().any(|m| a.writes(m));
    app.is_backend(b)
        && (writes(app)
            || !(apps.iter()).any(|o| o.name != app.name && o.is_backend(b) && writes(o)))
}

/// The address of `app` that one of its rules in `route` makes, with whatever other rules
/// of the route go to `backend` (trace, which reads manifests without declarations).
pub(crate) fn of_backend(route: &LatticeRoute, backend: &BackendRef) -> Option<Address> {
    Address::of_route(route, |r| r.backend.as_ref() == Some(backend))
}

/// An address of an app with callers of its own that a change takes away.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Release {
    pub app: String,
    /// The file of the route that held the old address, under the output folder, and the
    /// line of the route's name in it.
    pub file: std::path::PathBuf,
    pub line: u32,
    /// Where its direct callers reached it before the change, and where they reach it
    /// after (none when the change leaves it no other address).
    pub old: Address,
    pub new: Vec<Address>,
}

impl Release {
    /// `orders: group-01.lattice.internal on /orders -> group-02.lattice.internal on /orders`.
    pub fn show(&self) -> String {
        format!(
            "{}: {} -> {}",
            self.app,
            self.old.show(),
            self.new_addresses()
        )
    }

    fn new_addresses(&self) -> String {
        match self.new.as_slice() {
            [] => "no address".to_string(),
            new => (new.iter().map(Address::show))
                .collect::<Vec<_>>()
                .join(" and "),
        }
    }

    pub fn to_json(&self) -> Value {
        json!({
            "app": self.app,
            "old": self.old.to_json(),
            "new": self.new.iter().map(Address::to_json).collect::<Vec<_>>(),
        })
    }
}

/// The addresses that `after` takes away from apps that declare callers of their own: each
/// Lattice route of `before` that holds such an app's rules, when no route of `after` holds
/// any of them on its domain. Only the Lattice files that differ are read, and `after`'s
/// other routes only to find where such an app went.
pub(crate) fn released(before: &Tree, after: &Tree, apps: &[App]) -> Vec<Release> {
    let called: Vec<&App> = apps.iter().filter(|a| !a.callers.is_empty()).collect();
    if called.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for rel in changed_files(before, after) {
        if side_of(&rel) != Side::Lattice {
            continue;
        }
        let Some(old) = before.get(&rel).and_then(|t| LatticeRoute::parse(&rel, t)) else {
            continue;
        };
        for app in &called {
            if let Some(was) = Address::of_route(&old, |r| is_apps(r, app, apps)) {
                out.push(Release {
                    app: app.name.clone(),
                    file: rel.clone(),
                    line: old.name_pos.line,
                    old: was,
                    new: Vec::new(),
                });
            }
        }
    }
    if out.is_empty() {
        return out;
    }
    let moved: BTreeSet<String> = out.iter().map(|r| r.app.clone()).collect();
    let now = addresses_in(after, (apps, &moved));
    for r in &mut out {
        r.new = (now.iter())
            .filter(|(app, _)| *app == r.app)
            .map(|(_, a)| a.clone())
            .collect();
    }
    out.retain(|r| r.new.iter().all(|a| a.domain != r.old.domain));
    out.sort();
    out
}

/// The addresses of the apps named in `names` that the Lattice routes of `tree` give them,
/// by app name. A route that does not name an app's Service is not read.
fn addresses_in(tree: &Tree, (apps, names): (&[App], &BTreeSet<String>)) -> Vec<(String, Address)> {
    let wanted: Vec<&App> = apps.iter().filter(|a| names.contains(&a.name)).collect();
    let mut out = Vec::new();
    for (rel, text) in tree {
        let named = |a: &&App| text.contains(a.service.as_str());
        if side_of(rel) != Side::Lattice || !wanted.iter().any(named) {
            continue;
        }
        let Some(route) = LatticeRoute::parse(rel, text) else {
            continue;
        };
        for app in wanted.iter().filter(|a| named(a)) {
            if let Some(a) = Address::of_route(&route, |r| is_apps(r, app, apps)) {
                out.push((app.name.clone(), a));
            }
        }
    }
    out
}

/// `direct-callers-moved`: each address a change from `before` to `after` takes away from
/// an app that declares callers of its own, placed on the route that held it.
pub(crate) fn moved_warnings(
    before: &Tree,
    after: &Tree,
    apps: &[App],
    out_dir: &Path,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    for r in released(before, after, apps) {
        // The route that held it, or the app's declaration when the route is gone.
        let span = match after.contains_key(&r.file) {
            true => Span::new(out_dir.join(&r.file), r.line.max(1), 0),
            false => apps
                .iter()
                .find(|a| a.name == r.app)
                .map_or_else(|| Span::file(out_dir), |a| Span::file(&a.file)),
        };
        diags.push(moved_warning(&r).at(span));
    }
    diags
}

fn moved_warning(r: &Release) -> Diagnostic {
    let (app, old) = (&r.app, r.old.show());
    let now = match r.new.as_slice() {
        [] => "it has no other address after it".to_string(),
        _ => format!("from then on they reach it at {}", r.new_addresses()),
    };
    Diagnostic::warning(
        Code::DirectCallersMoved,
        format!(
            "this step takes app `{app}` off {old}, where its callers of its own call it straight (not through Kong); {now}"
        ),
    )
    .help(format!(
        "tell `{app}`'s callers the new address before this step is merged (it answers there already); `latgen status` gives every app's address"
    ))
}

/// Where app `id` answers direct callers as the lock stands: the Lattice service Kong sends
/// it to (the one it is leaving, while a move is in flight), and the one it is moving to,
/// when it is.
pub(crate) fn planned(prepared: &Prepared, id: AppId) -> (Option<Address>, Option<Address>) {
    let (plan, config, app) = (&prepared.plan, &prepared.config, &prepared.apps[id]);
    let outgrown = plan.outgrown.iter().find(|o| o.app == id);
    let moving = plan.lock.moves.get(&app.name);
    let home = outgrown
        .map(|o| o.from)
        .or_else(|| moving.and(plan.lock.apps.get(&app.name).copied()))
        .or_else(|| plan.serving_group(id));
    let to = outgrown.map(|o| o.to).or(moving.map(|m| m.to));
    let at = |group: Option<u32>| -> Option<Address> {
        let service = plan.services.iter().find(|s| match group {
            Some(n) => s.group() == Some(n),
            None => s.app() == Some(id),
        });
        let route = match group {
            Some(n) => config.group_name(n),
            None => app.own_route().0.to_string(),
        };
        let namespace = match (service, group) {
            (Some(s), _) => s.namespace.as_str(),
            (None, Some(_)) => config.lattice.namespace.as_str(),
            (None, None) => app.own_route().1,
        };
        let name = crate::plan::lattice_service::effective(plan, &route, namespace);
        let header = service.is_some_and(|s| s.rules.iter().any(|r| r.by_header));
        let paths = if header {
            vec![format!("{}: {}", config.lattice.dispatch_header, app.name)]
        } else {
            (plan.rules_of(id).iter())
                .map(|r| match r.kind {
                    MatchKind::Exact => format!("{} (exact)", r.path),
                    MatchKind::Prefix => r.path.clone(),
                })
                .collect()
        };
        Some(Address {
            domain: match group {
                Some(n) => config.group_domain(n),
                None => app.own_route().2.to_string(),
            },
            route: format!("{namespace}/{route}"),
            service: name.name,
            paths,
        })
        .filter(|a| !a.domain.is_empty())
    };
    match home {
        Some(n) => (
            at(Some(n)),
            to.filter(|t| *t != n).and_then(|t| at(Some(t))),
        ),
        None => (at(None), None),
    }
}
