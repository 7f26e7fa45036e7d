//! `latgen render`: the shared stages, then the output stage in write mode (or, with
//! `--check`, in check mode: a diff and exit 1 when anything is stale).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::args::{InputArgs, OnlySide};
use super::{Exit, Ui};
use crate::diag::Sources;
use crate::output::{self, Change, ChangeKind, LockFile};
use crate::report::plural;

#[derive(Debug, clap::Args)]
pub(crate) struct RenderArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Output folder [default: generated beside the apps folder].
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Folder of templates to use instead of the built-in ones (same file names).
    #[arg(long)]
    pub templates: Option<PathBuf>,
    /// Parse what the built-in templates render back into typed objects too, and stop
    /// when one is not exactly what latgen meant (custom templates' output always is).
    #[arg(long)]
    pub verify: bool,
    /// Write nothing; exit 1 with a unified diff when the output or the lock is stale.
    #[arg(long)]
    pub check: bool,
    /// Write only one side (and the lock), to ship a change as two PRs.
    #[arg(long, value_enum, conflicts_with = "base")]
    pub only: Option<OnlySide>,
    /// Write the next safe step of the change from this Git revision (`auto`: the merge
    /// base with the default branch): each file as in REV, as rendered, or in between, as
    /// much as is safe whichever side goes live first. Run it again on the merged step.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    #[command(flatten)]
    pub color: super::args::ColorArg,
}

pub(crate) fn run(args: &RenderArgs, ui: Ui) -> Exit {
    let envs = match args.input.envs(args.output.as_ref()) {
        Ok(e) => e,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    if envs.len() > 1 && args.base.is_none() && !args.check {
        return render_all(args, &envs, ui);
    }
    super::per_env(Ok(envs), ui, |paths| render_env(args, paths, ui))
}

/// Several environments at once: every one is built before any is written, so that a
/// problem in one leaves every environment's output and lock as they were.
fn render_all(args: &RenderArgs, envs: &[crate::input::ProjectPaths], ui: Ui) -> Exit {
    if let Some(d) = envs.iter().find_map(where_problem) {
        return ui.fail(d, &Sources::default());
    }
    let outs: Vec<&Path> = envs.iter().map(|p| p.output.as_path()).collect();
    let _run = match output::begin_all(&envs[0].root, &outs) {
        Ok(l) => l,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    let mut builds = Vec::with_capacity(envs.len());
    for paths in envs {
        eprintln!("environment {}:", paths.env_name().unwrap_or_default());
        match ui.build(paths, args.templates.as_deref(), args.verify) {
            Some(built) => builds.push(built),
            None => {
                eprintln!("nothing written: every environment must build first");
                return Exit::Error;
            }
        }
    }
    let mut worst = Exit::Success;
    for (paths, built) in envs.iter().zip(builds) {
        eprintln!("environment {}:", paths.env_name().unwrap_or_default());
        worst = worst.worst(write_built(args, paths, built, ui));
    }
    worst
}

/// An output folder that is no place to write to: a file, inside apps/, outside the
/// project.
fn where_problem(paths: &crate::input::ProjectPaths) -> Option<crate::diag::Diagnostic> {
    let project = crate::input::confine::Project::new(&paths.root);
    output::check_location(&paths.output, &paths.apps_dir)
        .or_else(|| project.output_folder(&paths.output))
}

/// One environment's render (the project's, without environments).
fn render_env(args: &RenderArgs, paths: crate::input::ProjectPaths, ui: Ui) -> Exit {
    let out = paths.output.clone();
    if let Some(d) = where_problem(&paths) {
        return ui.fail(d, &Sources::default());
    }
    if let Some(rev) = &args.base {
        let base_args = super::render_base::Args {
            paths,
            output: &out,
            templates: args.templates.as_deref(),
            verify: args.verify,
            check: args.check,
        };
        return super::render_base::run(&base_args, rev, ui);
    }
    // One run at a time per output folder, from reading the project to swapping the new
    // tree in; a run that writes first finishes what a killed one began.
    let _run = match output::begin_in(&paths.root, &out, !args.check, paths.env.is_some()) {
        Ok(l) => l,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    let Some(built) = ui.build(&paths, args.templates.as_deref(), args.verify) else {
        return Exit::Error;
    };
    write_built(args, &paths, built, ui)
}

/// Writes (or, with `--check`, compares) one environment's built output, lock and kit.
fn write_built(
    args: &RenderArgs,
    paths: &crate::input::ProjectPaths,
    built: crate::pipeline::Built,
    ui: Ui,
) -> Exit {
    let out = paths.output.clone();
    if !args.check
        && let Err(d) = paths.make_env_folders()
    {
        return ui.fail(d, &built.sources);
    }
    // The output folder as it is: read once, for the warnings about the change and for
    // deciding which files to write.
    let existing = match output::read_tree(&out) {
        Ok(t) => t,
        Err(d) => return ui.fail(d, &built.sources),
    };
    let only = args.only.map(OnlySide::side);
    let keep = |p: &std::path::Path| only.is_none_or(|s| p.starts_with(s.dir()));
    let notes = notes(&built, &existing, &keep, (&paths.config, &out));
    ui.report(&notes, &built.sources);
    let crate::pipeline::Built {
        prepared,
        output: all,
        sources,
        ..
    } = built;
    let rendered_files = all.files.keys().filter(|p| keep(p)).count();
    let kit = deploy_kit(paths, &out, &prepared.config, &all, &existing, only);
    let outside = std::iter::once(LockFile {
        path: &paths.lock,
        text: prepared.lock_text(),
    })
    .chain(kit.iter().map(|(path, text)| LockFile {
        path,
        text: text.clone(),
    }));
    let synced = if args.check {
        output::change_set(&paths.root, &out, &existing, Cow::Owned(all), outside, keep)
    } else {
        output::sync(&paths.root, &out, &existing, Cow::Owned(all), outside, keep)
    };
    crate::diag::progress::clear();
    let changes = match synced {
        Ok(c) => c,
        Err(d) => return ui.fail(d, &sources),
    };
    let summary = summary(&prepared);
    if args.check {
        return stale(&out, &paths.lock, &changes, &summary);
    }
    let count = |k: ChangeKind| changes.iter().filter(|c| c.kind == k).count();
    eprintln!(
        "rendered {summary}: {} added, {} changed, {} removed, {} unchanged",
        count(ChangeKind::Added),
        count(ChangeKind::Changed),
        count(ChangeKind::Removed),
        rendered_files + 1 + kit.len() - count(ChangeKind::Added) - count(ChangeKind::Changed)
    );
    crate::diag::free_later((existing, changes, prepared, sources));
    Exit::Success
}

/// The deploy kit as it fits the output this run leaves on disk (see
/// [`crate::render::deploy::kit_to_refresh`]; empty for a project without one). With `--only`, the
/// other side stays as it is on disk, and so does the part of the kit that follows from
/// it: an AppProject that dropped the namespaces of a side not yet shipped would stop Argo
/// CD from syncing (or pruning) what that side still has there.
fn deploy_kit(
    paths: &crate::input::ProjectPaths,
    out: &Path,
    config: &crate::input::config::Config,
    all: &crate::render::Rendered,
    existing: &BTreeMap<PathBuf, String>,
    only: Option<crate::manifest::layout::Side>,
) -> Vec<(PathBuf, String)> {
    if config.deploy.is_none() {
        return Vec::new();
    }
    let Some(side) = only else {
        return crate::render::deploy::kit_to_refresh(paths, out, config, all);
    };
    let files = (all.files.iter().filter(|(p, _)| p.starts_with(side.dir())))
        .chain(existing.iter().filter(|(p, text)| {
            !p.starts_with(side.dir()) && text.starts_with(crate::manifest::layout::HEADER)
        }))
        .map(|(p, text)| (p.clone(), text.clone()))
        .collect();
    let on_disk = crate::render::Rendered {
        files,
        not_stored: Vec::new(),
    };
    crate::render::deploy::kit_to_refresh(paths, out, config, &on_disk)
}

/// The warnings render prints: the build's, and those about the change it writes.
fn notes(
    built: &crate::pipeline::Built,
    existing: &BTreeMap<PathBuf, String>,
    keep: &dyn Fn(&Path) -> bool,
    (config, out): (&Path, &Path),
) -> crate::diag::Diagnostics {
    let mut notes = built.diags.clone();
    let quota = built.prepared.config.quotas.rules_per_service as usize;
    // render writes what the plan says; the PR gate (`check`) is where a pair of
    // order-dependent rules the change creates is an error.
    let created = (
        &built.prepared.apps[..],
        crate::diag::codes::Severity::Warning,
    );
    notes.extend(crate::change::warnings::change_warnings(
        existing,
        &built.output.files,
        quota,
        out,
        created,
    ));
    notes.extend(crate::change::warnings::open_windows(
        existing,
        &built.output.files,
        &built.prepared.config,
        out,
    ));
    let written = |p: &Path| keep(p) && built.output.files.contains_key(p);
    if let Some(d) = crate::check::names::placeholder_new_routes(
        &built.prepared,
        &written,
        existing,
        (config, out),
        &built.sources,
    ) {
        notes.push(d);
    }
    notes.sort();
    notes
}

/// `80 apps in 14 Lattice services (8 shared groups, 6 dedicated)`.
fn summary(prepared: &crate::plan::prepared::Prepared) -> String {
    let plan = &prepared.plan;
    let mut out = format!(
        "{} in {} ({}, {} dedicated)",
        plural(prepared.apps.len(), "app"),
        plural(plan.service_count(), "Lattice service"),
        plural(plan.groups.len(), "shared group"),
        plan.dedicated.len()
    );
    let previews = &plan.previews;
    if !previews.list.is_empty() {
        out.push_str(&format!(
            ", and {} in {}",
            plural(previews.list.len(), "preview"),
            plural(previews.groups.len(), "preview group")
        ));
    }
    out
}

/// `render --check`: the diff of what render would change, and exit 1 when it is not empty.
fn stale(out: &Path, lock: &Path, changes: &[Change], summary: &str) -> Exit {
    if changes.is_empty() {
        eprintln!("up to date: {summary}");
        return Exit::Success;
    }
    print!("{}", output::unified_diff(changes));
    let lock_stale = changes.iter().any(|c| c.path == lock);
    let outputs = changes.iter().filter(|c| c.path.starts_with(out)).count();
    // The rest is the deploy kit's.
    let kit = changes.len() - outputs - usize::from(lock_stale);
    let mut stale: Vec<String> = Vec::new();
    if outputs > 0 {
        stale.push(format!("{} ({})", out.display(), plural(outputs, "file")));
    }
    if kit > 0 {
        stale.push(format!("the deploy kit ({})", plural(kit, "file")));
    }
    if lock_stale {
        stale.push(lock.display().to_string());
    }
    let what = match stale.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    };
    eprintln!(
        "error: {what} differ from what `latgen render` writes; run it and commit the result"
    );
    Exit::Found
}
