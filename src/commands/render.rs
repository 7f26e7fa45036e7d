//! `latgen render`: its arguments, run by [`crate::ops::latgen_render`].

use super::args::{InputArgs, OnlySide, OutputArg, TemplatesArg, VerifyArg};
use crate::ops::latgen_render::{RenderOptions, run as render};
use crate::ops::shell::{Exit, Ui};

#[derive(Debug, clap::Args)]
pub(crate) struct RenderArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub out: OutputArg,
    #[command(flatten)]
    pub templates: TemplatesArg,
    #[command(flatten)]
    pub verify: VerifyArg,
    /// Write nothing; exit 1 with a unified diff when the output or the lock is stale.
    #[arg(long)]
    pub check: bool,
    /// Write only one side (and the lock), to ship a change as two PRs.
    #[arg(long, value_enum, conflicts_with = "base")]
    pub only: Option<OnlySide>,
    /// Write the next safe step of the change from this Git revision (`auto`: the merge
    /// base with the default branch): each file as in REV, as rendered, or in between, as
    /// much as is safe whichever side goes live first. Run it again on the merged step.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// With --base: let the step that takes this app's rules off the Lattice service its
    /// own callers call (the last step of its move) be written. Without it, that step is
    /// held until those callers call the app's new address. Repeat it for more apps.
    #[arg(long, value_name = "APP", requires = "base")]
    pub release_old_address: Vec<String>,
}

pub(crate) fn run(args: &RenderArgs, ui: Ui) -> Exit {
    let opts = RenderOptions {
        templates: args.templates.templates.as_deref(),
        verify: args.verify.verify,
        check: args.check,
        only: args.only.map(OnlySide::side),
        base: args.base.as_deref(),
        release: &args.release_old_address,
    };
    render(&opts, args.input.envs(args.out.output.as_ref()), ui)
}
