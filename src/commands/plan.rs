//! `latgen plan`: its arguments, run by [`crate::ops::latgen_plan`].

use super::args::InputArgs;
use crate::ops::latgen_plan::{PlanOptions, run as plan};
use crate::ops::shell::{Exit, Ui};

#[derive(Debug, clap::Args)]
pub(crate) struct PlanArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Record the moves in latgen.lock (as `latgen move` starts them), for
    /// `latgen render --base REV` to ship in safe steps.
    #[arg(long, conflicts_with = "observed")]
    pub apply: bool,
    /// Judge the plan by the apps' observed peak rates instead: a Prometheus query result
    /// (the HTTP API's JSON, one series per app labelled `app`). Prints each group's load
    /// against its budget, the apps above their declared `peakRps`, and what `latgen
    /// render` moves once they declare what they do; exit 1 when there is any.
    #[arg(long, value_name = "FILE")]
    pub observed: Option<std::path::PathBuf>,
}

pub(crate) fn run(args: &PlanArgs, ui: Ui) -> Exit {
    let opts = PlanOptions {
        apply: args.apply,
        observed: args.observed.as_deref(),
    };
    plan(&opts, args.input.envs(None), ui)
}
