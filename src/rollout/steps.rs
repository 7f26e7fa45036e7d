//! The next PR of a change: from the output folder as a base revision holds it to what the
//! declarations and the lock say, with every move in the lock carried to its end, in the
//! fewest PRs that each route every request as before or as after whichever side Argo CD
//! syncs first. `render --base` writes it; `check --base` accepts it. Every step of the
//! change is found ([`every_step`]), each by the judge and with its monitoring made from
//! its Kong side.

use std::path::{Path, PathBuf};

use crate::input::config::Dispatch;
use crate::input::lock::{Lock, LockState, MoveStep, Rollout};
use crate::manifest::layout::{Side, is_kustomization, side_of};
use crate::manifest::tree::{Docs, Keep, Text, Tree, Versions, state};
use crate::pipeline::Built;
use crate::render::Templates;
use crate::render::between::Between;
use crate::rollout::addresses::Release;
use crate::rollout::follow_kong;
use crate::rollout::held::KeptApps;
use crate::rollout::judge::{self};
use latgen_sim::routing::Network;

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
    pub states: States,
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

    /// The routing states of the base and of the step written, when the steps were found
    /// from them: the step is the first one found, or the target.
    pub fn written_states(&self) -> Option<(&Network, &Network)> {
        let base = self.states.passed.first()?;
        let head = if self.files == self.built.output.files {
            &self.states.target
        } else {
            self.states.passed.get(1)?
        };
        Some((base, head))
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
/// records (the steps already merged), if any, and the lock a switch in flight started from
/// ([`shipped_from`]); `released`, the apps whose old addresses the user lets go (every
/// other app with callers of its own keeps its address until then).
pub(crate) fn next_step(
    mut built: Built,
    templates: &Templates,
    base: &Tree,
    ((shipped, origin), released): (&Shipped, &[String]),
) -> Result<NextStep, Stuck> {
    let shipped = *shipped;
    // A later step of a switch: the lock it started from stands for its base in part.
    // Only where the build knew of no switch, whose render of its own lock it keeps.
    if built.switched_from.is_none() {
        built.switched_from = origin.clone();
    }
    let rendered_locked = built.locked.take();
    let target = &built.output.files;
    let config = &built.prepared.config;
    let limit = config.quotas.rules_per_service as usize;
    let between = Between {
        templates,
        config,
        apps: &built.prepared.apps,
    };
    let versions = Remembered::new(&between);
    let keep = KeptApps::of(&built.prepared.apps, released);
    let gate = judge::Gate::of(config, keep.clone());
    // A switch's base is every file changed: its documents are the lock's render's, made
    // while the project was built when its lock was known then.
    let locked = rendered_locked.or_else(|| {
        let lock = built.switched_from.as_ref()?;
        crate::pipeline::render_as_locked(&built.prepared, lock, templates, Some(base))
    });
    let locked = locked.as_ref().map(|(tree, docs)| (tree, docs));
    let Some(steps) = every_step(base, (target, &built.docs), locked, &gate, &versions) else {
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

/// [`Versions`] that makes each side's kustomization once per list of files: every try of
/// a step, and the step kept, ask for the same listing of thousands of files again.
struct Remembered<'v> {
    versions: &'v dyn Versions,
    made: std::sync::Mutex<Vec<(Side, Vec<PathBuf>, Text)>>,
}

impl<'v> Remembered<'v> {
    /// The few listings a change's steps go between (each side's, before and after).
    const KEPT: usize = 4;

    fn new(versions: &'v dyn Versions) -> Remembered<'v> {
        Remembered {
            versions,
            made: std::sync::Mutex::default(),
        }
    }
}

impl Versions for Remembered<'_> {
    fn between(&self, rel: &Path, base: &str, target: &str, keep: Keep) -> Option<String> {
        self.versions.between(rel, base, target, keep)
    }

    fn kustomization(&self, side: Side, files: &[&Path]) -> Option<Text> {
        let same = |(s, list): (&Side, &Vec<PathBuf>)| {
            *s == side && list.len() == files.len() && list.iter().zip(files).all(|(a, b)| a == b)
        };
        let made = |m: &Vec<(Side, Vec<PathBuf>, Text)>| {
            m.iter()
                .find(|(s, list, _)| same((s, list)))
                .map(|(_, _, t)| t.clone())
        };
        if let Some(text) = made(&self.made.lock().unwrap_or_else(|e| e.into_inner())) {
            return Some(text);
        }
        let text = self.versions.kustomization(side, files)?;
        let mut kept = self.made.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() == Self::KEPT {
            kept.remove(0);
        }
        kept.push((
            side,
            files.iter().map(|p| p.to_path_buf()).collect(),
            text.clone(),
        ));
        Some(text)
    }

    fn monitoring(&self, route: &str, apps: &[&str]) -> Option<String> {
        self.versions.monitoring(route, apps)
    }
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
    rollout_of(&text)
}

/// The rollout a base revision's lock records, and the lock it started from when it is a
/// switch of dispatch mode.
pub(crate) type Shipped = (Option<Rollout>, Option<Lock>);

/// [`shipped`], and the lock the rollout started from when it is a switch of dispatch mode
/// ([`super::origin`]): a later step of the switch renders its base from it.
pub(crate) fn shipped_from(lock: &std::path::Path, rev: &str) -> Shipped {
    let Some(text) = crate::rollout::git::read_file_at(lock, rev).ok().flatten() else {
        return (None, None);
    };
    match recorded(&text) {
        Some((rollout, now)) => {
            let origin = now.and_then(|now| super::origin::switch_origin(lock, rev, now));
            (Some(rollout), origin)
        }
        None => (None, None),
    }
}

/// The rollout a lock text records, read without the rest of it: a base revision's lock
/// is asked only this, and holds a line per app. None for a lock this latgen cannot read.
fn rollout_of(text: &str) -> Option<Rollout> {
    recorded(text).map(|(rollout, _)| rollout)
}

/// [`rollout_of`], with the dispatch mode the lock was planned for (None for a mode this
/// latgen does not know: the rollout is read all the same).
pub(super) fn recorded(text: &str) -> Option<(Rollout, Option<Dispatch>)> {
    // Unknown fields are let through here: the lock of the working tree is the one read
    // in full and checked.
    #[derive(serde::Deserialize)]
    struct RolloutOnly {
        version: u32,
        #[serde(default)]
        rollout: Option<Rollout>,
        // Any value is let through: the mode only says where to look for the rollout's
        // start, and a value this latgen cannot read must not hide the rollout.
        #[serde(default)]
        dispatch: Option<serde_json::Value>,
    }
    // A key named `rollout` is spelled out in the text, escaped in a double-quoted scalar
    // (`"rol\x6cout"`), or made by a tag (`!!binary cm9sbG91dA==`): without any of them
    // there is none, and the lock (a line per app, about 20 ms to parse at 10,000 apps)
    // need not be parsed to say so.
    if !text.contains("rollout") && !text.contains('\\') && !text.contains('!') {
        return None;
    }
    let only: RolloutOnly = serde_saphyr::from_str(text).ok()?;
    let rollout = (only.version == crate::input::lock::LOCK_VERSION).then_some(only.rollout);
    let dispatch = match only.dispatch.as_ref().map(|d| d.as_str()) {
        None | Some(Some("path")) => Some(Dispatch::Path),
        Some(Some("header")) => Some(Dispatch::Header),
        Some(_) => None,
    };
    Some((rollout.flatten()?, dispatch))
}

/// Every step from `base` to `target`, the last being the target (see [`Steps`]); none when
/// they are equal, None when some step can make no progress. Steps that would break an
/// address the gate keeps are held: the steps end before them (`held`).
pub(crate) fn every_step(
    base: &Tree,
    (target, target_docs): (&Tree, &Docs),
    locked: Option<(&Tree, &Docs)>,
    gate: &judge::Gate,
    versions: &dyn Versions,
) -> Option<Steps> {
    let mut out: Vec<Tree> = Vec::new();
    let mut passed = Vec::new();
    let (mut ends_at_target, mut held) = (false, false);
    // The base's documents (most of them the target's) and state are read beside the
    // target's state; later, a step's, read while its monitoring was made, are kept for
    // the next round (`known`). `at_target` spares comparing the trees twice.
    let mut at_target = base == target;
    let (live, mut known) = rayon::join(
        || state(target_docs, target_docs),
        || (!at_target).then(|| read_state(base, (target, target_docs), locked)),
    );
    // Where the last judge found the requests land in the target, for the next: every
    // round judges toward the same target, whose network (`live`) is made once.
    let mut landed = Vec::new();
    loop {
        let at = out.last().unwrap_or(base);
        if at_target {
            break;
        }
        let (at_docs, at_state) =
            (known.take()).unwrap_or_else(|| read_state(at, (target, target_docs), locked));
        let mut judge = judge::Judge::of_states(
            at,
            (target, &live),
            (&at_docs, target_docs),
            (&at_state, &landed),
            gate,
        );
        // The next step is the target itself: not copied.
        let next =
            (!judge.safe(&judge.target)).then(|| judge::step_toward(&judge, at, target, versions));
        if next.as_ref() == Some(at) && !judge.kept.is_empty() {
            let docs = (&at_docs, target_docs);
            held = held_back(at, (target, &live), docs, &at_state, (gate, versions));
        }
        let next = next.map(|n| {
            let towards = (target, target_docs, &live);
            (n != *at).then(|| follow_kong::follow(n, (at, &at_docs, &at_state), towards, versions))
        });
        landed = std::mem::take(&mut judge.expected);
        crate::diag::free_later(judge);
        // The check judges the base and the first step; later states are not kept.
        if passed.len() < 2 {
            passed.push(at_state);
        } else {
            crate::diag::free_later(at_state);
        }
        match next {
            _ if held => break,
            None => {
                ends_at_target = true;
                break;
            }
            Some(Some((next, docs, net))) if out.len() <= 16 => {
                at_target = next == *target;
                known = Some((docs, net));
                out.push(next);
            }
            Some(_) => return None,
        }
    }
    let steps = Steps {
        trees: out,
        ends_at_target,
        held,
        states: States {
            passed,
            target: live,
        },
    };
    // At most 17 steps, the target included.
    (steps.count() <= 17).then_some(steps)
}

/// The documents of `at`, taken from the target's and the lock's render's where a file is
/// the same, and its routing state.
fn read_state(
    at: &Tree,
    target: (&Tree, &Docs),
    locked: Option<(&Tree, &Docs)>,
) -> (Docs, Network) {
    let docs = Docs::read_like_either(at, target, locked);
    let net = state(&docs, &docs);
    (docs, net)
}

/// Whether a change that can make no progress from `at` is held by the addresses the gate
/// keeps, rather than stuck: without them, it is safe or can take a step.
fn held_back(
    at: &Tree,
    (target, live): (&Tree, &Network),
    docs: (&Docs, &Docs),
    at_state: &Network,
    (gate, versions): (&judge::Gate, &dyn Versions),
) -> bool {
    let free = judge::Gate {
        keep: KeptApps::default(),
        ..gate.clone()
    };
    let judge = judge::Judge::of_states(at, (target, live), docs, (at_state, &[]), &free);
    judge.safe(&judge.target) || judge::step_toward(&judge, at, target, versions) != *at
}

/// The steps from a base to a target, and the routing states on the way.
#[derive(Debug)]
pub(crate) struct Steps {
    /// The trees of the steps; the last is the target's, unless `ends_at_target`.
    pub trees: Vec<Tree>,
    /// The step after `trees` is the target itself (not copied into them).
    pub ends_at_target: bool,
    /// The step after `trees` breaks an address the gate keeps: it is not taken.
    pub held: bool,
    pub states: States,
}

impl Steps {
    /// How many steps there are, a held one included.
    pub fn count(&self) -> usize {
        self.trees.len() + usize::from(self.ends_at_target || self.held)
    }
}

/// The routing states a rollout goes through, read once: whoever judges the same change
/// next (`check --base` after its rollout step) need not read them again.
#[derive(Debug)]
pub(crate) struct States {
    /// The state of the base, then of the first step when it is not the last.
    pub passed: Vec<Network>,
    /// The target's.
    pub target: Network,
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
            let one = Tree::from([(rel.clone(), union.into())]);
            let rules = state(&Docs::read(&one), &Docs::read(&Tree::new()))
                .lattice
                .first()?
                .rules
                .len();
            (rules > rule_limit).then(|| (rel.clone(), rules))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::rollout_of;
    use crate::input::lock::{LockState, Rollout, parse, serialize};
    use std::path::Path;

    /// A lock as render writes it, with apps and moves: what its full read says of the
    /// rollout, the light read of a base revision's lock says too.
    fn written(rollout: Option<Rollout>) -> String {
        let mut state = LockState::default();
        for i in 0..50 {
            state.apps.insert(format!("app-{i:03}"), 1 + i / 10);
        }
        state.rollout = rollout;
        state.existed = true;
        serialize(&state)
    }

    #[test]
    fn a_base_lock_gives_the_rollout_its_full_read_gives() {
        for rollout in [None, Some(Rollout { step: 2, of: 3 })] {
            let text = written(rollout);
            let mut diags = crate::diag::Diagnostics::new();
            let full = parse(Path::new("latgen.lock"), &text, &mut diags).map(|l| l.rollout);
            assert_eq!(full, Some(rollout));
            assert_eq!(rollout_of(&text), rollout);
        }
    }

    /// Listings that count how often they are made.
    #[derive(Default)]
    struct Counting(std::sync::atomic::AtomicUsize);

    impl super::Versions for Counting {
        fn between(&self, _: &Path, _: &str, _: &str, _: super::Keep) -> Option<String> {
            None
        }
        fn kustomization(&self, _: super::Side, files: &[&Path]) -> Option<super::Text> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Some(format!("{files:?}").into())
        }
        fn monitoring(&self, _: &str, _: &[&str]) -> Option<String> {
            None
        }
    }

    #[test]
    fn a_listing_asked_for_again_is_made_once_and_is_the_same() {
        use super::{Remembered, Side, Versions};
        let counting = Counting::default();
        let remembered = Remembered::new(&counting);
        let (a, b) = (
            [Path::new("x.yaml"), Path::new("y.yaml")],
            [Path::new("x.yaml")],
        );
        let first = remembered.kustomization(Side::Lattice, &a);
        assert_ne!(remembered.kustomization(Side::Lattice, &b), first);
        assert_eq!(remembered.kustomization(Side::Lattice, &a), first);
        assert!(remembered.kustomization(Side::Lattice, &b).is_some());
        assert_eq!(counting.0.load(std::sync::atomic::Ordering::Relaxed), 2);
        // Each side's listing is its own.
        remembered.kustomization(Side::Kong, &a);
        assert_eq!(counting.0.load(std::sync::atomic::Ordering::Relaxed), 3);
    }

    /// However the key is spelled (quoted, escaped, in a flow mapping, base64 under a
    /// tag), the rollout is found: the text is parsed unless it cannot hold the key.
    #[test]
    fn a_rollout_under_any_spelling_of_its_key_is_found() {
        let step = Some(Rollout { step: 1, of: 2 });
        for text in [
            "version: 1\nrollout: {step: 1, of: 2}\n",
            "version: 1\n\"rollout\": {step: 1, of: 2}\n",
            "version: 1\n'rollout': {step: 1, of: 2}\n",
            "version: 1\n\"rol\\x6cout\": {step: 1, of: 2}\n",
            "version: 1\n\"\\u0072ollout\": {step: 1, of: 2}\n",
            "{version: 1, rollout: {step: 1, of: 2}}",
            "version: 1\n? rollout\n: {step: 1, of: 2}\n",
            "version: 1\n!!binary cm9sbG91dA==: {step: 1, of: 2}\n",
        ] {
            assert_eq!(rollout_of(text), step, "{text}");
        }
        assert_eq!(rollout_of("version: 1\napps: {a: 1}\n"), None);
    }

    /// A dispatch mode this latgen cannot read (a later one, a list) hides no rollout: it
    /// only leaves the switch's start unlooked for.
    #[test]
    fn a_base_lock_with_a_mode_of_any_shape_records_its_rollout_and_mode() {
        use super::{Dispatch, recorded};
        let step = Rollout { step: 2, of: 3 };
        for (mode, read) in [
            ("", Some(Dispatch::Path)),
            ("dispatch: header\n", Some(Dispatch::Header)),
            ("dispatch: path\n", Some(Dispatch::Path)),
            ("dispatch: sideways\n", None),
            ("dispatch: [header]\n", None),
            ("dispatch: 7\n", None),
        ] {
            let text = format!("version: 1\n{mode}rollout: {{step: 2, of: 3}}\n");
            assert_eq!(recorded(&text), Some((step, read)), "{text}");
        }
    }

    #[test]
    fn a_base_lock_of_another_version_or_no_lock_records_no_rollout() {
        let other = written(Some(Rollout { step: 1, of: 2 })).replace("version: 1", "version: 9");
        assert_eq!(rollout_of(&other), None);
        assert_eq!(rollout_of("not: [a lock"), None);
        assert_eq!(rollout_of(""), None);
    }
}
