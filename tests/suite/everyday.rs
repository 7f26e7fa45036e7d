//! The changes teams make every week, on the example in a throwaway repository, as a new
//! user makes them with the README's commands: an app that grows in a full group, a
//! dispatch switch, a move, a path another app claims, an app added. Each test is one case
//! of the everyday flow that once got in the way.

use super::common;

use std::path::Path;

use common::{example_repo, git, latgen};

/// faq is in group-03, which holds 10 of 10 rules: a second path does not fit.
fn grow_faq(dir: &Path) {
    let file = dir.join("apps/support/faq.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    let grown = text.replace("paths: [/help/faq]", "paths: [/help/faq, /questions]");
    assert_ne!(text, grown, "the example's faq has one path");
    std::fs::write(file, grown).unwrap();
}

/// Switches the example to header dispatch (a change `render --base` ships in 3 steps).
fn set_header_dispatch(dir: &Path) {
    let yaml = dir.join("latgen.yaml");
    let text = std::fs::read_to_string(&yaml).unwrap();
    let switched = text.replace("lattice:\n", "lattice:\n  dispatch: header\n");
    assert_ne!(text, switched);
    std::fs::write(&yaml, switched).unwrap();
}

fn lock(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("latgen.lock")).unwrap()
}

fn commit(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
}

/// `render --base HEAD`, then the step committed.
fn ship_step(dir: &Path, n: usize) {
    let run = latgen(dir, &["render", "--base", "HEAD"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    commit(dir, &format!("step {n}"));
}

fn markdown(dir: &Path, base: &str) -> String {
    let run = latgen(dir, &["check", "--base", base, "--format", "markdown"]);
    assert_eq!(run.code, Some(0), "{}", run.stdout);
    run.stdout
}

#[test]
fn an_app_that_grows_in_a_full_group_is_the_one_that_moves() {
    let tmp = example_repo();
    let dir = tmp.path();
    grow_faq(dir);
    let run = latgen(dir, &["render"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    common::assert_snapshot(
        &common::root().join("tests/everyday/outgrown.stderr"),
        &run.stderr,
    );
    let lock = lock(dir);
    assert!(lock.contains("  faq: 5\n"), "{lock}");
    assert!(lock.contains("  legal-pages: 3\n"), "{lock}");
}

#[test]
fn plan_and_move_go_on_when_an_app_outgrows_its_group() {
    let tmp = example_repo();
    let dir = tmp.path();
    grow_faq(dir);
    let plan = latgen(dir, &["plan"]);
    assert_eq!(plan.code, Some(0), "{}", plan.stderr);
    let mv = latgen(dir, &["move", "faq", "--group", "9"]);
    assert_eq!(mv.code, Some(0), "{}", mv.stderr);
    assert!(lock(dir).contains("  faq: 9\n"), "{}", lock(dir));
    let render = latgen(dir, &["render"]);
    assert_eq!(render.code, Some(0), "{}", render.stderr);
    assert!(lock(dir).contains("  faq: 9\n"), "{}", lock(dir));
}

#[test]
fn a_moving_app_that_grows_does_not_block_its_own_move() {
    let tmp = example_repo();
    let dir = tmp.path();
    let mv = latgen(dir, &["move", "faq", "--group", "9"]);
    assert_eq!(mv.code, Some(0), "{}", mv.stderr);
    grow_faq(dir);
    let render = latgen(dir, &["render"]);
    assert_eq!(render.code, Some(0), "{}", render.stderr);
    let lock = lock(dir);
    assert!(
        lock.contains("  faq: 9\n") && !lock.contains("moves:"),
        "{lock}"
    );
}

#[test]
fn step_1_of_a_dispatch_switch_has_no_findings_and_says_what_is_transient() {
    let tmp = example_repo();
    let dir = tmp.path();
    set_header_dispatch(dir);
    let run = latgen(dir, &["render", "--base", "HEAD"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let check = latgen(dir, &["check", "--base", "HEAD", "--deny-warnings"]);
    assert_eq!(check.code, Some(0), "{}", check.stdout);
    let md = markdown(dir, "HEAD");
    assert!(md.contains("No findings."), "{md}");
    assert!(
        md.contains("Expected at this step, and not reported as findings: 79 `unreachable-rule`"),
        "{md}"
    );
}

#[test]
fn the_summary_says_what_each_step_of_a_path_change_does() {
    let tmp = example_repo();
    let dir = tmp.path();
    grow_faq(dir);
    ship_step(dir, 1);
    let md = markdown(dir, "HEAD~1");
    assert!(
        md.contains("`faq` in `group-05`: `/help/faq`, `/questions`"),
        "{md}"
    );
    ship_step(dir, 2);
    let md = markdown(dir, "HEAD~1");
    assert!(md.contains("`faq`: `group-03` → `group-05`"), "{md}");
    assert!(md.contains("`faq` adds `/questions`"), "{md}");
    ship_step(dir, 3);
    let md = markdown(dir, "HEAD~1");
    assert!(md.contains("`faq` from `group-03`: `/help/faq`"), "{md}");
    assert!(!md.contains("No app"), "{md}");
}

#[test]
fn the_next_command_after_a_step_names_the_merged_base_not_the_same_step() {
    let tmp = example_repo();
    let dir = tmp.path();
    let mv = latgen(dir, &["move", "blog", "--group", "9"]);
    assert_eq!(mv.code, Some(0), "{}", mv.stderr);
    ship_step(dir, 1);
    let md = markdown(dir, "HEAD~1");
    assert!(
        md.contains("`latgen render --base auto` writes step 2"),
        "{md}"
    );
    assert!(!md.contains("--base HEAD~1"), "{md}");
}

#[test]
fn move_and_status_give_the_render_base_flow() {
    let tmp = example_repo();
    let dir = tmp.path();
    let mv = latgen(dir, &["move", "blog", "--group", "9"]);
    assert_eq!(mv.code, Some(0), "{}", mv.stderr);
    assert!(
        mv.stdout.contains("`latgen render --base auto`"),
        "{}",
        mv.stdout
    );
    assert!(!mv.stdout.contains("--continue"), "{}", mv.stdout);
    let status = latgen(dir, &["status"]);
    assert_eq!(status.code, Some(0), "{}", status.stderr);
    assert!(
        status.stdout.contains("`latgen render --base auto`"),
        "{}",
        status.stdout
    );
    assert!(!status.stdout.contains("--continue"), "{}", status.stdout);
}

#[test]
fn status_without_base_sees_the_rollout_in_flight() {
    let tmp = example_repo();
    let dir = tmp.path();
    set_header_dispatch(dir);
    let run = latgen(dir, &["render", "--base", "HEAD"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let status = latgen(dir, &["status"]);
    assert_eq!(status.code, Some(0), "{}", status.stderr);
    assert!(
        // The last of 4: the old groups of the apps called straight, once released.
        status.stdout.contains("rollout: step 1 of 4"),
        "{}",
        status.stdout
    );
    assert!(
        !status.stdout.contains("none in flight"),
        "{}",
        status.stdout
    );
    // A move recorded mid-rollout leaves the output, so the lock's step, as it was.
    let mv = latgen(dir, &["move", "blog", "--group", "16"]);
    assert_eq!(mv.code, Some(0), "{}", mv.stderr);
    assert!(
        lock(dir).contains("rollout: { step: 1, of: 4 }"),
        "{}",
        lock(dir)
    );
}

#[test]
fn a_path_another_app_claims_is_reported_on_the_file_the_change_touched() {
    let tmp = example_repo();
    let dir = tmp.path();
    let blog = dir.join("apps/content/blog.yaml");
    let text = std::fs::read_to_string(&blog).unwrap();
    std::fs::write(
        &blog,
        text.replace("paths: [/blog]", "paths: [/blog, /shop/cart]"),
    )
    .unwrap();
    let run = latgen(dir, &["check", "--base", "HEAD", "--format", "github"]);
    let conflict = run
        .stdout
        .lines()
        .find(|l| l.contains("path-conflict"))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(
        conflict.starts_with("::error file=apps/content/blog.yaml,"),
        "{conflict}"
    );
}

#[test]
fn adding_an_app_to_the_example_warns_of_nothing() {
    let tmp = example_repo();
    let dir = tmp.path();
    common::app(
        dir,
        "content/newsroom",
        "namespace: team-content\nservice: { name: newsroom, port: 8080 }\npaths: [/newsroom]\n",
    );
    let run = latgen(dir, &["render"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(!run.stderr.contains("warning["), "{}", run.stderr);
    let check = latgen(dir, &["check", "--base", "HEAD"]);
    assert!(!check.stdout.contains("warning["), "{}", check.stdout);
}
