//! The rules latgen writes with `observability.prometheus` pass promtool: `check rules` on
//! every PrometheusRule of the example, and `test rules` on synthetic Kong series
//! (`tests/prometheus/*.test.yml`): a group over its budget fires, one under does not, an
//! app above its declared peak fires, and a moved app's series keeps its name. The tests
//! need promtool (Debian's `prometheus` package), so they are ignored by a plain `cargo
//! test` and fail when run without it: `cargo test -- --ignored suite::prometheus::` runs
//! them, as `.ci/run` does.

use super::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The rule files of the PrometheusRules in `tree` (paths relative to the output folder):
/// each one's `spec`, which is a Prometheus rule file, in `dir`.
fn extract_rules(tree: &BTreeMap<PathBuf, String>, dir: &Path) -> usize {
    std::fs::create_dir_all(dir).unwrap();
    let mut n = 0;
    for (path, text) in tree {
        let name = path.file_name().unwrap().to_string_lossy();
        if !name.starts_with("prometheusrule-") {
            continue;
        }
        let object: serde_json::Value = serde_saphyr::from_str(text).unwrap();
        assert_eq!(object["kind"], "PrometheusRule", "{}", path.display());
        let rules = serde_json::to_string_pretty(&object["spec"]).unwrap();
        std::fs::write(dir.join(&*name), rules).unwrap();
        n += 1;
    }
    n
}

fn promtool(args: &[&str], dir: &Path) {
    let out = Command::new("promtool")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("promtool is not installed (Debian: apt-get install prometheus)");
    assert!(
        out.status.success(),
        "promtool {args:?} fails:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `test` (under tests/prometheus/) beside the rules of `tree`, run by promtool.
fn run_unit_tests(tree: &BTreeMap<PathBuf, String>, test: &str) {
    let tmp = common::scratch();
    let count = extract_rules(tree, &tmp.path().join("rules"));
    assert!(count > 1, "{count} PrometheusRules");
    let source = common::root().join("tests/prometheus").join(test);
    std::fs::copy(source, tmp.path().join(test)).unwrap();
    promtool(&["test", "rules", test], tmp.path());
}

#[test]
#[ignore = "needs promtool: cargo test -- --ignored suite::prometheus::"]
fn the_examples_rules_pass_promtool_check() {
    let tmp = common::scratch();
    let tree = common::read_tree(&common::root().join("generated/kong"));
    // One for the apps, one per Lattice service.
    assert_eq!(extract_rules(&tree, tmp.path()), 1 + 14);
    let files: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let mut args = vec!["check", "rules"];
    args.extend(files.iter().map(String::as_str));
    promtool(&args, tmp.path());
}

#[test]
#[ignore = "needs promtool: cargo test -- --ignored suite::prometheus::"]
fn the_examples_alerts_fire_on_synthetic_kong_series() {
    let tree = common::read_tree(&common::root().join("generated/kong"));
    run_unit_tests(&tree, "example.test.yml");
}

/// cart moved to group-05 (the lock says so, as after `latgen move cart --group 5` has
/// shipped): its own series are the same, the by-route one names group-05.
#[test]
#[ignore = "needs promtool: cargo test -- --ignored suite::prometheus::"]
fn a_moved_apps_series_keeps_its_name() {
    let tmp = common::copy_project(&common::root());
    let lock = tmp.path().join("latgen.lock");
    let text = std::fs::read_to_string(&lock).unwrap();
    assert!(text.contains("\n  cart: 2\n"));
    std::fs::write(&lock, text.replace("\n  cart: 2\n", "\n  cart: 5\n")).unwrap();
    let run = common::latgen(tmp.path(), &["render"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let tree = common::read_tree(&tmp.path().join("generated/kong"));
    let group = &tree[Path::new("prometheusrule-latgen-group-05.yaml")];
    assert!(
        group.contains("|cart|") || group.contains("\"cart|"),
        "{group}"
    );
    run_unit_tests(&tree, "moved.test.yml");
}

/// latgen's own Prometheus plugin, named on every Kong route with `kongPlugin: true`, is
/// one latgen wrote and so can see: without `kong.pluginFiles` it is no plugin "latgen
/// cannot see" (`kong-plugin-conflict`), and `check --deny-warnings` passes.
#[test]
fn latgens_own_prometheus_plugin_is_no_unseen_plugin() {
    let tmp = common::scratch();
    let dir = tmp.path();
    common::path_app(dir, "alpha", &["/alpha"]);
    common::path_app(dir, "beta", &["/beta"]);
    std::fs::write(
        dir.join("latgen.yaml"),
        "observability:\n  prometheus:\n    kongPlugin: true\n",
    )
    .unwrap();
    let render = common::latgen(dir, &["render"]);
    assert_eq!(render.code, Some(0), "{}", render.stderr);
    let routes = common::read_tree(&dir.join("generated/kong"));
    let named = routes
        .values()
        .filter(|t| t.contains("latgen-prometheus"))
        .count();
    assert!(named > 1, "the plugin is named on the Kong routes");
    let check = common::latgen(dir, &["check", "--deny-warnings"]);
    assert_eq!(check.code, Some(0), "{}", check.stdout);
}
