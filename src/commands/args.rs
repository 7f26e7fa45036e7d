//! Arguments more than one command takes: the project's files (`InputArgs`, with `--env`),
//! and the groups `-o`, `--templates` and `--verify`, each flattened into the commands that
//! take it. A command whose help words one of them its own way says so with `mut_arg`.

use std::path::{Path, PathBuf};

use clap::ValueEnum;

use crate::diag::Diagnostic;
use crate::diag::codes::Code;
use crate::input::ProjectPaths;
use crate::manifest::layout::Side;
use crate::ops::project::{choose_envs, only_one};

#[derive(Debug, clap::Args)]
pub(crate) struct InputArgs {
    /// Folder of app declarations (one YAML file per app, walked recursively).
    #[arg(default_value = "apps")]
    pub apps: PathBuf,
    /// Project settings [default: latgen.yaml beside the apps folder].
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Group assignments [default: latgen.lock beside the apps folder].
    #[arg(long)]
    pub lock: Option<PathBuf>,
    #[command(flatten)]
    pub env: EnvArg,
}

/// `--env`.
#[derive(Debug, clap::Args)]
pub(crate) struct EnvArg {
    /// The environment (`environments/<NAME>.yaml`), or `all`: each with its own lock
    /// (locks/NAME.lock) and output (generated/NAME/). Required in a project with
    /// environments; refused in one without.
    #[arg(long, value_name = "NAME|all")]
    pub env: Option<String>,
}

/// `-o`: the output folder.
#[derive(Debug, clap::Args)]
pub(crate) struct OutputArg {
    /// Output folder [default: generated beside the apps folder].
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

/// `--templates`.
#[derive(Debug, clap::Args)]
pub(crate) struct TemplatesArg {
    /// Folder of templates to use instead of the built-in ones (same file names).
    #[arg(long)]
    pub templates: Option<PathBuf>,
}

/// `--verify`.
#[derive(Debug, clap::Args)]
pub(crate) struct VerifyArg {
    /// Parse what the built-in templates render back into typed objects too, and stop
    /// when one is not exactly what latgen meant (custom templates' output always is).
    #[arg(long)]
    pub verify: bool,
}

impl InputArgs {
    /// The project's paths once per environment chosen with `--env` (once, as given, in a
    /// project without environments), with the output folder given by `-o`, if any.
    pub fn envs(&self, output: Option<&PathBuf>) -> Result<Vec<ProjectPaths>, Diagnostic> {
        let paths = self.paths_out(output);
        let Some(chosen) = choose_envs(&paths.root, self.env.env.as_deref())? else {
            return Ok(vec![paths]);
        };
        if chosen.len() > 1 && self.lock.is_some() {
            return Err(Diagnostic::error(
                Code::UnknownEnvironment,
                "--lock names one lock, and --env all chooses more than one environment",
            )
            .help("give --env NAME with --lock, or leave out --lock for locks/<env>.lock"));
        }
        Ok(chosen
            .iter()
            .map(|n| paths.in_env(n, self.lock.is_some(), output.is_some()))
            .collect())
    }

    /// [`InputArgs::envs`] for a command that works on one environment at a time.
    pub fn one_env(&self, output: Option<&PathBuf>) -> Result<ProjectPaths, Diagnostic> {
        only_one(self.envs(output)?)
    }

    pub fn paths(&self) -> ProjectPaths {
        project_paths(&self.apps, self.config.as_ref(), self.lock.as_ref())
    }

    /// [`InputArgs::paths`] with the output folder given by `-o`, if any.
    pub fn paths_out(&self, output: Option<&PathBuf>) -> ProjectPaths {
        let mut paths = self.paths();
        paths.output = output_dir(output, &paths);
        paths
    }
}

/// The output folder a command reads or writes: `-o` as given, else `generated` in the
/// project folder, beside the apps folder like the settings and the lock, so that a run
/// from elsewhere (`latgen render ../repo/apps`) writes the same tree it locks.
pub(crate) fn output_dir(given: Option<&PathBuf>, paths: &ProjectPaths) -> PathBuf {
    given
        .cloned()
        .unwrap_or_else(|| paths.root.join(DEFAULT_OUTPUT))
}

use crate::input::DEFAULT_OUTPUT;

/// The value of the global `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// The project's files: settings and lock beside the apps folder unless given.
pub(crate) fn project_paths(
    apps: &Path,
    config: Option<&PathBuf>,
    lock: Option<&PathBuf>,
) -> ProjectPaths {
    let root = apps.parent().unwrap_or(Path::new(""));
    let mut paths = ProjectPaths::at_root(root);
    paths.apps_dir = apps.to_path_buf();
    if let Some(c) = config {
        paths.config = c.clone();
        paths.config_given = true;
    }
    if let Some(l) = lock {
        paths.lock = l.clone();
    }
    paths
}

/// One half of the output, one per Argo CD Application.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub(crate) enum OnlySide {
    Lattice,
    Kong,
}

impl OnlySide {
    pub fn side(self) -> Side {
        match self {
            OnlySide::Lattice => Side::Lattice,
            OnlySide::Kong => Side::Kong,
        }
    }
}
