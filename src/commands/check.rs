//! `latgen check`: its arguments, run by [`crate::ops::latgen_check`].

use std::path::PathBuf;

use super::args::{InputArgs, OutputArg, TemplatesArg, VerifyArg};
use crate::ops::check_output::Format;
use crate::ops::latgen_check::{GateOptions, run as check};
use crate::ops::shell::{Exit, Ui};

#[derive(Debug, clap::Args)]
#[command(
    mut_arg("output", |a| a.help("The committed output folder [default: generated beside the apps folder]")),
    mut_arg("templates", |a| a.help("Folder of templates `render` is run with")),
)]
pub(crate) struct CheckArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub out: OutputArg,
    #[command(flatten)]
    pub templates: TemplatesArg,
    #[command(flatten)]
    pub verify: VerifyArg,
    /// Output format: human (the source line of each finding), json (one object per
    /// finding and line), github (workflow annotations), sarif (2.1.0, for code scanning),
    /// markdown (a PR comment; with --base, also what the change does and costs).
    #[arg(long, value_enum, default_value_t = Format::Human, hide_possible_values = true)]
    pub format: Format,
    /// Exit 1 on warnings as well.
    #[arg(long)]
    pub deny_warnings: bool,
    /// Compare with this Git revision: accept a PR that leaves one side as it was when the
    /// other side can safely go live first, and refuse a change either side of which could
    /// break routing by going live first. `auto`: the merge base with the default branch.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// The latgen.lock of another project whose routes share the service network: warn
    /// when one of its Lattice service names is also one of this project's. Repeatable.
    #[arg(long, value_name = "FILE")]
    pub also_lock: Vec<PathBuf>,
}

pub(crate) fn run(args: &CheckArgs, ui: Ui) -> Exit {
    let opts = GateOptions {
        templates: args.templates.templates.as_deref(),
        verify: args.verify.verify,
        format: args.format,
        deny_warnings: args.deny_warnings,
        base: args.base.as_deref(),
        also_locks: &args.also_lock,
    };
    check(&opts, args.input.envs(args.out.output.as_ref()), ui)
}
