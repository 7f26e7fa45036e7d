//! The subcommands, one module each: its arguments and a `run` that goes through the shared
//! stages ([`crate::prepare`], [`crate::build`]) and adds its own last step. Each returns an
//! [`Outcome`]; `cli.rs` turns it into the exit code.

pub mod args;
pub mod check;
pub mod completions;
pub mod cost;
pub mod deploy;
pub mod explain;
pub mod init;
pub mod man;
pub mod manifests;
pub mod move_app;
pub mod plan;
pub mod render;
pub mod render_base;
pub mod schema;
pub mod status;
pub mod trace;

use std::path::Path;

use crate::confine::Project;
use crate::diag::{Diagnostic, Diagnostics, Sources, render_human};
use crate::load::ProjectPaths;
use crate::render::Templates;

/// How a command ended. Exit codes follow ripgrep's spirit: success, "found something"
/// (stale output, findings, an unreachable request), or an error of usage, input or I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success,
    Found,
    Error,
}

impl Outcome {
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Success => 0,
            Outcome::Found => 1,
            Outcome::Error => 2,
        }
    }
}

/// What every command needs to know about the terminal it writes to.
#[derive(Debug, Clone, Copy)]
pub struct Ui {
    /// Whether diagnostics on stderr are colored.
    pub color: bool,
}

impl Ui {
    /// Prints diagnostics on stderr, above the progress line if one is drawn.
    pub fn report(self, diags: &Diagnostics, sources: &Sources) {
        if !diags.is_empty() {
            crate::progress::suspend(|| eprint!("{}", render_human(diags, sources, self.color)));
        }
    }

    /// Prints one diagnostic that ends the command.
    pub fn fail(self, d: Diagnostic, sources: &Sources) -> Outcome {
        let mut diags = Diagnostics::new();
        diags.push(d);
        self.report(&diags, sources);
        Outcome::Error
    }

    /// Load → validate → plan → render in memory, reporting problems; None when it fails.
    /// With `verify`, the built-in templates' output is read back too (`--verify`).
    pub fn build(
        self,
        paths: &ProjectPaths,
        templates: Option<&Path>,
        verify: bool,
    ) -> Option<crate::Built> {
        let project = Project::new(&paths.root);
        let templates = match Templates::load(templates.map(|d| (d, &project))) {
            Ok(t) => t.verifying(verify),
            Err(d) => {
                self.fail(d, &Sources::default());
                return None;
            }
        };
        match crate::build(paths, &templates) {
            Ok(b) => Some(b),
            Err(failure) => {
                self.report(&failure.diags, &failure.sources);
                None
            }
        }
    }

    /// Load → validate → plan, reporting problems; None when the project cannot be planned.
    pub fn prepare(self, paths: &ProjectPaths) -> Option<crate::Prepared> {
        let run = crate::prepare(paths);
        self.report(&run.diags, &run.sources);
        run.prepared
    }
}

pub use crate::report::plural;

/// Writes a command's whole output; a closed or failing stdout is an error, so that a
/// consumer such as Argo CD never takes a cut stream for the full one.
pub fn to_stdout(bytes: &[u8]) -> Outcome {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Outcome::Success,
        // The reader went away (`latgen man | head`): nothing to report.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Outcome::Error,
        Err(e) => {
            eprintln!("error: cannot write to stdout: {e}");
            Outcome::Error
        }
    }
}
