//! Layer 0, diag (under every stage): every problem latgen finds is a [`Diagnostic`] with a
//! stable code, a severity, a place (file, 1-based line and column) and a one-line help.
//! Stages collect them instead of stopping at the first, so one run reports everything.

pub mod codes;
pub(crate) mod progress;

use crate::diag::codes::Code;
use crate::diag::codes::Severity;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A place in an input file. Lines and columns are 1-based; 0 means "the whole file".
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Span {
    pub file: PathBuf,
    pub line: u32,
    pub column: u32,
}

impl Span {
    pub fn new(file: impl Into<PathBuf>, line: u32, column: u32) -> Self {
        Span {
            file: file.into(),
            line,
            column,
        }
    }

    pub fn file(file: impl Into<PathBuf>) -> Self {
        Span::new(file, 0, 0)
    }

    pub fn at(file: &Path, loc: &serde_saphyr::Location) -> Self {
        Span::new(file, loc.line() as u32, loc.column() as u32)
    }
}

impl std::fmt::Display for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file.display())?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
            if self.column > 0 {
                write!(f, ":{}", self.column)?;
            }
        }
        Ok(())
    }
}

/// A second place involved in a finding (the other claimant of a path, ...).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Label {
    pub span: Span,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Stable kebab-case identifier; never renamed once released.
    pub code: Code,
    pub severity: Severity,
    pub message: String,
    pub span: Option<Span>,
    pub related: Vec<Label>,
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn error(code: Code, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            severity: Severity::Error,
            message: message.into(),
            span: None,
            related: Vec::new(),
            help: None,
        }
    }

    pub fn warning(code: Code, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, message)
        }
    }

    pub fn at(mut self, span: Span) -> Self {
        self.span = Some(span);
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub fn related(mut self, span: Span, message: impl Into<String>) -> Self {
        self.related.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    fn sort_key(&self) -> impl Ord + '_ {
        (
            self.span.clone(),
            self.severity,
            self.code,
            self.message.as_str(),
        )
    }
}

/// The findings of one run, in a deterministic order once [`Diagnostics::sort`] ran.
#[derive(Debug, Default, Clone)]
pub struct Diagnostics {
    items: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, d: Diagnostic) {
        self.items.push(d);
    }

    pub fn extend(&mut self, other: Diagnostics) {
        self.items.extend(other.items);
    }

    /// Adds each finding of `found` (an `Option`, a `Vec`, …).
    pub fn extend_from(&mut self, found: impl IntoIterator<Item = Diagnostic>) {
        self.items.extend(found);
    }

    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|d| d.severity == Severity::Error)
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Diagnostic> {
        self.items.iter()
    }

    /// Sorts by place, then severity and code, and drops exact repeats.
    pub fn sort(&mut self) {
        self.items.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
        self.items.dedup();
    }

    pub fn count(&self, severity: Severity) -> usize {
        self.items.iter().filter(|d| d.severity == severity).count()
    }
}

impl FromIterator<Diagnostic> for Diagnostics {
    fn from_iter<I: IntoIterator<Item = Diagnostic>>(iter: I) -> Self {
        Diagnostics {
            items: iter.into_iter().collect(),
        }
    }
}

impl IntoIterator for Diagnostics {
    type Item = Diagnostic;
    type IntoIter = std::vec::IntoIter<Diagnostic>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

/// Decides which files the printer may quote (see `confine::Project`).
pub(crate) trait QuoteGuard: std::fmt::Debug + Send + Sync {
    /// Whether the file at `path` may be quoted.
    fn may_quote(&self, path: &Path) -> bool;
}

/// The text of the input files, kept so that human output can quote the offending line.
#[derive(Debug, Default, Clone)]
pub(crate) struct Sources {
    texts: BTreeMap<PathBuf, String>,
    /// The project the texts were read from, when they were read from files.
    guard: Option<std::sync::Arc<dyn QuoteGuard>>,
}

impl Sources {
    /// Sources read from the files that `guard` covers: only a file it allows is ever
    /// quoted.
    pub fn within(guard: impl QuoteGuard + 'static) -> Self {
        Sources {
            texts: BTreeMap::new(),
            guard: Some(std::sync::Arc::new(guard)),
        }
    }

    pub fn insert(&mut self, path: PathBuf, text: String) {
        self.texts.insert(path, text);
    }

    /// Adds many texts at once: a tree built from them in one go is merged with the texts
    /// already here, which for many files costs far fewer path comparisons than inserting
    /// them one by one. A path already here takes the new text, as with [`Sources::insert`].
    pub fn extend(&mut self, texts: impl IntoIterator<Item = (PathBuf, String)>) {
        let mut more: BTreeMap<PathBuf, String> = texts.into_iter().collect();
        self.texts.append(&mut more);
    }

    /// The whole text of a file read in this run.
    pub fn text(&self, file: &Path) -> Option<&str> {
        self.texts.get(file).map(String::as_str)
    }

    /// The 1-based `line` of `file`, to quote. Inputs are refused before they are read when
    /// they lead out of the project; this checks again, at the printer, so that no later
    /// reader can make a report quote a file outside it.
    pub fn line(&self, file: &Path, line: u32) -> Option<&str> {
        if line == 0 {
            return None;
        }
        let text = self.texts.get(file)?;
        if self.guard.as_ref().is_some_and(|g| !g.may_quote(file)) {
            return None;
        }
        text.lines()
            .nth(line as usize - 1)
            .map(|l| l.trim_start_matches('\u{feff}').trim_end_matches('\r'))
    }
}

/// Renders diagnostics the way rustc and cargo-deny do: a header with the code, the place,
/// the quoted source line with a caret, related places, and the help.
pub(crate) fn render_human(diags: &Diagnostics, sources: &Sources, color: bool) -> String {
    let paint = |code: &str, s: &str| {
        if color {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    };
    let mut out = String::new();
    for d in diags.iter() {
        let sev = match d.severity {
            Severity::Error => paint("1;31", "error"),
            Severity::Warning => paint("1;33", "warning"),
        };
        let _ = writeln!(
            out,
            "{sev}{}: {}",
            paint("1", &format!("[{}]", d.code)),
            paint("1", &one_line(&d.message))
        );
        if let Some(span) = &d.span {
            write_place(&mut out, span, None, sources, &paint);
        }
        for label in &d.related {
            write_place(&mut out, &label.span, Some(&label.message), sources, &paint);
        }
        if let Some(help) = &d.help {
            let _ = writeln!(out, "   = {}: {}", paint("1", "help"), one_line(help));
        }
        out.push('\n');
    }
    let errors = diags.count(Severity::Error);
    let warnings = diags.count(Severity::Warning);
    if errors + warnings > 0 {
        let _ = writeln!(
            out,
            "{} error{}, {} warning{}",
            errors,
            if errors == 1 { "" } else { "s" },
            warnings,
            if warnings == 1 { "" } else { "s" }
        );
    }
    out
}

fn write_place(
    out: &mut String,
    span: &Span,
    note: Option<&str>,
    sources: &Sources,
    paint: &dyn Fn(&str, &str) -> String,
) {
    let place = span.to_string();
    let _ = writeln!(out, "  {} {}", paint("1;34", "-->"), one_line(&place));
    if let Some(text) = sources.line(&span.file, span.line) {
        let text = &visible(text);
        let num = span.line.to_string();
        let pad = " ".repeat(num.len());
        // Without a column, point at the line's first word.
        let column = if span.column > 0 {
            span.column as usize
        } else {
            text.chars().take_while(|c| c.is_whitespace()).count() + 1
        };
        // A very long line is cut to a window around the column, so the report stays
        // readable (a minified or hostile file can have one line of megabytes).
        const WINDOW: usize = 100;
        let skip = column
            .saturating_sub(WINDOW / 2)
            .min(text.chars().count().saturating_sub(WINDOW));
        let shown: String = text.chars().skip(skip).take(WINDOW).collect();
        let cut_left = skip > 0;
        let cut_right = text.chars().count() > skip + WINDOW;
        let text = format!(
            "{}{}{}",
            if cut_left { "…" } else { "" },
            shown,
            if cut_right { "…" } else { "" }
        );
        let column = column - skip + usize::from(cut_left);
        let _ = writeln!(out, "{pad} {}", paint("1;34", "|"));
        let _ = writeln!(out, "{} {} {text}", paint("1;34", &num), paint("1;34", "|"));
        // Columns count characters; keep tabs so the caret lines up under them.
        let lead: String = text
            .chars()
            .take(column - 1)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        let caret = match note {
            Some(n) => format!("^ {n}"),
            None => "^".to_string(),
        };
        let _ = writeln!(
            out,
            "{pad} {} {lead}{}",
            paint("1;34", "|"),
            paint("1;31", &caret)
        );
    } else if let Some(n) = note {
        let _ = writeln!(out, "   = note: {n}");
    }
}

/// Shows control characters as escapes, so that a value from an input (a name with a
/// newline, say) cannot break a report's lines.
pub(crate) fn one_line(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return s.into();
    }
    s.chars()
        .map(|c| match c {
            '\n' => "\\n".to_string(),
            '\r' => "\\r".to_string(),
            '\t' => "\\t".to_string(),
            c if c.is_control() => c.escape_unicode().to_string(),
            c => c.to_string(),
        })
        .collect::<String>()
        .into()
}

/// A quoted source line as a terminal may show it: each control character but the tab (an
/// ESC that would start a terminal sequence, a BEL) becomes `�`, one character for one, so
/// the caret still lines up under the column.
fn visible(line: &str) -> std::borrow::Cow<'_, str> {
    let hidden = |c: char| c.is_control() && c != '\t';
    if !line.chars().any(hidden) {
        return line.into();
    }
    line.chars()
        .map(|c| if hidden(c) { '\u{fffd}' } else { c })
        .collect::<String>()
        .into()
}

/// The closest of `candidates` to `word`, when it is close enough to be a likely typo.
pub(crate) fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| {
            (
                strsim::jaro_winkler(&word.to_lowercase(), &c.to_lowercase()),
                c,
            )
        })
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// Frees `value` on a thread of its own. A run's trees are hundreds of thousands of small
/// allocations (freeing them took a fifth of a second at 10,000 apps) and the process is
/// about to end: its result need not wait for that. It lives here, under every layer,
/// because each layer that holds a run's large values to its end (the gate, the
/// operations) frees them this way.
pub(crate) fn free_later<T: Send + 'static>(value: T) {
    // When no thread can be made, the value comes back in the error and is freed here.
    let _ = std::thread::Builder::new().spawn(move || drop(value));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_in_reports() {
        assert_eq!(one_line("a\nkind: Secret"), "a\\nkind: Secret");
        assert_eq!(one_line("plain"), "plain");
    }

    /// A source line with ESC and BEL (a terminal escape a hostile file can carry) is
    /// quoted with neither, and the caret still points at the column.
    #[test]
    fn quoted_lines_carry_no_control_characters() {
        let mut sources = Sources::default();
        let file = PathBuf::from("apps/x.yaml");
        sources.insert(file.clone(), "name: \x1b]0;pwned\x07x: 1\n".into());
        let d =
            Diagnostic::error(Code::UnknownField, "unknown field `x`").at(Span::new(&file, 1, 17));
        let out = render_human(&Diagnostics::from_iter([d]), &sources, false);
        assert!(!out.contains('\x1b') && !out.contains('\x07'), "{out:?}");
        assert!(
            out.contains("1 | name: \u{fffd}]0;pwned\u{fffd}x: 1\n"),
            "{out}"
        );
        assert!(out.contains("  |                 ^\n"), "{out}");
    }

    #[test]
    fn suggests_the_closest_field() {
        let fields = ["name", "namespace", "service", "paths", "host"];
        assert_eq!(did_you_mean("nmae", fields), Some("name"));
        assert_eq!(did_you_mean("path", fields), Some("paths"));
        assert_eq!(did_you_mean("zzzz", fields), None);
    }

    #[test]
    fn human_output_quotes_the_line_and_points_at_the_column() {
        let mut sources = Sources::default();
        sources.insert("a.yaml".into(), "x: 1\nnmae: foo\n".into());
        let mut diags = Diagnostics::new();
        diags.push(
            Diagnostic::error(Code::UnknownField, "unknown field `nmae`")
                .at(Span::new("a.yaml", 2, 1))
                .help("did you mean `name`?"),
        );
        let out = render_human(&diags, &sources, false);
        assert_eq!(
            out,
            "error[unknown-field]: unknown field `nmae`\n  --> a.yaml:2:1\n  |\n2 | nmae: foo\n  | ^\n   = help: did you mean `name`?\n\n1 error, 0 warnings\n"
        );
    }
}
