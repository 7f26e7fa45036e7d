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
    let tmp = tempfile::tempdir().unwrap();
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
    let summary =
        latgen::change::summary::summarize(&base, &switched.output.files, (price, apps), None);
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
