//! Every HTTPRoute latgen renders must be accepted by the Gateway API v1.6.1 HTTPRoute CRD
//! (its v1 OpenAPI schema, unknown fields refused) and by the CEL rules JSON Schema cannot
//! express; Lattice-side routes must also fit what the AWS controller and Lattice take.

use super::common;
use super::project;

use std::path::Path;

use serde_json::Value;

fn crd_schema() -> Value {
    let text = std::fs::read_to_string(
        common::root().join("tests/data/gateway-api/gateway.networking.k8s.io_httproutes.yaml"),
    )
    .unwrap();
    let crd: Value = serde_saphyr::from_str(&text).unwrap();
    let versions = crd["spec"]["versions"].as_array().unwrap();
    let v1 = versions
        .iter()
        .find(|v| v["name"] == "v1")
        .expect("the CRD serves v1");
    let mut schema = v1["schema"]["openAPIV3Schema"].clone();
    common::strict_schema(&mut schema);
    schema
}

/// The CEL rules on path matches (`x-kubernetes-validations` of HTTPPathMatch), the
/// Service-port rule on backendRefs, and the total-matches rule on the spec.
fn cel_problems(route: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let valid_chars = |v: &str| {
        let b = v.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let c = b[i] as char;
            if c == '%' {
                if i + 2 >= b.len()
                    || !b[i + 1].is_ascii_hexdigit()
                    || !b[i + 2].is_ascii_hexdigit()
                {
                    return false;
                }
                i += 3;
                continue;
            }
            if !(c.is_ascii_alphanumeric() || "-/._~!$&'()*+,;=:@".contains(c)) {
                return false;
            }
            i += 1;
        }
        !v.is_empty()
    };
    let mut total_matches = 0;
    for rule in route["spec"]["rules"].as_array().into_iter().flatten() {
        for m in rule["matches"].as_array().into_iter().flatten() {
            total_matches += 1;
            let (Some(t), Some(v)) = (m["path"]["type"].as_str(), m["path"]["value"].as_str())
            else {
                continue;
            };
            if t != "Exact" && t != "PathPrefix" {
                continue;
            }
            let bad = !v.starts_with('/')
                || ["//", "/./", "/../", "%2f", "%2F", "#"]
                    .iter()
                    .any(|n| v.contains(n))
                || v.ends_with("/..")
                || v.ends_with("/.")
                || !valid_chars(v);
            if bad {
                out.push(format!("path {v:?} breaks a CEL path rule"));
            }
        }
        for b in rule["backendRefs"].as_array().into_iter().flatten() {
            let kind = b["kind"].as_str().unwrap_or("Service");
            let group = b["group"].as_str().unwrap_or("");
            if kind == "Service" && group.is_empty() && b["port"].is_null() {
                out.push("a Service backendRef without a port".into());
            }
        }
    }
    if total_matches > 128 {
        out.push(format!("{total_matches} matches in all; CEL allows 128"));
    }
    out
}

fn check_tree(dir: &Path) -> usize {
    let schema = crd_schema();
    let validator = jsonschema::validator_for(&schema).expect("the CRD schema compiles");
    let built = project::built(dir);
    let cap = built.prepared.config.quotas.rules_per_group() as usize;
    let mut routes = 0;
    for (path, text) in &built.output.files {
        let doc: Value = serde_saphyr::from_str(text).unwrap();
        if doc["kind"] != "HTTPRoute" {
            continue;
        }
        routes += 1;
        let errors: Vec<String> = validator
            .iter_errors(&doc)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{}: the CRD schema refuses it:\n{}",
            path.display(),
            errors.join("\n")
        );
        let cel = cel_problems(&doc);
        assert!(cel.is_empty(), "{}: {}", path.display(), cel.join("; "));
        if path.starts_with("lattice") {
            let rules = doc["spec"]["rules"].as_array().unwrap();
            assert!(
                rules.len() <= 16,
                "{}: over the CRD's 16 rules",
                path.display()
            );
            let hostnames = doc["spec"]["hostnames"].as_array().unwrap();
            assert_eq!(
                hostnames.len(),
                1,
                "{}: the controller uses one hostname as the custom domain",
                path.display()
            );
            for r in rules {
                assert_eq!(
                    r["matches"].as_array().unwrap().len(),
                    1,
                    "{}: the controller refuses a rule with several matches",
                    path.display()
                );
                let v = r["matches"][0]["path"]["value"].as_str().unwrap();
                assert!(
                    v.len() <= 128,
                    "{}: Lattice path over 128 characters",
                    path.display()
                );
            }
            if doc["metadata"]["labels"]["latgen.dev/group"].is_string() {
                assert!(
                    rules.len() <= cap,
                    "{}: {} rules over the quota of {cap}",
                    path.display(),
                    rules.len()
                );
            }
        }
    }
    routes
}

#[test]
fn example_routes_pass_the_crd_schema_and_cel_rules() {
    assert_eq!(check_tree(&common::root()), 14 + 79);
}

#[test]
fn fixture_routes_pass_the_crd_schema_and_cel_rules() {
    assert!(check_tree(&common::fixture("traps")) > 0);
    assert!(check_tree(&common::fixture("settings")) > 0);
    assert!(check_tree(&common::fixture("canary")) > 0);
    assert!(check_tree(&common::fixture("previews")) > 0);
}

#[test]
fn an_init_project_routes_pass_the_crd_schema_and_cel_rules() {
    let tmp = common::scratch();
    let run = common::latgen(tmp.path(), &["init"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // The example app: its group's route and its Kong route.
    assert_eq!(check_tree(tmp.path()), 2);
}

/// The schema check is real: it refuses what the API server refuses.
#[test]
fn the_crd_schema_refuses_bad_routes() {
    let schema = crd_schema();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let good: Value = serde_saphyr::from_str(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: { name: a }\nspec:\n  hostnames: [a.example.com]\n  rules:\n    - matches: [{ path: { type: PathPrefix, value: /a } }]\n      backendRefs: [{ name: a, port: 80 }]\n",
    )
    .unwrap();
    assert!(validator.is_valid(&good));
    let mut typo = good.clone();
    typo["spec"]["rules"][0]["backendRef"] = Value::Null;
    assert!(!validator.is_valid(&typo), "unknown field");
    let mut upper = good.clone();
    upper["spec"]["hostnames"][0] = "A.example.com".into();
    assert!(!validator.is_valid(&upper), "uppercase hostname");
    let mut many = good.clone();
    let rule = many["spec"]["rules"][0].clone();
    many["spec"]["rules"] = Value::Array(vec![rule; 17]);
    assert!(!validator.is_valid(&many), "17 rules");
    let mut regex = good.clone();
    regex["spec"]["rules"][0]["matches"][0]["path"]["type"] = "Regex".into();
    assert!(!validator.is_valid(&regex), "unknown path type");

    let mut dots = good.clone();
    dots["spec"]["rules"][0]["matches"][0]["path"]["value"] = "/a/../b".into();
    assert_eq!(cel_problems(&dots).len(), 1);
    let mut no_port = good;
    no_port["spec"]["rules"][0]["backendRefs"][0]["port"] = Value::Null;
    assert_eq!(cel_problems(&no_port).len(), 1);
}

/// The CRD's own CEL rules on an HTTPRoute path match (`x-kubernetes-validations` of
/// `spec.rules[].matches[].path`), as the CRD writes them, compiled by a CEL interpreter.
fn path_match_rules() -> Vec<(String, cel::Program)> {
    let text = std::fs::read_to_string(
        common::root().join("tests/data/gateway-api/gateway.networking.k8s.io_httproutes.yaml"),
    )
    .unwrap();
    let crd: Value = serde_saphyr::from_str(&text).unwrap();
    let v1 = crd["spec"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "v1")
        .unwrap();
    let path = &v1["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["rules"]["items"]
        ["properties"]["matches"]["items"]["properties"]["path"];
    path["x-kubernetes-validations"]
        .as_array()
        .expect("the path match carries CEL rules")
        .iter()
        .map(|r| {
            let rule = r["rule"].as_str().unwrap().to_string();
            let program = cel::Program::compile(&rule)
                .unwrap_or_else(|e| panic!("the CEL rule does not compile: {rule}: {e}"));
            (rule, program)
        })
        .collect()
}

/// The CEL rules `value` breaks as a match of `kind`.
fn cel_path_breaks(rules: &[(String, cel::Program)], kind: &str, value: &str) -> Vec<String> {
    let mut ctx = cel::Context::default();
    let mut object = std::collections::HashMap::new();
    object.insert("type".to_string(), kind.to_string());
    object.insert("value".to_string(), value.to_string());
    ctx.add_variable("self", object).unwrap();
    rules
        .iter()
        .filter(|(_, p)| p.execute(&ctx) != Ok(cel::Value::Bool(true)))
        .map(|(rule, _)| rule.clone())
        .collect()
}

/// The interpreter runs the CRD's rules as the API server would: the two paths of the
/// attack run that broke a whole group route are refused, a plain one passes.
#[test]
fn the_crds_cel_rules_refuse_a_query_and_a_stray_percent() {
    let rules = path_match_rules();
    assert!(rules.len() >= 10, "{} rules", rules.len());
    assert!(cel_path_breaks(&rules, "PathPrefix", "/shop/cart").is_empty());
    assert!(cel_path_breaks(&rules, "Exact", "/a%41").is_empty());
    for bad in ["/a?x=1", "/a%zz", "/a//b", "/a#b", "/a/.."] {
        assert!(
            !cel_path_breaks(&rules, "PathPrefix", bad).is_empty(),
            "{bad} passes the CRD's CEL rules"
        );
    }
}

thread_local! {
    /// Compiled once per test thread, not once per case.
    static RULES: Vec<(String, cel::Program)> = path_match_rules();
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
    /// Every path latgen's validator accepts passes the CRD's own CEL rules, as a prefix and
    /// as an exact match, so that the validator and the CRD cannot drift apart: a path the
    /// API server would refuse takes down the whole group route it sits in.
    #[test]
    fn every_path_the_validator_accepts_passes_the_crds_cel_rules(
        tail in "[a-zA-Z0-9/._~!$&'()*+,;=:@%?# \\-]{0,24}|(/[a-z%0-9FfzZ.?]{0,5}){1,4}",
    ) {
        let path = format!("/{tail}");
        if latgen_sim::platform::path_problems(&path).is_empty() {
            for kind in ["PathPrefix", "Exact"] {
                let broken = RULES.with(|rules| cel_path_breaks(rules, kind, &path));
                proptest::prop_assert!(broken.is_empty(), "{kind} {path:?} breaks {broken:?}");
            }
        }
    }
}
