//! A render killed at any moment leaves the old tree or the new one (never a mix), the next
//! render finishes the job, and two renders at once do not interleave. What a killed render
//! leaves beside the output is ignored by Git and reported by `check`.

use super::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn bin() -> Command {
    Command::new(common::bin())
}

fn project(dir: &Path, n: usize, port: u16) {
    for i in 0..n {
        common::app(
            dir,
            &format!("app{i:04}"),
            &format!(
                "namespace: team{}\nservice: {{ name: app{i:04}, port: {port} }}\npaths: [/p{i:04}, /p{i:04}-api]\n",
                i % 7
            ),
        );
    }
}

/// A rendered project on disk: the output tree and the lock.
type State = (BTreeMap<PathBuf, String>, String);

fn state(dir: &Path) -> State {
    (
        common::read_tree(&dir.join("generated")),
        std::fs::read_to_string(dir.join("latgen.lock")).expect("a rendered project has a lock"),
    )
}

fn render(dir: &Path) {
    let out = bin()
        .args(["render", "--color", "never"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Nothing a render leaves while it runs (staging folder, pending files) is beside the
/// output after a run that finished.
fn assert_nothing_left(dir: &Path) {
    let names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| !n.contains("latgen-")),
        "left behind: {names:?}"
    );
}

/// The old state (rendered at port 8080) and the new one (the same apps at port 9090, so
/// every Lattice rule and thus every group file changes).
fn before_and_after() -> (State, State, tempfile::TempDir) {
    let old = common::scratch();
    project(old.path(), 400, 8080);
    render(old.path());
    let new = common::scratch();
    common::write_tree(
        new.path(),
        &BTreeMap::from([(PathBuf::from("latgen.lock"), state(old.path()).1)]),
    );
    project(new.path(), 400, 9090);
    render(new.path());
    (state(old.path()), state(new.path()), old)
}

#[test]
fn a_killed_render_leaves_the_old_or_the_new_tree() {
    let (old_state, new_state, _old) = before_and_after();
    assert_ne!(old_state.0, new_state.0);
    let mut seen = BTreeMap::new();
    for delay_ms in [0u64, 10, 40, 100, 250, 600] {
        let dir = common::scratch();
        common::write_tree(&dir.path().join("generated"), &old_state.0);
        std::fs::write(dir.path().join("latgen.lock"), &old_state.1).unwrap();
        project(dir.path(), 400, 9090);
        let mut child = bin()
            .args(["render", "--color", "never"])
            .current_dir(dir.path())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        child.kill().expect("the render can be signalled");
        let status = child.wait().unwrap();
        // Killed by the signal, or done before it landed.
        assert!(
            status.success() || status.code().is_none(),
            "killed after {delay_ms} ms: {status}"
        );
        let tree = common::read_tree(&dir.path().join("generated"));
        let which = if tree == old_state.0 {
            "old"
        } else if tree == new_state.0 {
            "new"
        } else {
            panic!("killed after {delay_ms} ms: generated/ is neither the old nor the new tree");
        };
        *seen.entry(which).or_insert(0) += 1;
        // The next run completes the change and leaves nothing beside the output.
        render(dir.path());
        assert_eq!(
            state(dir.path()),
            new_state,
            "after a kill at {delay_ms} ms"
        );
        assert_nothing_left(dir.path());
    }
    assert!(
        seen.contains_key("old"),
        "no kill landed before the swap: {seen:?}"
    );
}

/// The staging folder a killed render leaves: Git ignores it, `check` reports it, and the
/// next render removes it.
#[test]
fn a_render_killed_mid_write_is_reported_by_check_and_cleared_by_the_next() {
    let (old_state, _, _old) = before_and_after();
    for _attempt in 0..20 {
        let dir = common::scratch();
        common::write_tree(&dir.path().join("generated"), &old_state.0);
        std::fs::write(dir.path().join("latgen.lock"), &old_state.1).unwrap();
        project(dir.path(), 400, 9090);
        common::git(dir.path(), &["init", "-q"]);
        let staging = dir.path().join(".generated.latgen-new");
        let mut child = bin()
            .args(["render", "--color", "never"])
            .current_dir(dir.path())
            .spawn()
            .unwrap();
        // Killed as soon as the new tree is being written.
        while !staging.join("tree").exists() && child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_micros(200));
        }
        let _ = child.kill();
        child.wait().unwrap();
        if !staging.exists() {
            continue; // the render was done before the kill landed: again
        }
        let added = Command::new("git")
            .args(["add", "-A"])
            .current_dir(dir.path())
            .status()
            .unwrap();
        assert!(added.success());
        let listed = Command::new("git")
            .args(["ls-files"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let listed = String::from_utf8_lossy(&listed.stdout);
        assert!(!listed.contains("latgen-new"), "git added it:\n{listed}");

        let check = common::latgen(dir.path(), &["check", "--format", "json"]);
        let reported = check.stdout.lines().any(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["code"] == "interrupted-render" && v["file"] == ".generated.latgen-new"
        });
        assert!(
            reported,
            "check does not report the leftover:\n{}",
            check.stdout
        );

        render(dir.path());
        assert!(!staging.exists(), "the next render left the staging folder");
        let check = common::latgen(dir.path(), &["check"]);
        assert_eq!(check.stdout, "no findings\n");
        return;
    }
    panic!("no kill landed while the staging folder was written");
}

#[test]
fn two_renders_at_once_do_not_interleave() {
    let (old_state, new_state, _old) = before_and_after();
    let dir = common::scratch();
    common::write_tree(&dir.path().join("generated"), &old_state.0);
    std::fs::write(dir.path().join("latgen.lock"), &old_state.1).unwrap();
    project(dir.path(), 400, 9090);
    let a = bin()
        .args(["render", "--color", "never"])
        .current_dir(dir.path())
        .spawn()
        .unwrap();
    let b = bin()
        .args(["render", "--color", "never"])
        .current_dir(dir.path())
        .spawn()
        .unwrap();
    for child in [a, b] {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
    }
    assert_eq!(state(dir.path()), new_state);
}

/// The old state (400 apps) and the new one (10 more apps: new files in generated/ and new
/// entries in the lock), rendered in a project of their own; the folder of the old one.
fn before_and_after_with_a_new_lock() -> (State, State, tempfile::TempDir) {
    let dir = common::scratch();
    project(dir.path(), 400, 8080);
    render(dir.path());
    let old = state(dir.path());
    let more = common::scratch();
    common::write_tree(
        more.path(),
        &BTreeMap::from([(PathBuf::from("latgen.lock"), old.1.clone())]),
    );
    project(more.path(), 410, 8080);
    render(more.path());
    let new = state(more.path());
    assert_ne!(old.1, new.1, "the lock changes too");
    (old, new, dir)
}

/// A render run to `point` of its transaction and stopped dead there (a debug build's test
/// hook, as a kill would): the project's state and what `check` reports then.
fn stopped_at(point: &str, old: &State) -> (tempfile::TempDir, State, String) {
    let dir = common::scratch();
    common::write_tree(&dir.path().join("generated"), &old.0);
    std::fs::write(dir.path().join("latgen.lock"), &old.1).unwrap();
    project(dir.path(), 410, 8080);
    let out = bin()
        .args(["render", "--color", "never"])
        .env("LATGEN_TEST_ABORT_AT", point)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "the render was not stopped at {point}"
    );
    let stopped = state(dir.path());
    let check = common::latgen(dir.path(), &["check", "--format", "json"]);
    (dir, stopped, check.stdout)
}

/// Stopped after the new tree was swapped in and before the lock was put in place (the
/// moment an attack run's fault injection found): the state is the new tree with its new
/// lock waiting beside the old one, `check` says so, and the next render finishes it.
#[test]
fn a_render_stopped_after_the_swap_is_finished_by_the_next() {
    let (old, new, _keep) = before_and_after_with_a_new_lock();
    let (dir, stopped, check) = stopped_at("after-swap", &old);
    assert_eq!(stopped.0, new.0, "the tree is the new one");
    assert!(
        check.lines().any(|l| l.contains("interrupted-render")
            && l.contains("before it wrote")
            && l.contains("latgen.lock")),
        "check does not report the half-done render:\n{check}"
    );
    render(dir.path());
    assert_eq!(
        state(dir.path()),
        new,
        "the next render finished the change"
    );
    assert_nothing_left(dir.path());
}

/// Stopped just before the swap, with the new tree built and the new lock written aside:
/// nothing the project shows has changed, and the next render does the change whole.
#[test]
fn a_render_stopped_before_the_swap_changes_nothing() {
    let (old, new, _keep) = before_and_after_with_a_new_lock();
    let (dir, stopped, check) = stopped_at("before-swap", &old);
    assert_eq!(stopped, old, "tree and lock are both the old ones");
    assert!(check.contains("interrupted-render"), "{check}");
    render(dir.path());
    assert_eq!(state(dir.path()), new);
    assert!(!dir.path().join(".latgen.lock.latgen-tmp").exists());
}

/// A pending file of an interrupted atomic write that no render accounts for (the lock's,
/// written by `move`, say) is reported, so that it is not committed by a project whose
/// `.gitignore` predates the ignore line.
#[test]
fn a_leftover_pending_file_is_reported_by_check() {
    let dir = common::scratch();
    project(dir.path(), 3, 8080);
    render(dir.path());
    std::fs::write(dir.path().join(".latgen.lock.latgen-tmp"), "apps: {}\n").unwrap();
    let check = common::latgen(dir.path(), &["check", "--format", "json"]);
    let reported = check.stdout.lines().any(|l| {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        v["code"] == "interrupted-render" && v["file"] == ".latgen.lock.latgen-tmp"
    });
    assert!(reported, "{}", check.stdout);
}

/// A read-only folder in the output (`chmod a-w generated/kong`) does not strand the
/// staging folder: the old tree it holds after the swap is removed all the same, and the
/// renders after it work (each failed at its start before). Permissions do not bind root,
/// so as root the renders run as `nobody` (by `setpriv`) in a project `nobody` owns.
#[cfg(unix)]
#[test]
fn a_read_only_folder_in_the_output_does_not_strand_the_next_renders() {
    use std::os::unix::fs::PermissionsExt;
    let dir = common::scratch();
    // A folder this process made is owned by its user: 0 is root.
    let root = std::os::unix::fs::MetadataExt::uid(&dir.path().metadata().unwrap()) == 0;
    let unprivileged = || {
        let mut cmd = if root {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(common::bin());
            c
        } else {
            bin()
        };
        cmd.args(["render", "--color", "never"])
            .current_dir(dir.path());
        cmd
    };
    let own = || {
        if root {
            for e in walkdir::WalkDir::new(dir.path()).into_iter().flatten() {
                std::os::unix::fs::lchown(e.path(), Some(65534), Some(65534)).unwrap();
            }
        }
    };
    let run = |cmd: &mut Command| {
        let out = cmd.output().expect("setpriv runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    project(dir.path(), 5, 8080);
    own();
    run(&mut unprivileged());
    let kong = dir.path().join("generated/kong");
    std::fs::set_permissions(&kong, std::fs::Permissions::from_mode(0o555)).unwrap();
    project(dir.path(), 6, 8080);
    own();
    run(&mut unprivileged());
    assert!(!dir.path().join(".generated.latgen-new").exists());
    project(dir.path(), 7, 8080);
    own();
    run(&mut unprivileged());
    assert!(
        dir.path()
            .join("generated/kong/httproute-app0006.yaml")
            .exists()
    );
}

/// A link in the staging folder's place (a PR can commit one; Git ignores only a folder of
/// that name) is removed as a link: nothing it points at is read, made writable or removed.
#[cfg(unix)]
#[test]
fn a_link_in_place_of_the_staging_folder_is_removed_not_followed() {
    use std::os::unix::fs::PermissionsExt;
    let dir = common::scratch();
    project(dir.path(), 3, 8080);
    let outside = common::scratch();
    let locked = outside.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::write(locked.join("keep"), "mine").unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o500)).unwrap();
    std::fs::write(
        outside.path().join("journal"),
        "1:2\nremove\t/etc/hostname\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join(".generated.latgen-new")).unwrap();
    render(dir.path());
    assert!(!dir.path().join(".generated.latgen-new").exists());
    let mode = std::fs::metadata(&locked).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o500, "the link's target was made writable");
    assert_eq!(
        std::fs::read_to_string(locked.join("keep")).unwrap(),
        "mine"
    );
    assert!(outside.path().join("journal").exists());
}

/// Killed after the swap, then run again from another folder (`latgen render proj/apps`
/// first, then `cd proj && latgen render`): the journal names its files absolutely, so the
/// second run finds the waiting lock.
#[test]
fn a_render_stopped_after_the_swap_is_finished_from_another_folder() {
    let (old, new, _keep) = before_and_after_with_a_new_lock();
    let parent = common::scratch();
    let proj = parent.path().join("proj");
    common::write_tree(&proj.join("generated"), &old.0);
    std::fs::write(proj.join("latgen.lock"), &old.1).unwrap();
    project(&proj, 410, 8080);
    let out = bin()
        .args(["render", "proj/apps", "--color", "never"])
        .env("LATGEN_TEST_ABORT_AT", "after-swap")
        .current_dir(parent.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    render(&proj);
    assert_eq!(state(&proj), new);
}

/// `import` after a render stopped between the swap and the lock (its new lock waiting
/// beside the old one): the import finishes the render first, so the lock it writes has
/// the render's groups and its own entries, and the next render keeps both.
#[test]
fn an_import_after_a_killed_render_keeps_what_it_placed() {
    let (old, new, _keep) = before_and_after_with_a_new_lock();
    let (dir, _, _) = stopped_at("after-swap", &old);
    let before = common::root().join("examples/before");
    for folder in ["workload", "gateway"] {
        common::write_tree(
            &dir.path().join(folder),
            &common::read_tree(&before.join(folder)),
        );
    }
    let run = common::latgen(dir.path(), &["import", "workload", "gateway", "-o", "apps"]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    let imported = std::fs::read_to_string(dir.path().join("latgen.lock")).unwrap();
    assert!(imported.contains("adopted:"), "{imported}");
    render(dir.path());
    let lock = std::fs::read_to_string(dir.path().join("latgen.lock")).unwrap();
    let adopted = |text: &str| {
        text.lines()
            .skip_while(|l| !l.starts_with("adopted:"))
            .skip(1)
            .take_while(|l| l.starts_with(' '))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert!(!adopted(&imported).is_empty());
    assert_eq!(
        adopted(&lock),
        adopted(&imported),
        "the render lost the import's entries"
    );
    for line in new.1.lines().filter(|l| l.starts_with("  app")) {
        assert!(lock.contains(line), "the killed render's {line} is lost");
    }
}

/// A journal that is not this tool's (the form a PR can commit: `put` of a path anywhere)
/// is never acted on: the file it names and that file's pending name outside the project
/// are left alone, and the staging folder is removed.
#[test]
fn a_forged_journal_is_removed_unread() {
    let dir = common::scratch();
    project(dir.path(), 3, 8080);
    render(dir.path());
    let outside = common::scratch();
    let notes = outside.path().join("notes");
    let pending = outside.path().join(".notes.latgen-tmp");
    std::fs::write(&notes, "mine\n").unwrap();
    std::fs::write(&pending, "also mine\n").unwrap();
    let staging = dir.path().join(".generated.latgen-new");
    std::fs::create_dir(&staging).unwrap();
    for journal in [
        format!("1:2\nput\t{}\n", notes.display()),
        format!(
            "latgen journal 2\nstaging\t0.0:1\ntree\t0.0:2\nput\t0.0:3\t{}\n",
            notes.display()
        ),
    ] {
        std::fs::create_dir_all(&staging).unwrap();
        std::fs::write(staging.join("journal"), journal).unwrap();
        let check = common::latgen(dir.path(), &["check", "--format", "json"]);
        assert!(
            check.stdout.contains("committed-transaction-file"),
            "{}",
            check.stdout
        );
        project(dir.path(), 4, 8080);
        render(dir.path());
        assert!(!staging.exists());
        assert_eq!(std::fs::read_to_string(&notes).unwrap(), "mine\n");
        assert_eq!(std::fs::read_to_string(&pending).unwrap(), "also mine\n");
    }
}
