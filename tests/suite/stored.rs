//! Every object latgen writes is in the form the API server stores: applying the CRDs'
//! structural defaults (Gateway API v1.6.1 HTTPRoute and ReferenceGrant, the AWS
//! controller's TargetGroupPolicy and IAMAuthPolicy) and Kubernetes' Service defaulting to it adds nothing.
//! Otherwise the live object never equals the manifest, and Argo CD shows the Application
//! OutOfSync right after every sync.
//!
//! Checked on the example, on the benchmark's input (10,000 apps in an optimized build) and
//! on property-test inputs.

use super::common;
use super::generate;
use super::project;

use std::collections::BTreeMap;
use std::path::PathBuf;

use latgen::input::app::{App, HealthCheck, MatchKind, PathMatch, Pos};
use latgen::input::config::{Config, Protocol};
use latgen_sim::stored::{Added, prune_to_defaults, structural_default};
use proptest::prelude::*;
use serde_json::Value;

/// The `openAPIV3Schema` of version `version` of the CRD in `file` (under tests/data/),
/// without `status`: manifests do not set it (a subresource the controllers write), and
/// Argo CD leaves it out of its diff.
fn crd_schema(file: &str, version: &str) -> Value {
    let text = std::fs::read_to_string(common::root().join("tests/data").join(file)).unwrap();
    let crd: Value = serde_saphyr::from_str(&text).unwrap();
    let v = crd["spec"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == version)
        .unwrap_or_else(|| panic!("{file} serves {version}"));
    let mut schema = v["schema"]["openAPIV3Schema"].clone();
    schema["properties"]
        .as_object_mut()
        .unwrap()
        .remove("status");
    schema
}

/// The CRDs by apiVersion and kind.
fn crds() -> BTreeMap<(&'static str, &'static str), Value> {
    BTreeMap::from([
        (
            ("gateway.networking.k8s.io/v1", "HTTPRoute"),
            crd_schema(
                "gateway-api/gateway.networking.k8s.io_httproutes.yaml",
                "v1",
            ),
        ),
        (
            ("gateway.networking.k8s.io/v1", "ReferenceGrant"),
            crd_schema(
                "gateway-api/gateway.networking.k8s.io_referencegrants.yaml",
                "v1",
            ),
        ),
        (
            (
                "application-networking.k8s.aws/v1alpha1",
                "TargetGroupPolicy",
            ),
            crd_schema(
                "aws/application-networking.k8s.aws_targetgrouppolicies.yaml",
                "v1alpha1",
            ),
        ),
        (
            ("application-networking.k8s.aws/v1alpha1", "IAMAuthPolicy"),
            crd_schema(
                "aws/application-networking.k8s.aws_iamauthpolicies.yaml",
                "v1alpha1",
            ),
        ),
        (
            ("application-networking.k8s.aws/v1alpha1", "AccessLogPolicy"),
            crd_schema(
                "aws/application-networking.k8s.aws_accesslogpolicies.yaml",
                "v1alpha1",
            ),
        ),
        (
            ("monitoring.coreos.com/v1", "PrometheusRule"),
            crd_schema(
                "prometheus/monitoring.coreos.com_prometheusrules.yaml",
                "v1",
            ),
        ),
        (
            ("configuration.konghq.com/v1", "KongPlugin"),
            crd_schema("kong/configuration.konghq.com_kongplugins.yaml", "v1"),
        ),
    ])
}

/// What the API server would add to each manifest of `tree`, as `file: path = value`.
fn added_by_server(
    tree: &BTreeMap<PathBuf, String>,
    crds: &BTreeMap<(&str, &str), Value>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (path, text) in tree {
        if path.file_name().is_some_and(|n| n == "kustomization.yaml")
            || path.extension().is_none_or(|e| e != "yaml")
        {
            continue;
        }
        let mut object: Value =
            serde_saphyr::from_str(text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let api = object["apiVersion"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let kind = object["kind"].as_str().unwrap_or_default().to_string();
        let mut added: Vec<Added> = Vec::new();
        if (api.as_str(), kind.as_str()) == ("v1", "Service") {
            latgen_sim::stored::default_service(&mut object, &mut added);
        } else {
            let schema = crds
                .get(&(api.as_str(), kind.as_str()))
                .unwrap_or_else(|| panic!("{}: no CRD for {api} {kind}", path.display()));
            structural_default(schema, &mut object, "", &mut added);
        }
        out.extend(
            added
                .into_iter()
                .map(|a| format!("{}: {} = {}", path.display(), a.path, a.value)),
        );
    }
    out
}

fn assert_stored_form(tree: &BTreeMap<PathBuf, String>, what: &str) {
    let added = added_by_server(tree, &crds());
    assert!(
        added.is_empty(),
        "{what}: the API server would add {} fields:\n{}",
        added.len(),
        added.join("\n")
    );
}

#[test]
fn the_route_defaults_latgen_knows_are_the_httproute_crds() {
    let schema = crd_schema(
        "gateway-api/gateway.networking.k8s.io_httproutes.yaml",
        "v1",
    );
    let pruned = prune_to_defaults(&schema, &[]).expect("the HTTPRoute CRD has defaults");
    let text = serde_json::to_string_pretty(&pruned).unwrap() + "\n";
    common::assert_snapshot(
        &common::root().join("crates/latgen-sim/src/stored/httproute.defaults.json"),
        &text,
    );
}

#[test]
fn reference_grants_and_aws_policies_get_no_default_outside_status() {
    let crds = crds();
    for kind in ["ReferenceGrant", "TargetGroupPolicy", "IAMAuthPolicy"] {
        let schema = crds.iter().find(|((_, k), _)| *k == kind).unwrap().1;
        assert_eq!(prune_to_defaults(schema, &[]), None, "{kind}");
    }
}

#[test]
fn the_defaulting_finds_what_an_older_latgen_left_out() {
    // The example as committed before latgen wrote the defaults: both sides of its routes
    // and its bridges miss fields the API server sets.
    let route = "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: cart\nspec:\n  parentRefs:\n    - name: kong\n  rules:\n    - backendRefs:\n        - name: cart-lattice\n          port: 80\n";
    let service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: cart-lattice\nspec:\n  type: ExternalName\n  externalName: group-02.lattice.internal\n  ports:\n    - name: http\n      port: 80\n      protocol: TCP\n";
    let tree = BTreeMap::from([
        (PathBuf::from("kong/httproute-cart.yaml"), route.to_string()),
        (
            PathBuf::from("kong/service-cart-lattice.yaml"),
            service.to_string(),
        ),
    ]);
    let added = added_by_server(&tree, &crds());
    let mut fields: Vec<&str> = added
        .iter()
        .map(|a| a.split(": ").nth(1).unwrap().split(" = ").next().unwrap())
        .collect();
    fields.sort_unstable();
    assert_eq!(
        fields,
        [
            "spec.parentRefs[0].group",
            "spec.parentRefs[0].kind",
            "spec.ports[0].targetPort",
            "spec.rules[0].backendRefs[0].group",
            "spec.rules[0].backendRefs[0].kind",
            "spec.rules[0].backendRefs[0].weight",
            // A rule without matches matches every path: the CRD says so with a default.
            "spec.rules[0].matches",
            "spec.sessionAffinity",
        ]
    );
}

#[test]
fn the_example_is_in_stored_form() {
    let tree = project::render_dir(&common::root()).expect("the example renders");
    assert_stored_form(&tree, "example");
}

#[test]
fn the_settings_fixture_is_in_stored_form() {
    // https to Lattice, public hostnames and a reserve: the template branches the example
    // does not take.
    let tree = project::render_dir(&common::fixture("settings")).expect("the fixture renders");
    assert_stored_form(&tree, "settings fixture");
}

#[test]
fn the_header_fixture_is_in_stored_form() {
    // Header dispatch: header matches on the Lattice side, a RequestHeaderModifier on Kong's.
    let tree = project::render_dir(&common::fixture("header")).expect("the fixture renders");
    assert_stored_form(&tree, "header fixture");
}

/// The benchmark's input at `n` apps (`bench/generate.rs`), written as declarations and
/// rendered as `render` would.
fn bench_input(n: usize) -> BTreeMap<PathBuf, String> {
    let dir = common::scratch();
    let apps = dir.path().join("apps");
    std::fs::create_dir_all(&apps).unwrap();
    for app in generate::generate(n) {
        std::fs::write(apps.join(format!("{}.yaml", app.name)), app.declaration()).unwrap();
    }
    project::render_dir(dir.path()).expect("the benchmark's input renders")
}

/// The benchmark's 10,000-app input takes over a minute to render and check in a debug
/// build, so a debug `cargo test` checks its 1,000-app input (another of its sizes) and an
/// optimized one the 10,000 apps (`cargo build --release \&\& cargo test --release --lib suite::stored::`, which CI runs).
const BENCH_APPS: usize = if cfg!(debug_assertions) {
    1_000
} else {
    10_000
};

#[test]
fn the_bench_input_is_in_stored_form() {
    let tree = bench_input(BENCH_APPS);
    assert!(tree.len() > 2 * BENCH_APPS, "{} files", tree.len());
    assert_stored_form(&tree, &format!("the benchmark's {BENCH_APPS} apps"));
}

const ROOTS: &[&str] = &["/shop", "/shopping", "/api", "/a", "/ab", "/pay", "/help"];
const SUBS: &[&str] = &["", "/cart", "/v2", "/v22", "/x"];

/// One generated app: its paths (root, sub, exact), whether it has its own host, whether it
/// is isolated, its port and whether it has a health check.
type Spec = (Vec<(usize, usize, bool)>, bool, bool, u16, bool);

fn spec() -> impl Strategy<Value = Spec> {
    (
        prop::collection::vec((0..ROOTS.len(), 0..SUBS.len(), any::<bool>()), 1..4),
        prop::bool::weighted(0.15),
        prop::bool::weighted(0.1),
        prop::sample::select(vec![80u16, 443, 3000, 8080]),
        any::<bool>(),
    )
}

/// Concrete apps, each path handed out once (validation enforces that before planning).
fn apps_from(specs: &[Spec]) -> Vec<App> {
    let mut used = std::collections::BTreeSet::new();
    specs
        .iter()
        .enumerate()
        .map(|(i, (paths, own_host, isolate, port, health))| {
            let name = format!("app-{i:03}");
            let mut matches: Vec<PathMatch> = paths
                .iter()
                .map(|(r, s, exact)| (format!("{}{}", ROOTS[*r], SUBS[*s]), *exact))
                .filter(|(value, _)| !own_host && used.insert(value.clone()))
                .map(|(value, exact)| PathMatch {
                    kind: if exact {
                        MatchKind::Exact
                    } else {
                        MatchKind::Prefix
                    },
                    value,
                    pos: Pos::default(),
                })
                .collect();
            if matches.is_empty() {
                let value = if *own_host {
                    "/".into()
                } else {
                    format!("/own-{i}")
                };
                matches.push(PathMatch {
                    kind: MatchKind::Prefix,
                    value,
                    pos: Pos::default(),
                });
            }
            App {
                file: format!("apps/{name}.yaml").into(),
                name_pos: Pos::default(),
                namespace: format!("team-{}", i % 3),
                service: name.clone(),
                port: *port,
                host: own_host.then(|| format!("{name}.example.com")),
                paths: matches,
                pin: None,
                peak_rps: None,
                peak_rps_pos: Pos::default(),
                isolate: *isolate && !own_host,
                health_check: health.then(|| HealthCheck {
                    path: Some("/healthz".into()),
                    interval_seconds: Some(10),
                }),
                callers: Vec::new(),
                // Every third app has Kong settings: annotations on its route and bridge.
                kong: if i % 3 == 0 {
                    kong_settings()
                } else {
                    Default::default()
                },
                // Every fourth app has a canary: two weighted backends on its rules.
                canary: (i % 4 == 1).then(|| latgen::input::canary::Canary {
                    service: format!("{name}-canary"),
                    port: 8080,
                    readiness_gate: None,
                }),
                adopted: None,
                name,
            }
        })
        .collect()
}

fn kong_settings() -> latgen::input::kong::KongSettings {
    use latgen::input::kong::{Millis, Timeouts};
    latgen::input::kong::KongSettings {
        plugins: vec!["rate-limit".into(), "cors".into()],
        timeouts: Timeouts {
            connect: Some(Millis(5_000)),
            read: None,
            write: Some(Millis(120_000)),
        },
        retries: Some(0),
        hosts: Vec::new(),
    }
}

/// Plans and renders `apps` in memory with `config`, as `render` would write them.
fn render(apps: &[App], config: &Config) -> BTreeMap<PathBuf, String> {
    project::plan_and_render(apps, config).1
}

/// The settings that change what the templates write.
fn settings() -> impl Strategy<Value = Config> {
    (
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(https, hostnames, no_section, grants, header)| {
            let mut c = Config::default();
            if header {
                c.lattice.dispatch = latgen::input::config::Dispatch::Header;
            }
            if https {
                c.kong.protocol = Protocol::Https;
            }
            if hostnames {
                c.kong.hostnames = vec!["www.example.com".into(), "example.com".into()];
            }
            if no_section {
                c.lattice.gateway.section_name = None;
                c.kong.gateway.namespace = None;
            }
            c.lattice.reference_grants = grants;
            c
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn any_project_renders_in_stored_form(specs in prop::collection::vec(spec(), 1..40), config in settings()) {
        let added = added_by_server(&render(&apps_from(&specs), &config), &crds());
        prop_assert!(added.is_empty(), "{}", added.join("\n"));
    }
}
