//! `latgen check`, the PR gate: the shared stages (load → validate → plan → render, in
//! memory), then what only the committed tree can show: staleness against what `render`
//! writes, rule shadowing and unresolved routes in the manifests as committed (hand edits
//! and custom templates included), and — with a base revision — whether either half of the
//! change could go live first and break routing.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::Prepared;
use crate::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Sources, Span};
use crate::load::ProjectPaths;
use crate::model::MatchKind;
use crate::output::{self, ChangeKind, LockFile, manifests, side_of};
use crate::platform;
use crate::render::{Output, Side, Templates};
use crate::routing::{Doc, LatticeRoute, LatticeRule, Network, Outcome, Source, is_kong_file};

pub struct CheckOptions<'a> {
    pub paths: ProjectPaths,
    pub out_dir: PathBuf,
    pub templates: &'a Templates,
    /// The committed output at the base revision, by path under the output folder.
    pub base: Option<BTreeMap<PathBuf, String>>,
}

pub struct CheckReport {
    pub diags: Diagnostics,
    pub sources: Sources,
    /// A unified diff of stale files (human output shows it after the findings).
    pub diff: String,
}

/// Runs every check. Problems with the inputs are findings; only an unreadable output
/// folder ends the run early.
pub fn check(opts: &CheckOptions) -> Result<CheckReport, Diagnostic> {
    // Planning leaves a core idle at times (it is one thread): the committed tree is read
    // meanwhile.
    let (run, tree) = rayon::join(
        || crate::prepare(&opts.paths),
        || output::read_tree(&opts.out_dir),
    );
    let mut diags = run.diags;
    let mut sources = run.sources;
    let rendered = run
        .prepared
        .as_ref()
        .map(|p| crate::render::render_with_docs(&p.plan, &p.apps, &p.config, opts.templates));
    let tree = tree?;
    let committed = manifests(&tree);
    // The base is compared with the committed manifests, so it is read the same way: a
    // file in the output folder that is not a manifest (a README) is neither side.
    let base = opts.base.as_ref().map(|b| manifests(b));
    // A committed manifest that is exactly what was rendered is modelled from the render's
    // typed read-back instead of being parsed a second time (half of check's time on a
    // large tree). Such a model has no line numbers; see `network_findings`.
    let to_model = match &rendered {
        Some(Ok((out, docs))) => to_model(&committed, Some((out, docs)), &opts.out_dir),
        _ => to_model(&committed, None, &opts.out_dir),
    };
    // What the committed manifests show on their own, and what the change to them shows,
    // are independent: found side by side.
    let (committed_found, change_found) = rayon::join(
        || committed_findings(&to_model, run.prepared.as_ref()),
        || match (&run.prepared, &rendered) {
            (Some(prepared), Some(Ok((rendered, _)))) => {
                change_findings(opts, prepared, rendered, &committed, base.as_deref(), &tree)
            }
            (_, Some(Err(d))) => Ok((d.clone(), String::new())),
            _ => Ok((Diagnostics::new(), String::new())),
        },
    );
    let (found, diff) = change_found?;
    diags.extend(found);
    diags.extend(committed_found);
    // A Kong route that is broken because its half went first is an ordering problem:
    // the unsafe-rollout finding says which half to ship first, so it stands alone.
    let reordered: BTreeSet<PathBuf> = diags
        .iter()
        .filter(|d| d.code == Code::UnsafeRollout)
        .filter_map(|d| d.span.as_ref().map(|s| s.file.clone()))
        .collect();
    let mut kept = Diagnostics::new();
    for d in diags {
        let superseded = d.code == Code::RouteUnresolved
            && d.span.as_ref().is_some_and(|s| reordered.contains(&s.file));
        if !superseded {
            kept.push(d);
        }
    }
    kept.sort();
    // The committed files the findings point into, to show their lines.
    for span in kept
        .iter()
        .flat_map(|d| d.span.iter().chain(d.related.iter().map(|l| &l.span)))
    {
        if let Ok(rel) = span.file.strip_prefix(&opts.out_dir)
            && let Some(text) = committed.get(rel)
        {
            sources.insert(span.file.clone(), text.clone());
        }
    }
    drop(to_model);
    let committed = match committed {
        Cow::Owned(c) => Some(c),
        Cow::Borrowed(_) => None,
    };
    crate::free_later((tree, committed, rendered, run.prepared));
    Ok(CheckReport {
        diags: kept,
        sources,
        diff,
    })
}

/// What rendering shows about the change: quota during the switch, priority churn, safety
/// of the rollout (with a base), and staleness with its diff.
fn change_findings(
    opts: &CheckOptions,
    prepared: &Prepared,
    rendered: &Output,
    committed: &BTreeMap<PathBuf, String>,
    base: Option<&BTreeMap<PathBuf, String>>,
    tree: &BTreeMap<PathBuf, String>,
) -> Result<(Diagnostics, String), Diagnostic> {
    let mut diags = Diagnostics::new();
    let before = base.unwrap_or(committed);
    let quota = prepared.config.quotas.rules_per_service as usize;
    diags.extend(change_warnings(
        before,
        &rendered.files,
        quota,
        &opts.out_dir,
    ));
    if let Some(base) = base {
        diags.extend(rollout_safety(opts, base, committed, rendered));
    }
    let (stale, diff) = staleness(opts, prepared, rendered, committed, base, tree)?;
    diags.extend(stale);
    Ok((diags, diff))
}

/// The findings of the committed manifests' routing model (see [`network_findings`]).
fn committed_findings(manifests: &[Manifest<'_>], prepared: Option<&Prepared>) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let Some(net) = network(manifests, &BTreeSet::new(), &mut diags) else {
        return diags;
    };
    let mut found = network_findings(&net, prepared);
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
        .any(|m| m.read.is_some() && unplaced.contains(m.path.as_path()));
    if modelled_unplaced {
        // Parsing a file can fail where its typed read-back did not (a custom template's
        // quirk); then the file is unreadable to the model, as when it is parsed first.
        let mut unreadable = Diagnostics::new();
        found = match network(manifests, &unplaced, &mut unreadable) {
            Some(net) => network_findings(&net, prepared),
            None => unreadable,
        };
    }
    diags.extend(found);
    crate::free_later(net);
    diags
}

/// What the committed manifests show on their own: shadowed rules, routes that resolve
/// nowhere, and routes over their quotas.
fn network_findings(net: &Network, prepared: Option<&Prepared>) -> Diagnostics {
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
    diags.extend(resolution(net, prepared, &flagged));
    if let Some(prepared) = prepared {
        diags.extend(route_quotas(net, prepared));
    }
    diags
}

/// A committed manifest for the routing model: its path, its text, the render's model of
/// it when the file is exactly what was rendered, and which half it belongs to.
struct Manifest<'a> {
    path: PathBuf,
    text: &'a str,
    read: Option<&'a Doc>,
    is_kong: bool,
}

/// The committed manifests for the routing model. The committed and rendered trees are
/// sorted alike, so they are walked side by side rather than looked up file by file.
fn to_model<'a>(
    committed: &'a BTreeMap<PathBuf, String>,
    rendered: Option<(&'a Output, &'a crate::render::Docs)>,
    out_dir: &Path,
) -> Vec<Manifest<'a>> {
    let (mut files, mut docs) = match rendered {
        Some((out, docs)) => (
            Some(out.files.iter().peekable()),
            Some(docs.iter().peekable()),
        ),
        None => (None, None),
    };
    committed
        .iter()
        .filter(|(rel, _)| rel.file_name().is_none_or(|n| n != "kustomization.yaml"))
        .map(|(rel, text)| {
            let same = files.as_mut().is_some_and(|f| {
                while f.next_if(|(p, _)| *p < rel).is_some() {}
                f.peek().is_some_and(|(p, t)| *p == rel && *t == text)
            });
            let doc = docs.as_mut().and_then(|d| {
                while d.next_if(|(p, _)| *p < rel).is_some() {}
                d.peek().filter(|(p, _)| *p == rel).map(|(_, doc)| *doc)
            });
            Manifest {
                path: out_dir.join(rel),
                text,
                read: doc.filter(|_| same),
                is_kong: is_kong_file(rel),
            }
        })
        .collect()
}

/// The routing model of the committed manifests; those in `parse` are parsed even when
/// the render modelled them already (for their line numbers).
fn network(
    manifests: &[Manifest<'_>],
    parse: &BTreeSet<&Path>,
    diags: &mut Diagnostics,
) -> Option<Network> {
    let list: Vec<(&Path, Source<'_>, bool)> = manifests
        .iter()
        .map(|m| {
            let source = match m.read {
                Some(doc) if !parse.contains(m.path.as_path()) => Source::Read(doc),
                _ => Source::Text(m.text),
            };
            (m.path.as_path(), source, m.is_kong)
        })
        .collect();
    let (net, errors) = Network::from_sources(&list);
    for (path, e) in &errors {
        diags.push(
            Diagnostic::error(
                Code::YamlSyntax,
                format!("a committed manifest cannot be read: {e}"),
            )
            .at(Span::file(path))
            .help("run `latgen render` to write it anew"),
        );
    }
    errors.is_empty().then_some(net)
}

/// The Lattice route a manifest holds, if it holds one.
fn lattice_route(rel: &Path, text: &str) -> Option<LatticeRoute> {
    let mut net = Network::default();
    net.add_file(rel, text, false).ok()?;
    net.lattice.into_iter().next()
}

/// A rule's matches as `Type path` keys.
fn match_keys(rule: &LatticeRule) -> impl Iterator<Item = String> + '_ {
    rule.matches
        .iter()
        .map(|m| format!("{} {}", m.kind.gateway_api_type(), m.path))
}

/// What a change to the Lattice routes does while the controller applies it, comparing
/// each route in `old` with the same file in `new` (files by path under the output folder;
/// each changed route is read once per side):
/// - `group-at-quota`: the controller creates the new rules before it deletes the old
///   ones, so for a while the route holds both; over the quota, the extra rules are
///   dropped without an error.
/// - `priority-churn`: the controller renumbers rules whose position changes; more than 5
///   at once need a BatchUpdateRule call, which the Lattice API caps at 5 items.
pub fn change_warnings(
    old: &BTreeMap<PathBuf, String>,
    new: &BTreeMap<PathBuf, String>,
    quota: usize,
    out_dir: &Path,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    for (rel, text) in new {
        let Some(before_text) = old.get(rel).filter(|t| *t != text) else {
            continue;
        };
        if side_of(rel) != Side::Lattice {
            continue;
        }
        let (Some(before), Some(after)) =
            (lattice_route(rel, before_text), lattice_route(rel, text))
        else {
            continue;
        };
        let span = Span::new(out_dir.join(rel), after.name_pos.line.max(1), 0);
        let name = &after.name;

        let keys = |r: &LatticeRoute| -> BTreeSet<String> {
            r.rules.iter().flat_map(match_keys).collect()
        };
        let (was, will) = (keys(&before), keys(&after));
        let peak = was.union(&will).count();
        if peak > quota && was != will {
            let shown = |s: &String| match s.split_once(' ') {
                Some(("Exact", p)) => format!("{p} (Exact)"),
                Some((_, p)) => p.to_string(),
                None => s.clone(),
            };
            let added: Vec<String> = will.difference(&was).map(shown).collect();
            let removed: Vec<String> = was.difference(&will).map(shown).collect();
            diags.push(
                Diagnostic::warning(
                    Code::GroupAtQuota,
                    format!(
                        "{name} would briefly hold {peak} rules (quota {quota}) while the controller replaces {} with {}: the rules over the quota are dropped without an error",
                        removed.join(", "),
                        added.join(", ")
                    ),
                )
                .at(span.clone())
                .help("ship the removal and the addition as two changes, or keep a rule free with `quotas.reservedRules: 1`"),
            );
        }

        let order = |r: &LatticeRoute| -> Vec<String> {
            r.rules
                .iter()
                .map(|rule| {
                    let backend = rule
                        .backend
                        .as_ref()
                        .map(|b| b.to_string())
                        .unwrap_or_default();
                    format!(
                        "{} -> {backend}",
                        match_keys(rule).collect::<Vec<_>>().join(",")
                    )
                })
                .collect()
        };
        let (was, will) = (order(&before), order(&after));
        let moved = will
            .iter()
            .enumerate()
            .filter(|(i, rule)| was.iter().position(|b| b == *rule).is_some_and(|j| j != *i))
            .count();
        if moved > 5 {
            diags.push(
                Diagnostic::warning(
                    Code::PriorityChurn,
                    format!(
                        "{moved} rules of {name} change position, so their priorities change: more than the 5 one BatchUpdateRule call takes"
                    ),
                )
                .at(span)
                .help("watch the controller's events for this route when it syncs, or add the new paths in smaller changes"),
            );
        }
    }
    diags
}

/// Whether two trees hold the same files on one side, compared without copying them.
fn same_side(a: &BTreeMap<PathBuf, String>, b: &BTreeMap<PathBuf, String>, side: Side) -> bool {
    let a = a.iter().filter(|(p, _)| side_of(p) == side);
    let b = b.iter().filter(|(p, _)| side_of(p) == side);
    a.eq(b)
}

/// Compares the committed output and lock with what `render` writes. With a base, a side
/// left exactly as in the base is accepted (the change ships in two PRs), as long as at
/// least one changed side is rendered.
fn staleness(
    opts: &CheckOptions,
    prepared: &Prepared,
    rendered: &Output,
    committed: &BTreeMap<PathBuf, String>,
    base: Option<&BTreeMap<PathBuf, String>>,
    tree: &BTreeMap<PathBuf, String>,
) -> Result<(Diagnostics, String), Diagnostic> {
    let mut diags = Diagnostics::new();
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
    let lock = LockFile {
        path: &opts.paths.lock,
        text: prepared.lock_text(),
    };
    // Changes on an accepted side are left out.
    let changes = output::change_set(
        &opts.out_dir,
        tree,
        std::borrow::Cow::Borrowed(rendered),
        lock,
        |rel| !accepted_sides.contains(&side_of(rel)),
    )?;
    for c in &changes {
        if c.path == opts.paths.lock {
            let line = first_difference(c.old.as_deref(), c.new.as_deref());
            diags.push(
                Diagnostic::error(
                    Code::LockStale,
                    "latgen.lock is not what `latgen render` writes",
                )
                .at(Span::new(&c.path, line, 0))
                .help("run `latgen render` and commit latgen.lock with apps/"),
            );
            continue;
        }
        let (what, line) = match c.kind {
            ChangeKind::Changed => (
                "differs from",
                first_difference(c.old.as_deref(), c.new.as_deref()),
            ),
            ChangeKind::Added => ("is missing from", 0),
            ChangeKind::Removed => ("is in the output but not in", 1),
        };
        let file = c
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        diags.push(
            Diagnostic::error(
                Code::StaleOutput,
                format!("{file} {what} what `latgen render` writes"),
            )
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

/// In each Lattice route, in rule order under string-prefix first match: an earlier rule
/// that takes all of a later rule's traffic, and prefixes of different backends nested
/// segment-wise (the outer app's `…x` traffic goes to the inner app) unless the inner one
/// is written segment-safely (a prefix ending in `/`).
fn shadowing(net: &Network) -> Diagnostics {
    let mut diags = Diagnostics::new();
    for route in &net.lattice {
        let rules: Vec<(
            usize,
            &crate::routing::PathRule,
            Option<&crate::routing::BackendRef>,
        )> = route
            .rules
            .iter()
            .enumerate()
            .flat_map(|(i, r)| r.matches.iter().map(move |m| (i, m, r.backend.as_ref())))
            .collect();
        let at = |m: &crate::routing::PathRule| Span::new(&route.file, m.pos.line, m.pos.column);
        let mut reported = BTreeSet::new();
        for (j, later, later_backend) in &rules {
            for (i, earlier, earlier_backend) in &rules {
                if i >= j || reported.contains(j) {
                    continue;
                }
                let covers = earlier.kind == MatchKind::Prefix
                    && later.path.starts_with(&earlier.path)
                    || earlier.kind == MatchKind::Exact
                        && later.kind == MatchKind::Exact
                        && earlier.path == later.path;
                if covers {
                    reported.insert(*j);
                    if earlier_backend == later_backend {
                        diags.push(
                            Diagnostic::warning(Code::UnreachableRule, format!("rule {} ({}) can never match: rule {} ({}) comes first and takes all of its requests", j + 1, later.path, i + 1, earlier.path))
                                .at(at(later))
                                .related(at(earlier), "matches first")
                                .help("order rules longest path first, or drop the covered rule"),
                        );
                    } else {
                        diags.push(
                            Diagnostic::error(Code::RuleShadowed, format!("rule {} ({}) never gets traffic: rule {} ({}) comes first and Lattice matches prefixes as strings", j + 1, later.path, i + 1, earlier.path))
                                .at(at(later))
                                .related(at(earlier), "takes its requests")
                                .help("order rules longest path first (latgen's templates do); check custom templates and hand edits"),
                        );
                    }
                    continue;
                }
                let nested = earlier.kind == MatchKind::Prefix
                    && later.kind == MatchKind::Prefix
                    && !earlier.path.ends_with('/')
                    && platform::nests_under(&earlier.path, &later.path)
                    && earlier_backend != later_backend;
                if nested {
                    reported.insert(*j);
                    diags.push(
                        Diagnostic::error(
                            Code::NestedPrefix,
                            format!(
                                "`{}` nests under `{}` with another backend in one Lattice route: Lattice sends `{}x`, which belongs to `{}`, to `{}`",
                                earlier.path, later.path, earlier.path, later.path, earlier.path
                            ),
                        )
                        .at(at(earlier))
                        .related(at(later), "the outer prefix")
                        .help(format!("keep them in different groups, or write the inner one segment-safely (Exact {0} and PathPrefix {0}/)", earlier.path)),
                    );
                }
            }
        }
    }
    diags
}

/// Every Kong route must reach, through its bridge and rewritten Host, a Lattice rule that
/// sends each of its paths to its own app's Service.
fn resolution(
    net: &Network,
    prepared: Option<&Prepared>,
    flagged: &BTreeSet<String>,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let apps: BTreeMap<&str, &crate::model::App> = prepared
        .map(|p| p.apps.iter().map(|a| (a.name.as_str(), a)).collect())
        .unwrap_or_default();
    for kong in &net.kong {
        let host = kong
            .hostnames
            .first()
            .map(String::as_str)
            .unwrap_or("latgen.probe");
        let want = kong
            .app
            .as_deref()
            .and_then(|a| apps.get(a))
            .map(|a| (a.namespace.clone(), a.service.clone(), i32::from(a.port)));
        for m in &kong.matches {
            let probes = match m.kind {
                MatchKind::Exact => vec![m.path.clone()],
                MatchKind::Prefix => vec![
                    m.path.clone(),
                    format!("{}/x", m.path.trim_end_matches('/')),
                ],
            };
            let at = Span::new(&kong.file, m.pos.line, m.pos.column);
            for p in probes {
                let got = net.through(kong, host, &p);
                match (&got, &want) {
                    (
                        Outcome::Backend {
                            backend,
                            lattice_route,
                            ..
                        },
                        Some((ns, svc, port)),
                    ) => {
                        let elsewhere = &backend.namespace != ns
                            || &backend.name != svc
                            || backend.port != Some(*port);
                        if elsewhere && !flagged.contains(lattice_route) {
                            diags.push(
                                Diagnostic::error(Code::RouteMismatch, format!("Kong route `{}` sends {p} to {got}, not to its app's Service {ns}/{svc}:{port}", kong.name))
                                    .at(at.clone())
                                    .help("run `latgen render`; if it persists, check custom templates"),
                            );
                            break;
                        }
                    }
                    (Outcome::Backend { .. }, None) => {}
                    _ => {
                        diags.push(
                            Diagnostic::error(Code::RouteUnresolved, format!("Kong route `{}` sends {p} nowhere: {got}", kong.name))
                                .at(at.clone())
                                .help("the bridge's externalName, the URLRewrite hostname and a Lattice route's first hostname must agree, and that route must have a rule for the path"),
                        );
                        break;
                    }
                }
            }
        }
    }
    diags
}

/// Rule and backend counts of the Lattice routes as committed.
fn route_quotas(net: &Network, prepared: &Prepared) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let q = &prepared.config.quotas;
    for r in &net.lattice {
        let at = Span::new(&r.file, r.name_pos.line, r.name_pos.column);
        let n = r.rules.len();
        if n > platform::CRD_MAX_RULES {
            diags.push(
                Diagnostic::error(
                    Code::CrdRuleLimit,
                    format!(
                        "route `{}` has {n} rules; the HTTPRoute CRD takes 16",
                        r.name
                    ),
                )
                .at(at.clone())
                .help("run `latgen render`: groups never hold more"),
            );
        } else if n > q.rules_per_service as usize {
            diags.push(
                Diagnostic::error(
                    Code::GroupOverQuota,
                    format!("route `{}` has {n} rules; the quota is {}: the controller drops the rest without an error", r.name, q.rules_per_service),
                )
                .at(at.clone())
                .help("run `latgen render`: groups never hold more"),
            );
        }
        let backends: BTreeSet<_> = r.rules.iter().filter_map(|x| x.backend.as_ref()).collect();
        if backends.len() > q.target_groups_per_service as usize {
            diags.push(
                Diagnostic::error(
                    Code::TargetGroupQuota,
                    format!(
                        "route `{}` reaches {} backends; the target-group quota is {}",
                        r.name,
                        backends.len(),
                        q.target_groups_per_service
                    ),
                )
                .at(at)
                .help("run `latgen render`: groups never reach more"),
            );
        }
    }
    diags
}

/// The committed head, and both halves of it applied on their own over the base, must
/// route every probed request as the base or as the rendered target does — never to a
/// broken path, never to another app.
fn rollout_safety(
    opts: &CheckOptions,
    base: &BTreeMap<PathBuf, String>,
    committed: &BTreeMap<PathBuf, String>,
    rendered: &Output,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    // Each tree is read once; a state of the change takes one side from one tree and the
    // other side from another. An unreadable file adds nothing: its routes are simply
    // absent in that state.
    let read = |files: &'_ BTreeMap<PathBuf, String>| -> Vec<(PathBuf, Doc)> {
        use rayon::prelude::*;
        files
            .par_iter()
            .filter(|(rel, _)| rel.file_name().is_some_and(|n| n != "kustomization.yaml"))
            .filter_map(|(rel, text)| Some((rel.clone(), Doc::parse(rel, text).ok()?)))
            .collect()
    };
    let (base_docs, head_docs, rendered_docs) =
        (read(base), read(committed), read(&rendered.files));
    fn half(
        docs: &[(PathBuf, Doc)],
        side: Side,
    ) -> impl Iterator<Item = (&Path, Source<'_>, bool)> {
        docs.iter()
            .filter(move |(rel, _)| side_of(rel) == side)
            .map(move |(rel, doc)| (rel.as_path(), Source::Read(doc), side == Side::Kong))
    }
    let build = |lattice: &[(PathBuf, Doc)], kong: &[(PathBuf, Doc)]| {
        let list: Vec<_> = half(kong, Side::Kong)
            .chain(half(lattice, Side::Lattice))
            .collect();
        Network::from_sources(&list).0
    };
    let b = build(&base_docs, &base_docs);
    let r = build(&rendered_docs, &rendered_docs);
    // When one side is unchanged, "that side first" is the head itself: judge it once.
    let mut states = vec![
        (
            "the Lattice side goes live before the Kong side",
            build(&head_docs, &base_docs),
        ),
        (
            "the Kong side goes live before the Lattice side",
            build(&base_docs, &head_docs),
        ),
    ];
    if !same_side(committed, base, Side::Kong) && !same_side(committed, base, Side::Lattice) {
        states.push(("the change is live", build(&head_docs, &head_docs)));
    }
    let mut probes: BTreeSet<(String, String)> = b.probes().into_iter().collect();
    probes.extend(r.probes());
    for (_, net) in &states {
        probes.extend(net.probes());
    }
    // Where each request goes before and after, followed once for all states.
    let expected: Vec<(&(String, String), Outcome, Outcome)> = probes
        .iter()
        .map(|probe @ (h, p)| (probe, b.route(h, p), r.route(h, p)))
        .collect();
    // Which half of the full change could go first on its own decides the advice; it is
    // worked out only when something is unsafe.
    let mut advice: Option<&'static str> = None;
    // One finding per state and Kong route, so a broken app is reported once.
    let mut seen = BTreeSet::new();
    for (when, net) in &states {
        for ((host, path), ob, or) in &expected {
            let os = net.route(host, path);
            if acceptable(ob, or, &os) {
                continue;
            }
            let kong = net
                .kong_route(host, path)
                .or_else(|| b.kong_route(host, path));
            let key = (*when, kong.map(|k| k.name.clone()));
            if !seen.insert(key) {
                continue;
            }
            let at = match kong.and_then(|k| {
                k.matches
                    .iter()
                    .find(|m| m.gateway_api_match(path))
                    .map(|m| (k, m))
            }) {
                Some((k, m)) => Span::new(opts.out_dir.join(&k.file), m.pos.line, m.pos.column),
                None => Span::file(&opts.out_dir),
            };
            let help = *advice.get_or_insert_with(|| {
                let lattice_ok = safe(&build(&rendered_docs, &base_docs), &expected);
                let kong_ok = safe(&build(&base_docs, &rendered_docs), &expected);
                match (lattice_ok, kong_ok) {
                    (true, _) => {
                        "ship the Lattice side first: `latgen render --only lattice` in one PR, then `latgen render` in the next"
                    }
                    (false, true) => {
                        "ship the Kong side first: `latgen render --only kong` in one PR, then `latgen render` in the next"
                    }
                    (false, false) => "no single order is safe: split the change into smaller steps",
                }
            });
            diags.push(
                Diagnostic::error(
                    Code::UnsafeRollout,
                    format!("if {when}, {host}{path} goes to {os} (before: {ob}; after: {or})"),
                )
                .at(at)
                .help(help),
            );
        }
    }
    diags
}

fn safe(state: &Network, expected: &[(&(String, String), Outcome, Outcome)]) -> bool {
    expected
        .iter()
        .all(|((h, p), before, after)| acceptable(before, after, &state.route(h, p)))
}

/// During a rollout a request may behave as before or as after, by where it lands (which
/// rule of which route carried it does not matter), but may not break where it worked.
fn acceptable(before: &Outcome, after: &Outcome, now: &Outcome) -> bool {
    let effect = |o: &Outcome| match o {
        Outcome::Backend { backend, .. } => Some(Some(backend.clone())),
        Outcome::NoKongRoute => Some(None),
        _ => None,
    };
    let now_effect = effect(now);
    if now_effect.is_none() {
        return before.is_broken();
    }
    now_effect == effect(before) || now_effect == effect(after)
}
