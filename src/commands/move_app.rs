//! `latgen move`: the shared stages up to the plan, then one step of a move recorded in the
//! lock.

use std::path::PathBuf;

use super::args::project_paths;
use super::{Outcome, Ui};
use crate::diag::Sources;

#[derive(Debug, clap::Args)]
pub struct MoveArgs {
    /// The app to move.
    pub app: String,
    /// The group to move it to (a group in use, or the next new one).
    #[arg(long, conflicts_with = "continue_")]
    pub group: Option<u32>,
    /// Advance the move in flight by one step.
    #[arg(long = "continue")]
    pub continue_: bool,
    /// Folder of app declarations.
    #[arg(long, default_value = "apps")]
    pub apps: PathBuf,
    /// Project settings [default: latgen.yaml beside the apps folder].
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Group assignments [default: latgen.lock beside the apps folder].
    #[arg(long)]
    pub lock: Option<PathBuf>,
}

pub fn run(args: &MoveArgs, ui: Ui) -> Outcome {
    let paths = project_paths(&args.apps, args.config.as_ref(), args.lock.as_ref());
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
