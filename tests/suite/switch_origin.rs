//! A switch of dispatch mode's later steps find the lock the switch started from in the
//! lock's history, and take the old mode's files of their base from a render of it rather
//! than parsing them. The steps are the same whether or not the history holds that lock
//! (a squashed or shallow one does not).

use super::common;
use super::rollout::{commit, outgrow_faq, set_dispatch};

use std::path::Path;

use common::{example_repo, latgen, read_tree};
use latgen::input::ProjectPaths;
use latgen::input::config::Dispatch;

/// The example with its first step to header dispatch committed.
fn after_step_1_of_a_switch() -> tempfile::TempDir {
    let tmp = example_repo();
    let dir = tmp.path();
    set_dispatch(dir, "header");
    commit_step_1(dir);
    tmp
}

/// Writes the first step of the change in the work tree, and commits it.
fn commit_step_1(dir: &Path) {
    let step = latgen(dir, &["render", "--base", "HEAD"]);
    assert!(step.stderr.contains("step 1 of "), "{}", step.stderr);
    commit(dir, "step 1");
}

/// The project at `dir` as its working tree holds it, committed alone in a new repository.
fn squashed(dir: &Path) -> tempfile::TempDir {
    let tmp = common::copy_project(dir);
    for sub in ["generated", "deploy"] {
        common::write_tree(&tmp.path().join(sub), &read_tree(&dir.join(sub)));
    }
    common::git(tmp.path(), &["init", "-q"]);
    commit(tmp.path(), "squashed");
    tmp
}

#[test]
fn a_switchs_second_step_finds_the_lock_the_switch_started_from() {
    let before = std::fs::read_to_string(common::root().join("latgen.lock")).unwrap();
    let tmp = after_step_1_of_a_switch();
    let paths = ProjectPaths::at_root(tmp.path());
    let (rollout, origin) = latgen::rollout::steps::shipped_from(&paths.lock, "HEAD");
    assert!(rollout.is_some(), "step 1 records the rollout");
    let origin = origin.expect("the lock before the switch is found");
    assert_eq!(origin.dispatch, Dispatch::Path);
    let mut diags = latgen::diag::Diagnostics::new();
    let lock = latgen::input::lock::parse(&paths.lock, &before, &mut diags).unwrap();
    assert_eq!(origin.apps, lock.apps);
}

/// The old mode's files of the second step's base (the Kong side and the old groups) are
/// made again, byte for byte, by a render of the lock found: none of them is parsed.
#[test]
fn a_switchs_second_step_renders_the_old_modes_files_of_its_base_again() {
    let tmp = after_step_1_of_a_switch();
    let paths = ProjectPaths::at_root(tmp.path());
    let origin = latgen::rollout::steps::shipped_from(&paths.lock, "HEAD")
        .1
        .unwrap();
    let templates = latgen::render::Templates::load(None).unwrap();
    let built = latgen::pipeline::build_final(&paths, &templates, None).unwrap();
    let base = latgen::output::read_tree(&paths.output).unwrap();
    let (again, _) =
        latgen::pipeline::render_as_locked(&built.prepared, &origin, &templates, Some(&base))
            .unwrap();
    let target = &built.output.files;
    let parsed: Vec<_> = (base.iter())
        .filter(|(rel, _)| !rel.ends_with("kustomization.yaml"))
        .filter(|(rel, text)| target.get(*rel) != Some(text) && again.get(*rel) != Some(text))
        .map(|(rel, _)| rel.display().to_string())
        .collect();
    let from_origin = (base.iter()).filter(|(rel, text)| again.get(*rel) == Some(text));
    assert!(from_origin.count() > 40);
    assert_eq!(parsed, Vec::<String>::new());
}

/// A history without the lock the switch started from: the step is written as it is with
/// it, byte for byte, with the same report, and the check of it says the same.
#[test]
fn a_switchs_second_step_is_the_same_from_a_squashed_history() {
    let tmp = after_step_1_of_a_switch();
    let (full, cut) = (tmp.path(), squashed(tmp.path()));
    let cut = cut.path();
    let lock = ProjectPaths::at_root(cut).lock;
    assert!(
        latgen::rollout::steps::shipped_from(&lock, "HEAD")
            .1
            .is_none()
    );
    let runs: Vec<_> = [full, cut]
        .iter()
        .map(|dir| {
            let step = latgen(dir, &["render", "--base", "HEAD"]);
            assert_eq!(step.code, Some(0), "{}", step.stderr);
            let check = latgen(dir, &["check", "--base", "HEAD", "--format", "json"]);
            let tree = read_tree(&dir.join("generated"));
            let lock = std::fs::read_to_string(dir.join("latgen.lock")).unwrap();
            (
                step.stdout,
                step.stderr,
                check.code,
                check.stdout,
                tree,
                lock,
            )
        })
        .collect();
    assert!(runs[0].1.contains("step 2 of "), "{}", runs[0].1);
    pretty_assertions::assert_eq!(runs[0], runs[1]);
}

/// A move's rollout looks back only to where it started: a switch abandoned before it (its
/// first step reverted) is not taken for its start.
#[test]
fn a_moves_second_step_after_an_abandoned_switch_has_no_lock_to_start_from() {
    let tmp = after_step_1_of_a_switch();
    let dir = tmp.path();
    common::git(dir, &["revert", "--no-edit", "HEAD"]);
    outgrow_faq(dir);
    commit_step_1(dir);
    let lock = ProjectPaths::at_root(dir).lock;
    let (rollout, origin) = latgen::rollout::steps::shipped_from(&lock, "HEAD");
    assert!(rollout.is_some() && origin.is_none());
}

/// A version of the lock over the size a lock may have ends the search unread, as the
/// working tree's would be refused.
#[test]
fn a_lock_version_over_the_size_limit_ends_the_search() {
    use std::ops::ControlFlow;
    let tmp = after_step_1_of_a_switch();
    let lock = ProjectPaths::at_root(tmp.path()).lock;
    let size = |text: String| ControlFlow::Break(Some(text.len() as u64));
    let find =
        |max_bytes| latgen::rollout::git::search_versions(&lock, "HEAD", (64, max_bytes), size);
    let before = find(u64::MAX).expect("the lock has a version before HEAD's");
    assert_eq!(find(before), Some(before));
    assert_eq!(find(before - 1), None);
}
