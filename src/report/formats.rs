//! Findings in machine formats: JSON lines, GitHub Actions workflow commands, SARIF 2.1.0.

use std::path::{Component, Path};

use serde_json::{Value, json};

use crate::diag::codes::Code;
use crate::diag::codes::Severity;
use crate::diag::{Diagnostic, Diagnostics, Span};

/// `1 error`, `2 errors`: a count and its noun, for people.
pub(crate) fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// A bar of `width` cells for `used` of `budget`: full cells for the share used, light
/// ones for the rest; over the budget, every cell full and a `▶` after it.
pub(crate) fn bar(used: f64, budget: f64, width: usize) -> String {
    let share = if budget > 0.0 { used / budget } else { 1.0 };
    let full = ((share * width as f64).round() as usize).min(width);
    let mut out = "█".repeat(full) + &"░".repeat(width - full);
    if share > 1.0 {
        out.push('▶');
    }
    out
}

/// A path as a repository-relative URI with `/` separators, when it can be made one.
pub(crate) fn repo_path(p: &Path) -> String {
    let rel = if p.is_absolute() {
        std::env::current_dir()
            .ok()
            .and_then(|cwd| p.strip_prefix(&cwd).ok().map(Path::to_path_buf))
            .unwrap_or_else(|| p.to_path_buf())
    } else {
        p.to_path_buf()
    };
    rel.components()
        .filter(|c| !matches!(c, Component::CurDir))
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

fn location_json(span: &Span) -> Value {
    json!({
        "file": repo_path(&span.file),
        "line": span.line.max(1),
        "column": span.column.max(1),
    })
}

/// One JSON object per line, per finding, in the report's order.
pub(crate) fn json_lines(diags: &Diagnostics) -> String {
    let mut out = String::new();
    for d in diags.iter() {
        let mut v = json!({
            "code": d.code,
            "severity": d.severity.as_str(),
            "message": d.message,
            "help": d.help,
            "related": d.related.iter().map(|l| {
                let mut r = location_json(&l.span);
                r["message"] = json!(l.message);
                r
            }).collect::<Vec<_>>(),
        });
        if let Some(span) = &d.span {
            let loc = location_json(span);
            for key in ["file", "line", "column"] {
                v[key] = loc[key].clone();
            }
        }
        out.push_str(&v.to_string());
        out.push('\n');
    }
    out
}

/// Escaping of workflow command data and properties (the runner's `toCommandValue`
/// and `escapeProperty` rules).
fn gh_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn gh_property(s: &str) -> String {
    gh_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// `::error file=…,line=…,col=…,title=…::message` lines for GitHub Actions annotations.
pub(crate) fn github(diags: &Diagnostics) -> String {
    let mut out = String::new();
    for d in diags.iter() {
        let level = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut props = Vec::new();
        if let Some(span) = &d.span {
            props.push(format!("file={}", gh_property(&repo_path(&span.file))));
            if span.line > 0 {
                props.push(format!("line={}", span.line));
                if span.column > 0 {
                    props.push(format!("col={}", span.column));
                }
            }
        }
        props.push(format!(
            "title={}",
            gh_property(&format!("latgen {}", d.code))
        ));
        let mut message = d.message.clone();
        if let Some(h) = &d.help {
            message.push_str("\nhelp: ");
            message.push_str(h);
        }
        out.push_str(&format!(
            "::{level} {}::{}\n",
            props.join(","),
            gh_data(&message)
        ));
    }
    out
}

fn sarif_location(span: &Span, message: Option<&str>) -> Value {
    let mut region = json!({ "startLine": span.line.max(1) });
    if span.column > 0 {
        region["startColumn"] = json!(span.column);
    }
    let mut loc = json!({
        "physicalLocation": {
            "artifactLocation": { "uri": repo_path(&span.file) },
            "region": region,
        }
    });
    if let Some(m) = message {
        loc["message"] = json!({ "text": m });
    }
    loc
}

/// A SARIF 2.1.0 log with one run, the rules that fired, and one result per finding.
pub(crate) fn sarif(diags: &Diagnostics) -> String {
    let mut used: Vec<Code> = diags.iter().map(|d| d.code).collect();
    used.sort();
    used.dedup();
    let rules: Vec<Value> = used
        .iter()
        .map(|code| {
            json!({
                "id": code.as_str(),
                "name": code.as_str(),
                "shortDescription": { "text": code.summary() },
                "fullDescription": { "text": code.summary() },
                "helpUri": code.help_url(),
                "help": { "text": format!("`latgen explain {code}` prints what it means and an example.") },
                "defaultConfiguration": { "level": sarif_level(code.severity()) },
            })
        })
        .collect();
    let results: Vec<Value> = diags
        .iter()
        .map(|d: &Diagnostic| {
            let mut text = d.message.clone();
            if let Some(h) = &d.help {
                text.push_str("\nhelp: ");
                text.push_str(h);
            }
            let mut r = json!({
                "ruleId": d.code,
                "ruleIndex": used.iter().position(|u| *u == d.code),
                "level": sarif_level(d.severity),
                "message": { "text": text },
            });
            if let Some(span) = &d.span {
                r["locations"] = json!([sarif_location(span, None)]);
            }
            if !d.related.is_empty() {
                r["relatedLocations"] = Value::Array(
                    d.related
                        .iter()
                        .enumerate()
                        .map(|(i, l)| {
                            let mut loc = sarif_location(&l.span, Some(&l.message));
                            loc["id"] = json!(i);
                            loc
                        })
                        .collect(),
                );
            }
            r
        })
        .collect();
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "latgen",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "results": results,
        }],
    });
    let mut text = serde_json::to_string_pretty(&log).expect("JSON values serialize");
    text.push('\n');
    text
}

fn sarif_level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_escapes_data_and_properties() {
        let mut diags = Diagnostics::new();
        diags.push(
            Diagnostic::error(Code::InvalidPath, "100% bad\nreally").at(Span::new(
                "apps/a,b:c.yaml",
                3,
                9,
            )),
        );
        assert_eq!(
            github(&diags),
            "::error file=apps/a%2Cb%3Ac.yaml,line=3,col=9,title=latgen invalid-path::100%25 bad%0Areally\n"
        );
    }

    #[test]
    fn json_lines_are_one_object_per_finding_with_1_based_positions() {
        let mut diags = Diagnostics::new();
        diags.push(
            Diagnostic::error(Code::StaleOutput, "x").at(Span::file("generated/kong/a.yaml")),
        );
        diags.push(Diagnostic::warning(Code::GroupAtQuota, "y").at(Span::new("./g/b.yaml", 4, 0)));
        let text = json_lines(&diags);
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["line"], 1);
        assert_eq!(lines[0]["column"], 1);
        assert_eq!(lines[1]["file"], "g/b.yaml");
        assert_eq!(lines[1]["line"], 4);
        assert_eq!(lines[1]["severity"], "warning");
    }
}
