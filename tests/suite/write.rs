//! Writing is one transaction: the new output tree is swapped in whole, unchanged files keep
//! their inode and mtime, latgen's files no longer wanted go, other files stay, and a
//! failure at the last step (the lock) puts the old tree back.

use super::common;

use std::borrow::Cow;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use latgen::manifest::layout::HEADER_LINES;
use latgen::output::{self, ChangeKind};
use latgen::render::Rendered;
use pretty_assertions::assert_eq;

fn output(files: &[(&str, &str)]) -> Rendered {
    Rendered {
        files: files
            .iter()
            .map(|(p, t)| (PathBuf::from(p), format!("{HEADER_LINES}{t}\n").into()))
            .collect(),
        ..Rendered::default()
    }
}

/// Renders `out` as `render` does, through the output stage in write mode; `lock` is the
/// lock file and its new text.
fn apply(
    out: &Path,
    files: &Rendered,
    lock: Option<(&Path, &str)>,
) -> Result<Vec<(PathBuf, ChangeKind)>, latgen::diag::Diagnostic> {
    let existing = output::read_tree(out)?;
    let lock = lock.map(|(path, text)| output::OutsideFile {
        path,
        text: text.to_string(),
    });
    let changes = output::sync(
        out.parent().unwrap(),
        out,
        &existing,
        Cow::Borrowed(files),
        lock,
        |_| true,
    )?;
    Ok(changes.into_iter().map(|c| (c.path, c.kind)).collect())
}

fn inode(p: &Path) -> (u64, i64) {
    let m = std::fs::metadata(p).unwrap();
    (m.ino(), m.mtime_nsec())
}

#[test]
fn changed_added_and_removed_files_swap_in_together_and_others_keep_their_inode() {
    let tmp = common::scratch();
    let out = tmp.path().join("generated");
    apply(
        &out,
        &output(&[
            ("lattice/a.yaml", "a: 1"),
            ("lattice/b.yaml", "b: 1"),
            ("kong/c.yaml", "c: 1"),
        ]),
        None,
    )
    .unwrap();
    std::fs::write(out.join("lattice/mine.yaml"), "kind: ConfigMap\n").unwrap();
    let (b_before, mine_before) = (
        inode(&out.join("lattice/b.yaml")),
        inode(&out.join("lattice/mine.yaml")),
    );

    let changes = apply(
        &out,
        &output(&[
            ("lattice/a.yaml", "a: 2"),
            ("lattice/b.yaml", "b: 1"),
            ("kong/d.yaml", "d: 1"),
        ]),
        None,
    )
    .unwrap();
    let rel: Vec<(String, ChangeKind)> = changes
        .into_iter()
        .map(|(p, k)| (p.strip_prefix(&out).unwrap().display().to_string(), k))
        .collect();
    assert_eq!(
        rel,
        vec![
            ("kong/c.yaml".to_string(), ChangeKind::Removed),
            ("kong/d.yaml".to_string(), ChangeKind::Added),
            ("lattice/a.yaml".to_string(), ChangeKind::Changed),
        ]
    );
    let tree = common::read_tree(&out);
    assert_eq!(
        tree.keys()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>(),
        [
            "kong/d.yaml",
            "lattice/a.yaml",
            "lattice/b.yaml",
            "lattice/mine.yaml"
        ]
    );
    assert_eq!(
        tree[Path::new("lattice/mine.yaml")],
        "kind: ConfigMap\n",
        "a file latgen did not write is kept"
    );
    assert_eq!(
        inode(&out.join("lattice/b.yaml")),
        b_before,
        "an unchanged file is the same file"
    );
    assert_eq!(inode(&out.join("lattice/mine.yaml")), mine_before);
    let parent: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        parent,
        vec![std::ffi::OsString::from("generated")],
        "nothing is left beside the output"
    );
}

#[test]
fn a_failure_writing_the_lock_puts_the_old_tree_back() {
    let tmp = common::scratch();
    let out = tmp.path().join("generated");
    let lock = tmp.path().join("latgen.lock");
    apply(
        &out,
        &output(&[("lattice/a.yaml", "a: 1")]),
        Some((&lock, "version: 1\n")),
    )
    .unwrap();
    let before = common::read_tree(tmp.path());
    // The lock cannot be replaced: a folder stands in its place.
    std::fs::remove_file(&lock).unwrap();
    std::fs::create_dir(&lock).unwrap();
    std::fs::write(lock.join("keep"), "x").unwrap();
    let err = apply(
        &out,
        &output(&[("lattice/a.yaml", "a: 2"), ("kong/b.yaml", "b: 1")]),
        Some((&lock, "version: 1\napps: {}\n")),
    )
    .unwrap_err();
    assert_eq!(err.code, "io-error");
    std::fs::remove_dir_all(&lock).unwrap();
    std::fs::write(&lock, "version: 1\n").unwrap();
    assert_eq!(
        common::read_tree(tmp.path()),
        before,
        "the tree is as it was before the failed run"
    );
    let parent: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(parent, ["generated", "latgen.lock"]);
}

#[test]
fn what_a_killed_run_left_beside_the_output_is_cleared() {
    let tmp = common::scratch();
    let out = tmp.path().join("generated");
    apply(&out, &output(&[("lattice/a.yaml", "a: 1")]), None).unwrap();
    // A half-built tree, as a run killed while building leaves it.
    std::fs::create_dir_all(tmp.path().join(".generated.latgen-new/lattice")).unwrap();
    std::fs::write(
        tmp.path().join(".generated.latgen-new/lattice/a.yaml"),
        "half",
    )
    .unwrap();
    apply(&out, &output(&[("lattice/a.yaml", "a: 2")]), None).unwrap();
    assert_eq!(
        common::read_tree(&out)[Path::new("lattice/a.yaml")],
        format!("{HEADER_LINES}a: 2\n")
    );
    assert!(!tmp.path().join(".generated.latgen-new").exists());
    // An old tree moved aside with the output folder missing (a run killed between the two
    // renames of a swap without an atomic exchange) is restored by its journal: the unit
    // test `an_old_tree_moved_aside_is_put_back_by_its_journal` in `output/transaction.rs`.
    // Without a journal of this tool's, a folder `old` is no old tree: it goes.
    let staging = tmp.path().join(".generated.latgen-new");
    std::fs::create_dir(&staging).unwrap();
    std::fs::rename(&out, staging.join("old")).unwrap();
    let existing = output::read_tree(&out).unwrap();
    output::apply(tmp.path(), &out, &existing, &[]).unwrap();
    assert!(!staging.exists() && !out.exists());
}

#[test]
fn the_diff_names_changed_missing_and_extra_files() {
    let tmp = common::scratch();
    let out = tmp.path().join("g");
    apply(
        &out,
        &output(&[("k/a.yaml", "a: 1"), ("k/b.yaml", "b: 1")]),
        None,
    )
    .unwrap();
    let existing = output::read_tree(&out).unwrap();
    let changes = output::change_set(
        tmp.path(),
        &out,
        &existing,
        Cow::Owned(output(&[("k/a.yaml", "a: 2"), ("k/c.yaml", "c: 1")])),
        None,
        |_| true,
    )
    .unwrap();
    assert_eq!(
        output::read_tree(&out).unwrap(),
        existing,
        "check mode writes nothing"
    );
    let diff = output::unified_diff(&changes);
    let a = out.join("k/a.yaml").display().to_string();
    let b = out.join("k/b.yaml").display().to_string();
    let c = out.join("k/c.yaml").display().to_string();
    assert!(diff.contains(&format!("--- a/{a}\n+++ b/{a}\n")), "{diff}");
    assert!(diff.contains("-a: 1\n+a: 2\n"), "{diff}");
    assert!(
        diff.contains(&format!("--- a/{b}\n+++ /dev/null\n")),
        "{diff}"
    );
    assert!(
        diff.contains(&format!("--- /dev/null\n+++ b/{c}\n")),
        "{diff}"
    );
}

/// The temporary file of an atomic write (`.<name>.<pid>.latgen-tmp`, the form `move`,
/// `plan --apply`, `import` and `promote` write the lock through) committed as a link to a
/// file outside the project: the link is unlinked, never written through, and the lock
/// becomes a file of its own.
#[cfg(unix)]
#[test]
fn a_link_at_an_atomic_write_s_temporary_name_is_not_written_through() {
    let tmp = common::scratch();
    let root = tmp.path().join("project");
    std::fs::create_dir_all(&root).unwrap();
    let secret = tmp.path().join("secret");
    std::fs::write(&secret, "untouched\n").unwrap();
    let lock = root.join("latgen.lock");
    let temporary = root.join(format!(".latgen.lock.{}.latgen-tmp", std::process::id()));
    std::os::unix::fs::symlink(&secret, &temporary).unwrap();
    crate::output::write_atomic(&root, &lock, b"version: 1\n").unwrap();
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "untouched\n");
    assert!(!lock.is_symlink());
    assert_eq!(std::fs::read_to_string(&lock).unwrap(), "version: 1\n");
    assert!(temporary.symlink_metadata().is_err());
}

/// A link on the way to the lock's folder (`locks -> /outside`) is refused: nothing is
/// written outside the project.
#[cfg(unix)]
#[test]
fn a_link_on_the_way_to_a_written_file_is_refused() {
    let tmp = common::scratch();
    let root = tmp.path().join("project");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("locks")).unwrap();
    let err =
        crate::output::write_atomic(&root, &root.join("locks/staging.lock"), b"x\n").unwrap_err();
    assert_eq!(err.code, "invalid-output");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
}
