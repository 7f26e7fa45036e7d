//! `latgen import` of a live setup whose Lattice routes have no custom domain: Kong reaches
//! each at the domain Lattice assigned its service, which the controller records on the
//! route (`application-networking.k8s.aws/lattice-assigned-domain-name`). The fixture
//! (`tests/fixtures/assigned-domain/`, made by its `generate.py` from `examples/before/`)
//! is the before example exported that way, with what `kubectl get -o yaml` adds and some
//! files as a `kind: List`.

use super::common;
use super::project;

use std::path::Path;

use common::latgen;

/// The fixture's export and its settings (the before example's, with auth on) in a scratch
/// folder, with an empty overlay for each of `envs` (none: a project without environments).
fn export(envs: &[&str]) -> tempfile::TempDir {
    let tmp = common::scratch();
    let dir = tmp.path();
    let live = common::fixture("assigned-domain").join("live");
    common::write_tree(dir, &common::read_tree(&live));
    let settings = common::fixture("assigned-domain").join("latgen.yaml");
    std::fs::copy(settings, dir.join("latgen.yaml")).unwrap();
    if !envs.is_empty() {
        std::fs::create_dir_all(dir.join("environments")).unwrap();
    }
    for env in envs {
        std::fs::write(dir.join(format!("environments/{env}.yaml")), "{}\n").unwrap();
    }
    tmp
}

/// The fixture's export and its settings in a scratch folder, imported.
pub(super) fn imported_assigned() -> tempfile::TempDir {
    imported_assigned_after(|_| {})
}

/// [`imported_assigned`], with `edit` made to the export and its settings first.
pub(super) fn imported_assigned_after(edit: impl FnOnce(&Path)) -> tempfile::TempDir {
    let tmp = export(&[]);
    let dir = tmp.path();
    edit(dir);
    let run = latgen(dir, &["import", "workload", "gateway", "-o", "apps"]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    tmp
}

/// The assigned domain each exported Lattice route records, by route file text.
fn assigned_domains(dir: &Path) -> Vec<String> {
    let key = "application-networking.k8s.aws/lattice-assigned-domain-name: ";
    let mut out: Vec<String> = (common::read_tree(&dir.join("workload")).values())
        .flat_map(|t| {
            t.lines()
                .filter_map(|l| Some(l.split_once(key)?.1.to_string()))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn an_export_on_assigned_domains_imports_every_app() {
    let tmp = imported_assigned();
    let dir = tmp.path();
    let imported = project::built(dir);
    assert_eq!(imported.prepared.apps.len(), 79);
    let lock = std::fs::read_to_string(dir.join("latgen.lock")).unwrap();
    let mut in_lock: Vec<String> = (lock.lines())
        .filter_map(|l| {
            l.trim()
                .strip_prefix("assignedDomain: ")
                .map(str::to_string)
        })
        .collect();
    in_lock.sort();
    // Every path-routed app keeps the route it runs on, reached where it is today.
    assert_eq!(in_lock.len(), 73);
    assert_eq!(in_lock, assigned_domains(dir));
}

#[test]
fn the_first_render_of_an_assigned_domain_export_writes_every_object_as_it_runs() {
    let tmp = imported_assigned();
    // Same route names and namespaces (so the same Lattice services and domains), no
    // hostname added, the assigned domain kept on each route, Kong pointing at it.
    super::import::rendered_as_imported(tmp.path());
}

#[test]
fn check_passes_on_the_imported_assigned_domain_export() {
    let tmp = imported_assigned();
    let dir = tmp.path();
    assert_eq!(latgen(dir, &["render"]).code, Some(0));
    let check = latgen(dir, &["check", "--deny-warnings"]);
    assert_eq!(check.code, Some(0), "{}{}", check.stdout, check.stderr);
}

#[test]
fn trace_names_the_assigned_domain_a_route_is_reached_at() {
    let tmp = imported_assigned();
    let dir = tmp.path();
    assert_eq!(latgen(dir, &["render"]).code, Some(0));
    let run = latgen(dir, &["trace", "/shop/cart/x"]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "lattice   service cart-team-commerce (route team-commerce/cart), assigned domain cart-team-commerce-0808763c5a0b30501.6acee9c.vpc-lattice-svcs.ap-northeast-2.on.aws"
        ),
        "{}",
        run.stdout
    );
}

/// A caller that calls a route straight at the domain Lattice assigned (not through Kong):
/// trace names that domain for what it is, not a custom domain.
#[test]
fn trace_of_a_direct_call_names_the_domain_lattice_assigned() {
    let tmp = imported_assigned();
    let dir = tmp.path();
    assert_eq!(latgen(dir, &["render"]).code, Some(0));
    let domain =
        "cart-team-commerce-0808763c5a0b30501.6acee9c.vpc-lattice-svcs.ap-northeast-2.on.aws";
    let run = latgen(dir, &["trace", &format!("https://{domain}/shop/cart/x")]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "kong      not on the way: the host is the domain Lattice assigned a service"
        ),
        "{}",
        run.stdout
    );
}

/// The routes kept apart from their apps (in `lattice-routes`) keep reaching them: each
/// backend names the app's namespace, and latgen writes the ReferenceGrant there.
#[test]
fn routes_apart_from_their_apps_keep_their_backends_and_a_grant() {
    let tmp = imported_assigned();
    let dir = tmp.path();
    assert_eq!(latgen(dir, &["render"]).code, Some(0));
    let lattice = dir.join("generated/lattice");
    let grant = std::fs::read_to_string(
        lattice.join("referencegrant-team-support-from-lattice-routes.yaml"),
    )
    .unwrap();
    assert!(grant.contains("namespace: team-support\n"), "{grant}");
    assert!(
        grant.contains("      namespace: lattice-routes\n"),
        "{grant}"
    );
    for app in ["contact", "faq", "tickets"] {
        let route = std::fs::read_to_string(lattice.join(format!("httproute-{app}.yaml")));
        let route = route.unwrap();
        assert!(route.contains("  namespace: lattice-routes\n"), "{route}");
        assert!(
            route.contains("          namespace: team-support\n"),
            "{route}"
        );
    }
}

/// The export in a project with two environments, each imported with `--env`: the first
/// writes the declarations and its lock, the second only its lock (the declarations are
/// shared, and alike), and both render what runs.
#[test]
fn each_environment_imports_its_live_setup_into_its_own_lock() {
    let tmp = export(&["staging", "production"]);
    let dir = tmp.path();
    let import = |env: &str| {
        let args = ["import", "workload", "gateway", "-o", "apps", "--env", env];
        let run = latgen(dir, &args);
        assert_eq!(run.code, Some(0), "{env}: {}{}", run.stdout, run.stderr);
        run.stdout
    };
    import("staging");
    let declared = common::read_tree(&dir.join("apps"));
    let said = import("production");
    assert!(said.contains("79 apps were declared already"), "{said}");
    assert_eq!(common::read_tree(&dir.join("apps")), declared);
    assert!(!dir.join("latgen.lock").exists());
    for env in ["staging", "production"] {
        let lock = std::fs::read_to_string(dir.join(format!("locks/{env}.lock"))).unwrap();
        assert_eq!(lock.matches("assignedDomain: ").count(), 73, "{env}");
    }
    let run = latgen(dir, &["render", "--env", "all"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

/// Imports `--env env` from the export in `dir`, which must succeed; what it says.
fn import_env(dir: &Path, env: &str) -> String {
    let args = ["import", "workload", "gateway", "-o", "apps", "--env", env];
    let run = latgen(dir, &args);
    assert_eq!(run.code, Some(0), "{env}: {}{}", run.stdout, run.stderr);
    run.stdout
}

/// Takes `cart` (its Lattice route, live policy, Kong route and bridge) out of the export.
fn without_cart(dir: &Path) {
    for side in ["workload", "gateway"] {
        std::fs::remove_file(dir.join(side).join("commerce/cart.yaml")).unwrap();
    }
}

/// Production's export lacks `cart`, which staging runs: after both imports, cart's
/// declaration says it runs in staging alone, production's lock and output have no cart,
/// and both environments render.
#[test]
fn an_app_an_environments_export_lacks_no_longer_runs_there() {
    let tmp = export(&["staging", "production"]);
    let dir = tmp.path();
    import_env(dir, "staging");
    without_cart(dir);
    let said = import_env(dir, "production");
    assert!(
        said.contains("1 declared apps are not in production's export (cart): their `environments:` no longer lists production"),
        "{said}"
    );
    let cart = std::fs::read_to_string(dir.join("apps/commerce/cart.yaml")).unwrap();
    assert!(cart.ends_with("environments: [staging]\n"), "{cart}");
    let lock = std::fs::read_to_string(dir.join("locks/production.lock")).unwrap();
    assert!(!lock.contains("\n  cart:\n"), "{lock}");
    let run = latgen(dir, &["render", "--env", "all"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        dir.join("generated/staging/lattice/httproute-cart.yaml")
            .exists()
    );
    assert!(
        !dir.join("generated/production/lattice/httproute-cart.yaml")
            .exists()
    );
}

/// The other way round: production, imported first, lacks `cart`; staging's import then
/// declares cart for staging alone, and the apps both run stay shared.
#[test]
fn an_app_only_a_later_environment_runs_is_declared_for_it_alone() {
    let tmp = export(&["staging", "production"]);
    let dir = tmp.path();
    let stash = common::scratch();
    for side in ["workload", "gateway"] {
        let from = dir.join(side).join("commerce/cart.yaml");
        std::fs::copy(&from, stash.path().join(side)).unwrap();
    }
    without_cart(dir);
    import_env(dir, "production");
    for side in ["workload", "gateway"] {
        std::fs::copy(
            stash.path().join(side),
            dir.join(side).join("commerce/cart.yaml"),
        )
        .unwrap();
    }
    let said = import_env(dir, "staging");
    assert!(said.contains("78 apps were declared already"), "{said}");
    let cart = std::fs::read_to_string(dir.join("apps/commerce/cart.yaml")).unwrap();
    assert!(cart.ends_with("environments: [staging]\n"), "{cart}");
    let shop = std::fs::read_to_string(dir.join("apps/commerce/catalog.yaml")).unwrap();
    assert!(!shop.contains("environments:"), "{shop}");
    let run = latgen(dir, &["render", "--env", "all"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        !dir.join("generated/production/lattice/httproute-cart.yaml")
            .exists()
    );
}

/// An app the first environment's import declared, which the second runs otherwise, is
/// refused with the override that says the second's value.
#[test]
fn an_environment_that_runs_an_app_otherwise_is_told_to_override_it() {
    let tmp = export(&["staging", "production"]);
    let dir = tmp.path();
    let args = [
        "import", "workload", "gateway", "-o", "apps", "--env", "staging",
    ];
    assert_eq!(latgen(dir, &args).code, Some(0));
    let cart = dir.join("apps/commerce/cart.yaml");
    let text = std::fs::read_to_string(&cart).unwrap();
    std::fs::write(&cart, text.replace("port: 8080", "port: 8081")).unwrap();
    let args = [
        "import",
        "workload",
        "gateway",
        "-o",
        "apps",
        "--env",
        "production",
    ];
    let run = latgen(dir, &args);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "app `cart` is declared already with another service port than production runs"
        ),
        "{}",
        run.stderr
    );
    assert!(!dir.join("locks/production.lock").exists());
}

/// Import reads one environment's export: `--env all` is refused, and nothing is written.
#[test]
fn import_into_all_environments_is_refused() {
    let tmp = export(&["staging"]);
    let dir = tmp.path();
    let args = [
        "import", "workload", "gateway", "-o", "apps", "--env", "all",
    ];
    let run = latgen(dir, &args);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("--env names it, not all"),
        "{}",
        run.stderr
    );
    assert!(!dir.join("locks").exists() && !dir.join("apps").exists());
}

/// The four live auth policies (each written otherwise: a resource of `*`, of the
/// service's `/*`, of the app's paths; one under its own name) become the apps' `callers:`,
/// and the first render's policy of each lets in exactly whom the live one does: every
/// identity either policy names, and a stranger, each with more than one method, on every
/// request the route serves, as the auth model decides it.
#[test]
fn the_first_render_keeps_what_each_live_auth_policy_lets_in() {
    use latgen_sim::iam::{AuthPolicy, Call, Identity, probe_paths};
    use latgen_sim::platform::MatchKind;
    let tmp = imported_assigned();
    let dir = tmp.path();
    assert_eq!(latgen(dir, &["render"]).code, Some(0));
    let live = super::import::stored_objects(&common::read_tree(&dir.join("workload")));
    let rendered = super::import::stored_objects(&common::read_tree(&dir.join("generated")));
    let read = |key: &str, doc: &serde_json::Value| {
        let text = doc["spec"]["policy"].as_str().unwrap();
        AuthPolicy::read(key.into(), String::new(), String::new(), text)
    };
    let mut compared = 0;
    for (key, doc) in live.iter().filter(|(k, _)| k.starts_with("IAMAuthPolicy ")) {
        let ours = rendered
            .get(key)
            .unwrap_or_else(|| panic!("{key}: not rendered"));
        assert_eq!(ours["spec"]["targetRef"], doc["spec"]["targetRef"], "{key}");
        let (before, after) = (read(key, doc), read(key, ours));
        let ns = doc["metadata"]["namespace"].as_str().unwrap();
        let target = doc["spec"]["targetRef"]["name"].as_str().unwrap();
        let route = &live[&format!("HTTPRoute {ns}/{target}")];
        let mut requests = Vec::new();
        for rule in route["spec"]["rules"].as_array().unwrap() {
            for m in rule["matches"].as_array().unwrap() {
                let kind = match m["path"]["type"].as_str() {
                    Some("Exact") => MatchKind::Exact,
                    _ => MatchKind::Prefix,
                };
                requests.extend(probe_paths(kind, m["path"]["value"].as_str().unwrap()));
            }
        }
        let mut who: Vec<Identity> = before.identities();
        who.extend(after.identities());
        who.push(Identity::stranger());
        let methods = ["GET", "HEAD", "POST", "DELETE"];
        let who: Vec<Identity> = (who.iter())
            .flat_map(|w| {
                methods.map(|m| Identity {
                    method: m.into(),
                    ..w.clone()
                })
            })
            .collect();
        let headers = Default::default();
        for path in &requests {
            // The service's own id: the live policy of `payments` names it.
            let resource = format!(
                "arn:aws:vpc-lattice:ap-northeast-2:111122223333:service/svc-0a1b2c3d4e5f6a7b8{path}"
            );
            for w in &who {
                let call = Call {
                    who: w,
                    resource: &resource,
                    headers: &headers,
                };
                assert_eq!(
                    before.decide(&call).allows(),
                    after.decide(&call).allows(),
                    "{key}: {} {path}",
                    w.show()
                );
                compared += 1;
            }
        }
    }
    assert!(compared > 100, "{compared} calls compared");
    let cart = std::fs::read_to_string(dir.join("apps/commerce/cart.yaml")).unwrap();
    assert!(
        cart.contains("callers:\n  - principals: [\"arn:aws:iam::111122223333:role/reports\"]\n    methods: [GET]\n"),
        "{cart}"
    );
    let lock = std::fs::read_to_string(dir.join("latgen.lock")).unwrap();
    assert!(lock.contains("    authPolicy: cart-auth\n"), "{lock}");
}

/// The import benchmark's input (`bench/assigned_export.rs`, at 1,000 apps here): every
/// app is imported, each path-routed one on its assigned domain, the routes kept apart
/// with their grants, and the live auth policies read into callers.
#[test]
fn the_benchmarks_assigned_domain_export_imports_every_app() {
    let apps = super::generate::generate(1000);
    let tmp = common::scratch();
    let dir = tmp.path();
    super::assigned_export::write_export(dir, &apps);
    let settings = format!(
        "auth:\n  mode: iam\n  account: \"111122223333\"\n  region: ap-northeast-2\n  kong: {{ vpcs: [{}] }}\n",
        super::assigned_export::KONG_VPC
    );
    std::fs::write(dir.join("latgen.yaml"), settings).unwrap();
    let run = latgen(dir, &["import", "workload", "gateway", "-o", "apps"]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.starts_with("imported 1000 apps"),
        "{}",
        run.stdout
    );
    let lock = std::fs::read_to_string(dir.join("latgen.lock")).unwrap();
    let path_routed = apps.iter().filter(|a| a.host.is_none()).count();
    assert_eq!(lock.matches("assignedDomain: ").count(), path_routed);
    let apart = (apps.iter().enumerate())
        .filter(|(i, a)| a.host.is_none() && i % 50 == 7)
        .count();
    assert_eq!(
        lock.matches("    namespace: lattice-routes\n").count(),
        apart
    );
    let declared = common::read_tree(&dir.join("apps"));
    let with_callers = declared
        .values()
        .filter(|t| t.contains("\ncallers:\n"))
        .count();
    assert_eq!(
        with_callers,
        (0..apps.len()).filter(|i| i % 20 == 3).count()
    );
    assert_eq!(latgen(dir, &["render"]).code, Some(0));
}
