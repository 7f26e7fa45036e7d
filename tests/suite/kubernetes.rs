//! The Services latgen writes (the bridges Kong routes to, with the annotations KIC reads:
//! protocol, timeouts, retries) pass `kubernetes-validate --strict`, Kubernetes' own OpenAPI
//! schema with unknown fields refused: an annotation value that YAML reads as a number, or
//! a field in the wrong place, is refused there as the API server would refuse it. The
//! tests need kubernetes-validate (`python3 -m pip install kubernetes-validate`), so they
//! are ignored by a plain `cargo test` and fail when run without it: `cargo test --
//! --ignored suite::kubernetes::` runs them, as `.ci/run` does.

use super::common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The oldest Kubernetes release the schema is checked against: the API has not changed
/// for Services since, and an older cluster is out of support.
const KUBERNETES: &str = "1.31.0";

/// Asserts that every Service file (`service-*.yaml`) in `dir` passes, and returns how many.
fn assert_services_valid(dir: &Path) -> usize {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("service-") && name.ends_with(".yaml")
        })
        .collect();
    assert!(!files.is_empty(), "no Service in {}", dir.display());
    let out = Command::new("kubernetes-validate")
        .args(["--strict", "--quiet", "--kubernetes-version", KUBERNETES])
        .args(&files)
        .output()
        .expect(
            "kubernetes-validate is not installed (python3 -m pip install kubernetes-validate)",
        );
    assert!(
        out.status.success(),
        "kubernetes-validate refuses Services in {} (exit {:?}):\n{}{}",
        dir.display(),
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    files.len()
}

/// Timeouts, retries and the https protocol on the bridges (the settings fixture).
#[test]
#[ignore = "needs kubernetes-validate: cargo test -- --ignored suite::kubernetes::"]
fn bridges_with_kong_settings_pass_the_service_schema() {
    let dir = common::fixture("settings").join("expected/kong");
    assert_eq!(assert_services_valid(&dir), 10);
}

/// The example's 79 bridges, payments' timeouts and retries among them.
#[test]
#[ignore = "needs kubernetes-validate: cargo test -- --ignored suite::kubernetes::"]
fn the_examples_bridges_pass_the_service_schema() {
    assert_eq!(
        assert_services_valid(&common::root().join("generated/kong")),
        79
    );
}

/// The checker is not vacuous: a retries annotation YAML reads as a number is refused.
#[test]
#[ignore = "needs kubernetes-validate: cargo test -- --ignored suite::kubernetes::"]
fn an_annotation_that_is_not_a_string_is_refused() {
    let tmp = common::scratch();
    let good = common::fixture("settings").join("expected/kong/service-alpha-lattice.yaml");
    let text = std::fs::read_to_string(good).unwrap();
    assert!(text.contains("konghq.com/retries: \"0\""), "{text}");
    let bad = text.replace("konghq.com/retries: \"0\"", "konghq.com/retries: 0");
    std::fs::write(tmp.path().join("service-bad.yaml"), bad).unwrap();
    let refused = std::panic::catch_unwind(|| assert_services_valid(tmp.path()));
    assert!(refused.is_err(), "a number as an annotation value passed");
}
