//! The committed output and lock against what `render` writes.

use crate::manifest::tree::{Text, Tree};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::CheckOptions;
use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::manifest::layout::Side;
use crate::manifest::layout::side_of;
use crate::output::{self, ChangeKind, OutsideFile};
use crate::plan::prepared::Prepared;
use crate::render::Rendered;
/// Whether two trees hold the same files on one side, compared without copying them.
pub(super) fn same_side(a: &Tree, b: &Tree, side: Side) -> bool {
    let a = a.iter().filter(|(p, _)| side_of(p) == side);
    let b = b.iter().filter(|(p, _)| side_of(p) == side);
    a.eq(b)
}

/// Compares the committed output and lock with what `render` writes. With a base, a side
/// left exactly as in the base is accepted (the change ships in two PRs), as long as at
/// least one changed side is rendered.
pub(super) fn staleness(
    opts: &CheckOptions,
    prepared: &Prepared,
    rendered: &Rendered,
    (committed, committed_lock): (&Tree, Option<&str>),
    base: Option<&Tree>,
    tree: &Tree,
) -> Result<(Diagnostics, String), Diagnostic> {
    let mut diags = Diagnostics::new();
    if let Some(step) = &opts.step
        && is_step(committed_lock, step)
    {
        // Exactly the next step `render --base` writes: current for this PR.
        return Ok((diags, String::new()));
    }
    let mut accepted_sides = BTreeSet::new();
    if let Some(base) = base {
        let (mut changed_and_rendered, mut nothing_to_do) = (false, true);
        for side in [Side::Lattice, Side::Kong] {
            let (want, have, was) = (&rendered.files, committed, base);
            let rendered_side = same_side(have, want, side);
            let unchanged = same_side(want, was, side);
            if rendered_side || (same_side(have, was, side) && !unchanged) {
                accepted_sides.insert(side);
            }
            changed_and_rendered |= !unchanged && rendered_side;
            nothing_to_do &= unchanged;
        }
        if !changed_and_rendered && !nothing_to_do {
            accepted_sides.clear();
        }
    }
    let lock = OutsideFile {
        path: &opts.paths.lock,
        text: prepared.lock_text(),
    };
    // Changes on an accepted side are left out.
    let changes = output::change_set(
        &opts.paths.root,
        &opts.out_dir,
        tree,
        std::borrow::Cow::Borrowed(rendered),
        Some(lock),
        |rel| !accepted_sides.contains(&side_of(rel)),
    )?;
    for c in &changes {
        if c.path == opts.paths.lock {
            let line = first_difference(c.old.as_deref(), c.new.as_deref());
            diags.push(lock_stale(opts, &c.path, line));
            continue;
        }
        let file = c
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let folder = c.path.parent().unwrap_or(&opts.out_dir).display();
        let (message, line) = match c.kind {
            ChangeKind::Changed => (
                format!("{file} differs from what `latgen render` writes"),
                first_difference(c.old.as_deref(), c.new.as_deref()),
            ),
            ChangeKind::Added => (
                format!("{file} is missing from {folder}/: `latgen render` writes it"),
                0,
            ),
            ChangeKind::Removed => (
                format!("{file} is in {folder}/, but `latgen render` no longer writes it"),
                1,
            ),
        };
        diags.push(
            Diagnostic::error(Code::StaleOutput, message)
                .at(Span::new(&c.path, line, 0))
                .help("run `latgen render` and commit the result"),
        );
    }
    Ok((diags, output::unified_diff(&changes)))
}

fn first_difference(old: Option<&str>, new: Option<&str>) -> u32 {
    let (old, new) = (old.unwrap_or(""), new.unwrap_or(""));
    let mut a = old.lines();
    let mut b = new.lines();
    let mut line = 1;
    loop {
        match (a.next(), b.next()) {
            (Some(x), Some(y)) if x == y => line += 1,
            (None, None) => return 1,
            _ => return line,
        }
    }
}

/// Whether two trees hold the same files that latgen wrote (they start with its header),
/// by path and text. Both are in path order: they are walked side by side, with no map
/// made of either (at 100,000 apps a tree holds 226,000 files).
pub(crate) fn same_owned(a: &Tree, b: &Tree) -> bool {
    let owned = |(_, text): &(&PathBuf, &Text)| text.starts_with(crate::manifest::layout::HEADER);
    a.iter().filter(owned).eq(b.iter().filter(owned))
}

/// Whether the committed manifests and lock (as the load stage read it) are the step
/// `render --base` writes.
fn is_step(lock: Option<&str>, step: &super::RolloutStep) -> bool {
    step.committed_owned && lock == Some(step.lock_text.as_str())
}

/// Kubernetes manifests in the output folder that latgen did not write (no header) and that
/// render does not write either (a latgen file edited by hand is stale instead): the deploy
/// kit's Applications read every manifest of a side's folder (a directory source), so Argo
/// CD applies them beside latgen's objects, though no check of latgen sees them (and the
/// kustomization, for `kubectl apply -k`, does not list them). Other files, such as a
/// README, are not objects to apply and stay quiet.
pub(super) fn foreign_files(tree: &Tree, rendered: Option<&Tree>, out_dir: &Path) -> Diagnostics {
    let mut diags = Diagnostics::new();
    for (rel, text) in tree {
        if text.starts_with(crate::manifest::layout::HEADER)
            || rendered.is_some_and(|r| r.contains_key(rel))
        {
            continue;
        }
        let Some(line) = manifest_kind_line(rel, text) else {
            continue;
        };
        // The deploy kit's Applications read each side's folder, not its subfolders.
        let in_a_side = rel.components().count() == 2
            && [Side::Lattice, Side::Kong]
                .iter()
                .any(|s| rel.starts_with(s.dir()));
        let fate = if in_a_side {
            "Argo CD applies it with the side's folder, but latgen's checks do not see it"
        } else {
            "no Application of the deploy kit reads it (each reads one side's folder, not its subfolders)"
        };
        diags.push(
            Diagnostic::warning(
                Code::ForeignFile,
                format!(
                    "{} is a Kubernetes manifest latgen did not write (it has no latgen header): {fate}",
                    rel.display()
                ),
            )
            .at(Span::new(out_dir.join(rel), line, 0))
            .help("declare the app in apps/ and run `latgen render`, or move the file to a folder of its own Application"),
        );
    }
    diags
}

/// The line of the top-level `kind:` of a YAML file that also has a top-level
/// `apiVersion:`, as every Kubernetes manifest does; for a JSON file (Argo CD applies those
/// too), the line of its `"kind"` when it also names an `"apiVersion"`.
fn manifest_kind_line(rel: &Path, text: &str) -> Option<u32> {
    // The start of a top-level key's line, or a JSON key anywhere on its line.
    let (api, kind_key) = match rel.extension().and_then(|e| e.to_str()) {
        Some("yaml" | "yml") => ("apiVersion:", "kind:"),
        Some("json") => ("\"apiVersion\"", "\"kind\""),
        _ => return None,
    };
    let json = api.starts_with('"');
    let has = |line: &str, key: &str| {
        if json {
            line.contains(key)
        } else {
            line.starts_with(key)
        }
    };
    let mut kind = None;
    let mut api_version = false;
    for (i, line) in text.lines().enumerate() {
        api_version |= has(line, api);
        if kind.is_none() && has(line, kind_key) {
            kind = Some(i as u32 + 1);
        }
    }
    kind.filter(|_| api_version)
}

/// The lock differs from what `render` writes: named as the project has it
/// (`locks/<env>.lock` in an environment project), with the render that writes it.
fn lock_stale(opts: &CheckOptions, path: &Path, line: u32) -> Diagnostic {
    let shown = path
        .strip_prefix(&opts.paths.root)
        .unwrap_or(path)
        .display();
    let render = match &opts.paths.env {
        Some(env) => format!("latgen render --env {env}"),
        None => "latgen render".to_string(),
    };
    Diagnostic::error(
        Code::LockStale,
        format!("{shown} is not what `{render}` writes"),
    )
    .at(Span::new(path, line, 0))
    .help(format!("run `{render}` and commit {shown} with apps/"))
}
