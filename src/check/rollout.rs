//! Rollout safety: either half of a change may go live first.

use crate::manifest::tree::Tree;
use std::collections::BTreeSet;
use std::path::PathBuf;

use super::CheckOptions;
use super::staleness::same_side;
use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::manifest::layout::Side;
use crate::manifest::tree::{Docs, changes, state, subtree};
use crate::render::Rendered;
use crate::rollout::auth_safety::AuthExpect;
use crate::rollout::judge::lands_acceptably;
use crate::rollout::scope::Scope;
use latgen_sim::routing::{Network, Outcome};

/// A request, and where it goes before and after the change.
type Expected<'a> = (&'a (String, String), Outcome, Outcome);

/// The routing states of a change judged against a base, each read once for the rollout
/// findings and the PR summary. The trees are the render's but for a few files: they are
/// made of the render's documents, the files that differ parsed.
pub(super) struct ChangeStates {
    pub base: Network,
    pub head: Network,
    pub rendered: Network,
}

/// The states of the change that the rollout step read already: the base's, the
/// committed head's when it is the step, and the target's.
pub(super) struct Known {
    base: Network,
    head: Option<Network>,
    target: Network,
}

impl Known {
    /// The states of `steps` this check judges: `at_step` when the committed tree is the
    /// first step.
    pub fn of(steps: crate::rollout::steps::States, at_step: bool) -> Option<Known> {
        let mut passed = steps.passed.into_iter();
        Some(Known {
            base: passed.next()?,
            head: passed.next().filter(|_| at_step),
            target: steps.target,
        })
    }
}

impl ChangeStates {
    /// The states of the change from `base` to `committed`, whose target is `rendered`
    /// (with its documents): those `known` has are taken, the others read.
    pub fn read(
        base: &Tree,
        committed: &Tree,
        (rendered, docs): (&Tree, &Docs),
        known: Option<Known>,
    ) -> ChangeStates {
        let live = |tree| {
            let read = Docs::read_like(tree, rendered, docs);
            state(&read, &read)
        };
        if let Some(k) = known {
            return ChangeStates {
                base: k.base,
                head: k.head.unwrap_or_else(|| live(committed)),
                rendered: k.target,
            };
        }
        let (base, (head, rendered)) = rayon::join(
            || live(base),
            || rayon::join(|| live(committed), || state(docs, docs)),
        );
        ChangeStates {
            base,
            head,
            rendered,
        }
    }
}

/// The files that differ between any two of the base, the committed head and the rendered
/// target, and whether they are every file of the three.
fn changed(base: &Tree, committed: &Tree, rendered: &Tree) -> (BTreeSet<PathBuf>, bool) {
    let pairs = [
        changes(base, committed),
        changes(committed, rendered),
        changes(base, rendered),
    ];
    // Any two of the pairs hold all three trees.
    let every = pairs.iter().filter(|(_, every)| *every).count() >= 2;
    (pairs.into_iter().flat_map(|(c, _)| c).collect(), every)
}

/// The committed head, and both halves of it applied on their own over the base, must
/// route every probed request as the base or as the rendered target does — never to a
/// broken path, never to another app.
pub(super) fn rollout_safety(
    opts: &CheckOptions,
    base: &Tree,
    committed: &Tree,
    rendered: &Rendered,
    nets: &ChangeStates,
    auth: Option<&latgen_sim::iam::AuthProbe>,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    // Only the requests the change can reroute are followed, and only the files on their
    // way are parsed (for the line numbers findings point at).
    let (b, r) = (&nets.base, &nets.rendered);
    let (changed, every) = changed(base, committed, &rendered.files);
    let within = Scope::of(&[b, &nets.head, r], (&changed, every));
    let only = |tree| subtree(tree, &within.files);
    let (base_docs, head_docs, rendered_docs) = (
        Docs::read(&only(base)),
        Docs::read(&only(committed)),
        Docs::read(&only(&rendered.files)),
    );
    let base_net = state(&base_docs, &base_docs);
    // When one side is unchanged, "that side first" is the head itself: judge it once.
    let mut states = vec![
        (
            "the Lattice side goes live before the Kong side",
            state(&head_docs, &base_docs),
        ),
        (
            "the Kong side goes live before the Lattice side",
            state(&base_docs, &head_docs),
        ),
    ];
    if !same_side(committed, base, Side::Kong) && !same_side(committed, base, Side::Lattice) {
        states.push(("the change is live", state(&head_docs, &head_docs)));
    }
    // Where each request goes before and after, followed once for all states.
    let expected: Vec<Expected<'_>> = within
        .probes
        .iter()
        .map(|probe @ (h, p)| (probe, b.route(h, p), r.route(h, p)))
        .collect();
    // Which half of the full change could go first on its own decides the advice; it is
    // worked out only when something is unsafe.
    let advice = std::cell::OnceCell::new();
    let rev = opts.base_rev.as_deref().unwrap_or("BASE");
    let render = format!("latgen render{} --base {rev}", opts.paths.env_flag());
    let advice = || {
        advice
            .get_or_init(|| advice_for(&base_docs, &rendered_docs, &expected, &render))
            .clone()
    };
    if let Some(probe) = auth {
        let expect = AuthExpect::of(probe, &within.probes, &within.files, (b, r));
        for (when, net) in &states {
            if let Some(v) = expect.violation(net) {
                diags.push(
                    Diagnostic::error(Code::UnsafeRollout, format!("if {when}, {v}"))
                        .at(Span::file(&opts.out_dir))
                        .help(advice()),
                );
            }
        }
    }
    // One finding per state and Kong route, so a broken app is reported once.
    let mut seen = BTreeSet::new();
    for (when, net) in &states {
        for ((host, path), ob, or) in &expected {
            if lands_acceptably(ob.landing(), or.landing(), net.lands(host, path)) {
                continue;
            }
            let os = net.route(host, path);
            let kong = net
                .kong_route(host, path)
                .or_else(|| base_net.kong_route(host, path));
            if !seen.insert((*when, kong.map(|k| k.name.clone()))) {
                continue;
            }
            diags.push(
                Diagnostic::error(
                    Code::UnsafeRollout,
                    format!(
                        "if {when}, {} goes to {os} (before: {ob}; after: {or})",
                        latgen_sim::routing::show_request(host, path)
                    ),
                )
                .at(place(opts, committed, kong, path))
                .help(advice()),
            );
        }
    }
    diags
}

/// Where a finding about `path` points: the Kong route's match for it, or the folder. A
/// route the change removes is shown in the base, as `REV:path` (as `git show` takes it).
fn place(
    opts: &CheckOptions,
    committed: &Tree,
    kong: Option<&latgen_sim::routing::KongRoute>,
    path: &str,
) -> Span {
    let matched = kong.and_then(|k| {
        k.matches
            .iter()
            .find(|m| m.gateway_api_match(path))
            .map(|m| (k, m))
    });
    match matched {
        Some((k, m)) if !committed.contains_key(&k.file) => {
            Span::new(in_base(opts, &k.file), m.pos.line, m.pos.column)
        }
        Some((k, m)) => Span::new(opts.out_dir.join(&k.file), m.pos.line, m.pos.column),
        None => Span::file(&opts.out_dir),
    }
}

/// The name findings give a file of the output folder as it is in the base revision:
/// `HEAD:generated/kong/httproute-shop.yaml`.
fn in_base(opts: &CheckOptions, rel: &std::path::Path) -> PathBuf {
    let rev = opts.base_rev.as_deref().unwrap_or("BASE");
    PathBuf::from(format!("{rev}:{}", opts.out_dir.join(rel).display()))
}

/// Which half of the full change can go live first on its own; `render` is the command that
/// writes the next step (`latgen render --base REV`).
fn advice_for(base: &Docs, rendered: &Docs, expected: &[Expected<'_>], render: &str) -> String {
    let lattice_ok = safe(&state(rendered, base), expected);
    let kong_ok = safe(&state(base, rendered), expected);
    match (lattice_ok, kong_ok) {
        (true, _) => format!(
            "ship the Lattice side first: `{render}` writes that step whatever the output folder holds now; once it is live, run it again for the next"
        ),
        (false, true) => format!(
            "ship the Kong side first: `{render}` writes that step whatever the output folder holds now; once it is live, run it again for the next"
        ),
        (false, false) => format!(
            "no single side can go first: `{render}` writes the change in safe steps, one PR each"
        ),
    }
}

fn safe(state: &Network, expected: &[Expected<'_>]) -> bool {
    expected.iter().all(|((h, p), before, after)| {
        lands_acceptably(before.landing(), after.landing(), state.lands(h, p))
    })
}
