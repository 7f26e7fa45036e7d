//! The PR comment of a large change stays under GitHub's comment limit (65,536 characters)
//! and says what it left out: a switch of dispatch mode of the benchmark's input, which
//! touches every app (each moved, its dispatch switched, its rules added to a header group
//! and removed from a path group). The comment is made from the switch as one change, the
//! superset of its steps' comments. The benchmark's 10,000 apps are slow to render in a
//! debug build, so a debug `cargo test` switches its 1,000-app input and an optimized one
//! the 10,000 apps (`cargo build --release \&\& cargo test --release --lib suite::comment::`, which CI runs).

use super::generate;
use super::project;

use std::path::PathBuf;

use latgen::diag::codes::Code;
use latgen::diag::{Diagnostic, Diagnostics, Span};

const APPS: usize = if cfg!(debug_assertions) {
    1_000
} else {
    10_000
};

#[test]
fn the_pr_comment_of_a_dispatch_switch_of_the_benchmark_input_stays_under_githubs_limit() {
    let tmp = crate::suite::common::scratch();
    let dir = tmp.path();
    let apps = dir.join("apps");
    std::fs::create_dir_all(&apps).unwrap();
    for app in generate::generate(APPS) {
        std::fs::write(apps.join(format!("{}.yaml", app.name)), app.declaration()).unwrap();
    }
    let mut base = project::render_dir(dir).expect("the benchmark's input renders");
    let lock = base.remove(&PathBuf::from("latgen.lock")).unwrap();
    std::fs::write(dir.join("latgen.lock"), lock).unwrap();
    std::fs::write(dir.join("latgen.yaml"), "lattice:\n  dispatch: header\n").unwrap();
    let switched = project::built(dir);
    let (price, apps) = (0.025, &switched.prepared.apps);
    let base = (base.into_iter().map(|(p, t)| (p, t.into()))).collect();
    let summary =
        latgen::rollout::summary::summarize(&base, &switched.output.files, (price, apps), None);
    assert_eq!(
        summary.moved.len(),
        APPS,
        "every app moves to a header group"
    );
    // A finding per app as well: the findings are folded and cut like the lists.
    let mut diags = Diagnostics::new();
    for app in apps {
        diags.push(
            Diagnostic::warning(Code::UnreachableRule, format!("a rule of `{}`", app.name))
                .at(Span::new(&app.file, 1, 1)),
        );
    }
    let md = latgen::report::markdown::markdown(&diags, Some(&summary));
    let chars = md.chars().count();
    println!("the comment of a switch of {APPS} apps: {chars} characters");
    assert!(
        chars < latgen::report::markdown::COMMENT_LIMIT,
        "{chars} characters"
    );
    assert!(
        md.contains("left out to keep this comment under GitHub's"),
        "{APPS} apps listed in full in {chars} characters"
    );
    for section in ["Apps moved", "Dispatch switched", "Lattice rules added"] {
        assert!(md.contains(section), "no {section}: {md}");
    }
    assert!(
        md.contains("| Kong |"),
        "the file table comes after the lists"
    );
}

/// Strings a PR controls (here unknown keys in an app file) reach the bot's comment as
/// text, never as Markdown: rendered the way GitHub renders a comment (GitHub Flavored
/// Markdown with autolinks, by comrak), no image, link, mention or HTML of the PR author's
/// choosing survives, however the keys play with backticks.
#[test]
fn hostile_keys_in_an_app_file_render_as_text_in_the_pr_comment() {
    let tmp = crate::suite::common::scratch();
    let dir = tmp.path();
    let payload = "![i](https://evil.example/i.png) @org/team [a](https://evil.example) <img src=x> www.evil.example #1 GH-2 other/repo#3 deadbeefcafe";
    // The payload outside a code span, inside one, and after a stray backtick.
    let keys = [
        format!("x`{payload}`"),
        format!("x{payload}"),
        format!("``{payload}"),
    ];
    // One app per key: a file stops at its first unknown field.
    for (i, k) in keys.iter().enumerate() {
        super::common::app(
            dir,
            &format!("shop{i}"),
            &format!(
                "namespace: web\nservice: {{ name: shop{i}, port: 8080 }}\npaths: [/shop{i}]\n{k:?}: 1\n"
            ),
        );
    }
    let run = super::common::latgen(dir, &["check", "--format", "markdown"]);
    let md = &run.stdout;
    assert_eq!(md.matches("unknown-field").count(), 3, "{md}");
    let mut options = comrak::Options::default();
    options.extension.autolink = true;
    options.extension.table = true;
    options.extension.strikethrough = true;
    options.render.r#unsafe = true; // GitHub keeps some raw HTML: show what a PR could reach
    let html = comrak::markdown_to_html(md, &options);
    for live in ["<img", "<a ", "href="] {
        assert!(
            !html.contains(live),
            "`{live}` in the rendered comment:\n{html}"
        );
    }
    // A mention is GitHub's reading of `@name` in text (not in code): none may be left.
    let text_only = html
        .split("<code>")
        .map(|part| part.split_once("</code>").map_or(part, |(_, after)| after))
        .collect::<String>();
    assert!(!text_only.contains("@org"), "a live mention:\n{html}");
    // GitHub links issue references and commits in text after Markdown is read.
    for reference in ["#1", "GH-2", "repo#3", "deadbeefcafe"] {
        assert!(
            !text_only.contains(reference),
            "a live reference `{reference}`:\n{html}"
        );
    }
    // What the keys said is still there to read.
    assert!(html.contains("evil.example"), "{html}");
}

/// A PR that changes no routing (the output already is what `render` writes) is no step of
/// a rollout: the comment said "step 1 of 0".
#[test]
fn the_comment_of_an_unchanged_tree_names_no_step() {
    let tmp = crate::suite::common::scratch();
    let dir = tmp.path();
    super::common::path_app(dir, "shop", &["/shop"]);
    let run = super::common::latgen(dir, &["render"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    super::common::git(dir, &["init", "-q"]);
    super::common::git(dir, &["add", "-A"]);
    super::common::git(dir, &["commit", "-q", "-m", "base"]);
    let run = super::common::latgen(dir, &["check", "--base", "HEAD", "--format", "markdown"]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("No app's routing changes."),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains(" of 0"), "{}", run.stdout);
    assert!(!run.stdout.contains("This PR is step"), "{}", run.stdout);
}
