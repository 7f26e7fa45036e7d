//! What every operation shares of the terminal: diagnostics on stderr (colored or not, above
//! the progress line), a command's whole output on stdout, and how the operation ended
//! ([`Exit`]), which the binary turns into its exit code.

use crate::diag::{Diagnostic, Diagnostics, Sources, render_human};

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
