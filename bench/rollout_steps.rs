//! The `render --base` steps of two changes to the benchmark's project, timed as whole
//! processes: a one-app `latgen move` and a switch of dispatch mode (path → header). Each
//! step is timed from the commit that holds the step before it, its output folder and lock
//! put back before every run, so that every run writes the same step.

use std::path::Path;

use super::{Measured, git, latgen, measure};

/// The steps of each change, in order, and what each step's run said.
pub struct Steps {
    pub moved: Vec<Measured>,
    pub switch: Vec<Measured>,
}

/// Times every step of a move of one app to a new group, then (when `switch`) of the
/// switch to header dispatch. `dir` is a Git repository whose HEAD holds the rendered
/// project; the output folder and lock are left as HEAD has them.
pub fn measure_steps(dir: &Path, latgen_bin: &Path, runs: usize, switch: bool) -> Steps {
    restore(dir);
    // The next new group: every group is in use after a first render, so one past the
    // highest the lock names.
    let lock = std::fs::read_to_string(dir.join("latgen.lock")).expect("the lock");
    let next = lock
        .lines()
        .filter_map(|l| l.trim().split_once(": ")?.1.trim().parse::<u32>().ok())
        .max()
        .unwrap_or(0)
        + 1;
    let app = "app-000000";
    let group = next.to_string();
    let run = latgen(latgen_bin, dir, &["move", app, "--group", &group])();
    said(run, "move");
    commit(dir, "move");
    let moved = every_step(dir, latgen_bin, runs);
    let switch = if switch {
        let config = dir.join("latgen.yaml");
        let before = std::fs::read_to_string(&config).unwrap_or_default();
        std::fs::write(&config, format!("{before}lattice:\n  dispatch: header\n")).unwrap();
        commit(dir, "dispatch: header");
        every_step(dir, latgen_bin, runs)
    } else {
        Vec::new()
    };
    Steps { moved, switch }
}

/// Each step of the change HEAD declares, timed, then committed for the next.
fn every_step(dir: &Path, latgen_bin: &Path, runs: usize) -> Vec<Measured> {
    let step = &["render", "apps", "-o", "generated", "--base", "HEAD"][..];
    let mut times = Vec::new();
    loop {
        let timed = measure(runs, latgen(latgen_bin, dir, step), &mut || restore(dir));
        times.push(timed);
        restore(dir);
        let out = said(latgen(latgen_bin, dir, step)(), "render --base HEAD");
        commit(dir, &format!("step {}", times.len()));
        if out.contains("the change is complete") || times.len() >= 8 {
            assert!(
                out.contains("the change is complete"),
                "the change did not end in 8 steps: {out}"
            );
            return times;
        }
    }
}

/// The output folder and lock as HEAD holds them: a timed step starts from its base.
fn restore(dir: &Path) {
    git(
        dir,
        &["checkout", "-q", "HEAD", "--", "generated", "latgen.lock"],
    );
    git(dir, &["clean", "-fdq", "--", "generated"]);
}

/// Commits the project's inputs and output as they are.
fn commit(dir: &Path, message: &str) {
    let mut paths = vec!["add", "-A", "--", "apps", "generated", "latgen.lock"];
    if dir.join("latgen.yaml").exists() {
        paths.push("latgen.yaml");
    }
    git(dir, &paths);
    git(dir, &["commit", "-q", "--allow-empty", "-m", message]);
}

/// What a run said, which must have succeeded.
fn said(mut cmd: std::process::Command, what: &str) -> String {
    let out = cmd.output().expect("runs");
    let text =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{what} failed: {text}");
    text
}
