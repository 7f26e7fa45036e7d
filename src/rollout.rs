//! The safe steps of a change. Argo CD syncs the Lattice side and the Kong side in no set
//! order, so a state of the output is safe over a base when, whichever side goes live first
//! (or both), every request goes where it went before the change or where it goes after it,
//! never to a 404 or to another app, and no Lattice route is over its rule quota.
//!
//! [`next_step`] finds the largest safe step from a base toward a target, one object (one
//! file) at a time: each file is either as in the base, as in the target or, for a Lattice
//! route that gains and loses rules, the union of both (old rules kept until Kong has moved
//! off them). `render --base` writes it, `check --base` accepts it, and [`steps`] counts how
//! many such steps a change takes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::output::side_of;
use crate::render::Side;
use crate::routing::{Doc, Network, Outcome, Source};

/// Files under the output folder, by relative path.
pub type Tree = BTreeMap<PathBuf, String>;

/// A tree of manifests read once into documents, by path under the output folder. An
/// unreadable file adds nothing: its routes are simply absent from a state built with it.
pub struct Docs(Vec<(PathBuf, Doc)>);

impl Docs {
    pub fn read(files: &Tree) -> Docs {
        use rayon::prelude::*;
        Docs(
            files
                .par_iter()
                .filter(|(rel, _)| !is_kustomization(rel))
                .filter_map(|(rel, text)| Some((rel.clone(), Doc::parse(rel, text).ok()?)))
                .collect(),
        )
    }

    fn half(&self, side: Side) -> impl Iterator<Item = (&Path, Source<'_>, bool)> {
        self.0
            .iter()
            .filter(move |(rel, _)| side_of(rel) == side)
            .map(move |(rel, doc)| (rel.as_path(), Source::Read(doc), side == Side::Kong))
    }
}

/// The routing state with the Lattice side of one tree and the Kong side of another.
pub fn state(lattice: &Docs, kong: &Docs) -> Network {
    let list: Vec<_> = kong
        .half(Side::Kong)
        .chain(lattice.half(Side::Lattice))
        .collect();
    Network::from_sources(&list).0
}

/// Whether `rel` is a side's kustomization (a list of files, not an object).
pub fn is_kustomization(rel: &Path) -> bool {
    rel.file_name().is_some_and(|n| n == "kustomization.yaml")
}

/// During a rollout a request may behave as before or as after, by where it lands (which
/// rule of which route carried it does not matter), but may not break where it worked.
pub fn acceptable(before: &Outcome, after: &Outcome, now: &Outcome) -> bool {
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

/// A request (host, path), and where it goes before and after the change.
pub type Expected = ((String, String), Outcome, Outcome);

/// Judges states of a change from `base` to `target`.
pub struct Judge {
    pub base: Docs,
    pub target: Docs,
    /// Where every request that either tree routes goes before and after.
    pub expected: Vec<Expected>,
    /// The most rules a Lattice route may hold.
    rule_limit: usize,
}

impl Judge {
    pub fn new(base: &Tree, target: &Tree, rule_limit: usize) -> Judge {
        let (base, target) = (Docs::read(base), Docs::read(target));
        let (b, r) = (state(&base, &base), state(&target, &target));
        // A state's Kong files are each the base's or the target's, so these are all the
        // requests any state routes.
        let probes: BTreeSet<(String, String)> = b.probes().into_iter().chain(r.probes()).collect();
        let expected = probes
            .into_iter()
            .map(|(h, p)| {
                let (before, after) = (b.route(&h, &p), r.route(&h, &p));
                ((h, p), before, after)
            })
            .collect();
        Judge {
            base,
            target,
            expected,
            rule_limit,
        }
    }

    /// The states Argo CD can be in while `state` syncs over the base: each side live
    /// first, then both.
    pub fn orders(&self, state: &Docs) -> [(&'static str, Network); 3] {
        [
            (
                "the Lattice side goes live before the Kong side",
                self::state(state, &self.base),
            ),
            (
                "the Kong side goes live before the Lattice side",
                self::state(&self.base, state),
            ),
            ("the change is live", self::state(state, state)),
        ]
    }

    /// Whether every request is routed acceptably in `net`.
    pub fn routes_well(&self, net: &Network) -> bool {
        self.expected
            .iter()
            .all(|((h, p), before, after)| acceptable(before, after, &net.route(h, p)))
    }

    /// Whether `state` is safe in every order and keeps every Lattice route in its quota.
    pub fn safe(&self, state: &Docs) -> bool {
        let live = self::state(state, state);
        live.lattice
            .iter()
            .all(|r| r.rules.len() <= self.rule_limit)
            && self
                .orders(state)
                .iter()
                .all(|(_, net)| self.routes_well(net))
    }
}

/// How a step's files are made that are neither the base's nor the target's.
pub trait Versions {
    /// A Lattice route with the rules of both `base` and `target` (same path), or None when
    /// it cannot be made.
    fn union(&self, rel: &Path, base: &str, target: &str) -> Option<String>;
    /// The kustomization of a side that holds `files` (names under the side's folder).
    fn kustomization(&self, side: Side, files: &[&Path]) -> Option<String>;
}

/// One way to change one file: to this text, or away (None).
type Edit = (PathBuf, Option<String>);

/// The edits to try, in the order that makes steps largest: Lattice routes grow first, Kong
/// leaves what goes away, Kong moves to the target, and Lattice lets go of the rest.
fn candidate_edits(base: &Tree, target: &Tree, versions: &dyn Versions) -> Vec<Vec<Edit>> {
    let paths: BTreeSet<&PathBuf> = base
        .keys()
        .chain(target.keys())
        .filter(|p| !is_kustomization(p))
        .collect();
    let mut phases: [Vec<Edit>; 5] = Default::default();
    for rel in paths {
        let (old, new) = (base.get(rel), target.get(rel));
        if old == new {
            continue;
        }
        let to = (rel.clone(), new.cloned());
        match (side_of(rel), old, new) {
            (Side::Lattice, None, Some(_)) => phases[0].push(to),
            (Side::Lattice, Some(o), Some(n)) => {
                if let Some(u) = versions.union(rel, o, n).filter(|u| u != o && u != n) {
                    phases[0].push((rel.clone(), Some(u)));
                }
                phases[4].push(to);
            }
            (Side::Lattice, _, None) => phases[4].push(to),
            (Side::Kong, Some(_), None) => phases[1].push(to),
            (Side::Kong, _, _) => phases[2].push(to),
        }
    }
    phases.into_iter().filter(|p| !p.is_empty()).collect()
}

/// `tree` with each side's kustomization made anew for the files it holds.
fn with_kustomizations(mut tree: Tree, versions: &dyn Versions) -> Tree {
    tree.retain(|rel, _| !is_kustomization(rel));
    for side in [Side::Lattice, Side::Kong] {
        let files: Vec<&Path> = tree
            .keys()
            .filter_map(|p| p.strip_prefix(side.dir()).ok())
            .collect();
        if files.is_empty() {
            continue;
        }
        if let Some(text) = versions.kustomization(side, &files) {
            tree.insert(Path::new(side.dir()).join("kustomization.yaml"), text);
        }
    }
    tree
}

/// The next safe step from `base` toward `target`: the target itself when it is safe in
/// every order, else the base with as many of the change's edits as stay safe together.
/// Equal to `base` when no edit is safe (the change has to be split by hand).
pub fn next_step(judge: &Judge, base: &Tree, target: &Tree, versions: &dyn Versions) -> Tree {
    if judge.safe(&judge.target) {
        return target.clone();
    }
    let mut state: Tree = base.clone();
    for phase in candidate_edits(base, target, versions) {
        for (rel, text) in phase {
            let before = state.get(&rel).cloned();
            if before == text {
                continue;
            }
            apply(&mut state, &rel, text);
            if !judge.safe(&Docs::read(&state)) {
                apply(&mut state, &rel, before);
            }
        }
    }
    if state == *base {
        return state;
    }
    with_kustomizations(state, versions)
}

fn apply(tree: &mut Tree, rel: &Path, text: Option<String>) {
    match text {
        Some(t) => tree.insert(rel.to_path_buf(), t),
        None => tree.remove(rel),
    };
}

/// Every step from `base` to `target`, the last being the target; empty when they are
/// equal, None when some step can make no progress.
pub fn steps(
    base: &Tree,
    target: &Tree,
    rule_limit: usize,
    versions: &dyn Versions,
) -> Option<Vec<Tree>> {
    let mut out = Vec::new();
    let mut at = base.clone();
    while at != *target {
        let judge = Judge::new(&at, target, rule_limit);
        let next = next_step(&judge, &at, target, versions);
        if next == at || out.len() > 16 {
            return None;
        }
        out.push(next.clone());
        at = next;
    }
    Some(out)
}
