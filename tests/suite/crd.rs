//! The TargetGroupPolicy type (`src/manifest/crd/targetgrouppolicy.rs`) is generated from the AWS
//! Gateway API Controller's own CRD, kept in `tests/data/aws/`. These tests fail when the two
//! disagree: the type must have exactly the CRD's fields, round-trip every example the
//! controller ships, and the policies latgen writes must fit the CRD's schema.

use super::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use kube::CustomResourceExt;
use latgen::input::ProjectPaths;
use latgen::manifest::crd::targetgrouppolicy::TargetGroupPolicy;
use latgen::render::Templates;
use serde_json::Value;

fn data() -> PathBuf {
    common::root().join("tests/data/aws")
}

fn crd_file() -> Value {
    let path = data().join("application-networking.k8s.aws_targetgrouppolicies.yaml");
    serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The `openAPIV3Schema` of the CRD's one version, `v1alpha1`.
fn version_schema(crd: &Value) -> &Value {
    let versions = crd["spec"]["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 1, "one version");
    assert_eq!(versions[0]["name"], "v1alpha1");
    &versions[0]["schema"]["openAPIV3Schema"]
}

/// The YAML files under `dir`, sorted, with their text.
fn yaml_files(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect();
    out.sort();
    out
}

/// What of a schema a Rust type can carry: the types, formats and enums of its fields, which
/// are required, and the same for every nested object and array item. (Descriptions,
/// bounds, patterns and defaults are the API server's business.)
fn shape(schema: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for key in ["type", "format"] {
        if let Some(v) = schema.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    for key in ["enum", "required"] {
        if let Some(v) = schema.get(key).and_then(Value::as_array) {
            // A derived schema lists `null` among the values of an optional enum field; the
            // CRD says optional by leaving the field out of `required`.
            let set: BTreeSet<String> = v
                .iter()
                .filter(|x| !x.is_null())
                .map(|x| x.to_string())
                .collect();
            out.insert(key.into(), serde_json::to_value(set).unwrap());
        }
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        let props = props.iter().map(|(k, v)| (k.clone(), shape(v))).collect();
        out.insert("properties".into(), Value::Object(props));
    }
    if let Some(items) = schema.get("items") {
        out.insert("items".into(), shape(items));
    }
    Value::Object(out)
}

/// Parses `text` into a `TargetGroupPolicy` in one pass, as the read-back does, and returns
/// it with the paths of the fields the type does not define.
fn parse(text: &str) -> (TargetGroupPolicy, Vec<String>) {
    let mut ignored = Vec::new();
    let tgp = serde_saphyr::with_deserializer_from_str(text, |de| {
        serde_ignored::deserialize(de, |path| ignored.push(path.to_string()))
    })
    .unwrap();
    (tgp, ignored)
}

/// Parses `text` into the type and writes it back: the result must say exactly what the text
/// says. The derived root takes `apiVersion` and `kind` as given by the type and writes them
/// back from it, so the comparison checks them too.
fn assert_round_trips(path: &Path, text: &str) {
    let (tgp, ignored) = parse(text);
    assert!(
        ignored.iter().all(|p| p == "apiVersion" || p == "kind"),
        "{}: fields the type does not define: {ignored:?}",
        path.display()
    );
    let want: Value = serde_saphyr::from_str(text).unwrap();
    let got = serde_json::to_value(&tgp).unwrap();
    pretty_assertions::assert_eq!(got, want, "{}", path.display());
}

#[test]
fn the_type_is_the_crds_kind_group_version_and_scope() {
    let crd = crd_file();
    let derived = serde_json::to_value(TargetGroupPolicy::crd()).unwrap();
    assert_eq!(derived["metadata"]["name"], crd["metadata"]["name"]);
    for key in ["group", "scope"] {
        assert_eq!(derived["spec"][key], crd["spec"][key], "{key}");
    }
    for key in ["kind", "plural", "singular"] {
        assert_eq!(
            derived["spec"]["names"][key], crd["spec"]["names"][key],
            "{key}"
        );
    }
    assert_eq!(
        derived["spec"]["versions"][0]["name"],
        crd["spec"]["versions"][0]["name"]
    );
}

#[test]
fn the_types_fields_are_the_crds() {
    let crd = crd_file();
    let derived = serde_json::to_value(TargetGroupPolicy::crd()).unwrap();
    let want = version_schema(&crd);
    let got = version_schema(&derived);
    // kube leaves apiVersion, kind and metadata out of a derived schema: the API server
    // validates them itself.
    pretty_assertions::assert_eq!(
        shape(&got["properties"]["spec"]),
        shape(&want["properties"]["spec"])
    );
    // The status conditions are Kubernetes' standard `Condition` (kopium's default), whose
    // `status` k8s-openapi types as a plain string where the CRD lists True, False, Unknown.
    let mut want_status = shape(&want["properties"]["status"]);
    let condition = &mut want_status["properties"]["conditions"]["items"]["properties"];
    let removed = condition["status"].as_object_mut().unwrap().remove("enum");
    assert!(removed.is_some(), "the CRD's condition status is an enum");
    pretty_assertions::assert_eq!(shape(&got["properties"]["status"]), want_status);
    let top = |s: &Value| -> BTreeSet<String> {
        let props = s["properties"].as_object().unwrap().keys().cloned();
        props
            .filter(|k| !["apiVersion", "kind", "metadata"].contains(&k.as_str()))
            .collect()
    };
    assert_eq!(top(got), top(want));
    assert_eq!(shape(got)["required"], shape(want)["required"]);
}

#[test]
fn the_type_round_trips_the_controllers_examples() {
    let examples = yaml_files(&data().join("examples"));
    assert_eq!(examples.len(), 9, "see tests/data/aws/README.md");
    for (path, text) in &examples {
        assert_round_trips(path, text);
    }
}

#[test]
fn the_type_refuses_what_the_crd_refuses() {
    let path =
        data().join("examples/docs-advanced-configurations-multi-cluster-health-policy.yaml");
    let text = std::fs::read_to_string(path).unwrap();
    let (_, ignored) = parse(&text.replace("    healthyThresholdCount", "    healthyThresholdCnt"));
    assert_eq!(
        ignored,
        [
            "apiVersion",
            "kind",
            "spec.healthCheck.?.healthyThresholdCnt"
        ]
    );
    let tcp = serde_saphyr::from_str::<TargetGroupPolicy>(
        &text.replace("    protocol: HTTP\n", "    protocol: TCP\n"),
    );
    assert!(tcp.is_err(), "health checks are HTTP or HTTPS");
    let no_target = "apiVersion: application-networking.k8s.aws/v1alpha1\nkind: TargetGroupPolicy\nmetadata:\n  name: a\nspec:\n  protocol: HTTP\n";
    assert!(
        serde_saphyr::from_str::<TargetGroupPolicy>(no_target).is_err(),
        "targetRef is required"
    );
}

/// Every policy in the committed output trees (which the golden tests keep equal to what
/// latgen renders) fits the CRD's schema, with unknown fields refused, and round-trips.
#[test]
fn the_policies_latgen_writes_fit_the_crd() {
    let crd = crd_file();
    let mut schema = version_schema(&crd).clone();
    refuse_unknown_fields(&mut schema["properties"]["spec"]);
    let validator = jsonschema::validator_for(&schema).expect("the CRD schema compiles");
    let mut seen = 0;
    for dir in [
        "generated/lattice",
        "tests/fixtures/settings/expected/lattice",
    ] {
        for (path, text) in yaml_files(&common::root().join(dir)) {
            if !path.to_string_lossy().contains("targetgrouppolicy-") {
                continue;
            }
            seen += 1;
            let doc: Value = serde_saphyr::from_str(&text).unwrap();
            let errors: Vec<String> = validator
                .iter_errors(&doc)
                .map(|e| format!("{e} at {}", e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{}: {errors:?}", path.display());
            assert_round_trips(&path, &text);
        }
    }
    assert!(seen >= 2, "found {seen} policies");
}

/// `additionalProperties: false` on every object schema with properties, as a strict API
/// server refuses unknown fields.
fn refuse_unknown_fields(schema: &mut Value) {
    if let Some(obj) = schema.as_object_mut() {
        if obj.contains_key("properties") {
            obj.insert("additionalProperties".into(), Value::Bool(false));
        }
        for child in obj.values_mut() {
            refuse_unknown_fields(child);
        }
    }
}

/// A custom template may set any field of the CRD, and the read-back still refuses a value
/// the CRD does not allow.
#[test]
fn the_read_back_takes_the_crds_fields_and_refuses_its_enums_violated() {
    let full = "    enabled: true\n    intervalSeconds: 5\n    timeoutSeconds: 1\n    healthyThresholdCount: 3\n    unhealthyThresholdCount: 2\n    path: \"/healthcheck\"\n    port: 80\n    protocol: HTTP\n    protocolVersion: HTTP1\n    statusMatch: \"200\"\n  protocol: HTTPS\n  protocolVersion: HTTP1\n";
    let build = |body: &str| {
        let tdir = tempfile::tempdir().unwrap();
        let file = tdir.path().join("lattice/target-group-policy.yaml.j2");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        let template = latgen::render::TEMPLATES
            .iter()
            .find(|(n, _)| *n == "lattice/target-group-policy.yaml.j2")
            .unwrap()
            .1;
        let (head, _) = template.split_once("    enabled: true\n").unwrap();
        std::fs::write(&file, format!("{head}{body}")).unwrap();
        let project = latgen::input::confine::Project::new(tdir.path());
        let templates = Templates::load(Some((tdir.path(), &project))).unwrap();
        latgen::pipeline::build(
            &ProjectPaths::at_root(&common::fixture("settings")),
            &templates,
        )
        .map(|b| b.output.files)
        .map_err(|f| {
            f.diags
                .iter()
                .map(|d| (d.code.to_string(), d.message.clone()))
                .collect::<Vec<_>>()
        })
    };
    let files = build(full).expect("every field of the CRD is taken");
    let policy = files
        .iter()
        .find(|(p, _)| p.to_string_lossy().contains("targetgrouppolicy-"))
        .unwrap()
        .1;
    assert!(policy.contains("statusMatch: \"200\"\n"), "{policy}");
    let errs = build(&full.replace(
        "protocolVersion: HTTP1\n    status",
        "protocolVersion: HTTP3\n    status",
    ))
    .unwrap_err();
    assert!(
        errs.iter()
            .all(|(code, m)| code == "rendered-invalid" && m.contains("HTTP3")),
        "{errs:?}"
    );
}
