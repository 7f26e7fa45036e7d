//! `latgen render --base REV`: the shared stages with every move finished, then the next
//! safe step of the change from REV ([`crate::rollout::steps`]), written through the output
//! stage, and what the PR holds and what to run once it is live.

use std::borrow::Cow;

use super::shell::{Exit, Ui};
use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Sources};
use crate::input::ProjectPaths;
use crate::manifest::tree::Tree;
use crate::output::{self, OutsideFile};
use crate::render::Rendered;
use crate::report::plural;
use crate::rollout::steps::{NextStep, Stuck};
use crate::rollout::summary::{FileCounts, PrSummary};

/// What `render --base` is asked to do, from the `render` arguments.
pub(crate) struct BaseOptions<'a> {
    pub templates: Option<&'a std::path::Path>,
    pub verify: bool,
    /// Write nothing; exit 1 with a diff when the output is not the next step.
    pub check: bool,
    /// The apps whose old addresses the step may take from their callers of their own.
    pub release: &'a [String],
}

/// The next step from `rev` for the project at `paths`, written (or, with `check`, compared
/// with the output folder).
pub(crate) fn run(args: &BaseOptions<'_>, paths: &ProjectPaths, rev: &str, ui: Ui) -> Exit {
    let out_dir = &paths.output;
    // One run at a time per output folder, from reading the project to writing the step;
    // one that writes first finishes what a killed run began.
    let _run = match output::begin_in(&paths.root, out_dir, !args.check, paths.env.is_some()) {
        Ok(l) => l,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    let templates = match super::project::templates(paths, args.templates, args.verify) {
        Ok(t) => t,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    // The output folder and the base are read while the project is built, as `check
    // --base` reads them: the base takes each file Git holds as the folder has it from the
    // folder (a hash, not a read through Git), and the step is written against the folder.
    let existing = crate::pipeline::Beside::new();
    let (base, built) = rayon::join(
        || read_base(paths, rev, &existing),
        || crate::pipeline::build_final(paths, &templates, Some(&existing)),
    );
    let existing = existing.into_inner().unwrap_or_else(|| Ok(Tree::new()));
    let (base, shipped) = match base {
        Ok(found) => found.unwrap_or_default(),
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    let built = match built {
        Ok(b) => b,
        Err(f) => {
            ui.report(&f.diags, &f.sources);
            return Exit::Error;
        }
    };
    if let Some(message) = unknown_app(args.release, &built.prepared.apps) {
        eprintln!("error: {message}");
        return Exit::Error;
    }
    let mut step = match crate::rollout::steps::next_step(built, &templates, &base, (&shipped, &[]))
    {
        Ok(s) => s,
        Err(Stuck { built, full }) => return stuck(ui, rev, &built, &full, out_dir),
    };
    // A release lets go of the step it holds, and only once that step is the next one: the
    // steps before it are the same with or without it, as `check` finds them.
    if step.held_now() && !args.release.is_empty() {
        let released = (&shipped, args.release);
        step = match crate::rollout::steps::next_step(step.built, &templates, &base, released) {
            Ok(s) => s,
            Err(Stuck { built, full }) => return stuck(ui, rev, &built, &full, out_dir),
        };
    }
    ui.report(&step.built.diags, &step.built.sources);
    if step.held_now() && !args.check {
        // Nothing is written: a step the user wrote with the release stays as it is.
        eprint!("{}", held(&step, rev, paths));
        return Exit::Success;
    }
    let exit = write_step(args, paths, (rev, &base, existing), &step, ui);
    // The step's trees and routing states, and the base, are freed off the main thread:
    // one by one they took a quarter of a second at 100,000 apps.
    crate::diag::free_later((step, base));
    exit
}

/// The base's output, the rollout its lock records and the lock a switch of dispatch mode
/// in it started from: None without a base.
type Base = Option<(Tree, crate::rollout::steps::Shipped)>;

/// The [`Base`] at `rev`, after the output folder as it is (into `existing`: the render
/// takes the texts it makes too from there).
fn read_base(
    paths: &ProjectPaths,
    rev: &str,
    existing: &crate::pipeline::Beside,
) -> Result<Base, Diagnostic> {
    let existing = existing.get_or_init(|| output::read_tree(&paths.output));
    let empty = Tree::new();
    let now = existing.as_ref().unwrap_or(&empty);
    crate::rollout::git::base_tree_of(paths, Some(rev), now).map(|found| {
        found.map(|(resolved, b)| {
            let shipped = crate::rollout::steps::shipped_from(&paths.lock, &resolved);
            (output::manifests(&b).into_owned(), shipped)
        })
    })
}

/// The step written (or, with `check`, compared with the output folder), and what it holds.
fn write_step(
    args: &BaseOptions<'_>,
    paths: &ProjectPaths,
    (rev, base, existing): (&str, &Tree, Result<Tree, Diagnostic>),
    step: &NextStep,
    ui: Ui,
) -> Exit {
    let out_dir = &paths.output;
    let existing = match existing {
        Ok(t) => t,
        Err(d) => return ui.fail(d, &step.built.sources),
    };
    // A held step writes nothing: the lock is as the base left it.
    let lock = (!step.held_now()).then(|| OutsideFile {
        path: &paths.lock,
        text: step.lock_text.clone(),
    });
    // The kit follows the step: its AppProject must let the step's namespaces in, and its
    // Lattice Application ignore the step's canary weights.
    let config = &step.built.prepared.config;
    let kit = super::latgen_deploy::kit_for_render(paths, config, &step.files, &existing, None);
    let outside = lock
        .into_iter()
        .chain(kit.iter().map(|(path, text)| OutsideFile {
            path,
            text: text.clone(),
        }));
    let files = Rendered {
        files: step.files.clone(),
        ..Rendered::default()
    };
    let (out, files) = (out_dir, Cow::Owned(files));
    // What the step does is found while it is written: writing a step of a large tree is
    // mostly the kernel's linking and unlinking of files, on one core at its end.
    let (synced, summary) = rayon::join(
        || match args.check {
            true => output::change_set(&paths.root, out, &existing, files, outside, |_| true),
            false => output::sync(&paths.root, out, &existing, files, outside, |_| true),
        },
        || summary_of(step, base),
    );
    crate::diag::progress::clear();
    let changes = match synced {
        Ok(c) => c,
        Err(d) => return ui.fail(d, &step.built.sources),
    };
    if args.check && !changes.is_empty() {
        print!("{}", output::unified_diff(&changes));
        eprintln!(
            "error: {} differs from the next step from {rev}; run `latgen render{} --base {rev}{}` and commit the result",
            out_dir.display(),
            paths.env_flag(),
            release_flags(args.release)
        );
        if step.held_now() {
            eprint!("{}", held(step, rev, paths));
        }
        return Exit::Found;
    }
    if step.held_now() {
        eprint!("{}", held(step, rev, paths));
        return Exit::Success;
    }
    eprint!("{}", describe(step, &summary, (rev, paths)));
    eprint!("{}", kit_note(&kit, &changes));
    crate::diag::free_later((existing, changes));
    Exit::Success
}

/// What the step does, for the PR.
fn summary_of(step: &NextStep, base: &Tree) -> PrSummary {
    let price = step.built.prepared.config.pricing.service_hour_usd;
    let apps = &step.built.prepared.apps;
    // The base's and the step's routing states were read while the step was found.
    match step.written_states() {
        Some(states) => crate::rollout::summary::summarize_states(
            base,
            &step.files,
            states,
            (price, apps),
            None,
        ),
        None => crate::rollout::summary::summarize(base, &step.files, (price, apps), None),
    }
}

/// `--release-old-address` for each of `apps`, as a command line gives them.
fn release_flags(apps: &[String]) -> String {
    apps.iter()
        .map(|a| format!(" --release-old-address {a}"))
        .collect()
}

/// An app `--release-old-address` names that no declaration declares.
fn unknown_app(release: &[String], apps: &[crate::input::app::App]) -> Option<String> {
    let name = release
        .iter()
        .find(|r| !apps.iter().any(|a| a.name == **r))?;
    let known = apps.iter().map(|a| a.name.as_str());
    let hint = crate::diag::did_you_mean(name, known)
        .map(|m| format!(" (did you mean `{m}`?)"))
        .unwrap_or_default();
    Some(format!(
        "--release-old-address names `{name}`, which no declaration under apps/ declares{hint}; `latgen status` lists the apps with callers of their own"
    ))
}

/// Why the next step is not written, and how to go on: it takes addresses away from
/// callers that call their apps straight, which only the user can tell to move.
fn held(step: &NextStep, rev: &str, paths: &ProjectPaths) -> String {
    let mut names: Vec<String> = step.held.iter().map(|r| r.app.clone()).collect();
    names.dedup();
    let mut out = format!(
        "step {} of {} is held: it takes addresses away from apps that declare callers of their own, which call them there straight, not through Kong\n",
        step.progress.step, step.progress.of,
    );
    for r in &step.held {
        out.push_str(&format!("  {}\n", r.show()));
    }
    out.push_str(&format!(
        "next: once those callers call the new address (it answers already), run `latgen render{} --base {rev}{}` to write step {}\n",
        paths.env_flag(),
        release_flags(&names),
        step.progress.step
    ));
    out
}

/// The change cannot be cut into safe steps: say where it stalls.
fn stuck(
    ui: Ui,
    rev: &str,
    built: &crate::pipeline::Built,
    full: &[(std::path::PathBuf, usize)],
    out: &std::path::Path,
) -> Exit {
    let quota = built.prepared.config.quotas.rules_per_service;
    let mut diags = crate::diag::Diagnostics::new();
    for (rel, rules) in full {
        diags.push(
            Diagnostic::error(
                Code::UnsafeRollout,
                format!("{} would need {rules} rules (quota {quota}) to keep its old rules while Kong moves to the new ones", rel.display()),
            )
            .at(crate::diag::Span::file(out.join(rel)))
            .help("move one of its apps to a group with room first (`latgen move APP --group N`), or raise quotas.rulesPerService"),
        );
    }
    if diags.is_empty() {
        diags.push(
            Diagnostic::error(
                Code::UnsafeRollout,
                format!("no further part of the change from {rev} can go live on its own without breaking a request"),
            )
            .help("split the change into smaller ones (an app added, removed or moved at a time) and render each with --base"),
        );
    }
    ui.report(&diags, &built.sources);
    Exit::Found
}

/// What the step holds and what comes next, for the person about to open the PR.
fn describe(step: &NextStep, s: &PrSummary, (rev, paths): (&str, &ProjectPaths)) -> String {
    if step.remaining == 0 {
        return format!(
            "nothing to roll out from {rev}: the output is what `latgen render` writes\n"
        );
    }
    let mut out = format!(
        "step {} of {}: this PR ",
        step.progress.step, step.progress.of
    );
    let sides: Vec<String> = [("Lattice", &s.lattice), ("Kong", &s.kong)]
        .into_iter()
        .filter(|(_, c)| !c.is_empty())
        .map(|(side, c)| format!("changes the {side} side ({})", counts(c)))
        .collect();
    out.push_str(&sides.join(" and "));
    out.push('\n');
    // What is billed while this step is live: a consolidation pays for the old routes and
    // the new groups together until its last step.
    if s.services_before != s.services_after {
        let dollars = crate::plan::rebalance::monthly_cost::dollars;
        out.push_str(&format!(
            "  Lattice services {} -> {} while this step is live ({}/month -> {}/month)\n",
            s.services_before,
            s.services_after,
            dollars(s.monthly_before),
            dollars(s.monthly_after)
        ));
    }
    for (what, names) in [("adds", &s.added), ("removes", &s.removed)] {
        if !names.is_empty() {
            out.push_str(&format!("  {what} {}\n", few(names)));
        }
    }
    let moved: Vec<String> = (s.moved.iter())
        .map(|(app, from, to)| format!("{app} ({from} → {to})"))
        .collect();
    if !moved.is_empty() {
        out.push_str(&format!("  moves {}\n", few(&moved)));
    }
    if step.completes() {
        out.push_str("next: nothing; once it is merged the change is complete\n");
    } else {
        out.push_str(&format!(
            "next: once this PR is merged and live, run `latgen render{} --base {rev}` on the merged commit for step {}\n",
            paths.env_flag(),
            step.progress.step + 1
        ));
    }
    // A later step takes addresses from direct callers: said now, so that they can move.
    for r in &step.held {
        out.push_str(&format!(
            "then: step {} takes {} away from `{}`'s callers of its own; `render --base` holds it until `--release-old-address {}`\n",
            step.progress.of,
            r.old.show(),
            r.app,
            r.app
        ));
    }
    out
}

/// The kit files the step changes, which are applied by hand.
fn kit_note(kit: &[(std::path::PathBuf, String)], changes: &[output::Change]) -> String {
    let changed: Vec<String> = (kit.iter())
        .filter(|(path, _)| changes.iter().any(|c| &c.path == path))
        .map(|(path, _)| path.display().to_string())
        .collect();
    if changed.is_empty() {
        return String::new();
    }
    format!(
        "  deploy kit: {} changed ({}): Argo CD does not apply the kit, and the step needs it; apply it by hand (`kubectl apply -f`) when this PR merges\n",
        plural(changed.len(), "file"),
        changed.join(", ")
    )
}

/// A list for one line of the terminal: the first few, and how many more.
fn few(items: &[String]) -> String {
    const SHOWN: usize = 5;
    let head = items[..items.len().min(SHOWN)].join(", ");
    match items.len().saturating_sub(SHOWN) {
        0 => head,
        more => format!(
            "{head} and {more} more (`latgen check --base REV --format markdown` lists them)"
        ),
    }
}

fn counts(c: &FileCounts) -> String {
    let parts: Vec<String> = [
        (c.added.len(), "added"),
        (c.changed.len(), "changed"),
        (c.removed.len(), "removed"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, w)| format!("{} {w}", plural(n, "file")))
    .collect();
    parts.join(", ")
}
