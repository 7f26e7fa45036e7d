//! `latgen completions`: the script that registers latgen's completions with a shell. The
//! script asks latgen itself on each Tab (clap_complete's dynamic completion: the shell
//! runs `latgen` with [`COMPLETE_VAR`] set, which `main` answers before anything else), so
//! what is offered comes from the CLI definition and from the project the shell is in:
//! subcommands and options, the finding codes after `explain`, the app names after `move`.
//! A script written once keeps up with the project; after an upgrade of latgen it is
//! printed anew (clap_complete does not promise that the two sides keep one protocol).

use std::collections::BTreeSet;
use std::path::Path;

use clap_complete::engine::CompletionCandidate;

use crate::ops::shell::{Exit, to_stdout};

/// The environment variable the script sets when it asks latgen for completions (rather
/// than clap's default `COMPLETE`, a name another tool may well have set).
pub const COMPLETE_VAR: &str = "LATGEN_COMPLETE";

#[derive(Debug, clap::Args)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

pub(crate) fn run(args: &CompletionsArgs) -> Exit {
    let name = args.shell.to_string();
    let shells = clap_complete::env::Shells::builtins();
    let Some(shell) = shells.completer(&name) else {
        eprintln!("error: latgen has no completions for {name}");
        return Exit::Error;
    };
    let mut script = Vec::new();
    // `latgen` both as the command completed and as the program asked: the one on PATH,
    // which is what the user runs, wherever this copy was when it printed the script.
    if let Err(e) =
        shell.write_registration(COMPLETE_VAR, "latgen", "latgen", "latgen", &mut script)
    {
        eprintln!("error: cannot write the {name} completion script: {e}");
        return Exit::Error;
    }
    to_stdout(&script)
}

/// The names of the apps of the project the shell is in, for `latgen move <TAB>`: the
/// declarations in the nearest `apps/` folder at or above the current folder, each named
/// by its top-level `name:` line or else its file stem, as `render` names it. Read line by
/// line, not parsed or validated: a Tab must answer at once, and a name that is not right
/// yet is still the one the user means.
pub(crate) fn app_names() -> Vec<CompletionCandidate> {
    let Ok(here) = std::env::current_dir() else {
        return Vec::new();
    };
    let Some(root) = here.ancestors().find(|d| d.join("apps").is_dir()) else {
        return Vec::new();
    };
    let project = crate::input::confine::Project::new(root);
    let mut ignored = crate::diag::Diagnostics::new();
    let files = crate::input::find_declarations(&root.join("apps"), &project, &mut ignored);
    let names: BTreeSet<String> = files.iter().filter_map(|f| declared_name(f)).collect();
    names.into_iter().map(CompletionCandidate::new).collect()
}

/// An app declaration's name, from its text: the value of its top-level `name:` line, else
/// the file stem; None for a file that declares nothing (empty, or only comments).
fn declared_name(file: &Path) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    let mut declares = false;
    for line in text.lines() {
        let t = line.trim();
        declares |= !t.is_empty() && !t.starts_with('#') && t != "---";
        if let Some(value) = line.strip_prefix("name:") {
            let value = value.split(" #").next().unwrap_or_default().trim();
            let value = value.trim_matches(|c| c == '"' || c == '\'');
            if !value.is_empty() {
                return Some(value.to_string());
            }
        }
    }
    if !declares {
        return None;
    }
    file.file_stem()?.to_str().map(str::to_string)
}
