//! `latgen check` on one fixture per finding code (tests/check/<code>[@variant]/): each
//! must report exactly that code, and nothing on the `clean*` fixtures. The human and JSON
//! outputs are snapshots (`expected.human`, `expected.json`; a missing one fails; write
//! them with `LATGEN_BLESS=1 cargo test --test check`, which first renders again the
//! fixtures whose output is `latgen render`'s, listed in `tests/check/rendered.txt`). Each fixture is its own test,
//! `check::<fixture>`. That every code is triggered by some test is checked in
//! tests/suite/codes.rs.
//! A fixture with a `base/` folder runs in a scratch Git repository where `base/` is the
//! committed base and the fixture is the work tree, checked with `--base HEAD`. A fixture
//! with a `leftover/` folder runs in a scratch copy where `leftover/` is the staging folder
//! an interrupted render left beside `generated/` (a committed one would be ignored by Git).
//! A fixture with a `committed/` folder runs in a scratch Git repository where `committed/`
//! is that staging folder, committed with the rest (`git add -f`, as a PR can).
//! A fixture with an `environments/` folder is checked with `--env all`.

#[path = "suite/common/mod.rs"]
mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use libtest_mimic::Trial;
use pretty_assertions::assert_eq;
use serde_json::Value;

fn latgen(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(common::bin())
        .args(args)
        .args(["--color", "never"])
        .current_dir(dir)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
    )
}

fn copy_dir(from: &Path, to: &Path, skip: &str) {
    for (rel, text) in common::read_tree(from) {
        if rel.starts_with(skip)
            || rel.starts_with("expected.human")
            || rel.starts_with("expected.json")
        {
            continue;
        }
        let p = to.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

/// Runs check on a fixture; returns (exit code, human output, JSON output).
fn run_fixture(dir: &Path) -> (i32, String, String) {
    let mut args: Vec<&str> = vec!["check"];
    // A project with environments is checked in all of them, and between them.
    if dir.join("environments").is_dir() {
        args.extend(["--env", "all"]);
    }
    if dir.join("templates").is_dir() {
        args.extend(["--templates", "templates"]);
    }
    // Another project's lock, sharing the service network.
    if dir.join("also.lock").is_file() {
        args.extend(["--also-lock", "also.lock"]);
    }
    let scratch;
    let work: PathBuf = if dir.join("base").is_dir() {
        scratch = common::scratch();
        common::git(scratch.path(), &["init", "-q"]);
        copy_dir(&dir.join("base"), scratch.path(), "\0");
        common::git(scratch.path(), &["add", "-A"]);
        common::git(scratch.path(), &["commit", "-q", "-m", "base"]);
        for entry in std::fs::read_dir(scratch.path()).unwrap() {
            let p = entry.unwrap().path();
            if p.file_name().unwrap() != ".git" {
                if p.is_dir() {
                    std::fs::remove_dir_all(&p).unwrap()
                } else {
                    std::fs::remove_file(&p).unwrap()
                }
            }
        }
        copy_dir(dir, scratch.path(), "base");
        args.extend(["--base", "HEAD"]);
        scratch.path().to_path_buf()
    } else if dir.join("committed").is_dir() {
        scratch = common::scratch();
        copy_dir(dir, scratch.path(), "committed");
        copy_dir(
            &dir.join("committed"),
            &scratch.path().join(".generated.latgen-new"),
            "\0",
        );
        common::git(scratch.path(), &["init", "-q"]);
        common::git(scratch.path(), &["add", "-A", "-f"]);
        common::git(scratch.path(), &["commit", "-q", "-m", "pr"]);
        scratch.path().to_path_buf()
    } else if dir.join("leftover").is_dir() {
        scratch = common::scratch();
        copy_dir(dir, scratch.path(), "leftover");
        copy_dir(
            &dir.join("leftover"),
            &scratch.path().join(".generated.latgen-new"),
            "\0",
        );
        scratch.path().to_path_buf()
    } else {
        dir.to_path_buf()
    };
    let (code, human) = latgen(&work, &args);
    let mut json_args = args.clone();
    json_args.extend(["--format", "json"]);
    let (json_code, json) = latgen(&work, &json_args);
    assert_eq!(
        code, json_code,
        "the exit code does not depend on the format"
    );
    (code, human, json)
}

/// Renders again, in place, the folders of a fixture (itself, its `base/`) that
/// `tests/check/rendered.txt` lists as `latgen render`'s output.
fn render_again(dir: &Path) {
    let check = common::root().join("tests/check");
    let list = std::fs::read_to_string(check.join("rendered.txt")).unwrap();
    let listed: BTreeSet<PathBuf> = (list.lines())
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| check.join(l.trim()))
        .collect();
    for folder in [dir.to_path_buf(), dir.join("base")] {
        if !listed.contains(&folder) {
            continue;
        }
        let mut args = vec!["render", "apps/", "-o", "generated/"];
        if folder.join("environments").is_dir() {
            args.extend(["--env", "all"]);
        }
        if folder.join("templates").is_dir() {
            args.extend(["--templates", "templates"]);
        }
        let run = common::latgen(&folder, &args);
        assert_eq!(run.code, Some(0), "{}: {}", folder.display(), run.stderr);
    }
}

fn codes(json: &str) -> BTreeSet<String> {
    json.lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["code"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

fn fixtures() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(common::root().join("tests/check"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// One fixture: exactly its code (none for `clean*`), the exit code that follows from its
/// findings' severity, and the human and JSON snapshots.
fn check_fixture(dir: &Path) {
    let name = fixture_name(dir);
    if common::bless() {
        render_again(dir);
    }
    let (code, human, json) = run_fixture(dir);
    let want: BTreeSet<String> = if name.starts_with("clean") {
        BTreeSet::new()
    } else {
        BTreeSet::from([name.split('@').next().unwrap().to_string()])
    };
    let got = codes(&json);
    assert!(got == want, "expected {want:?}, got {got:?}\n{human}");
    // A code's findings may be of either severity (`order-dependent-group`: an error where
    // the change creates the pair, a warning where it is committed): each fixture's
    // snapshot pins which; the exit code follows from the findings'.
    let is_error = json
        .lines()
        .any(|l| serde_json::from_str::<Value>(l).unwrap()["severity"] == "error");
    assert_eq!(code, i32::from(is_error), "exit code");
    common::assert_snapshot(&dir.join("expected.human"), &human);
    common::assert_snapshot(&dir.join("expected.json"), &json);
}

fn fixture_name(dir: &Path) -> String {
    dir.file_name().unwrap().to_string_lossy().into_owned()
}

/// Runs one test per fixture, named `check::<fixture>`.
fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let trials: Vec<Trial> = fixtures()
        .into_iter()
        .map(|dir| {
            Trial::test(format!("check::{}", fixture_name(&dir)), move || {
                check_fixture(&dir);
                Ok(())
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit();
}
