//! `overrides:` in a declaration: what one environment changes of an app (its host, its
//! paths), validated in that environment at the override's line, and carried to the next
//! environment by `latgen promote`. On a copy of the two-environment fixture.

use super::common;

use std::path::Path;

/// The two-environment fixture in a scratch folder, with `app`'s declaration replaced.
fn project_with(app: &str, declaration: &str) -> tempfile::TempDir {
    let tmp = common::copy_project(&common::fixture("environments"));
    let file = tmp.path().join("apps").join(format!("{app}.yaml"));
    std::fs::write(file, declaration).unwrap();
    tmp
}

fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Every file of one side of an environment's output, as one text.
fn side(dir: &Path, env: &str, side: &str) -> String {
    let tree = common::read_tree(&dir.join("generated").join(env).join(side));
    tree.into_values().collect::<Vec<_>>().join("\n---\n")
}

const DOCS: &str = "\
namespace: team-web
service: { name: docs, port: 80 }
host: docs.example.com
overrides:
  staging:
    host: docs.staging.example.com
";

#[test]
fn a_host_routed_app_takes_its_staging_host_in_staging_only() {
    let tmp = project_with("docs", DOCS);
    let dir = tmp.path();
    let run = common::latgen(dir, &["render", "--env", "all"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    for what in ["lattice", "kong"] {
        let staging = side(dir, "staging", what);
        assert!(staging.contains("docs.staging.example.com"), "{staging}");
        let production = side(dir, "production", what);
        assert!(production.contains("docs.example.com"), "{production}");
        assert!(
            !production.contains("docs.staging.example.com"),
            "{production}"
        );
    }
}

const HELP: &str = "\
namespace: team-help
service: { name: help, port: 80 }
# the paths production serves
paths: [/help, /faq]
overrides:
  staging:
    # tried in staging first
    paths: [/help, /faq, /support]
";

#[test]
fn a_path_change_tried_in_staging_stays_out_of_production() {
    let tmp = project_with("help", HELP);
    let dir = tmp.path();
    let run = common::latgen(dir, &["render", "--env", "all"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(side(dir, "staging", "lattice").contains("/support"));
    assert!(!side(dir, "production", "lattice").contains("/support"));
    let deploy = common::latgen(dir, &["deploy", "--env", "all"]);
    assert_eq!(deploy.code, Some(0), "{}", deploy.stderr);
    let check = common::latgen(dir, &["check", "--env", "all"]);
    assert_eq!(check.code, Some(0), "{}{}", check.stdout, check.stderr);
}

#[test]
fn promote_says_the_path_change_it_would_carry_and_writes_nothing() {
    let tmp = project_with("help", HELP);
    let dir = tmp.path();
    assert_eq!(
        common::latgen(dir, &["render", "--env", "all"]).code,
        Some(0)
    );
    let run = common::latgen(dir, &["promote", "staging", "production"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout.contains(
            "  help: paths as in staging, the declaration's own once carried: `--apply` carries it (apps/help.yaml)"
        ),
        "{}",
        run.stdout
    );
    assert_eq!(read(dir, "apps/help.yaml"), HELP);
}

#[test]
fn promote_apply_carries_a_path_change_from_staging_to_production() {
    let tmp = project_with("help", HELP);
    let dir = tmp.path();
    assert_eq!(
        common::latgen(dir, &["render", "--env", "all"]).code,
        Some(0)
    );
    let run = common::latgen(dir, &["promote", "staging", "production", "--apply"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // Alike in both environments now: the declaration's own, its comment kept, and the
    // override gone.
    assert_eq!(
        read(dir, "apps/help.yaml"),
        "namespace: team-help\nservice: { name: help, port: 80 }\n# the paths production serves\npaths: [/help, /faq, /support]\n"
    );
    let render = common::latgen(dir, &["render", "--env", "all"]);
    assert_eq!(render.code, Some(0), "{}", render.stderr);
    assert!(side(dir, "production", "lattice").contains("/support"));
}

#[test]
fn promote_keeps_a_staging_host_unless_told_to_carry_it() {
    let tmp = project_with("docs", DOCS);
    let dir = tmp.path();
    let run = common::latgen(dir, &["promote", "staging", "production", "--apply"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout.contains(
            "  docs: staging overrides host, kept to staging (`--carry host` carries it) (apps/docs.yaml)"
        ),
        "{}",
        run.stdout
    );
    assert_eq!(read(dir, "apps/docs.yaml"), DOCS);
}

/// A render of `env` in a project whose `app` is `declaration`: exit 2 and a finding.
fn refused(app: &str, declaration: &str, env: &str) -> String {
    let tmp = project_with(app, declaration);
    let run = common::latgen(tmp.path(), &["render", "--env", env]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    run.stderr
}

#[test]
fn an_override_of_an_environment_the_project_lacks_is_an_error_at_its_line() {
    let text = "namespace: team-help\nservice: { name: help, port: 80 }\npaths: [/help]\noverrides:\n  stagign:\n    paths: [/help, /support]\n";
    let stderr = refused("help", text, "production");
    assert!(
        stderr.contains("`overrides.stagign`: `stagign` is not an environment of this project"),
        "{stderr}"
    );
    assert!(stderr.contains("apps/help.yaml:5"), "{stderr}");
    assert!(stderr.contains("did you mean `staging`?"), "{stderr}");
}

#[test]
fn an_override_of_an_environment_the_app_does_not_run_in_is_an_error() {
    let text = "namespace: team-lab\nservice: { name: lab, port: 8080 }\npaths: [/lab]\nenvironments: [staging]\noverrides:\n  production:\n    paths: [/lab, /lab2]\n";
    let stderr = refused("lab", text, "staging");
    assert!(
        stderr.contains(
            "`overrides.production` changes the app in production, where it does not run"
        ),
        "{stderr}"
    );
}

const BAD_IN_STAGING: &str = "\
namespace: team-help
service: { name: help, port: 80 }
paths: [/help, /faq]
overrides:
  staging:
    paths: [/help/]
";

#[test]
fn an_overridden_path_is_judged_in_its_own_environment() {
    let stderr = refused("help", BAD_IN_STAGING, "staging");
    assert!(stderr.contains("apps/help.yaml:6"), "{stderr}");
}

#[test]
fn an_overridden_path_does_not_touch_the_other_environment() {
    let tmp = project_with("help", BAD_IN_STAGING);
    let run = common::latgen(tmp.path(), &["render", "--env", "production"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

#[test]
fn overrides_in_a_project_without_environments_are_an_error() {
    let tmp = common::scratch();
    let dir = tmp.path();
    common::path_app(dir, "blog", &["/blog"]);
    let file = dir.join("apps/blog.yaml");
    let mut text = read(dir, "apps/blog.yaml");
    text.push_str("overrides:\n  staging:\n    paths: [/journal]\n");
    std::fs::write(&file, text).unwrap();
    let run = common::latgen(dir, &["render"]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("`overrides` changes the app per environment, and this project has none"),
        "{}",
        run.stderr
    );
}
