//! `latgen man`: the man pages, from the CLI definition.

use std::path::{Path, PathBuf};

use crate::ops::shell::{Exit, to_stdout};

#[derive(Debug, clap::Args)]
pub(crate) struct ManArgs {
    /// Write every page (latgen.1, and latgen-<command>.1 for each command) to this folder
    /// instead of printing the top-level page.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// `cli` is the whole command-line definition the pages document.
pub(crate) fn run(args: &ManArgs, cli: clap::Command) -> Exit {
    let pages = match pages(cli) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: cannot render the man pages: {e}");
            return Exit::Error;
        }
    };
    let Some(dir) = &args.out else {
        return to_stdout(&pages[0].1);
    };
    match write_pages(&pages, dir) {
        Ok(()) => {
            eprintln!(
                "wrote {} to {}",
                crate::report::plural(pages.len(), "man page"),
                dir.display()
            );
            Exit::Success
        }
        Err(e) => {
            eprintln!("error: {e}");
            Exit::Error
        }
    }
}

/// The page of `cli` first, then one per command, each with its file name as the top-level
/// page refers to it (`latgen-render(1)` is `latgen-render.1`).
fn pages(cli: clap::Command) -> std::io::Result<Vec<(String, Vec<u8>)>> {
    // Built, each command's name is `latgen-<command>`; clap's `help` has no page.
    let mut cli = cli.disable_help_subcommand(true);
    cli.build();
    let mut pending = vec![cli];
    let mut pages = Vec::new();
    while let Some(cmd) = pending.pop() {
        let subs: Vec<clap::Command> = cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .cloned()
            .collect();
        pending.extend(subs.into_iter().rev());
        let name = cmd.get_display_name().unwrap_or(cmd.get_name()).to_string();
        let mut page = Vec::new();
        clap_mangen::Man::new(cmd).render(&mut page)?;
        pages.push((format!("{name}.1"), page));
    }
    Ok(pages)
}

/// Writes the pages into `dir` (made when missing) through the output stage: each page
/// whole, and none when one cannot be written.
fn write_pages(pages: &[(String, Vec<u8>)], dir: &Path) -> Result<(), String> {
    let mut added = crate::output::Additions::new(dir);
    let written = added.folder(dir).and_then(|_| {
        (pages.iter()).try_for_each(|(file, page)| added.replace(&dir.join(file), page))
    });
    match written {
        Ok(()) => {
            added.finish();
            Ok(())
        }
        Err(d) => {
            added.undo();
            Err(d.message)
        }
    }
}
