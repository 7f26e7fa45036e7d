//! The gate's run: every check on the project as built and the committed tree, side by
//! side where they are independent, and what the change does (the PR summary).

use crate::manifest::tree::Tree;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

use super::committed::{committed_findings, to_model};
use super::judged::{judged_as_change, quote_committed};
use super::rollout::rollout_safety;
use super::staleness::staleness;
use super::{across_environments, names, plugins, rollout, staleness};
use crate::diag::codes::{Code, Severity};
use crate::diag::{Diagnostic, Diagnostics, Sources};
use crate::input::ProjectPaths;
use crate::output::{self, manifests};
use crate::plan::prepared::Prepared;
use crate::render::{Rendered, Templates};
use crate::rollout::warnings::change_warnings;

pub(crate) struct CheckOptions<'a> {
    pub paths: ProjectPaths,
    pub out_dir: PathBuf,
    pub templates: &'a Templates,
    /// The committed output at the base revision, by path under the output folder.
    pub base: Option<Tree>,
    /// The step `render --base` writes from that base, which is current for a PR.
    pub step: Option<RolloutStep>,
    /// The base revision as the user gave it, for advice.
    pub base_rev: Option<String>,
    /// The commit it resolved to.
    pub base_commit: Option<String>,
    /// Other projects' lock files whose Lattice service names this project's must not take.
    pub also_locks: Vec<PathBuf>,
    /// The routing states the rollout step read on its way to `built` (the base's, the
    /// first step's, the target's), so that they are not read twice.
    pub states: Option<crate::rollout::steps::States>,
    /// Whether the report carries what `check --env all` compares between environments.
    pub compare: bool,
}

/// A step of a rollout, as `render --base` writes it, against the committed output folder
/// (its files are compared once and not kept: they are a whole tree).
#[derive(Debug, Clone)]
pub(crate) struct RolloutStep {
    /// The committed manifests are the step's files, kustomizations aside.
    pub committed: bool,
    /// The manifests latgen wrote (by their header) are the same in both.
    pub committed_owned: bool,
    pub lock_text: String,
    /// Where the step stands in the rollout.
    pub progress: crate::rollout::summary::Progress,
}

pub(crate) struct CheckReport {
    pub diags: Diagnostics,
    pub sources: Sources,
    /// A unified diff of stale files (human output shows it after the findings).
    pub diff: String,
    /// What the change does, when it is judged against a base.
    pub summary: Option<crate::rollout::summary::PrSummary>,
    /// What `check --env all` compares with the other environments (an environment's
    /// check whose project builds).
    pub facts: Option<across_environments::Facts>,
}

/// Runs every check on the project as built (`project`, see [`crate::pipeline::Partial`])
/// and the output folder's files as committed (`tree`). Problems with the inputs are
/// findings; only a failure to read the project's other files ends the run early.
pub(crate) fn check(
    opts: &mut CheckOptions,
    project: crate::pipeline::Partial,
    tree: Tree,
) -> Result<CheckReport, Diagnostic> {
    let known = opts.states.take();
    let opts = &*opts;
    let crate::pipeline::Partial { run, mut rendered } = project;
    let mut diags = run.diags;
    let mut sources = run.sources;
    let catalog = plugin_catalog(opts, run.prepared.as_ref(), &tree, &mut diags);
    let committed = manifests(&tree);
    // The base is compared with the committed manifests, so it is read the same way: a
    // file in the output folder that is not a manifest (a README) is neither side.
    let base = opts.base.as_ref().map(|b| manifests(b));
    let at_step = progress(opts);
    let states = change_states(
        base.as_deref(),
        &committed,
        rendered.as_ref(),
        known,
        &at_step,
    );
    // What the committed manifests show on their own, and what the change to them shows,
    // are independent: found side by side. The committed step's routing state is the one
    // the rollout step read.
    let known = states
        .as_ref()
        .filter(|_| at_step.is_some())
        .map(|s| &s.head);
    let (committed_found, change_found) = rayon::join(
        || {
            let manifests = to_model(&committed, rendered.as_ref());
            let built_in = ["lattice/group-route.yaml.j2", "lattice/host-route.yaml.j2"]
                .iter()
                .chain(["lattice/iam-auth-policy.yaml.j2"].iter())
                .all(|t| !opts.templates.is_custom(t));
            let project = (run.prepared.as_ref(), catalog.as_ref());
            committed_findings(&manifests, (project, known, built_in), &opts.out_dir)
        },
        || match (&run.prepared, &rendered) {
            (Some(prepared), Some(Ok((rendered, _)))) => {
                let rendered = (rendered, states.as_ref());
                let lock = sources.text(&opts.paths.lock);
                let committed = (&*committed, lock);
                change_findings(opts, prepared, rendered, committed, base.as_deref(), &tree)
            }
            (_, Some(Err(d))) => Ok((d.clone(), String::new())),
            _ => Ok((Diagnostics::new(), String::new())),
        },
    );
    let (found, diff) = change_found?;
    diags.extend(found);
    diags.extend(committed_found);
    let trees = names::Committed {
        head: &committed,
        base: base.as_deref(),
        out_dir: &opts.out_dir,
    };
    let prepared = run.prepared.as_ref();
    let rev = opts.base_rev.as_deref().unwrap_or("REV");
    let step_files = at_step.as_ref().map(|_| (&*committed, rev));
    diags.extend(project_findings(
        opts,
        prepared,
        (rendered.as_ref(), step_files),
        &trees,
        &tree,
        &mut sources,
    ));
    let (kept, transient) = judged_as_change(diags, opts, (states.as_ref(), &at_step), &sources);
    quote_committed(&kept, &committed, &opts.out_dir, &mut sources);
    let step = (prepared, states.as_ref(), at_step);
    let summary = (base.as_deref()).map(|b| pr_summary(opts, b, &committed, step, &transient));
    let facts = facts_of(opts, prepared, rendered.as_mut());
    let committed = match committed {
        Cow::Owned(c) => Some(c),
        Cow::Borrowed(_) => None,
    };
    crate::diag::free_later((tree, committed, rendered, run.prepared, states));
    Ok(CheckReport {
        diags: kept,
        sources,
        diff,
        summary,
        facts,
    })
}

/// What the change does, with the findings its step leaves for later steps.
fn pr_summary(
    opts: &CheckOptions,
    base: &Tree,
    committed: &Tree,
    (prepared, states, at_step): (
        Option<&Prepared>,
        Option<&rollout::ChangeStates>,
        Option<crate::rollout::summary::Progress>,
    ),
    transient: &Diagnostics,
) -> crate::rollout::summary::PrSummary {
    let mut s = summarize(base, committed, prepared, states, at_step);
    s.transient = transient.iter().map(|d| d.code).collect();
    s.budgets = prepared.map_or_else(Vec::new, crate::plan::rebalance::monthly_cost::budget_use);
    if let Some(config) = prepared.map(|p| &p.config) {
        s.deploy_kit =
            super::kit_changes::kit_changes(&opts.paths, config, opts.base_commit.as_deref());
    }
    s
}

/// What `check --env all` compares of this environment, when its project built.
/// The rendered files move into it: the check is done with them.
fn facts_of<D>(
    opts: &CheckOptions,
    prepared: Option<&Prepared>,
    rendered: Option<&mut Result<(crate::render::Rendered, D), Diagnostics>>,
) -> Option<across_environments::Facts> {
    match (prepared, rendered) {
        (Some(p), Some(Ok((output, _)))) if opts.compare => {
            across_environments::Facts::of(&opts.out_dir, p, std::mem::take(&mut output.files))
        }
        _ => None,
    }
}

/// The plugins the Kong routes may name: those `kong.pluginFiles` defines, and those the
/// committed Kong side holds (latgen's Prometheus plugin), which it knows even without
/// `kong.pluginFiles`. None when the project did not build.
fn plugin_catalog(
    opts: &CheckOptions,
    prepared: Option<&Prepared>,
    tree: &Tree,
    diags: &mut Diagnostics,
) -> Option<plugins::Catalog> {
    let mut catalog = plugins::Catalog::read(&opts.paths, &prepared?.config, diags)
        .unwrap_or_else(plugins::Catalog::without_plugin_files);
    catalog.add_committed(tree, &opts.out_dir);
    Some(catalog)
}

/// What the change from `base` to `committed` does, for the PR comment.
fn summarize(
    base: &Tree,
    committed: &Tree,
    prepared: Option<&Prepared>,
    states: Option<&rollout::ChangeStates>,
    at_step: Option<crate::rollout::summary::Progress>,
) -> crate::rollout::summary::PrSummary {
    let price = prepared.map_or_else(
        || {
            crate::input::config::Config::default()
                .pricing
                .service_hour_usd
        },
        |p| p.config.pricing.service_hour_usd,
    );
    let apps = prepared.map_or(&[][..], |p| &p.apps[..]);
    match states {
        Some(s) => crate::rollout::summary::summarize_states(
            base,
            committed,
            (&s.base, &s.head),
            (price, apps),
            at_step,
        ),
        None => crate::rollout::summary::summarize(base, committed, (price, apps), at_step),
    }
}

/// The project's output as built, or why it could not be.
type BuiltOutput = Result<(Rendered, crate::manifest::tree::Docs), Diagnostics>;
/// The committed step's files and the base revision, when the PR is a step of a rollout.
type StepFiles<'a> = Option<(&'a Tree, &'a str)>;

/// What the project shows besides its routes: service names against what exists, the deploy
/// kit, files in the output folder latgen did not write, and an interrupted render.
fn project_findings(
    opts: &CheckOptions,
    prepared: Option<&Prepared>,
    (rendered, step): (Option<&BuiltOutput>, StepFiles<'_>),
    trees: &names::Committed,
    tree: &Tree,
    sources: &mut Sources,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    diags.extend(names::findings(prepared, trees, opts, sources));
    let config = prepared.map(|p| &p.config);
    diags.extend(crate::render::deploy_kit::findings(
        &opts.paths,
        &opts.out_dir,
        config,
        rendered,
        step,
        sources,
    ));
    let rendered_files = match rendered {
        Some(Ok((out, _))) => Some(&out.files),
        _ => None,
    };
    diags.extend(staleness::foreign_files(
        tree,
        rendered_files,
        &opts.out_dir,
    ));
    // Where latgen writes through pending files: beside the lock and the settings, and
    // in the deploy kit's folder.
    let mut deploy = opts.paths.root.join(crate::render::deploy_kit::FOLDER);
    if let Some(env) = opts.paths.env_name() {
        deploy.push(env);
    }
    let lock_dir = opts.paths.lock.parent().unwrap_or(Path::new(""));
    let left = (output::interrupted_render(&opts.paths.root, &opts.out_dir).into_iter()).chain(
        output::leftovers(
            &opts.paths.root,
            &opts.out_dir,
            &[lock_dir, &opts.paths.root, &deploy],
        ),
    );
    diags.extend(Diagnostics::from_iter(
        left.map(|d| committed_or_left(&opts.paths.root, d)),
    ));
    diags
}

/// What an interrupted run left is a warning; the same committed to the repository is an
/// error: no run of latgen commits it, and a PR that does is steering a later run.
fn committed_or_left(root: &Path, d: Diagnostic) -> Diagnostic {
    match &d.span {
        Some(span)
            if d.code == Code::InterruptedRender
                && crate::rollout::git::tracked(root, &span.file) =>
        {
            output::planted_transaction_file(
                &span.file,
                "is committed to the repository: latgen's staging folders, journals and pending files are never committed",
            )
        }
        _ => d,
    }
}

/// The routing states of a change against a base, read mostly from the render's documents,
/// and those the rollout step read (`known`) taken as they are; `at_step`: the committed
/// tree is the step.
fn change_states(
    base: Option<&Tree>,
    committed: &Tree,
    rendered: Option<&Result<(Rendered, crate::manifest::tree::Docs), Diagnostics>>,
    known: Option<crate::rollout::steps::States>,
    at_step: &Option<crate::rollout::summary::Progress>,
) -> Option<rollout::ChangeStates> {
    let (Some(base), Some(Ok((out, docs)))) = (base, rendered) else {
        return None;
    };
    let known = known.and_then(|k| rollout::Known::of(k, at_step.is_some()));
    Some(rollout::ChangeStates::read(
        base,
        committed,
        (&out.files, docs),
        known,
    ))
}

/// Where the committed tree stands in its rollout, when it is the step `render --base` writes.
fn progress(opts: &CheckOptions) -> Option<crate::rollout::summary::Progress> {
    let step = opts.step.as_ref().filter(|s| s.committed)?;
    Some(step.progress.clone())
}

/// What rendering shows about the change: quota during the switch, order-dependent pairs it
/// creates, safety of the rollout (with a base), and staleness with its diff.
fn change_findings(
    opts: &CheckOptions,
    prepared: &Prepared,
    (rendered, states): (&Rendered, Option<&rollout::ChangeStates>),
    (committed, committed_lock): (&Tree, Option<&str>),
    base: Option<&Tree>,
    tree: &Tree,
) -> Result<(Diagnostics, String), Diagnostic> {
    let mut diags = Diagnostics::new();
    let before = base.unwrap_or(committed);
    // A PR that is a step of a rollout applies the committed tree, not the target.
    let after = match &opts.step {
        Some(step) if base.is_some() && step.committed_owned => committed,
        _ => &rendered.files,
    };
    let quota = prepared.config.quotas.rules_per_service as usize;
    let created = (
        &prepared.apps[..],
        Severity::Error,
        prepared.config.env_name(),
    );
    diags.extend(change_warnings(
        before,
        after,
        quota,
        &opts.out_dir,
        created,
    ));
    diags.extend(crate::rollout::warnings::open_windows(
        before,
        after,
        &prepared.config,
        &opts.out_dir,
    ));
    // A step against a base: a route it rewrites resets the canaries running on it, and
    // one that takes an app off a service strands the callers that call it there.
    if let Some(base) = base {
        diags.extend(crate::rollout::warnings::canary_route_changes(
            base,
            after,
            &prepared.apps,
            &opts.out_dir,
        ));
        diags.extend(crate::rollout::addresses::moved_warnings(
            base,
            committed,
            &prepared.apps,
            &opts.out_dir,
        ));
    }
    // Whether the change is safe to roll out and whether it is up to date are independent.
    let (safety, stale) = rayon::join(
        || match (base, states) {
            (Some(base), Some(states)) => {
                let auth = prepared.config.auth.probe();
                rollout_safety(opts, base, committed, rendered, states, auth.as_ref())
            }
            _ => Diagnostics::new(),
        },
        || {
            staleness(
                opts,
                prepared,
                rendered,
                (committed, committed_lock),
                base,
                tree,
            )
        },
    );
    diags.extend(safety);
    let (stale, diff) = stale?;
    diags.extend(stale);
    Ok((diags, diff))
}
