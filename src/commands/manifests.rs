//! `latgen manifests`: its arguments, run by [`crate::ops::latgen_manifests`].

use super::args::{InputArgs, OnlySide, TemplatesArg};
use crate::ops::shell::{Exit, Ui};

#[derive(Debug, clap::Args)]
pub(crate) struct ManifestsArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub templates: TemplatesArg,
    /// The side to print.
    #[arg(long, value_enum)]
    pub side: OnlySide,
}

pub(crate) fn run(args: &ManifestsArgs, ui: Ui) -> Exit {
    let what = (args.side.side(), args.templates.templates.as_deref());
    crate::ops::latgen_manifests::run(what, args.input.one_env(None), ui)
}
