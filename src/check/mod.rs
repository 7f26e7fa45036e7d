//! Layer 9, check: `latgen check`, the PR gate (and, in `trace.rs`, following one request):
//! the shared stages (load → validate → plan → render, in memory), then what only the
//! committed tree can show: staleness against what `render` writes, rule shadowing and
//! unresolved routes in the manifests as committed (hand edits and custom templates
//! included), and — with a base revision — whether either half of the change could go live
//! first and break routing.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::change::warnings::change_warnings;
use crate::diag::codes::{Code, Severity};
use crate::diag::{Diagnostic, Diagnostics, Sources, Span};
use crate::input::ProjectPaths;
use crate::output::{self, manifests};
use crate::plan::prepared::Prepared;
use crate::render::{Rendered, Templates};
pub(crate) mod auth;
mod canary;
pub(crate) mod environments;
pub(crate) mod names;
mod plugins;
mod previews;
mod rollout;
mod routes;
mod staleness;
pub(crate) mod trace;

use crate::manifest::routing::{Doc, Network, Source, is_kong_file};
use rollout::rollout_safety;
use routes::{order_dependence, resolution, route_quotas, shadowing, unnamed_header_rules};
use staleness::staleness;

pub(crate) struct CheckOptions<'a> {
    pub paths: ProjectPaths,
    pub out_dir: PathBuf,
    pub templates: &'a Templates,
    /// The committed output at the base revision, by path under the output folder.
    pub base: Option<BTreeMap<PathBuf, String>>,
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
    pub states: Option<crate::change::judge::States>,
    /// Whether the report carries what `check --env all` compares between environments.
    pub compare: bool,
}

/// A step of a rollout, as `render --base` writes it.
#[derive(Debug, Clone)]
pub(crate) struct RolloutStep {
    /// The output files (both sides, kustomizations included).
    pub files: BTreeMap<PathBuf, String>,
    pub lock_text: String,
    /// Where the step stands in the rollout.
    pub progress: crate::change::summary::Progress,
}

pub(crate) struct CheckReport {
    pub diags: Diagnostics,
    pub sources: Sources,
    /// A unified diff of stale files (human output shows it after the findings).
    pub diff: String,
    /// What the change does, when it is judged against a base.
    pub summary: Option<crate::change::summary::PrSummary>,
    /// What `check --env all` compares with the other environments (an environment's
    /// check whose project builds).
    pub facts: Option<environments::Facts>,
}

/// Runs every check on the project as built (`project`, see [`crate::pipeline::Partial`])
/// and the output folder's files as committed (`tree`). Problems with the inputs are
/// findings; only a failure to read the project's other files ends the run early.
pub(crate) fn check(
    opts: &mut CheckOptions,
    project: crate::pipeline::Partial,
    tree: BTreeMap<PathBuf, String>,
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
    let at_step = progress(opts, &committed);
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
    diags.extend(project_findings(
        opts,
        prepared,
        rendered.as_ref(),
        &trees,
        &tree,
        &mut sources,
    ));
    let (kept, transient) = judged_as_change(diags, opts, (states.as_ref(), &at_step), &sources);
    quote_committed(&kept, &committed, &opts.out_dir, &mut sources);
    let step = (prepared, states.as_ref(), at_step);
    let summary = (base.as_deref()).map(|b| pr_summary(b, &committed, step, &transient));
    let facts = facts_of(opts, prepared, rendered.as_mut());
    let committed = match committed {
        Cow::Owned(c) => Some(c),
        Cow::Borrowed(_) => None,
    };
    crate::diag::free_later((tree, committed, rendered, run.prepared));
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
    base: &BTreeMap<PathBuf, String>,
    committed: &BTreeMap<PathBuf, String>,
    (prepared, states, at_step): (
        Option<&Prepared>,
        Option<&rollout::ChangeStates>,
        Option<crate::change::summary::Progress>,
    ),
    transient: &Diagnostics,
) -> crate::change::summary::PrSummary {
    let mut s = summarize(base, committed, prepared, states, at_step);
    s.transient = transient.iter().map(|d| d.code).collect();
    s.budgets = prepared.map_or_else(Vec::new, crate::plan::rebalance::cost::budget_use);
    s
}

/// What `check --env all` compares of this environment, when its project built.
/// The rendered files move into it: the check is done with them.
fn facts_of<D>(
    opts: &CheckOptions,
    prepared: Option<&Prepared>,
    rendered: Option<&mut Result<(crate::render::Rendered, D), Diagnostics>>,
) -> Option<environments::Facts> {
    match (prepared, rendered) {
        (Some(p), Some(Ok((output, _)))) if opts.compare => {
            environments::Facts::of(&opts.out_dir, p, std::mem::take(&mut output.files))
        }
        _ => None,
    }
}

/// The plugins the Kong routes may name: those `kong.pluginFiles` defines, and those the
/// committed Kong side holds (latgen's Prometheus plugin). None without `kong.pluginFiles`.
fn plugin_catalog(
    opts: &CheckOptions,
    prepared: Option<&Prepared>,
    tree: &BTreeMap<PathBuf, String>,
    diags: &mut Diagnostics,
) -> Option<plugins::Catalog> {
    let mut catalog = plugins::Catalog::read(&opts.paths, &prepared?.config, diags)?;
    catalog.add_committed(tree, &opts.out_dir);
    Some(catalog)
}

/// What the change from `base` to `committed` does, for the PR comment.
fn summarize(
    base: &BTreeMap<PathBuf, String>,
    committed: &BTreeMap<PathBuf, String>,
    prepared: Option<&Prepared>,
    states: Option<&rollout::ChangeStates>,
    at_step: Option<crate::change::summary::Progress>,
) -> crate::change::summary::PrSummary {
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
        Some(s) => crate::change::summary::summarize_states(
            base,
            committed,
            (&s.base, &s.head),
            (price, apps),
            at_step,
        ),
        None => crate::change::summary::summarize(base, committed, (price, apps), at_step),
    }
}

/// What the project shows besides its routes: service names against what exists, the deploy
/// kit, files in the output folder latgen did not write, and an interrupted render.
fn project_findings(
    opts: &CheckOptions,
    prepared: Option<&Prepared>,
    rendered: Option<&Result<(Rendered, crate::manifest::tree::Docs), Diagnostics>>,
    trees: &names::Committed,
    tree: &BTreeMap<PathBuf, String>,
    sources: &mut Sources,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    diags.extend(names::findings(prepared, trees, opts, sources));
    let config = prepared.map(|p| &p.config);
    diags.extend(crate::render::deploy::findings(
        &opts.paths,
        &opts.out_dir,
        config,
        rendered,
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
    let mut deploy = opts.paths.root.join(crate::render::deploy::FOLDER);
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
                && crate::change::git::tracked(root, &span.file) =>
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
    base: Option<&BTreeMap<PathBuf, String>>,
    committed: &BTreeMap<PathBuf, String>,
    rendered: Option<&Result<(Rendered, crate::manifest::tree::Docs), Diagnostics>>,
    known: Option<crate::change::judge::States>,
    at_step: &Option<crate::change::summary::Progress>,
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
fn progress(
    opts: &CheckOptions,
    committed: &BTreeMap<PathBuf, String>,
) -> Option<crate::change::summary::Progress> {
    let step = opts.step.as_ref()?;
    let same = committed
        .iter()
        .filter(|(p, _)| !crate::manifest::layout::is_kustomization(p))
        .eq(step
            .files
            .iter()
            .filter(|(p, _)| !crate::manifest::layout::is_kustomization(p)));
    same.then(|| step.progress.clone())
}

/// The findings as the change shows them: placed on the files it touched, and, for a step
/// short of its rollout's target, without what the step leaves for a later one to finish
/// (rules live before the Kong routes that reach them), which come back apart.
fn judged_as_change(
    diags: Diagnostics,
    opts: &CheckOptions,
    (states, at_step): (
        Option<&rollout::ChangeStates>,
        &Option<crate::change::summary::Progress>,
    ),
    sources: &Sources,
) -> (Diagnostics, Diagnostics) {
    let mut kept = drop_superseded(diags);
    if let Some(rev) = &opts.base_commit {
        kept = on_changed_file(kept, rev, sources);
    }
    let target = states
        .filter(|_| at_step.as_ref().is_some_and(|p| p.step < p.of))
        .map(|s| &s.rendered);
    match target {
        Some(target) => split_transient(kept, target),
        None => (kept, Diagnostics::new()),
    }
}

/// A finding about two declarations (a path or a host both claim, a name both take) is
/// placed on the one the change touched, where the PR's author looks (and where a GitHub
/// annotation shows), not on the other app's unchanged file.
fn on_changed_file(diags: Diagnostics, rev: &str, sources: &Sources) -> Diagnostics {
    let codes = [Code::PathConflict, Code::DuplicateHost, Code::DuplicateApp];
    // Each declaration is asked of Git once, however many findings name it.
    let files: BTreeSet<&Path> = (diags.iter())
        .filter(|d| codes.contains(&d.code))
        .flat_map(|d| d.span.iter().chain(d.related.iter().map(|l| &l.span)))
        .map(|s| s.file.as_path())
        .collect();
    let changed: BTreeSet<PathBuf> = (files.into_iter())
        .filter(|file| match crate::change::git::read_file_at(file, rev) {
            Ok(Some(old)) => sources.text(file) != Some(old.as_str()),
            Ok(None) => true,
            Err(_) => false,
        })
        .map(Path::to_path_buf)
        .collect();
    let mut out = Diagnostics::new();
    for mut d in diags {
        if codes.contains(&d.code)
            && let (Some(span), Some(other)) = (d.span.clone(), d.related.first_mut())
            && !changed.contains(&span.file)
            && changed.contains(&other.span.file)
        {
            d.span = Some(std::mem::replace(&mut other.span, span));
        }
        out.push(d);
    }
    out
}

/// The findings of a rollout step that its target does not have and that a step leaves
/// behind by design: rules that go live before the Kong routes that reach them, or stay
/// until Kong has moved off them (`unreachable-rule`), and the auth statements that go
/// with them (`auth-mismatch` against the target's declarations: the rollout judge holds
/// each state of the step to the declarations before or after, and staleness holds the
/// committed step to the one `render --base` writes). The target's own findings are
/// found again on its routing model; a finding is the same when its code, file and
/// message are, rule numbers aside (a step's rules are numbered differently).
fn split_transient(diags: Diagnostics, target: &Network) -> (Diagnostics, Diagnostics) {
    let transient_codes = [Code::UnreachableRule, Code::AuthMismatch];
    if !diags.iter().any(|d| transient_codes.contains(&d.code)) {
        return (diags, Diagnostics::new());
    }
    let mut at_target = shadowing(target);
    at_target.extend(unnamed_header_rules(target));
    let key = |d: &Diagnostic| {
        let file = d.span.as_ref().map(|s| s.file.clone());
        (d.code, file, without_rule_numbers(&d.message))
    };
    let lasting: BTreeSet<_> = at_target.iter().map(key).collect();
    let (mut kept, mut transient) = (Diagnostics::new(), Diagnostics::new());
    for d in diags {
        if transient_codes.contains(&d.code) && !lasting.contains(&key(&d)) {
            transient.push(d);
        } else {
            kept.push(d);
        }
    }
    (kept, transient)
}

/// `rule 9 (x: a) is never reached` → `rule (x: a) is never reached`.
fn without_rule_numbers(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(i) = rest.find("rule ") {
        out.push_str(&rest[..i + "rule".len()]);
        let after = &rest[i + "rule ".len()..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        rest = if digits > 0 {
            &after[digits..]
        } else {
            &rest[i + "rule".len()..]
        };
    }
    out.push_str(rest);
    out
}

/// A Kong route that is broken because its half went first is an ordering problem: the
/// unsafe-rollout finding says which half to ship first, so it stands alone. A pair of
/// order-dependent rules the change creates is an error; the committed tree's warning about
/// the same pair goes.
fn drop_superseded(diags: Diagnostics) -> Diagnostics {
    let created: BTreeSet<String> = diags
        .iter()
        .filter(|d| d.code == Code::OrderDependentGroup && d.severity == Severity::Error)
        .map(|d| d.message.clone())
        .collect();
    let reordered: BTreeSet<PathBuf> = diags
        .iter()
        .filter(|d| d.code == Code::UnsafeRollout)
        .filter_map(|d| d.span.as_ref().map(|s| s.file.clone()))
        .collect();
    let mut kept = Diagnostics::new();
    for d in diags {
        let superseded = d.code == Code::RouteUnresolved
            && d.span.as_ref().is_some_and(|s| reordered.contains(&s.file))
            || d.code == Code::OrderDependentGroup
                && d.severity == Severity::Warning
                && created.contains(&d.message);
        if !superseded {
            kept.push(d);
        }
    }
    kept.sort();
    kept
}

/// Keeps the text of the committed files the findings point into, to show their lines.
fn quote_committed(
    diags: &Diagnostics,
    committed: &BTreeMap<PathBuf, String>,
    out_dir: &Path,
    sources: &mut Sources,
) {
    for span in diags
        .iter()
        .flat_map(|d| d.span.iter().chain(d.related.iter().map(|l| &l.span)))
    {
        if let Ok(rel) = span.file.strip_prefix(out_dir)
            && let Some(text) = committed.get(rel)
        {
            sources.insert(span.file.clone(), text.clone());
        }
    }
}

/// What rendering shows about the change: quota during the switch, order-dependent pairs it
/// creates, safety of the rollout (with a base), and staleness with its diff.
fn change_findings(
    opts: &CheckOptions,
    prepared: &Prepared,
    (rendered, states): (&Rendered, Option<&rollout::ChangeStates>),
    (committed, committed_lock): (&BTreeMap<PathBuf, String>, Option<&str>),
    base: Option<&BTreeMap<PathBuf, String>>,
    tree: &BTreeMap<PathBuf, String>,
) -> Result<(Diagnostics, String), Diagnostic> {
    let mut diags = Diagnostics::new();
    let before = base.unwrap_or(committed);
    // A PR that is a step of a rollout applies the committed tree, not the target.
    let after = match &opts.step {
        Some(step)
            if base.is_some() && staleness::owned(committed) == staleness::owned(&step.files) =>
        {
            committed
        }
        _ => &rendered.files,
    };
    let quota = prepared.config.quotas.rules_per_service as usize;
    let created = (&prepared.apps[..], Severity::Error);
    diags.extend(change_warnings(
        before,
        after,
        quota,
        &opts.out_dir,
        created,
    ));
    diags.extend(crate::change::warnings::open_windows(
        before,
        after,
        &prepared.config,
        &opts.out_dir,
    ));
    // A step against a base: a route it rewrites resets the canaries running on it.
    if let Some(base) = base {
        diags.extend(crate::change::warnings::canary_route_changes(
            base,
            after,
            &prepared.apps,
            &opts.out_dir,
        ));
    }
    // Whether the change is safe to roll out and whether it is up to date are independent.
    let (safety, stale) = rayon::join(
        || match (base, states) {
            (Some(base), Some(states)) => {
                let auth = crate::manifest::auth::AuthProbe::of(&prepared.config);
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

/// What the committed manifests are judged against: the project as built (when it could
/// be) and the plugins `kong.pluginFiles` defines (when it names any).
type Project<'a> = (Option<&'a Prepared>, Option<&'a plugins::Catalog>);

/// The findings of the committed manifests' routing model (see [`network_findings`]), which
/// is `known` when it was read already.
fn committed_findings(
    manifests: &[Manifest<'_>],
    (project, known, built_in): (Project<'_>, Option<&Network>, bool),
    out_dir: &Path,
) -> Diagnostics {
    // The Lattice routes and auth policies exactly as the built-in templates render them:
    // their auth is proven for any declarations (tests/suite/properties.rs), not probed.
    let proven: BTreeSet<&Path> = (manifests.iter())
        .filter(|m| built_in && m.read.is_some() && !m.is_kong)
        .map(|m| m.path)
        .collect();
    let mut diags = Diagnostics::new();
    // The rollout step's state leaves out a file it cannot parse; the model built here
    // reports it instead. Only the files not modelled by the render are parsed.
    let known = known.filter(|_| {
        (manifests.iter())
            .filter(|m| m.read.is_none())
            .all(|m| crate::manifest::routing::Doc::parse(m.path, m.text).is_ok())
    });
    let mut read = None;
    let net = match known {
        Some(net) => net,
        None => match network(manifests, &BTreeSet::new(), out_dir, &mut diags) {
            Some(net) => &*read.insert(net),
            None => return diags,
        },
    };
    let mut found = network_findings(net, project, &proven);
    // The findings about manifests modelled without line numbers are found again with
    // those manifests parsed, so that they point at the right lines. Findings are few,
    // so this reads a few files at most.
    let unplaced: BTreeSet<&Path> = found
        .iter()
        .flat_map(|d| d.span.iter().chain(d.related.iter().map(|l| &l.span)))
        .map(|s| s.file.as_path())
        .collect();
    let modelled_unplaced = manifests
        .iter()
        .any(|m| m.read.is_some() && unplaced.contains(m.path));
    if modelled_unplaced {
        // Parsing a file can fail where its typed read-back did not (a custom template's
        // quirk); then the file is unreadable to the model, as when it is parsed first.
        let mut unreadable = Diagnostics::new();
        found = match network(manifests, &unplaced, out_dir, &mut unreadable) {
            Some(net) => network_findings(&net, project, &proven),
            None => unreadable,
        };
    }
    diags.extend(placed(found, manifests, out_dir));
    crate::diag::free_later(read);
    diags
}

/// `found` pointing into the output folder: the routing model names the manifests by
/// their path in it.
fn placed(found: Diagnostics, manifests: &[Manifest<'_>], out_dir: &Path) -> Diagnostics {
    let place = |span: &mut Span| {
        if manifests
            .binary_search_by(|m| m.path.cmp(&span.file))
            .is_ok()
        {
            span.file = out_dir.join(&span.file);
        }
    };
    let mut diags = Diagnostics::new();
    for mut d in found {
        d.span.iter_mut().for_each(place);
        d.related.iter_mut().for_each(|l| place(&mut l.span));
        diags.push(d);
    }
    diags
}

/// What the committed manifests show on their own: shadowed rules, routes that resolve
/// nowhere, and routes over their quotas.
fn network_findings(
    net: &Network,
    (prepared, catalog): Project<'_>,
    proven: &BTreeSet<&Path>,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let shadows = shadowing(net);
    // A route whose rules shadow each other misroutes; that finding says why, so the
    // misroutes it causes are not reported again.
    let flagged: BTreeSet<String> = net
        .lattice
        .iter()
        .filter(|r| {
            shadows
                .iter()
                .any(|d| d.span.as_ref().is_some_and(|s| s.file == r.file))
        })
        .map(|r| format!("{}/{}", r.namespace, r.name))
        .collect();
    diags.extend(shadows);
    // Following every Kong route's requests is most of the work: the rest is found beside it.
    let (resolved, rest) = rayon::join(
        || resolution(net, prepared, &flagged),
        || {
            let mut diags = unnamed_header_rules(net);
            let header = prepared.map_or("", |p| &p.config.lattice.dispatch_header);
            diags.extend(plugins::kong_plugins(net, catalog, header));
            diags.extend(order_dependence(net, prepared.map_or(&[], |p| &p.apps)));
            if let Some(prepared) = prepared {
                diags.extend(route_quotas(net, prepared));
                diags.extend(canary::canary_findings(net, prepared));
                diags.extend(previews::preview_findings(prepared));
                let (apps, config) = (&prepared.apps, &prepared.config);
                diags.extend(auth::auth_findings(net, (apps, config), proven));
            }
            diags
        },
    );
    diags.extend(rest);
    diags.extend(resolved);
    diags
}

/// A committed manifest for the routing model: its path in the output folder, its text, the
/// render's model of it when the file is exactly what was rendered, and which half it
/// belongs to.
struct Manifest<'a> {
    path: &'a Path,
    text: &'a str,
    read: Option<&'a Doc>,
    is_kong: bool,
}

/// The committed manifests for the routing model, each with the render's model of it when
/// it is exactly what was rendered: modelled from the render's typed model instead of being
/// parsed (half of check's time on a large tree). Such a model has no line numbers; see
/// `network_findings`.
fn to_model<'a>(
    committed: &'a BTreeMap<PathBuf, String>,
    rendered: Option<&'a Result<(Rendered, crate::manifest::tree::Docs), Diagnostics>>,
) -> Vec<Manifest<'a>> {
    let manifest = |(rel, text, read): (&'a PathBuf, &'a String, Option<&'a Doc>)| Manifest {
        path: rel,
        text,
        read,
        is_kong: is_kong_file(rel),
    };
    match rendered {
        Some(Ok((out, docs))) => {
            crate::manifest::tree::with_known_docs(committed, (&out.files, docs))
                .map(manifest)
                .collect()
        }
        _ => (committed.iter())
            .filter(|(rel, _)| !crate::manifest::layout::is_kustomization(rel))
            .map(|(rel, text)| manifest((rel, text, None)))
            .collect(),
    }
}

/// The routing model of the committed manifests; those in `parse` are parsed even when
/// the render modelled them already (for their line numbers).
fn network(
    manifests: &[Manifest<'_>],
    parse: &BTreeSet<&Path>,
    out_dir: &Path,
    diags: &mut Diagnostics,
) -> Option<Network> {
    let list: Vec<(&Path, Source<'_>, bool)> = manifests
        .iter()
        .map(|m| {
            let source = match m.read {
                Some(doc) if !parse.contains(m.path) => Source::Read(doc),
                _ => Source::Text(m.text),
            };
            (m.path, source, m.is_kong)
        })
        .collect();
    let (net, errors) = Network::from_sources(&list);
    for (path, e) in &errors {
        // The model names the file by its path in the output folder; a finding names it by
        // where it is.
        let why = e
            .strip_prefix(&format!("{}: ", path.display()))
            .unwrap_or(e);
        let path = out_dir.join(path);
        diags.push(
            Diagnostic::error(
                Code::YamlSyntax,
                format!(
                    "a committed manifest cannot be read: {}: {why}",
                    path.display()
                ),
            )
            .at(Span::file(path))
            .help("run `latgen render` to write it anew"),
        );
    }
    errors.is_empty().then_some(net)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rollout step's state of the committed tree leaves out a file it cannot parse;
    /// taken as the committed model, it would hide that file and misroute its requests.
    #[test]
    fn a_known_state_does_not_hide_a_committed_file_that_cannot_be_parsed() {
        let manifests = [Manifest {
            path: Path::new("kong/httproute-a.yaml"),
            text: "kind: [unclosed\n",
            read: None,
            is_kong: true,
        }];
        let known = Network::default();
        let project = (None, None);
        let found = committed_findings(&manifests, (project, Some(&known), true), Path::new("out"));
        let at = Path::new("out/kong/httproute-a.yaml");
        assert!(
            found.iter().any(
                |d| d.code == Code::YamlSyntax && d.span.as_ref().is_some_and(|s| s.file == at)
            ),
            "{found:?}"
        );
    }
}
