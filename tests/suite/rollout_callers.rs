//! An app that declares callers of its own is called straight at its Lattice service's
//! domain: a move of it keeps the old address until the user releases it
//! (`render --base --release-old-address APP`), `check --base` warns of the step that
//! takes it (`direct-callers-moved`), and `status` and `trace` give the app's address.
//! Each case runs in a throwaway Git repository, on the rollout suite's project.

use super::common::latgen;
use super::rollout::{commit, five_apps_with_auth, tree_at};

use std::path::Path;

use serde_json::{Value, json};

/// [`five_apps_with_auth`] with delta, called straight by its own caller (an organization),
/// moving to a new group, and the first two steps of its move shipped: its rules added to
/// group-02, then Kong switched to it.
fn delta_moved_but_for_its_old_rules() -> tempfile::TempDir {
    let tmp = five_apps_with_auth();
    let dir = tmp.path();
    let run = latgen(dir, &["move", "delta", "--group", "2"]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    for n in 1..=2 {
        let run = latgen(dir, &["render", "--base", "HEAD"]);
        assert!(
            run.stderr.contains(&format!("step {n} of 3:")),
            "{}",
            run.stderr
        );
        commit(dir, &format!("step {n}"));
    }
    tmp
}

/// The files of the work tree that differ from HEAD, as `git status` lists them.
fn uncommitted(dir: &Path) -> String {
    let out = std::process::Command::new("git")
        .args(["status", "--porcelain"])
        .current_dir(dir)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

fn json_of(dir: &Path, args: &[&str]) -> Value {
    let run = latgen(dir, args);
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", run.stdout, run.stderr))
}

#[test]
fn render_base_holds_the_step_that_takes_an_app_from_its_direct_callers() {
    let tmp = delta_moved_but_for_its_old_rules();
    let dir = tmp.path();
    let run = latgen(dir, &["render", "--base", "HEAD"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr.starts_with("step 3 of 3 is held: "),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(
            "  delta: group-01.lattice.internal on /delta -> group-02.lattice.internal on /delta\n"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("`latgen render --base HEAD --release-old-address delta`"),
        "{}",
        run.stderr
    );
    // Nothing is written: group-01 keeps delta's rule and its caller's statement.
    assert_eq!(uncommitted(dir), "");
    let status = json_of(dir, &["status", "--base", "HEAD", "--format", "json"]);
    assert_eq!(status["base"]["shipped"], 2, "{status:#}");
    assert_eq!(status["base"]["held"][0]["app"], "delta", "{status:#}");
    assert_eq!(
        status["base"]["held"][0]["old"]["domain"], "group-01.lattice.internal",
        "{status:#}"
    );
}

#[test]
fn render_base_writes_the_held_step_once_the_old_address_is_released() {
    let tmp = delta_moved_but_for_its_old_rules();
    let dir = tmp.path();
    let args = ["render", "--base", "HEAD", "--release-old-address", "delta"];
    let run = latgen(dir, &args);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stderr.starts_with("step 3 of 3: "), "{}", run.stderr);
    let group_01 = tree_at(dir, "HEAD")[Path::new("lattice/httproute-group-01.yaml")].clone();
    assert!(
        group_01.contains("value: /delta"),
        "step 2 keeps the old rule"
    );
    let now = std::fs::read_to_string(dir.join("generated/lattice/httproute-group-01.yaml"));
    assert!(
        !now.unwrap().contains("value: /delta"),
        "the released step drops it"
    );
    commit(dir, "step 3");
    // The last step is the plain render, and the reviewer is told what it takes.
    assert_eq!(latgen(dir, &["render", "--check"]).code, Some(0));
    let check = latgen(dir, &["check", "--base", "HEAD~1", "--format", "json"]);
    assert_eq!(check.code, Some(0), "{}", check.stdout);
    let found: Vec<Value> = (check.stdout.lines())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(found.len(), 1, "{}", check.stdout);
    assert_eq!(found[0]["code"], "direct-callers-moved");
    assert_eq!(
        found[0]["message"],
        "this step takes app `delta` off group-01.lattice.internal on /delta, where its callers of its own call it straight (not through Kong); from then on they reach it at group-02.lattice.internal on /delta"
    );
}

#[test]
fn status_json_gives_each_apps_address_and_the_one_it_moves_to() {
    let tmp = five_apps_with_auth();
    let dir = tmp.path();
    let run = latgen(dir, &["move", "delta", "--group", "2"]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    let status = json_of(dir, &["status", "--format", "json"]);
    let app = |name: &str| -> Value {
        (status["apps"].as_array().unwrap().iter())
            .find(|a| a["app"] == name)
            .unwrap_or_else(|| panic!("{name}: {status:#}"))
            .clone()
    };
    let delta = app("delta");
    assert_eq!(delta["callers"], 1);
    assert_eq!(
        delta["address"],
        json!({
            "domain": "group-01.lattice.internal",
            "route": "lattice-groups/group-01",
            "service": "group-01-lattice-groups",
            "paths": ["/delta"],
        })
    );
    assert_eq!(delta["movingTo"]["domain"], "group-02.lattice.internal");
    let bravo = app("bravo");
    assert_eq!(bravo["callers"], 0);
    assert_eq!(bravo["address"]["domain"], "group-01.lattice.internal");
    assert_eq!(bravo["movingTo"], Value::Null);
    assert_eq!(
        status["moves"],
        json!([{ "app": "delta", "from": "group-01", "to": "group-02", "step": 1 }])
    );
}

#[test]
fn trace_gives_both_addresses_of_an_app_in_the_middle_of_its_move() {
    let tmp = delta_moved_but_for_its_old_rules();
    let dir = tmp.path();
    let trace = json_of(dir, &["trace", "/delta", "--format", "json"]);
    // Kong sends it to its new group; its old one answers too until the last step.
    assert_eq!(
        trace["address"]["domain"], "group-02.lattice.internal",
        "{trace:#}"
    );
    assert_eq!(trace["address"]["paths"], json!(["/delta"]));
    assert_eq!(
        trace["alsoAt"][0]["domain"], "group-01.lattice.internal",
        "{trace:#}"
    );
    let human = latgen(dir, &["trace", "/delta"]);
    assert!(
        human.stdout.ends_with(
            "address   callers that skip Kong reach it at group-02.lattice.internal on /delta\n          also at group-01.lattice.internal on /delta\n"
        ),
        "{}",
        human.stdout
    );
}

/// The held step written with `--release-old-address` and not yet merged: `status --base`
/// says it is written and waits for its merge, rather than that it is held.
#[test]
fn status_says_a_released_step_is_written_not_held() {
    let tmp = delta_moved_but_for_its_old_rules();
    let dir = tmp.path();
    let args = ["render", "--base", "HEAD", "--release-old-address", "delta"];
    assert_eq!(latgen(dir, &args).code, Some(0));
    let status = latgen(dir, &["status", "--base", "HEAD"]);
    assert_eq!(status.code, Some(0), "{}", status.stderr);
    assert!(
        status.stdout.contains(
            "rollout: step 3 of 3 is written in generated and latgen.lock, not yet in HEAD; next: merge its PR; once it is live, the change is complete"
        ),
        "{}",
        status.stdout
    );
    assert!(!status.stdout.contains("is held"), "{}", status.stdout);
}
