//! The deploy kit (`deploy/`): the two Argo CD Applications and the AppProject that
//! `latgen deploy` and `latgen init` write fit Argo CD's own CRDs (v3.5.1, in
//! tests/data/argocd/, unknown fields refused); the AppProject allows every namespace and
//! kind the rendered output writes, on the cluster of its side; each Application points at
//! its side's folder of the output. Checked on the committed example (whose deploy/ must be
//! current: `LATGEN_BLESS=1 cargo test suite::deploy::` rewrites it) and on a project fresh
//! from `latgen init`.

use super::common;
use super::project;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;
use serde_json::Value;

use common::{Run, latgen};

fn ok(run: &Run) {
    assert_eq!(
        run.code,
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
}

/// The `v1alpha1` schema of one of Argo CD's CRDs, unknown fields refused.
fn crd_schema(file: &str) -> Value {
    let text =
        std::fs::read_to_string(common::root().join("tests/data/argocd").join(file)).unwrap();
    let crd: Value = serde_saphyr::from_str(&text).unwrap();
    let version = crd["spec"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "v1alpha1")
        .expect("the CRD serves v1alpha1")
        .clone();
    let mut schema = version["schema"]["openAPIV3Schema"].clone();
    common::strict_schema(&mut schema);
    schema
}

/// The kit's documents by file name, parsed.
pub(super) fn kit_docs(dir: &Path) -> BTreeMap<String, Value> {
    kit_docs_in(&dir.join(latgen::render::deploy_kit::FOLDER))
}

/// The documents of the kit in `folder` (`deploy/`, or an environment's `deploy/<env>/`).
pub(super) fn kit_docs_in(folder: &Path) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for name in latgen::render::deploy_kit::FILES {
        let path = folder.join(name);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            text.starts_with(latgen::render::deploy_kit::HEADER),
            "{name}"
        );
        let doc: Value = serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        out.insert(name.to_string(), doc);
    }
    out
}

/// Every kit document is accepted by the CRD of its kind.
pub(super) fn assert_fits_the_crds(docs: &BTreeMap<String, Value>) {
    let app = jsonschema::validator_for(&crd_schema("application-crd.yaml")).unwrap();
    let project = jsonschema::validator_for(&crd_schema("appproject-crd.yaml")).unwrap();
    for (name, doc) in docs {
        assert_eq!(doc["apiVersion"], "argoproj.io/v1alpha1", "{name}");
        let validator = match doc["kind"].as_str() {
            Some("Application") => &app,
            Some("AppProject") => &project,
            other => panic!("{name}: unexpected kind {other:?}"),
        };
        let errors: Vec<String> = validator.iter_errors(doc).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{name}: {errors:#?}\n{doc:#}");
    }
}

/// The schema check is real: it refuses what the API server would.
#[test]
fn the_argocd_schemas_refuse_bad_kits() {
    let docs = kit_docs(&common::root());
    let app = jsonschema::validator_for(&crd_schema("application-crd.yaml")).unwrap();
    let project = jsonschema::validator_for(&crd_schema("appproject-crd.yaml")).unwrap();
    let good = docs["application-lattice.yaml"].clone();
    assert!(app.is_valid(&good));
    let mut typo = good.clone();
    typo["spec"]["sourc"] = good["spec"]["source"].clone();
    assert!(!app.is_valid(&typo), "unknown field");
    let mut no_dest = good;
    no_dest["spec"]["destination"] = Value::Null;
    assert!(!app.is_valid(&no_dest), "no destination");
    let good = docs["appproject.yaml"].clone();
    assert!(project.is_valid(&good));
    let mut kind = good.clone();
    kind["spec"]["namespaceResourceWhitelist"][0] = serde_json::json!({ "kind": "Service" });
    assert!(!project.is_valid(&kind), "a kind without its group");
    let mut dest = good;
    dest["spec"]["destinations"][0]["cluster"] = "x".into();
    assert!(!project.is_valid(&dest), "unknown destination field");
}

/// One object of the output: its side (by folder), namespace, API group and kind.
#[derive(Debug)]
struct Object {
    file: PathBuf,
    side: &'static str,
    namespace: Option<String>,
    group: String,
    kind: String,
}

/// The objects in an output folder as written (kustomization.yaml is not applied).
fn objects(out: &Path) -> Vec<Object> {
    common::read_tree(out)
        .into_iter()
        .filter(|(p, _)| p.file_name().unwrap() != "kustomization.yaml")
        .map(|(file, text)| {
            let doc: Value = serde_saphyr::from_str(&text).unwrap();
            let api = doc["apiVersion"].as_str().unwrap();
            Object {
                side: if file.starts_with("kong") {
                    "kong"
                } else {
                    "lattice"
                },
                namespace: doc["metadata"]["namespace"].as_str().map(String::from),
                group: api.rsplit_once('/').map_or("", |(g, _)| g).to_string(),
                kind: doc["kind"].as_str().unwrap().to_string(),
                file,
            }
        })
        .collect()
}

/// The AppProject allows every namespace and kind of the output, on the cluster its side's
/// Application deploys to, and allows each Application's own destination; each Application
/// points at its side's folder of the output, in the project, from an allowed repository.
fn assert_kit_covers(docs: &BTreeMap<String, Value>, out: &Path, out_in_repo: &str) {
    let project = &docs["appproject.yaml"];
    let allowed: BTreeSet<(String, String)> = project["spec"]["destinations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let s = |k: &str| d[k].as_str().unwrap().to_string();
            (s("name"), s("namespace"))
        })
        .collect();
    let kinds: BTreeSet<(String, String)> = project["spec"]["namespaceResourceWhitelist"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["group"].as_str().unwrap().into(),
                k["kind"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        project["spec"]["clusterResourceWhitelist"],
        serde_json::json!([])
    );
    let mut clusters = BTreeMap::new();
    for side in ["lattice", "kong"] {
        let app = &docs[&format!("application-{side}.yaml")];
        let spec = &app["spec"];
        assert_eq!(spec["project"], project["metadata"]["name"], "{side}");
        assert_eq!(
            app["metadata"]["namespace"],
            project["metadata"]["namespace"]
        );
        assert_eq!(
            spec["source"]["path"],
            format!("{out_in_repo}/{side}"),
            "{side}"
        );
        assert!(
            out.join(side).is_dir(),
            "{side}: no folder {}",
            out.join(side).display()
        );
        assert_read_as_plain_manifests(&spec["source"], &out.join(side), side);
        let repo = spec["source"]["repoURL"].clone();
        assert!(
            project["spec"]["sourceRepos"]
                .as_array()
                .unwrap()
                .contains(&repo),
            "{side}: {repo} is not a source repository of the project"
        );
        let dest = &spec["destination"];
        let cluster = dest["name"].as_str().unwrap().to_string();
        let ns = dest["namespace"].as_str().unwrap().to_string();
        assert!(
            allowed.contains(&(cluster.clone(), ns.clone())),
            "{side}: {cluster}/{ns}"
        );
        clusters.insert(side, (cluster, ns));
    }
    let found = objects(out);
    assert!(found.len() > 3, "the output has objects: {found:?}");
    for o in found {
        let (cluster, default_ns) = &clusters[o.side];
        let ns = o.namespace.clone().unwrap_or_else(|| default_ns.clone());
        assert!(
            allowed.contains(&(cluster.clone(), ns.clone())),
            "{}: namespace {ns} on cluster {cluster} is not a destination of the AppProject",
            o.file.display()
        );
        assert!(
            kinds.contains(&(o.group.clone(), o.kind.clone())),
            "{}: kind {}/{} is not allowed by the AppProject",
            o.file.display(),
            o.group,
            o.kind
        );
    }
}

/// What Argo CD reads of a side, as its repo server reads a directory source
/// (`findManifests`: the folder's `*.yaml`/`*.yml`/`*.json`, no subfolder unless `recurse`,
/// `exclude` matched against the name): every object of the side, and not its
/// kustomization, which would be applied as an object (a kind no cluster serves) or, read
/// through kustomize, take longer than the repo server waits at 10,000 apps.
fn assert_read_as_plain_manifests(source: &Value, folder: &Path, side: &str) {
    let dir = &source["directory"];
    assert_eq!(dir["recurse"], false, "{side}: {source}");
    let exclude = dir["exclude"]
        .as_str()
        .expect("the kustomization is left out");
    assert!(
        !exclude.contains(['*', '?', '[', '{']),
        "a plain name, so that it matches exactly one file: {exclude}"
    );
    let mut read = 0;
    for entry in std::fs::read_dir(folder).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let manifest = [".yaml", ".yml", ".json"].iter().any(|e| name.ends_with(e));
        if !manifest || name == exclude {
            continue;
        }
        let text = std::fs::read_to_string(folder.join(&name)).unwrap();
        let doc: Value = serde_saphyr::from_str(&text).unwrap();
        assert_ne!(doc["kind"], "Kustomization", "{side}: {name} is read");
        read += 1;
    }
    assert!(folder.join(exclude).is_file(), "{side}: {exclude}");
    assert!(read > 0, "{side}: nothing read");
}

#[test]
fn the_example_kit_is_current() {
    let root = common::root();
    let built = project::built(&root);
    let config = &built.prepared.config;
    let settings = config
        .deploy
        .as_ref()
        .expect("the example's latgen.yaml has deploy:");
    let kit = latgen::render::deploy_kit::kit(
        settings,
        config,
        &built.output.files,
        Path::new("generated"),
    );
    let names: Vec<String> = kit.keys().map(|p| p.display().to_string()).collect();
    assert_eq!(
        names,
        [
            "deploy/application-kong.yaml",
            "deploy/application-lattice.yaml",
            "deploy/appproject.yaml"
        ]
    );
    for (rel, text) in &kit {
        common::assert_snapshot(&root.join(rel), text);
    }
}

#[test]
fn the_example_kit_fits_argocd_and_covers_the_output() {
    let root = common::root();
    let docs = kit_docs(&root);
    assert_fits_the_crds(&docs);
    assert_kit_covers(&docs, &root.join("generated"), "generated");
}

#[test]
fn an_init_project_renders_checks_and_its_kit_fits_argocd() {
    let tmp = common::scratch();
    let dir = tmp.path();
    ok(&latgen(
        dir,
        &[
            "init",
            "--repo-url",
            "https://git.example.com/platform/web-routing.git",
            "--project",
            "web-routing",
            "--lattice-cluster",
            "workload",
            "--kong-cluster",
            "gateway",
            "--service-name-prefix",
            "web-routing",
        ],
    ));
    ok(&latgen(dir, &["render"]));
    let check = latgen(dir, &["check"]);
    ok(&check);
    assert_eq!(check.stdout, "no findings\n");
    let docs = kit_docs(dir);
    assert_fits_the_crds(&docs);
    assert_kit_covers(&docs, &dir.join("generated"), "generated");
    let project = &docs["appproject.yaml"];
    assert_eq!(project["metadata"]["name"], "web-routing");
    assert_eq!(
        project["spec"]["sourceRepos"][0],
        "https://git.example.com/platform/web-routing.git"
    );
    assert_eq!(
        docs["application-kong.yaml"]["metadata"]["name"],
        "web-routing-kong"
    );
    assert_eq!(
        docs["application-lattice.yaml"]["spec"]["destination"]["name"],
        "workload"
    );
}

#[test]
fn an_init_project_without_flags_fits_argocd_and_check_names_the_placeholders() {
    let tmp = common::scratch();
    let dir = tmp.path();
    ok(&latgen(dir, &["init"]));
    ok(&latgen(dir, &["render"]));
    let docs = kit_docs(dir);
    assert_fits_the_crds(&docs);
    assert_kit_covers(&docs, &dir.join("generated"), "generated");
    let check = latgen(dir, &["check", "--format", "json"]);
    assert_eq!(check.code, Some(1), "{}", check.stderr);
    let settings: Vec<String> = check
        .stdout
        .lines()
        .map(|l| {
            let f: Value = serde_json::from_str(l).unwrap();
            assert_eq!(f["code"], "placeholder-setting", "{l}");
            f["message"]
                .as_str()
                .unwrap()
                .split(' ')
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        settings,
        [
            "lattice.serviceNamePrefix",
            "deploy.repoURL",
            "deploy.latticeCluster",
            "deploy.kongCluster"
        ]
    );
}

/// A kit left behind (a render whose deploy/ was not committed, here put back as it was)
/// is stale until `latgen deploy` (or `render`) rewrites it.
#[test]
fn a_kit_left_behind_a_new_namespace_is_stale_until_deploy() {
    let tmp = common::scratch();
    let dir = tmp.path();
    ok(&latgen(
        dir,
        &[
            "init",
            "--repo-url",
            "https://git.example.com/a/b.git",
            "--lattice-cluster",
            "w",
            "--kong-cluster",
            "g",
            "--service-name-prefix",
            "ab",
        ],
    ));
    std::fs::write(
        dir.join("apps/search.yaml"),
        "namespace: team-search\nservice: { name: search, port: 8080 }\npaths: [/search]\n",
    )
    .unwrap();
    let project_file = dir.join("deploy/appproject.yaml");
    let before = std::fs::read_to_string(&project_file).unwrap();
    ok(&latgen(dir, &["render"]));
    std::fs::write(&project_file, before).unwrap();
    let check = latgen(dir, &["check", "--format", "json"]);
    assert_eq!(check.code, Some(1));
    assert!(
        check.stdout.contains("\"code\":\"stale-deploy\""),
        "{}",
        check.stdout
    );
    let stale = latgen(dir, &["deploy", "--check"]);
    assert_eq!(stale.code, Some(1), "{}", stale.stderr);
    assert!(
        stale.stdout.contains("+      namespace: team-search\n"),
        "{}",
        stale.stdout
    );
    ok(&latgen(dir, &["deploy"]));
    ok(&latgen(dir, &["deploy", "--check"]));
    let check = latgen(dir, &["check"]);
    ok(&check);
    let docs = kit_docs(dir);
    assert_fits_the_crds(&docs);
    assert_kit_covers(&docs, &dir.join("generated"), "generated");
}

#[test]
fn the_kit_follows_the_project_folder_and_the_output_folder() {
    let tmp = common::scratch();
    let dir = tmp.path();
    ok(&latgen(dir, &["init", "routing"]));
    let project = dir.join("routing");
    let yaml = std::fs::read_to_string(project.join("latgen.yaml")).unwrap();
    std::fs::write(
        project.join("latgen.yaml"),
        yaml.replace("\n  path: .\n", "\n  path: platform/routing\n"),
    )
    .unwrap();
    ok(&latgen(
        dir,
        &["render", "routing/apps", "-o", "routing/out"],
    ));
    ok(&latgen(
        dir,
        &["deploy", "routing/apps", "-o", "routing/out"],
    ));
    let docs = kit_docs(&project);
    assert_kit_covers(&docs, &project.join("out"), "platform/routing/out");
}

#[test]
fn deploy_without_a_deploy_section_is_an_error() {
    let tmp = common::scratch();
    let dir = tmp.path();
    std::fs::create_dir(dir.join("apps")).unwrap();
    let run = latgen(dir, &["deploy"]);
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr.contains("has no `deploy:` section"),
        "{}",
        run.stderr
    );
    assert!(!dir.join("deploy").exists());
}

/// The file's inode: a file written anew (through a temporary file) gets another one.
#[cfg(unix)]
fn file_id(path: &Path) -> u64 {
    std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(path).unwrap())
}

/// `render` on the example after an app in a new namespace is added: it rewrites the
/// AppProject (and only it) with the output, so `check` has nothing to say, where it used
/// to report `stale-deploy` until `latgen deploy` ran.
#[cfg(unix)]
#[test]
fn render_rewrites_the_example_kit_a_new_namespace_changes() {
    let root = common::root();
    let tmp = common::scratch();
    let dir = tmp.path();
    let mut files = BTreeMap::new();
    for folder in ["apps", "generated", "deploy", "kong-plugins"] {
        for (rel, text) in common::read_tree(&root.join(folder)) {
            files.insert(Path::new(folder).join(rel), text);
        }
    }
    for name in ["latgen.yaml", "latgen.lock"] {
        files.insert(
            PathBuf::from(name),
            std::fs::read_to_string(root.join(name)).unwrap(),
        );
    }
    common::write_tree(dir, &files);
    ok(&latgen(dir, &["check"]));
    common::app(
        dir,
        "search-new",
        "namespace: team-search\nservice: { name: search-web, port: 8080 }\npaths: [/search-new]\n",
    );
    let kong = dir.join("deploy/application-kong.yaml");
    let kong_id = file_id(&kong);
    ok(&latgen(dir, &["render"]));
    let check = latgen(dir, &["check"]);
    ok(&check);
    assert_eq!(check.stdout, "no findings\n");
    let project = std::fs::read_to_string(dir.join("deploy/appproject.yaml")).unwrap();
    assert!(
        project.contains("      namespace: team-search\n"),
        "{project}"
    );
    assert_eq!(
        file_id(&kong),
        kong_id,
        "an unchanged file of the kit is not rewritten"
    );
    ok(&latgen(dir, &["deploy", "--check"]));
}
