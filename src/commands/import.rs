//! `latgen import`: its arguments, run by [`crate::ops::latgen_import`].

use std::path::PathBuf;

use super::args::project_paths;
use crate::ops::latgen_import::{ImportOptions, run as import};
use crate::ops::shell::{Exit, Ui};

#[derive(Debug, clap::Args)]
pub(crate) struct ImportArgs {
    /// Manifest files or folders of the live setup (YAML or JSON, several documents a
    /// file, `kind: List` included).
    #[arg(required = true)]
    pub manifests: Vec<PathBuf>,
    /// The apps folder to write the declarations into, one file per app.
    #[arg(short, long, default_value = "apps")]
    pub output: PathBuf,
    /// Project settings [default: latgen.yaml beside the apps folder].
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Group assignments [default: latgen.lock beside the apps folder].
    #[arg(long)]
    pub lock: Option<PathBuf>,
    /// Write what could be imported even when some objects could not be.
    #[arg(long)]
    pub partial: bool,
    /// The environment whose live setup this is (`environments/<NAME>.yaml`): its lock
    /// (locks/NAME.lock) records it; the declarations are shared, so an app declared
    /// already must be what this environment runs.
    #[arg(long, value_name = "NAME")]
    pub env: Option<String>,
}

pub(crate) fn run(args: &ImportArgs, ui: Ui) -> Exit {
    let mut paths = project_paths(&args.output, args.config.as_ref(), args.lock.as_ref());
    if let Some(env) = &args.env {
        if env == "all" {
            let d = crate::diag::Diagnostic::error(
                crate::diag::codes::Code::UnknownEnvironment,
                "import reads one environment's live setup: --env names it, not all",
            )
            .help("import each environment's export with its own --env NAME");
            return ui.fail(d, &crate::diag::Sources::default());
        }
        if let Err(d) = crate::ops::project::choose_envs(&paths.root, Some(env)) {
            return ui.fail(d, &crate::diag::Sources::default());
        }
        paths = paths.in_env(env, args.lock.is_some(), false);
    }
    let opts = ImportOptions {
        manifests: &args.manifests,
        apps_dir: &args.output,
        partial: args.partial,
    };
    import(&opts, &paths, ui)
}
