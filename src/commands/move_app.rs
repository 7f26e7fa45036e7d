//! `latgen move`: the shared stages up to the plan, then one step of a move recorded in the
//! lock.

use std::path::PathBuf;

use clap::ArgGroup;

use super::args::{InputArgs, project_paths};
use super::{Outcome, Ui};
use crate::diag::Sources;

/// `latgen move APP [APPS] (--group N | --continue)`: the apps folder is positional as in
/// every other command; one of the two flags says which step to take.
#[derive(Debug, clap::Args)]
#[command(group(ArgGroup::new("step").required(true).args(["group", "continue_"])))]
pub struct MoveArgs {
    /// The app to move.
    pub app: String,
    #[command(flatten)]
    pub input: InputArgs,
    /// The group to move it to (a group in use, or the next new one).
    #[arg(long)]
    pub group: Option<u32>,
    /// Advance the move in flight by one step.
    #[arg(long = "continue")]
    pub continue_: bool,
    /// The apps folder as an option, as earlier versions took it.
    #[arg(
        long = "apps",
        value_name = "APPS",
        hide = true,
        conflicts_with = "apps"
    )]
    pub apps_option: Option<PathBuf>,
    #[command(flatten)]
    pub color: super::args::ColorArg,
}

pub fn run(args: &MoveArgs, ui: Ui) -> Outcome {
    let input = &args.input;
    let apps = args.apps_option.as_ref().unwrap_or(&input.apps);
    let paths = project_paths(apps, input.config.as_ref(), input.lock.as_ref());
    let Some(prepared) = ui.prepare(&paths) else {
        return Outcome::Error;
    };
    match crate::rebalance::move_app(&prepared, &args.app, args.group, args.continue_) {
        Ok(result) => {
            let text = crate::lock::serialize(&result.lock);
            if let Err(d) = crate::output::write_atomic(&paths.lock, text.as_bytes()) {
                return ui.fail(d, &Sources::default());
            }
            println!("{}", result.message);
            Outcome::Success
        }
        Err(d) => {
            ui.fail(d, &Sources::default());
            Outcome::Found
        }
    }
}
