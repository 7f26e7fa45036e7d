//! `latgen move`: the shared stages up to the plan, then one step of a move recorded in the
//! lock; before a move advances, its current step must be rendered (and, with a base
//! revision, shipped).

use super::shell::{Exit, Ui};
use crate::diag::{Diagnostic, Sources};
use crate::input::ProjectPaths;

/// What `latgen move` is asked to do.
pub(crate) struct MoveOptions<'a> {
    /// The app to move.
    pub app: &'a str,
    /// The group to move it to.
    pub group: Option<u32>,
    /// Advance the move in flight by one step.
    pub continue_: bool,
    /// With `continue_`: the revision that must hold the current step too.
    pub base: Option<&'a str>,
}

/// Takes one step of the move in the project at `paths`.
pub(crate) fn run(args: &MoveOptions<'_>, paths: Result<ProjectPaths, Diagnostic>, ui: Ui) -> Exit {
    let paths = match paths {
        Ok(p) => p,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    if let Err(d) = paths.make_env_folders() {
        return ui.fail(d, &Sources::default());
    }
    // The lock is written: no render of this project may run meanwhile, and a killed
    // render's lock is put in place (or dropped) before this one is read.
    let _run = match crate::output::begin_in(&paths.root, &paths.output, true, paths.env.is_some())
    {
        Ok(l) => l,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    if args.continue_
        && let Some(outcome) = unshipped(args, &paths, ui)
    {
        return outcome;
    }
    let Some(prepared) = super::project::prepare(&paths, ui) else {
        return Exit::Error;
    };
    match crate::plan::rebalance::moves::move_app(&prepared, args.app, args.group, args.continue_) {
        Ok(result) => {
            let text = crate::input::lock::serialize(&result.lock);
            if let Err(d) = crate::output::write_atomic(&paths.root, &paths.lock, text.as_bytes()) {
                return ui.fail(d, &Sources::default());
            }
            println!("{}", result.message);
            // Its direct callers are told where it goes before the step that strands them.
            let called = prepared.apps.iter().find(|a| a.name == args.app);
            if called.is_some_and(|a| !a.callers.is_empty()) {
                println!(
                    "note: {app} declares callers of its own, which call it straight at its Lattice service: `render --base` holds the last step (its old rules dropped) until `--release-old-address {app}`, once they call the new one",
                    app = args.app
                );
            }
            Exit::Success
        }
        Err(d) => {
            ui.fail(d, &Sources::default());
            Exit::Found
        }
    }
}

/// Before a move advances, its current step must be what the output folder holds and,
/// with `--base`, what that revision holds: a step that was never rendered or shipped
/// would be skipped, and the next one could break routing. Some(outcome) refuses.
fn unshipped(args: &MoveOptions<'_>, paths: &ProjectPaths, ui: Ui) -> Option<Exit> {
    let built = match super::project::build(paths, None, false, ui) {
        Some(b) => b,
        None => return Some(Exit::Error),
    };
    let step = built
        .prepared
        .plan
        .lock
        .moves
        .get(args.app)
        .map_or(0, |m| m.step.number());
    let wanted = crate::output::manifests(&built.output.files).into_owned();
    let same_owned = crate::check::same_owned;
    let out = paths.output.clone();
    let env = paths.env_flag();
    let here = match crate::output::read_tree(&out) {
        Ok(t) => crate::output::manifests(&t).into_owned(),
        Err(d) => return Some(ui.fail(d, &Sources::default())),
    };
    let app = args.app;
    if step > 0 && !same_owned(&here, &wanted) {
        eprintln!(
            "error: step {step} of the move of {app} is not what {} holds: `latgen render{env} --base auto` writes it (one PR); once it is merged and live, run it again for the next step",
            out.display()
        );
        return Some(Exit::Found);
    }
    let base = match crate::rollout::git::base_tree(&paths.root, args.base, &out, &here) {
        Ok(b) => b,
        Err(d) => return Some(ui.fail(d, &Sources::default())),
    };
    if let Some((rev, tree)) = base
        && step > 0
        && !same_owned(&crate::output::manifests(&tree), &wanted)
    {
        eprintln!(
            "error: step {step} of the move of {app} is rendered but not shipped: {rev} does not hold it yet; merge its PR, let it go live, then run `latgen render{env} --base auto` for the next step"
        );
        return Some(Exit::Found);
    }
    None
}
