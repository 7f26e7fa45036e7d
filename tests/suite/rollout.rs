//! Shipping a change as safe PRs: `render --base` writes the next safe step, `check --base`
//! accepts it, every intermediate state routes every declared request as before or as
//! after (whichever side Argo CD syncs first), and the last step is a plain render. Each
//! case runs in a throwaway Git repository.

use super::common;
use super::project;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::{example_repo, git, latgen, path_app};
use latgen_sim::routing::{Network, Outcome};

/// A project of five path-routed apps in one group, rendered and committed.
fn five_apps() -> tempfile::TempDir {
    let tmp = common::scratch();
    let dir = tmp.path();
    for (name, path) in [
        ("alpha", "/alpha"),
        ("bravo", "/bravo"),
        ("charlie", "/charlie"),
        ("delta", "/delta"),
        ("echo", "/echo"),
    ] {
        path_app(dir, name, &[path]);
    }
    git(dir, &["init", "-q"]);
    let run = latgen(dir, &["render"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    commit(dir, "base");
    tmp
}

/// Ships the change in the work tree with `render --base HEAD`, one committed step at a
/// time, each saying which step it is and accepted by `check --base HEAD~1` (with `check`'s
/// extra `args`); returns the number of steps.
fn ship_each_step(dir: &Path, args: &[&str]) -> usize {
    ship_and_look(dir, args, |_| {})
}

/// [`ship_each_step`], with `look` called on each step's number once it is committed and
/// accepted.
fn ship_and_look(dir: &Path, args: &[&str], look: impl FnMut(usize)) -> usize {
    ship_in(dir, None, args, look)
}

/// [`ship_and_look`] in one environment (`--env`) of a project with environments.
fn ship_in(dir: &Path, env: Option<&str>, args: &[&str], look: impl FnMut(usize)) -> usize {
    ship_releasing(dir, (env, &[]), args, look)
}

/// [`ship_in`], each step rendered with `--release-old-address` for the apps of `release`
/// (apps with callers of their own whose old addresses the change takes away): the step
/// that takes them is accepted by `check` with a `direct-callers-moved` warning for the
/// reviewer, and no other finding.
pub(super) fn ship_releasing(
    dir: &Path,
    (env, release): (Option<&str>, &[&str]),
    args: &[&str],
    mut look: impl FnMut(usize),
) -> usize {
    let env_args: Vec<&str> = env.map_or(Vec::new(), |e| vec!["--env", e]);
    let mut steps = 0;
    loop {
        let mut render = vec!["render", "--base", "HEAD"];
        render.extend(&env_args);
        for app in release {
            render.extend(["--release-old-address", app]);
        }
        let run = latgen(dir, &render);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        if run.stderr.starts_with("nothing to roll out") {
            return steps;
        }
        steps += 1;
        assert!(
            run.stderr.contains(&format!("step {steps} of ")),
            "{}",
            run.stderr
        );
        commit(dir, &format!("step {steps}"));
        let mut check = vec!["check", "--base", "HEAD~1"];
        check.extend(&env_args);
        check.extend(args);
        let check = latgen(dir, &check);
        let found: Vec<&str> = (check.stdout.lines())
            .filter(|l| l.starts_with("warning[") || l.starts_with("error["))
            .collect();
        let released = !release.is_empty()
            && !found.is_empty()
            && (found.iter()).all(|l| l.starts_with("warning[direct-callers-moved]"));
        assert!(
            check.code == Some(0) || released,
            "step {steps}: {}",
            check.stdout
        );
        look(steps);
        assert!(steps < 6, "the rollout does not end");
    }
}

pub(super) fn commit(dir: &Path, message: &str) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
}

/// The change of the issue: two apps added, one removed, one app's paths changed and one
/// moved to a new group.
fn change(dir: &Path) {
    path_app(dir, "foxtrot", &["/foxtrot"]);
    path_app(dir, "golf", &["/golf", "/golf-api"]);
    std::fs::remove_file(dir.join("apps/bravo.yaml")).unwrap();
    path_app(dir, "charlie", &["/charlie-v2"]);
    let run = latgen(dir, &["move", "delta", "--group", "2"]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
}

/// The output folder's manifests at a revision.
pub(super) fn tree_at(dir: &Path, rev: &str) -> BTreeMap<PathBuf, String> {
    tree_in(dir, rev, "generated")
}

/// The manifests of one output folder (`generated/production`) at a revision.
fn tree_in(dir: &Path, rev: &str, folder: &str) -> BTreeMap<PathBuf, String> {
    let out = std::process::Command::new("git")
        .args(["ls-tree", "-r", "--name-only", rev, folder])
        .current_dir(dir)
        .output()
        .unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|p| !p.ends_with("kustomization.yaml"))
        .map(|p| {
            let show = std::process::Command::new("git")
                .args(["show", &format!("{rev}:{p}")])
                .current_dir(dir)
                .output()
                .unwrap();
            let rel = Path::new(p).strip_prefix(folder).unwrap().to_path_buf();
            (rel, String::from_utf8(show.stdout).unwrap())
        })
        .collect()
}

/// The network with the Lattice side of one tree and the Kong side of another.
fn network(lattice: &BTreeMap<PathBuf, String>, kong: &BTreeMap<PathBuf, String>) -> Network {
    let files: Vec<(PathBuf, &str, bool)> = kong
        .iter()
        .filter(|(p, _)| p.starts_with("kong"))
        .map(|(p, t)| (p.clone(), t.as_str(), true))
        .chain(
            lattice
                .iter()
                .filter(|(p, _)| p.starts_with("lattice"))
                .map(|(p, t)| (p.clone(), t.as_str(), false)),
        )
        .collect();
    let (net, errors) = Network::from_files_par(&files);
    assert!(errors.is_empty(), "{errors:?}");
    net
}

/// Where a request lands: a backend, Kong's 404, or broken on the way.
fn landing(o: &Outcome) -> String {
    match o {
        Outcome::Backend { backend, .. } => backend.to_string(),
        Outcome::NoKongRoute => "kong 404".into(),
        other => format!("broken: {other}"),
    }
}

/// Every declared path of the apps before and after, and a request just past each.
fn requests() -> BTreeSet<String> {
    [
        "alpha",
        "bravo",
        "charlie",
        "charlie-v2",
        "delta",
        "echo",
        "foxtrot",
        "golf",
        "golf-api",
    ]
    .iter()
    .flat_map(|p| [format!("/{p}"), format!("/{p}/x"), format!("/{p}x")])
    .collect()
}

/// Each side live first, and both: every request goes where it went before or after.
fn assert_routes_well(
    step: usize,
    base: &BTreeMap<PathBuf, String>,
    state: &BTreeMap<PathBuf, String>,
    last: &BTreeMap<PathBuf, String>,
) {
    let (before, after) = (network(base, base), network(last, last));
    for (when, net) in [
        ("Lattice first", network(state, base)),
        ("Kong first", network(base, state)),
        ("both live", network(state, state)),
    ] {
        for path in requests() {
            let (b, a) = (before.route("any", &path), after.route("any", &path));
            let now = landing(&net.route("any", &path));
            assert!(
                now == landing(&b) || now == landing(&a),
                "step {step}, {when}: {path} lands at {now}, not {} (before) or {} (after)",
                landing(&b),
                landing(&a)
            );
        }
    }
}

#[test]
fn a_change_ships_in_the_fewest_safe_steps_and_ends_as_a_plain_render() {
    let tmp = five_apps();
    let dir = tmp.path();
    change(dir);
    let steps = ship_each_step(dir, &[]);
    assert_eq!(steps, 3, "a change with a move takes three steps");
    let plain = latgen(dir, &["render", "--check"]);
    assert_eq!(plain.code, Some(0), "{}{}", plain.stdout, plain.stderr);
    // Each step goes live after the one before it: the states Argo CD can be in are
    // between two consecutive steps, each side first.
    let last = tree_at(dir, "HEAD");
    for k in 1..=3 {
        let prev = tree_at(dir, &format!("HEAD~{}", 4 - k));
        let state = tree_at(dir, &format!("HEAD~{}", 3 - k));
        assert_routes_well(k, &prev, &state, &last);
    }
    let lock = std::fs::read_to_string(dir.join("latgen.lock")).unwrap();
    assert!(
        !lock.contains("moves:") && !lock.contains("rollout:"),
        "{lock}"
    );
}

/// [`five_apps`] with auth on: Kong calls from its VPC, and alpha and charlie name callers
/// of their own.
pub(super) fn five_apps_with_auth() -> tempfile::TempDir {
    let tmp = common::scratch();
    let dir = tmp.path();
    std::fs::write(
        dir.join("latgen.yaml"),
        "auth:\n  mode: iam\n  account: \"111122223333\"\n  region: ap-northeast-2\n  kong: { vpcs: [vpc-0a1b2c3d4e5f67890] }\n  serviceNetworkPolicy: true\n",
    )
    .unwrap();
    for (name, path) in [
        ("alpha", "/alpha"),
        ("bravo", "/bravo"),
        ("charlie", "/charlie"),
        ("delta", "/delta"),
        ("echo", "/echo"),
    ] {
        path_app(dir, name, &[path]);
    }
    for (app, caller) in [
        (
            "alpha",
            "principals: [\"arn:aws:iam::111122223333:role/reports\"], methods: [GET]",
        ),
        ("charlie", "vpcs: [vpc-0f1e2d3c4b5a69788]"),
        ("delta", "orgs: [o-a1b2c3d4e5]"),
    ] {
        let file = dir.join(format!("apps/{app}.yaml"));
        let text = std::fs::read_to_string(&file).unwrap();
        std::fs::write(file, format!("{text}callers: [{{ {caller} }}]\n")).unwrap();
    }
    git(dir, &["init", "-q"]);
    let run = latgen(dir, &["render"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    commit(dir, "base");
    tmp
}

/// The change of [`rollout`] with auth on (charlie's paths change and it loses its caller,
/// bravo and its policy statements go, delta moves with its caller): each step passes
/// `check --base`, and in every state between two steps each caller is let in or kept out
/// as the declarations before or after the change say, on every request of every route.
#[test]
fn a_change_with_auth_lets_every_caller_in_as_before_or_after_in_every_state() {
    let tmp = five_apps_with_auth();
    let dir = tmp.path();
    let before = project::built(dir).prepared.apps;
    change(dir);
    // delta is called straight by its own caller: its old address goes when released.
    let steps = ship_releasing(dir, (None, &["delta"]), &["--deny-warnings"], |_| {});
    assert_eq!(steps, 3, "a change with a move takes three steps");
    let built = project::built(dir);
    let (after, config) = (&built.prepared.apps, &built.prepared.config);
    for k in 1..=steps {
        let prev = tree_at(dir, &format!("HEAD~{}", steps + 1 - k));
        let state = tree_at(dir, &format!("HEAD~{}", steps - k));
        for (when, net) in [
            ("Lattice first", network(&state, &prev)),
            ("Kong first", network(&prev, &state)),
            ("both live", network(&state, &state)),
        ] {
            let asked = project::auth::holes_between(&[&before, after], config, &net);
            match asked {
                Ok(n) => assert!(n > 0, "step {k}, {when}: nothing asked"),
                Err(e) => panic!("step {k}, {when}: {e}"),
            }
        }
    }
}

/// The auth policy of group-01 in the work tree.
fn group_01_policy(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("generated/lattice/iamauthpolicy-group-01.yaml")).unwrap()
}

/// `latgen move delta --group 2` in [`five_apps_with_auth`], then step 1 written.
fn move_delta_to_step_1(dir: &Path) {
    let mv = latgen(dir, &["move", "delta", "--group", "2"]);
    assert_eq!(mv.code, Some(0), "{}", mv.stderr);
    let run = latgen(dir, &["render", "--base", "HEAD"]);
    assert!(run.stderr.contains("step 1 of 3"), "{}", run.stderr);
}

#[test]
fn step_1_of_a_move_leaves_the_old_groups_auth_policy_byte_for_byte() {
    let tmp = five_apps_with_auth();
    let dir = tmp.path();
    let before = group_01_policy(dir);
    move_delta_to_step_1(dir);
    // delta's rules and so its statements stay in group-01 until Kong has switched: the
    // statements are the same, and so are the bytes.
    assert_eq!(group_01_policy(dir), before);
}

#[test]
fn a_callers_change_in_a_move_step_changes_only_that_callers_line_of_the_policy() {
    let tmp = five_apps_with_auth();
    let dir = tmp.path();
    let before = group_01_policy(dir);
    let alpha = dir.join("apps/alpha.yaml");
    let text = std::fs::read_to_string(&alpha).unwrap();
    let more = text.replace(
        "methods: [GET] }]",
        "methods: [GET] }, { vpcs: [vpc-0aaaabbbbccccdddd] }]",
    );
    assert_ne!(text, more);
    std::fs::write(&alpha, more).unwrap();
    move_delta_to_step_1(dir);
    let after = group_01_policy(dir);
    let added: Vec<&str> = (after.lines())
        .filter(|l| !before.lines().any(|b| b == *l))
        .collect();
    assert_eq!(added.len(), 1, "{after}");
    assert!(added[0].contains("vpc-0aaaabbbbccccdddd"), "{}", added[0]);
    let kept: Vec<&str> = after.lines().filter(|l| !added.contains(l)).collect();
    assert_eq!(kept, before.lines().collect::<Vec<_>>(), "{after}");
}

#[test]
fn an_addition_alone_takes_two_steps_lattice_first() {
    let tmp = five_apps();
    let dir = tmp.path();
    path_app(dir, "foxtrot", &["/foxtrot"]);
    let run = latgen(dir, &["render", "--base", "HEAD"]);
    assert!(run.stderr.contains("step 1 of 2"), "{}", run.stderr);
    assert!(
        !dir.join("generated/kong/httproute-foxtrot.yaml").exists(),
        "Kong does not route to the app before its Lattice rules are live"
    );
    commit(dir, "step 1");
    let run = latgen(dir, &["render", "--base", "HEAD"]);
    assert!(run.stderr.contains("step 2 of 2"), "{}", run.stderr);
    assert!(dir.join("generated/kong/httproute-foxtrot.yaml").exists());
}

/// `check --base HEAD --format markdown` after `render --base HEAD`, snapshotted.
fn markdown_after(dir: &Path, case: &str) {
    let run = latgen(dir, &["render", "--base", "HEAD"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let md = latgen(dir, &["check", "--base", "HEAD", "--format", "markdown"]);
    assert_eq!(md.code, Some(0), "{}", md.stdout);
    common::assert_snapshot(
        &common::root().join(format!("tests/rollout/{case}.expected.md")),
        &md.stdout,
    );
}

#[test]
fn the_pr_comment_of_an_addition() {
    let tmp = five_apps();
    path_app(tmp.path(), "foxtrot", &["/foxtrot"]);
    markdown_after(tmp.path(), "add");
}

#[test]
fn the_pr_comment_of_a_removal() {
    let tmp = five_apps();
    std::fs::remove_file(tmp.path().join("apps/bravo.yaml")).unwrap();
    markdown_after(tmp.path(), "removal");
}

#[test]
fn the_pr_comment_of_a_move() {
    let tmp = five_apps();
    let dir = tmp.path();
    assert_eq!(
        latgen(dir, &["move", "delta", "--group", "2"]).code,
        Some(0)
    );
    markdown_after(dir, "move");
    commit(dir, "step 1");
    markdown_after(dir, "move-step-2");
}

#[test]
fn the_unsafe_rollout_advice_works_as_written_after_a_full_render() {
    let tmp = five_apps();
    let dir = tmp.path();
    path_app(dir, "foxtrot", &["/foxtrot"]);
    assert_eq!(latgen(dir, &["render"]).code, Some(0));
    let check = latgen(dir, &["check", "--base", "HEAD"]);
    assert_eq!(check.code, Some(1));
    assert!(
        check.stdout.contains("`latgen render --base HEAD`"),
        "{}",
        check.stdout
    );
    assert_eq!(latgen(dir, &["render", "--base", "HEAD"]).code, Some(0));
    let again = latgen(dir, &["check", "--base", "HEAD"]);
    assert_eq!(again.code, Some(0), "{}", again.stdout);
}

#[test]
fn the_hooks_judge_against_the_merge_base_and_keep_a_staged_half() {
    let hooks = std::fs::read_to_string(common::root().join(".pre-commit-hooks.yaml")).unwrap();
    assert!(
        hooks.contains("entry: hooks/run-latgen check --base auto"),
        "{hooks}"
    );
    assert!(
        hooks.contains("entry: hooks/run-latgen render --base auto"),
        "{hooks}"
    );
    let tmp = five_apps();
    let dir = tmp.path();
    path_app(dir, "foxtrot", &["/foxtrot"]);
    // What the hooks run, one after the other, before the commit of the first half.
    assert_eq!(latgen(dir, &["render", "--base", "auto"]).code, Some(0));
    let staged = common::read_tree(&dir.join("generated"));
    assert_eq!(latgen(dir, &["render", "--base", "auto"]).code, Some(0));
    assert_eq!(
        common::read_tree(&dir.join("generated")),
        staged,
        "the hook undid the half"
    );
    let check = latgen(dir, &["check", "--base", "auto"]);
    assert_eq!(check.code, Some(0), "{}", check.stdout);
}

#[test]
fn a_move_does_not_advance_past_a_step_that_is_not_rendered_or_shipped() {
    let tmp = five_apps();
    let dir = tmp.path();
    assert_eq!(
        latgen(dir, &["move", "delta", "--group", "2"]).code,
        Some(0)
    );
    let skipped = latgen(dir, &["move", "delta", "--continue"]);
    assert_eq!(skipped.code, Some(1));
    assert!(
        skipped
            .stderr
            .contains("step 1 of the move of delta is not what"),
        "{}",
        skipped.stderr
    );
    assert_eq!(latgen(dir, &["render"]).code, Some(0));
    let unshipped = latgen(dir, &["move", "delta", "--continue", "--base", "HEAD"]);
    assert_eq!(unshipped.code, Some(1));
    assert!(
        unshipped.stderr.contains("not shipped"),
        "{}",
        unshipped.stderr
    );
    commit(dir, "step 1");
    let next = latgen(dir, &["move", "delta", "--continue", "--base", "HEAD"]);
    assert_eq!(next.code, Some(0), "{}", next.stderr);
}

#[test]
fn status_lists_the_moves_and_the_steps_left() {
    let tmp = five_apps();
    let dir = tmp.path();
    assert_eq!(
        latgen(dir, &["move", "delta", "--group", "2"]).code,
        Some(0)
    );
    path_app(dir, "foxtrot", &["/foxtrot"]);
    assert_eq!(latgen(dir, &["render", "--base", "HEAD"]).code, Some(0));
    commit(dir, "step 1");
    let status = latgen(dir, &["status", "--base", "HEAD"]);
    assert_eq!(status.code, Some(0), "{}", status.stderr);
    assert!(
        status
            .stdout
            .contains("move: delta from group-01 to group-02"),
        "{}",
        status.stdout
    );
    assert!(
        status
            .stdout
            .contains("rollout: 1 of 3 steps shipped in HEAD"),
        "{}",
        status.stdout
    );
}

/// Sets `lattice.dispatch` in the example's latgen.yaml.
pub(super) fn set_dispatch(dir: &Path, mode: &str) {
    let yaml = dir.join("latgen.yaml");
    let text = std::fs::read_to_string(&yaml).unwrap();
    let text = text.replace("lattice:\n  dispatch: header\n", "lattice:\n");
    let text = match mode {
        "header" => text.replace("lattice:\n", "lattice:\n  dispatch: header\n"),
        _ => text,
    };
    std::fs::write(yaml, text).unwrap();
}

/// The example's apps that declare callers of their own.
const CALLED_STRAIGHT: [&str; 3] = ["audit-log", "orders", "payments"];

/// Ships the change in the work tree with `render --base HEAD`, one committed step at a
/// time, each accepted by `check --base … --deny-warnings` (a step `render --base` writes
/// has no finding, transient ones included, but the warning of the step that takes the
/// old addresses of `release`) and its PR comment snapshotted as
/// `tests/rollout/<case>-step-<n>.expected.md`; returns the number of steps.
fn ship(dir: &Path, case: &str, release: &[&str]) -> usize {
    ship_releasing(dir, (None, release), &["--deny-warnings"], |steps| {
        let md = latgen(dir, &["check", "--base", "HEAD~1", "--format", "markdown"]);
        common::assert_snapshot(
            &common::root().join(format!("tests/rollout/{case}-step-{steps}.expected.md")),
            &md.stdout,
        );
    })
}

/// Every state Argo CD can be in between two consecutive steps (each side live first, and
/// both) routes every probe of the example to the app Gateway API semantics name, and no
/// Lattice route of any step is over the rules quota.
fn assert_states_route_and_fit(dir: &Path, steps: usize) {
    assert_states_route_as_before_or_after(dir, steps, None);
}

/// [`assert_states_route_and_fit`] for a change of the apps' paths: a state may route as
/// the apps `before` the change say instead (a new path is Kong's 404 until Kong has it).
pub(super) fn assert_states_route_as_before_or_after(
    dir: &Path,
    steps: usize,
    before: Option<&[latgen::input::app::App]>,
) {
    assert_states_in(dir, None, steps, before);
}

/// [`assert_states_route_as_before_or_after`] in one environment of a project with
/// environments: its settings, its output folder.
fn assert_states_in(
    dir: &Path,
    env: Option<&str>,
    steps: usize,
    before: Option<&[latgen::input::app::App]>,
) {
    let (built, folder) = match env {
        Some(e) => (project::built_in(dir, e), format!("generated/{e}")),
        None => (project::built(dir), "generated".to_string()),
    };
    let (apps, config) = (&built.prepared.apps, &built.prepared.config);
    let quota = config.quotas.rules_per_service as usize;
    let trees: Vec<_> = (0..=steps)
        .map(|k| tree_in(dir, &format!("HEAD~{}", steps - k), &folder))
        .collect();
    for tree in &trees {
        for route in network(tree, tree).lattice {
            assert!(
                route.rules.len() <= quota,
                "{} has {} rules",
                route.name,
                route.rules.len()
            );
        }
    }
    for (k, pair) in trees.windows(2).enumerate() {
        let (prev, state) = (&pair[0], &pair[1]);
        for (when, net) in [
            ("Lattice first", network(state, prev)),
            ("Kong first", network(prev, state)),
            ("both live", network(state, state)),
        ] {
            if config.auth.is_on() {
                // Each request let in as the declarations before the change say, or after.
                let versions: Vec<&[latgen::input::app::App]> =
                    [Some(&apps[..]), before].into_iter().flatten().collect();
                if let Err(e) = project::auth::holes_between(&versions, config, &net) {
                    panic!("step {}, {when}: {e}", k + 1);
                }
            }
            let client = [latgen_sim::routing::Headers::new()];
            let as_before = before
                .is_some_and(|b| project::oracle::misroutes(b, config, &net, &client).is_ok());
            if let Err(e) = project::oracle::misroutes(apps, config, &net, &client)
                && !as_before
            {
                panic!("step {}, {when}: {e}", k + 1);
            }
        }
    }
}

/// Switching the example's dispatch mode on a live deployment, path → header → path: each
/// switch ships as safe steps (header groups added beside the path groups, Kong moved onto
/// them, the old groups dropped, but those of the apps called straight at Lattice, which go
/// once released; and back), every state routes every request to its own app within the
/// quota, and each switch ends as a plain render in the new mode.
#[test]
fn the_example_switches_dispatch_mode_and_back_in_safe_steps() {
    let tmp = example_repo();
    let dir = tmp.path();
    for (mode, services) in [("header", 8), ("path", 14)] {
        set_dispatch(dir, mode);
        let steps = ship(dir, &format!("to-{mode}"), &CALLED_STRAIGHT);
        assert_eq!(
            steps, 4,
            "switching to {mode}: Lattice, Kong, Lattice, the released old addresses"
        );
        assert_states_route_and_fit(dir, steps);
        let plain = latgen(dir, &["render", "--check"]);
        assert_eq!(plain.code, Some(0), "{}{}", plain.stdout, plain.stderr);
        let built = project::built(dir);
        assert_eq!(built.prepared.plan.service_count(), services, "{mode}");
        let lock = std::fs::read_to_string(dir.join("latgen.lock")).unwrap();
        assert!(!lock.contains("rollout:"), "{lock}");
        assert_eq!(
            lock.contains("dispatch: header"),
            mode == "header",
            "{lock}"
        );
    }
}

/// The example's faq gains a path in group-03, which holds 10 of 10 rules: it moves.
pub(super) fn outgrow_faq(dir: &Path) {
    let faq = dir.join("apps/support/faq.yaml");
    let text = std::fs::read_to_string(&faq).unwrap();
    std::fs::write(&faq, text.replace("[/help/faq]", "[/help/faq, /questions]")).unwrap();
}

/// An app that grows in a full group (the example's faq gains a path in group-03, which
/// holds 10 of 10 rules) moves to the lowest-numbered group with room, shipped in safe
/// steps with no edit of the lock: every state routes every request within the quota, and
/// the rollout ends as a plain render.
#[test]
fn the_example_ships_an_app_that_outgrew_its_full_group_in_safe_steps() {
    let tmp = example_repo();
    let dir = tmp.path();
    outgrow_faq(dir);
    let steps = ship(dir, "outgrown", &[]);
    assert_eq!(steps, 3, "Lattice (new group), Kong, Lattice (old group)");
    let mut before = project::built(dir).prepared.apps;
    let faq = before.iter_mut().find(|a| a.name == "faq").unwrap();
    faq.paths.truncate(1);
    assert_states_route_as_before_or_after(dir, steps, Some(&before));
    let plain = latgen(dir, &["render", "--check"]);
    assert_eq!(plain.code, Some(0), "{}{}", plain.stdout, plain.stderr);
    let lock = std::fs::read_to_string(dir.join("latgen.lock")).unwrap();
    assert!(
        lock.contains("  faq: 5\n") && !lock.contains("rollout:"),
        "{lock}"
    );
}

/// [`five_apps`] with previews on `{name}.{app}.preview.example.com`, committed.
fn five_apps_with_previews() -> tempfile::TempDir {
    let tmp = five_apps();
    let dir = tmp.path();
    std::fs::write(
        dir.join("latgen.yaml"),
        "previews:\n  host: \"{name}.{app}.preview.example.com\"\n",
    )
    .unwrap();
    assert_eq!(latgen(dir, &["render"]).code, Some(0));
    commit(dir, "previews on");
    tmp
}

fn add_preview(dir: &Path) {
    std::fs::create_dir_all(dir.join("previews")).unwrap();
    std::fs::write(
        dir.join("previews/alpha-pr-1.yaml"),
        "app: alpha\nname: pr-1\nservice: alpha-pr-1\nexpires: 2099-12-31\n",
    )
    .unwrap();
}

/// Each state between two consecutive commits (each side live first): the preview's host
/// lands where it did before or after, and every production request where it always did.
fn assert_preview_states(dir: &Path, steps: usize) {
    let host = "pr-1.alpha.preview.example.com";
    let first = tree_at(dir, &format!("HEAD~{steps}"));
    let last = tree_at(dir, "HEAD");
    let (before, after) = (network(&first, &first), network(&last, &last));
    for k in 1..=steps {
        let prev = tree_at(dir, &format!("HEAD~{}", steps + 1 - k));
        let state = tree_at(dir, &format!("HEAD~{}", steps - k));
        for net in [network(&state, &prev), network(&prev, &state)] {
            for path in requests() {
                let now = landing(&net.route("any", &path));
                assert_eq!(
                    now,
                    landing(&before.route("any", &path)),
                    "step {k}: {path}"
                );
                let now = landing(&net.route(host, &path));
                let (b, a) = (before.route(host, &path), after.route(host, &path));
                assert!(
                    now == landing(&b) || now == landing(&a),
                    "step {k}: {host}{path} lands at {now}"
                );
            }
        }
    }
}

/// Ships a change of preview `alpha/pr-1` in two steps whose middle state has its preview
/// group and not its Kong route (added: the group goes first; removed: the route goes
/// first), each state routing as before or after.
fn ship_preview_change(dir: &Path) {
    let run = latgen(dir, &["render", "--base", "HEAD"]);
    assert!(run.stderr.contains("step 1 of 2"), "{}", run.stderr);
    let group = dir.join("generated/lattice/httproute-preview-01.yaml");
    let route = dir.join("generated/kong/httproute-preview-pr-1-alpha.yaml");
    assert!(group.exists() && !route.exists());
    git(dir, &["checkout", "-q", "--", "generated", "latgen.lock"]);
    assert_eq!(ship_each_step(dir, &[]), 2);
    assert_preview_states(dir, 2);
}

/// A preview ships like an app: its preview group first (Lattice side), then its Kong
/// route; its removal the other way round. No production file changes at any step.
#[test]
fn a_preview_is_added_lattice_first_and_removed_kong_first() {
    let tmp = five_apps_with_previews();
    let dir = tmp.path();
    let production = tree_at(dir, "HEAD");
    add_preview(dir);
    ship_preview_change(dir);
    let reached = network(&tree_at(dir, "HEAD"), &tree_at(dir, "HEAD"))
        .route("pr-1.alpha.preview.example.com", "/alpha/x");
    assert_eq!(landing(&reached), "team/alpha-pr-1:8080");
    std::fs::remove_file(dir.join("previews/alpha-pr-1.yaml")).unwrap();
    ship_preview_change(dir);
    assert_eq!(
        tree_at(dir, "HEAD"),
        production,
        "back to the production tree"
    );
}

#[test]
fn the_pr_comment_of_a_preview() {
    let tmp = five_apps_with_previews();
    let dir = tmp.path();
    add_preview(dir);
    markdown_after(dir, "preview-add");
    commit(dir, "step 1");
    markdown_after(dir, "preview-add-step-2");
    commit(dir, "step 2");
    std::fs::remove_file(dir.join("previews/alpha-pr-1.yaml")).unwrap();
    markdown_after(dir, "preview-remove");
    // None of the five apps declares peakRps: a budget table of empty bars says nothing.
    for case in ["preview-add", "preview-add-step-2", "preview-remove"] {
        let md = std::fs::read_to_string(
            common::root().join(format!("tests/rollout/{case}.expected.md")),
        )
        .unwrap();
        assert!(!md.contains("Throughput budget"), "{case}: {md}");
    }
}

/// A canary app moves like any other, in three safe steps; `check` says at each step that
/// the Rollout must list both routes while the move is in flight.
#[test]
fn a_canary_app_moves_in_safe_steps() {
    let tmp = five_apps();
    let dir = tmp.path();
    common::app(
        dir,
        "delta",
        "namespace: team\nservice: { name: delta, port: 8080 }\npaths: [/delta]\ncanary: { service: delta-canary, readinessGate: none }\n",
    );
    assert_eq!(latgen(dir, &["render"]).code, Some(0));
    commit(dir, "canary");
    let base = tree_at(dir, "HEAD");
    let run = latgen(dir, &["move", "delta", "--group", "2"]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    let mut warned = 0;
    let steps = ship_and_look(dir, &[], |_| {
        let check = latgen(dir, &["check", "--format", "json"]);
        warned += usize::from(check.stdout.contains("canary-in-move"));
    });
    assert_eq!(steps, 3);
    assert_eq!(warned, 2, "the two steps with the move in flight");
    let last = tree_at(dir, "HEAD");
    for k in 1..=3 {
        let prev = tree_at(dir, &format!("HEAD~{}", 4 - k));
        let state = tree_at(dir, &format!("HEAD~{}", 3 - k));
        assert_routes_well(k, &prev, &state, &last);
        // Every Lattice rule for /delta keeps both backends.
        for (path, text) in state.iter().filter(|(p, _)| p.starts_with("lattice")) {
            if text.contains("value: /delta") {
                assert!(text.contains("name: delta-canary"), "{}", path.display());
            }
        }
    }
    assert_ne!(base, last);
}

/// The field report's journey: the before example (79 apps, a Lattice service each)
/// imported, rendered as it runs and committed; the team adds what only it knows (the
/// example's declarations: peak rates, isolation, callers); `plan --apply` records the
/// consolidation, and `render --base` ships it in four steps for all 73 path-routed apps
/// at once (the groups, Kong's switch, the old routes' removal: none can go before the one
/// it follows, and each is safe for every app together; the routes of the three apps called
/// straight at Lattice go last, once released), each step accepted by `check
/// --base`, every state in between routing every probe to its app with either side live
/// first, and the end is the example's 14 services at its cost.
#[test]
fn the_before_example_consolidates_to_14_services_in_four_safe_steps() {
    let tmp = super::import::imported_before();
    consolidates_to_the_examples_14_services(tmp.path(), &[87, 87, 17, 14]);
}

/// The same on the before example exported with no custom domains (each service reached
/// at the domain Lattice assigned it) and four live auth policies, under `auth.mode: iam`:
/// the old routes, on those domains, go last, with their policies; `check --base` judges
/// every caller's access in each step. The three apps called straight are released from
/// the start, and with auth on their old routes go in the same step as the others'.
#[test]
fn an_assigned_domain_export_with_auth_consolidates_to_14_services_in_three_safe_steps() {
    let tmp = super::import_assigned::imported_assigned();
    consolidates_to_the_examples_14_services(tmp.path(), &[87, 87, 14]);
}

/// An imported project, rendered and committed, takes the example's declarations and
/// consolidates in safe steps to its 14 services, with `services` Lattice routes in each.
fn consolidates_to_the_examples_14_services(dir: &Path, services_in_steps: &[usize]) {
    git(dir, &["init", "-q"]);
    assert_eq!(latgen(dir, &["render"]).code, Some(0));
    commit(dir, "adopted as it runs");
    let imported = project::built(dir).prepared.apps;
    std::fs::remove_dir_all(dir.join("apps")).unwrap();
    common::write_tree(
        &dir.join("apps"),
        &common::read_tree(&common::root().join("apps")),
    );
    let plan = latgen(dir, &["plan", "--apply"]);
    assert_eq!(plan.code, Some(0), "{}", plan.stderr);
    assert!(
        plan.stdout.contains("Lattice services 79 -> 14"),
        "{}",
        plan.stdout
    );
    // The repository has no remote: the next command names no `origin/main`.
    assert!(
        plan.stdout.contains("`latgen render --base auto`") && !plan.stdout.contains("origin/"),
        "{}",
        plan.stdout
    );
    let mut services = Vec::new();
    let steps = ship_releasing(dir, (None, &CALLED_STRAIGHT), &[], |_| {
        let lattice = tree_at(dir, "HEAD");
        let routes = (lattice.keys())
            .filter(|p| p.to_string_lossy().starts_with("lattice/httproute-"))
            .count();
        services.push(routes);
    });
    assert_eq!(steps, services_in_steps.len());
    // The old routes and the new groups are both billed until the old routes go.
    assert_eq!(services, services_in_steps);
    // The example's declarations add callers (and peak rates) to the imported ones: a state
    // may let a caller in as either says.
    assert_states_route_as_before_or_after(dir, steps, Some(&imported));
    let cost = latgen(dir, &["cost"]);
    assert!(
        cost.stdout
            .starts_with("Lattice services          14       $332.15/month"),
        "{}",
        cost.stdout
    );
}

/// Promotion: two apps added to a project with staging and production ship to staging in
/// safe steps; `promote staging production` places them in production in the groups
/// staging gave them (production's quota has room); production then ships in safe steps
/// of its own, each accepted by `check --env production --base`, every state routing every
/// request within production's quota; and the two environments end alike and clean.
#[test]
fn a_change_promoted_from_staging_to_production_ships_in_safe_steps() {
    let tmp = common::copy_project(&common::fixture("environments"));
    let dir = tmp.path();
    git(dir, &["init", "-q"]);
    for command in ["render", "deploy"] {
        let run = latgen(dir, &[command, "--env", "all"]);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
    }
    commit(dir, "both environments live");
    let before = |env| project::built_in(dir, env).prepared.apps;
    let (staging_before, production_before) = (before("staging"), before("production"));
    // In a namespace the apps have already: a new one would change the deploy kit's
    // AppProject, which `render --base` leaves to `latgen deploy`.
    for (name, paths) in [("orders", "[/orders]"), ("blog", "[/blog, /blog-admin]")] {
        let body = format!(
            "namespace: team-shop\nservice: {{ name: {name}, port: 8080 }}\npaths: {paths}\n"
        );
        std::fs::write(dir.join("apps").join(format!("{name}.yaml")), body).unwrap();
    }
    // Staging first: production's folder and lock stay as they are.
    let staged = ship_in(dir, Some("staging"), &[], |_| {});
    assert!(staged >= 2, "{staged} steps");
    assert_states_in(dir, Some("staging"), staged, Some(&staging_before));
    let promote = latgen(dir, &["promote", "staging", "production", "--apply"]);
    assert_eq!(promote.code, Some(0), "{}", promote.stderr);
    assert!(
        promote
            .stdout
            .contains("`latgen render --env production --base auto`")
            && !promote.stdout.contains("origin/"),
        "{}",
        promote.stdout
    );
    let staging = project::built_in(dir, "staging").prepared.plan.lock.apps;
    let production = project::built_in(dir, "production").prepared.plan.lock.apps;
    for app in ["orders", "blog"] {
        assert_eq!(staging[app], production[app], "{app}: {}", promote.stdout);
        assert!(
            promote
                .stdout
                .contains(&format!("{app}: group-0{}, as in staging", staging[app])),
            "{}",
            promote.stdout
        );
    }
    let shipped = ship_in(dir, Some("production"), &[], |_| {});
    assert!(shipped >= 2, "{shipped} steps");
    assert_states_in(dir, Some("production"), shipped, Some(&production_before));
    let all = latgen(dir, &["check", "--env", "all", "--deny-warnings"]);
    assert_eq!(all.code, Some(0), "{}", all.stdout);
}

/// An app in a namespace the project has not used: `render --base` writes with each step the
/// deploy kit that step needs (its AppProject lets Argo CD into the new namespace from the
/// first step that writes there), so every step passes `check --base`, which judges the kit
/// of the committed step rather than of the finished change.
#[test]
fn each_step_of_an_app_in_a_new_namespace_carries_the_deploy_kit_it_needs() {
    let tmp = example_repo();
    let dir = tmp.path();
    common::app(
        dir,
        "ledger",
        "namespace: team-ledger\nservice: { name: ledger, port: 8080 }\npaths: [/ledger]\n",
    );
    let mut kit_at_step = Vec::new();
    let steps = ship_and_look(dir, &[], |_| {
        kit_at_step.push(std::fs::read_to_string(dir.join("deploy/appproject.yaml")).unwrap());
    });
    assert_eq!(steps, 2, "an addition takes two steps");
    assert!(
        kit_at_step[0].contains("namespace: team-ledger"),
        "step 1 writes the Lattice rules in team-ledger: {}",
        kit_at_step[0]
    );
    let done = latgen(dir, &["render", "--check"]);
    assert_eq!(
        done.code,
        Some(0),
        "the last step is a plain render: {}",
        done.stdout
    );
}
