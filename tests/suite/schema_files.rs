//! The JSON Schemas committed in `schemas/` are what `latgen schema` prints (refresh them
//! with `LATGEN_BLESS=1 cargo test suite::schema_files::`), every app declaration in `apps/`
//! points its editor at the app schema and is valid against it, and the schemas refuse
//! what latgen refuses.

use super::common;

use std::path::{Path, PathBuf};

use latgen::input::json_schemas::Kind;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn validator(kind: Kind) -> jsonschema::Validator {
    jsonschema::draft7::new(&kind.schema()).expect("the schema compiles as draft-07")
}

fn yaml(text: &str) -> Value {
    serde_saphyr::from_str(text).expect("valid YAML")
}

fn errors(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

#[test]
fn committed_schemas_are_current() {
    for kind in Kind::ALL {
        common::assert_snapshot(&common::root().join(kind.file()), &kind.text());
    }
}

/// The example's declarations, by path relative to the repository.
fn example_apps() -> Vec<PathBuf> {
    let root = common::root();
    common::read_tree(&root.join("apps"))
        .into_keys()
        .map(|rel| Path::new("apps").join(rel))
        .collect()
}

/// The modeline of a file at `rel` (relative to the repository): the schema path relative
/// to the file's folder.
fn modeline(rel: &Path) -> String {
    let depth = rel.components().count() - 1;
    format!(
        "# yaml-language-server: $schema={}schemas/app.schema.json",
        "../".repeat(depth)
    )
}

#[test]
fn every_example_app_names_the_schema_on_its_first_line() {
    let apps = example_apps();
    assert!(apps.len() > 70, "the example has its apps");
    let mut wrong = Vec::new();
    for rel in &apps {
        let text = std::fs::read_to_string(common::root().join(rel)).unwrap();
        let want = modeline(rel);
        if text.lines().next() != Some(want.as_str()) {
            wrong.push(format!("{}: want `{want}`", rel.display()));
        }
        // The relative path resolves to the committed schema.
        let target = common::root()
            .join(rel)
            .parent()
            .unwrap()
            .join(want.rsplit('=').next().unwrap());
        assert!(target.is_file(), "{} does not exist", target.display());
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn every_example_app_is_valid_against_the_app_schema() {
    let v = validator(Kind::App);
    let mut failures = Vec::new();
    for rel in example_apps() {
        let text = std::fs::read_to_string(common::root().join(&rel)).unwrap();
        for e in errors(&v, &yaml(&text)) {
            failures.push(format!("{}: {e}", rel.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_init_files_are_valid_against_the_schemas() {
    let root = common::root();
    let app = std::fs::read_to_string(root.join("scaffold/apps/example.yaml")).unwrap();
    assert_eq!(
        errors(&validator(Kind::App), &yaml(&app)),
        Vec::<String>::new()
    );
    assert!(app.starts_with(&format!("{}\n", modeline(Path::new("apps/example.yaml")))));
    let config = std::fs::read_to_string(root.join("scaffold/latgen.yaml")).unwrap();
    assert_eq!(
        errors(&validator(Kind::Config), &yaml(&config)),
        Vec::<String>::new()
    );
    assert!(config.starts_with("# yaml-language-server: $schema=schemas/latgen.schema.json\n"));
}

#[test]
fn the_app_schema_accepts_every_form_latgen_reads() {
    let v = validator(Kind::App);
    for doc in [
        "namespace: a\nservice: { name: a, port: 80 }\npaths: [/a]\n",
        "namespace: a\nservice: { name: a, port: 80 }\npaths: [{ prefix: /a }, { exact: /b }, /c]\n",
        "name: a\nnamespace: a\nservice: { name: a, port: 65535 }\nhost: a.example.com\ngroup: 2\npeakRps: 10\nisolate: true\nhealthCheck: { path: /h, intervalSeconds: 5 }\n",
        "namespace: a\nservice: { name: a, port: 1 }\nhost: a.example.com\nhealthCheck: {}\n",
    ] {
        assert_eq!(errors(&v, &yaml(doc)), Vec::<String>::new(), "{doc}");
    }
}

#[test]
fn the_app_schema_refuses_what_latgen_refuses() {
    let v = validator(Kind::App);
    let base =
        || json!({ "namespace": "a", "service": { "name": "a", "port": 80 }, "paths": ["/a"] });
    assert!(v.is_valid(&base()), "the base case is valid");
    let cases: Vec<(&str, Value)> = vec![
        ("unknown field", {
            let mut d = base();
            d["pathz"] = json!(["/a"]);
            d
        }),
        ("missing namespace", {
            let mut d = base();
            d.as_object_mut().unwrap().remove("namespace");
            d
        }),
        ("missing service", {
            let mut d = base();
            d.as_object_mut().unwrap().remove("service");
            d
        }),
        ("port out of range", {
            let mut d = base();
            d["service"]["port"] = json!(70000);
            d
        }),
        ("port 0", {
            let mut d = base();
            d["service"]["port"] = json!(0);
            d
        }),
        ("unknown service field", {
            let mut d = base();
            d["service"]["prot"] = json!(80);
            d
        }),
        ("relative path", {
            let mut d = base();
            d["paths"] = json!(["shop"]);
            d
        }),
        ("prefix and exact", {
            let mut d = base();
            d["paths"] = json!([{ "prefix": "/a", "exact": "/a" }]);
            d
        }),
        ("empty path map", {
            let mut d = base();
            d["paths"] = json!([{}]);
            d
        }),
        ("unknown path key", {
            let mut d = base();
            d["paths"] = json!([{ "regex": "/a" }]);
            d
        }),
        ("group 0", {
            let mut d = base();
            d["group"] = json!(0);
            d
        }),
        ("health check interval", {
            let mut d = base();
            d["healthCheck"] = json!({ "intervalSeconds": 1 });
            d
        }),
        ("isolate as a string", {
            let mut d = base();
            d["isolate"] = json!("yes");
            d
        }),
    ];
    for (what, doc) in cases {
        assert!(!v.is_valid(&doc), "the schema accepts {what}: {doc}");
    }
}

#[test]
fn the_config_schema_accepts_an_empty_file_and_refuses_unknown_fields() {
    let v = validator(Kind::Config);
    assert!(v.is_valid(&json!({})));
    assert!(v.is_valid(&json!({ "kong": { "protocol": "https", "port": 8443 } })));
    assert!(!v.is_valid(&json!({ "kong": { "protocol": "grpc" } })));
    assert!(!v.is_valid(&json!({ "quota": {} })));
    assert!(!v.is_valid(&json!({ "lattice": { "gateway": { "namespace": "x" } } })));
}

#[test]
fn the_config_schema_shows_the_defaults() {
    let schema = Kind::Config.schema();
    let quotas = &schema["definitions"]["Quotas"]["properties"];
    assert_eq!(quotas["rulesPerService"]["default"], 10);
    let lattice = &schema["definitions"]["LatticeConfig"]["properties"];
    assert_eq!(lattice["gateway"]["default"]["name"], "lattice-gateway");
    assert_eq!(lattice["groupPrefix"]["default"], "group-");
}

/// Whether latgen reads an app declaration (its fields' shapes and types).
fn latgen_reads_app(text: &str) -> bool {
    let mut diags = latgen::diag::Diagnostics::new();
    latgen::input::parse_declaration(Path::new("apps/a.yaml"), text, &mut diags).is_some()
}

/// Whether latgen reads a `latgen.yaml`.
fn latgen_reads_config(text: &str) -> bool {
    let mut diags = latgen::diag::Diagnostics::new();
    latgen::input::config::parse(Path::new("latgen.yaml"), text, &mut diags).is_some()
}

/// A value written with quotes is text to YAML and to an editor checking the schema:
/// latgen reads numbers and booleans as the schema says, so both accept or both refuse.
#[test]
fn latgen_and_the_schemas_agree_on_quoted_numbers_and_booleans() {
    let app = validator(Kind::App);
    let base = "namespace: a\npaths: [/a]\n";
    for extra in [
        "service: { name: a, port: 8080 }\n",
        "service: { name: a, port: \"8080\" }\n",
        "service: { name: a, port: '8080' }\n",
        "service: { name: a, port: 80 }\ngroup: 2\n",
        "service: { name: a, port: 80 }\ngroup: \"2\"\n",
        "service: { name: a, port: 80 }\npeakRps: \"5\"\n",
        "service: { name: a, port: 80 }\nisolate: true\n",
        "service: { name: a, port: 80 }\nisolate: \"true\"\n",
        "service: { name: a, port: 80 }\nhealthCheck: { intervalSeconds: \"10\" }\n",
        "service: { name: \"a\", port: 80 }\nnamespace2: x\n",
    ] {
        let doc = format!("{base}{extra}");
        assert_eq!(
            latgen_reads_app(&doc),
            app.is_valid(&yaml(&doc)),
            "latgen and the schema disagree on\n{doc}"
        );
    }
    let config = validator(Kind::Config);
    for doc in [
        "kong: { port: 8443 }\n",
        "kong: { port: \"8443\" }\n",
        "quotas: { rulesPerService: \"20\" }\n",
        "lattice: { referenceGrants: \"false\" }\n",
        "pricing: { serviceHourUsd: \"0.03\" }\n",
    ] {
        assert_eq!(
            latgen_reads_config(doc),
            config.is_valid(&yaml(doc)),
            "latgen and the schema disagree on\n{doc}"
        );
    }
}
