//! The changes teams make every week, on the example in a throwaway repository, as a new
//! user makes them with the README's commands: an app that grows in a full group, a
//! dispatch switch, a move (and the monitoring on the way), a path another app claims, an
//! app added. Each test is one case of the everyday flow that once got in the way.

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

/// The apps the PrometheusRule of Lattice route `route` counts (the names in its series'
/// selector); None when the route has none.
fn counted(dir: &Path, route: &str) -> Option<Vec<String>> {
    let file = dir.join(format!("generated/kong/prometheusrule-latgen-{route}.yaml"));
    let text = std::fs::read_to_string(file).ok()?;
    let (_, rest) = text.split_once("{app=~\"")?;
    let (names, _) = rest.split_once('"')?;
    Some(names.split('|').map(str::to_string).collect())
}

fn counts(dir: &Path, route: &str, app: &str) -> bool {
    counted(dir, route).is_some_and(|names| names.iter().any(|n| n == app))
}

/// The Kong side's files in the work tree.
fn kong_side(dir: &Path) -> std::collections::BTreeMap<std::path::PathBuf, String> {
    common::read_tree(&dir.join("generated/kong"))
}

/// `latgen move blog --group 9` (blog is in group-02), then step 1 written.
fn move_blog_to_step_1(dir: &Path) -> String {
    let mv = latgen(dir, &["move", "blog", "--group", "9"]);
    assert_eq!(mv.code, Some(0), "{}", mv.stderr);
    assert!(
        counts(dir, "group-02", "blog"),
        "the example has blog in group-02"
    );
    let run = latgen(dir, &["render", "--base", "HEAD"]);
    assert!(run.stderr.contains("step 1 of 3"), "{}", run.stderr);
    run.stderr
}

#[test]
fn step_1_of_a_move_counts_the_app_in_its_old_groups_rules() {
    let tmp = example_repo();
    let dir = tmp.path();
    move_blog_to_step_1(dir);
    // Kong still sends blog to group-02: its budget counts blog, and group-09, which
    // serves no request yet, has no rules.
    assert!(
        counts(dir, "group-02", "blog"),
        "{:?}",
        counted(dir, "group-02")
    );
    assert_eq!(counted(dir, "group-09"), None);
}

#[test]
fn step_2_of_a_move_counts_the_app_in_its_new_groups_rules() {
    let tmp = example_repo();
    let dir = tmp.path();
    move_blog_to_step_1(dir);
    commit(dir, "step 1");
    let before = kong_side(dir);
    let run = latgen(dir, &["render", "--base", "HEAD"]);
    assert!(run.stderr.contains("step 2 of 3"), "{}", run.stderr);
    assert!(
        !counts(dir, "group-02", "blog"),
        "{:?}",
        counted(dir, "group-02")
    );
    assert_eq!(counted(dir, "group-09"), Some(vec!["blog".to_string()]));
    // The rules switch in the step that switches blog's Kong route and bridge.
    let after = kong_side(dir);
    let changed: std::collections::BTreeSet<&str> = (before.keys().chain(after.keys()))
        .filter(|f| before.get(*f) != after.get(*f))
        .filter_map(|f| f.to_str())
        .filter(|f| *f != "kustomization.yaml")
        .collect();
    let expected = [
        "httproute-blog.yaml",
        "prometheusrule-latgen-group-02.yaml",
        "prometheusrule-latgen-group-09.yaml",
        "service-blog-lattice.yaml",
    ];
    assert_eq!(changed, expected.into_iter().collect());
}

#[test]
fn the_lattice_side_steps_of_a_move_edit_no_kong_file() {
    let tmp = example_repo();
    let dir = tmp.path();
    let before = kong_side(dir);
    let said = move_blog_to_step_1(dir);
    assert_eq!(kong_side(dir), before, "step 1 edited the Kong side");
    assert!(!said.contains("Kong side"), "{said}");
    commit(dir, "step 1");
    ship_step(dir, 2);
    let switched = kong_side(dir);
    let run = latgen(dir, &["render", "--base", "HEAD"]);
    assert!(run.stderr.contains("step 3 of 3"), "{}", run.stderr);
    assert_eq!(kong_side(dir), switched, "step 3 edited the Kong side");
    assert!(!run.stderr.contains("Kong side"), "{}", run.stderr);
}

#[test]
fn a_move_rendered_step_by_step_counts_the_app_where_kong_sends_it() {
    let tmp = example_repo();
    let dir = tmp.path();
    let mv = latgen(dir, &["move", "blog", "--group", "9"]);
    assert_eq!(mv.code, Some(0), "{}", mv.stderr);
    // Without --base, render writes the move's first step: the rules added to group-09,
    // Kong still pointing at group-02.
    let run = latgen(dir, &["render"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        counts(dir, "group-02", "blog"),
        "{:?}",
        counted(dir, "group-02")
    );
    assert_eq!(counted(dir, "group-09"), None);
}

/// On the branch of a step `render --base auto` wrote and committed, the default branch
/// does not hold the step yet, but the work tree does: `status --base auto` says it is
/// written and waits for its merge, and names the step after it, rather than asking for
/// step 1 again.
#[test]
fn status_on_the_branch_of_a_written_step_says_it_waits_for_its_merge() {
    let tmp = example_repo();
    let dir = tmp.path();
    git(dir, &["checkout", "-q", "-b", "move-blog"]);
    let mv = latgen(dir, &["move", "blog", "--group", "9"]);
    assert_eq!(mv.code, Some(0), "{}", mv.stderr);
    let step = latgen(dir, &["render", "--base", "auto"]);
    assert_eq!(step.code, Some(0), "{}", step.stderr);
    commit(dir, "step 1");
    let status = latgen(dir, &["status", "--base", "auto"]);
    assert_eq!(status.code, Some(0), "{}", status.stderr);
    assert!(
        status.stdout.contains(
            "rollout: step 1 of 3 is written in generated and latgen.lock, not yet in the default branch; next: merge its PR; once it is live, `latgen render --base auto` writes step 2"
        ),
        "{}",
        status.stdout
    );
    assert!(
        !status.stdout.contains("writes step 1"),
        "{}",
        status.stdout
    );
}

/// `plan --apply` of an imported project records the consolidation in the lock, which
/// the output does not hold until `render --base` writes it: `status` says a change is
/// recorded and not rendered, and how to ship it, rather than "none in flight".
#[test]
fn status_after_plan_apply_of_a_consolidation_says_it_is_not_rendered() {
    let tmp = super::import::imported_before();
    let dir = tmp.path();
    assert_eq!(latgen(dir, &["render"]).code, Some(0));
    let plan = latgen(dir, &["plan", "--apply"]);
    assert_eq!(plan.code, Some(0), "{}", plan.stderr);
    let status = latgen(dir, &["status"]);
    assert_eq!(status.code, Some(0), "{}", status.stderr);
    assert!(
        !status.stdout.contains("none in flight"),
        "{}",
        status.stdout
    );
    assert!(
        status.stdout.contains(
            "rollout: a change the inputs and latgen.lock hold is not rendered yet: generated does not hold it"
        ),
        "{}",
        status.stdout
    );
    assert!(
        status
            .stdout
            .contains("next: `latgen render --base auto` writes the first step"),
        "{}",
        status.stdout
    );
}

/// The moves `plan --apply` records are planned, not rendered: `status` says so of each.
#[test]
fn status_after_plan_apply_says_its_moves_are_not_rendered() {
    let tmp = common::scratch();
    let dir = tmp.path();
    let names = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
        "juliet", "kilo", "lima",
    ];
    for name in names {
        common::path_app(dir, name, &[&format!("/{name}")]);
    }
    assert_eq!(latgen(dir, &["render"]).code, Some(0));
    for name in &names[..3] {
        std::fs::remove_file(dir.join(format!("apps/{name}.yaml"))).unwrap();
    }
    assert_eq!(latgen(dir, &["render"]).code, Some(0));
    let plan = latgen(dir, &["plan", "--apply"]);
    assert_eq!(plan.code, Some(0), "{}", plan.stderr);
    let status = latgen(dir, &["status"]);
    assert!(
        status.stdout.contains(
            "move: kilo from group-02 to group-01, recorded in latgen.lock; step 1 of 3 is not rendered yet"
        ),
        "{}",
        status.stdout
    );
}
