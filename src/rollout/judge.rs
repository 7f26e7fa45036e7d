//! The safe steps of a change. Argo CD syncs the Lattice side and the Kong side in no set
//! order, so a state of the output is safe over a base when, whichever side goes live first
//! (or both), every request goes where it went before the change or where it goes after it,
//! never to a 404 or to another app, and no Lattice route is over its rule quota.
//!
//! [`step_toward`] finds the largest safe step from a base toward a target, one object (one
//! file) at a time: each file is either as in the base, as in the target or, for a Lattice
//! route that gains and loses rules, the union of both (old rules kept until Kong has moved
//! off them). `render --base` writes it, `check --base` accepts it, and
//! [`crate::rollout::steps`] counts how many such steps a change takes.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::input::quotas::Quotas;
#[cfg(test)]
use crate::manifest::layout::is_kustomization;
use crate::manifest::layout::{Side, side_of};
use crate::manifest::tree::{
    Docs, Keep, Tree, TwoTrees, Versions, changes, differing, state, subtree,
};
use crate::rollout::deferred::{
    created_domains, kong_domains, points_at, removes_in_use, removes_needed_grant,
};
use crate::rollout::follow_kong::follows_kong;
use crate::rollout::held::{Kept, KeptApps};
use crate::rollout::overlay::{Edit, Edits, Overlay, Unit, overlaid};
use crate::rollout::scope::Scope;
use latgen_sim::routing::{BackendRef, Doc, Landing, LatticeRoute, Network};

/// During a rollout a request may behave as before or as after, by where it lands (which
/// rule of which route carried it does not matter), but may not break where it worked.
/// `now` is where the request lands in the state judged.
pub(crate) fn lands_acceptably(before: Landing<'_>, after: Landing<'_>, now: Landing<'_>) -> bool {
    match now {
        Landing::Broken => before == Landing::Broken,
        _ => now == before || now == after,
    }
}

/// A [`Landing`] kept past the network the request was followed in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Landed {
    At(latgen_sim::routing::BackendRef),
    NoKongRoute,
    Broken,
}

impl Landed {
    fn of(landing: Landing<'_>) -> Landed {
        match landing {
            Landing::Backend(b) => Landed::At(b.clone()),
            Landing::NoKongRoute => Landed::NoKongRoute,
            Landing::Broken => Landed::Broken,
        }
    }

    fn landing(&self) -> Landing<'_> {
        match self {
            Landed::At(b) => Landing::Backend(b),
            Landed::NoKongRoute => Landing::NoKongRoute,
            Landed::Broken => Landing::Broken,
        }
    }
}

/// What a state of a change must keep to be safe besides routing: the rule quota, when
/// auth is on, who is let in (see [`crate::rollout::auth_safety`]), and the addresses kept
/// for direct callers (see [`crate::rollout::held`]).
#[derive(Debug, Clone)]
pub(crate) struct Gate {
    /// The quotas that say how many rules a Lattice route may hold.
    pub quotas: Quotas,
    pub auth: Option<latgen_sim::iam::AuthProbe>,
    pub keep: KeptApps,
}

impl Gate {
    /// A gate of the rule quota alone.
    #[cfg(test)]
    pub fn rules(rule_limit: usize) -> Gate {
        Gate {
            quotas: Quotas::with_rule_quota(rule_limit),
            auth: None,
            keep: KeptApps::default(),
        }
    }

    /// The gate of a project's settings, keeping the addresses of `keep`.
    pub fn of(config: &crate::input::config::Config, keep: KeptApps) -> Gate {
        Gate {
            quotas: config.quotas.clone(),
            auth: config.auth.probe(),
            keep,
        }
    }
}

/// A request (host, path), and where it lands before and after the change.
pub(crate) type Expected = ((String, String), Landed, Landed);

/// Judges states of a change from `base` to `target`: only what the change can affect
/// (see [`Scope`]), so that judging a state of a large tree costs what its change does.
pub(crate) struct Judge {
    /// The base's and the target's documents of the files in scope.
    pub base: Docs,
    pub target: Docs,
    /// Where every request the change can reroute goes before and after.
    pub expected: Vec<Expected>,
    /// The quotas that say how many rules a Lattice route may hold.
    quotas: Quotas,
    /// Each Lattice route of the base in scope, by file: a state's route holds its rules
    /// and the base's while the controller swaps them.
    base_routes: HashMap<PathBuf, Arc<LatticeRoute>, latgen_sim::routing::Hasher>,
    /// The base's and the target's texts and documents of the files in scope, by path.
    known: TwoTrees,
    /// A Lattice route the change leaves as it is holds more rules than the limit: no
    /// state of the change is safe.
    over_limit: bool,
    /// Who is let in where, before and after, when the project has auth on.
    auth: Option<crate::rollout::auth_safety::AuthExpect>,
    /// The requests to the addresses kept for direct callers.
    pub kept: Kept,
    /// Whether the base itself routes well: judged once, for every state that leaves
    /// one side as the base's (see [`Judge::safe`]). Made on first use by a judgement
    /// that runs on every core: `safe` is asked of one judge one state at a time, never
    /// from parallel tasks (one could wait on the other's judgement while holding it).
    base_routes_well: std::sync::OnceLock<bool>,
}

/// A Lattice rule as the controller tells rules apart: its match (type and path) and its
/// backend, field by field (two backends whose `namespace/name:port` reads the same count as
/// two: only names no Kubernetes object can have read the same). Borrowed from the route: a
/// switch's states compare thousands of routes' rules.
type RuleKey<'r> = (&'static str, &'r str, Option<&'r BackendRef>);

fn rule_keys(route: &LatticeRoute) -> BTreeSet<RuleKey<'_>> {
    (route.rules.iter())
        .flat_map(|r| {
            let backend = r.backend.as_ref();
            (r.matches.iter()).map(move |m| (m.kind.gateway_api_type(), m.path.as_str(), backend))
        })
        .collect()
}

impl Judge {
    #[cfg(test)]
    pub fn new(base: &Tree, target: &Tree, rule_limit: usize) -> Judge {
        Judge::with_gate(base, target, &Gate::rules(rule_limit))
    }

    #[cfg(test)]
    pub fn with_gate(base: &Tree, target: &Tree, gate: &Gate) -> Judge {
        let target_docs = Docs::read(target);
        let base_docs = Docs::read_like(base, target, &target_docs);
        let live = state(&target_docs, &target_docs);
        let b = state(&base_docs, &base_docs);
        let docs = (&base_docs, &target_docs);
        Judge::of_states(base, (target, &live), docs, (&b, &[]), gate)
    }

    /// A judge of the change from `base` to `target`, whose documents are `docs` (base,
    /// target) and whose routing states are `b` and `live`. `landed` is what an earlier
    /// judge of a change to the same target (network `live`) expected, or nothing: where a
    /// request landed in the target is taken from it rather than followed again.
    pub fn of_states(
        base: &Tree,
        (target, live): (&Tree, &Network),
        docs: (&Docs, &Docs),
        (b, landed): (&Network, &[Expected]),
        gate: &Gate,
    ) -> Judge {
        let (changed, every) = changes(base, target);
        let scope = Scope::of(&[b, live], (&changed, every));
        Judge::of_scope(
            base,
            (target, live, landed),
            docs,
            (b, scope, &changed),
            gate,
        )
    }

    #[cfg(test)]
    /// A judge that follows every request any tree probes through every file: what the
    /// judge of [`Judge::new`], which looks only at what the change can reroute, must
    /// agree with (tests/suite/properties.rs holds it to that).
    pub fn unscoped(base: &Tree, target: &Tree, rule_limit: usize) -> Judge {
        let docs = (Docs::read(base), Docs::read(target));
        let (b, r) = (state(&docs.0, &docs.0), state(&docs.1, &docs.1));
        let probes: BTreeSet<(String, String)> = b.probes().into_iter().chain(r.probes()).collect();
        let scope = Scope {
            probes: probes.into_iter().collect(),
            files: base
                .keys()
                .chain(target.keys())
                .filter(|rel| !is_kustomization(rel))
                .cloned()
                .collect(),
        };
        let changed = changes(base, target).0;
        let docs = (&docs.0, &docs.1);
        let gate = Gate::rules(rule_limit);
        Judge::of_scope(base, (target, &r, &[]), docs, (&b, scope, &changed), &gate)
    }

    fn of_scope(
        base: &Tree,
        (target, r, landed): (&Tree, &Network, &[Expected]),
        docs: (&Docs, &Docs),
        (b, scope, changed): (&Network, Scope, &BTreeSet<PathBuf>),
        gate: &Gate,
    ) -> Judge {
        let auth = (gate.auth.as_ref()).map(|p| {
            crate::rollout::auth_safety::AuthExpect::of(p, &scope.probes, &scope.files, (b, r))
        });
        let Scope { probes, files } = scope;
        // The requests are followed while the files in scope are gathered: that is mostly
        // one core's work, which the following leaves idle in its tail.
        let (expected, known) = rayon::join(
            || landings(probes, (b, r, landed)),
            || Known::of((base, target), docs, &files),
        );
        Judge {
            kept: gate.keep.requests(b, r, gate.auth.as_ref()),
            known: known.both,
            base: known.base,
            target: known.target,
            expected,
            quotas: gate.quotas.clone(),
            base_routes: (b.lattice.iter())
                .filter(|r| files.contains(&r.file))
                .map(|r| (r.file.clone(), Arc::clone(r)))
                .collect(),
            over_limit: (r.lattice.iter())
                .any(|l| !changed.contains(&l.file) && gate.quotas.over_rule_quota(l.rules.len())),
            auth,
            base_routes_well: std::sync::OnceLock::new(),
        }
    }

    #[cfg(test)]
    /// The documents of a state's files in scope: the base's or the target's where the
    /// state has their text, parsed where it has a text of its own (an in-between route).
    pub fn docs(&self, state: &Tree) -> Docs {
        let every: Vec<Edit> = (self.known.paths())
            .map(|rel| (rel.to_path_buf(), state.get(rel).cloned()))
            .collect();
        self.docs_after(&Docs::default(), &every)
    }

    /// `docs` (a state's documents of the files in scope) with `edits` made: each edited
    /// file's document is the base's or the target's, or parsed (an in-between route).
    fn docs_after(&self, docs: &Docs, edits: &[Edit]) -> Docs {
        use rayon::prelude::*;
        let changes = (edits.par_iter())
            .filter(|(rel, _)| self.known.holds(rel))
            .map(|(rel, text)| {
                let doc = text.as_ref().and_then(|t| match self.known.doc(rel, t) {
                    Some(doc) => Some(std::sync::Arc::clone(doc)),
                    None => Doc::parse(rel, t, crate::manifest::layout::is_kong_file(rel))
                        .ok()
                        .map(std::sync::Arc::new),
                });
                (rel.clone(), doc)
            })
            .collect();
        docs.with_changes(changes)
    }

    /// Whether every request is routed acceptably in `net`.
    pub fn routes_well(&self, net: &Network) -> bool {
        use rayon::prelude::*;
        self.expected
            .par_iter()
            .with_max_len(crate::diag::PIECE)
            .all(|((h, p), before, after)| {
                lands_acceptably(before.landing(), after.landing(), net.lands(h, p))
            })
            && (self.auth.as_ref()).is_none_or(|a| a.violation(net).is_none())
            && self.kept.held_in(net)
    }

    /// Whether `state` is safe in every order and keeps every Lattice route in its quota,
    /// also while the controller swaps its rules: it creates the new rules before it
    /// deletes the old ones, and drops those over the quota without an error.
    pub fn safe(&self, state: &Docs) -> bool {
        self.safe_judged(state, true)
    }

    /// [`Judge::safe`], judged on all three networks even where one side is the base's:
    /// what the shortcut must agree with.
    #[cfg(test)]
    pub fn safe_in_three_networks(&self, state: &Docs) -> bool {
        self.safe_judged(state, false)
    }

    /// Whether the base routes well, judged once. Every request lands in the base where it
    /// landed before, which [`lands_acceptably`] always accepts (the scope holds every file
    /// on each request's way, so the base's documents in scope route it as the whole base
    /// does): only the addresses kept and the auth policies can fail it, and without
    /// either, the base's network need not be built.
    fn base_routes_well(&self) -> bool {
        if self.auth.is_none() && self.kept.is_empty() {
            return true;
        }
        *(self.base_routes_well).get_or_init(|| {
            let net = self::state(&self.base, &self.base);
            (self.auth.as_ref()).is_none_or(|a| a.violation(&net).is_none())
                && self.kept.held_in(&net)
        })
    }

    fn safe_judged(&self, state: &Docs, one_side_known: bool) -> bool {
        use rayon::prelude::*;
        if self.over_limit {
            return false;
        }
        let live = self::state(state, state);
        let in_quota = live.lattice.par_iter().all(|r| {
            let now = rule_keys(r);
            let peak = match self.base_routes.get(&r.file) {
                // A route the state shares with the base has no other rules to swap to.
                Some(old) if !Arc::ptr_eq(old, r) => rule_keys(old).union(&now).count(),
                _ => now.len(),
            };
            !self.quotas.over_rule_quota(r.rules.len()) && !self.quotas.over_rule_quota(peak)
        });
        if !in_quota {
            return false;
        }
        // The states Argo CD can be in while `state` syncs over the base: each side live
        // first (indexed in parallel: a change of every app holds every file), then both.
        // Where the state leaves one side as the base's, one of those is the base and the
        // other the state itself: a step of one side (a switch's new Lattice services, or
        // its Kong routes) is judged on two networks, one of them known, rather than three.
        let same = |side| state.same_half(&self.base, side);
        if one_side_known && (same(Side::Kong) || same(Side::Lattice)) {
            return self.base_routes_well() && self.routes_well(&live);
        }
        let (lattice_first, kong_first) = rayon::join(
            || self::state(state, &self.base),
            || self::state(&self.base, state),
        );
        [lattice_first, kong_first, live]
            .iter()
            .all(|net| self.routes_well(net))
    }
}

/// Where each of `probes` lands before (in `b`) and after (in `r`). Each request is
/// followed on its own: a change of every app has tens of thousands. A switch's later steps
/// judge mostly the same requests toward the same target: where one of those lands there is
/// looked up in `landed` (both lists are sorted by request), and any other is followed.
fn landings(
    probes: Vec<(String, String)>,
    (b, r, landed): (&Network, &Network, &[Expected]),
) -> Vec<Expected> {
    use rayon::prelude::*;
    debug_assert!(
        landed.windows(2).all(|w| w[0].0 < w[1].0),
        "sorted, each once"
    );
    let after = |h: &str, p: &str| match landed
        .binary_search_by(|((eh, ep), _, _)| (eh.as_str(), ep.as_str()).cmp(&(h, p)))
    {
        Ok(i) => landed[i].2.clone(),
        Err(_) => Landed::of(r.lands(h, p)),
    };
    (probes.into_par_iter())
        .with_max_len(crate::diag::PIECE)
        .map(|(h, p)| {
            let (before, after) = (Landed::of(b.lands(&h, &p)), after(&h, &p));
            ((h, p), before, after)
        })
        .collect()
}

/// The base's and the target's documents of the files in scope, and both trees' texts of
/// them (see [`Judge::known`]).
struct Known {
    base: Docs,
    target: Docs,
    both: TwoTrees,
}

impl Known {
    fn of(
        (base, target): (&Tree, &Tree),
        docs: (&Docs, &Docs),
        files: &BTreeSet<PathBuf>,
    ) -> Known {
        let scoped = |(tree, docs): (&Tree, &Docs)| (subtree(tree, files), docs.only(files));
        let ((base_tree, base), (target_tree, target)) =
            rayon::join(|| scoped((base, docs.0)), || scoped((target, docs.1)));
        Known {
            both: TwoTrees::of((&base_tree, &base), (&target_tree, &target)),
            base,
            target,
        }
    }
}

/// The app a Kong file belongs to, by latgen's file names (`httproute-<app>.yaml`,
/// `service-<app>-lattice.yaml`); other files stand alone.
fn kong_unit(rel: &Path) -> String {
    let name = rel
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let stem = name.trim_end_matches(".yaml");
    let app = stem.strip_prefix("httproute-").or_else(|| {
        stem.strip_prefix("service-")
            .map(|s| s.trim_end_matches("-lattice"))
    });
    app.map_or_else(|| rel.display().to_string(), str::to_string)
}

/// The edits to try, in the order that makes steps largest: Lattice routes grow first, Kong
/// leaves what goes away, Kong moves to the target, and Lattice lets go of the rest.
fn candidate_edits(base: &Tree, target: &Tree, versions: &dyn Versions) -> Vec<Vec<Unit>> {
    let mut lattice: [Vec<Unit>; 3] = Default::default();
    let mut kong: [BTreeMap<String, Unit>; 2] = Default::default();
    // Walking both trees side by side finds the few files a change touches; a set of
    // every path of both was most of the time a step took. A route's monitoring is no edit
    // of its own: it is made from the step's Kong side once the step is.
    let (changed, _) = differing(base, target);
    for (rel, old, new) in changed.into_iter().filter(|(rel, _, _)| !follows_kong(rel)) {
        let to = (rel.clone(), new.cloned());
        match (side_of(rel), old, new) {
            (Side::Lattice, None, Some(_)) => lattice[0].push(vec![to]),
            (Side::Lattice, Some(o), Some(n)) => {
                let between = |keep| {
                    versions
                        .between(rel, o, n, keep)
                        .filter(|u| u.as_str() != &**o && u.as_str() != &**n)
                };
                if let Some(u) = between(Keep::Both) {
                    lattice[0].push(vec![(rel.clone(), Some(u.into()))]);
                }
                if let Some(u) = between(Keep::Common) {
                    lattice[1].push(vec![(rel.clone(), Some(u.into()))]);
                }
                lattice[2].push(vec![to]);
            }
            (Side::Lattice, _, None) => lattice[2].push(vec![to]),
            (Side::Kong, Some(_), None) => kong[0].entry(kong_unit(rel)).or_default().push(to),
            (Side::Kong, _, _) => kong[1].entry(kong_unit(rel)).or_default().push(to),
        }
    }
    let [grow, common, shrink] = lattice;
    let [leave, switch] = kong;
    [
        grow,
        leave.into_values().collect(),
        common,
        switch.into_values().collect(),
        shrink,
    ]
    .into_iter()
    .filter(|p| !p.is_empty())
    .collect()
}

/// `tree` (which holds no kustomization: see [`overlaid`]) with each side's kustomization
/// made for the files it holds.
pub(crate) fn with_kustomizations(mut tree: Tree, versions: &dyn Versions) -> Tree {
    // Each side's (a line per file) on its own.
    let of = |side: Side| {
        let files: Vec<&Path> = tree
            .keys()
            .filter_map(|p| p.strip_prefix(side.dir()).ok())
            .collect();
        (!files.is_empty())
            .then(|| versions.kustomization(side, &files))
            .flatten()
    };
    let (lattice, kong) = rayon::join(|| of(Side::Lattice), || of(Side::Kong));
    for (side, text) in [(Side::Lattice, lattice), (Side::Kong, kong)] {
        if let Some(text) = text {
            tree.insert(Path::new(side.dir()).join("kustomization.yaml"), text);
        }
    }
    tree
}

/// The next safe step from `base` toward `target`: the target itself when it is safe in
/// every order, else the base with as many of the change's edits as stay safe together.
/// Equal to `base` when no edit is safe (the change has to be split by hand). The rollout
/// asks whether the target is safe first, and then [`step_toward`]; the tests ask this.
#[cfg(test)]
pub(crate) fn next_step(
    judge: &Judge,
    base: &Tree,
    target: &Tree,
    versions: &dyn Versions,
) -> Tree {
    if judge.safe(&judge.target) {
        return target.clone();
    }
    step_toward(judge, base, target, versions)
}

/// The next safe step of a change whose target the judge has found unsafe over the base:
/// the base with as many of the change's edits as stay safe together, or the base itself.
/// The target is not judged again, since a switch's takes tens of thousands of requests.
/// `base` is the tree the judge was made from: the files in its scope are looked up in the
/// judge's copy of it.
pub(crate) fn step_toward(
    judge: &Judge,
    base: &Tree,
    target: &Tree,
    versions: &dyn Versions,
) -> Tree {
    // The state is the base with a few files edited: kept as those edits, so that trying
    // an edit copies no tree.
    let mut state = Overlay {
        base,
        known: &judge.known,
        edits: Edits::default(),
    };
    // The state's documents, kept beside it: a try of one unit changes a few of them.
    let mut state_docs = judge.base.clone();
    for phase in candidate_edits(base, target, versions) {
        // A whole phase that is safe at once is taken at once: one judgement instead of
        // one per unit (a change of every app, such as a switch of dispatch mode, has
        // hundreds of units).
        let changes = phase
            .iter()
            .flatten()
            .any(|(rel, text)| state.get(rel) != text.as_ref());
        if changes {
            let all: Vec<Edit> = phase.iter().flatten().cloned().collect();
            let whole_docs = judge.docs_after(&state_docs, &all);
            if judge.safe(&whole_docs) {
                state.edits.extend(all);
                state_docs = whole_docs;
                continue;
            }
        }
        let created = created_domains(&judge.known, &state);
        // The phase's units change the state's documents as they are taken.
        let phase_start = state_docs.clone();
        let in_use = kong_domains(&judge.base, &phase_start);
        for unit in phase {
            let before: Vec<Edit> = unit
                .iter()
                .map(|(rel, _)| (rel.clone(), state.get(rel).cloned()))
                .collect();
            if before == unit
                || points_at(&judge.known, &unit, &created)
                || removes_in_use(&judge.known, &unit, &in_use)
                || removes_needed_grant(&judge.known, &unit, &state)
            {
                continue;
            }
            let tried = judge.docs_after(&state_docs, &unit);
            if judge.safe(&tried) {
                state.edits.extend(unit);
                state_docs = tried;
            }
        }
    }
    if (state.edits.iter()).all(|(rel, text)| base.get(rel) == text.as_ref()) {
        return base.clone();
    }
    with_kustomizations(overlaid(base, state.edits), versions)
}
