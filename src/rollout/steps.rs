//! The next PR of a change: from the output folder as a base revision holds it to what the
//! declarations and the lock say, with every move in the lock carried to its end, in the
//! fewest PRs that each route every request as before or as after whichever side Argo CD
//! syncs first. `render --base` writes it; `check --base` accepts it.

use std::path::PathBuf;

use crate::input::lock::{LockState, MoveStep, Rollout};
use crate::manifest::layout::{Side, is_kustomization, side_of};
use crate::manifest::tree::{Docs, Keep, Tree, Versions, state};
use crate::pipeline::Built;
use crate::render::Templates;
use crate::render::between::Between;
use crate::rollout::addresses::Release;
use crate::rollout::held::KeptApps;
use crate::rollout::judge::{self};

/// One step of a change.
#[derive(Debug)]
pub(crate) struct NextStep {
    /// The output files this step holds (both sides, kustomizations included).
    pub files: Tree,
    /// The lock written with it.
    pub lock_text: String,
    /// How many steps the change takes from the base, this one included: 0 when the base
    /// already holds the target.
    pub remaining: usize,
    /// This step's number and the rollout's length, counting the steps already shipped.
    pub progress: Rollout,
    /// The project built with every move finished: the target.
    pub built: Built,
    /// The routing states of the base, the steps and the target.
    pub states: judge::States,
    /// The addresses of apps with callers of their own that a later step (or, when
    /// [`NextStep::held_now`], this one) would take away: held until the user releases
    /// them (`render --base --release-old-address APP`).
    pub held: Vec<Release>,
}

impl NextStep {
    /// Whether this step reaches the target.
    pub fn completes(&self) -> bool {
        self.remaining <= 1 && self.held.is_empty()
    }

    /// Whether the next step is held: nothing can be written until an address is released.
    pub fn held_now(&self) -> bool {
        !self.held.is_empty() && self.remaining == 1
    }
}

/// No part of the change is safe on its own from the base: it has to be split by hand.
/// `full` lists the routes whose old and new rules together are over the quota, with the
/// count.
#[derive(Debug)]
pub(crate) struct Stuck {
    pub built: Box<Built>,
    pub full: Vec<(std::path::PathBuf, usize)>,
}

/// The next step from `base` (the output folder's manifests at the base revision) toward
/// the target `built` is (the project built with every move in the lock finished, as
/// [`crate::pipeline::build_final`] builds it). `shipped` is the rollout the base's lock
/// records (the steps already merged), if any; `released`, the apps whose old addresses the
/// user lets go (every other app with callers of its own keeps its address until then).
pub(crate) fn next_step(
    built: Built,
    templates: &Templates,
    base: &Tree,
    (shipped, released): (Option<Rollout>, &[String]),
) -> Result<NextStep, Stuck> {
    let target = &built.output.files;
    let config = &built.prepared.config;
    let limit = config.quotas.rules_per_service as usize;
    let versions = Between {
        templates,
        config,
        apps: &built.prepared.apps,
    };
    let keep = KeptApps::of(&built.prepared.apps, released);
    let gate = judge::Gate::of(config, keep.clone());
    let Some(steps) = judge::steps(base, (target, &built.docs), &gate, &versions) else {
        let full = over_limit_unions(base, target, limit, &versions);
        return Err(Stuck {
            built: Box::new(built),
            full,
        });
    };
    let count = steps.count();
    let held = match steps.held {
        true => held(steps.trees.last().unwrap_or(base), target, &built, &keep),
        false => Vec::new(),
    };
    let files = match steps.trees.into_iter().next() {
        Some(first) => first,
        // Held before any step: nothing to write.
        None if steps.held => base.clone(),
        None => target.clone(),
    };
    let done = shipped.map_or(0, |r| r.step);
    let progress = Rollout {
        step: done + 1,
        of: done + count as u32,
    };
    let lock = if count <= 1 && held.is_empty() {
        built.prepared.plan.lock.clone()
    } else {
        let mut lock = in_flight(&built, &files);
        lock.rollout = Some(progress);
        lock
    };
    Ok(NextStep {
        files,
        lock_text: crate::input::lock::serialize(&lock),
        remaining: count,
        progress,
        built,
        states: steps.states,
        held,
    })
}

/// The addresses the step after `last` would take from the apps `keep` holds.
fn held(last: &Tree, target: &Tree, built: &Built, keep: &KeptApps) -> Vec<Release> {
    let apps = &built.prepared.apps;
    let mut held = crate::rollout::addresses::released(last, target, apps);
    held.retain(|r| keep.names().contains(&r.app));
    held
}

/// The lock of a step short of the target: each move that the inputs' lock has in flight
/// stays in flight, at the step the files show (the Kong side already pointing at the new
/// group or not), so that `latgen status` and `latgen move` see it.
fn in_flight(built: &Built, files: &Tree) -> LockState {
    let mut lock = built.prepared.plan.lock.clone();
    for (app, old, m) in &built.prepared.finished_moves {
        let own = |p: &std::path::Path| {
            p.file_name().is_some_and(|n| {
                n == format!("httproute-{app}.yaml").as_str()
                    || n == format!("service-{app}-lattice.yaml").as_str()
            })
        };
        let switched = built
            .output
            .files
            .iter()
            .filter(|(p, _)| side_of(p) == Side::Kong && own(p))
            .all(|(p, text)| files.get(p) == Some(text));
        let mut m = *m;
        m.step = if switched {
            MoveStep::SwitchKong
        } else {
            MoveStep::AddRules
        };
        lock.apps.insert(app.clone(), *old);
        lock.moves.insert(app.clone(), m);
    }
    lock
}

/// The rollout the lock at `rev` records: the steps already merged.
pub(crate) fn shipped(lock: &std::path::Path, rev: &str) -> Option<Rollout> {
    let text = crate::rollout::git::read_file_at(lock, rev).ok()??;
    let mut diags = crate::diag::Diagnostics::new();
    crate::input::lock::parse(lock, &text, &mut diags)?.rollout
}

/// Lattice routes whose old and new rules together are over the rule limit: a change that
/// swaps rules in them cannot keep the old ones while Kong moves, so it stalls there.
pub(crate) fn over_limit_unions(
    base: &Tree,
    target: &Tree,
    rule_limit: usize,
    versions: &dyn Versions,
) -> Vec<(PathBuf, usize)> {
    base.iter()
        .filter(|(rel, _)| side_of(rel) == Side::Lattice && !is_kustomization(rel))
        .filter_map(|(rel, old)| {
            let new = target.get(rel).filter(|n| *n != old)?;
            let union = versions.between(rel, old, new, Keep::Both)?;
            let one = Tree::from([(rel.clone(), union)]);
            let rules = state(&Docs::read(&one), &Docs::read(&Tree::new()))
                .lattice
                .first()?
                .rules
                .len();
            (rules > rule_limit).then(|| (rel.clone(), rules))
        })
        .collect()
}
