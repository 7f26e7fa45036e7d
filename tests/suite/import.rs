//! `latgen import` of the field report's starting point, `examples/before/` (79 apps, one
//! Lattice service each, as a team's GitOps repository holds them): the declarations it
//! writes are the example's, the first render writes every imported object as it is (so
//! Argo CD adopting them changes nothing live), and `check` passes. The consolidation
//! to 14 services is shipped in `rollout.rs`.

use super::common;
use super::project;

use std::collections::BTreeMap;
use std::path::Path;

use common::latgen;
use latgen::input::app::App;

/// A throwaway copy of `examples/before/`: its settings and manifests.
fn before() -> tempfile::TempDir {
    let tmp = common::scratch();
    let from = common::root().join("examples/before");
    common::write_tree(tmp.path(), &common::read_tree(&from));
    tmp
}

/// `examples/before/` imported into a throwaway copy (not rendered).
pub(super) fn imported_before() -> tempfile::TempDir {
    let tmp = before();
    let run = latgen(tmp.path(), &["import", "workload", "gateway", "-o", "apps"]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    tmp
}

/// An app as the fields of its declaration say it, with or without the three no
/// manifest holds (peakRps, isolate, callers: what the team knows of its traffic and
/// callers, added to the declarations after the import).
fn declared(app: &App, intent: bool) -> String {
    let paths: Vec<_> = app.paths.iter().map(|p| (p.kind, &p.value)).collect();
    let mut s = format!(
        "{} {} {}:{} {:?} {paths:?} {:?} {:?}",
        app.name, app.namespace, app.service, app.port, app.host, app.health_check, app.kong
    );
    if intent {
        s += &format!(" {:?} {} {:?}", app.peak_rps, app.isolate, app.callers);
    }
    s
}

#[test]
fn import_of_the_before_example_declares_the_examples_apps() {
    let tmp = imported_before();
    let imported = project::built(tmp.path());
    let example = project::built(&common::root());
    let ours: Vec<String> = (imported.prepared.apps.iter())
        .map(|a| declared(a, false))
        .collect();
    let theirs: Vec<String> = (example.prepared.apps.iter())
        .map(|a| declared(a, false))
        .collect();
    assert_eq!(ours.len(), 79);
    assert_eq!(ours, theirs);
    // Each declaration is in its team's folder, as in the example.
    for app in &example.prepared.apps {
        let rel = app.file.strip_prefix(common::root()).unwrap();
        assert!(tmp.path().join(rel).is_file(), "{}", rel.display());
    }
}

#[test]
fn what_import_cannot_know_is_only_peak_rps_isolate_and_callers() {
    let tmp = imported_before();
    let imported = project::built(tmp.path());
    let example = project::built(&common::root());
    let differ: Vec<&str> = (imported.prepared.apps.iter().zip(&example.prepared.apps))
        .filter(|(a, b)| declared(a, true) != declared(b, true))
        .map(|(a, _)| a.name.as_str())
        .collect();
    // The example declares these for 13 apps (10 peak rates, 2 isolated, 3 with callers).
    assert_eq!(differ.len(), 13, "{differ:?}");
}

/// The objects of manifest files by (kind, namespace, name), as JSON with the API server's
/// defaults applied (stored form).
pub(super) fn stored_objects(
    files: &BTreeMap<std::path::PathBuf, String>,
) -> BTreeMap<String, serde_json::Value> {
    use latgen_sim::stored::{StoredKind, missing_defaults};
    let mut out = BTreeMap::new();
    for text in files.values() {
        let docs = serde_saphyr::from_multiple::<Option<serde_json::Value>>(text).unwrap();
        // `kubectl get -o yaml` writes several objects as one `kind: List`.
        let docs = docs
            .into_iter()
            .flatten()
            .flat_map(|d| match d["kind"].as_str() {
                Some("List") => d["items"].as_array().cloned().unwrap_or_default(),
                _ => vec![d],
            });
        for doc in docs {
            let mut doc = doc;
            let kind = doc["kind"].as_str().unwrap_or_default().to_string();
            let stored = match kind.as_str() {
                "HTTPRoute" => StoredKind::HttpRoute,
                "Service" => StoredKind::Service,
                _ => StoredKind::NoDefaults,
            };
            missing_defaults(stored, &mut doc);
            // A rule's matches are alternatives (any one matches), and an adopted route's
            // rules all go to one backend: neither order routes a request elsewhere, and
            // latgen writes both longest path first.
            if let Some(rules) = doc["spec"]["rules"].as_array_mut() {
                for rule in rules.iter_mut() {
                    if let Some(m) = rule["matches"].as_array_mut() {
                        m.sort_by_key(|x| x.to_string());
                    }
                }
                rules.sort_by_key(|x| x.to_string());
            }
            let m = &doc["metadata"];
            let key = format!(
                "{kind} {}/{}",
                m["namespace"].as_str().unwrap_or_default(),
                m["name"].as_str().unwrap_or_default()
            );
            out.insert(key, doc);
        }
    }
    out
}

#[test]
fn the_first_render_after_import_writes_every_imported_object_as_it_is() {
    let tmp = imported_before();
    rendered_as_imported(tmp.path());
}

/// `latgen render` of a project imported from its `workload/` and `gateway/` writes every
/// object as it was imported: the same spec, labels and annotations, and nothing more.
pub(super) fn rendered_as_imported(dir: &Path) {
    let tmp = dir;
    let run = latgen(tmp, &["render"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let before = common::read_tree(&tmp.join("workload"));
    let mut before = stored_objects(&before);
    before.extend(stored_objects(&common::read_tree(&tmp.join("gateway"))));
    let rendered = stored_objects(&common::read_tree(&tmp.join("generated")));
    // The KongPlugin is the gateway's own configuration; latgen names it, never writes it.
    // A ReferenceGrant is written under latgen's own name (see the assigned-domain tests).
    before.retain(|k, _| !k.starts_with("KongPlugin ") && !k.starts_with("ReferenceGrant "));
    // A live auth policy is taken over under its own name; what it lets in is the same,
    // written as latgen writes it (see the assigned-domain access test).
    let policies: Vec<String> = (before.keys())
        .filter(|k| k.starts_with("IAMAuthPolicy "))
        .cloned()
        .collect();
    for key in &policies {
        assert!(rendered.contains_key(key), "{key} is not rendered");
        before.remove(key);
    }
    assert_eq!(
        before.len(),
        79 * 3 + 4,
        "routes, bridges, Kong routes, health checks"
    );
    for (key, object) in &before {
        let ours = rendered
            .get(key)
            .unwrap_or_else(|| panic!("{key} is not rendered"));
        assert_eq!(ours["apiVersion"], object["apiVersion"], "{key}");
        assert_eq!(ours["spec"], object["spec"], "{key}");
        let labels = object["metadata"]["labels"]
            .as_object()
            .into_iter()
            .flatten();
        let annotations = object["metadata"]["annotations"]
            .as_object()
            .into_iter()
            .flatten();
        for (k, v) in labels {
            assert_eq!(&ours["metadata"]["labels"][k], v, "{key}: label {k}");
        }
        for (k, v) in annotations {
            assert_eq!(
                &ours["metadata"]["annotations"][k], v,
                "{key}: annotation {k}"
            );
        }
    }
    // Nothing else is written that Argo CD would apply as a new object (a kustomization
    // lists the files; it is not applied).
    let extra: Vec<&String> = (rendered.keys())
        .filter(|k| !before.contains_key(*k) && !k.starts_with("Kustomization "))
        // latgen's own grant beside a live one of another name (the live one stays).
        .filter(|k| !k.starts_with("ReferenceGrant ") || !k.contains("/latgen-from-"))
        // auth.mode: iam writes a policy on every route, for Kong and the app's callers.
        .filter(|k| !k.starts_with("IAMAuthPolicy "))
        .collect();
    assert!(extra.is_empty(), "{extra:?}");
}

#[test]
fn check_passes_on_the_imported_project() {
    let tmp = imported_before();
    assert_eq!(latgen(tmp.path(), &["render"]).code, Some(0));
    let check = latgen(tmp.path(), &["check", "--deny-warnings"]);
    assert_eq!(check.code, Some(0), "{}{}", check.stdout, check.stderr);
}

#[test]
fn plan_shows_the_consolidation_and_what_it_saves() {
    let tmp = imported_before();
    let run = latgen(tmp.path(), &["plan"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout
            .contains("73 path-routed apps still on the route they had"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("consolidated: 8 shared groups"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("Lattice services 79 -> 14, $1,874.28/month -> $332.15/month"),
        "{}",
        run.stdout
    );
}

/// A copy of the before example with one file replaced.
fn before_with(rel: &str, text: &str) -> tempfile::TempDir {
    let tmp = before();
    std::fs::write(tmp.path().join(rel), text).unwrap();
    tmp
}

#[test]
fn a_refused_object_stops_the_import_and_nothing_is_written() {
    let text = std::fs::read_to_string(
        common::root().join("examples/before/workload/identity/login.yaml"),
    )
    .unwrap();
    let two = text.replace("    backendRefs:\n    - name: login-web\n      port: 3000\n", "    backendRefs:\n    - name: login-web\n      port: 3000\n    - name: login-web-v2\n      port: 3000\n");
    assert_ne!(two, text);
    let tmp = before_with("workload/identity/login.yaml", &two);
    let run = latgen(tmp.path(), &["import", "workload", "gateway", "-o", "apps"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr.contains("workload/identity/login.yaml:"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("a rule with 2 backends"),
        "{}",
        run.stderr
    );
    assert!(!tmp.path().join("latgen.lock").exists());
    assert!(common::read_tree(&tmp.path().join("apps")).is_empty());
    let partial = latgen(
        tmp.path(),
        &["import", "workload", "gateway", "-o", "apps", "--partial"],
    );
    assert_eq!(partial.code, Some(1), "{}", partial.stderr);
    assert_eq!(common::read_tree(&tmp.path().join("apps")).len(), 78);
}

#[test]
fn a_list_and_json_export_imports_like_the_files() {
    let tmp = imported_before();
    let dir = tmp.path();
    // The Lattice side as one `kubectl get -o json` List, the Kong side as it is.
    let mut items = Vec::new();
    for text in common::read_tree(&dir.join("workload")).values() {
        for doc in serde_saphyr::from_multiple::<Option<serde_json::Value>>(text).unwrap() {
            items.extend(doc);
        }
    }
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
    let export = Path::new("export.json");
    std::fs::write(dir.join(export), serde_json::to_string(&list).unwrap()).unwrap();
    let again = dir.join("again");
    std::fs::create_dir(&again).unwrap();
    std::fs::copy(dir.join("latgen.yaml"), again.join("latgen.yaml")).unwrap();
    let run = latgen(
        dir,
        &["import", "export.json", "gateway", "-o", "again/apps"],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(dir.join("latgen.lock")).unwrap(),
        std::fs::read_to_string(again.join("latgen.lock")).unwrap()
    );
}

#[test]
fn two_apps_adopted_with_one_route_are_refused() {
    let tmp = imported_before();
    let lock = tmp.path().join("latgen.lock");
    let text = std::fs::read_to_string(&lock).unwrap();
    // `accounts` claims `account`'s route (both are in team-identity).
    let edited = text.replace("    route: accounts\n", "    route: account\n");
    assert_ne!(edited, text);
    std::fs::write(&lock, edited).unwrap();
    let run = latgen(tmp.path(), &["render"]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "apps `account` and `accounts` are adopted with one route, team-identity/account"
        ),
        "{}",
        run.stderr
    );
    assert!(!tmp.path().join("generated").exists());
}

/// `kind: List` of `n` apps as `kubectl get -o yaml` writes one (block style): each app's
/// Kong route, its bridge and its own Lattice route.
fn list_of_apps(n: usize) -> String {
    let mut out = String::from("apiVersion: v1\nkind: List\nitems:\n");
    for i in 0..n {
        let app = format!("app-{i:05}");
        out += &format!(
            "- apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata:
    creationTimestamp: \"2026-11-02T09:14:07Z\"
    generation: 1
    resourceVersion: \"{rv}\"
    uid: 6f1c2a4e-{i:04x}-4c1d-9a7e-0b2f5d8c3e1a
    name: {app}
    namespace: kong-routes
    labels:
      app.kubernetes.io/name: {app}
  spec:
    parentRefs:
    - name: kong
      namespace: kong
    rules:
    - matches:
      - path:
          type: PathPrefix
          value: /{app}
      filters:
      - type: URLRewrite
        urlRewrite:
          hostname: {app}.lattice.internal
      backendRefs:
      - name: {app}-lattice
        port: 80
- apiVersion: v1
  kind: Service
  metadata:
    creationTimestamp: \"2026-11-02T09:14:07Z\"
    generation: 1
    resourceVersion: \"{rv}\"
    uid: 6f1c2a4e-{i:04x}-4c1d-9a7e-0b2f5d8c3e1a
    name: {app}-lattice
    namespace: kong-routes
    labels:
      app.kubernetes.io/name: {app}
  spec:
    type: ExternalName
    externalName: {app}.lattice.internal
    ports:
    - name: http
      port: 80
- apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata:
    creationTimestamp: \"2026-11-02T09:14:07Z\"
    generation: 1
    resourceVersion: \"{rv}\"
    uid: 6f1c2a4e-{i:04x}-4c1d-9a7e-0b2f5d8c3e1a
    name: {app}
    namespace: team-{}
    labels:
      app.kubernetes.io/name: {app}
  spec:
    parentRefs:
    - name: lattice-gateway
      namespace: aws-application-networking-system
      sectionName: http
    hostnames:
    - {app}.lattice.internal
    rules:
    - matches:
      - path:
          type: PathPrefix
          value: /{app}
      backendRefs:
      - name: {app}-web
        port: 8080
",
            i % 40,
            rv = 1_000_000 + i
        );
    }
    out
}

/// One file holding a `kind: List` of 3,000 apps (5 MB, with the metadata `kubectl` adds;
/// the reference says import takes a List) is imported whole: the parser's node limit is sized for an export, not
/// for a declaration.
#[test]
fn a_list_of_three_thousand_apps_in_one_file_is_imported() {
    let tmp = common::scratch();
    let dir = tmp.path();
    let list = list_of_apps(3_000);
    assert!(list.len() > 5_000_000, "{} bytes", list.len());
    std::fs::write(dir.join("export.yaml"), list).unwrap();
    let run = latgen(dir, &["import", "export.yaml", "-o", "apps"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(common::read_tree(&dir.join("apps")).len(), 3_000);
}

/// A file over the 64 MiB cap is refused without being read: a sparse file of 1 GiB, which
/// `import` once read whole (1,066 MB at its peak) before it looked at the cap. The peak is
/// measured with GNU time (`/usr/bin/time -f %M`, the maximum resident set size in KiB) where
/// it is installed, as on Debian and Ubuntu with the `time` package; without it, only the
/// refusal is checked.
#[test]
fn a_file_over_the_cap_is_refused_unread() {
    let tmp = common::scratch();
    let dir = tmp.path();
    let file = std::fs::File::create(dir.join("huge.yaml")).unwrap();
    file.set_len(1 << 30).unwrap();
    let time = Path::new("/usr/bin/time");
    let args = ["import", "huge.yaml", "-o", "apps", "--color", "never"];
    let out = if time.is_file() {
        std::process::Command::new(time)
            .args(["-f", "%M"])
            .arg(common::bin())
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap()
    } else {
        (std::process::Command::new(common::bin()).args(args))
            .current_dir(dir)
            .output()
            .unwrap()
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    // 1: an input import cannot express, as for any refused file.
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("huge.yaml is over 64 MiB"), "{stderr}");
    if time.is_file() {
        let peak_kib: u64 = (stderr.lines().last())
            .and_then(|l| l.trim().parse().ok())
            .unwrap_or_else(|| panic!("no peak in {stderr}"));
        assert!(peak_kib < 256 * 1024, "peak {peak_kib} KiB");
    }
}

/// A route's manifest under a hidden folder (`gateway/.identity/`) is declared in a folder
/// the loader reads (`apps/identity/`): under `apps/.identity/` it would drop out of the
/// next render.
#[test]
fn a_route_under_a_hidden_folder_is_declared_where_the_loader_reads() {
    let tmp = before();
    let gateway = tmp.path().join("gateway");
    std::fs::rename(gateway.join("identity"), gateway.join(".identity")).unwrap();
    let run = latgen(tmp.path(), &["import", "workload", "gateway", "-o", "apps"]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    assert!(tmp.path().join("apps/identity/login.yaml").is_file());
    assert!(!tmp.path().join("apps/.identity").exists());
    let render = latgen(tmp.path(), &["render"]);
    assert_eq!(render.code, Some(0), "{}", render.stderr);
    assert!(
        tmp.path()
            .join("generated/kong/httproute-login.yaml")
            .is_file(),
        "the imported app is rendered"
    );
}
