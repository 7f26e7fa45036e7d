//! `latgen man`: the man page, from the CLI definition.

use super::{Outcome, to_stdout};

/// `cli` is the whole command-line definition the page documents.
pub fn run(cli: clap::Command) -> Outcome {
    let mut page = Vec::new();
    if let Err(e) = clap_mangen::Man::new(cli).render(&mut page) {
        eprintln!("error: cannot render the man page: {e}");
        return Outcome::Error;
    }
    to_stdout(&page)
}
