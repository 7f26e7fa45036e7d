//! `latgen status`: the rollouts in flight, offline: the moves the lock records, and (with
//! `--base`) where the output stands between that revision and what the inputs say, with
//! the command that takes each one step further.

use super::shell::{Exit, Ui};
use crate::diag::{Diagnostic, Sources};
use crate::input::ProjectPaths;
use crate::render::Templates;

/// Says the rollouts in flight in each environment `envs` holds; with `base`, also how far
/// each stands from that Git revision.
pub(crate) fn run(base: Option<&str>, envs: Result<Vec<ProjectPaths>, Diagnostic>, ui: Ui) -> Exit {
    super::project::per_env(envs, (ui, super::project::Heading::Stdout), |paths| {
        status_env(base, &paths, ui)
    })
}

/// One environment's rollouts (the project's, without environments).
fn status_env(base: Option<&str>, paths: &ProjectPaths, ui: Ui) -> Exit {
    let Some(prepared) = super::project::prepare(paths, ui) else {
        return Exit::Error;
    };
    let recorded = prepared.rollout;
    let moves = &prepared.plan.lock.moves;
    if moves.is_empty() && recorded.is_none() && prepared.plan.outgrown.is_empty() {
        println!("rollout: none in flight");
    }
    let name = |n: u32| prepared.config.group_name(n);
    if let Some(r) = recorded {
        println!(
            "rollout: step {} of {} is what {} and latgen.lock hold",
            r.step,
            r.of,
            paths.output.display()
        );
    }
    for (app, m) in moves {
        let from = prepared.plan.lock.apps.get(app).copied().unwrap_or(0);
        println!(
            "move: {app} from {} to {}, step {} of 3",
            name(from),
            name(m.to),
            m.step.number()
        );
    }
    for o in &prepared.plan.outgrown {
        let app = &prepared.apps[o.app].name;
        println!(
            "move: {app} from {} to {}, not started: it no longer fits {}",
            name(o.from),
            name(o.to),
            name(o.from)
        );
    }
    let in_flight = recorded.is_some() || !moves.is_empty() || !prepared.plan.outgrown.is_empty();
    let Some(rev) = base else {
        let env = paths.env_flag();
        match recorded {
            Some(r) => println!(
                "next: once step {} is merged and live, `latgen render{env} --base auto` writes step {}; `latgen status{env} --base auto` counts the steps left",
                r.step,
                r.step + 1
            ),
            None if in_flight => println!(
                "next: `latgen render{env} --base auto` writes the first step (one PR); `latgen status{env} --base auto` counts the steps"
            ),
            None => {}
        }
        return Exit::Success;
    };
    rollout(paths, rev, ui)
}

/// Where the output stands between `rev` and the target, and what to run next.
fn rollout(paths: &ProjectPaths, rev: &str, ui: Ui) -> Exit {
    let templates = match Templates::load(None) {
        Ok(t) => t,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    let env = paths.env_flag();
    let (resolved, base) =
        match crate::rollout::git::base_tree_of(paths, Some(rev), &Default::default()) {
            Ok(Some(b)) => b,
            Ok(None) => return Exit::Success,
            Err(d) => return ui.fail(d, &Sources::default()),
        };
    let base = crate::output::manifests(&base).into_owned();
    let shipped = crate::rollout::steps::shipped(&paths.lock, &resolved);
    let built = match crate::pipeline::build_final(paths, &templates) {
        Ok(b) => b,
        Err(f) => {
            ui.report(&f.diags, &f.sources);
            return Exit::Error;
        }
    };
    match crate::rollout::steps::next_step(built, &templates, &base, shipped) {
        Ok(step) if step.remaining == 0 => {
            println!("rollout: none; {rev} holds what `latgen render` writes");
            Exit::Success
        }
        Ok(step) => {
            println!(
                "rollout: {} of {} steps shipped in {rev}; next: `latgen render{env} --base {rev}` writes step {}",
                step.progress.step - 1,
                step.progress.of,
                step.progress.step
            );
            Exit::Success
        }
        Err(crate::rollout::steps::Stuck { .. }) => {
            println!(
                "rollout: the change from {rev} cannot go further in safe steps; `latgen render{env} --base {rev}` says why"
            );
            Exit::Found
        }
    }
}
