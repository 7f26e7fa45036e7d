//! What latgen writes (the output, the lock, the deploy kit and the files of a new
//! project) passes `yamllint` with its default configuration, with no finding at all
//! (errors or warnings: lines within 80 columns, a `---` document start, no spaces inside
//! braces, …), since teams lint the YAML of their repositories, generated files included.
//! The tests need yamllint (`python3 -m pip install yamllint`), so they are ignored by a
//! plain `cargo test` (which reports them as ignored, not passed) and fail when run without
//! it: `cargo test -- --ignored suite::yamllint::` runs them, as `.ci/run` does.

use super::common;

use std::path::Path;
use std::process::Command;

use common::latgen;

/// The command that runs yamllint here, if any: `yamllint`, else `python3 -m yamllint`.
fn yamllint() -> Option<Command> {
    let works = |mut c: Command| {
        c.arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if works(Command::new("yamllint")) {
        return Some(Command::new("yamllint"));
    }
    let module = || {
        let mut c = Command::new("python3");
        c.args(["-m", "yamllint"]);
        c
    };
    works(module()).then(module)
}

/// Runs yamllint's default configuration on `paths` (files or folders) under `dir` and
/// asserts that it finds nothing.
fn assert_lints_clean(dir: &Path, paths: &[&str]) {
    let mut cmd = yamllint().expect("yamllint is not installed (python3 -m pip install yamllint)");
    let out = cmd
        .args(["-d", "default", "-f", "parsable"])
        .args(paths)
        .current_dir(dir)
        .output()
        .expect("yamllint runs");
    let findings = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && findings.is_empty(),
        "yamllint finds (exit {:?}):\n{findings}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
#[ignore = "needs yamllint: cargo test -- --ignored suite::yamllint::"]
fn the_committed_example_passes_yamllint() {
    assert_lints_clean(&common::root(), &["generated", "latgen.lock", "deploy"]);
}

#[test]
#[ignore = "needs yamllint: cargo test -- --ignored suite::yamllint::"]
fn the_golden_fixture_trees_pass_yamllint() {
    for fixture in ["traps", "settings"] {
        let dir = common::fixture(fixture).join("expected");
        assert!(dir.join("latgen.lock").is_file(), "{}", dir.display());
        assert_lints_clean(&dir, &["."]);
    }
}

/// Everything `init` writes (settings, the example app, the workflow, the deploy kit) and
/// `render` adds: a new project's YAML is clean from the start.
#[test]
#[ignore = "needs yamllint: cargo test -- --ignored suite::yamllint::"]
fn an_init_project_passes_yamllint() {
    let tmp = common::scratch();
    let dir = tmp.path();
    for args in [&["init"][..], &["render"]] {
        let run = latgen(dir, args);
        assert_eq!(run.code, Some(0), "{args:?}: {}", run.stderr);
    }
    for file in [
        "latgen.yaml",
        "apps/example.yaml",
        ".github/workflows/latgen.yml",
        "deploy/appproject.yaml",
        "generated/kong/kustomization.yaml",
    ] {
        assert!(dir.join(file).is_file(), "{file}");
    }
    assert_lints_clean(dir, &["."]);
}

/// With a real service-name prefix every route carries the name-override annotation and
/// the comment above it (that comment was 89 characters: yamllint's limit is 80); a
/// host-routed app shows the dedicated route's.
#[test]
#[ignore = "needs yamllint: cargo test -- --ignored suite::yamllint::"]
fn a_project_with_a_service_name_prefix_passes_yamllint() {
    let tmp = common::scratch();
    let dir = tmp.path();
    let run = latgen(dir, &["init", "--service-name-prefix", "shop-prod"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    std::fs::write(
        dir.join("apps/www.yaml"),
        "namespace: web\nservice: { name: www, port: 80 }\nhost: www.example.com\n",
    )
    .unwrap();
    let run = latgen(dir, &["render"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let routes = std::fs::read_dir(dir.join("generated/lattice"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .filter(|t| t.contains("service-name-override"))
        .count();
    assert_eq!(routes, 2, "a group route and a dedicated one");
    assert_lints_clean(dir, &["generated"]);
}

#[test]
#[ignore = "needs yamllint: cargo test -- --ignored suite::yamllint::"]
fn a_lock_with_a_move_in_flight_passes_yamllint() {
    let tmp = common::scratch();
    let dir = tmp.path();
    for args in [
        &["init"][..],
        &["render"],
        &["move", "example", "--group", "2"],
    ] {
        let run = latgen(dir, args);
        assert_eq!(run.code, Some(0), "{args:?}: {}", run.stderr);
    }
    let lock = std::fs::read_to_string(dir.join("latgen.lock")).unwrap();
    assert!(lock.contains("moves:"), "{lock}");
    assert_lints_clean(dir, &["latgen.lock"]);
}
