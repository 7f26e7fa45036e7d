//! `latgen cost`: its arguments, run by [`crate::ops::latgen_cost`].

use super::args::InputArgs;
use crate::ops::latgen_cost::CostFormat;
use crate::ops::shell::{Exit, Ui};

#[derive(Debug, clap::Args)]
pub(crate) struct CostArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CostFormat::Table)]
    pub format: CostFormat,
}

pub(crate) fn run(args: &CostArgs, ui: Ui) -> Exit {
    crate::ops::latgen_cost::run(args.format, args.input.envs(None), ui)
}
