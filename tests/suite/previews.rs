//! Previews (`previews/*.yaml`): every preview host reaches its preview's Service on its
//! app's paths, and the rest of that host goes where Gateway API names it; a forged
//! dispatch header reaches no other preview and no other app; and adding or removing a
//! preview leaves every production file byte for byte as it was.

use super::common;
use super::project;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use latgen::input::app::App;
use latgen_sim::routing::Headers;

/// The fixture's apps, and each preview as the host-routed app Gateway API semantics see
/// in its Kong route: the app's paths on the preview's host, to the preview's Service.
fn apps_and_previews(built: &latgen::pipeline::Built) -> Vec<App> {
    let mut apps = built.prepared.apps.clone();
    for p in &built.prepared.plan.previews.list {
        let mut preview = built.prepared.apps[p.app.index()].clone();
        preview.name = format!("{}.{}", p.name, p.app_name);
        preview.host = Some(p.host.clone());
        preview.kong.hosts.clear();
        preview.service = p.service.clone();
        preview.port = p.port;
        apps.push(preview);
    }
    apps
}

/// No header, each preview's header value, each app's name, and a value in capitals.
fn forged(built: &latgen::pipeline::Built) -> Vec<Headers> {
    let header = built.prepared.config.lattice.dispatch_header.clone();
    let previews = built.prepared.plan.previews.list.iter();
    let values = (previews.map(|p| format!("{}.{}", p.name, p.app_name)))
        .chain(built.prepared.apps.iter().map(|a| a.name.clone()))
        .chain(["PR-123.SHOP".to_string()]);
    values
        .map(|v| Headers::from([(header.clone(), v)]))
        .chain([Headers::new()])
        .collect()
}

#[test]
fn every_preview_host_reaches_its_preview_forged_headers_included() {
    let built = project::built(&common::fixture("previews"));
    assert_eq!(built.prepared.plan.previews.list.len(), 4);
    let net = project::network(&built.output.files);
    let apps = apps_and_previews(&built);
    let n = project::oracle::misroutes(&apps, &built.prepared.config, &net, &forged(&built))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(n > 1000, "probed {n} requests");
}

/// The fixture rendered as it is and without `previews/`: the files of the second.
fn with_and_without() -> (BTreeMap<PathBuf, String>, BTreeMap<PathBuf, String>) {
    let dir = common::fixture("previews");
    let with = project::render_dir(&dir).unwrap();
    let tmp = common::copy_project(&dir);
    std::fs::remove_dir_all(tmp.path().join("previews")).unwrap();
    let without = project::render_dir(tmp.path()).unwrap();
    (with, without)
}

/// What may change when previews come and go: their own files, the lists of files, and the
/// lock's `previews:` section.
fn preview_only(path: &Path) -> bool {
    let name = path.file_name().unwrap().to_string_lossy();
    name.contains("preview-") || name == "kustomization.yaml" || name == "latgen.lock"
}

#[test]
fn previews_leave_every_production_file_byte_for_byte() {
    let (with, without) = with_and_without();
    for (path, text) in &without {
        if preview_only(path) {
            continue;
        }
        pretty_assertions::assert_eq!(
            with.get(path),
            Some(text),
            "{} changes with the previews",
            path.display()
        );
    }
    // What the previews add beyond their own files: a grant into the namespace of a
    // host-routed app, which no production group points into.
    let added: Vec<&PathBuf> = (with.keys())
        .filter(|p| !without.contains_key(*p) && !preview_only(p))
        .collect();
    assert_eq!(
        added,
        [Path::new("lattice/referencegrant-team-web.yaml")],
        "{added:?}"
    );
    // And the production groups are the same groups.
    assert!(
        with.keys()
            .any(|p| p.ends_with("httproute-preview-02.yaml"))
    );
    assert!(
        without
            .keys()
            .all(|p| !p.to_string_lossy().contains("preview"))
    );
}

/// Removing one preview changes its own files and its group's route, nothing else.
#[test]
fn removing_a_preview_changes_only_its_own_files_and_its_group() {
    let dir = common::fixture("previews");
    let with = project::render_dir(&dir).unwrap();
    let tmp = common::copy_project(&dir);
    std::fs::remove_file(tmp.path().join("previews/shop-pr-130.yaml")).unwrap();
    let without = project::render_dir(tmp.path()).unwrap();
    let changed: Vec<String> = (with.keys().chain(without.keys()))
        .filter(|p| with.get(*p) != without.get(*p))
        .map(|p| p.display().to_string())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(
        changed,
        [
            "kong/httproute-preview-pr-130-shop.yaml",
            "kong/kustomization.yaml",
            "kong/service-preview-pr-130-shop.yaml",
            "latgen.lock",
            "lattice/httproute-preview-02.yaml",
        ]
    );
}

/// The lock keeps each preview in its group: a new preview takes a free place and moves
/// no other.
#[test]
fn a_new_preview_moves_no_other() {
    let dir = common::fixture("previews");
    let tmp = common::copy_project(&dir);
    std::fs::write(
        tmp.path().join("previews/shop-pr-100.yaml"),
        "app: shop\nname: pr-100\nservice: shop-web-pr-100\nexpires: 2099-12-31\n",
    )
    .unwrap();
    let built = project::built(tmp.path());
    let lock = &built.prepared.plan.lock.previews;
    let fixture = project::built(&dir);
    for (key, group) in &fixture.prepared.plan.lock.previews {
        assert_eq!(lock.get(key), Some(group), "{key}");
    }
    assert_eq!(lock.get("shop/pr-100"), Some(&3));
}

/// With `auth.mode: iam`, each preview group's policy stays within Lattice's size: an app
/// with many callers spreads its previews over more groups.
#[test]
fn preview_policies_stay_within_the_lattice_policy_size() {
    let tmp = common::scratch();
    let dir = tmp.path();
    std::fs::write(
        dir.join("latgen.yaml"),
        "previews:\n  host: \"{name}.{app}.preview.example.com\"\nauth:\n  mode: iam\n  account: \"111122223333\"\n  region: ap-northeast-2\n  kong: { vpcs: [vpc-0a1b2c3d4e5f67890] }\n",
    )
    .unwrap();
    let callers: String = (0..8)
        .map(|i| format!("  - principals: [\"arn:aws:iam::111122223333:role/reader-{i}\"]\n"))
        .collect();
    common::app(
        dir,
        "shop",
        &format!(
            "namespace: web\nservice: {{ name: shop, port: 80 }}\npaths: [/shop]\ncallers:\n{callers}"
        ),
    );
    std::fs::create_dir_all(dir.join("previews")).unwrap();
    for n in 0..12 {
        std::fs::write(
            dir.join(format!("previews/pr-{n}.yaml")),
            format!("app: shop\nname: pr-{n}\nservice: shop-pr-{n}\nexpires: 2099-12-31\n"),
        )
        .unwrap();
    }
    let built = project::built(dir);
    let groups = built.prepared.plan.previews.groups.len();
    assert!(groups > 1, "{groups} preview groups");
    let mut policies = 0;
    for (path, text) in &built.output.files {
        let name = path.file_name().unwrap().to_string_lossy();
        if name.starts_with("iamauthpolicy-preview-") {
            let doc: serde_json::Value = serde_saphyr::from_str(text).unwrap();
            let policy = doc["spec"]["policy"].as_str().unwrap();
            assert!(policy.len() <= 10_000, "{name}: {} bytes", policy.len());
            serde_json::from_str::<serde_json::Value>(policy).expect("the policy is JSON");
            policies += 1;
        }
    }
    assert_eq!(policies, groups);
}

/// The previews fixture with `lattice.serviceNamePrefix: shop-prod`.
fn previews_named_shop_prod() -> tempfile::TempDir {
    let tmp = common::copy_project(&common::fixture("previews"));
    let path = tmp.path().join("latgen.yaml");
    let config = std::fs::read_to_string(&path).unwrap();
    let named = config.replace("lattice:\n", "lattice:\n  serviceNamePrefix: shop-prod\n");
    std::fs::write(path, named).unwrap();
    tmp
}

/// With `lattice.serviceNamePrefix`, preview groups name their Lattice services from it
/// (`<prefix>-pv01`), so two projects on one service network keep them apart.
#[test]
fn preview_groups_take_the_service_name_prefix() {
    let tmp = previews_named_shop_prod();
    let dir = tmp.path();
    let files = project::render_dir(dir).unwrap();
    let route = &files[Path::new("lattice/httproute-preview-02.yaml")];
    assert!(
        route.contains("application-networking.k8s.aws/service-name-override: shop-prod-pv02"),
        "{route}"
    );
}

/// `cost` lists every Lattice service's name, the preview groups' among them: they are
/// services to find in the console and on the bill like any other.
#[test]
fn cost_names_the_preview_groups_services() {
    let tmp = previews_named_shop_prod();
    let dir = tmp.path();
    let run = common::latgen(dir, &["cost", "--format", "json"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let names: Vec<&str> = (doc["serviceNames"].as_array().unwrap().iter())
        .filter_map(|n| n["name"].as_str())
        .collect();
    assert!(names.contains(&"shop-prod-pv02"), "{names:?}");
    let table = common::latgen(dir, &["cost"]);
    assert!(table.stdout.contains("shop-prod-pv02"), "{}", table.stdout);
}
