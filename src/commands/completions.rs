//! `latgen completions`: a shell completion script, from the CLI definition.

use super::{Outcome, to_stdout};

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `cli` is the whole command-line definition the script completes.
pub fn run(args: &CompletionsArgs, mut cli: clap::Command) -> Outcome {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cli, "latgen", &mut script);
    to_stdout(&script)
}
