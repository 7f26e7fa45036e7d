//! `latgen status`: its arguments, run by [`crate::ops::latgen_status`].

use super::args::{InputArgs, OutputArg};
use crate::ops::latgen_status::StatusFormat;
use crate::ops::shell::{Exit, Ui};

#[derive(Debug, clap::Args)]
pub(crate) struct StatusArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub out: OutputArg,
    /// Also show the rollout from this Git revision (`auto`: the merge base with the
    /// default branch): how many steps are left and what to run next.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// Output format: `json` is one object per environment, with every app's address.
    #[arg(long, value_enum, default_value_t = StatusFormat::Human)]
    pub format: StatusFormat,
}

pub(crate) fn run(args: &StatusArgs, ui: Ui) -> Exit {
    let envs = args.input.envs(args.out.output.as_ref());
    crate::ops::latgen_status::run((args.base.as_deref(), args.format), envs, ui)
}
