//! `latgen check`'s report, printed in the format asked for: each environment's under
//! its name, then what shows only between them, and the exit that its findings make.

use std::io::IsTerminal;

use super::shell::{Exit, Ui};
use crate::check::CheckReport;
use crate::diag::codes::Severity;
use crate::diag::{Diagnostics, Sources, render_human};
use crate::report::markdown::HEADER;

// The formats are described in `--format`'s own help: a described value would make clap
// print `check --help` in its long layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    // Findings with the source line, for people.
    Human,
    // One JSON object per finding and line.
    Json,
    // GitHub Actions annotations (`::error file=…::…`).
    Github,
    // SARIF 2.1.0, for code scanning.
    Sarif,
    // A PR comment: the findings, then (with `--base`) what the change does and costs.
    Markdown,
}

/// Every environment's report, each under its name, then what shows only between them.
pub(super) fn finish_all(
    (deny_warnings, form): (bool, Format),
    reports: Vec<(String, CheckReport)>,
    ui: Ui,
) -> Exit {
    let facts: Vec<_> = reports
        .iter()
        .filter_map(|(_, r)| r.facts.as_ref())
        .collect();
    let between = crate::check::across_environments::between(&facts);
    // What lies between environments is said at their overlays.
    let mut sources = Sources::default();
    for f in &facts {
        let (file, text) = f.overlay();
        sources.insert(file.to_path_buf(), text.to_string());
    }
    let mut merged = Diagnostics::new();
    let mut text = String::new();
    if form == Format::Markdown {
        text.push_str(HEADER);
    }
    for (name, report) in &reports {
        match form {
            Format::Human | Format::Markdown => {
                text.push_str(&heading(form, &format!("environment `{name}`")));
                text.push_str(&part(form, report, ui.color));
            }
            _ => merged.extend_from(report.diags.iter().cloned().map(|mut d| {
                d.message = format!("[{name}] {}", d.message);
                d
            })),
        }
    }
    let between_report = CheckReport {
        diags: between,
        sources,
        diff: String::new(),
        summary: None,
        facts: None,
    };
    match form {
        Format::Human | Format::Markdown => {
            text.push_str(&heading(form, "between environments"));
            text.push_str(&part(form, &between_report, ui.color));
        }
        _ => {
            merged.extend(between_report.diags.clone());
            let all = CheckReport {
                diags: merged,
                ..between_report
            };
            return print_and_exit(deny_warnings, format(form, &all, ui.color), &all.diags);
        }
    }
    let mut all = between_report.diags;
    for (_, r) in reports {
        all.extend(r.diags);
    }
    print_and_exit(deny_warnings, text, &all)
}

/// One part of a several-environment report: a PR comment's part without the marker and
/// title, which the whole comment has once, first (a workflow finds its comment by them).
fn part(form: Format, report: &CheckReport, color: bool) -> String {
    match form {
        Format::Markdown => {
            crate::report::markdown::markdown_part(&report.diags, report.summary.as_ref())
        }
        _ => format(form, report, color),
    }
}

/// The heading of one part of a several-environment report.
pub(super) fn heading(format: Format, name: &str) -> String {
    match format {
        Format::Markdown => format!("## {}{}\n\n", name[..1].to_uppercase(), &name[1..]),
        _ => format!("== {} ==\n", name.replace('`', "")),
    }
}

/// Prints the report and says how the check ended.
pub(super) fn finish(deny_warnings: bool, form: Format, report: CheckReport, ui: Ui) -> Exit {
    let text = format(form, &report, ui.color);
    print_and_exit(deny_warnings, text, &report.diags)
}

/// Prints a report's text and says how the check ended, from its findings.
pub(super) fn print_and_exit(deny_warnings: bool, text: String, diags: &Diagnostics) -> Exit {
    crate::diag::progress::clear();
    print!("{text}");
    if diags.iter().any(|d| d.code.is_operational()) {
        return Exit::Error;
    }
    let failing = diags
        .iter()
        .any(|d| d.severity == Severity::Error || deny_warnings);
    if failing { Exit::Found } else { Exit::Success }
}

/// The findings a rollout step leaves for its later steps, said once (human output).
fn transient_note(s: &crate::rollout::summary::PrSummary) -> Option<String> {
    let p = s.progress.as_ref()?;
    let (verb, them) = match s.transient.len() {
        1 => ("is", "it"),
        _ => ("are", "them"),
    };
    (!s.transient.is_empty()).then(|| {
        format!(
            "note: {} of step {} of {} {} its expected state (rules, and their apps' callers, live before the Kong routes that reach them, or kept until Kong has moved off them), not findings: the later steps resolve {}\n",
            crate::report::plural(s.transient.len(), "unreachable rule"),
            p.step,
            p.of,
            verb,
            them,
        )
    })
}

pub(super) fn format(format: Format, report: &CheckReport, color: bool) -> String {
    let diags = &report.diags;
    match format {
        Format::Human => {
            let mut t = render_human(
                diags,
                &report.sources,
                color && std::io::stdout().is_terminal(),
            );
            if diags.is_empty() {
                t.push_str("no findings\n");
            }
            if let Some(note) = report.summary.as_ref().and_then(transient_note) {
                t.push_str(&note);
            }
            if !report.diff.is_empty() {
                t.push('\n');
                t.push_str(&report.diff);
            }
            t
        }
        Format::Json => crate::report::json_lines(diags),
        Format::Github => crate::report::github(diags),
        Format::Sarif => crate::report::sarif(diags),
        Format::Markdown => crate::report::markdown::markdown(diags, report.summary.as_ref()),
    }
}
