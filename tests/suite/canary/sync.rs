//! The deploy kit through the model of Argo CD's sync ([`super::argocd`]), on the canary
//! fixture's group route `group-01`: two canary apps (`shop`, `search`) and one without
//! (`cart`). What the kit must give, on Argo CD v3.5.1 and on master:
//!
//! - (A) a Git change to the group is applied when no canary runs;
//! - (B) a running canary's weights are not reset by a sync that does not change its route
//!   in Git, even when the Rollout takes a step while the sync runs;
//! - (C) a Git change to the route of a running canary is applied, never held back behind
//!   a Synced status (it resets the canary: `check --base` warns of such a step).
//!
//! Each case also runs on the kit before this one (`ignoreDifferences` on the weights and
//! `RespectIgnoreDifferences=true`) and on the designs a reader might try instead, which
//! fail it: that is what the case guards against. The model runs jq, so these tests are
//! ignored unless asked for (`cargo test -- --ignored suite::canary::`).

use super::argocd::{Cluster, IN_PROGRESS, Kit};
use super::{common, project};

use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::Value;

const SHOP: (&str, &str) = ("shop-web", "shop-web-canary");
const SEARCH: (&str, &str) = ("search", "search-canary");

/// An app that joins `group-01` (the planner puts it in the group with room).
const WISHLIST: &str =
    "namespace: team-shop\nservice: { name: wishlist, port: 8080 }\npaths: [/wishlist]\n";
/// An app on a host of its own: a route of its own, `group-01` unchanged.
const DOCS: &str =
    "namespace: team-web\nservice: { name: docs, port: 80 }\nhost: docs.example.com\n";

/// The Lattice routes in Git and the deploy kit, for the canary fixture with `extra` apps.
struct Git {
    routes: Vec<Value>,
    kit: Kit,
}

fn git(extra: &[(&str, &str)]) -> Git {
    let tmp = common::copy_project(&common::fixture("canary"));
    for (name, body) in extra {
        common::app(tmp.path(), name, body);
    }
    let built = project::built(tmp.path());
    let config = &built.prepared.config;
    let deploy = config.deploy.as_ref().expect("the fixture has a kit");
    let kit = latgen::render::deploy_kit::kit(
        deploy,
        config,
        &built.output.files,
        Path::new("generated"),
    );
    let routes = (built.output.files.iter())
        .filter(|(p, _)| p.starts_with("lattice") && p.to_string_lossy().contains("httproute-"))
        .map(|(_, text)| serde_saphyr::from_str(text).expect("a route parses"))
        .collect();
    let kit = Kit::read(&kit[Path::new("deploy/application-lattice.yaml")]);
    Git { routes, kit }
}

/// The kit before this one: the weights ignored, and `RespectIgnoreDifferences=true`.
fn former(kit: &Kit) -> Kit {
    Kit {
        options: vec!["RespectIgnoreDifferences=true".to_string()],
        ..kit.clone()
    }
}

/// The kit without `ApplyOutOfSyncOnly=true`: every sync applies every route.
fn applying_all(kit: &Kit) -> Kit {
    Kit {
        options: vec![],
        ..kit.clone()
    }
}

/// What the plugin's docs suggest (v0.15.0, `docs/features/multiple-routes.md`): all of
/// `.spec.rules` ignored while the in-progress label is on the route, on top of this kit.
fn rules_ignored_while_labelled(kit: &Kit) -> Kit {
    let mut kit = kit.clone();
    let expr =
        format!("select(.metadata.labels[\"{IN_PROGRESS}\"] == \"in-progress\") | .spec.rules");
    kit.ignores
        .entry("group-01".to_string())
        .or_default()
        .push(expr);
    kit
}

fn route<'a>(routes: &'a [Value], name: &str) -> &'a Value {
    routes
        .iter()
        .find(|r| r["metadata"]["name"] == name)
        .unwrap()
}

/// The Services of a route's backendRefs, rule by rule, with their weights.
fn backends(route: &Value) -> Vec<Vec<(String, i64)>> {
    let rules = route["spec"]["rules"].as_array().unwrap();
    rules
        .iter()
        .map(|r| {
            let refs = r["backendRefs"].as_array().unwrap();
            refs.iter()
                .map(|b| {
                    (
                        b["name"].as_str().unwrap().to_string(),
                        b["weight"].as_i64().unwrap(),
                    )
                })
                .collect()
        })
        .collect()
}

/// The weight of every backendRef named `service` in the live route.
fn weights(cluster: &Cluster, route: &str, service: &str) -> Vec<i64> {
    backends(cluster.route(route))
        .into_iter()
        .flatten()
        .filter(|(n, _)| n == service)
        .map(|(_, w)| w)
        .collect()
}

/// A cluster synced to the fixture as it is, with `kit`.
fn deployed(kit: &Kit, before: &Git) -> Cluster {
    let mut cluster = Cluster::default();
    cluster.sync(kit, &before.routes);
    assert!(cluster.all_synced(kit, &before.routes));
    cluster
}

/// (A) with `kit`: a new app joins `group-01` while no canary runs. Returns whether the
/// sync put its rule live and left the Application Synced.
fn joins_with_no_canary_running(kit: impl Fn(&Kit) -> Kit) -> bool {
    let (before, after) = (git(&[]), git(&[("wishlist", WISHLIST)]));
    let kit = kit(&after.kit);
    assert_ne!(
        route(&before.routes, "group-01"),
        route(&after.routes, "group-01")
    );
    let mut cluster = deployed(&kit, &before);
    cluster.sync(&kit, &after.routes);
    let want = backends(route(&after.routes, "group-01"));
    backends(cluster.route("group-01")) == want && cluster.all_synced(&kit, &after.routes)
}

#[test]
#[ignore = "needs jq: cargo test -- --ignored suite::canary::"]
fn a_new_app_in_a_canary_group_goes_live_when_no_canary_runs() {
    assert!(joins_with_no_canary_running(Kit::clone));
}

/// The defect this kit fixes: the sync applies live's `spec.rules` whole, without the new
/// app's rule, every time, and the Application stays OutOfSync.
#[test]
#[ignore = "needs jq: cargo test -- --ignored suite::canary::"]
fn the_former_kit_drops_a_new_app_from_a_canary_group() {
    assert!(!joins_with_no_canary_running(former));
}

/// What (B) ends with: whether `group-01` showed Synced while both canaries ran, and the
/// shop and search canaries' weights after the sync.
#[derive(Debug, PartialEq, Eq)]
struct Through {
    synced_while_running: bool,
    shop: Vec<i64>,
    search: Vec<i64>,
}

/// (B) with `kit`: both canaries of `group-01` run; Git gains an app on a route of its own;
/// while the sync runs, the shop Rollout takes its next step (30 to 50).
fn canaries_through_another_routes_sync(kit: impl Fn(&Kit) -> Kit) -> Through {
    let (before, after) = (git(&[]), git(&[("docs", DOCS)]));
    let kit = kit(&after.kit);
    assert_eq!(
        route(&before.routes, "group-01"),
        route(&after.routes, "group-01")
    );
    let mut cluster = deployed(&kit, &before);
    cluster.set_weight("group-01", SHOP, 30);
    cluster.set_weight("group-01", SEARCH, 10);
    let synced_while_running = cluster.is_synced(&kit, route(&after.routes, "group-01"));
    let sync = cluster.sync_racing(&kit, &after.routes, |c| {
        c.set_weight("group-01", SHOP, 50);
    });
    assert!(sync.applied.contains(&"docs".to_string()), "{sync:?}");
    Through {
        synced_while_running,
        shop: weights(&cluster, "group-01", "shop-web-canary"),
        search: weights(&cluster, "group-01", "search-canary"),
    }
}

#[test]
#[ignore = "needs jq: cargo test -- --ignored suite::canary::"]
fn a_sync_of_another_route_leaves_the_running_canaries_alone() {
    let want = Through {
        synced_while_running: true,
        shop: vec![50, 50],
        search: vec![10],
    };
    assert_eq!(canaries_through_another_routes_sync(Kit::clone), want);
}

/// The former kit applies every route, `group-01` as it read it: the shop canary is set
/// back to the weight of before the Rollout's step.
#[test]
#[ignore = "needs jq: cargo test -- --ignored suite::canary::"]
fn the_former_kit_sets_a_running_canary_back_a_step() {
    let want = Through {
        synced_while_running: true,
        shop: vec![30, 30],
        search: vec![10],
    };
    assert_eq!(canaries_through_another_routes_sync(former), want);
}

/// Without `ApplyOutOfSyncOnly=true`, the sync applies `group-01` as in Git: both canaries
/// lose their traffic.
#[test]
#[ignore = "needs jq: cargo test -- --ignored suite::canary::"]
fn applying_every_route_resets_the_running_canaries() {
    let want = Through {
        synced_while_running: true,
        shop: vec![0, 0],
        search: vec![0],
    };
    assert_eq!(canaries_through_another_routes_sync(applying_all), want);
}

/// The plugin's suggestion deletes `.spec.rules` from the live route only (the route in
/// Git has no label), so while a canary runs the route shows OutOfSync, all its rules the
/// difference, and the sync applies it as in Git: both canaries lose their traffic (and
/// self-heal would do the same with no change in Git at all).
#[test]
#[ignore = "needs jq: cargo test -- --ignored suite::canary::"]
fn ignoring_the_rules_while_labelled_resets_the_running_canaries() {
    let want = Through {
        synced_while_running: false,
        shop: vec![0, 0],
        search: vec![0],
    };
    assert_eq!(
        canaries_through_another_routes_sync(rules_ignored_while_labelled),
        want
    );
}

/// (C) with `kit`: both canaries of `group-01` run and a new app joins the group in Git.
/// Returns whether the route was OutOfSync before the sync, whether the sync put the new
/// rule live, and the cluster after it.
fn joins_while_canaries_run(kit: impl Fn(&Kit) -> Kit) -> (bool, bool, Cluster, Kit, Git) {
    let (before, after) = (git(&[]), git(&[("wishlist", WISHLIST)]));
    let kit = kit(&after.kit);
    let mut cluster = deployed(&kit, &before);
    cluster.set_weight("group-01", SHOP, 30);
    cluster.set_weight("group-01", SEARCH, 10);
    let target = route(&after.routes, "group-01");
    let out_of_sync = !cluster.is_synced(&kit, target);
    cluster.sync(&kit, &after.routes);
    let live = backends(cluster.route("group-01"));
    let has_rule = live.iter().flatten().any(|(n, _)| n == "wishlist");
    (out_of_sync, has_rule, cluster, kit, after)
}

/// The change goes live and the Application is Synced; the canaries are reset to Git's
/// weights (all to the stable Services), which is what `canary-route-change` warns of.
#[test]
#[ignore = "needs jq: cargo test -- --ignored suite::canary::"]
fn a_change_to_a_running_canarys_route_goes_live() {
    let (out_of_sync, has_rule, cluster, kit, after) = joins_while_canaries_run(Kit::clone);
    assert!(out_of_sync, "the change is shown");
    assert!(has_rule, "the change is applied");
    assert!(cluster.all_synced(&kit, &after.routes));
    assert_eq!(weights(&cluster, "group-01", "shop-web-canary"), [0, 0]);
    assert_eq!(weights(&cluster, "group-01", "search-canary"), [0]);
    // The plugin's label is no field of Git's: the apply leaves it.
    let labels = &cluster.route("group-01")["metadata"]["labels"];
    assert_eq!(labels[IN_PROGRESS], "in-progress");
}

#[test]
#[ignore = "needs jq: cargo test -- --ignored suite::canary::"]
fn the_former_kit_holds_back_a_change_to_a_running_canarys_route() {
    let (out_of_sync, has_rule, cluster, kit, after) = joins_while_canaries_run(former);
    assert!(out_of_sync);
    assert!(!has_rule);
    assert!(!cluster.all_synced(&kit, &after.routes));
}
