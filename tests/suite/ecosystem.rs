//! The commands and files that fit latgen into the tools around it: `init`, `trace`,
//! `manifests` (the Argo CD plugin), `completions`, and the integration files
//! (pre-commit hooks, the GitHub Actions workflow, the Argo CD plugin, .gitattributes).
//! Each test runs the real binary the way a user or a tool would.

use super::common;

use std::path::Path;
use std::process::Command;

use pretty_assertions::assert_eq;
use serde_json::Value;

use common::{Run, latgen};

fn ok(run: &Run) {
    assert_eq!(run.code, Some(0), "stderr:\n{}", run.stderr);
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(common::root().join(rel)).unwrap()
}

// ---------------------------------------------------------------------------------------
// init
// ---------------------------------------------------------------------------------------

const INIT_FILES: &[&str] = &[
    ".github/workflows/latgen.yml",
    "apps/example.yaml",
    "deploy/application-kong.yaml",
    "deploy/application-lattice.yaml",
    "deploy/appproject.yaml",
    "latgen.yaml",
    "schemas/app.schema.json",
    "schemas/latgen.schema.json",
];

/// What `init` writes besides [`INIT_FILES`]: it adds to a `.gitignore` that exists.
const INIT_GITIGNORE: &str = "# What an interrupted `latgen render` leaves; the next render removes it.\n.*.latgen-new/\n.*.latgen-tmp\n";

#[test]
fn init_scaffolds_a_project_that_renders_and_checks() {
    let tmp = common::scratch();
    let dir = tmp.path();
    let run = latgen(dir, &["init"]);
    ok(&run);
    assert_eq!(run.stdout, "");
    let mut tree = common::read_tree(dir);
    assert_eq!(
        tree.remove(Path::new(".gitignore")).as_deref(),
        Some(INIT_GITIGNORE)
    );
    let names: Vec<String> = tree.keys().map(|p| p.display().to_string()).collect();
    assert_eq!(names, INIT_FILES);
    assert_eq!(
        tree[Path::new("schemas/app.schema.json")],
        read("schemas/app.schema.json")
    );
    assert_eq!(
        tree[Path::new("schemas/latgen.schema.json")],
        read("schemas/latgen.schema.json")
    );
    assert_eq!(
        tree[Path::new(".github/workflows/latgen.yml")],
        read("examples/github-workflow.yml")
    );

    ok(&latgen(dir, &["render"]));
    // Only the settings init could not know are left (tests/suite/deploy.rs has the rest): the
    // three deploy settings and the service name prefix.
    let check = latgen(dir, &["check"]);
    assert_eq!(check.code, Some(1), "{}", check.stdout);
    assert!(
        check.stdout.ends_with("\n4 errors, 0 warnings\n"),
        "{}",
        check.stdout
    );
    assert_eq!(
        check.stdout.matches("error[placeholder-setting]").count(),
        4
    );
    assert!(dir.join("latgen.lock").is_file());
    assert!(dir.join("generated/kong/httproute-example.yaml").is_file());
}

#[test]
fn init_writes_the_deploy_settings_given_as_flags() {
    let tmp = common::scratch();
    let dir = tmp.path();
    let run = latgen(
        dir,
        &[
            "init",
            "--repo-url",
            "git@git.example.com:platform/web: routing.git",
            "--project",
            "routing",
            "--lattice-cluster",
            "workload",
            "--kong-cluster",
            "gateway",
            "--service-name-prefix",
            "routing",
        ],
    );
    ok(&run);
    let prepared = latgen::pipeline::prepare(&latgen::input::ProjectPaths::at_root(dir))
        .prepared
        .expect("the scaffold loads");
    let deploy = prepared.config.deploy.expect("init writes deploy:");
    assert_eq!(
        deploy.repo_url,
        "git@git.example.com:platform/web: routing.git"
    );
    assert_eq!(deploy.project, "routing");
    assert_eq!(deploy.lattice_cluster, "workload");
    assert_eq!(deploy.kong_cluster, "gateway");
    assert_eq!(
        prepared.config.lattice.service_name_prefix.as_deref(),
        Some("routing")
    );
    ok(&latgen(dir, &["render"]));
    let check = latgen(dir, &["check"]);
    ok(&check);
    assert_eq!(check.stdout, "no findings\n");
    let route = std::fs::read_to_string(dir.join("generated/lattice/httproute-group-01.yaml"));
    assert_eq!(
        latgen::render::annotation_in(&route.unwrap()).as_deref(),
        Some("routing-g01"),
        "the example app's group is named from the prefix"
    );
}

/// After `init`, one screen (80 columns, 24 lines) says what to do next: the settings
/// still to set (those no flag gave) first, then the way to a first sync and a checked PR.
#[test]
fn init_says_what_to_do_next_in_one_screen() {
    let tmp = common::scratch();
    let run = latgen(tmp.path(), &["init", "shop-routes"]);
    ok(&run);
    let next = run
        .stderr
        .split_once("\nNext, in shop-routes:\n")
        .unwrap()
        .1;
    assert!(next.lines().count() <= 24, "{next}");
    assert!(next.lines().all(|l| l.chars().count() <= 80), "{next}");
    let settings = "  1. Set what init could not know in latgen.yaml:\n     deploy.repoURL, deploy.latticeCluster, deploy.kongCluster,\n     lattice.serviceNamePrefix\n";
    assert!(next.contains(settings), "{next}");
    for step in [
        "latgen render",
        "kubectl -n argocd apply -f deploy/",
        ".github/workflows/latgen.yml",
    ] {
        assert!(next.contains(step), "{step}: {next}");
    }
    // With every deploy setting given, there is nothing to set first.
    let run = latgen(
        tmp.path(),
        &[
            "init",
            "given",
            "--repo-url",
            "https://git.example.com/routes.git",
            "--lattice-cluster",
            "workload",
            "--kong-cluster",
            "gateway",
            "--service-name-prefix",
            "shop-prod",
        ],
    );
    ok(&run);
    assert!(
        !run.stderr.contains("Set what init could not know"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("\n  1. Describe your apps in apps/"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_workflow_init_writes_does_not_ask_to_be_copied_where_it_is() {
    let tmp = common::scratch();
    ok(&latgen(tmp.path(), &["init"]));
    let workflow = tmp.path().join(".github/workflows/latgen.yml");
    let text = std::fs::read_to_string(workflow).unwrap();
    assert!(
        !text.contains("Copy it to .github/workflows/latgen.yml"),
        "{text}"
    );
}

#[test]
fn init_writes_every_default_into_latgen_yaml() {
    let tmp = common::scratch();
    ok(&latgen(tmp.path(), &["init"]));
    let run = latgen::pipeline::prepare(&latgen::input::ProjectPaths::at_root(tmp.path()));
    let prepared = run.prepared.expect("the scaffold loads");
    assert!(run.diags.is_empty(), "{:?}", run.diags);
    // Every default, the deploy kit's section with its placeholders, and the
    // placeholder of the service name prefix.
    let mut want = latgen::input::config::Config {
        deploy: Some(latgen::input::config::DeployConfig::default()),
        ..Default::default()
    };
    want.lattice.service_name_prefix = Some(latgen::input::config::PLACEHOLDER.to_string());
    assert_eq!(prepared.config, want);
    // Written out, not left to the defaults: every setting of the schema is in the file.
    let text = std::fs::read_to_string(tmp.path().join("latgen.yaml")).unwrap();
    let schema = latgen::input::json_schemas::Kind::Config.schema();
    for (section, props) in schema["definitions"].as_object().unwrap() {
        for key in props["properties"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|p| p.0)
        {
            assert!(
                text.contains(&format!("{key}:")),
                "latgen.yaml lacks {section}.{key}"
            );
        }
    }
}

#[test]
fn init_adds_the_staging_folders_to_an_existing_gitignore_once() {
    let tmp = common::scratch();
    let dir = tmp.path();
    std::fs::write(dir.join(".gitignore"), "/target").unwrap();
    ok(&latgen(dir, &["init"]));
    let text = std::fs::read_to_string(dir.join(".gitignore")).unwrap();
    assert_eq!(text, format!("/target\n\n{INIT_GITIGNORE}"));
    // Patterns already there are not added again.
    std::fs::remove_dir_all(dir.join("apps")).unwrap();
    for f in INIT_FILES {
        let _ = std::fs::remove_file(dir.join(f));
    }
    ok(&latgen(dir, &["init"]));
    assert_eq!(
        std::fs::read_to_string(dir.join(".gitignore")).unwrap(),
        text
    );
}

#[test]
fn init_into_a_new_folder() {
    let tmp = common::scratch();
    ok(&latgen(tmp.path(), &["init", "project"]));
    assert_eq!(
        common::read_tree(&tmp.path().join("project")).len(),
        INIT_FILES.len() + 1
    );
}

#[test]
fn a_second_init_refuses_and_changes_nothing() {
    let tmp = common::scratch();
    let dir = tmp.path();
    ok(&latgen(dir, &["init"]));
    ok(&latgen(dir, &["render"]));
    std::fs::write(dir.join("apps/example.yaml"), "namespace: mine\n").unwrap();
    let before = common::read_tree(dir);
    let run = latgen(dir, &["init"]);
    assert_eq!(run.code, Some(2));
    assert_eq!(run.stdout, "");
    for f in INIT_FILES {
        assert!(run.stderr.contains(f), "{f} not named in:\n{}", run.stderr);
    }
    assert_eq!(common::read_tree(dir), before);
}

/// A project made by `init` and rendered, whose example app then gives way to ten apps of
/// one rule each: group-01 goes from `/example` to ten new rules, its quota; with `commit`,
/// the first render is committed before the change. The second render's run.
fn example_replaced_by_a_full_group(dir: &Path, commit: bool) -> Run {
    ok(&latgen(dir, &["init"]));
    ok(&latgen(dir, &["render"]));
    if commit {
        common::git(dir, &["init", "-q"]);
        common::git(dir, &["add", "-A"]);
        common::git(dir, &["commit", "-q", "-m", "first render"]);
    }
    std::fs::remove_file(dir.join("apps/example.yaml")).unwrap();
    for name in [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
    ] {
        common::path_app(dir, name, &[&format!("/{name}")]);
    }
    let run = latgen(dir, &["render"]);
    ok(&run);
    run
}

/// The example route `init`'s project renders was never committed, so Argo CD never
/// applied it: replacing it holds no old rules beside the new ones anywhere, and the render
/// after the first warns no `group-at-quota` about it.
#[test]
fn replacing_the_never_committed_example_warns_no_group_at_quota() {
    let tmp = common::scratch();
    let run = example_replaced_by_a_full_group(tmp.path(), false);
    assert!(!run.stderr.contains("group-at-quota"), "{}", run.stderr);
}

/// Once the route is committed it may be live: the same change warns, naming the rule
/// replaced.
#[test]
fn replacing_a_committed_route_at_its_quota_still_warns() {
    let tmp = common::scratch();
    let run = example_replaced_by_a_full_group(tmp.path(), true);
    assert!(
        run.stderr.contains(
            "warning[group-at-quota]: group-01 would briefly hold 11 rules (quota 10) while the controller replaces /example with /alpha"
        ),
        "{}",
        run.stderr
    );
}

/// An init that fails half-way (a service-name prefix Lattice refuses, found once the
/// project is built for its deploy kit) takes back what it wrote, an existing `.gitignore`
/// included, so that the same folder takes the fixed command (it refused the rerun).
#[test]
fn a_failed_init_leaves_the_folder_as_it_was_and_can_be_run_again() {
    let tmp = common::scratch();
    let dir = tmp.path();
    std::fs::write(dir.join(".gitignore"), "/target\n").unwrap();
    std::fs::write(dir.join("NOTES.md"), "mine\n").unwrap();
    let before = common::read_tree(dir);
    let run = latgen(dir, &["init", "--service-name-prefix", "Bad_Prefix"]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stderr.contains("invalid-config"), "{}", run.stderr);
    assert_eq!(common::read_tree(dir), before);
    let left: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left.len(), 2, "folders left behind: {left:?}");
    ok(&latgen(
        dir,
        &["init", "--service-name-prefix", "shop-prod"],
    ));
}

#[test]
fn init_refuses_when_any_one_file_exists() {
    let tmp = common::scratch();
    let dir = tmp.path();
    std::fs::write(dir.join("latgen.yaml"), "quotas: { rulesPerService: 20 }\n").unwrap();
    let run = latgen(dir, &["init"]);
    assert_eq!(run.code, Some(2));
    assert_eq!(
        run.stderr,
        "error: ./latgen.yaml already exists; latgen init writes only new files and changed nothing\n"
    );
    let tree = common::read_tree(dir);
    assert_eq!(tree.len(), 1, "{:?}", tree.keys());
}

// ---------------------------------------------------------------------------------------
// trace, on the committed example
// ---------------------------------------------------------------------------------------

pub(super) fn trace_json(args: &[&str]) -> (Option<i32>, Value) {
    let mut all = vec!["trace"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", "generated", "--format", "json"]);
    let run = latgen(&common::root(), &all);
    let v = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", run.stdout, run.stderr));
    (run.code, v)
}

#[test]
fn trace_follows_the_traps_of_the_example() {
    // (request, the Kong route that wins, the Service it reaches)
    let cases = [
        ("/shop", "kong-routes/shop-web", "shop-web"),
        ("/shop/cartx", "kong-routes/shop-web", "shop-web"),
        ("/shop/cart", "kong-routes/cart", "cart-web"),
        ("/shop/cart/x", "kong-routes/cart", "cart-web"),
        ("/shopping", "kong-routes/shopping-lists", "shopping-lists"),
        (
            "https://www.example.com/shopping/cart?id=3",
            "kong-routes/shopping-lists",
            "shopping-lists",
        ),
        (
            "https://www.example-shop.com/shop",
            "kong-routes/storefront-www",
            "storefront-www",
        ),
        // The storefront's extra Kong host (`kong.hosts`).
        (
            "https://example-shop.com/",
            "kong-routes/storefront-www",
            "storefront-www",
        ),
    ];
    for (url, route, service) in cases {
        let (code, v) = trace_json(&[url]);
        assert_eq!(code, Some(0), "{url}: {v:#}");
        assert_eq!(v["reached"], true, "{url}");
        assert_eq!(v["outcome"], "backend", "{url}");
        assert_eq!(v["kong"]["route"], route, "{url}");
        assert_eq!(v["backend"]["name"], service, "{url}");
        // The bridge and the rewritten Host lead to the Lattice service that answered.
        assert_eq!(v["bridge"]["externalName"], v["latticeHost"], "{url}");
        assert_eq!(v["lattice"]["customDomain"], v["latticeHost"], "{url}");
    }
}

#[test]
fn trace_explains_segment_and_string_matching() {
    let (_, v) = trace_json(&["/shop/cartx"]);
    // Kong: /shop/cart does not match /shop/cartx (whole segments only).
    assert_eq!(v["notMatching"][0]["route"], "kong-routes/cart");
    assert_eq!(v["kong"]["over"], serde_json::json!([]));
    let (_, v) = trace_json(&["/shopping"]);
    // Lattice: /shop would match /shopping as a string, so the two apps are in different
    // groups: no other rule of /shopping's group matches it, whatever the rules' order.
    assert!(
        v["lattice"]["laterMatching"]
            .as_array()
            .is_none_or(|later| later.is_empty()),
        "{v:#}"
    );
    assert_ne!(
        v["lattice"]["route"],
        trace_json(&["/shop"]).1["lattice"]["route"]
    );
    // A committed pair (check's `order-dependent-group` fixture): trace shows the later
    // rule that would take /shopping if the controller put it first.
    let fixture = common::root().join("tests/check/order-dependent-group");
    let run = latgen(
        &fixture,
        &["trace", "/shopping", "-o", "generated", "--format", "json"],
    );
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    let later = &v["lattice"]["laterMatching"];
    assert_eq!(later[0]["match"]["value"], "/shop", "{v:#}");
    assert!(later[0]["rule"].as_u64() > v["lattice"]["rule"].as_u64());
    // Another app's rule: reached if the controller puts it first.
    assert_eq!(later[0]["otherBackend"], true, "{v:#}");
    let human = latgen(&fixture, &["trace", "/shopping", "-o", "generated"]);
    assert!(
        human.stdout.contains(
            "rule 2 (PathPrefix /shop) matches too but comes later: it takes the request if the controller puts it first (order-dependent-group)"
        ),
        "{}",
        human.stdout
    );
    let (_, v) = trace_json(&["/shop/cart/x"]);
    assert_eq!(v["kong"]["over"][0]["route"], "kong-routes/shop-web");
    assert_eq!(v["kong"]["over"][0]["why"], "a shorter prefix");
}

/// The address of the app a request reaches, for callers that skip Kong: the Lattice
/// service's domain and the app's paths there; straight at it, the same app answers.
#[test]
fn trace_gives_the_address_of_the_app_it_reaches() {
    let (code, v) = trace_json(&["/orders"]);
    assert_eq!(code, Some(0), "{v:#}");
    assert_eq!(v["address"]["domain"], v["latticeHost"], "{v:#}");
    assert_eq!(v["address"]["paths"], serde_json::json!(["/orders"]));
    assert_eq!(v["alsoAt"], serde_json::json!([]));
    let domain = v["address"]["domain"].as_str().unwrap();
    let (code, direct) = trace_json(&[&format!("https://{domain}/orders")]);
    assert_eq!(code, Some(0), "{direct:#}");
    assert_eq!(direct["direct"], true);
    assert_eq!(direct["backend"], v["backend"]);
    assert_eq!(direct["address"], v["address"]);
}

#[test]
fn trace_of_an_unknown_path_is_a_404_from_kong() {
    let (code, v) = trace_json(&["/no-such-app"]);
    assert_eq!(code, Some(1));
    assert_eq!(v["reached"], false);
    assert_eq!(v["outcome"], "no-kong-route");
    assert_eq!(v["kong"], Value::Null);
    // The host-routed apps would take it on their own hosts (the storefront on two).
    assert_eq!(v["otherHosts"].as_array().unwrap().len(), 7);
}

#[test]
fn trace_human_output() {
    let run = latgen(&common::root(), &["trace", "/shop/cart/x"]);
    ok(&run);
    assert_eq!(run.stderr, "");
    assert_eq!(
        run.stdout,
        "\
request   path /shop/cart/x, no Host (only routes for any host match)
kong      route kong-routes/cart (generated/kong/httproute-cart.yaml:24)
          matched PathPrefix /shop/cart on any host (the route names no hostname): the longest matching prefix wins
          won over kong-routes/shop-web (PathPrefix /shop): a shorter prefix
bridge    Service kong-routes/cart-lattice, ExternalName group-02.lattice.internal (generated/kong/service-cart-lattice.yaml)
          Host rewritten to group-02.lattice.internal
lattice   service group-02-lattice-groups (route lattice-groups/group-02), custom domain group-02.lattice.internal (generated/lattice/httproute-group-02.yaml)
          rule 3 of 10 matched: PathPrefix /shop/cart (generated/lattice/httproute-group-02.yaml:53), the first rule, in order, whose prefix starts the path as a string
auth      as Kong, an unsigned caller from vpc-0a1b2c3d4e5f67890 (GET): allowed by statement 10 (generated/lattice/iamauthpolicy-group-02.yaml)
          a request through Kong reaches Lattice as Kong (auth.kong in latgen.yaml), not as the client behind it
backend   Service team-commerce/cart-web, port 8080
address   callers that skip Kong reach it at group-02.lattice.internal on /shop/cart
"
    );
    let run = latgen(
        &common::root(),
        &["trace", "/no-such-app", "--host", "x.example.com"],
    );
    assert_eq!(run.code, Some(1));
    assert!(
        run.stdout.starts_with(
            "request   Host x.example.com, path /no-such-app\nkong      no route matches: Kong answers 404\n          kong-routes/brand-assets would take it on host brand.example-shop.com\n"
        ),
        "{}",
        run.stdout
    );
}

/// Under header dispatch, trace shows the header Kong sets and the header rule that
/// matches it: a host-routed app answers from a shared group.
#[test]
fn trace_shows_the_header_step_of_header_dispatch() {
    let tmp = common::copy_project(&common::fixture("header"));
    ok(&latgen(tmp.path(), &["render"]));
    let run = latgen(tmp.path(), &["trace", "https://www.example.com/shop/cartx"]);
    ok(&run);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert!(
        lines.contains(&"          header x-shop-app: www set (a client's value is replaced)"),
        "{}",
        run.stdout
    );
    assert!(
        lines.iter().any(|l| l.starts_with("          rule 3 of 3 matched: header x-shop-app: www and PathPrefix / (generated/lattice/httproute-group-03.yaml:")),
        "{}",
        run.stdout
    );
    assert!(
        lines.contains(&"backend   Service web/www, port 80"),
        "{}",
        run.stdout
    );
    // Callers that skip Kong must send the header Kong would.
    assert_eq!(
        lines.last(),
        Some(
            &"address   callers that skip Kong reach it at group-03.lattice.internal with header x-shop-app: www"
        )
    );
    let run = latgen(tmp.path(), &["trace", "/shop/cartx", "--format", "json"]);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["kong"]["setsHeaders"]["x-shop-app"], "shop");
    assert_eq!(v["lattice"]["match"]["headers"][0]["value"], "shop");
    assert_eq!(v["backend"]["name"], "shop");
}

#[test]
fn trace_reports_a_broken_path() {
    let tmp = common::scratch();
    let dir = tmp.path();
    common::path_app(dir, "shop", &["/shop"]);
    ok(&latgen(dir, &["render"]));
    let path = "/shop/x";
    ok(&latgen(dir, &["trace", path]));
    // The Kong side went live before the Lattice side.
    std::fs::remove_file(dir.join("generated/lattice/httproute-group-01.yaml")).unwrap();
    let run = latgen(dir, &["trace", path, "--format", "json"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["outcome"], "no-lattice-service");
    assert_eq!(v["reached"], false);
    let human = latgen(dir, &["trace", path]);
    assert_eq!(human.code, Some(1));
    assert!(
        human
            .stdout
            .contains("\nbroken    no Lattice service (none answers on "),
        "{}",
        human.stdout
    );
}

#[test]
fn trace_agrees_with_the_routing_model() {
    // The winner trace shows is the route `check` follows, for every probe of the example.
    let net = latgen::check::follow::read_network(&common::root().join("generated")).unwrap();
    let probes = net.probes();
    assert!(probes.len() > 300);
    for (host, path) in probes {
        let candidates = net.kong_candidates(&host, &path);
        let first = candidates
            .first()
            .map(|c| (&c.route.namespace, &c.route.name));
        let model = net
            .kong_route(&host, &path)
            .map(|r| (&r.namespace, &r.name));
        assert_eq!(first, model, "{host}{path}");
        let t = latgen::check::follow::trace(
            &net,
            latgen::check::follow::Request {
                host: Some(host.clone()),
                path: path.clone(),
            },
            &latgen::check::trace_auth::Callers::none(),
        );
        assert_eq!(t.outcome, net.route(&host, &path), "{host}{path}");
    }
}

#[test]
fn trace_usage_errors_exit_2() {
    let root = common::root();
    for args in [
        vec!["trace", "shop"],
        vec!["trace", "ftp://x/shop"],
        vec![
            "trace",
            "https://a.example.com/x",
            "--host",
            "b.example.com",
        ],
        vec!["trace", "/shop", "-o", "no-such-folder"],
        vec!["trace"],
    ] {
        let run = latgen(&root, &args);
        assert_eq!(run.code, Some(2), "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{args:?}");
        assert!(!run.stderr.is_empty(), "{args:?}");
    }
}

// ---------------------------------------------------------------------------------------
// manifests (the Argo CD plugin's generate command)
// ---------------------------------------------------------------------------------------

#[test]
fn manifests_print_one_side_as_a_yaml_stream() {
    let root = common::root();
    for side in ["kong", "lattice"] {
        let run = latgen(&root, &["manifests", "--side", side]);
        ok(&run);
        let docs: Vec<Value> = serde_saphyr::from_multiple(&run.stdout).unwrap();
        let files = common::read_tree(&root.join("generated").join(side));
        let objects: Vec<&String> = files
            .iter()
            .filter(|(p, _)| p.as_os_str() != "kustomization.yaml")
            .map(|(_, t)| t)
            .collect();
        assert_eq!(docs.len(), objects.len(), "{side}");
        assert!(
            docs.iter()
                .all(|d| d["kind"].is_string() && d["metadata"]["name"].is_string())
        );
        // The committed output is current, so the stream is exactly its files, each of
        // which starts its own document.
        let joined: Vec<&str> = objects.iter().map(|t| t.as_str()).collect();
        assert_eq!(run.stdout, joined.concat(), "{side}");
    }
}

#[test]
fn manifests_fail_loudly() {
    // An input error: diagnostics on stderr, nothing on stdout.
    let tmp = common::scratch();
    common::app(
        tmp.path(),
        "bad",
        "namespace: a\nservice: { name: a, port: 80 }\npaths: [shop]\n",
    );
    let run = latgen(tmp.path(), &["manifests", "--side", "kong"]);
    assert_eq!(run.code, Some(2));
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains("error["), "{}", run.stderr);

    // No app: an empty stream would make Argo CD prune everything.
    let tmp = common::scratch();
    std::fs::create_dir(tmp.path().join("apps")).unwrap();
    let run = latgen(tmp.path(), &["manifests", "--side", "lattice"]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert!(run.stderr.contains("no manifest"), "{}", run.stderr);

    // A side is required.
    let run = latgen(&common::root(), &["manifests"]);
    assert_eq!(run.code, Some(2));
    assert_eq!(run.stdout, "");
}

// ---------------------------------------------------------------------------------------
// completions (`--help` and `man` are in tests/help.rs)
// ---------------------------------------------------------------------------------------

const SUBCOMMANDS: &[&str] = &[
    "render",
    "check",
    "move",
    "status",
    "import",
    "plan",
    "promote",
    "cost",
    "trace",
    "manifests",
    "schema",
    "init",
    "deploy",
    "explain",
    "completions",
    "man",
];

/// What latgen offers a shell that asks (as the script `completions bash` prints does) to
/// complete `words`, the last one being the word under the cursor, in `dir`.
fn complete(dir: &Path, words: &[&str]) -> Vec<String> {
    let out = Command::new(common::bin())
        .arg("--")
        .args(words)
        .env("LATGEN_COMPLETE", "bash")
        .env("_CLAP_COMPLETE_INDEX", (words.len() - 1).to_string())
        .current_dir(dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{words:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout.lines().map(str::to_string).collect()
}

#[test]
fn completions_cover_the_subcommands() {
    use clap::CommandFactory;
    let declared: Vec<String> = latgen::cli::Cli::command()
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    assert_eq!(declared, SUBCOMMANDS, "the subcommands this test expects");
    // The script registers latgen with the shell, which then asks latgen on each Tab.
    let run = latgen(&common::root(), &["completions", "bash"]);
    ok(&run);
    assert!(
        run.stdout.contains(" -F _clap_complete_latgen latgen\n"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("LATGEN_COMPLETE=\"bash\""),
        "{}",
        run.stdout
    );
    let offered = complete(&common::root(), &["latgen", ""]);
    for sub in SUBCOMMANDS {
        assert!(offered.iter().any(|o| o == sub), "no {sub} in {offered:?}");
    }
    for shell in ["zsh", "fish", "powershell", "elvish"] {
        let run = latgen(&common::root(), &["completions", shell]);
        ok(&run);
        assert!(run.stdout.contains("LATGEN_COMPLETE"), "{shell}");
    }
    assert_eq!(
        latgen(&common::root(), &["completions", "tcsh"]).code,
        Some(2)
    );
}

#[test]
fn explain_completes_the_finding_codes() {
    let root = common::root();
    assert_eq!(
        complete(&root, &["latgen", "explain", "ord"]),
        ["order-dependent-group"]
    );
    let all: Vec<&str> = latgen::diag::codes::Code::ALL
        .iter()
        .map(|c| c.as_str())
        .collect();
    let offered = complete(&root, &["latgen", "explain", ""]);
    let values: Vec<&String> = offered.iter().filter(|o| !o.starts_with('-')).collect();
    assert_eq!(values, all);
}

/// The example's app names after `latgen move`, by file stem or `name:` line, from the
/// project folder or below it.
#[test]
fn move_completes_the_app_names_of_the_example() {
    let root = common::root();
    assert_eq!(
        complete(&root, &["latgen", "move", "st"]),
        ["status-page", "storefront-www"]
    );
    assert_eq!(
        complete(&root.join("apps/commerce"), &["latgen", "move", "che"]),
        ["checkout"]
    );
    let offered = complete(&root, &["latgen", "move", ""]);
    let apps: Vec<&String> = offered.iter().filter(|o| !o.starts_with('-')).collect();
    assert_eq!(apps.len(), 79, "{apps:?}");
}

#[test]
fn schema_prints_the_committed_schemas() {
    let root = common::root();
    let app = latgen(&root, &["schema"]);
    ok(&app);
    assert_eq!(app.stdout, read("schemas/app.schema.json"));
    assert_eq!(latgen(&root, &["schema", "app"]).stdout, app.stdout);
    let config = latgen(&root, &["schema", "config"]);
    ok(&config);
    assert_eq!(config.stdout, read("schemas/latgen.schema.json"));
}

// ---------------------------------------------------------------------------------------
// Integration files
// ---------------------------------------------------------------------------------------

fn yaml(rel: &str) -> Value {
    serde_saphyr::from_str(&read(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn pre_commit_hooks() {
    let hooks = yaml(".pre-commit-hooks.yaml");
    let hooks = hooks.as_array().expect("a list of hooks");
    let ids: Vec<&str> = hooks.iter().map(|h| h["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["latgen-check", "latgen-render"]);
    for h in hooks {
        let id = h["id"].as_str().unwrap();
        // The release binary through the hook repository's script (no build), judged
        // against the merge base with the default branch, so a staged half stays.
        assert_eq!(
            h["entry"],
            format!("{} --base auto", id.replace("latgen-", "hooks/run-latgen ")),
            "{id}"
        );
        assert_eq!(h["language"], "script", "{id}");
        assert_eq!(h["pass_filenames"], false, "{id}");
        assert!(h["name"].is_string(), "{id}");
        let files = h["files"].as_str().unwrap();
        for path in ["apps/", "latgen.yaml", "latgen.lock", "generated/"] {
            let escaped = path.replace('.', "\\.");
            assert!(
                files.contains(&escaped),
                "{id}: files does not match {path}"
            );
        }
    }
}

#[test]
fn the_pre_commit_script_runs_the_given_latgen_and_knows_each_release_target() {
    let script = common::root().join("hooks/run-latgen");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&script).unwrap().permissions().mode();
        assert!(mode & 0o111 != 0, "hooks/run-latgen is executable");
    }
    // LATGEN short-cuts the download, as a hook offline would.
    let out = Command::new("sh")
        .arg(&script)
        .args(["explain", "nested-prefix"])
        .env("LATGEN", common::bin())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("nested-prefix (error)"));
    // It downloads the assets the release workflow publishes.
    let text = read("hooks/run-latgen");
    let release = read(".github/workflows/release.yml");
    for target in [
        "x86_64-unknown-linux-musl",
        "aarch64-unknown-linux-musl",
        "x86_64-apple-darwin",
        "aarch64-apple-darwin",
    ] {
        assert!(text.contains(&format!("target={target}")), "{target}");
        assert!(release.contains(&format!("target: {target}")), "{target}");
    }
    assert!(text.contains("https://github.com/$LATGEN_REPO/releases/download}"));
    assert!(text.contains("url=\"$releases/v$version/$archive\""));
    assert!(release.contains("archive=\"latgen-$TARGET.tar.gz\""));
}

/// Offline (here: a releases folder whose host cannot resolve) the script fails with what
/// to do instead: set LATGEN to a local binary.
#[test]
fn the_pre_commit_script_offline_names_latgen() {
    let cache = common::scratch();
    let out = Command::new("sh")
        .arg(common::root().join("hooks/run-latgen"))
        .arg("check")
        .env_remove("LATGEN")
        .env("XDG_CACHE_HOME", cache.path())
        .env(
            "LATGEN_RELEASES_URL",
            "https://latgen-releases.invalid/download",
        )
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("latgen: could not download https://latgen-releases.invalid/download/")
            || stderr.contains("curl is not installed"),
        "{stderr}"
    );
    assert!(
        stderr.contains("set LATGEN=/path/to/latgen to use a local binary"),
        "{stderr}"
    );
}

/// The placeholder for latgen's public repository: REPO_URL in src/diag/codes.rs is the one place
/// it is set in code; each file that must name it outside the code has it as one marked
/// value, equal to it, and no other spelling is left.
#[test]
fn the_public_repository_is_named_in_one_place() {
    let url = latgen::diag::codes::REPO_URL;
    let slug = url.strip_prefix("https://github.com/").unwrap();
    let workflow = yaml("examples/github-actions.yml");
    assert_eq!(workflow["env"]["LATGEN_REPO"], slug);
    let action = yaml("action.yml");
    assert_eq!(action["inputs"]["repository"]["default"], slug);
    let short = read("examples/github-workflow.yml");
    assert_eq!(
        short.matches(&format!("uses: {slug}@")).count(),
        2,
        "examples/github-workflow.yml"
    );
    assert!(
        read("hooks/run-latgen").contains(&format!("\nLATGEN_REPO=\"{slug}\"\n")),
        "hooks/run-latgen"
    );
    assert!(
        read("Cargo.toml").contains(&format!("\nrepository = \"{url}\"\n")),
        "Cargo.toml"
    );
    let example = latgen::pipeline::prepare(&latgen::input::ProjectPaths::at_root(&common::root()))
        .prepared
        .unwrap();
    assert_eq!(example.config.deploy.unwrap().repo_url, url, "latgen.yaml");
    let sidecar = yaml("examples/argocd-cmp/repo-server-sidecar.yaml");
    let image = sidecar["spec"]["template"]["spec"]["containers"][0]["image"]
        .as_str()
        .unwrap();
    assert_eq!(
        image,
        format!("ghcr.io/{slug}:{}", env!("CARGO_PKG_VERSION")),
        "the sidecar's image"
    );
    assert!(
        read(INTEGRATIONS_PAGE).contains(&format!("repo: {url}\n")),
        "{INTEGRATIONS_PAGE}: the pre-commit example"
    );
    // The old placeholder, spelled so that this file does not hold it.
    let old = ["your", "org"].join("-");
    let root = common::root();
    let tree = walkdir::WalkDir::new(&root)
        .into_iter()
        .filter_entry(|e| !matches!(e.file_name().to_str(), Some("target" | ".git")));
    for entry in tree {
        let entry = entry.unwrap();
        if !entry.file_type().is_file() {
            continue;
        }
        if let Ok(text) = std::fs::read_to_string(entry.path()) {
            assert!(!text.contains(&old), "{}", entry.path().display());
        }
    }
}

#[test]
fn the_workflow_installs_this_release() {
    let w = yaml("examples/github-actions.yml");
    let version = format!("v{}", env!("CARGO_PKG_VERSION"));
    assert_eq!(w["env"]["LATGEN_VERSION"], version);
    // The action installs it by default, and the short workflow asks for it.
    let action = yaml("action.yml");
    assert_eq!(action["inputs"]["version"]["default"], version);
    let short = yaml("examples/github-workflow.yml");
    let check = &short["jobs"]["check"]["steps"][1];
    assert_eq!(check["with"]["version"], version);
    assert!(
        check["uses"]
            .as_str()
            .unwrap()
            .ends_with(&format!("@{version}"))
    );
}

/// The workflow `init` writes: the action in its two modes, a job each, the check job
/// with no write token and the comment job running none of the PR's files.
#[test]
fn the_short_workflow_uses_the_action_in_two_jobs() {
    let w = yaml("examples/github-workflow.yml");
    let slug = latgen::diag::codes::REPO_URL
        .strip_prefix("https://github.com/")
        .unwrap();
    let check = &w["jobs"]["check"];
    assert_eq!(
        check["permissions"],
        serde_json::json!({"contents": "read", "security-events": "write", "actions": "read"})
    );
    let steps = check["steps"].as_array().unwrap();
    let checkout = step_using(steps, "actions/checkout");
    assert_eq!(checkout["with"]["fetch-depth"], 0);
    assert_eq!(checkout["with"]["persist-credentials"], false);
    assert!(step_using(steps, slug)["with"]["mode"].is_null());
    let comment = &w["jobs"]["comment"];
    assert_eq!(comment["needs"], "check");
    assert_eq!(
        comment["permissions"],
        serde_json::json!({"pull-requests": "write"})
    );
    let steps = comment["steps"].as_array().unwrap();
    assert_eq!(
        steps.len(),
        1,
        "no checkout: the PR's files are not fetched"
    );
    assert_eq!(step_using(steps, slug)["with"]["mode"], "comment");
    assert!(!read("examples/github-workflow.yml").contains("${{ secrets"));
}

/// action.yml: the inputs the scripts read reach them through `env` (never spliced into a
/// script), and every action it uses is pinned.
#[test]
fn the_action_passes_its_inputs_as_environment() {
    let a = yaml("action.yml");
    assert_eq!(a["runs"]["using"], "composite");
    let steps = a["runs"]["steps"].as_array().unwrap();
    for step in steps {
        if let Some(run) = step["run"].as_str() {
            assert!(!run.contains("${{"), "{run}");
            assert_eq!(step["shell"], "bash");
        }
    }
    let pinned: Vec<Value> = steps
        .iter()
        .filter(|s| s["uses"].is_string())
        .cloned()
        .collect();
    assert_pinned(&pinned);
    // The scripts the steps run are in the repository and executable.
    for script in ["install.sh", "check.sh", "comment.sh"] {
        let path = common::root().join("action").join(script);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert!(mode & 0o111 != 0, "action/{script} is executable");
        }
        let call = format!("\"$GITHUB_ACTION_PATH/action/{script}\"");
        assert!(
            steps
                .iter()
                .any(|s| s["run"].as_str() == Some(call.as_str())),
            "no step runs action/{script}"
        );
    }
}

#[test]
fn argocd_plugin() {
    let p = yaml("examples/argocd-cmp/plugin.yaml");
    assert_eq!(p["apiVersion"], "argoproj.io/v1alpha1");
    assert_eq!(p["kind"], "ConfigManagementPlugin");
    assert_eq!(p["metadata"]["name"], "latgen");
    let generate = &p["spec"]["generate"];
    let script = generate["args"][0].as_str().unwrap();
    assert_eq!(generate["command"], serde_json::json!(["sh", "-c"]));
    assert!(script.contains("latgen manifests apps --side"), "{script}");
    // An unset parameter stops the shell before latgen runs.
    assert!(script.contains("${PARAM_SIDE:?"), "{script}");
    assert_eq!(p["spec"]["parameters"]["static"][0]["name"], "side");
    assert_eq!(p["spec"]["discover"]["fileName"], "./latgen.lock");
}

/// `PATH` with the folder of the latgen under test first, as the plugin's sidecar has it.
fn path_with_latgen() -> String {
    let bin = common::bin().parent().unwrap().to_path_buf();
    let path = std::env::var("PATH").unwrap_or_default();
    format!("{}:{path}", bin.display())
}

#[test]
fn argocd_plugin_script_runs() {
    // The generate script, as the sidecar runs it, in the example project.
    let p = yaml("examples/argocd-cmp/plugin.yaml");
    let script = p["spec"]["generate"]["args"][0]
        .as_str()
        .unwrap()
        .to_string();
    let path = path_with_latgen();
    let run = |side: Option<&str>| {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", &script])
            .current_dir(common::root())
            .env("PATH", &path);
        cmd.env_remove("PARAM_SIDE");
        if let Some(s) = side {
            cmd.env("PARAM_SIDE", s);
        }
        cmd.output().unwrap()
    };
    let out = run(Some("kong"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        latgen(&common::root(), &["manifests", "--side", "kong"]).stdout
    );
    let out = run(None);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
}

/// In a project with environments the plugin's `env` parameter chooses the environment:
/// the script prints what `latgen manifests --env` prints for it.
#[test]
fn argocd_plugin_script_renders_the_environment_its_parameter_names() {
    let p = yaml("examples/argocd-cmp/plugin.yaml");
    let script = p["spec"]["generate"]["args"][0].as_str().unwrap();
    let params = p["spec"]["parameters"]["static"].as_array().unwrap();
    assert!(
        params
            .iter()
            .any(|q| q["name"] == "env" && q["required"] == false)
    );
    let tmp = common::copy_project(&common::fixture("environments"));
    let path = path_with_latgen();
    let out = Command::new("sh")
        .args(["-c", script])
        .current_dir(tmp.path())
        .env("PATH", &path)
        .env("PARAM_SIDE", "kong")
        .env("PARAM_ENV", "staging")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = latgen(
        tmp.path(),
        &["manifests", "--side", "kong", "--env", "staging"],
    );
    assert_eq!(String::from_utf8(out.stdout).unwrap(), expected.stdout);
    assert!(expected.stdout.contains("staging.example.com"));
}

/// The step of `steps` that uses `action` (`owner/name`, any version).
fn step_using<'a>(steps: &'a [Value], action: &str) -> &'a Value {
    steps
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with(&format!("{action}@")))
        })
        .unwrap_or_else(|| panic!("no step uses {action}"))
}

/// Every action `steps` use is pinned to a full commit (zizmor's unpinned-uses).
fn assert_pinned(steps: &[Value]) {
    for step in steps {
        if let Some(uses) = step["uses"].as_str() {
            let (_, rev) = uses.split_once('@').unwrap();
            assert!(
                rev.len() == 40 && rev.bytes().all(|b| b.is_ascii_hexdigit()),
                "{uses} is not pinned to a commit"
            );
        }
    }
}

#[test]
fn github_actions_workflow() {
    let w = yaml("examples/github-actions.yml");
    let steps = w["jobs"]["check"]["steps"].as_array().unwrap();
    let checkout = step_using(steps, "actions/checkout");
    assert_eq!(checkout["with"]["fetch-depth"], 0);
    // The threat model: no credential left on disk, no secret in the environment.
    assert_eq!(checkout["with"]["persist-credentials"], false);
    assert!(
        !read("examples/github-actions.yml").contains("${{ secrets"),
        "the workflow hands latgen a secret"
    );
    let runs: Vec<&str> = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    // The release binary, checked against its checksum; never a build.
    assert!(runs.iter().all(|r| !r.contains("cargo")));
    assert!(runs.iter().any(|r| {
        r.contains("releases/download/$LATGEN_VERSION/$archive") && r.contains("sha256sum -c")
    }));
    assert!(
        runs.iter()
            .any(|r| r.contains("latgen check --format github --base \"$BASE\""))
    );
    assert_eq!(
        w["jobs"]["check"]["env"]["BASE"],
        "origin/${{ github.base_ref }}"
    );
    assert!(runs.iter().any(|r| r.contains("--format sarif")));
    assert!(steps.iter().any(|s| {
        s["uses"]
            .as_str()
            .is_some_and(|u| u.starts_with("github/codeql-action/upload-sarif@"))
    }));
    // Permissions per job, none at the workflow level (zizmor's excessive-permissions).
    assert_eq!(w["permissions"], serde_json::json!({}));
    assert_eq!(
        w["jobs"]["check"]["permissions"],
        serde_json::json!({"contents": "read", "security-events": "write", "actions": "read"})
    );
    for job in w["jobs"].as_object().unwrap().values() {
        assert_pinned(job["steps"].as_array().unwrap());
    }
}

/// The PR comment: the job that runs latgen on the PR's files holds no write token; the job
/// that holds one runs no PR file, only GitHub's CLI on the summary, and updates the one
/// comment that starts with the summary's marker and is its own.
#[test]
fn github_actions_workflow_posts_one_pr_comment() {
    let w = yaml("examples/github-actions.yml");
    let check = &w["jobs"]["check"];
    assert!(check["permissions"]["pull-requests"].is_null());
    assert!(w["permissions"]["pull-requests"].is_null());
    let runs = |job: &Value| -> Vec<String> {
        job["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s["run"].as_str().map(str::to_string))
            .collect()
    };
    assert!(runs(check).iter().any(|r| {
        r.contains("latgen check --format markdown --base \"$BASE\" > latgen-comment.md")
    }));
    let comment = &w["jobs"]["comment"];
    assert_eq!(comment["needs"], "check");
    assert_eq!(comment["permissions"]["pull-requests"], "write");
    assert_eq!(comment["continue-on-error"], true);
    let uses: Vec<&str> = comment["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["uses"].as_str())
        .collect();
    assert!(
        uses.iter()
            .all(|u| u.starts_with("actions/download-artifact@")),
        "{uses:?}"
    );
    let script = runs(comment).join("\n");
    assert!(
        !["latgen check", "latgen render", "cargo", "actions/checkout"]
            .iter()
            .any(|c| script.contains(c)),
        "{script}"
    );
    // The marker the summary starts with (tests/rollout/*.expected.md) finds the comment.
    let marker = read("tests/rollout/add.expected.md")
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert!(
        script.contains(&format!("startswith(\"{marker}\")")),
        "{script}"
    );
    // Anyone can post a comment that starts with the marker: the job's comment is also the
    // bot's own, or a planted one would be taken for it (and edited, or kept in its place).
    assert!(
        script.contains(".user.login == \"github-actions[bot]\""),
        "{script}"
    );
    assert!(
        script.contains("-X PATCH") && script.contains("-X POST"),
        "{script}"
    );
}

#[test]
fn gitattributes_mark_the_output_generated_and_keep_its_diffs() {
    let text = read(".gitattributes");
    let rules: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(rules, ["generated/** linguist-generated=true"]);
}

/// The book's page that documents the integrations.
const INTEGRATIONS_PAGE: &str = "docs/src/guide/deploying.md";

#[test]
fn the_book_documents_the_integrations() {
    let page = read(INTEGRATIONS_PAGE);
    assert!(page.contains("## Integrations"));
    for f in [
        ".pre-commit-hooks.yaml",
        "examples/github-actions.yml",
        "examples/argocd-cmp/plugin.yaml",
        ".gitattributes",
        "latgen trace",
        "latgen init",
        "latgen schema",
        "latgen manifests",
        "latgen completions",
        "latgen man",
    ] {
        assert!(page.contains(f), "{INTEGRATIONS_PAGE} does not mention {f}");
    }
}

/// A failed init restores a `.gitignore` it cannot read as text byte for byte (it used to
/// take "not UTF-8" for "not there" and delete it).
#[test]
fn a_failed_init_keeps_a_gitignore_that_is_not_utf8() {
    let tmp = common::scratch();
    let dir = tmp.path();
    let bytes = b"#caf\xe9\n/target\n".to_vec();
    std::fs::write(dir.join(".gitignore"), &bytes).unwrap();
    let run = latgen(dir, &["init", "--service-name-prefix", "Bad_Prefix"]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert_eq!(std::fs::read(dir.join(".gitignore")).unwrap(), bytes);
}

/// The project's own CI on GitHub runs the gate `.ci/run` runs here, on pushes and pull
/// requests, with actions pinned to commits and permissions per job (zizmor's rules;
/// `.ci/run` lints it with actionlint and zizmor too).
#[test]
fn the_projects_ci_workflow_runs_the_gate() {
    let w = yaml(".github/workflows/ci.yml");
    let on = w["on"].as_object().expect("`on` names the events");
    assert!(
        on.contains_key("push") && on.contains_key("pull_request"),
        "{on:?}"
    );
    assert_eq!(w["permissions"], serde_json::json!({}));
    let gate = &w["jobs"]["gate"];
    assert_eq!(gate["permissions"], serde_json::json!({"contents": "read"}));
    let steps = gate["steps"].as_array().unwrap();
    assert!(
        steps.iter().any(|s| s["run"] == "bash .ci/run"),
        "{steps:?}"
    );
    assert_pinned(steps);
    let checkout = step_using(steps, "actions/checkout");
    assert_eq!(checkout["with"]["persist-credentials"], false);
}
