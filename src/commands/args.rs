//! Arguments more than one command takes.

use std::path::{Path, PathBuf};

use clap::ValueEnum;

use crate::input::ProjectPaths;
use crate::manifest::layout::Side;

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
}

impl InputArgs {
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

/// `--color`, on the commands that print diagnostics.
#[derive(Debug, clap::Args)]
pub(crate) struct ColorArg {
    /// When to color diagnostics [default: auto: on a terminal, unless NO_COLOR is set].
    #[arg(long, value_enum)]
    pub color: Option<ColorChoice>,
}

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
