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
    /// Take over the project's latgen.lock as this environment's lock (once, when
    /// environments are added to a live project): its placement stays the live one, and
    /// `--base` reads the live output from generated/ until the environment has its own.
    #[arg(long, value_name = "ENV", conflicts_with_all = ["base", "check"])]
    pub adopt_lock: Option<String>,
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
    let envs = args
        .input
        .envs(args.out.output.as_ref())
        .and_then(|mut envs| {
            if let Some(env) = &args.adopt_lock {
                adopting(&mut envs, env)?;
            }
            Ok(envs)
        });
    render(&opts, envs, ui)
}

/// Marks the environment that adopts the project's lock; it must be one of those rendered.
fn adopting(
    envs: &mut [crate::input::ProjectPaths],
    env: &str,
) -> Result<(), crate::diag::Diagnostic> {
    match envs.iter_mut().find(|p| p.env.as_deref() == Some(env)) {
        Some(paths) => {
            paths.adopt_lock = true;
            Ok(())
        }
        None => Err(crate::diag::Diagnostic::error(
            crate::diag::codes::Code::InvalidConfig,
            format!("--adopt-lock {env}: environment {env} is not among those rendered"),
        )
        .help(format!(
            "render it: `latgen render --env {env} --adopt-lock {env}` (or `--env all`), with environments/{env}.yaml in place"
        ))),
    }
}
