//! `latgen promote`: its arguments, run by [`crate::ops::latgen_promote`].

use std::path::PathBuf;

use super::args::project_paths;
use crate::ops::latgen_promote::{PromoteOptions, run as promote};
use crate::ops::shell::{Exit, Ui};

#[derive(Debug, clap::Args)]
pub(crate) struct PromoteArgs {
    /// The environment whose groups the new apps follow (e.g. staging).
    pub from: String,
    /// The environment whose new apps are placed (e.g. production).
    pub to: String,
    /// Folder of app declarations.
    #[arg(long, default_value = "apps")]
    pub apps: PathBuf,
    /// Project settings [default: latgen.yaml beside the apps folder].
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Record the placement in the target's lock (locks/TO.lock), and write the
    /// declarations the carried overrides change; without it, only say it.
    #[arg(long)]
    pub apply: bool,
    /// Carry FROM's override of this field (`overrides.FROM.FIELD` in a declaration) to TO:
    /// the field becomes the declaration's own once every environment has it alike, else
    /// TO's override. Repeat it for more fields.
    #[arg(long, value_name = "FIELD", default_value = "paths", value_parser = ["host", "paths", "kong", "callers", "canary"])]
    pub carry: Vec<String>,
}

pub(crate) fn run(args: &PromoteArgs, ui: Ui) -> Exit {
    let base = project_paths(&args.apps, args.config.as_ref(), None);
    let opts = PromoteOptions {
        from: &args.from,
        to: &args.to,
        apply: args.apply,
        carry: &args.carry,
    };
    promote(&opts, &base, ui)
}
