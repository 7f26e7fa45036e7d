//! Canaries (`canary:` in a declaration): the fixture's golden tree with its deploy kit, the
//! kit against Argo CD's Application CRD, and the kit's `jqPathExpressions` run by a real jq
//! (the `jq` binary, as Argo CD runs each one: `del(EXPR)` on the live and the desired
//! object before comparing them): a weight change the Rollout makes to a canary app
//! vanishes from the diff, any other change stays in it, and each expression selects
//! exactly that app's weights; and the kit through a model of Argo CD's sync (`argocd.rs`,
//! `sync.rs`). The jq tests need the `jq` binary, so a plain `cargo test`
//! ignores them and `.ci/run` installs jq and runs them (`cargo test -- --ignored
//! suite::canary::`).

mod argocd;
mod sync;

use super::common;
use super::project;
use argocd::{jq, normalized};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::Value;

/// The canary fixture rendered, with its deploy kit under `deploy/`.
fn rendered_with_kit() -> BTreeMap<PathBuf, String> {
    let built = project::built(&common::fixture("canary"));
    let config = &built.prepared.config;
    let deploy = config
        .deploy
        .as_ref()
        .expect("the fixture has a deploy kit");
    let mut files = crate::suite::project::texts(&built.output.files);
    files.insert(PathBuf::from("latgen.lock"), built.prepared.lock_text());
    files.extend(latgen::render::deploy_kit::kit(
        deploy,
        config,
        &built.output.files,
        Path::new("generated"),
    ));
    files
}

#[test]
fn canary_fixture_matches_its_golden_tree() {
    let dir = common::fixture("canary");
    common::assert_tree_snapshot(&dir.join("expected"), &rendered_with_kit());
}

#[test]
fn the_canary_kit_fits_argocds_crds() {
    let tmp = common::scratch();
    for (rel, text) in rendered_with_kit() {
        if rel.starts_with("deploy") {
            let p = tmp.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
    }
    let docs = super::deploy::kit_docs(tmp.path());
    super::deploy::assert_fits_the_crds(&docs);
    let app = &docs["application-lattice.yaml"];
    assert_eq!(
        app["spec"]["syncPolicy"]["syncOptions"],
        serde_json::json!(["ApplyOutOfSyncOnly=true"])
    );
    // The Kong side has no weights to ignore.
    assert!(docs["application-kong.yaml"]["spec"]["ignoreDifferences"].is_null());
}

/// The Lattice Application's ignoreDifferences entries: (route name, expressions).
fn ignores(files: &BTreeMap<PathBuf, String>) -> Vec<(String, Vec<String>)> {
    let app: Value = serde_saphyr::from_str(&files[Path::new("deploy/application-lattice.yaml")])
        .expect("the Application parses");
    let entries = app["spec"]["ignoreDifferences"]
        .as_array()
        .expect("entries");
    entries
        .iter()
        .map(|e| {
            assert_eq!(e["group"], "gateway.networking.k8s.io");
            assert_eq!(e["kind"], "HTTPRoute");
            let exprs = e["jqPathExpressions"].as_array().unwrap();
            let exprs = exprs.iter().map(|x| x.as_str().unwrap().to_string());
            (e["name"].as_str().unwrap().to_string(), exprs.collect())
        })
        .collect()
}

fn route(files: &BTreeMap<PathBuf, String>, file: &str) -> Value {
    serde_saphyr::from_str(&files[Path::new(file)]).expect("the route parses")
}

/// Sets the weight of every backendRef named `service` in `route`.
fn set_weight(route: &mut Value, service: &str, weight: i64) -> usize {
    let mut n = 0;
    for rule in route["spec"]["rules"].as_array_mut().unwrap() {
        for b in rule["backendRefs"].as_array_mut().unwrap() {
            if b["name"] == service {
                b["weight"] = weight.into();
                n += 1;
            }
        }
    }
    n
}

/// The weight paths of the backendRefs named `services`, as jq's `path` gives them.
fn weight_paths(route: &Value, services: &[&str]) -> Vec<Value> {
    let mut out = Vec::new();
    for (i, rule) in route["spec"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        for (j, b) in rule["backendRefs"].as_array().unwrap().iter().enumerate() {
            if services.iter().any(|s| b["name"] == *s) {
                out.push(serde_json::json!([
                    "spec",
                    "rules",
                    i,
                    "backendRefs",
                    j,
                    "weight"
                ]));
            }
        }
    }
    out
}

#[test]
fn the_kit_ignores_one_entry_per_canary_route() {
    let files = rendered_with_kit();
    let names: Vec<String> = ignores(&files).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["group-01", "www"]);
}

#[test]
#[ignore = "needs jq: cargo test -- --ignored suite::canary::"]
fn a_rollouts_weight_change_is_out_of_the_diff() {
    let files = rendered_with_kit();
    let (_, exprs) = ignores(&files).remove(0);
    let desired = route(&files, "lattice/httproute-group-01.yaml");
    let mut live = desired.clone();
    assert_eq!(set_weight(&mut live, "shop-web", 70), 2);
    assert_eq!(set_weight(&mut live, "shop-web-canary", 30), 2);
    assert_eq!(set_weight(&mut live, "search-canary", 100), 1);
    assert_ne!(live, desired);
    assert_eq!(normalized(&live, &exprs), normalized(&desired, &exprs));
}

#[test]
#[ignore = "needs jq: cargo test -- --ignored suite::canary::"]
fn a_weight_change_to_an_app_without_a_canary_stays_in_the_diff() {
    let files = rendered_with_kit();
    let (_, exprs) = ignores(&files).remove(0);
    let desired = route(&files, "lattice/httproute-group-01.yaml");
    let mut live = desired.clone();
    assert_eq!(set_weight(&mut live, "cart", 0), 1);
    assert_ne!(normalized(&live, &exprs), normalized(&desired, &exprs));
}

#[test]
#[ignore = "needs jq: cargo test -- --ignored suite::canary::"]
fn each_expression_selects_exactly_its_apps_weights() {
    let files = rendered_with_kit();
    let (_, exprs) = ignores(&files).remove(0);
    let desired = route(&files, "lattice/httproute-group-01.yaml");
    let selected = |e: &str| jq(&format!("[path({e})]"), &desired);
    assert_eq!(
        selected(&exprs[0]),
        Value::Array(weight_paths(&desired, &["shop-web", "shop-web-canary"]))
    );
    assert_eq!(
        selected(&exprs[1]),
        Value::Array(weight_paths(&desired, &["search", "search-canary"]))
    );
}

/// Narrower than the Rollout itself: a backendRef of the same name in another namespace
/// (what `canary-name-clash` refuses) is not selected.
#[test]
#[ignore = "needs jq: cargo test -- --ignored suite::canary::"]
fn an_expression_leaves_a_same_named_service_of_another_namespace_alone() {
    let files = rendered_with_kit();
    let (_, exprs) = ignores(&files).remove(0);
    let mut desired = route(&files, "lattice/httproute-group-01.yaml");
    let rules = desired["spec"]["rules"].as_array_mut().unwrap();
    let mut stranger = rules[0].clone();
    stranger["backendRefs"] = serde_json::json!([{
        "group": "", "kind": "Service", "name": "shop-web",
        "namespace": "team-other", "port": 3000, "weight": 1
    }]);
    rules.push(stranger);
    let n = rules.len() - 1;
    let paths = jq(&format!("[path({})]", exprs[0]), &desired);
    let paths = paths.as_array().unwrap();
    assert_eq!(paths.len(), 4, "{paths:?}");
    assert!(
        paths.iter().all(|p| p[2] != n),
        "the other namespace's weight is selected: {paths:?}"
    );
}

/// On a dedicated route (no namespace on its backendRefs: they are in the route's own).
#[test]
#[ignore = "needs jq: cargo test -- --ignored suite::canary::"]
fn a_dedicated_routes_canary_weights_are_out_of_the_diff() {
    let files = rendered_with_kit();
    let (name, exprs) = ignores(&files).remove(1);
    assert_eq!(name, "www");
    let desired = route(&files, "lattice/httproute-www.yaml");
    let selected = jq(&format!("[path({})]", exprs[0]), &desired);
    assert_eq!(
        selected,
        Value::Array(weight_paths(&desired, &["www", "www-canary"]))
    );
    let mut live = desired.clone();
    set_weight(&mut live, "www-canary", 50);
    assert_eq!(normalized(&live, &exprs), normalized(&desired, &exprs));
}

/// A canary's Service is a target group of its own: a group of two target groups holds
/// one canary app, and the next app opens a group.
#[test]
fn a_canary_counts_as_a_target_group_in_packing() {
    let tmp = common::scratch();
    let dir = tmp.path();
    std::fs::write(
        dir.join("latgen.yaml"),
        "quotas:\n  targetGroupsPerService: 2\n",
    )
    .unwrap();
    common::app(
        dir,
        "a",
        "namespace: web\nservice: { name: a, port: 80 }\npaths: [/a]\ncanary: { service: a-canary, readinessGate: none }\n",
    );
    common::app(
        dir,
        "b",
        "namespace: web\nservice: { name: b, port: 80 }\npaths: [/b]\n",
    );
    let built = project::built(dir);
    let groups: Vec<usize> = (built.prepared.plan.groups.iter())
        .map(|g| g.apps.len())
        .collect();
    assert_eq!(groups, [1, 1]);
}

/// `trace` names both backends of a canary app's rule with the weights the manifests commit.
#[test]
fn trace_shows_both_backends_and_their_weights() {
    let tmp = common::copy_project(&common::fixture("canary"));
    let dir = tmp.path();
    let run = common::latgen(dir, &["render"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let human = common::latgen(dir, &["trace", "https://any.example/shop/x"]);
    assert_eq!(human.code, Some(0), "{}", human.stderr);
    assert!(
        human.stdout.contains(
            "backends  Service team-shop/shop-web, port 3000 (weight 100)\n          Service team-shop/shop-web-canary, port 3000 (weight 0)\n"
        ),
        "{}",
        human.stdout
    );
    let json = common::latgen(
        dir,
        &["trace", "https://www.example.com/", "--format", "json"],
    );
    let v: Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(
        v["backends"],
        serde_json::json!([
            { "namespace": "team-web", "name": "www", "port": 80, "weight": 100 },
            { "namespace": "team-web", "name": "www-canary", "port": 80, "weight": 0 },
        ])
    );
    // An app without a canary has one backend, and no list.
    let json = common::latgen(
        dir,
        &["trace", "https://any.example/cart", "--format", "json"],
    );
    let v: Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(v["backends"], serde_json::json!([]));
    assert_eq!(v["backend"]["name"], "cart");
}

/// `canary-route-change` is for a step that rewrites a canary's route: a step that adds a
/// route of its own beside it (a host-routed app) leaves the canaries' routes as they are,
/// and check says nothing of them.
#[test]
fn a_step_beside_the_canaries_routes_does_not_warn() {
    let tmp = common::copy_project(&common::fixture("canary"));
    let dir = tmp.path();
    common::git(dir, &["init", "-q"]);
    assert_eq!(common::latgen(dir, &["render"]).code, Some(0));
    common::git(dir, &["add", "-A"]);
    common::git(dir, &["commit", "-q", "-m", "base"]);
    common::app(
        dir,
        "docs",
        "namespace: team-web\nservice: { name: docs, port: 80 }\nhost: docs.example.com\n",
    );
    let render = common::latgen(dir, &["render", "--base", "HEAD"]);
    assert_eq!(render.code, Some(0), "{}", render.stderr);
    let check = common::latgen(dir, &["check", "--base", "HEAD", "--format", "json"]);
    assert!(
        !check.stdout.contains("canary-route-change"),
        "{}",
        check.stdout
    );
    // The step did change the Lattice side: a route was written.
    assert!(dir.join("generated/lattice/httproute-docs.yaml").is_file());
}
