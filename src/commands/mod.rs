//! Layer 12, commands: the subcommands, one module each: its arguments and a `run` that
//! goes through the shared stages ([`crate::pipeline::prepare`],
//! [`crate::pipeline::build`]) and adds its own last step. Each returns an [`Exit`];
//! `cli.rs` turns it into the exit code.

pub(crate) mod args;
pub(crate) mod check;
pub mod completions;
pub(crate) mod cost;
pub(crate) mod deploy;
pub(crate) mod explain;
pub(crate) mod import;
pub(crate) mod init;
pub(crate) mod man;
pub(crate) mod manifests;
pub(crate) mod move_app;
pub(crate) mod plan;
pub(crate) mod promote;
pub(crate) mod render;
pub(crate) mod render_base;
pub(crate) mod schema;
pub(crate) mod status;
pub(crate) mod trace;

use std::path::Path;

use crate::diag::{Diagnostic, Diagnostics, Sources, render_human};
use crate::input::ProjectPaths;
use crate::input::confine::Project;
use crate::render::Templates;

/// How a command ended. Exit codes follow ripgrep's spirit: success, "found something"
/// (stale output, findings, an unreachable request), or an error of usage, input or I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    Success,
    Found,
    Error,
}

impl Exit {
    /// The worse of two outcomes: an error over a finding over success.
    pub fn worst(self, other: Exit) -> Exit {
        if self.exit_code() >= other.exit_code() {
            self
        } else {
            other
        }
    }

    pub fn exit_code(self) -> u8 {
        match self {
            Exit::Success => 0,
            Exit::Found => 1,
            Exit::Error => 2,
        }
    }
}

/// What every command needs to know about the terminal it writes to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ui {
    /// Whether diagnostics on stderr are colored.
    pub color: bool,
}

impl Ui {
    /// Prints diagnostics on stderr, above the progress line if one is drawn.
    pub fn report(self, diags: &Diagnostics, sources: &Sources) {
        if !diags.is_empty() {
            crate::diag::progress::suspend(|| {
                eprint!("{}", render_human(diags, sources, self.color))
            });
        }
    }

    /// Prints one diagnostic that ends the command.
    pub fn fail(self, d: Diagnostic, sources: &Sources) -> Exit {
        let mut diags = Diagnostics::new();
        diags.push(d);
        self.report(&diags, sources);
        Exit::Error
    }

    /// Load → validate → plan → render in memory, reporting problems; None when it fails.
    /// With `verify`, the built-in templates' output is read back too (`--verify`).
    pub fn build(
        self,
        paths: &ProjectPaths,
        templates: Option<&Path>,
        verify: bool,
    ) -> Option<crate::pipeline::Built> {
        let project = Project::new(&paths.root);
        let templates = match Templates::load(templates.map(|d| (d, &project))) {
            Ok(t) => t.verifying(verify),
            Err(d) => {
                self.fail(d, &Sources::default());
                return None;
            }
        };
        match crate::pipeline::build(paths, &templates) {
            Ok(b) => Some(b),
            Err(failure) => {
                self.report(&failure.diags, &failure.sources);
                None
            }
        }
    }

    /// Load → validate → plan, reporting problems; None when the project cannot be planned.
    pub fn prepare(self, paths: &ProjectPaths) -> Option<crate::plan::prepared::Prepared> {
        let run = crate::pipeline::prepare(paths);
        self.report(&run.diags, &run.sources);
        run.prepared
    }
}

/// Writes a command's whole output; a closed or failing stdout is an error, so that a
/// consumer such as Argo CD never takes a cut stream for the full one.
pub(crate) fn to_stdout(bytes: &[u8]) -> Exit {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Exit::Success,
        // The reader went away (`latgen man | head`): nothing to report.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Exit::Error,
        Err(e) => {
            eprintln!("error: cannot write to stdout: {e}");
            Exit::Error
        }
    }
}

/// Runs `one` once per environment chosen with `--env` (once, in a project without
/// environments), saying on stderr which environment each run is when there are several.
/// Every environment runs, whatever the one before found; the worst outcome is the exit.
pub(crate) fn per_env(
    envs: Result<Vec<ProjectPaths>, Diagnostic>,
    ui: Ui,
    mut one: impl FnMut(ProjectPaths) -> Exit,
) -> Exit {
    let envs = match envs {
        Ok(e) => e,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    let many = envs.len() > 1;
    let mut worst = Exit::Success;
    for paths in envs {
        if many && let Some(name) = paths.env_name() {
            eprintln!("environment {name}:");
        }
        worst = worst.worst(one(paths));
    }
    worst
}
