//! The machine formats of `latgen check`: SARIF 2.1.0 in the shape GitHub code scanning
//! takes, GitHub annotations, and JSON lines.

use super::common;

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

fn check(dir: &Path, format: &str) -> (i32, String) {
    let mut args = vec!["check", "--format", format, "--color", "never"];
    if dir.join("templates").is_dir() {
        args.extend(["--templates", "templates"]);
    }
    let out = Command::new(common::bin())
        .args(&args)
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
    )
}

/// What GitHub code scanning requires of an upload (SARIF 2.1.0, one run, rules with ids,
/// results with a rule, a level and a message, locations with a relative URI and a
/// 1-based start line), as a JSON Schema.
fn sarif_schema() -> Value {
    let location = json!({
        "type": "object",
        "required": ["physicalLocation"],
        "properties": {
            "id": { "type": "integer", "minimum": 0 },
            "message": { "type": "object", "required": ["text"] },
            "physicalLocation": {
                "type": "object",
                "required": ["artifactLocation", "region"],
                "properties": {
                    "artifactLocation": {
                        "type": "object",
                        "required": ["uri"],
                        "properties": { "uri": { "type": "string", "pattern": "^[^/][^:]*$", "not": { "pattern": "(^|/)\\.\\.(/|$)" } } }
                    },
                    "region": {
                        "type": "object",
                        "required": ["startLine"],
                        "properties": {
                            "startLine": { "type": "integer", "minimum": 1 },
                            "startColumn": { "type": "integer", "minimum": 1 }
                        }
                    }
                }
            }
        }
    });
    json!({
        "type": "object",
        "required": ["version", "$schema", "runs"],
        "properties": {
            "version": { "const": "2.1.0" },
            "runs": {
                "type": "array", "minItems": 1, "maxItems": 1,
                "items": {
                    "type": "object",
                    "required": ["tool", "results"],
                    "properties": {
                        "tool": {
                            "type": "object", "required": ["driver"],
                            "properties": { "driver": {
                                "type": "object", "required": ["name", "rules"],
                                "properties": { "rules": { "type": "array", "items": {
                                    "type": "object",
                                    "required": ["id", "shortDescription", "defaultConfiguration"],
                                    "properties": {
                                        "id": { "type": "string", "pattern": "^[a-z0-9-]+$" },
                                        "shortDescription": { "type": "object", "required": ["text"] },
                                        "defaultConfiguration": { "type": "object", "properties": { "level": { "enum": ["none", "note", "warning", "error"] } } }
                                    }
                                }}}
                            }}
                        },
                        "results": { "type": "array", "items": {
                            "type": "object",
                            "required": ["ruleId", "ruleIndex", "level", "message", "locations"],
                            "properties": {
                                "ruleId": { "type": "string" },
                                "ruleIndex": { "type": "integer", "minimum": 0 },
                                "level": { "enum": ["none", "note", "warning", "error"] },
                                "message": { "type": "object", "required": ["text"], "properties": { "text": { "type": "string", "minLength": 1 } } },
                                "locations": { "type": "array", "minItems": 1, "items": location },
                                "relatedLocations": { "type": "array", "items": location }
                            }
                        }}
                    }
                }
            }
        }
    })
}

#[test]
fn sarif_has_the_structure_code_scanning_takes() {
    let schema = sarif_schema();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for fixture in [
        "rule-shadowed",
        "stale-output@missing",
        "nested-prefix",
        "kong-regex-path",
    ] {
        let (code, text) = check(&common::root().join("tests/check").join(fixture), "sarif");
        assert!(code <= 1, "{fixture}: exit {code}");
        let log: Value = serde_json::from_str(&text).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&log)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{fixture}:\n{}\n{text}",
            errors.join("\n")
        );
        // Each result's ruleIndex points at its rule.
        let run = &log["runs"][0];
        let results = run["results"].as_array().unwrap();
        assert!(!results.is_empty(), "{fixture}");
        for r in results {
            let i = r["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(
                run["tool"]["driver"]["rules"][i]["id"], r["ruleId"],
                "{fixture}"
            );
        }
    }
}

#[test]
fn sarif_structure_check_is_real() {
    let validator = jsonschema::validator_for(&sarif_schema()).unwrap();
    let (_, text) = check(&common::root().join("tests/check/rule-shadowed"), "sarif");
    let mut log: Value = serde_json::from_str(&text).unwrap();
    assert!(validator.is_valid(&log));
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
        json!(0);
    assert!(!validator.is_valid(&log), "startLine 0 is refused");
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
        json!(1);
    log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] =
        json!("/abs/path.yaml");
    assert!(!validator.is_valid(&log), "absolute paths are refused");
}

#[test]
fn github_annotations_name_file_line_and_code() {
    let (code, text) = check(&common::root().join("tests/check/rule-shadowed"), "github");
    assert_eq!(code, 1);
    assert_eq!(
        text.lines().next().unwrap(),
        "::error file=generated/lattice/httproute-group-01.yaml,line=41,col=20,title=latgen rule-shadowed::rule 2 (/shopping) never gets traffic: rule 1 (/shop) comes first and Lattice matches prefixes as strings%0Ahelp: order rules longest path first (latgen's templates do); check custom templates and hand edits"
    );
}

#[test]
fn clean_fixture_prints_nothing_in_machine_formats() {
    for format in ["json", "github"] {
        let (code, text) = check(&common::root().join("tests/check/clean"), format);
        assert_eq!((code, text.as_str()), (0, ""), "{format}");
    }
    let (code, text) = check(&common::root().join("tests/check/clean"), "sarif");
    assert_eq!(code, 0);
    let log: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(log["runs"][0]["results"], json!([]));
}

/// `latgen check ARGS` in a fixture whose only finding is a warning: its exit code.
fn check_warning_only(args: &[&str]) -> Option<i32> {
    let dir = common::root().join("tests/check/kong-regex-path");
    Command::new(common::bin())
        .arg("check")
        .args(args)
        .current_dir(&dir)
        .output()
        .unwrap()
        .status
        .code()
}

#[test]
fn warnings_pass_unless_denied() {
    assert_eq!(check_warning_only(&[]), Some(0));
    assert_eq!(check_warning_only(&["--deny-warnings"]), Some(1));
}
