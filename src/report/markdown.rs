//! The PR comment in Markdown: the findings, grouped by code and folded when there are
//! many; then what the PR does, app by app, what it costs and where it stands in its
//! rollout. The comment stays under GitHub's limit whatever the change's size: a long list
//! stops when the comment would pass it, and says how much it left out.

use std::collections::BTreeMap;

use super::{plural, repo_path};
use crate::diag::codes::Code;
use crate::diag::codes::Severity;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::rollout::summary::PrSummary;
use crate::rollout::summary::apps::AppChange;

/// GitHub refuses an issue or PR comment longer than this (characters; the comment is
/// measured here in bytes, which are never fewer).
pub(crate) const COMMENT_LIMIT: usize = 65_536;
/// What the findings may fill, so that what the PR does always has room after them.
const FINDINGS_BUDGET: usize = 36_000;
/// What lists may fill in all, leaving room for the lines that close the comment.
pub(super) const BUDGET: usize = 62_000;
/// A list longer than this is folded (`<details>`).
const FOLD_OVER: usize = 5;

/// The comment as it is written, and how many list items were left out to keep it short.
pub(super) struct Comment {
    pub(super) out: String,
    left_out: usize,
}

impl Comment {
    /// Adds one list item unless the comment would pass `budget`.
    pub(super) fn item(&mut self, text: &str, budget: usize) {
        if self.out.len() + text.len() + 1 > budget {
            self.left_out += 1;
            return;
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    /// A list under a heading: one item inline, a few as a nested list, more folded.
    pub(super) fn list(&mut self, title: &str, items: &[String], budget: usize) {
        match items {
            [] => {}
            [one] => self.item(&format!("- **{title}**: {one}"), budget),
            few if few.len() <= FOLD_OVER => {
                self.out
                    .push_str(&format!("- **{title}** ({})\n", few.len()));
                for i in few {
                    self.item(&format!("  - {i}"), budget);
                }
            }
            many => {
                self.out.push_str(&format!(
                    "<details><summary><b>{title}</b> ({})</summary>\n\n",
                    many.len()
                ));
                for i in many {
                    self.item(&format!("- {i}"), budget);
                }
                self.out.push_str("\n</details>\n\n");
            }
        }
    }
}

/// The first lines of every PR comment: a marker that lets a workflow find and update its
/// own comment (the action and the example workflow look for a comment that starts with
/// it), and the title. A comment of several environments has them once, at the top.
pub(crate) const HEADER: &str = "<!-- latgen -->\n## latgen\n\n";

/// A PR comment in Markdown: the findings first, then what the PR changes (with a base).
pub(crate) fn markdown(diags: &Diagnostics, summary: Option<&PrSummary>) -> String {
    comment(HEADER, diags, summary)
}

/// One environment's part of a several-environment comment: the same, without the header.
pub(crate) fn markdown_part(diags: &Diagnostics, summary: Option<&PrSummary>) -> String {
    comment("", diags, summary)
}

fn comment(start: &str, diags: &Diagnostics, summary: Option<&PrSummary>) -> String {
    let mut c = Comment {
        out: String::from(start),
        left_out: 0,
    };
    findings(&mut c, diags);
    if let Some(s) = summary {
        what_it_does(&mut c, s);
        super::sections::sections(&mut c, s);
    }
    if c.left_out > 0 {
        c.out.push_str(&format!(
            "\n_{} left out to keep this comment under GitHub's {COMMENT_LIMIT}-character limit: `latgen check --format json` lists every finding, and the PR's diff every file._\n",
            plural(c.left_out, "list item")
        ));
    }
    c.out
}

/// The findings, by code in the order they were found; a code with many findings is one
/// folded list, its help said once when every finding has the same.
fn findings(c: &mut Comment, diags: &Diagnostics) {
    if diags.is_empty() {
        c.out.push_str("No findings.\n");
        return;
    }
    let (errors, warnings) = (diags.count(Severity::Error), diags.count(Severity::Warning));
    c.out.push_str(&format!(
        "**{}, {}**\n\n",
        plural(errors, "error"),
        plural(warnings, "warning")
    ));
    let mut by_code: Vec<(Code, Severity, Vec<&Diagnostic>)> = Vec::new();
    for d in diags.iter() {
        match by_code
            .iter_mut()
            .find(|(code, sev, _)| *code == d.code && *sev == d.severity)
        {
            Some((_, _, list)) => list.push(d),
            None => by_code.push((d.code, d.severity, vec![d])),
        }
    }
    for (code, severity, list) in by_code {
        if list.len() <= FOLD_OVER {
            for d in list {
                c.item(&finding(d, true), FINDINGS_BUDGET);
            }
            continue;
        }
        let help = list[0]
            .help
            .as_ref()
            .filter(|h| list.iter().all(|d| d.help.as_ref() == Some(h)));
        c.out.push_str(&format!(
            "<details><summary><b>{}</b> <code>{code}</code> × {}</summary>\n\n",
            severity.as_str(),
            list.len()
        ));
        if let Some(h) = help {
            c.out.push_str(&format!("help: {}\n\n", md_text(h)));
        }
        for d in list {
            c.item(&finding(d, help.is_none()), FINDINGS_BUDGET);
        }
        c.out.push_str("\n</details>\n\n");
    }
}

/// One finding as a list item, with its help line when `with_help`.
fn finding(d: &Diagnostic, with_help: bool) -> String {
    let place = d
        .span
        .as_ref()
        .map(|s| format!(" {}", code(&md_place(s))))
        .unwrap_or_default();
    let mut line = format!(
        "- **{}** `{}`{place}: {}",
        d.severity.as_str(),
        d.code,
        md_text(&d.message)
    );
    if let Some(h) = d.help.as_ref().filter(|_| with_help) {
        line.push_str(&format!("\n  help: {}", md_text(h)));
    }
    line
}

fn md_place(s: &Span) -> String {
    let mut p = repo_path(&s.file);
    if s.line > 0 {
        p.push_str(&format!(":{}", s.line));
    }
    p
}

/// One line of a message for a Markdown list item, safe whatever a PR put in it. Messages
/// quote names in backticks; a name from the PR (an unknown key, a file name) can hold
/// backticks of its own, which would end the code span early and let the rest be read as
/// Markdown: an image, a link, an `@team` mention in the bot's comment. So the message is
/// cut at every backtick, the pieces between pairs become code spans fenced by [`code`], and
/// the text around them is made inert by [`inert`]. A stray backtick shifts which pieces are
/// code, but no piece is ever read as Markdown.
fn md_text(s: &str) -> String {
    s.split('`')
        .enumerate()
        .map(|(i, piece)| {
            if i % 2 == 1 {
                code(piece)
            } else {
                inert(piece)
            }
        })
        .collect()
}

/// `s` as a code span whatever it holds: one line, fenced by one backtick more than its
/// longest run of them (CommonMark's rule), padded when it starts or ends with one. Inside
/// a code span GitHub renders no Markdown, HTML, link or mention.
pub(crate) fn code(s: &str) -> String {
    let s = s.replace(['\n', '\r'], " ");
    let longest = s.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') || s.is_empty() {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

/// Text that GitHub shows as it is: every character Markdown or HTML could read is
/// backslash-escaped, and what GitHub links in the text after Markdown is read is broken by
/// an invisible word joiner: `@` (a mention), `#` (an issue, `owner/repo#1` too), `GH-`,
/// `://` and `www.` (autolinks), and runs of seven hex digits or more (a commit).
fn inert(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut hex_run = 0;
    for c in s.chars() {
        hex_run = if c.is_ascii_hexdigit() {
            hex_run + 1
        } else {
            0
        };
        if hex_run == 7 {
            out.push(JOINER);
            hex_run = 1;
        }
        match c {
            '\n' | '\r' => out.push(' '),
            '\\' | '*' | '_' | '[' | ']' | '(' | ')' | '!' | '<' | '>' | '&' | '|' | '~' | '$' => {
                out.push('\\');
                out.push(c);
            }
            '#' => {
                out.push_str("\\#");
                out.push(JOINER);
            }
            '@' => {
                out.push('@');
                out.push(JOINER);
            }
            c => out.push(c),
        }
    }
    out.replace("://", &format!(":{JOINER}//"))
        .replace("www.", &format!("www{JOINER}."))
        .replace("GH-", &format!("GH{JOINER}-"))
}

/// An invisible character that ends a word for GitHub's linkers, not for a reader.
const JOINER: char = '\u{2060}';

pub(super) fn code_list<'a>(items: impl IntoIterator<Item = &'a String>) -> String {
    let quoted: Vec<String> = items.into_iter().map(|i| code(i)).collect();
    quoted.join(", ")
}

/// What the PR does, app by app, then its files, cost and place in the rollout.
fn what_it_does(c: &mut Comment, s: &PrSummary) {
    c.out.push_str("\n### What this PR changes\n\n");
    let before = c.out.len();
    c.list("Apps added", &quoted(&s.added), BUDGET);
    c.list("Apps removed", &quoted(&s.removed), BUDGET);
    let moved: Vec<String> = (s.moved.iter())
        .map(|(app, from, to)| {
            format!(
                "{}: {} → {} (its Kong route now sends its requests there)",
                code(app),
                code(from),
                code(to)
            )
        })
        .collect();
    c.list("Apps moved", &moved, BUDGET);
    let preview = |list: &[(String, String)]| -> Vec<String> {
        (list.iter())
            .map(|(key, host)| format!("{} on {}", code(key), code(host)))
            .collect()
    };
    c.list("Previews added", &preview(&s.previews_added), BUDGET);
    c.list("Previews removed", &preview(&s.previews_removed), BUDGET);
    for (title, items) in app_lists(&s.apps) {
        c.list(title, &items, BUDGET);
    }
    c.list(
        "Lattice services created",
        &quoted(&s.services_added),
        BUDGET,
    );
    c.list(
        "Lattice services deleted",
        &quoted(&s.services_removed),
        BUDGET,
    );
    if c.out.len() == before {
        c.out.push_str("- No app's routing changes.\n");
    }
    c.out
        .push_str("\n| side | added | changed | removed |\n|---|---|---|---|\n");
    for (side, n) in [("Lattice", &s.lattice), ("Kong", &s.kong)] {
        c.out.push_str(&format!(
            "| {side} | {} | {} | {} |\n",
            n.added.len(),
            n.changed.len(),
            n.removed.len()
        ));
    }
    let dollars = crate::plan::rebalance::monthly_cost::dollars;
    c.out.push_str(&format!(
        "\nLattice services: {} → {}; monthly cost {} → {}.\n",
        s.services_before,
        s.services_after,
        dollars(s.monthly_before),
        dollars(s.monthly_after)
    ));
    budgets(c, s);
    transient(c, s);
    // A tree that already is what `render` writes has no rollout (0 steps): nothing to say.
    if let Some(p) = s.progress.as_ref().filter(|p| p.of > 0) {
        c.out.push_str(&format!(
            "\nThis PR is step {} of {} of the rollout.",
            p.step, p.of
        ));
        match &p.next {
            Some(cmd) => c.out.push_str(&format!(
                " Once it is merged and live, on a branch from the merged default branch, `{cmd}` writes step {}.\n",
                p.step + 1
            )),
            None => c.out.push_str(" It completes the change.\n"),
        }
    }
}

/// Groups shown in the budget table: the fullest, which are the ones to watch.
const BUDGET_ROWS: usize = 10;

/// The shared groups' declared load against their budget, fullest first, as bars in a
/// folded table.
fn budgets(c: &mut Comment, s: &PrSummary) {
    use crate::plan::rebalance::monthly_cost::grouped;
    // With no app declaring peakRps every bar is empty: the table would say nothing.
    if s.budgets.iter().all(|b| b.declared == 0) {
        return;
    }
    c.out.push_str(&format!(
        "\n<details><summary>Throughput budget of the shared groups (declared peakRps, fullest {})</summary>\n\n| group | use | declared / budget |\n|---|---|---|\n",
        s.budgets.len().min(BUDGET_ROWS)
    ));
    for b in s.budgets.iter().take(BUDGET_ROWS) {
        let share = 100.0 * b.declared as f64 / b.budget.max(1) as f64;
        c.out.push_str(&format!(
            "| {} | {} | {} / {} rps ({share:.0}%) |\n",
            code(&b.route),
            code(&crate::report::bar(b.declared as f64, b.budget as f64, 20)),
            grouped(b.declared),
            grouped(b.budget),
        ));
    }
    c.out.push_str("\n</details>\n");
}

pub(super) fn quoted(names: &[String]) -> Vec<String> {
    names.iter().map(|n| code(n)).collect()
}

/// The per-app changes as lists: paths, dispatch, and Lattice rules added and removed.
fn app_lists(apps: &BTreeMap<String, AppChange>) -> [(&'static str, Vec<String>); 4] {
    let mut paths = Vec::new();
    let mut dispatch = Vec::new();
    let mut added = Vec::new();
    let mut removed = Vec::new();
    for (app, ch) in apps {
        let mut what = Vec::new();
        if !ch.paths_added.is_empty() {
            what.push(format!("adds {}", code_list(&ch.paths_added)));
        }
        if !ch.paths_removed.is_empty() {
            what.push(format!("drops {}", code_list(&ch.paths_removed)));
        }
        if !what.is_empty() {
            paths.push(format!("{} {}", code(app), what.join("; ")));
        }
        match &ch.dispatch {
            Some(Some(header)) => dispatch.push(format!(
                "{}: Kong now names it in {}, and Lattice matches that header",
                code(app),
                code(header)
            )),
            Some(None) => dispatch.push(format!(
                "{}: Kong no longer sets a dispatch header; Lattice matches its paths",
                code(app)
            )),
            None => {}
        }
        for (rules, list, word) in [
            (&ch.rules_added, &mut added, "in"),
            (&ch.rules_removed, &mut removed, "from"),
        ] {
            if rules.is_empty() {
                continue;
            }
            let per_service: Vec<String> = rules
                .iter()
                .map(|(service, r)| format!("{word} {}: {}", code(service), code_list(r)))
                .collect();
            list.push(format!("{} {}", code(app), per_service.join("; ")));
        }
    }
    [
        ("Paths changed", paths),
        ("Dispatch switched", dispatch),
        ("Lattice rules added", added),
        ("Lattice rules removed", removed),
    ]
}

/// What the step leaves for later steps of its rollout, said once.
fn transient(c: &mut Comment, s: &PrSummary) {
    if s.transient.is_empty() {
        return;
    }
    let mut counts: BTreeMap<Code, usize> = BTreeMap::new();
    for code in &s.transient {
        *counts.entry(*code).or_default() += 1;
    }
    let list: Vec<String> = counts
        .iter()
        .map(|(code, n)| format!("{n} `{code}`"))
        .collect();
    let by = s
        .progress
        .as_ref()
        .map_or(String::new(), |p| format!(" by step {} of {}", p.of, p.of));
    c.out.push_str(&format!(
        "\nExpected at this step, and not reported as findings: {}. These Lattice rules, and their apps' callers, go live before the Kong routes that reach them, or stay until Kong has moved off them; the rollout's later steps resolve them{by}.\n",
        list.join(", ")
    ));
}
