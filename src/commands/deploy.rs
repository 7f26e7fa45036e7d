//! `latgen deploy`: its arguments, run by [`crate::ops::latgen_deploy`].

use super::args::{InputArgs, OutputArg, TemplatesArg};
use crate::ops::latgen_deploy::{DeployOptions, run as deploy};
use crate::ops::shell::{Exit, Ui};

#[derive(Debug, clap::Args)]
#[command(
    mut_arg("output", |a| a.help("The output folder the Applications sync, as given to `render` [default: generated beside the apps folder]")),
    mut_arg("templates", |a| a.help("Folder of templates `render` is run with")),
)]
pub(crate) struct DeployArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub out: OutputArg,
    #[command(flatten)]
    pub templates: TemplatesArg,
    /// Write nothing; exit 1 with a unified diff when deploy/ is stale.
    #[arg(long)]
    pub check: bool,
}

pub(crate) fn run(args: &DeployArgs, ui: Ui) -> Exit {
    let opts = DeployOptions {
        templates: args.templates.templates.as_deref(),
        check: args.check,
    };
    deploy(&opts, args.input.envs(args.out.output.as_ref()), ui)
}
