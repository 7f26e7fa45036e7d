//! Canaries on shared routes (`canary:` in a declaration). Argo Rollouts' Gateway API
//! plugin (argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi, `pkg/plugin/
//! httproute.go`) finds the backendRefs whose weights it sets by Service name alone, in
//! every rule of each route the Rollout lists, with no namespace check, and writes the
//! whole route back. On a route shared by many apps that is safe only while no other app
//! of the route has a Service of the same name; and while an app moves between groups its
//! rules are in two routes, both of which the Rollout must list. The AWS controller injects
//! the Lattice readiness gate only into a pod created while a Service of a Lattice route
//! selects it (`pkg/webhook/pod_readiness_gate_injector.go`), which a canary Service does
//! not for its new pods: Argo Rollouts switches the canary Service's selector to the new
//! ReplicaSet only once it has an available pod (`ensureSVCTargets` in
//! `rollout/service.go`). A gate in the pod template would wait for Lattice, which cannot
//! see the pod before that switch: a deadlock.

use std::collections::BTreeMap;

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::app::App;
use crate::plan::prepared::Prepared;
use latgen_sim::routing::Network;

fn at_app(app: &App) -> Span {
    Span::new(&app.file, app.name_pos.line, app.name_pos.column)
}

/// Every canary finding of the project: name clashes in the committed routes, canaries
/// without a readiness-gate plan, canaries in a move.
pub(crate) fn canary_findings(net: &Network, prepared: &Prepared) -> Diagnostics {
    let mut diags = Diagnostics::new();
    if prepared.apps.iter().all(|a| a.canary.is_none()) {
        return diags;
    }
    diags.extend(name_clashes(net, &prepared.apps));
    for app in prepared.apps.iter().filter(|a| a.canary.is_some()) {
        if app
            .canary
            .as_ref()
            .is_some_and(|c| c.readiness_gate.is_none())
        {
            diags.push(readiness_gate(app));
        }
        if let Some(d) = in_move(app, prepared) {
            diags.push(d);
        }
    }
    diags
}

/// Apps whose Services share a name with a canary app's stable or canary Service in one
/// Lattice route, from the committed routes: the Rollout would set their weights too.
fn name_clashes(net: &Network, apps: &[App]) -> Diagnostics {
    let mut diags = Diagnostics::new();
    // (namespace, Service) → the app it belongs to, stable or canary.
    let mut owner: BTreeMap<(&str, &str), &App> = BTreeMap::new();
    for app in apps {
        owner.insert((&app.namespace, &app.service), app);
        if let Some(c) = &app.canary {
            owner.insert((&app.namespace, &c.service), app);
        }
    }
    for route in &net.lattice {
        // Service name → the apps of this route with a Service of that name.
        let mut by_name: BTreeMap<&str, Vec<&App>> = BTreeMap::new();
        let refs = route
            .rules
            .iter()
            .flat_map(|r| r.weighted.iter().map(|(b, _)| b));
        for b in refs {
            if let Some(app) = owner.get(&(b.namespace.as_str(), b.name.as_str())) {
                let list = by_name.entry(b.name.as_str()).or_default();
                if !list.iter().any(|a| a.name == app.name) {
                    list.push(app);
                }
            }
        }
        for (service, list) in by_name {
            let Some(canary) = list.iter().find(|a| a.canary.is_some()) else {
                continue;
            };
            for other in list.iter().filter(|a| a.name != canary.name) {
                diags.push(
                    Diagnostic::error(
                        Code::CanaryNameClash,
                        format!(
                            "apps `{}` ({}) and `{}` ({}) both have a Service named `{service}` in route `{}`: Argo Rollouts finds the backends whose weights it sets by name alone, so `{}`'s canary would move `{}`'s traffic too",
                            canary.name, canary.namespace, other.name, other.namespace, route.name, canary.name, other.name
                        ),
                    )
                    .at(at_app(other))
                    .help(format!(
                        "rename one of the Services, or move `{}` to another group (`latgen move {} --group N`)",
                        other.name, other.name
                    )),
                );
            }
        }
    }
    diags
}

fn readiness_gate(app: &App) -> Diagnostic {
    Diagnostic::warning(
        Code::CanaryReadinessGate,
        format!(
            "app `{}` has a canary Service, so new canary pods get no Lattice readiness gate: the AWS controller adds it only to a pod created while a Service of a Lattice route already selects it, and Argo Rollouts points the canary Service at new pods only once one is available; the canary can take traffic before Lattice finds its pods healthy (errors), and a gate written into the pod template deadlocks the rollout instead",
            app.name
        ),
    )
    .at(at_app(app))
    .help("use one Service and a pod-count canary (no `canary:`), whose new pods get the gate; or pause the Rollout before its first setWeight for as long as Lattice takes to find a target healthy, and say so with `canary.readinessGate: none`")
}

/// A canary app in the middle of a move: its rules are in both groups' routes until the
/// move finishes.
fn in_move(app: &App, prepared: &Prepared) -> Option<Diagnostic> {
    let lock = &prepared.plan.lock;
    let to = lock.moves.get(&app.name)?.to;
    let from = *lock.apps.get(&app.name)?;
    let (from, to) = (
        prepared.config.group_name(from),
        prepared.config.group_name(to),
    );
    Some(
        Diagnostic::warning(
            Code::CanaryInMove,
            format!(
                "app `{}` has a canary and is moving from `{from}` to `{to}`: until the move finishes its rules are in both routes, and a Rollout that lists only one of them stops shifting the app's traffic when Kong switches to the other",
                app.name
            ),
        )
        .at(at_app(app))
        .help(format!(
            "list both routes in the Rollout's `trafficRouting.plugins.argoproj-labs/gatewayAPI.httpRoutes` (`{from}` and `{to}`, namespace `{}`) until the move finishes, then only `{to}`; or finish the move before the next canary",
            prepared.config.lattice.namespace
        )),
    )
}
