//! `latgen status`: the rollouts in flight, offline: the moves the lock records, and (with
//! `--base`) where the output stands between that revision and what the inputs say, with
//! the command that takes each one step further.

use std::path::PathBuf;

use super::args::InputArgs;
use super::{Outcome, Ui};
use crate::diag::Sources;
use crate::render::Templates;

#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Output folder [default: generated beside the apps folder].
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Also show the rollout from this Git revision (`auto`: the merge base with the
    /// default branch): how many steps are left and what to run next.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    #[command(flatten)]
    pub color: super::args::ColorArg,
}

pub fn run(args: &StatusArgs, ui: Ui) -> Outcome {
    let paths = args.input.paths();
    let Some(prepared) = ui.prepare(&paths) else {
        return Outcome::Error;
    };
    let moves = &prepared.plan.lock.moves;
    if moves.is_empty() {
        println!("moves: none in flight");
    }
    for (app, m) in moves {
        let from = prepared.plan.lock.apps.get(app).copied().unwrap_or(0);
        let step = m.step.number();
        println!(
            "move: {app} from {} to {}, step {step} of 3; once step {step} is live: `latgen move {app} --continue`",
            prepared.config.group_name(from),
            prepared.config.group_name(m.to)
        );
    }
    let Some(rev) = &args.base else {
        return Outcome::Success;
    };
    rollout(args, &paths, rev, ui)
}

/// Where the output stands between `rev` and the target, and what to run next.
fn rollout(args: &StatusArgs, paths: &crate::load::ProjectPaths, rev: &str, ui: Ui) -> Outcome {
    let templates = match Templates::load(None) {
        Ok(t) => t,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    let out = super::args::output_dir(args.output.as_ref(), paths);
    let (resolved, base) = match super::check::base_tree(Some(rev), &out, &Default::default()) {
        Ok(Some(b)) => b,
        Ok(None) => return Outcome::Success,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    let base = crate::output::manifests(&base).into_owned();
    let shipped = crate::stepwise::shipped(&paths.lock, &resolved);
    match crate::stepwise::next_step(paths, &templates, &base, shipped) {
        Ok(step) if step.remaining == 0 => {
            println!("rollout: none; {rev} holds what `latgen render` writes");
            Outcome::Success
        }
        Ok(step) => {
            println!(
                "rollout: {} of {} steps shipped in {rev}; next: `latgen render --base {rev}` writes step {}",
                step.progress.step - 1,
                step.progress.of,
                step.progress.step
            );
            Outcome::Success
        }
        Err(crate::stepwise::NoStep::Inputs(f)) => {
            ui.report(&f.diags, &f.sources);
            Outcome::Error
        }
        Err(crate::stepwise::NoStep::Stuck { .. }) => {
            println!(
                "rollout: the change from {rev} cannot go further in safe steps; `latgen render --base {rev}` says why"
            );
            Outcome::Found
        }
    }
}
