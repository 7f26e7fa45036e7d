//! `latgen check`: the PR gate's run. The base revision is read while the project is
//! built (for the rollout step, when there is a base), then the project is built as the
//! gate judges it while the committed output folder is read, and [`crate::check`] judges
//! both; [`super::check_output`] prints the report in the format asked for.

use std::path::{Path, PathBuf};

use super::check_output::{self, Format};
use super::shell::{Exit, Ui};
use crate::check::CheckReport;
use crate::diag::{Diagnostic, Diagnostics, Sources};
use crate::input::ProjectPaths;
use crate::input::confine::Project;
use crate::manifest::layout::is_kustomization;
use crate::render::Templates;

/// What `latgen check` is asked to do.
pub(crate) struct GateOptions<'a> {
    /// The templates `render` is run with.
    pub templates: Option<&'a Path>,
    /// Read what the built-in templates render back into typed objects too.
    pub verify: bool,
    pub format: Format,
    /// Exit 1 on warnings as well.
    pub deny_warnings: bool,
    /// Compare with this Git revision.
    pub base: Option<&'a str>,
    /// Other projects' locks whose Lattice service names this project's must not take.
    pub also_locks: &'a [PathBuf],
}

/// Checks each environment `envs` holds (the project, without environments) and prints
/// the report in the format asked for.
pub(crate) fn run(
    args: &GateOptions<'_>,
    envs: Result<Vec<ProjectPaths>, Diagnostic>,
    ui: Ui,
) -> Exit {
    let envs = match envs {
        Ok(e) => e,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    if let [paths] = envs.as_slice() {
        let report = match check_env(args, paths.clone(), false, ui) {
            Ok(report) => report,
            Err(exit) => return exit,
        };
        // A PR comment says which environment it speaks of.
        return match (paths.env_name(), args.format) {
            (Some(name), Format::Markdown) => {
                let mut text = check_output::heading(args.format, &format!("environment `{name}`"));
                text.push_str(&check_output::format(args.format, &report, ui.color));
                check_output::print_and_exit(args.deny_warnings, text, &report.diags)
            }
            _ => check_output::finish(args.deny_warnings, args.format, report, ui),
        };
    }
    let mut reports = Vec::with_capacity(envs.len());
    for paths in envs {
        let name = paths.env_name().unwrap_or_default().to_string();
        match check_env(args, paths, true, ui) {
            Ok(report) => reports.push((name, report)),
            Err(exit) => return exit,
        }
    }
    check_output::finish_all((args.deny_warnings, args.format), reports, ui)
}

/// One environment's check (the project's, without environments): its report, or how the
/// command ends when the check cannot run; with `compare`, what `--env all` compares too.
fn check_env(
    args: &GateOptions<'_>,
    paths: ProjectPaths,
    compare: bool,
    ui: Ui,
) -> Result<CheckReport, Exit> {
    let out = paths.output.clone();
    if let Some(d) = crate::output::check_location(&out, &paths.apps_dir) {
        return Err(ui.fail(d, &Sources::default()));
    }
    // An output folder or a template that leads out of the project is a finding about the
    // PR, reported in the format asked for; the check cannot go on without them.
    let project = Project::new(&paths.root);
    if let Some(d) = project.output_folder(&out) {
        return Ok(only(d));
    }
    let templates = match Templates::load(args.templates.map(|d| (d, &project))) {
        Ok(t) => t.verifying(args.verify),
        Err(d) if d.code.is_operational() => return Err(ui.fail(d, &Sources::default())),
        Err(d) => return Ok(only(d)),
    };
    // The base is read while the project is built for the rollout step: the committed
    // tree first, then from Git only the files the change touched, and the base's lock.
    // The committed tree, once read, is the render's to share texts with.
    let read = crate::pipeline::Beside::new();
    let ((base, shipped), built) = rayon::join(
        || read_base(args.base, &paths, &read),
        || {
            args.base
                .is_some()
                .then(|| crate::pipeline::build_final(&paths, &templates, Some(&read)))
        },
    );
    let mut base = match base {
        Ok(b) => b,
        Err(d) => return Err(ui.fail(d, &Sources::default())),
    };
    let mut committed = read.into_inner();
    if let Some(Ok(built)) = &built {
        share_with_render(&built.output.files, base.as_mut(), committed.as_mut());
    }
    let (step, built, states) = match (base.as_ref(), built) {
        (Some((_, b)), Some(built)) => {
            let base = crate::output::manifests(b);
            let released = released(&base, committed.as_ref(), built.as_ref().ok());
            let now = committed.as_ref().and_then(|c| c.as_ref().ok());
            match rollout_step(built, &templates, (&base, now), (&shipped, &released)) {
                Some((step, Some((built, states)))) => (Some(step), Some(built), Some(states)),
                Some((step, None)) => (Some(step), None, None),
                None => (None, None, None),
            }
        }
        // `--base auto` found nothing to compare with: the project built is the check's.
        (None, Some(Ok(built))) if built.no_move_finished() => (None, Some(built), None),
        _ => (None, None, None),
    };
    let (built, tree) = built_and_read(&paths, &templates, built, committed);
    let tree = tree.map_err(|d| ui.fail(d, &Sources::default()))?;
    let base_commit = base.as_ref().map(|(rev, _)| rev.clone());
    let base = base.map(|(_, tree)| tree);
    let mut opts = crate::check::CheckOptions {
        paths,
        out_dir: out,
        templates: &templates,
        base,
        step,
        base_rev: args.base.map(str::to_string),
        base_commit,
        also_locks: args.also_locks.to_vec(),
        states,
        compare,
    };
    let report = crate::check::check(&mut opts, built, tree);
    // The base tree is the run's largest left: freed off the main thread, as the rest is.
    if let Some(base) = opts.base.take() {
        crate::diag::free_later(base);
    }
    report.map_err(|d| ui.fail(d, &Sources::default()))
}

/// The base revision's output folder and the commit it resolved to, when there is a base.
type BaseRead = Result<Option<(String, crate::manifest::tree::Tree)>, Diagnostic>;

/// The base revision's output folder (with the commit `rev` resolved to) and what its lock
/// records (see [`crate::rollout::steps::shipped_from`]), read after the committed output
/// folder (into `read`): the base takes the files that are the same from there.
fn read_base(
    rev: Option<&str>,
    paths: &ProjectPaths,
    read: &crate::pipeline::Beside,
) -> (BaseRead, crate::rollout::steps::Shipped) {
    let Some(rev) = rev else {
        return (Ok(None), (None, None));
    };
    let now = read.get_or_init(|| crate::output::read_tree(&paths.output));
    let empty = Default::default();
    let base = crate::rollout::git::base_tree_of(paths, Some(rev), now.as_ref().unwrap_or(&empty));
    let shipped = match &base {
        Ok(Some((rev, _))) => crate::rollout::steps::shipped_from(&paths.lock, rev),
        _ => (None, None),
    };
    (base, shipped)
}

/// The project as the check judges it (the one the rollout step built, when it is the
/// same: `built`), and the committed output folder's files (read already when `committed`).
fn built_and_read(
    paths: &ProjectPaths,
    templates: &Templates,
    built: Option<crate::pipeline::Built>,
    committed: Option<Result<crate::manifest::tree::Tree, Diagnostic>>,
) -> (
    crate::pipeline::Partial,
    Result<crate::manifest::tree::Tree, Diagnostic>,
) {
    let out = &paths.output;
    if let Some(b) = built {
        let tree = committed.unwrap_or_else(|| crate::output::read_tree(out));
        return (b.into(), tree);
    }
    let (run, tree) = match committed {
        Some(tree) => (crate::pipeline::prepare(paths), tree),
        // The shared stages leave a core idle at times (listing the declarations, merging
        // what was read, planning): the committed tree is read in those gaps.
        None => crate::output::read_tree_while(out, || crate::pipeline::prepare(paths)),
    };
    // Read before the render, so that the render takes the committed texts it makes too.
    let like = tree.as_ref().ok();
    (crate::pipeline::render_partial(run, templates, like), tree)
}

/// The apps whose old addresses the committed tree takes from their callers of their own:
/// the step `render --base` writes for the PR is the one that lets them go, as the user
/// asked it with `--release-old-address` (`direct-callers-moved` says so to the reviewer).
fn released(
    base: &crate::manifest::tree::Tree,
    committed: Option<&Result<crate::manifest::tree::Tree, Diagnostic>>,
    built: Option<&crate::pipeline::Built>,
) -> Vec<String> {
    let (Some(Ok(committed)), Some(built)) = (committed, built) else {
        return Vec::new();
    };
    let committed = crate::output::manifests(committed);
    let mut apps: Vec<String> =
        (crate::rollout::addresses::released(base, &committed, &built.prepared.apps).into_iter())
            .map(|r| r.app)
            .collect();
    apps.dedup();
    apps
}

/// The base's and the committed tree's texts that the render made too, made the render's:
/// a change leaves most files as they were, so the three trees then hold one copy of each
/// and the rollout's many comparisons of them are by address.
fn share_with_render(
    rendered: &crate::manifest::tree::Tree,
    base: Option<&mut (String, crate::manifest::tree::Tree)>,
    committed: Option<&mut Result<crate::manifest::tree::Tree, Diagnostic>>,
) {
    use crate::manifest::tree::share_texts;
    let base = base.map(|(_, b)| b);
    let committed = committed.and_then(|c| c.as_mut().ok());
    rayon::join(
        || base.map(|b| share_texts(b, rendered)),
        || committed.map(|c| share_texts(c, rendered)),
    );
}

/// Whether two trees hold the same files, kustomizations aside.
fn same_files(a: &crate::manifest::tree::Tree, b: &crate::manifest::tree::Tree) -> bool {
    let kept = |(p, _): &(&std::path::PathBuf, &crate::manifest::tree::Text)| !is_kustomization(p);
    a.iter().filter(kept).eq(b.iter().filter(kept))
}

/// A report of one finding that ended the check early.
fn only(d: Diagnostic) -> CheckReport {
    let mut diags = Diagnostics::new();
    diags.push(d);
    CheckReport {
        diags,
        sources: Sources::default(),
        diff: String::new(),
        summary: None,
        facts: None,
    }
}

/// The step `render --base REV` writes from `base`, when the inputs can be built; and the
/// project built on the way when it is what the check builds too (no move in flight).
fn rollout_step(
    built: Result<crate::pipeline::Built, crate::pipeline::Failure>,
    templates: &Templates,
    (base, committed): (
        &crate::manifest::tree::Tree,
        Option<&crate::manifest::tree::Tree>,
    ),
    shipped: (&crate::rollout::steps::Shipped, &[String]),
) -> Option<(
    crate::check::RolloutStep,
    Option<(crate::pipeline::Built, crate::rollout::steps::States)>,
)> {
    let step = crate::rollout::steps::next_step(built.ok()?, templates, base, shipped).ok()?;
    // After the merge, the base is the merged commit: `auto` (the merge base with the
    // default branch) names it from any branch made from there; `rev` as given (`HEAD~1`)
    // would name this step's base again.
    let next = (!step.completes()).then(|| "latgen render --base auto".to_string());
    // The states the step read are those of the change the check judges when the check
    // would build the project as the step did.
    let built = (step.built.no_move_finished()).then_some((step.built, step.states));
    // The step's files are compared with the committed manifests here, once: the check
    // keeps the answers, not a second whole tree.
    let committed = committed.map(crate::output::manifests);
    let files = step.files;
    // Two walks of tens of thousands of files, side by side.
    let (same, same_owned) = committed.as_ref().map_or((false, false), |c| {
        rayon::join(
            || same_files(c, &files),
            || crate::check::same_owned(c, &files),
        )
    });
    let step = crate::check::RolloutStep {
        progress: crate::rollout::summary::Progress {
            step: step.progress.step as usize,
            of: step.progress.of as usize,
            next,
        },
        committed: same,
        committed_owned: same_owned,
        lock_text: step.lock_text,
    };
    Some((step, built))
}
