//! `latgen status`: the rollouts in flight, offline: the moves the lock records, and (with
//! `--base`) where the output stands between that revision and what the inputs say, with
//! the command that takes each one step further.

use super::shell::{Exit, Ui};
use crate::check::owned;
use crate::diag::{Diagnostic, Sources};
use crate::input::ProjectPaths;
use crate::input::environments::lock_shown;
use crate::input::lock::Rollout;
use crate::manifest::tree::Tree;
use crate::render::Templates;
use crate::rollout::steps::NextStep;

/// Says the rollouts in flight in each environment `envs` holds; with `base`, also how far
/// each stands from that Git revision.
pub(crate) fn run(base: Option<&str>, envs: Result<Vec<ProjectPaths>, Diagnostic>, ui: Ui) -> Exit {
    super::project::per_env(envs, (ui, super::project::Heading::Stdout), |paths| {
        status_env(base, &paths, ui)
    })
}

/// One environment's rollouts (the project's, without environments).
fn status_env(base: Option<&str>, paths: &ProjectPaths, ui: Ui) -> Exit {
    let Some(built) = super::project::build(paths, None, false, ui) else {
        return Exit::Error;
    };
    ui.report(&built.diags, &built.sources);
    let here = match crate::output::read_tree(&paths.output) {
        Ok(t) => crate::output::manifests(&t).into_owned(),
        Err(d) => return ui.fail(d, &built.sources),
    };
    let prepared = &built.prepared;
    let recorded = prepared.rollout;
    // A rollout the lock records is a step `render --base` wrote; else the output folder
    // holds a change (a move `move` or `plan --apply` recorded, a new app) once it is what
    // `latgen render` writes from the inputs and the lock as they are.
    let rendered = recorded.is_some() || owned(&here) == owned(&built.output.files);
    let moves = &prepared.plan.lock.moves;
    let outgrown = &prepared.plan.outgrown;
    let lock = lock_shown(paths.env_name());
    let out = paths.output.display();
    if moves.is_empty() && recorded.is_none() && outgrown.is_empty() {
        match rendered {
            true => println!("rollout: none in flight"),
            false => println!(
                "rollout: a change the inputs and {lock} hold is not rendered yet: {out} does not hold it"
            ),
        }
    }
    let name = |n: u32| prepared.config.group_name(n);
    if let Some(r) = recorded {
        println!(
            "rollout: step {} of {} is what {out} and {lock} hold",
            r.step, r.of
        );
    }
    for (app, m) in moves {
        let from = prepared.plan.lock.apps.get(app).copied().unwrap_or(0);
        let (from, to) = (name(from), name(m.to));
        match rendered {
            true => println!(
                "move: {app} from {from} to {to}, step {} of 3",
                m.step.number()
            ),
            false => println!(
                "move: {app} from {from} to {to}, recorded in {lock}; step {} of 3 is not rendered yet",
                m.step.number()
            ),
        }
    }
    for o in outgrown {
        let app = &prepared.apps[o.app].name;
        let (from, to) = (name(o.from), name(o.to));
        println!("move: {app} from {from} to {to}, not started: it no longer fits {from}");
    }
    let in_flight = recorded.is_some() || !moves.is_empty() || !outgrown.is_empty();
    let Some(rev) = base else {
        next_without_base(paths, recorded, in_flight || !rendered);
        return Exit::Success;
    };
    rollout(paths, rev, (built, &here), ui)
}

/// What to run next, said without a base revision: `pending` when the output does not
/// hold the change yet, or a rollout is in flight.
fn next_without_base(paths: &ProjectPaths, recorded: Option<Rollout>, pending: bool) {
    let env = paths.env_flag();
    match recorded {
        Some(r) => println!(
            "next: once step {} is merged and live, `latgen render{env} --base auto` writes step {}; `latgen status{env} --base auto` counts the steps left",
            r.step,
            r.step + 1
        ),
        None if pending => println!(
            "next: `latgen render{env} --base auto` writes the first step (one PR); `latgen status{env} --base auto` counts the steps"
        ),
        None => {}
    }
}

/// Where the output stands between `rev` and the target, and what to run next; `here`
/// is the output folder's manifests, which may be the next step already written.
fn rollout(
    paths: &ProjectPaths,
    rev: &str,
    (built, here): (crate::pipeline::Built, &Tree),
    ui: Ui,
) -> Exit {
    let templates = match Templates::load(None) {
        Ok(t) => t,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    let env = paths.env_flag();
    let (resolved, base) =
        match crate::rollout::git::base_tree_of(paths, Some(rev), here) {
            Ok(Some(b)) => b,
            Ok(None) => return Exit::Success,
            Err(d) => return ui.fail(d, &Sources::default()),
        };
    let base = crate::output::manifests(&base).into_owned();
    let shipped = crate::rollout::steps::shipped(&paths.lock, &resolved);
    // The target: every move carried to its end.
    let target = match crate::pipeline::build_final(paths, &templates) {
        Ok(b) => b,
        Err(f) => {
            ui.report(&f.diags, &f.sources);
            return Exit::Error;
        }
    };
    drop(built);
    let shown = if rev == "auto" {
        "the default branch"
    } else {
        rev
    };
    match crate::rollout::steps::next_step(target, &templates, &base, shipped) {
        Ok(step) if step.remaining == 0 => {
            println!("rollout: none; {shown} holds what `latgen render` writes");
            Exit::Success
        }
        Ok(step) if written(paths, here, &step) => {
            let (n, of) = (step.progress.step, step.progress.of);
            let then = if step.completes() {
                "the change is complete".to_string()
            } else {
                format!("`latgen render{env} --base {rev}` writes step {}", n + 1)
            };
            println!(
                "rollout: step {n} of {of} is written in {} and {}, not yet in {shown}; next: merge its PR; once it is live, {then}",
                paths.output.display(),
                lock_shown(paths.env_name())
            );
            Exit::Success
        }
        Ok(step) => {
            println!(
                "rollout: {} of {} steps shipped in {shown}; next: `latgen render{env} --base {rev}` writes step {}",
                step.progress.step - 1,
                step.progress.of,
                step.progress.step
            );
            Exit::Success
        }
        Err(crate::rollout::steps::Stuck { .. }) => {
            println!(
                "rollout: the change from {shown} cannot go further in safe steps; `latgen render{env} --base {rev}` says why"
            );
            Exit::Found
        }
    }
}

/// Whether the output folder (`here`) and the lock on disk are `step` already: the step
/// `render --base` writes from the base, written and not yet merged.
fn written(paths: &ProjectPaths, here: &Tree, step: &NextStep) -> bool {
    let lock = std::fs::read_to_string(&paths.lock).ok();
    owned(here) == owned(&step.files) && lock.as_deref() == Some(step.lock_text.as_str())
}
