//! latgen on an untrusted PR, writing: what a PR commits where latgen keeps a transaction's
//! state, or on the way to where it writes, steers no write. Each case commits its attack
//! on a branch of a scratch repository, clones it (as CI checks a PR out: links and all),
//! and runs one writing command in the clone, beside a clone of the same PR without the
//! attack:
//!
//! - `staging-link`: the output folder deleted and `.<output>.latgen-new/old` committed as
//!   a link to `.git`; recovery must not rename it into place (the render would then copy
//!   `.git` into the output). The command does what it does on the clean PR.
//! - `pending-link`: the lock's pending file `.<lock>.latgen-tmp` committed as a link to a
//!   file outside the project; nothing is written through it, and the lock stays a file.
//! - `parent-link`: a folder latgen writes in (`locks/`, `generated/`, `deploy/`, `apps/`)
//!   committed as a link out of the project; the command is refused and writes nothing there.
//! - `planted-repo`: a Git repository's files committed under `generated/`, whose
//!   `origin/main` is the PR's own output; `check --base origin/main` and
//!   `render --base origin/main` refuse it rather than judge the change against it.
//!
//! The clone's `.git/config` holds a marker (as a CI token in `extraheader` would be): no
//! file latgen leaves in the clone may hold it.

use std::path::{Path, PathBuf};

use super::common;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Attack {
    Staging,
    Pending,
    Parent,
}

/// A writing command: its name, arguments, the environment it writes (None: a project
/// without environments) and the folder its `parent-link` case links out.
pub(crate) struct Command {
    pub name: &'static str,
    args: &'static [&'static str],
    env: Option<&'static str>,
    parent: &'static str,
}

pub(crate) const COMMANDS: &[Command] = &[
    Command {
        name: "render",
        args: &["render", "--env", "production"],
        env: Some("production"),
        parent: "locks",
    },
    Command {
        name: "render-env-all",
        args: &["render", "--env", "all"],
        env: Some("production"),
        parent: "generated",
    },
    Command {
        name: "move",
        args: &["move", "cart", "--group", "4", "--env", "staging"],
        env: Some("staging"),
        parent: "locks",
    },
    Command {
        name: "plan-apply",
        args: &["plan", "--apply", "--env", "staging"],
        env: Some("staging"),
        parent: "locks",
    },
    Command {
        name: "promote-apply",
        args: &["promote", "staging", "production", "--apply"],
        env: Some("production"),
        parent: "locks",
    },
    Command {
        name: "deploy",
        args: &["deploy", "--env", "production"],
        env: Some("production"),
        parent: "deploy",
    },
    Command {
        name: "import",
        args: &["import", "workload", "gateway", "-o", "apps"],
        env: None,
        parent: "apps",
    },
];

pub(crate) const ATTACKS: &[(&str, Attack)] = &[
    ("staging-link", Attack::Staging),
    ("pending-link", Attack::Pending),
    ("parent-link", Attack::Parent),
];

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The base of a command's project, committed on `main` of `origin`: the environments
/// fixture rendered with its deploy kits, then without two apps (so that `plan --apply`
/// finds a move); or, for `import`, `examples/before/` (a live setup's manifests).
fn base(origin: &Path, import: bool) {
    if import {
        common::write_tree(
            origin,
            &common::read_tree(&common::root().join("examples/before")),
        );
    } else {
        let fixture = common::fixture("environments");
        for folder in ["apps", "environments"] {
            common::write_tree(
                &origin.join(folder),
                &common::read_tree(&fixture.join(folder)),
            );
        }
        std::fs::copy(fixture.join("latgen.yaml"), origin.join("latgen.yaml")).unwrap();
        for command in ["render", "deploy", "-", "render", "deploy"] {
            if command == "-" {
                // Two apps gone from their groups: staging's groups then have room to merge.
                for gone in ["help", "pay"] {
                    std::fs::remove_file(origin.join(format!("apps/{gone}.yaml"))).unwrap();
                }
                continue;
            }
            let run = common::latgen(origin, &[command, "--env", "all"]);
            assert_eq!(run.code, Some(0), "{}", run.stderr);
        }
    }
    common::git(origin, &["init", "-q"]);
    common::git(origin, &["add", "-A"]);
    common::git(origin, &["commit", "-q", "-m", "base"]);
}

/// The PR's own change on branch `branch`: a new app, rendered in staging (so that
/// production has something to render, promote and deploy).
fn change(origin: &Path, branch: &str, import: bool) {
    common::git(origin, &["checkout", "-q", "-B", branch, "main"]);
    if !import {
        write(
            &origin.join("apps/extra.yaml"),
            "namespace: team-extra\nservice: { name: extra, port: 8080 }\npaths: [/extra]\n",
        );
        let run = common::latgen(origin, &["render", "--env", "staging"]);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
    }
}

/// Where the attack goes for `command`: its output folder, staging folder and lock.
fn places(command: &Command) -> (PathBuf, PathBuf, PathBuf) {
    match command.env {
        Some(env) => (
            PathBuf::from(format!("generated/{env}")),
            PathBuf::from(format!("generated/.{env}.latgen-new")),
            PathBuf::from(format!("locks/{env}.lock")),
        ),
        None => (
            PathBuf::from("generated"),
            PathBuf::from(".generated.latgen-new"),
            PathBuf::from("latgen.lock"),
        ),
    }
}

/// Commits `attack` on the PR's branch; `outside` is a folder outside the project. The
/// clean PR (`planted` false) makes the same change but for the planted entry.
fn commit_attack(origin: &Path, command: &Command, attack: Attack, outside: &Path, planted: bool) {
    let (out, staging, lock) = places(command);
    if attack == Attack::Staging {
        let _ = std::fs::remove_dir_all(origin.join(&out));
    }
    match attack {
        _ if !planted => {}
        Attack::Staging => {
            std::fs::create_dir_all(origin.join(&staging)).unwrap();
            let up = "../".repeat(staging.components().count());
            std::os::unix::fs::symlink(format!("{up}.git"), origin.join(&staging).join("old"))
                .unwrap();
        }
        Attack::Pending => {
            let name = format!(
                ".{}.latgen-tmp",
                lock.file_name().unwrap().to_string_lossy()
            );
            let pending = origin.join(lock.with_file_name(name));
            std::fs::create_dir_all(pending.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(outside.join("target"), pending).unwrap();
        }
        Attack::Parent => {
            let folder = origin.join(command.parent);
            let _ = std::fs::remove_dir_all(&folder);
            std::os::unix::fs::symlink(outside, folder).unwrap();
        }
    }
    common::git(origin, &["add", "-A", "-f"]);
    common::git(origin, &["commit", "-q", "--allow-empty", "-m", "pr"]);
}

/// A clone of `branch`, with the marker in its `.git/config`.
fn clone(tmp: &Path, origin: &Path, branch: &str, marker: &str) -> PathBuf {
    let dir = tmp.join(branch);
    common::git(
        tmp,
        &[
            "clone",
            "-q",
            "-b",
            branch,
            &origin.display().to_string(),
            branch,
        ],
    );
    let config = dir.join(".git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "[http]\n\textraheader = AUTHORIZATION: basic {marker}\n"
    ));
    std::fs::write(config, text).unwrap();
    dir
}

/// Every file of the clone but its `.git`, links not followed: (path, text or link target).
fn files(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .flatten()
    {
        let rel = e.path().strip_prefix(dir).unwrap().to_path_buf();
        if rel.starts_with(".git") {
            continue;
        }
        if e.path_is_symlink() {
            out.push((
                rel,
                format!("-> {}", std::fs::read_link(e.path()).unwrap().display()),
            ));
        } else if e.file_type().is_file() {
            let bytes = std::fs::read(e.path()).unwrap();
            out.push((rel, String::from_utf8_lossy(&bytes).into_owned()));
        }
    }
    out
}

fn listing(dir: &Path) -> Vec<(PathBuf, String)> {
    files(dir)
}

/// One case: `attack` committed for `command`, checked on a clone against a clean one.
pub(crate) fn run_case(command: &Command, attack: Attack) {
    let tmp = crate::common::scratch();
    let origin = tmp.path().join("origin");
    let outside = tmp.path().join("outside");
    write(&outside.join("target"), "untouched\n");
    let import = command.env.is_none();
    std::fs::create_dir_all(&origin).unwrap();
    base(&origin, import);
    change(&origin, "clean", import);
    commit_attack(&origin, command, attack, &outside, false);
    change(&origin, "attack", import);
    commit_attack(&origin, command, attack, &outside, true);
    let marker = format!("latgen-secret-{}", std::process::id());
    let clean = clone(tmp.path(), &origin, "clean", &marker);
    let attacked = clone(tmp.path(), &origin, "attack", &marker);
    let outside_before = listing(&outside);
    let want = common::latgen(&clean, command.args);
    let got = common::latgen(&attacked, command.args);
    let case = format!("{} {:?}", command.name, attack);
    for (path, text) in files(&attacked) {
        assert!(
            !text.contains(&marker),
            "{case}: {} holds .git/config's secret",
            path.display()
        );
    }
    assert_eq!(
        listing(&outside),
        outside_before,
        "{case}: wrote outside the project"
    );
    let (out, staging, lock) = places(command);
    if attack == Attack::Parent {
        assert_ne!(got.code, Some(0), "{case}: not refused\n{}", got.stderr);
        return;
    }
    assert_eq!(
        got.code, want.code,
        "{case}\n{}\nclean:\n{}",
        got.stderr, want.stderr
    );
    assert!(
        want.code == Some(0),
        "{case}: the clean PR's run fails\n{}",
        want.stderr
    );
    assert!(
        !attacked.join(&out).is_symlink() && !attacked.join(&staging).exists(),
        "{case}: the staging folder or a link is left in place"
    );
    let lock_of = |dir: &Path| std::fs::read_to_string(dir.join(&lock)).ok();
    assert!(
        !attacked.join(&lock).is_symlink(),
        "{case}: the lock is a link"
    );
    assert_eq!(
        lock_of(&attacked),
        lock_of(&clean),
        "{case}: the lock differs"
    );
    let generated = |dir: &Path| common::read_tree(&dir.join(&out));
    assert_eq!(
        generated(&attacked),
        generated(&clean),
        "{case}: the output differs"
    );
}

/// `planted-repo`: the PR commits a repository's files under `generated/` whose
/// `origin/main` is the PR's own output; `args` (with `--base origin/main`) refuses it.
pub(crate) fn planted_repo(args: &[&str]) {
    let tmp = crate::common::scratch();
    let origin = tmp.path().join("origin");
    std::fs::create_dir_all(&origin).unwrap();
    base(&origin, false);
    change(&origin, "attack", false);
    // The PR's change: an app taken away, and the output rendered without it.
    std::fs::remove_file(origin.join("apps/cart.yaml")).unwrap();
    let run = common::latgen(&origin, &["render", "--env", "all"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // The repository the PR plants: its own output committed as `origin/main`.
    let fake = tmp.path().join("fake");
    common::write_tree(&fake, &common::read_tree(&origin.join("generated")));
    common::git(&fake, &["init", "-q"]);
    common::git(&fake, &["add", "-A"]);
    common::git(&fake, &["commit", "-q", "-m", "fake base"]);
    common::git(&fake, &["update-ref", "refs/remotes/origin/main", "HEAD"]);
    common::git(&fake, &["config", "core.worktree", "."]);
    let git_dir = fake.join(".git");
    for e in walkdir::WalkDir::new(&git_dir).into_iter().flatten() {
        if !e.file_type().is_file() {
            continue;
        }
        let to = origin
            .join("generated")
            .join(e.path().strip_prefix(&git_dir).unwrap());
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(e.path(), to).unwrap();
    }
    common::git(&origin, &["add", "-A", "-f"]);
    common::git(&origin, &["commit", "-q", "-m", "pr"]);
    let clone = clone(tmp.path(), &origin, "attack", "marker");
    let planted = std::process::Command::new("git")
        .args(["rev-parse", "--show-toplevel"])
        .current_dir(clone.join("generated"))
        .output()
        .unwrap();
    let top = String::from_utf8_lossy(&planted.stdout);
    assert!(
        top.trim().ends_with("generated"),
        "git takes generated/ for a repository of its own: {top}"
    );
    let run = common::latgen(&clone, args);
    assert_eq!(run.code, Some(2), "{args:?}\n{}{}", run.stdout, run.stderr);
    let said = format!("{}{}", run.stdout, run.stderr);
    assert!(
        said.contains("git-error") && said.contains("HEAD, objects/, refs/"),
        "{said}"
    );
}
