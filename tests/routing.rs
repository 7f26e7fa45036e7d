//! Routing equivalence: every request, followed through the generated manifests (Kong's
//! Gateway API matching, the bridge, the rewritten Host, Lattice's string-prefix first
//! match), lands on the backend that Gateway API semantics name for the declarations, or
//! on none (Kong answers 404). Probes include the traps that sorting alone gets wrong.

mod common;

use std::path::Path;

use latgen::model::{App, MatchKind};
use latgen::platform::segment_prefix_matches;
use latgen::routing::{BackendRef, Network, Outcome};

/// The app Gateway API semantics choose for a request, from the declarations alone:
/// host-specific routes before hostless ones, then Exact, then the longest prefix.
fn expected<'a>(
    apps: &'a [App],
    kong_hostnames: &[String],
    host: &str,
    path: &str,
) -> Option<&'a App> {
    apps.iter()
        .filter_map(|a| {
            let host_rank = match &a.host {
                Some(h) if h == host => h.len(),
                Some(_) => return None,
                None if kong_hostnames.is_empty() => 0,
                None if kong_hostnames.iter().any(|h| h == host) => host.len(),
                None => return None,
            };
            let best = a
                .paths
                .iter()
                .filter(|p| match p.kind {
                    MatchKind::Exact => p.value == path,
                    MatchKind::Prefix => segment_prefix_matches(&p.value, path),
                })
                .map(|p| (p.kind == MatchKind::Exact, p.value.len()))
                .max()?;
            Some(((host_rank, best), a))
        })
        .max_by_key(|(k, _)| *k)
        .map(|(_, a)| a)
}

fn probes(apps: &[App]) -> Vec<String> {
    let mut out: Vec<String> = [
        "/",
        "/sh",
        "/shx",
        "/sh/x",
        "/shop",
        "/shopx",
        "/shop/",
        "/shop/cart",
        "/shop/cartx",
        "/shop/cart/items",
        "/shopping",
        "/shopping/list",
        "/shop-admin",
        "/shop-admin/x",
        "/api",
        "/apix",
        "/api/v2",
        "/api/v2x",
        "/api/v2/x",
        "/api/v22",
        "/api/v22/x",
        "/api/v2/health",
        "/api/v2/healthz",
        "/healthz",
        "/healthz/x",
        "/unknown",
        "/help/faqx",
        "/account/securityx",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for a in apps {
        for p in &a.paths {
            let v = p.value.trim_end_matches('/');
            for probe in [
                p.value.clone(),
                format!("{v}/"),
                format!("{v}/x"),
                format!("{v}x"),
                format!("{v}-x"),
                format!("{v}.x"),
            ] {
                out.push(probe);
            }
            let mut cut = v.len();
            while let Some(i) = v[..cut].rfind('/') {
                out.push(if i == 0 {
                    "/".into()
                } else {
                    v[..i].to_string()
                });
                cut = i;
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

fn assert_routing_equivalent(dir: &Path) -> usize {
    let built = common::built(dir);
    let apps = &built.prepared.apps;
    let config = &built.prepared.config;
    let net = Network::from_files(
        built
            .output
            .files
            .iter()
            .map(|(p, t)| (p.as_path(), t.as_str())),
    )
    .unwrap();
    let mut hosts: Vec<String> = vec!["public.example.org".into()];
    hosts.extend(config.kong.hostnames.iter().cloned());
    hosts.extend(apps.iter().filter_map(|a| a.host.clone()));
    let mut checked = 0;
    for host in &hosts {
        for path in probes(apps) {
            let want = expected(apps, &config.kong.hostnames, host, &path);
            let got = net.route(host, &path);
            match want {
                Some(app) => {
                    let backend = BackendRef {
                        namespace: app.namespace.clone(),
                        name: app.service.clone(),
                        port: Some(i32::from(app.port)),
                    };
                    match &got {
                        Outcome::Backend { backend: b, .. } => assert_eq!(
                            b, &backend,
                            "{host}{path}: Gateway API names app `{}`, the manifests deliver to {got:?}",
                            app.name
                        ),
                        other => panic!(
                            "{host}{path}: Gateway API names app `{}`, the manifests give {other:?}",
                            app.name
                        ),
                    }
                }
                None => assert_eq!(got, Outcome::NoKongRoute, "{host}{path}: no app claims it"),
            }
            checked += 1;
        }
    }
    checked
}

#[test]
fn trap_paths_land_on_the_app_gateway_api_names() {
    let n = assert_routing_equivalent(&common::fixture("traps"));
    assert!(n > 100, "probed {n} requests");
}

#[test]
fn settings_fixture_routes_correctly() {
    assert_routing_equivalent(&common::fixture("settings"));
}

#[test]
fn example_routes_every_declared_path_correctly() {
    assert_routing_equivalent(&common::root());
}

/// The reason nested prefixes of different apps never share a group: with `/shop` and
/// `/shop/cart` in one route, sorted longest first, Lattice sends `/shop/cartx` (which Kong
/// sends to `/shop`'s app) to the cart app.
#[test]
fn sorting_alone_would_misroute_a_nested_prefix() {
    let route = |rules: &[(&str, &str)]| {
        let yaml_rules: String = rules
            .iter()
            .map(|(p, svc)| format!("    - matches: [{{ path: {{ type: PathPrefix, value: {p} }} }}]\n      backendRefs: [{{ name: {svc}, port: 80 }}]\n"))
            .collect();
        let lattice = format!(
            "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{ name: g, namespace: ns }}\nspec:\n  hostnames: [g.internal]\n  rules:\n{yaml_rules}"
        );
        let kong = "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: { name: shop, namespace: k }\nspec:\n  rules:\n    - matches: [{ path: { type: PathPrefix, value: /shop } }]\n      filters: [{ type: URLRewrite, urlRewrite: { hostname: g.internal } }]\n      backendRefs: [{ name: shop-lattice, port: 80 }]\n";
        let bridge = "apiVersion: v1\nkind: Service\nmetadata: { name: shop-lattice, namespace: k }\nspec: { type: ExternalName, externalName: g.internal }\n";
        let files = [
            ("lattice/g.yaml", lattice.as_str()),
            ("kong/r.yaml", kong),
            ("kong/s.yaml", bridge),
        ];
        let net = Network::from_files(files.iter().map(|(p, t)| (Path::new(*p), *t))).unwrap();
        net.route("x", "/shop/cartx")
    };
    match route(&[("/shop/cart", "cart"), ("/shop", "shop")]) {
        Outcome::Backend { backend, .. } => assert_eq!(
            backend.name, "cart",
            "string-prefix first match takes the nested rule"
        ),
        other => panic!("{other:?}"),
    }
    match route(&[("/shop", "shop")]) {
        Outcome::Backend { backend, .. } => assert_eq!(backend.name, "shop"),
        other => panic!("{other:?}"),
    }
}

/// The positions in a model's debug form, blanked: a model made from a typed object has
/// none.
fn without_positions(debug: &str) -> String {
    let mut out = String::with_capacity(debug.len());
    let mut rest = debug;
    while let Some(i) = rest
        .find("line: ")
        .into_iter()
        .chain(rest.find("column: "))
        .min()
    {
        let key_end = i + rest[i..].find(": ").unwrap() + 2;
        out.push_str(&rest[..key_end]);
        rest = rest[key_end..].trim_start_matches(|c: char| c.is_ascii_digit());
        out.push('_');
    }
    out.push_str(rest);
    out
}

/// `check` models a committed manifest that is exactly what was rendered from the render's
/// typed read-back instead of parsing it again. That model must be the one parsing the
/// text gives, line numbers aside, for every route and Service of the example.
#[test]
fn typed_read_back_models_a_manifest_as_parsing_it_does() {
    use latgen::load::ProjectPaths;
    use latgen::render::Templates;
    use latgen::routing::{Source, is_kong_file};
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let prepared = latgen::prepare(&ProjectPaths::at_root(root))
        .prepared
        .unwrap();
    let templates = Templates::load(None).unwrap();
    let (out, docs) = latgen::render::render_with_docs(
        &prepared.plan,
        &prepared.apps,
        &prepared.config,
        &templates,
    )
    .unwrap();
    let modelled = out
        .files
        .iter()
        .filter(|(_, t)| t.contains("\nkind: HTTPRoute\n") || t.contains("\nkind: Service\n"));
    let mut parsed = Vec::new();
    let mut read = Vec::new();
    for (rel, text) in modelled {
        let doc = docs
            .get(rel)
            .unwrap_or_else(|| panic!("no model of {}", rel.display()));
        parsed.push((rel.clone(), Source::Text(text), is_kong_file(rel)));
        read.push((rel.clone(), Source::Read(doc), is_kong_file(rel)));
    }
    assert!(
        parsed.len() > 100,
        "the example has {} routes and Services",
        parsed.len()
    );
    let (from_text, errors) = Network::from_sources(&parsed);
    assert!(errors.is_empty(), "{errors:?}");
    let (from_typed, _) = Network::from_sources(&read);
    let (a, b) = (format!("{from_text:#?}"), format!("{from_typed:#?}"));
    assert_ne!(a, without_positions(&a), "parsing keeps positions");
    pretty_assertions::assert_eq!(without_positions(&a), without_positions(&b));
}

/// A custom template may leave a list or map empty (`labels:`, `matches:`), which YAML reads
/// as null. The typed objects take that as absent; the model parsed from text must too, or
/// `check` would model the same file two ways.
#[test]
fn empty_fields_model_alike_from_text_and_from_typed_objects() {
    use gateway_api::apis::standard::httproutes::HttpRoute;
    use k8s_openapi::api::core::v1::Service;
    use latgen::routing::{Doc, Source};
    let route = "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: r\n  namespace: kong-routes\n  labels:\nspec:\n  hostnames:\n  parentRefs:\n    - name: kong\n  rules:\n    - matches:\n      filters:\n      backendRefs:\n    - matches:\n        - path:\n            type: Exact\n            value: /a\n      backendRefs:\n        - name: a-lattice\n          port: 80\n";
    let service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: a-lattice\n  namespace: kong-routes\n  labels:\nspec:\n  type: ExternalName\n  externalName: group-01.lattice.internal\n";
    let typed_route: HttpRoute = serde_saphyr::from_str(route).unwrap();
    let typed_service: Service = serde_saphyr::from_str(service).unwrap();
    let from_typed = [
        Doc::from_route(&typed_route.metadata, &typed_route.spec),
        Doc::from_service(
            &typed_service.metadata,
            typed_service
                .spec
                .as_ref()
                .and_then(|s| s.external_name.as_deref()),
        ),
    ];
    let paths = ["kong/httproute-r.yaml", "kong/service-a-lattice.yaml"];
    let parsed: Vec<_> = paths
        .iter()
        .zip([route, service])
        .map(|(p, t)| (*p, Source::Text(t), true))
        .collect();
    let read: Vec<_> = paths
        .iter()
        .zip(&from_typed)
        .map(|(p, d)| (*p, Source::Read(d), true))
        .collect();
    let (a, errors) = Network::from_sources(&parsed);
    assert!(errors.is_empty(), "{errors:?}");
    let (b, _) = Network::from_sources(&read);
    assert_eq!(a.kong.len(), 2, "one Kong route per rule");
    pretty_assertions::assert_eq!(
        without_positions(&format!("{a:#?}")),
        without_positions(&format!("{b:#?}"))
    );
}
