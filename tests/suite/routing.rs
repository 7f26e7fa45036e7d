//! Routing equivalence: every request, followed through the generated manifests (Kong's
//! Gateway API matching, the bridge, the rewritten Host, Lattice's string-prefix first
//! match), lands on the backend that Gateway API semantics name for the declarations, or
//! on none (Kong answers 404). Probes include the traps that sorting alone gets wrong.

use super::common;
use super::project;

use std::path::Path;

use latgen_sim::routing::{Headers, Network, Outcome};

fn assert_routing_equivalent(dir: &Path) -> usize {
    assert_routes_with(dir, &[Headers::new()])
}

/// Like [`assert_routing_equivalent`], with each request sent once with each of `forged`,
/// headers a client adds of its own.
fn assert_routes_with(dir: &Path, forged: &[Headers]) -> usize {
    let built = project::built(dir);
    let net = project::network(&built.output.files);
    match project::oracle::misroutes(&built.prepared.apps, &built.prepared.config, &net, forged) {
        Ok(checked) => checked,
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn trap_paths_land_on_the_app_gateway_api_names() {
    let n = assert_routing_equivalent(&common::fixture("traps"));
    assert!(n > 100, "probed {n} requests");
}

#[test]
fn header_fixture_routes_correctly_forged_headers_included() {
    let forged: Vec<Headers> = ["", "shop", "cart", "api-v2", "WWW"]
        .iter()
        .map(|v| Headers::from([("x-shop-app".to_string(), v.to_string())]))
        .chain([Headers::new()])
        .collect();
    let n = assert_routes_with(&common::fixture("header"), &forged);
    assert!(n > 1000, "probed {n} requests");
}

#[test]
fn settings_fixture_routes_correctly() {
    assert_routing_equivalent(&common::fixture("settings"));
}

/// An app's `kong.hosts`: its paths answer on the extra host too, and no other app's do.
#[test]
fn an_app_is_reached_on_its_extra_kong_host_and_no_other_app_is() {
    let built = project::built(&common::fixture("settings"));
    let net = project::network(&built.output.files);
    let reach = |host: &str, path: &str| match net.route(host, path) {
        Outcome::Backend { backend, .. } => Some(backend.name),
        other => panic!("{host}{path}: {other:?}"),
    };
    assert_eq!(
        reach("alpha.example.org", "/alpha/x").as_deref(),
        Some("alpha")
    );
    assert_eq!(reach("www.example.com", "/alpha").as_deref(), Some("alpha"));
    assert!(matches!(
        net.route("alpha.example.org", "/bravo"),
        Outcome::NoKongRoute
    ));
}

#[test]
fn example_routes_every_declared_path_correctly() {
    assert_routing_equivalent(&common::root());
}

/// The example under `dispatch: header`, in a copy: 79 apps in 8 groups, no dedicated
/// service, and every probe reaches the app Gateway API semantics name, also when the
/// client forges the dispatch header with another app's name (in any case), an empty
/// value, or a header Lattice reserves.
#[test]
fn example_under_header_dispatch_routes_every_probe_forged_headers_included() {
    let tmp = common::header_copy_of_example();
    let built = project::built(tmp.path());
    let plan = &built.prepared.plan;
    assert_eq!((plan.groups.len(), plan.dedicated.len()), (8, 0));
    assert!(plan.groups.iter().all(|g| g.apps.len() <= 10));
    let mut forged = vec![Headers::new()];
    for value in ["cart", "SHOP-WEB", "", "admin-console"] {
        forged.push(Headers::from([(
            "x-latgen-app".to_string(),
            value.to_string(),
        )]));
    }
    forged.push(Headers::from([(
        "x-amzn-lattice-identity".to_string(),
        "forged".to_string(),
    )]));
    let n = assert_routes_with(tmp.path(), &forged);
    assert!(n > 10_000, "probed {n} requests");
}

/// A Kong route that adds the dispatch header instead of setting it lets a client's
/// forged value through (Kong appends to it), and the request reaches no app, or one the
/// client picked: the model follows what Kong does with each.
#[test]
fn a_header_kong_adds_rather_than_sets_does_not_hold_against_a_forged_one() {
    let lattice = "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: { name: g, namespace: ns }\nspec:\n  hostnames: [g.internal]\n  rules:\n    - matches: [{ path: { type: PathPrefix, value: / }, headers: [{ type: Exact, name: x-latgen-app, value: admin }] }]\n      backendRefs: [{ name: admin, port: 80 }]\n    - matches: [{ path: { type: PathPrefix, value: / }, headers: [{ type: Exact, name: x-latgen-app, value: shop }] }]\n      backendRefs: [{ name: shop, port: 80 }]\n";
    let kong = |verb: &str| {
        format!(
            "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{ name: shop, namespace: k }}\nspec:\n  rules:\n    - matches: [{{ path: {{ type: PathPrefix, value: /shop }} }}]\n      filters:\n        - {{ type: URLRewrite, urlRewrite: {{ hostname: g.internal }} }}\n        - {{ type: RequestHeaderModifier, requestHeaderModifier: {{ {verb}: [{{ name: X-Latgen-App, value: shop }}] }} }}\n      backendRefs: [{{ name: shop-lattice, port: 80 }}]\n"
        )
    };
    let bridge = "apiVersion: v1\nkind: Service\nmetadata: { name: shop-lattice, namespace: k }\nspec: { type: ExternalName, externalName: g.internal }\n";
    let forged = Headers::from([("x-latgen-app".to_string(), "admin".to_string())]);
    let reached = |verb: &str, client: &Headers| {
        let kong = kong(verb);
        let files = [
            ("lattice/g.yaml", lattice),
            ("kong/r.yaml", kong.as_str()),
            ("kong/s.yaml", bridge),
        ];
        let net = project::network_of(files.iter().map(|(p, t)| (Path::new(*p), *t)));
        net.route_with("x", "/shop/cart", client)
            .backend()
            .map(|b| b.name.clone())
    };
    assert_eq!(reached("set", &Headers::new()).as_deref(), Some("shop"));
    assert_eq!(reached("set", &forged).as_deref(), Some("shop"));
    assert_eq!(reached("add", &Headers::new()).as_deref(), Some("shop"));
    assert_eq!(
        reached("add", &forged),
        None,
        "`admin,shop` matches no rule"
    );
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
        let net = project::network_of(files.iter().map(|(p, t)| (Path::new(*p), *t)));
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
    read_back_models_as_parsing(Path::new(env!("CARGO_MANIFEST_DIR")));
}

/// The same under header dispatch: header matches and header modifiers read alike.
#[test]
fn typed_read_back_models_header_dispatch_as_parsing_it_does() {
    let tmp = common::header_copy_of_example();
    read_back_models_as_parsing(tmp.path());
}

fn read_back_models_as_parsing(root: &Path) {
    use latgen::input::ProjectPaths;
    use latgen::manifest::layout::is_kong_file;
    use latgen::render::Templates;
    use latgen_sim::routing::Source;
    let prepared = latgen::pipeline::prepare(&ProjectPaths::at_root(root))
        .prepared
        .unwrap();
    let templates = Templates::load(None).unwrap();
    let (out, docs) = latgen::render::render_with_docs(
        &prepared.plan,
        &prepared.apps,
        &prepared.config,
        &templates,
        None,
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
    use latgen_sim::routing::{Doc, Source};
    let route = "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: r\n  namespace: kong-routes\n  labels:\nspec:\n  hostnames:\n  parentRefs:\n    - name: kong\n  rules:\n    - matches:\n      filters:\n      backendRefs:\n    - matches:\n        - path:\n            type: Exact\n            value: /a\n      backendRefs:\n        - name: a-lattice\n          port: 80\n";
    let service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: a-lattice\n  namespace: kong-routes\n  labels:\nspec:\n  type: ExternalName\n  externalName: group-01.lattice.internal\n";
    let typed_route: HttpRoute = serde_saphyr::from_str(route).unwrap();
    let typed_service: Service = serde_saphyr::from_str(service).unwrap();
    let paths = ["kong/httproute-r.yaml", "kong/service-a-lattice.yaml"];
    let from_typed = [
        Doc::from_route(
            Path::new(paths[0]),
            &typed_route.metadata,
            &typed_route.spec,
            true,
        ),
        Doc::from_service(
            Path::new(paths[1]),
            &typed_service.metadata,
            typed_service
                .spec
                .as_ref()
                .and_then(|s| s.external_name.as_deref()),
        ),
    ];
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

/// The order the AWS Gateway API Controller (v2.1.3) leaves a group's rules in when `late`
/// is the app added last: a rule new to a listener is created at the next free priority,
/// after every existing rule (`pkg/deploy/lattice/rule_manager.go`, `create`), and the
/// reorder that follows sends every rule of the listener in one `BatchUpdateRule` call
/// (`rule_synthesizer.go`, `adjustPriorities`), which the Lattice API caps at 5 rules. So in
/// a route of more than 5 rules the late app's rules stay last.
fn added_last(
    route: &latgen_sim::routing::LatticeRoute,
    late: &latgen_sim::routing::BackendRef,
) -> latgen_sim::routing::LatticeRoute {
    const BATCH_UPDATE_MAX: usize = 5;
    let mut r = route.clone();
    if r.rules.len() > BATCH_UPDATE_MAX {
        r.rules
            .sort_by_key(|rule| rule.backend.as_ref() == Some(late));
    }
    r
}

/// The example routes every probe right whichever app of each group the controller added
/// last, which is the order a group is left in after a new app, a move into it or a path
/// change (see `added_last`).
#[test]
fn example_routes_right_whichever_app_of_a_group_was_added_last() {
    let built = project::built(&common::root());
    let net = project::network(&built.output.files);
    let (apps, config) = (&built.prepared.apps, &built.prepared.config);
    let mut orders = 0;
    for (i, route) in net.lattice.iter().enumerate() {
        let backends: std::collections::BTreeSet<_> = route
            .rules
            .iter()
            .filter_map(|r| r.backend.clone())
            .collect();
        for late in &backends {
            let mut shuffled = net.clone();
            shuffled.lattice[i] = std::sync::Arc::new(added_last(route, late));
            if let Err(e) = project::oracle::misroutes(apps, config, &shuffled, &[Headers::new()]) {
                panic!("{} added last to {}: {e}", late, route.name);
            }
            orders += 1;
        }
    }
    assert!(orders > 70, "tried {orders} orders");
}

/// A Lattice route of two rules to two Services: `first` then `then`, each a match given
/// as YAML.
fn two_rule_route(first: &str, then: &str) -> latgen_sim::routing::LatticeRoute {
    let rule = |m: &str, svc: &str| {
        format!(
            "    - matches:\n        - {m}\n      backendRefs:\n        - name: {svc}\n          port: 80\n"
        )
    };
    let text = format!(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: group-01\n  namespace: lattice-groups\nspec:\n  hostnames: [group-01.lattice.internal]\n  rules:\n{}{}",
        rule(first, "shop"),
        rule(then, "promo")
    );
    latgen_sim::routing::LatticeRoute::parse(Path::new("lattice/httproute-group-01.yaml"), &text)
        .expect("a Lattice route")
}

/// A pair is order-dependent where the written order routes right: `/shopping` before
/// `/shop`, or `/shop` first with a header the later rule does not need (so `/shopping`
/// without the header still reaches the later rule, and with it the earlier one takes it
/// whichever app owns it). A pair written in the wrong order is `rule-shadowed` instead.
#[test]
fn order_dependent_pairs_are_those_the_written_order_routes_right() {
    let count = |first: &str, then: &str| two_rule_route(first, then).order_dependent().len();
    let prefix = |p: &str| format!("{{path: {{type: PathPrefix, value: {p}}}}}");
    assert_eq!(count(&prefix("/shopping"), &prefix("/shop")), 1);
    assert_eq!(
        count(&prefix("/shop"), &prefix("/shopping")),
        0,
        "shadowed, not order-dependent"
    );
    let with_header = "{path: {type: PathPrefix, value: /shop}, headers: [{type: Exact, name: x-env, value: canary}]}";
    assert_eq!(count(with_header, &prefix("/shopping")), 1);
    assert_eq!(count(&prefix("/blog"), &prefix("/shop")), 0);
}

/// `check` renders beside the committed folder it has read: a rendered text the folder
/// holds too is taken as the folder's (one copy in memory, not two: a quarter of a
/// gigabyte at 100,000 apps), a text the folder holds otherwise is the render's own, and
/// what is rendered is the same either way.
#[test]
fn a_render_beside_a_read_tree_takes_its_equal_texts_and_only_those() {
    use latgen::input::ProjectPaths;
    use std::collections::BTreeMap;
    use std::path::PathBuf;
    use std::sync::Arc;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let prepared = latgen::pipeline::prepare(&ProjectPaths::at_root(root))
        .prepared
        .unwrap();
    let templates = latgen::render::Templates::load(None).unwrap();
    let render = |like| {
        let (p, a, c) = (&prepared.plan, &prepared.apps, &prepared.config);
        latgen::render::render_with_docs(p, a, c, &templates, like).unwrap()
    };
    let (alone, _) = render(None);
    // Texts of their own, as a folder read from disk holds them.
    let mut read: BTreeMap<PathBuf, Arc<str>> = (alone.files.iter())
        .map(|(rel, text)| (rel.clone(), Arc::from(&**text)))
        .collect();
    let edited = PathBuf::from("kong/httproute-account.yaml");
    let changed = format!("{}# edited by hand\n", read[&edited]);
    read.insert(edited.clone(), Arc::from(changed));
    let (beside, _) = render(Some(&read));
    assert_eq!(beside, alone);
    let mut shared = 0;
    for (rel, text) in &beside.files {
        let theirs = Arc::ptr_eq(text, &read[rel]);
        if rel == &edited || rel.ends_with("kustomization.yaml") {
            assert!(!theirs, "{} is not the read tree's text", rel.display());
        } else {
            assert!(theirs, "{} is the read tree's text", rel.display());
            shared += 1;
        }
    }
    assert!(shared > 100, "{shared} texts shared");
}

/// The example, its output as committed, switched to header dispatch, and built as a
/// rollout builds it.
fn switched_example() -> (
    tempfile::TempDir,
    latgen::input::ProjectPaths,
    latgen::render::Templates,
    latgen::pipeline::Built,
) {
    let tmp = common::copy_project(&common::root());
    let dir = tmp.path();
    let committed = common::read_tree(&common::root().join("generated"));
    common::write_tree(&dir.join("generated"), &committed);
    let yaml = dir.join("latgen.yaml");
    let text = std::fs::read_to_string(&yaml).unwrap();
    let text = text.replace("lattice:\n", "lattice:\n  dispatch: header\n");
    std::fs::write(&yaml, text).unwrap();
    let paths = latgen::input::ProjectPaths::at_root(dir);
    let templates = latgen::render::Templates::load(None).unwrap();
    let built = latgen::pipeline::build_final(&paths, &templates, None).unwrap();
    (tmp, paths, templates, built)
}

/// A switch's base is rendered again from its lock while the project is built (beside the
/// target's render), as the rollout would render it later: the same files, text for text.
#[test]
fn a_switchs_base_is_rendered_from_its_lock_while_the_project_is_built() {
    let (_tmp, _, templates, built) = switched_example();
    let lock = (built.switched_from.as_ref()).expect("the lock records path dispatch");
    let (early, early_docs) = built.locked.as_ref().expect("rendered while built");
    let (later, later_docs) =
        latgen::pipeline::render_as_locked(&built.prepared, lock, &templates, None).unwrap();
    assert_eq!(early, &later);
    let paths_of = |d: &latgen::manifest::tree::Docs| -> Vec<std::path::PathBuf> {
        d.iter().map(|(p, _)| p.to_path_buf()).collect()
    };
    assert_eq!(paths_of(early_docs), paths_of(&later_docs));
    assert!(early.len() > 40, "{} files", early.len());
    // A project that is not switching renders no second tree.
    let plain = latgen::pipeline::build_final(
        &latgen::input::ProjectPaths::at_root(&common::root()),
        &templates,
        None,
    )
    .unwrap();
    assert!(plain.switched_from.is_none() && plain.locked.is_none());
}

/// A switch of dispatch mode changes every routing file, so a rollout would parse its
/// base whole (23 MB at 10,000 apps): the lock the base was planned with, in the mode it
/// records, renders the base again byte for byte, and the rollout takes each base document
/// from that render (or from the target's, for a file the switch leaves as it was).
#[test]
fn a_switch_takes_its_base_documents_from_a_render_of_the_lock_it_was_planned_with() {
    use std::sync::Arc;
    let (_tmp, paths, templates, built) = switched_example();
    let lock = (built.switched_from.as_ref()).expect("the lock records path dispatch");
    let base = latgen::output::read_tree(&paths.output).unwrap();
    let (again, docs) =
        latgen::pipeline::render_as_locked(&built.prepared, lock, &templates, Some(&base)).unwrap();
    for (rel, text) in &base {
        let made = again
            .get(rel)
            .unwrap_or_else(|| panic!("{} is made", rel.display()));
        if rel.ends_with("kustomization.yaml") {
            assert_eq!(made, text, "{}", rel.display());
        } else {
            assert!(Arc::ptr_eq(made, text), "{} is made again", rel.display());
        }
    }
    let target = (&built.output.files, &built.docs);
    let read = latgen::manifest::tree::Docs::read_like_either(&base, target, Some((&again, &docs)));
    let mut from_lock = 0;
    for (rel, doc) in read.iter() {
        let same = |d: Option<&latgen_sim::routing::Doc>| d.is_some_and(|d| std::ptr::eq(d, doc));
        from_lock += usize::from(same(docs.get(rel)));
        assert!(
            same(docs.get(rel)) || same(built.docs.get(rel)),
            "{} is parsed",
            rel.display()
        );
    }
    let manifests = base.keys().filter(|r| !r.ends_with("kustomization.yaml"));
    assert_eq!(read.iter().count(), manifests.count());
    assert!(
        from_lock > 20,
        "{from_lock} documents from the lock's render"
    );
}

/// Two rules of one Kong HTTPRoute that claim a request equally: Gateway API grants it to
/// the first in list order (the HTTPRoute CRD's `matches` text), and the trace's first
/// candidate is the rule the model follows.
#[test]
fn of_two_equal_rules_of_one_kong_route_the_first_takes_the_request() {
    use latgen_sim::routing::Source;
    let rule = |backend: &str| {
        format!(
            "    - matches:\n        - path:\n            type: PathPrefix\n            value: /a\n      backendRefs:\n        - name: {backend}\n          port: 80\n"
        )
    };
    let route = format!(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: r\n  namespace: kong-routes\nspec:\n  hostnames:\n    - shop.example.com\n  parentRefs:\n    - name: kong\n  rules:\n{}{}",
        rule("first-lattice"),
        rule("second-lattice")
    );
    let files = [("kong/httproute-r.yaml", Source::Text(&route), true)];
    let (net, errors) = Network::from_sources(&files);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(net.kong.len(), 2, "one Kong route per rule");
    let backend = |r: &latgen_sim::routing::KongRoute| r.backend.as_ref().unwrap().name.clone();
    let won = net.kong_route("shop.example.com", "/a/b").map(backend);
    assert_eq!(won.as_deref(), Some("first-lattice"));
    let candidates = net.kong_candidates("shop.example.com", "/a/b");
    let shown: Vec<String> = candidates.iter().map(|c| backend(c.route)).collect();
    assert_eq!(shown, ["first-lattice", "second-lattice"]);
}
