//! The apps against each other: one name each, no path or host claimed twice, no two
//! adopted with one route, and no two Lattice service names alike.

use std::collections::{BTreeMap, HashMap};

use super::paths::span;
use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics};
use crate::input::app::{App, MatchKind};
use crate::input::config::Config;
use latgen_sim::platform;
use latgen_sim::routing::Hasher;

/// Two apps adopted with one route (or an adopted route named like a group in the groups'
/// namespace) would write one object twice: the lock was edited by hand, or two imports
/// overlap.
pub(super) fn check_adopted_routes(apps: &[App], config: &Config, diags: &mut Diagnostics) {
    let mut seen: HashMap<(&str, &str), &str, Hasher> = HashMap::default();
    for app in apps.iter().filter(|a| a.adopted.is_some()) {
        let (route, namespace, _) = app.own_route();
        let group =
            namespace == config.lattice.namespace && config.parse_group_name(route).is_some();
        let other = seen.insert((namespace, route), &app.name);
        let problem = match other {
            Some(other) => format!(
                "apps `{other}` and `{}` are adopted with one route, {namespace}/{route}",
                app.name
            ),
            None if group => format!(
                "app `{}` is adopted with route {namespace}/{route}, a shared group's name",
                app.name
            ),
            None => continue,
        };
        diags.push(
            Diagnostic::error(Code::InvalidLock, problem)
                .at(span(&app.file, app.name_pos))
                .help(format!(
                    "put back the `adopted:` entries `latgen import` wrote in {} (one route per app, as it runs)",
                    crate::input::environments::lock_shown(config.env_name())
                )),
        );
    }
}

pub(super) fn check_unique_names(apps: &mut Vec<App>, diags: &mut Diagnostics) {
    // Sorted by name, an app declared twice follows its first declaration.
    let mut first = 0;
    let mut drop = Vec::new();
    for (i, app) in apps.iter().enumerate() {
        if i > 0 && apps[first].name == app.name {
            let other = &apps[first];
            diags.push(
                Diagnostic::error(
                    Code::DuplicateApp,
                    format!("app `{}` is declared twice", app.name),
                )
                .at(span(&app.file, app.name_pos))
                .related(span(&other.file, other.name_pos), "also declared here")
                .help("give each app a unique name (`name:` or the file name)"),
            );
            drop.push(i);
        } else {
            first = i;
        }
    }
    for i in drop.into_iter().rev() {
        apps.remove(i);
    }
}

/// Two apps may not claim the same match on the same host: path-routed apps share Kong's
/// host space, host-routed apps each have their own.
pub(super) fn check_path_claims(apps: &[App], diags: &mut Diagnostics) {
    // Only looked up, never listed: the findings follow the apps' order.
    let mut claims: HashMap<(Option<&str>, MatchKind, &str), &App, Hasher> = HashMap::default();
    let mut hosts: HashMap<&str, &App, Hasher> = HashMap::default();
    for app in apps {
        if let Some(h) = &app.host
            && let Some(other) = hosts.insert(h, app)
        {
            diags.push(
                Diagnostic::error(
                    Code::DuplicateHost,
                    format!(
                        "host `{h}` is served by two apps, {}",
                        pair(&app.name, &other.name)
                    ),
                )
                .at(span(&app.file, app.name_pos))
                .related(span(&other.file, other.name_pos), "the other app")
                .help(
                    "a host gets one dedicated Lattice service: merge the apps or use another host",
                ),
            );
        }
        for p in &app.paths {
            let key = (app.host.as_deref(), p.kind, p.value.as_str());
            if let Some(other) = claims.get(&key) {
                let op = other
                    .paths
                    .iter()
                    .find(|q| q.kind == p.kind && q.value == p.value);
                diags.push(
                    Diagnostic::error(
                        Code::PathConflict,
                        format!(
                            "path `{}` is claimed by two apps, {}",
                            p.value,
                            pair(&app.name, &other.name)
                        ),
                    )
                    .at(span(&app.file, p.pos))
                    .related(
                        span(&other.file, op.map(|q| q.pos).unwrap_or_default()),
                        "claimed here",
                    )
                    .help("each path belongs to one app; remove it from one of them"),
                );
            } else {
                claims.insert(key, app);
            }
        }
    }
}

/// Two apps named in name order: the finding reads the same whichever of their files it
/// is placed on (`check --base` places it on the one the change touched).
fn pair(a: &str, b: &str) -> String {
    let (first, second) = if a <= b { (a, b) } else { (b, a) };
    format!("`{first}` and `{second}`")
}

/// The controller derives the Lattice service name from the route's name and namespace,
/// truncated; two dedicated routes whose names collide would share one Lattice service.
/// With `lattice.serviceNamePrefix` set, names are the plan's business (crate::plan::services).
pub(super) fn check_service_name_collisions(
    apps: &[App],
    config: &Config,
    diags: &mut Diagnostics,
) {
    if config.lattice.service_name_prefix.is_some() {
        return;
    }
    let mut seen: BTreeMap<String, &App> = BTreeMap::new();
    for app in apps.iter().filter(|a| a.host.is_some()) {
        let svc = platform::lattice_service_name(&app.name, &app.namespace);
        if let Some(p) = platform::lattice_service_name_problem(&svc) {
            diags.push(
                Diagnostic::error(
                    Code::InvalidLatticeName,
                    format!("the Lattice service name of app `{}` would be `{svc}`, which {p}", app.name),
                )
                .at(span(&app.file, app.name_pos))
                .help("rename the app (the controller uses 20 characters of it and 18 of the namespace)"),
            );
        }
        if let Some(other) = seen.insert(svc.clone(), app) {
            diags.push(
                Diagnostic::error(
                    Code::LatticeNameCollision,
                    format!(
                        "apps `{}` and `{}` get the same Lattice service name `{svc}`",
                        other.name, app.name
                    ),
                )
                .at(span(&app.file, app.name_pos))
                .related(span(&other.file, other.name_pos), "the other app")
                .help("the controller keeps 20 characters of the route name: make them differ earlier"),
            );
        }
    }
    let groups_ns = &config.lattice.namespace;
    let group_svc = platform::lattice_service_name(&config.group_name(1), groups_ns);
    if let Some(p) = platform::lattice_service_name_problem(&group_svc) {
        diags.push(
            Diagnostic::error(
                Code::InvalidLatticeName,
                format!("shared groups get Lattice service names like `{group_svc}`, which {p}"),
            )
            .help("shorten lattice.groupPrefix or lattice.namespace in latgen.yaml"),
        );
    }
}
