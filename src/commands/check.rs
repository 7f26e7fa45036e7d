//! `latgen check`: the shared stages, then the gate's findings ([`crate::check`]) printed
//! in the format asked for.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::ValueEnum;

use super::args::InputArgs;
use super::{Exit, Ui};
use crate::check::CheckReport;
use crate::diag::codes::Severity;
use crate::diag::{Diagnostic, Diagnostics, Sources, render_human};
use crate::input::confine::Project;
use crate::render::Templates;

// The formats are described in `--format`'s own help: a described value would make clap
// print `check --help` in its long layout.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub(crate) enum Format {
    // Findings with the source line, for people.
    Human,
    // One JSON object per finding and line.
    Json,
    // GitHub Actions annotations (`::error file=…::…`).
    Github,
    // SARIF 2.1.0, for code scanning.
    Sarif,
    // A PR comment: the findings, then (with `--base`) what the change does and costs.
    Markdown,
}

#[derive(Debug, clap::Args)]
pub(crate) struct CheckArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// The committed output folder [default: generated beside the apps folder].
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Folder of templates `render` is run with.
    #[arg(long)]
    pub templates: Option<PathBuf>,
    /// Parse what the built-in templates render back into typed objects too, and stop
    /// when one is not exactly what latgen meant (custom templates' output always is).
    #[arg(long)]
    pub verify: bool,
    /// Output format: human (the source line of each finding), json (one object per
    /// finding and line), github (workflow annotations), sarif (2.1.0, for code scanning),
    /// markdown (a PR comment; with --base, also what the change does and costs).
    #[arg(long, value_enum, default_value_t = Format::Human, hide_possible_values = true)]
    pub format: Format,
    /// Exit 1 on warnings as well.
    #[arg(long)]
    pub deny_warnings: bool,
    /// Compare with this Git revision: accept a PR that leaves one side as it was when the
    /// other side can safely go live first, and refuse a change either side of which could
    /// break routing by going live first. `auto`: the merge base with the default branch.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// The latgen.lock of another project whose routes share the service network: warn
    /// when one of its Lattice service names is also one of this project's. Repeatable.
    #[arg(long, value_name = "FILE")]
    pub also_lock: Vec<PathBuf>,
    #[command(flatten)]
    pub color: super::args::ColorArg,
}

pub(crate) fn run(args: &CheckArgs, ui: Ui) -> Exit {
    let envs = match args.input.envs(args.output.as_ref()) {
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
                let mut text = heading(args.format, &format!("environment `{name}`"));
                text.push_str(&format(args.format, &report, ui.color));
                print_and_exit(args, text, &report.diags)
            }
            _ => finish(args, report, ui),
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
    finish_all(args, reports, ui)
}

/// Every environment's report, each under its name, then what shows only between them.
fn finish_all(args: &CheckArgs, reports: Vec<(String, CheckReport)>, ui: Ui) -> Exit {
    let facts: Vec<_> = reports
        .iter()
        .filter_map(|(_, r)| r.facts.as_ref())
        .collect();
    let between = crate::check::environments::between(&facts);
    // What lies between environments is said at their overlays.
    let mut sources = Sources::default();
    for f in &facts {
        let (file, text) = f.overlay();
        sources.insert(file.to_path_buf(), text.to_string());
    }
    let mut merged = Diagnostics::new();
    let mut text = String::new();
    for (name, report) in &reports {
        match args.format {
            Format::Human | Format::Markdown => {
                text.push_str(&heading(args.format, &format!("environment `{name}`")));
                text.push_str(&format(args.format, report, ui.color));
            }
            _ => merged.extend_from(report.diags.iter().cloned().map(|mut d| {
                d.message = format!("[{name}] {}", d.message);
                d
            })),
        }
    }
    let between_report = CheckReport {
        diags: between,
        sources,
        diff: String::new(),
        summary: None,
        facts: None,
    };
    match args.format {
        Format::Human | Format::Markdown => {
            text.push_str(&heading(args.format, "between environments"));
            text.push_str(&format(args.format, &between_report, ui.color));
        }
        _ => {
            merged.extend(between_report.diags.clone());
            let all = CheckReport {
                diags: merged,
                ..between_report
            };
            return print_and_exit(args, format(args.format, &all, ui.color), &all.diags);
        }
    }
    let mut all = between_report.diags;
    for (_, r) in reports {
        all.extend(r.diags);
    }
    print_and_exit(args, text, &all)
}

/// The heading of one part of a several-environment report.
fn heading(format: Format, name: &str) -> String {
    match format {
        Format::Markdown => format!("## {}{}\n\n", name[..1].to_uppercase(), &name[1..]),
        _ => format!("== {} ==\n", name.replace('`', "")),
    }
}

/// One environment's check (the project's, without environments): its report, or how the
/// command ends when the check cannot run; with `compare`, what `--env all` compares too.
fn check_env(
    args: &CheckArgs,
    paths: crate::input::ProjectPaths,
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
    let templates = match Templates::load(args.templates.as_deref().map(|d| (d, &project))) {
        Ok(t) => t.verifying(args.verify),
        Err(d) if d.code.is_operational() => return Err(ui.fail(d, &Sources::default())),
        Err(d) => return Ok(only(d)),
    };
    // The base is read while the project is built for the rollout step: the committed
    // tree first, then from Git only the files the change touched, and the base's lock.
    let ((base, committed, shipped), built) = rayon::join(
        || {
            let Some(rev) = args.base.as_deref() else {
                return (Ok(None), None, None);
            };
            let committed = crate::output::read_tree(&out);
            let now = committed.as_ref().ok();
            let base = crate::change::git::base_tree(
                &paths.root,
                Some(rev),
                &out,
                now.unwrap_or(&Default::default()),
            );
            let shipped = match &base {
                Ok(Some((rev, _))) => crate::change::steps::shipped(&paths.lock, rev),
                _ => None,
            };
            (base, Some(committed), shipped)
        },
        || {
            args.base
                .is_some()
                .then(|| crate::pipeline::build_final(&paths, &templates))
        },
    );
    let base = match base {
        Ok(b) => b,
        Err(d) => return Err(ui.fail(d, &Sources::default())),
    };
    let (step, built, states) = match (base.as_ref(), built) {
        (Some((_, b)), Some(built)) => {
            let base = crate::output::manifests(b);
            match rollout_step(built, &templates, &base, shipped) {
                Some((step, Some((built, states)))) => (Some(step), Some(built), Some(states)),
                Some((step, None)) => (Some(step), None, None),
                None => (None, None, None),
            }
        }
        // `--base auto` found nothing to compare with: the project built is the check's.
        (None, Some(Ok(built))) if built.no_move_finished() => (None, Some(built), None),
        _ => (None, None, None),
    };
    let (project, tree) = built_and_read(&paths, &templates, built, committed);
    let tree = tree.map_err(|d| ui.fail(d, &Sources::default()))?;
    let base_commit = base.as_ref().map(|(rev, _)| rev.clone());
    let base = base.map(|(_, tree)| tree);
    let mut opts = crate::check::CheckOptions {
        paths,
        out_dir: out,
        templates: &templates,
        base,
        step,
        base_rev: args.base.clone(),
        base_commit,
        also_locks: args.also_lock.clone(),
        states,
        compare,
    };
    crate::check::check(&mut opts, project, tree).map_err(|d| ui.fail(d, &Sources::default()))
}

/// The project as the check judges it (the one the rollout step built, when it is the
/// same: `built`), and the committed output folder's files (read already when `committed`).
fn built_and_read(
    paths: &crate::input::ProjectPaths,
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
    let build = || crate::pipeline::build_partial(paths, templates);
    match committed {
        Some(tree) => (build(), tree),
        // The build leaves a core idle at times (listing the declarations, merging what was
        // read, planning): the committed tree is read in those gaps.
        None => crate::output::read_tree_while(out, build),
    }
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

/// Prints the report and says how the check ended.
fn finish(args: &CheckArgs, report: CheckReport, ui: Ui) -> Exit {
    let text = format(args.format, &report, ui.color);
    print_and_exit(args, text, &report.diags)
}

/// Prints a report's text and says how the check ended, from its findings.
fn print_and_exit(args: &CheckArgs, text: String, diags: &Diagnostics) -> Exit {
    crate::diag::progress::clear();
    print!("{text}");
    if diags.iter().any(|d| d.code.is_operational()) {
        return Exit::Error;
    }
    let failing = diags
        .iter()
        .any(|d| d.severity == Severity::Error || args.deny_warnings);
    if failing { Exit::Found } else { Exit::Success }
}

/// The step `render --base REV` writes from `base`, when the inputs can be built; and the
/// project built on the way when it is what the check builds too (no move in flight).
fn rollout_step(
    built: Result<crate::pipeline::Built, crate::pipeline::Failure>,
    templates: &Templates,
    base: &crate::manifest::tree::Tree,
    shipped: Option<crate::input::lock::Rollout>,
) -> Option<(
    crate::check::RolloutStep,
    Option<(crate::pipeline::Built, crate::change::judge::States)>,
)> {
    let step = crate::change::steps::next_step(built.ok()?, templates, base, shipped).ok()?;
    // After the merge, the base is the merged commit: `auto` (the merge base with the
    // default branch) names it from any branch made from there; `rev` as given (`HEAD~1`)
    // would name this step's base again.
    let next = (!step.completes()).then(|| "latgen render --base auto".to_string());
    // The states the step read are those of the change the check judges when the check
    // would build the project as the step did.
    let built = (step.built.no_move_finished()).then_some((step.built, step.states));
    let step = crate::check::RolloutStep {
        progress: crate::change::summary::Progress {
            step: step.progress.step as usize,
            of: step.progress.of as usize,
            next,
        },
        files: step.files,
        lock_text: step.lock_text,
    };
    Some((step, built))
}

/// The findings a rollout step leaves for its later steps, said once (human output).
fn transient_note(s: &crate::change::summary::PrSummary) -> Option<String> {
    let p = s.progress.as_ref()?;
    (!s.transient.is_empty()).then(|| {
        format!(
            "note: {} of step {} of {} are its expected state (rules, and their apps' callers, live before the Kong routes that reach them, or kept until Kong has moved off them), not findings: the later steps resolve them\n",
            crate::report::plural(s.transient.len(), "unreachable rule"),
            p.step,
            p.of
        )
    })
}

fn format(format: Format, report: &CheckReport, color: bool) -> String {
    let diags = &report.diags;
    match format {
        Format::Human => {
            let mut t = render_human(
                diags,
                &report.sources,
                color && std::io::stdout().is_terminal(),
            );
            if diags.is_empty() {
                t.push_str("no findings\n");
            }
            if let Some(note) = report.summary.as_ref().and_then(transient_note) {
                t.push_str(&note);
            }
            if !report.diff.is_empty() {
                t.push('\n');
                t.push_str(&report.diff);
            }
            t
        }
        Format::Json => crate::report::json_lines(diags),
        Format::Github => crate::report::github(diags),
        Format::Sarif => crate::report::sarif(diags),
        Format::Markdown => crate::report::markdown::markdown(diags, report.summary.as_ref()),
    }
}
