//! The AWS Gateway API Controller's policy types (`crates/latgen-sim/src/crd/targetgrouppolicy.rs`,
//! `crates/latgen-sim/src/crd/iamauthpolicy.rs`) are generated from the controller's own CRDs, kept in
//! `tests/data/aws/`. These tests fail when a type and its CRD disagree: for each kind, the
//! type must be the CRD's kind, group, version and scope, have exactly the CRD's fields and
//! round-trip every example of that kind the controller ships; and the policies latgen writes
//! must fit the CRD's schema.

use super::common;
use super::project;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use kube::CustomResourceExt;
use latgen::input::ProjectPaths;
use latgen::render::Templates;
use latgen_sim::crd::iamauthpolicy::IamAuthPolicy;
use latgen_sim::crd::targetgrouppolicy::TargetGroupPolicy;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The TargetGroupPolicy CRD, under `tests/data/aws/`.
const TARGET_GROUP_POLICIES: &str = "application-networking.k8s.aws_targetgrouppolicies.yaml";
/// The IAMAuthPolicy CRD, under `tests/data/aws/`.
const IAM_AUTH_POLICIES: &str = "application-networking.k8s.aws_iamauthpolicies.yaml";

fn data() -> PathBuf {
    common::root().join("tests/data/aws")
}

/// The CRD `file` of `tests/data/aws/`.
fn crd_file(file: &str) -> Value {
    let path = data().join(file);
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

/// The controller's examples (`tests/data/aws/examples/`) whose `kind` is `kind`.
fn examples(kind: &str) -> Vec<(PathBuf, String)> {
    let all = yaml_files(&data().join("examples"));
    (all.into_iter())
        .filter(|(_, text)| {
            let doc: Value = serde_saphyr::from_str(text).unwrap();
            doc["kind"] == kind
        })
        .collect()
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

/// Parses `text` into a `T` in one pass, as the read-back does, and returns it with the
/// paths of the fields the type does not define.
fn parse<T: DeserializeOwned>(text: &str) -> (T, Vec<String>) {
    let mut ignored = Vec::new();
    let object = serde_saphyr::with_deserializer_from_str(text, |de| {
        serde_ignored::deserialize(de, |path| ignored.push(path.to_string()))
    })
    .unwrap();
    (object, ignored)
}

/// Parses `text` into a `T` and writes it back: the result must say exactly what the text
/// says. The derived root takes `apiVersion` and `kind` as given by the type and writes them
/// back from it, so the comparison checks them too.
fn assert_round_trips<T: DeserializeOwned + Serialize>(path: &Path, text: &str) {
    let (object, ignored) = parse::<T>(text);
    assert!(
        ignored.iter().all(|p| p == "apiVersion" || p == "kind"),
        "{}: fields the type does not define: {ignored:?}",
        path.display()
    );
    let want: Value = serde_saphyr::from_str(text).unwrap();
    let got = serde_json::to_value(&object).unwrap();
    pretty_assertions::assert_eq!(got, want, "{}", path.display());
}

/// `T`'s derived CRD names the kind, group, version and scope of the CRD `file`.
fn assert_kind_group_version_and_scope<T: CustomResourceExt>(file: &str) {
    let crd = crd_file(file);
    let derived = serde_json::to_value(T::crd()).unwrap();
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

/// `T`'s derived schema has the shape of the CRD `file`'s: the same fields, types, formats,
/// enums and required fields at every depth.
fn assert_fields_are_the_crds<T: CustomResourceExt>(file: &str) {
    let crd = crd_file(file);
    let derived = serde_json::to_value(T::crd()).unwrap();
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

/// `T` round-trips each of the controller's examples of its kind, which are `count` (see
/// `tests/data/aws/README.md`).
fn assert_round_trips_the_examples<T>(count: usize)
where
    T: CustomResourceExt + DeserializeOwned + Serialize,
{
    let examples = examples(&T::crd().spec.names.kind);
    assert_eq!(examples.len(), count, "see tests/data/aws/README.md");
    for (path, text) in &examples {
        assert_round_trips::<T>(path, text);
    }
}

/// The checks every kind gets, as a module of one test per check, so a failure names both:
/// `$module` tests `$type` against the CRD `$file`, of which the controller ships `$examples`
/// examples.
macro_rules! every_kind_fits_its_crd {
    ($module:ident, $type:ty, $file:expr, $examples:expr) => {
        mod $module {
            use super::*;

            #[test]
            fn the_type_is_the_crds_kind_group_version_and_scope() {
                assert_kind_group_version_and_scope::<$type>($file);
            }

            #[test]
            fn the_types_fields_are_the_crds() {
                assert_fields_are_the_crds::<$type>($file);
            }

            #[test]
            fn the_type_round_trips_the_controllers_examples() {
                assert_round_trips_the_examples::<$type>($examples);
            }
        }
    };
}

every_kind_fits_its_crd!(
    target_group_policy,
    TargetGroupPolicy,
    TARGET_GROUP_POLICIES,
    9
);
every_kind_fits_its_crd!(iam_auth_policy, IamAuthPolicy, IAM_AUTH_POLICIES, 2);

#[test]
fn the_target_group_policy_type_refuses_what_the_crd_refuses() {
    let path =
        data().join("examples/docs-advanced-configurations-multi-cluster-health-policy.yaml");
    let text = std::fs::read_to_string(path).unwrap();
    let (_, ignored) = parse::<TargetGroupPolicy>(
        &text.replace("    healthyThresholdCount", "    healthyThresholdCnt"),
    );
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

#[test]
fn the_iam_auth_policy_type_refuses_what_the_crd_refuses() {
    let path = data().join("examples/docs-iam-auth-policy-test-iam-auth-policy-example2.yaml");
    let text = std::fs::read_to_string(path).unwrap();
    let (_, ignored) = parse::<IamAuthPolicy>(&text.replace(
        "        name: my-route\n",
        "        name: my-route\n        sectionName: http\n",
    ));
    assert_eq!(
        ignored,
        ["apiVersion", "kind", "spec.targetRef.sectionName"],
        "a policy attaches to a whole route"
    );
    let required = [
        (
            "policy",
            text.split_once("    policy: |").unwrap().0.to_string(),
        ),
        (
            "targetRef.name",
            text.replace("        name: my-route\n", ""),
        ),
        (
            "targetRef.kind",
            text.replace("        kind: HTTPRoute\n", ""),
        ),
        (
            "targetRef.group",
            text.replace("        group: \"gateway.networking.k8s.io\"\n", ""),
        ),
    ];
    for (field, text) in required {
        assert!(
            serde_saphyr::from_str::<IamAuthPolicy>(&text).is_err(),
            "{field} is required"
        );
    }
}

/// Every policy in the committed output trees (which the golden tests keep equal to what
/// latgen renders) fits the CRD's schema, with unknown fields refused, and round-trips.
#[test]
fn the_policies_latgen_writes_fit_the_crd() {
    let crd = crd_file(TARGET_GROUP_POLICIES);
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
            assert_round_trips::<TargetGroupPolicy>(&path, &text);
        }
    }
    assert!(seen >= 2, "found {seen} policies");
}

/// Every IAMAuthPolicy latgen renders for the example (`generated/lattice/iamauthpolicy-*`)
/// fits the CRD's schema with unknown fields refused at every depth, round-trips, and its
/// `spec.policy` is an IAM policy document: JSON, version 2012-10-17, with statements.
#[test]
fn written_iam_auth_policies_fit_the_strict_crd_schema() {
    let crd = crd_file(IAM_AUTH_POLICIES);
    let mut schema = version_schema(&crd).clone();
    refuse_unknown_fields(&mut schema);
    let validator = jsonschema::validator_for(&schema).expect("the CRD schema compiles");
    let files = project::render_dir(&common::root()).expect("the example renders");
    let policies: Vec<_> = (files.iter())
        .filter(|(p, _)| p.to_string_lossy().contains("iamauthpolicy-"))
        .collect();
    // One beside each of the example's 14 Lattice routes (8 groups, 6 dedicated).
    assert_eq!(policies.len(), 14, "{:?}", files.keys().collect::<Vec<_>>());
    for (path, text) in policies {
        let doc: Value = serde_saphyr::from_str(text).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&doc)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
        assert_round_trips::<IamAuthPolicy>(path, text);
        let policy = doc["spec"]["policy"].as_str().unwrap();
        let policy: Value = serde_json::from_str(policy)
            .unwrap_or_else(|e| panic!("{}: spec.policy is not JSON: {e}", path.display()));
        assert_eq!(policy["Version"], "2012-10-17", "{}", path.display());
        let statements = policy["Statement"].as_array();
        assert!(
            statements.is_some_and(|s| !s.is_empty()),
            "{}: no Statement: {policy}",
            path.display()
        );
        // And the auth model, which evaluates only what it can read, reads all of it.
        let model = latgen_sim::iam::AuthPolicy::read(
            path.to_path_buf(),
            "ns".into(),
            "route".into(),
            doc["spec"]["policy"].as_str().unwrap(),
        );
        assert_eq!(model.unreadable(), None, "{}", path.display());
    }
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
        let tdir = common::scratch();
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

/// Every object of `kind` the example renders fits its CRD's schema (in tests/data/, at
/// `version`), with unknown fields refused at every depth; returns how many.
fn assert_rendered_fit_the_strict_crd(file: &str, version: &str, kind: &str) -> usize {
    let path = common::root().join("tests/data").join(file);
    let crd: Value = serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut schema = (crd["spec"]["versions"].as_array().unwrap().iter())
        .find(|v| v["name"] == version)
        .unwrap()["schema"]["openAPIV3Schema"]
        .clone();
    refuse_unknown_fields(&mut schema);
    let validator = jsonschema::validator_for(&schema).expect("the CRD schema compiles");
    let files = project::render_dir(&common::root()).expect("the example renders");
    let mut seen = 0;
    for (path, text) in &files {
        let doc: Value = match serde_saphyr::from_str(text) {
            Ok(d) => d,
            Err(_) => continue,
        };
        if doc["kind"] != kind {
            continue;
        }
        seen += 1;
        let errors: Vec<String> = validator
            .iter_errors(&doc)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
    }
    seen
}

/// The example's PrometheusRules (observability.prometheus): one for the apps and one per
/// Lattice service, against prometheus-operator's CRD (v0.93.0).
#[test]
fn written_prometheus_rules_fit_the_strict_crd_schema() {
    let n = assert_rendered_fit_the_strict_crd(
        "prometheus/monitoring.coreos.com_prometheusrules.yaml",
        "v1",
        "PrometheusRule",
    );
    assert_eq!(n, 1 + 14);
}

/// The example's AccessLogPolicies (observability.accessLogs): one beside each Lattice
/// route, against the AWS Gateway API Controller's CRD (v2.1.3).
#[test]
fn written_access_log_policies_fit_the_strict_crd_schema() {
    let n = assert_rendered_fit_the_strict_crd(
        "aws/application-networking.k8s.aws_accesslogpolicies.yaml",
        "v1alpha1",
        "AccessLogPolicy",
    );
    assert_eq!(n, 14);
}

/// The KongPlugin that makes Kong export the metrics the rules read, against the KongPlugin
/// CRD KIC 3.x installs (Kong/kubernetes-configuration v2.0.1).
#[test]
fn the_written_prometheus_plugin_fits_the_strict_crd_schema() {
    let n = assert_rendered_fit_the_strict_crd(
        "kong/configuration.konghq.com_kongplugins.yaml",
        "v1",
        "KongPlugin",
    );
    assert_eq!(n, 1);
}
