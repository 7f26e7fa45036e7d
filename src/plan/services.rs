//! Stage 3, plan, its last step: the name of the Lattice service behind each group route
//! and host-routed (dedicated) route of a plan.
//!
//! The controller names a service from 20 characters of the route's name and 18 of its
//! namespace unless the route carries the `service-name-override` annotation when it is
//! created; a later change to the annotation is ignored. So a name is chosen once, when
//! its route first appears in the plan, and the lock keeps it: `latgen` (the annotation,
//! from `lattice.serviceNamePrefix`) or `controller` (a route created without it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::app::App;
use crate::input::config::{Config, PLACEHOLDER};
use crate::input::lock::{Lock, NamedBy, ServiceName};
use crate::plan::Plan;
use crate::plan::lattice_service::{self, LatticeService, Owner};
use latgen_sim::platform;

/// The prefix to name new services with: set, not the placeholder, and valid.
fn usable_prefix(config: &Config) -> Option<&str> {
    config
        .lattice
        .service_name_prefix
        .as_deref()
        .filter(|p| !p.contains(PLACEHOLDER) && crate::input::config::prefix_problem(p).is_none())
}

/// The name latgen gives a new route's service: `<prefix>-g01` for group 1,
/// `<prefix>-<app>` for a host-routed app.
pub(crate) fn latgen_name(prefix: &str, service: &LatticeService, apps: &[App]) -> String {
    match service.owner {
        Owner::Group(n) => format!("{prefix}-g{n:02}"),
        Owner::App(id) => format!("{prefix}-{}", apps[id].name),
    }
}

/// The override annotation's value for preview group `number`: `<prefix>-pv01` when
/// `lattice.serviceNamePrefix` is usable, so that two projects sharing a service network
/// name their preview services apart, as their groups; None (the controller's name)
/// without one. Preview groups come and go with their previews, so the name is not kept in
/// the lock.
pub(crate) fn preview_override(config: &Config, number: u32) -> Option<String> {
    usable_prefix(config).map(|p| format!("{p}-pv{number:02}"))
}

/// Records the Lattice service name of every route of the plan in its lock, and so in its
/// service records: the lock's name for a route it knows, and a name chosen now for a new
/// one. Nothing is recorded while no prefix was ever set (the lock keeps its earlier
/// form). A lock without a `services:` section that exists (written before names were
/// recorded) marks the routes it shows as already created (its groups, and every
/// host-routed app) as `controller`.
pub fn assign(
    plan: &mut Plan,
    apps: &[App],
    lock: &Lock,
    config: &Config,
    diags: &mut Diagnostics,
) {
    let prefix = usable_prefix(config);
    // The placeholder `init` wrote: names are latgen's business, none is chosen yet.
    let pending = config
        .lattice
        .service_name_prefix
        .as_deref()
        .is_some_and(|p| p.contains(PLACEHOLDER));
    if lock.services.is_none() && prefix.is_none() && !pending {
        return;
    }
    let recorded = lock.services.clone().unwrap_or_default();
    let upgraded = lock.existed && lock.services.is_none();
    let existing_groups: BTreeSet<u32> = lock
        .apps
        .values()
        .map(|g| g.0)
        .chain(lock.moves.values().map(|m| m.0.to))
        .collect();
    let mut services = BTreeMap::new();
    for r in &plan.services {
        // An adopted route exists already, named by the controller: its name is kept.
        let adopted = r.app().is_some_and(|id| apps[id].adopted.is_some());
        let existed =
            adopted || (upgraded && r.group().is_none_or(|n| existing_groups.contains(&n)));
        let name = match (recorded.get(&r.route), prefix) {
            (Some(s), _) => s.clone(),
            (None, Some(prefix)) if !existed => {
                let name = latgen_name(prefix, r, apps);
                if let Some(problem) = platform::lattice_service_name_problem(&name) {
                    diags.push(new_name_problem(r, &name, &problem, apps));
                    continue;
                }
                ServiceName {
                    name,
                    set: NamedBy::Latgen,
                }
            }
            (None, None) if pending && !existed => continue,
            _ => ServiceName {
                name: platform::lattice_service_name(&r.route, &r.namespace),
                set: NamedBy::Controller,
            },
        };
        services.insert(r.route.clone(), name);
    }
    plan.lock.services = Some(services);
    lattice_service::rename(plan);
    diags.extend(collisions(plan, apps, config));
}

/// A new route's service name that Lattice would refuse: the route is not created.
fn new_name_problem(r: &LatticeService, name: &str, problem: &str, apps: &[App]) -> Diagnostic {
    let (what, at, help) = match r.app() {
        Some(id) => (
            format!("app `{}`", apps[id].name),
            Some(Span::new(
                &apps[id].file,
                apps[id].name_pos.line,
                apps[id].name_pos.column,
            )),
            "shorten lattice.serviceNamePrefix in latgen.yaml or the app's name (the name is fixed once the route exists)",
        ),
        None => (
            format!("group route `{}`", r.route),
            None,
            "shorten lattice.serviceNamePrefix in latgen.yaml (the name is fixed once the route exists)",
        ),
    };
    let d = Diagnostic::error(
        Code::InvalidLatticeName,
        format!("the Lattice service name latgen would give {what} is `{name}`, which {problem}"),
    )
    .help(help);
    match at {
        Some(at) => d.at(at),
        None => d,
    }
}

/// Two routes of the plan whose services have one name: they would share one service.
fn collisions(plan: &Plan, apps: &[App], config: &Config) -> Diagnostics {
    let lock = crate::input::environments::lock_shown(config.env_name());
    let mut diags = Diagnostics::new();
    // Preview groups first: an app's route that takes a preview group's name is the finding.
    let mut seen: BTreeMap<String, String> = (plan.previews.groups.iter())
        .map(|g| (g.name.name.clone(), g.route()))
        .collect();
    for r in &plan.services {
        let s = &r.name;
        if let Some(other) = seen.insert(s.name.clone(), r.route.clone()) {
            let d = Diagnostic::warning(
                Code::ServiceNameCollision,
                format!(
                    "routes `{other}` and `{}` both have the Lattice service name `{}` ({lock}, services): they would share one service",
                    r.route, s.name
                ),
            )
            .help("rename the app or the group prefix before the route is created, or delete one route and let latgen name it anew");
            diags.push(match r.app() {
                Some(id) => d.at(Span::new(
                    &apps[id].file,
                    apps[id].name_pos.line,
                    apps[id].name_pos.column,
                )),
                None => d,
            });
        }
    }
    diags
}

/// Routes of this plan whose service names another project's lock records too: two
/// projects whose routes share a service network would share one service.
pub(crate) fn collisions_with(plan: &Plan, other: &Lock, other_file: &Path) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let theirs: BTreeMap<&str, &str> = other
        .services
        .iter()
        .flatten()
        .map(|(route, s)| (s.name.as_str(), route.as_str()))
        .collect();
    for r in &plan.services {
        let s = &r.name;
        if let Some(their_route) = theirs.get(s.name.as_str()) {
            diags.push(
                Diagnostic::warning(
                    Code::ServiceNameCollision,
                    format!(
                        "route `{}` has the Lattice service name `{}`, as does route `{their_route}` in {} (another project's lock): in one service network they would share one service",
                        r.route,
                        s.name,
                        other_file.display()
                    ),
                )
                .at(Span::file(other_file))
                .help("give the two projects different lattice.serviceNamePrefix values (names already recorded stay: delete and recreate a route to rename its service)"),
            );
        }
    }
    diags
}
