//! `latgen explain CODE`: what a finding code means, its default severity, and an example
//! of an input that gets it. Also makes the book's page of codes
//! (`docs/src/reference/codes.md`).

use crate::diag::codes::Code;
use crate::ops::shell::{Exit, to_stdout};
use crate::report::plural;

#[derive(Debug, clap::Args)]
pub(crate) struct ExplainArgs {
    /// The finding code (`nested-prefix`); without one, every code is listed.
    #[arg(value_parser = CodeName, hide_possible_values = true)]
    pub code: Option<String>,
}

/// A finding code's name: any text (an unknown one is `run`'s to refuse, with a "did you
/// mean"), whose possible values are the codes, so that completion offers them (the list
/// is too long for the help, which hides it).
#[derive(Debug, Clone, Copy)]
struct CodeName;

impl clap::builder::TypedValueParser for CodeName {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(Code::ALL.iter().map(|c| {
            clap::builder::PossibleValue::new(c.as_str()).help(c.summary())
        })))
    }
}

pub(crate) fn run(args: &ExplainArgs) -> Exit {
    let Some(name) = &args.code else {
        return to_stdout(list().as_bytes());
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
        return Exit::Error;
    };
    to_stdout(text(code).as_bytes())
}

/// Every code with its default severity and summary, one a line, as `latgen explain`
/// prints them.
pub(crate) fn list() -> String {
    Code::ALL
        .iter()
        .map(|code| {
            format!(
                "{:<24} {:<8} {}\n",
                code.as_str(),
                code.severity().as_str(),
                code.summary()
            )
        })
        .collect()
}

/// The explanation of one code, as printed.
pub(crate) fn text(code: Code) -> String {
    format!(
        "{code} ({}): {}\n\n{}\n\nMore: {}\n",
        code.severity().as_str(),
        code.summary(),
        example(code),
        code.help_url()
    )
}

#[cfg(test)]
/// The generated part of the book's page of codes, `docs/src/reference/codes.md` (between
/// `<!-- codes:start -->` and `<!-- codes:end -->`): the table, then one section per code,
/// which is where [`Code::help_url`] points.
pub(crate) fn markdown_page() -> String {
    format!("{}\n{}", markdown_table(), markdown_sections())
}

#[cfg(test)]
/// The table of codes: one row per code, in the order of [`Code::ALL`], each code linked to
/// its section.
pub(crate) fn markdown_table() -> String {
    let mut out = String::from("| code | severity | what it means |\n|---|---|---|\n");
    for code in Code::ALL {
        out.push_str(&format!(
            "| [`{code}`](#{code}) | {} | {} |\n",
            code.severity().as_str(),
            code.summary().replace('|', "\\|")
        ));
    }
    out
}

#[cfg(test)]
/// One `### <code>` section per code (so that its anchor is the code's name): the default
/// severity, the summary, and the example `latgen explain CODE` prints.
pub(crate) fn markdown_sections() -> String {
    Code::ALL
        .iter()
        .map(|code| {
            format!(
                "### {code}\n\n**{}**: {}\n\n```text\n{}\n```\n",
                code.severity().as_str(),
                code.summary(),
                example(*code)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// An input that gets the code, the headline latgen prints for it and its help line, from
/// `explain/examples.txt` (one `## <code>` section each; a test checks that every code has
/// one).
pub(crate) fn example(code: Code) -> &'static str {
    const EXAMPLES: &str = include_str!("explain/examples.txt");
    let head = format!("## {}\n", code.as_str());
    EXAMPLES
        .split_once(head.as_str())
        .map(|(_, rest)| rest.split("\n## ").next().unwrap_or(rest).trim_end())
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_an_example() {
        for code in Code::ALL {
            assert!(!example(*code).is_empty(), "no example for {code}");
        }
    }
}
