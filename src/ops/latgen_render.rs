//! `latgen render`: the shared stages, then the output stage in write mode (or, with
//! `--check`, in check mode: a diff and exit 1 when anything is stale); with `--base`, the
//! next safe step instead ([`super::latgen_render_base`]).

use crate::manifest::tree::Tree;
use std::borrow::Cow;
use std::path::Path;

use super::shell::{Exit, Ui};
use crate::diag::{Diagnostic, Sources};
use crate::input::ProjectPaths;
use crate::manifest::layout::Side;
use crate::output::{self, Change, ChangeKind, OutsideFile};
use crate::report::plural;

/// What `latgen render` is asked to do.
pub(crate) struct RenderOptions<'a> {
    /// Templates to use instead of the built-in ones.
    pub templates: Option<&'a Path>,
    /// Read what the built-in templates render back into typed objects too.
    pub verify: bool,
    /// Write nothing; exit 1 with a diff when anything is stale.
    pub check: bool,
    /// Write only one side (and the lock).
    pub only: Option<Side>,
    /// Write the next safe step of the change from this Git revision.
    pub base: Option<&'a str>,
    /// With `base`: the apps whose old addresses the step may take from their callers.
    pub release: &'a [String],
}

/// Renders each environment `envs` holds (the project, without environments).
pub(crate) fn run(
    args: &RenderOptions<'_>,
    envs: Result<Vec<ProjectPaths>, Diagnostic>,
    ui: Ui,
) -> Exit {
    let envs = match envs {
        Ok(e) => e,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    if let Some(note) = left_behind(&envs) {
        eprintln!("{note}");
    }
    if envs.len() > 1 && args.base.is_none() && !args.check {
        return render_all(args, &envs, ui);
    }
    super::project::per_env(Ok(envs), (ui, super::project::Heading::Stderr), |paths| {
        render_env(args, paths, ui)
    })
}

/// What a project that gained environments left behind: the lock (and output) it had
/// before, which no environment reads unless one takes it over (`--adopt-lock`).
fn left_behind(envs: &[ProjectPaths]) -> Option<String> {
    let first = envs.first()?;
    first.env.as_ref()?;
    if !first.root.join("latgen.lock").is_file() {
        return None;
    }
    Some(match envs.iter().find(|p| p.adopt_lock) {
        Some(p) => format!(
            "note: environment {} takes over latgen.lock; once this is written, remove it (`git rm latgen.lock`) and move the old output and kit into the environment's folders (the environments guide shows how)",
            p.env.as_deref().unwrap_or_default()
        ),
        None => "note: latgen.lock is read by no environment: if one of them is the live setup it was rendered for, take it over with `latgen render --env ENV --adopt-lock ENV`, or that environment is planned afresh and its live routes look new (the environments guide shows the whole move)".to_string(),
    })
}

/// Several environments at once: every one is built before any is written, so that a
/// problem in one leaves every environment's output and lock as they were.
fn render_all(args: &RenderOptions<'_>, envs: &[ProjectPaths], ui: Ui) -> Exit {
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
        match super::project::build(paths, args.templates, args.verify, ui) {
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
fn where_problem(paths: &ProjectPaths) -> Option<Diagnostic> {
    let project = crate::input::confine::Project::new(&paths.root);
    output::check_location(&paths.output, &paths.apps_dir)
        .or_else(|| project.output_folder(&paths.output))
}

/// One environment's render (the project's, without environments).
fn render_env(args: &RenderOptions<'_>, paths: ProjectPaths, ui: Ui) -> Exit {
    let out = paths.output.clone();
    if let Some(d) = where_problem(&paths) {
        return ui.fail(d, &Sources::default());
    }
    if let Some(rev) = args.base {
        let base_args = super::latgen_render_base::BaseOptions {
            templates: args.templates,
            verify: args.verify,
            check: args.check,
            release: args.release,
        };
        return super::latgen_render_base::run(&base_args, &paths, rev, ui);
    }
    // One run at a time per output folder, from reading the project to swapping the new
    // tree in; a run that writes first finishes what a killed one began.
    let _run = match output::begin_in(&paths.root, &out, !args.check, paths.env.is_some()) {
        Ok(l) => l,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    let Some(built) = super::project::build(&paths, args.templates, args.verify, ui) else {
        return Exit::Error;
    };
    write_built(args, &paths, built, ui)
}

/// Writes (or, with `--check`, compares) one environment's built output, lock and kit.
fn write_built(
    args: &RenderOptions<'_>,
    paths: &ProjectPaths,
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
    // deciding which files to write. Files the render left as they were share its texts.
    let existing = match output::read_tree_like(&out, &built.output.files) {
        Ok(t) => t,
        Err(d) => return ui.fail(d, &built.sources),
    };
    let only = args.only;
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
    let kit =
        super::latgen_deploy::kit_for_render(paths, &prepared.config, &all.files, &existing, only);
    let outside = std::iter::once(OutsideFile {
        path: &paths.lock,
        text: prepared.lock_text(),
    })
    .chain(kit.iter().map(|(path, text)| OutsideFile {
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

/// The warnings render prints: the build's, and those about the change it writes.
fn notes(
    built: &crate::pipeline::Built,
    existing: &Tree,
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
        built.prepared.config.env_name(),
    );
    let changes = crate::rollout::warnings::change_warnings(
        existing,
        &built.output.files,
        quota,
        out,
        created,
    );
    // The controller holds a route's old and new rules together only when the old ones are
    // live, and Argo CD applies only what Git holds: a route never committed (the example
    // app `init` writes, rendered and replaced before the first commit) has no old rules
    // anywhere. Asked of Git only for the findings there are, which are few.
    notes.extend_from(changes.into_iter().filter(|d| {
        d.code != crate::diag::codes::Code::GroupAtQuota
            || (d.span.as_ref()).is_some_and(|s| crate::rollout::git::committed(&s.file))
    }));
    notes.extend(crate::rollout::warnings::open_windows(
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
