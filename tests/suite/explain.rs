//! `latgen explain`: every code has an explanation with an example, the output for one code
//! is a committed snapshot (`tests/explain/nested-prefix.stdout`), and the book's page of
//! codes (`docs/src/reference/codes.md`) is the one `explain` makes. Refresh both with
//! `LATGEN_BLESS=1 cargo test suite::explain::` and review the diff.

use super::common;

use std::process::{Command, Output};

use latgen::commands::explain;
use latgen::diag::codes::Code;
use pretty_assertions::assert_eq;

const START: &str = "<!-- codes:start -->";
const END: &str = "<!-- codes:end -->";

fn latgen(args: &[&str]) -> Output {
    Command::new(common::bin())
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

#[test]
fn explain_nested_prefix_is_the_committed_snapshot() {
    let out = latgen(&["explain", "nested-prefix"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    common::assert_snapshot(
        &common::root().join("tests/explain/nested-prefix.stdout"),
        &stdout(&out),
    );
}

#[test]
fn explain_without_a_code_lists_every_code() {
    let out = latgen(&["explain"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), Code::ALL.len(), "{text}");
    for (line, code) in lines.iter().zip(Code::ALL) {
        let mut words = line.split_whitespace();
        assert_eq!(words.next(), Some(code.as_str()), "{line}");
        assert_eq!(words.next(), Some(code.severity().as_str()), "{line}");
        assert!(line.ends_with(code.summary()), "{line}");
    }
    assert_eq!(text, explain::list());
}

/// An unknown code is a usage error (exit 2); a near miss gets a "did you mean", a name
/// like no code gets none rather than an unrelated one.
#[test]
fn an_unknown_code_exits_2_with_a_suggestion() {
    for (name, want) in [
        ("nested-prefixes", Some("nested-prefix")),
        ("nested_prefix", Some("nested-prefix")),
        ("Rule-Shadowed", Some("rule-shadowed")),
        ("no-such-code", None),
    ] {
        let out = latgen(&["explain", name]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert_eq!(stdout(&out), "", "{name}");
        let hint = want
            .map(|w| format!(" (did you mean `{w}`?)"))
            .unwrap_or_default();
        assert_eq!(
            stderr(&out),
            format!(
                "error: `{name}` is not a latgen finding code{hint}; `latgen explain` lists all {} codes\n",
                Code::ALL.len()
            )
        );
    }
}

#[test]
fn every_code_is_explained_with_an_example() {
    for &code in Code::ALL {
        let text = explain::text(code);
        assert!(!text.trim().is_empty(), "{code}");
        assert!(text.contains(code.as_str()), "{code}:\n{text}");
        assert!(text.contains(code.summary()), "{code}:\n{text}");
        assert!(
            text.ends_with(&format!("More: {}\n", code.help_url())),
            "{code}:\n{text}"
        );

        // The example sits between the summary and the link, after blank lines.
        let (_, rest) = text.split_once("\n\n").unwrap();
        let (example, _) = rest.rsplit_once("\n\nMore: ").unwrap();
        let lines: Vec<&str> = example.lines().collect();
        assert!(lines[0].starts_with("Example: "), "{code}:\n{example}");
        assert!(lines.len() <= 12, "{code}: {} lines", lines.len());
        // Its headline is one latgen prints, with the code's default severity, followed
        // by the help line.
        let headline = format!("{}[{code}]: ", code.severity().as_str());
        let at = lines
            .iter()
            .position(|l| l.starts_with(&headline))
            .unwrap_or_else(|| panic!("{code}: no `{headline}` line in\n{example}"));
        assert_eq!(at, lines.len() - 2, "{code}:\n{example}");
        assert!(lines[at + 1].starts_with("Fix: "), "{code}:\n{example}");
        assert!(
            lines.iter().all(|l| !l.trim().is_empty()),
            "{code}: a blank line in\n{example}"
        );
    }
}

/// The page of codes in the book, where each code's help link points.
const CODES_PAGE: &str = "docs/src/reference/codes.md";

/// Each code's help link is its own section of the page of codes.
#[test]
fn help_links_point_at_the_code_s_section() {
    let page = std::fs::read_to_string(common::root().join(CODES_PAGE)).unwrap();
    for &code in Code::ALL {
        assert_eq!(
            code.help_url(),
            format!(
                "{}/blob/main/{CODES_PAGE}#{code}",
                latgen::diag::codes::REPO_URL
            )
        );
        assert!(
            page.contains(&format!("\n### {code}\n")),
            "{CODES_PAGE} has no `### {code}` section"
        );
    }
}

/// The generated part of the page of codes is the one `explain` makes.
#[test]
fn the_page_of_codes_is_current() {
    let path = common::root().join(CODES_PAGE);
    let page = std::fs::read_to_string(&path).unwrap();
    let (Some(start), Some(end)) = (page.find(START), page.find(END)) else {
        panic!("{CODES_PAGE} has no `{START}` … `{END}` section");
    };
    assert!(start < end, "{CODES_PAGE}: `{END}` comes before `{START}`");
    let body_start = start + START.len();
    let want = format!("\n\n{}\n", explain::markdown_page());
    if common::bless() {
        let mut new = String::with_capacity(page.len());
        new.push_str(&page[..body_start]);
        new.push_str(&want);
        new.push_str(&page[end..]);
        std::fs::write(&path, new).unwrap();
        return;
    }
    assert_eq!(
        &page[body_start..end],
        want,
        "{CODES_PAGE} is stale: run `LATGEN_BLESS=1 cargo test suite::explain::` and commit it"
    );
}

#[test]
fn the_table_has_one_row_per_code() {
    let table = explain::markdown_table();
    let rows: Vec<&str> = table.lines().skip(2).collect();
    assert_eq!(rows.len(), Code::ALL.len());
    for (row, code) in rows.iter().zip(Code::ALL) {
        assert!(
            row.starts_with(&format!(
                "| [`{code}`](#{code}) | {} | ",
                code.severity().as_str()
            )),
            "{row}"
        );
        assert_eq!(row.matches(" | ").count(), 2, "{row}");
    }
}
