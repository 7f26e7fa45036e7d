//! `latgen move`: its arguments, run by [`crate::ops::latgen_move`].

use clap::ArgGroup;

use super::args::{InputArgs, OutputArg};
use crate::ops::latgen_move::{MoveOptions, run as move_app};
use crate::ops::shell::{Exit, Ui};

/// `latgen move APP [APPS] (--group N | --continue)`: the apps folder is positional as in
/// every other command; one of the two flags says which step to take.
#[derive(Debug, clap::Args)]
#[command(
    group(ArgGroup::new("step").required(true).args(["group", "continue_"])),
    mut_arg("output", |a| a.help("Output folder that must hold the current step before `--continue` advances [default: generated beside the apps folder]")),
)]
pub(crate) struct MoveArgs {
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
    #[command(flatten)]
    pub out: OutputArg,
    /// With `--continue`: the revision that must hold the current step too (shipped), e.g.
    /// the default branch; `auto`: the merge base with it.
    #[arg(long, value_name = "REV", requires = "continue_")]
    pub base: Option<String>,
}

pub(crate) fn run(args: &MoveArgs, ui: Ui) -> Exit {
    let opts = MoveOptions {
        app: &args.app,
        group: args.group,
        continue_: args.continue_,
        base: args.base.as_deref(),
    };
    move_app(&opts, args.input.one_env(args.out.output.as_ref()), ui)
}
