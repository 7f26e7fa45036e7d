//! latgen on an untrusted PR: an input (a declaration, a folder of them, the settings, the
//! lock, a template, a preview) committed as a symbolic link out of the project
//! (to `/proc/self/environ`, to a file outside the project, into `.git`) is refused with
//! `input-outside-project` by `check` in every format and by `render`, and no byte of what
//! it points at is printed; a link that stays inside the project works.
//!
//! Each case builds its project in a scratch folder at test time (Git keeps no link to
//! `/proc`) and runs latgen with a marker in its environment (`LATGEN_TEST_SECRET`); the
//! file outside the project holds the same marker. Neither may appear in any output.
//! Each case is its own test, `untrusted::<input>-to-<target>`; the outputs of a refused
//! case are snapshots in `tests/untrusted/<case>/` (`expected.human`, `expected.json`,
//! `expected.github` of `check`, `render.stderr`), written with `LATGEN_BLESS=1`.
//!
//! What a PR commits where latgen writes (a staging folder's link, a pending file's link,
//! a link on the way to an output, a planted repository) is in `untrusted_writes.rs`: one
//! test per attack and writing command, `untrusted::write::<attack>::<command>`, and
//! `untrusted::planted-repo::<command>`.

#[path = "suite/common/mod.rs"]
mod common;
#[path = "untrusted_writes.rs"]
mod writes;

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;

use libtest_mimic::Trial;
use serde_json::Value;

/// What the link replaces.
#[derive(Clone, Copy)]
enum Input {
    /// A declaration, `apps/leak.yaml`.
    Apps,
    /// A folder of declarations, `apps/team`.
    AppsFolder,
    Config,
    Lock,
    /// A template given with `--templates templates`.
    Template,
    /// A preview, `previews/leak.yaml`.
    Preview,
}

/// Where the link points.
#[derive(Clone, Copy, PartialEq)]
enum Target {
    Environ,
    Outside,
    GitFolder,
    Inside,
}

const CASES: &[(&str, Input, Target)] = &[
    ("apps-to-environ", Input::Apps, Target::Environ),
    ("apps-to-outside", Input::Apps, Target::Outside),
    ("apps-to-git-folder", Input::Apps, Target::GitFolder),
    ("apps-to-inside", Input::Apps, Target::Inside),
    ("apps-folder-to-outside", Input::AppsFolder, Target::Outside),
    ("apps-folder-to-inside", Input::AppsFolder, Target::Inside),
    ("config-to-environ", Input::Config, Target::Environ),
    ("config-to-outside", Input::Config, Target::Outside),
    ("config-to-inside", Input::Config, Target::Inside),
    ("lock-to-environ", Input::Lock, Target::Environ),
    ("lock-to-outside", Input::Lock, Target::Outside),
    ("lock-to-inside", Input::Lock, Target::Inside),
    ("template-to-environ", Input::Template, Target::Environ),
    ("template-to-outside", Input::Template, Target::Outside),
    ("template-to-inside", Input::Template, Target::Inside),
    ("preview-to-environ", Input::Preview, Target::Environ),
    ("preview-to-outside", Input::Preview, Target::Outside),
    ("preview-to-inside", Input::Preview, Target::Inside),
];

const TEMPLATE: &str = "kong/route.yaml.j2";

fn app(name: &str) -> String {
    format!("namespace: web\nservice: {{ name: {name}, port: 8080 }}\npaths: [/{name}]\n")
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A marker no output could hold by chance.
fn marker() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("latgen-secret-{}-{nanos}", std::process::id())
}

/// The link's path in the project, and what an inside target holds.
fn link_and_inside_text(input: Input, project: &Path) -> (&'static str, String) {
    match input {
        Input::Apps => ("apps/leak.yaml", app("leak")),
        Input::AppsFolder => ("apps/team", app("leak")),
        Input::Config => ("latgen.yaml", "quotas:\n  rulesPerService: 10\n".into()),
        Input::Lock => (
            "latgen.lock",
            std::fs::read_to_string(project.join("latgen.lock")).unwrap(),
        ),
        Input::Template => {
            let (_, text) = latgen::render::TEMPLATES
                .iter()
                .find(|(n, _)| *n == TEMPLATE)
                .unwrap();
            ("templates/kong/route.yaml.j2", text.to_string())
        }
        Input::Preview => (
            "previews/leak.yaml",
            "app: shop\nname: pr-1\nservice: shop-pr-1\nexpires: 2099-12-31\n".into(),
        ),
    }
}

/// Writes a rendered project in `tmp/project`, a secret outside it and in its `.git`, then
/// the case's link. Returns the project folder.
fn setup(tmp: &Path, input: Input, target: Target, secret: &str) -> std::path::PathBuf {
    let leak = format!("AWS_SECRET_ACCESS_KEY: {secret}\n");
    write(&tmp.join("outside/credentials"), &leak);
    write(&tmp.join("outside/team/leak.yaml"), &leak);
    let project = tmp.join("project");
    write(&project.join("apps/shop.yaml"), &app("shop"));
    if matches!(input, Input::Preview) {
        write(
            &project.join("latgen.yaml"),
            "previews:\n  host: \"{name}.{app}.preview.example.com\"\n",
        );
    }
    write(
        &project.join(".git/config"),
        &format!("[http]\n\textraheader = AUTHORIZATION: basic {secret}\n"),
    );
    let base = common::latgen(&project, &["render"]);
    assert_eq!(base.code, Some(0), "{}", base.stderr);
    let (link, inside) = link_and_inside_text(input, &project);
    let up = "../".repeat(link.matches('/').count());
    let to = match (target, input) {
        (Target::Environ, _) => "/proc/self/environ".to_string(),
        (Target::Outside, Input::AppsFolder) => format!("../{up}outside/team"),
        (Target::Outside, _) => format!("../{up}outside/credentials"),
        (Target::GitFolder, _) => format!("{up}.git/config"),
        (Target::Inside, Input::AppsFolder) => {
            write(&project.join("shared/team/leak.yaml"), &inside);
            format!("{up}shared/team")
        }
        (Target::Inside, _) => {
            write(&project.join("shared").join(link), &inside);
            format!("{up}shared/{link}")
        }
    };
    let link = project.join(link);
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&link);
    symlink(&to, &link).unwrap();
    project
}

/// Runs latgen in `dir` with the marker in its environment: (exit code, stdout, stderr).
fn run(dir: &Path, args: &[&str], templates: bool, secret: &str) -> (Option<i32>, String, String) {
    let mut cmd = Command::new(common::bin());
    cmd.args(args).args(["--color", "never"]);
    if templates {
        cmd.args(["--templates", "templates"]);
    }
    // The marker is all the environment holds, so `/proc/self/environ` starts with it: a
    // quoted first line would show it.
    let out = cmd
        .env_clear()
        .env("LATGEN_TEST_SECRET", secret)
        .current_dir(dir)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    for (name, text) in [("stdout", &stdout), ("stderr", &stderr)] {
        assert!(
            !text.contains(secret),
            "latgen {args:?} printed the secret on {name}:\n{text}"
        );
    }
    (out.status.code(), stdout, stderr)
}

fn run_case(case: &str, input: Input, target: Target) {
    let tmp = common::scratch();
    let secret = marker();
    let project = setup(tmp.path(), input, target, &secret);
    let templates = matches!(input, Input::Template);
    if target == Target::Inside {
        let (code, _, stderr) = run(&project, &["render"], templates, &secret);
        assert_eq!(
            code,
            Some(0),
            "{case}: a link inside the project works\n{stderr}"
        );
        let (code, stdout, _) = run(&project, &["check"], templates, &secret);
        assert_eq!(
            (code, stdout.as_str()),
            (Some(0), "no findings\n"),
            "{case}"
        );
        return;
    }
    let snapshots = common::root().join("tests/untrusted").join(case);
    for (format, file) in [
        ("human", "expected.human"),
        ("json", "expected.json"),
        ("github", "expected.github"),
        ("sarif", ""),
    ] {
        let (code, stdout, stderr) =
            run(&project, &["check", "--format", format], templates, &secret);
        assert_eq!(
            code,
            Some(1),
            "{case}: check --format {format}\n{stdout}{stderr}"
        );
        assert!(
            stdout.contains("input-outside-project"),
            "{case}, {format}:\n{stdout}"
        );
        if format == "sarif" {
            let log: Value = serde_json::from_str(&stdout).unwrap();
            let results = log["runs"][0]["results"].as_array().unwrap();
            assert_eq!(results.len(), 1, "{case}: {stdout}");
            assert_eq!(results[0]["ruleId"], "input-outside-project");
        } else {
            common::assert_snapshot(&snapshots.join(file), &stdout);
        }
    }
    let before = common::read_tree(&project.join("generated"));
    let (code, _, stderr) = run(&project, &["render"], templates, &secret);
    assert_eq!(code, Some(2), "{case}: render\n{stderr}");
    assert_eq!(
        common::read_tree(&project.join("generated")),
        before,
        "{case}: render wrote"
    );
    common::assert_snapshot(&snapshots.join("render.stderr"), &stderr);
}

/// Every snapshot folder belongs to a refused case.
fn no_stale_snapshots() {
    let refused: Vec<&str> = CASES
        .iter()
        .filter(|(_, _, t)| *t != Target::Inside)
        .map(|(c, _, _)| *c)
        .collect();
    let stale: Vec<String> = common::read_tree(&common::root().join("tests/untrusted"))
        .into_keys()
        .filter(|p| !refused.iter().any(|c| p.starts_with(c)))
        .map(|p| p.display().to_string())
        .collect();
    assert!(stale.is_empty(), "snapshots of no refused case: {stale:?}");
}

/// Runs one test per case, named `untrusted::<case>`.
fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let mut trials: Vec<Trial> = CASES
        .iter()
        .map(|&(case, input, target)| {
            Trial::test(format!("untrusted::{case}"), move || {
                run_case(case, input, target);
                Ok(())
            })
        })
        .collect();
    for &(attack_name, attack) in writes::ATTACKS {
        for command in writes::COMMANDS {
            trials.push(Trial::test(
                format!("untrusted::write::{attack_name}::{}", command.name),
                move || {
                    writes::run_case(command, attack);
                    Ok(())
                },
            ));
        }
    }
    for (name, args) in [
        (
            "check",
            &["check", "--env", "production", "--base", "origin/main"][..],
        ),
        (
            "check-env-all",
            &["check", "--env", "all", "--base", "origin/main"],
        ),
        (
            "render",
            &["render", "--env", "production", "--base", "origin/main"],
        ),
    ] {
        trials.push(Trial::test(
            format!("untrusted::planted-repo::{name}"),
            move || {
                writes::planted_repo(args);
                Ok(())
            },
        ));
    }
    trials.push(Trial::test("untrusted::no-stale-snapshots", || {
        no_stale_snapshots();
        Ok(())
    }));
    libtest_mimic::run(&args, trials).exit();
}
