//! Environments (`environments/<name>.yaml`): the two-environment fixture renders both
//! environments to its golden tree (outputs, locks, deploy kits), production's output does
//! not depend on the staging-only app, and every environment is checked, alone and
//! against the others. Refresh with `LATGEN_BLESS=1 cargo test suite::environments::`.

use super::common;
use super::project;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use pretty_assertions::assert_eq;

/// The fixture rendered with `latgen render --env all` and `latgen deploy --env all` in a
/// scratch copy: every file the two commands write.
fn rendered(without: Option<&str>) -> (tempfile::TempDir, BTreeMap<PathBuf, String>) {
    let tmp = common::copy_project(&common::fixture("environments"));
    if let Some(app) = without {
        std::fs::remove_file(tmp.path().join("apps").join(format!("{app}.yaml"))).unwrap();
    }
    for command in ["render", "deploy"] {
        let run = common::latgen(tmp.path(), &[command, "--env", "all"]);
        assert_eq!(run.code, Some(0), "{command}: {}", run.stderr);
    }
    let mut files = BTreeMap::new();
    for folder in ["generated", "locks", "deploy"] {
        for (rel, text) in common::read_tree(&tmp.path().join(folder)) {
            files.insert(Path::new(folder).join(rel), text);
        }
    }
    (tmp, files)
}

fn in_env(files: &BTreeMap<PathBuf, String>, env: &str) -> BTreeMap<PathBuf, String> {
    files
        .iter()
        .filter(|(p, _)| {
            p.starts_with(Path::new("generated").join(env))
                || p.starts_with(Path::new("deploy").join(env))
                || p == &&Path::new("locks").join(format!("{env}.lock"))
        })
        .map(|(p, t)| (p.clone(), t.clone()))
        .collect()
}

#[test]
fn environments_fixture_matches_its_golden_tree() {
    let (_tmp, files) = rendered(None);
    common::assert_tree_snapshot(&common::fixture("environments").join("expected"), &files);
}

/// Each environment is planned under its own quota: staging's 3 rules a group take three
/// groups, production's 10 one, and each names its services with its own prefix.
#[test]
fn each_environment_is_planned_under_its_own_settings() {
    let dir = common::fixture("environments");
    let staging = project::built_in(&dir, "staging");
    let production = project::built_in(&dir, "production");
    assert_eq!(staging.prepared.plan.groups.len(), 3);
    assert_eq!(production.prepared.plan.groups.len(), 1);
    assert!(staging.prepared.lock_text().contains("shop-stg-g01"));
    assert!(production.prepared.lock_text().contains("shop-prod-g01"));
    assert!(staging.prepared.apps.iter().any(|a| a.name == "lab"));
    assert!(!production.prepared.apps.iter().any(|a| a.name == "lab"));
}

/// The staging-only app changes nothing of production: its output, lock and kit are the
/// same byte for byte with and without the app's declaration.
#[test]
fn production_is_unchanged_by_the_staging_only_app() {
    let (_a, with) = rendered(None);
    let (_b, without) = rendered(Some("lab"));
    assert_eq!(in_env(&with, "production"), in_env(&without, "production"));
    assert_ne!(in_env(&with, "staging"), in_env(&without, "staging"));
}

/// Rendered, the project has nothing to say in either environment or between them.
#[test]
fn the_rendered_project_checks_clean_in_every_environment() {
    let (tmp, _) = rendered(None);
    let run = common::latgen(tmp.path(), &["check", "--env", "all", "--deny-warnings"]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("== environment production =="));
    assert!(run.stdout.contains("== between environments =="));
}

/// Each environment's Argo CD Applications sync its own folder to its own clusters, and
/// fit Argo CD's CRDs.
#[test]
fn each_environment_has_its_own_deploy_kit() {
    let (tmp, _) = rendered(None);
    for env in ["staging", "production"] {
        let docs = super::deploy::kit_docs_in(&tmp.path().join("deploy").join(env));
        super::deploy::assert_fits_the_crds(&docs);
        let app = &docs["application-lattice.yaml"];
        assert_eq!(app["metadata"]["name"], format!("latgen-{env}-lattice"));
        assert_eq!(
            app["spec"]["source"]["path"],
            format!("generated/{env}/lattice")
        );
        assert_eq!(
            app["spec"]["destination"]["name"],
            format!("{env}-workload")
        );
    }
}

/// `trace` follows one environment's output: the one `--env` names, and none unnamed.
#[test]
fn trace_follows_the_environment_it_is_given() {
    let (tmp, _) = rendered(None);
    let run = common::latgen(
        tmp.path(),
        &[
            "trace",
            "https://www.example.com/shop",
            "--env",
            "production",
        ],
    );
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("group-01"), "{}", run.stdout);
    let unnamed = common::latgen(tmp.path(), &["trace", "https://www.example.com/shop"]);
    assert_eq!(unnamed.code, Some(2));
    assert!(
        unnamed.stderr.contains("error[unknown-environment]"),
        "{}",
        unnamed.stderr
    );
}

/// Through Kong, `trace --env` checks the auth policy as the Kong the environment's
/// settings name: the overlay's `auth.kong`, not latgen.yaml's.
#[test]
fn trace_checks_auth_as_the_kong_of_the_environment() {
    let tmp = common::copy_project(&common::fixture("environments"));
    let overlay = tmp.path().join("environments/staging.yaml");
    let mut text = std::fs::read_to_string(&overlay).unwrap();
    text += "auth:\n  mode: iam\n  account: \"111122223333\"\n  region: ap-northeast-2\n  kong: { vpcs: [vpc-0a1b2c3d] }\n  serviceNetworkPolicy: true\n";
    std::fs::write(&overlay, text).unwrap();
    let render = common::latgen(tmp.path(), &["render", "--env", "staging"]);
    assert_eq!(render.code, Some(0), "{}", render.stderr);
    let run = common::latgen(
        tmp.path(),
        &[
            "trace",
            "https://staging.example.com/shop",
            "--env",
            "staging",
        ],
    );
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    let auth: Vec<&str> = (run.stdout.lines())
        .filter(|l| l.starts_with("auth ") || l.contains("reaches Lattice as Kong"))
        .collect();
    assert_eq!(
        auth,
        [
            "auth      as Kong, an unsigned caller from vpc-0a1b2c3d (GET): allowed by statement 2 (generated/staging/lattice/iamauthpolicy-group-03.yaml)",
            "          a request through Kong reaches Lattice as Kong (auth.kong in environments/staging.yaml over latgen.yaml), not as the client behind it",
        ]
    );
}

/// Promotion never moves an app the target had placed: a new app that staging puts beside
/// it, where production's smaller quota has no room, is placed as any new app, and said.
#[test]
fn promotion_never_displaces_what_the_target_placed() {
    let tmp = common::scratch();
    let dir = tmp.path();
    let files = [
        ("latgen.yaml", "lattice: {dedicatedHosts: privateZone}\n"),
        (
            "environments/staging.yaml",
            "quotas: {rulesPerService: 10}\n",
        ),
        (
            "environments/production.yaml",
            "quotas: {rulesPerService: 3}\n",
        ),
    ];
    for (rel, text) in files {
        std::fs::create_dir_all(dir.join(rel).parent().unwrap()).unwrap();
        std::fs::write(dir.join(rel), text).unwrap();
    }
    common::path_app(dir, "pay", &["/pay", "/pay-api"]);
    let run = common::latgen(dir, &["render", "--env", "all"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    common::path_app(dir, "help", &["/help", "/faq"]);
    let run = common::latgen(dir, &["render", "--env", "staging"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let promote = common::latgen(dir, &["promote", "staging", "production", "--apply"]);
    assert_eq!(promote.code, Some(0), "{}", promote.stderr);
    assert!(
        promote.stdout.contains(
            "help: group-02 (staging has it in group-01; production's quotas leave no room there)"
        ),
        "{}",
        promote.stdout
    );
    let lock = std::fs::read_to_string(dir.join("locks/production.lock")).unwrap();
    assert!(lock.contains("  pay: 1\n"), "{lock}");
    assert!(lock.contains("  help: 2\n"), "{lock}");
    assert!(!lock.contains("moves:"), "{lock}");
}

/// `latgen init` writes every deploy default into latgen.yaml, `project: latgen` included;
/// two overlays that set only their clusters still get kits of their own names
/// (`latgen-staging`, `latgen-production`), so that one Argo CD holds both, and
/// `check --env all` has nothing to say of them.
#[test]
fn environments_after_init_name_their_argocd_objects_apart() {
    let tmp = common::scratch();
    let dir = tmp.path();
    let init = common::latgen(
        dir,
        &[
            "init",
            "--repo-url",
            "https://git.example.com/platform/routes.git",
            "--lattice-cluster",
            "workload",
            "--kong-cluster",
            "gateway",
            "--service-name-prefix",
            "shop",
        ],
    );
    assert_eq!(init.code, Some(0), "{}", init.stderr);
    let config = std::fs::read_to_string(dir.join("latgen.yaml")).unwrap();
    assert!(config.contains("project: latgen"), "{config}");
    std::fs::create_dir_all(dir.join("environments")).unwrap();
    for env in ["staging", "production"] {
        std::fs::write(
            dir.join(format!("environments/{env}.yaml")),
            format!("deploy:\n  latticeCluster: {env}-workload\n  kongCluster: {env}-gateway\nlattice:\n  serviceNamePrefix: shop-{env}\n"),
        )
        .unwrap();
    }
    for command in ["render", "deploy"] {
        let run = common::latgen(dir, &[command, "--env", "all"]);
        assert_eq!(run.code, Some(0), "{command}: {}", run.stderr);
    }
    for env in ["staging", "production"] {
        let docs = super::deploy::kit_docs_in(&dir.join("deploy").join(env));
        assert_eq!(
            docs["appproject.yaml"]["metadata"]["name"],
            format!("latgen-{env}")
        );
        for side in ["lattice", "kong"] {
            let app = &docs[format!("application-{side}.yaml").as_str()];
            assert_eq!(app["metadata"]["name"], format!("latgen-{env}-{side}"));
            assert_eq!(app["spec"]["project"], format!("latgen-{env}"));
        }
    }
    let check = common::latgen(dir, &["check", "--env", "all", "--deny-warnings"]);
    assert!(
        !check.stdout.contains("env-argocd-clash") && !check.stdout.contains("env-object-clash"),
        "{}",
        check.stdout
    );
}

/// The PR comment of `check --env all` is one comment that a workflow finds and updates
/// in place: it starts with the marker the action looks for (`startswith`), holds it once,
/// and has each environment's part under its own heading.
#[test]
fn the_pr_comment_of_every_environment_starts_with_the_marker_once() {
    let (tmp, _) = rendered(None);
    let run = common::latgen(
        tmp.path(),
        &["check", "--env", "all", "--format", "markdown"],
    );
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    let comment = &run.stdout;
    assert!(
        comment.starts_with("<!-- latgen -->\n## latgen\n"),
        "{comment}"
    );
    assert_eq!(comment.matches("<!-- latgen -->").count(), 1, "{comment}");
    assert_eq!(comment.matches("## latgen\n").count(), 1, "{comment}");
    for part in [
        "environment `production`",
        "environment `staging`",
        "between environments",
    ] {
        let heading = format!("## {}{}\n", part[..1].to_uppercase(), &part[1..]);
        assert!(comment.contains(&heading), "{heading}: {comment}");
    }
    let action = std::fs::read_to_string(common::root().join("action/comment.sh")).unwrap();
    assert!(
        action.contains("startswith(\\\"<!-- latgen -->\\\")"),
        "{action}"
    );
}

/// `status --env all` names each environment on stdout, above its lines, where its report
/// is: a reader of stdout alone sees which rollout is whose.
#[test]
fn status_of_every_environment_names_each_on_stdout() {
    let (tmp, _) = rendered(None);
    let run = common::latgen(tmp.path(), &["status", "--env", "all"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let out = &run.stdout;
    let (prod, stag) = (
        out.find("environment production:"),
        out.find("environment staging:"),
    );
    assert!(prod.is_some() && stag.is_some(), "{out}");
    assert!(!run.stderr.contains("environment "), "{}", run.stderr);
}

/// `move --env production` records the move in production's lock and says so, and the
/// next commands it names carry `--env production`: without it they would refuse to run
/// in a project with environments.
#[test]
fn a_move_in_an_environment_names_its_lock_and_its_next_commands() {
    let (tmp, _) = rendered(None);
    let dir = tmp.path();
    let run = common::latgen(
        dir,
        &["move", "cart", "--group", "2", "--env", "production"],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let out = &run.stdout;
    assert!(out.contains("recorded in locks/production.lock"), "{out}");
    assert!(!out.contains("latgen.lock"), "{out}");
    assert!(
        out.contains("`latgen render --env production --base auto`"),
        "{out}"
    );
    assert!(out.contains("`latgen status --env production`"), "{out}");
    let lock = std::fs::read_to_string(dir.join("locks/production.lock")).unwrap();
    assert!(lock.contains("moves:"), "{lock}");
}

/// Environments added to a live project (the example, rendered and committed without
/// environments): `render --env all --adopt-lock production`, after the guide's `git mv`
/// of the output, gives production the live placement (its lock places every app where
/// latgen.lock did), and `check --env production --base` reads the live output from where
/// it was, so the adoption is no change at all: no unsafe step, no route reported new.
#[test]
fn a_live_project_adopted_by_production_keeps_its_placement_and_ships_nothing() {
    let tmp = common::example_repo();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("environments")).unwrap();
    for env in ["staging", "production"] {
        std::fs::write(
            dir.join(format!("environments/{env}.yaml")),
            format!("deploy:\n  latticeCluster: {env}-workload\n  kongCluster: {env}-gateway\n"),
        )
        .unwrap();
    }
    std::fs::create_dir_all(dir.join("generated/production")).unwrap();
    for side in ["lattice", "kong"] {
        let to = format!("generated/production/{side}");
        common::git(dir, &["mv", &format!("generated/{side}"), &to]);
    }
    let live = std::fs::read_to_string(dir.join("latgen.lock")).unwrap();
    let run = common::latgen(
        dir,
        &["render", "--env", "all", "--adopt-lock", "production"],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr.contains("`git rm latgen.lock`"),
        "{}",
        run.stderr
    );
    let adopted = std::fs::read_to_string(dir.join("locks/production.lock")).unwrap();
    let apps = |lock: &str| -> Vec<String> {
        (lock.lines())
            .skip_while(|l| *l != "apps:")
            .skip(1)
            .take_while(|l| l.starts_with("  "))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        apps(&adopted),
        apps(&live),
        "production's placement is the live lock's"
    );
    assert!(adopted.contains("adoptedFrom: generated\n"), "{adopted}");
    let check = |format: &str| {
        let args = [
            "check",
            "--env",
            "production",
            "--base",
            "HEAD",
            "--format",
            format,
        ];
        common::latgen(dir, &args).stdout
    };
    let json = check("json");
    assert!(!json.contains("unsafe-rollout"), "{json}");
    let md = check("markdown");
    assert!(!md.contains("Apps added"), "{md}");
}

/// `--adopt-lock` takes over latgen.lock only for an environment without a lock of its own.
#[test]
fn adopting_the_lock_into_an_environment_that_has_one_is_refused() {
    let tmp = common::example_repo();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("environments")).unwrap();
    std::fs::write(dir.join("environments/production.yaml"), "{}\n").unwrap();
    std::fs::create_dir_all(dir.join("locks")).unwrap();
    std::fs::copy(dir.join("latgen.lock"), dir.join("locks/production.lock")).unwrap();
    let run = common::latgen(
        dir,
        &[
            "render",
            "--env",
            "production",
            "--adopt-lock",
            "production",
        ],
    );
    assert_eq!(run.code, Some(2), "an input error: {}", run.stderr);
    assert!(
        run.stderr.contains("already has its own lock"),
        "{}",
        run.stderr
    );
}

/// A second `move --env production` of an app already moving is refused, and the help
/// names the command that finishes the move in production, `--env` and all.
#[test]
fn a_move_refused_in_an_environment_names_the_render_with_its_env() {
    let (tmp, _) = rendered(None);
    let dir = tmp.path();
    let first = common::latgen(
        dir,
        &["move", "cart", "--group", "2", "--env", "production"],
    );
    assert_eq!(first.code, Some(0), "{}", first.stderr);
    let again = common::latgen(
        dir,
        &["move", "cart", "--group", "3", "--env", "production"],
    );
    assert_eq!(again.code, Some(1), "{}", again.stderr);
    assert!(
        again
            .stderr
            .contains("`latgen render --env production --base auto` writes its next step"),
        "{}",
        again.stderr
    );
}

/// `plan --env production` while a move is in flight there is refused, and says how to
/// finish the move in production (not with `move --continue`, nor without `--env`).
#[test]
fn plan_in_an_environment_with_a_move_in_flight_names_the_render_with_its_env() {
    let (tmp, _) = rendered(None);
    let dir = tmp.path();
    let mv = common::latgen(
        dir,
        &["move", "cart", "--group", "2", "--env", "production"],
    );
    assert_eq!(mv.code, Some(0), "{}", mv.stderr);
    let plan = common::latgen(dir, &["plan", "--env", "production"]);
    assert!(
        plan.stderr
            .contains("finish them first: `latgen render --env production --base auto`"),
        "{}{}",
        plan.stdout,
        plan.stderr
    );
}
