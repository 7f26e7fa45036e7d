//! Writing is all or nothing: when a write fails part way, every file already touched is
//! restored and every folder created is removed.

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use latgen::render::{HEADER, Output};
use latgen::write::{self, ChangeKind};
use pretty_assertions::assert_eq;

fn output(files: &[(&str, &str)]) -> Output {
    Output {
        files: files
            .iter()
            .map(|(p, t)| (PathBuf::from(p), format!("{HEADER}{t}\n")))
            .collect(),
    }
}

#[test]
fn a_failed_write_restores_every_file_it_touched() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("generated");
    let lock = tmp.path().join("latgen.lock");
    let first = output(&[
        ("lattice/a.yaml", "a: 1"),
        ("lattice/b.yaml", "b: 1"),
        ("kong/c.yaml", "c: 1"),
    ]);
    let changes = write::changes(&out, &first, &[(lock.clone(), "version: 1\n".into())]).unwrap();
    write::apply(&changes).unwrap();
    let before = common::read_tree(tmp.path());

    // The next run changes a, removes c, adds d in a new folder, and writes z — but by the
    // time it writes z a folder stands there, so that write fails after the others succeeded.
    let second = output(&[
        ("lattice/a.yaml", "a: 2"),
        ("lattice/b.yaml", "b: 1"),
        ("a-new/d.yaml", "d: 1"),
        ("lattice/z.yaml", "z: 1"),
    ]);
    let changes = write::changes(
        &out,
        &second,
        &[(lock.clone(), "version: 1\napps: {}\n".into())],
    )
    .unwrap();
    let kinds: BTreeMap<_, _> = changes
        .iter()
        .map(|c| {
            (
                c.path.strip_prefix(tmp.path()).unwrap().to_path_buf(),
                c.kind.clone(),
            )
        })
        .collect();
    assert_eq!(
        kinds[&PathBuf::from("generated/lattice/a.yaml")],
        ChangeKind::Changed
    );
    assert_eq!(
        kinds[&PathBuf::from("generated/kong/c.yaml")],
        ChangeKind::Removed
    );
    assert_eq!(
        kinds[&PathBuf::from("generated/a-new/d.yaml")],
        ChangeKind::Added
    );

    std::fs::create_dir_all(out.join("lattice/z.yaml")).unwrap();
    let err = write::apply(&changes).unwrap_err();
    assert_eq!(err.code, "io-error");
    std::fs::remove_dir(out.join("lattice/z.yaml")).unwrap();
    assert_eq!(
        common::read_tree(tmp.path()),
        before,
        "the tree is as it was before the failed run"
    );
    assert!(
        !out.join("a-new").exists(),
        "the folder the failed run created is gone"
    );
}

#[test]
fn files_without_the_header_are_never_touched() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("generated");
    std::fs::create_dir_all(out.join("lattice")).unwrap();
    std::fs::write(out.join("lattice/mine.yaml"), "kind: ConfigMap\n").unwrap();
    std::fs::write(out.join("lattice/old.yaml"), format!("{HEADER}old: 1\n")).unwrap();
    let changes = write::changes(&out, &output(&[("lattice/a.yaml", "a: 1")]), &[]).unwrap();
    let touched: Vec<_> = changes
        .iter()
        .map(|c| (c.path.file_name().unwrap().to_owned(), c.kind.clone()))
        .collect();
    assert_eq!(
        touched,
        vec![
            ("a.yaml".into(), ChangeKind::Added),
            ("old.yaml".into(), ChangeKind::Removed)
        ]
    );
    write::apply(&changes).unwrap();
    assert_eq!(
        std::fs::read_to_string(out.join("lattice/mine.yaml")).unwrap(),
        "kind: ConfigMap\n"
    );
    assert!(!out.join("lattice/old.yaml").exists());
}

#[test]
fn the_diff_names_changed_missing_and_extra_files() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("g");
    write::apply(
        &write::changes(
            &out,
            &output(&[("k/a.yaml", "a: 1"), ("k/b.yaml", "b: 1")]),
            &[],
        )
        .unwrap(),
    )
    .unwrap();
    let changes = write::changes(
        &out,
        &output(&[("k/a.yaml", "a: 2"), ("k/c.yaml", "c: 1")]),
        &[],
    )
    .unwrap();
    let diff = write::unified_diff(&changes);
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
