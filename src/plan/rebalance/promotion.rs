//! Promotion between environments (`latgen promote staging production`): the apps that
//! are new to the target environment (no group in its lock) go into the groups the source
//! environment gives them, where the target's own quotas allow, so that the two
//! environments' groups stay alike on purpose; an app the target's quotas cannot take
//! there is placed as any new app is, and said. Apps both environments already place are
//! never moved (that is `latgen move`, in safe steps): where they differ is reported.

use std::collections::{BTreeMap, BTreeSet};

use crate::diag::Diagnostics;
use crate::plan::prepared::Prepared;
use crate::plan::{NoPrevious, Plan};

/// Where one app ends up in the target environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Placed {
    pub app: String,
    /// Its group in the source environment.
    pub source: u32,
    /// Its group in the target (equal to `source` when the target's quotas allow).
    pub target: u32,
}

/// What promoting makes of the target environment.
#[derive(Debug)]
pub(crate) struct Promotion {
    /// The target's new apps that the source places, each where it lands.
    pub placed: Vec<Placed>,
    /// The target's new apps the source does not have: placed as any new app.
    pub target_only: Vec<String>,
    /// Apps both environments had placed already, in different groups: (app, source
    /// group, target group). Left as they are.
    pub differing: Vec<(String, u32, u32)>,
    /// The target project with the promoted placement.
    pub after: Prepared,
}

/// Promotes `source`'s placement into `target`, whose lock file placed `locked` (the
/// apps that had a group before this run: the others are new).
pub(crate) fn promotion(
    source: &Prepared,
    target: &Prepared,
    locked: &BTreeSet<String>,
) -> Promotion {
    let theirs = &source.plan.lock.apps;
    let ours = &target.plan.lock.apps;
    let new: Vec<&String> = ours.keys().filter(|a| !locked.contains(*a)).collect();
    let mut pins: BTreeMap<String, u32> = new
        .iter()
        .filter_map(|a| Some(((*a).clone(), *theirs.get(*a)?)))
        .collect();
    // A pin the target's quotas cannot honour shows as an outgrown app, or as an app the
    // target had placed that no longer keeps its group (the pins took its room): drop the
    // pins of those groups and plan again (each round drops at least one pin, so this
    // ends; with no pins the plan is the target's own).
    let plan = loop {
        let plan = replan(target, locked, &pins);
        let crowded = crowded_groups(target, locked, &plan);
        let before = pins.len();
        pins.retain(|_, g| !crowded.contains(g));
        let outgrown = (plan.outgrown.iter()).map(|o| &target.apps[o.app].name);
        for a in outgrown.filter(|a| !locked.contains(*a)) {
            pins.remove(a);
        }
        if pins.len() == before {
            break plan;
        }
    };
    let placed = new
        .iter()
        .filter_map(|a| {
            Some(Placed {
                app: (*a).clone(),
                source: *theirs.get(*a)?,
                target: *plan.lock.apps.get(*a)?,
            })
        })
        .collect();
    let target_only = (new.iter())
        .filter(|a| !theirs.contains_key(**a))
        .map(|a| (*a).clone())
        .collect();
    let differing = (ours.iter())
        .filter(|(a, _)| locked.contains(*a))
        .filter_map(|(a, g)| Some((a.clone(), *theirs.get(a)?, *g)))
        .filter(|(_, s, t)| s != t)
        .collect();
    Promotion {
        placed,
        target_only,
        differing,
        after: Prepared {
            config: target.config.clone(),
            apps: target.apps.clone(),
            plan,
            finished_moves: Vec::new(),
            rollout: target.rollout,
        },
    }
}

/// The groups where the replanned target no longer keeps what it had: an app it had placed
/// in another group, or moving, or outgrowing its group.
fn crowded_groups(target: &Prepared, locked: &BTreeSet<String>, plan: &Plan) -> BTreeSet<u32> {
    let had = &target.plan.lock;
    let mut groups: BTreeSet<u32> = (had.apps.iter())
        .filter(|(a, _)| locked.contains(*a))
        .filter(|(a, g)| {
            plan.lock.apps.get(*a) != Some(*g) || plan.lock.moves.get(*a) != had.moves.get(*a)
        })
        .map(|(_, g)| *g)
        .collect();
    let outgrown = (plan.outgrown.iter()).filter(|o| locked.contains(&target.apps[o.app].name));
    groups.extend(outgrown.map(|o| o.from));
    groups
}

/// The target planned again with its new apps pinned to `pins` and the others placed as
/// any new app.
fn replan(target: &Prepared, locked: &BTreeSet<String>, pins: &BTreeMap<String, u32>) -> Plan {
    let mut lock = target.plan.lock.clone();
    // The new apps the target placed on its own are placed anew, after the pinned ones.
    lock.apps.retain(|a, _| locked.contains(a));
    lock.apps.extend(pins.iter().map(|(a, g)| (a.clone(), *g)));
    let positioned = lock.positioned();
    let mut diags = Diagnostics::new();
    let config = &target.config;
    let lock_file = std::path::Path::new("latgen.lock");
    let mut plan = crate::plan::plan_with(
        &target.apps,
        &positioned,
        lock_file,
        config,
        &NoPrevious,
        &mut diags,
    );
    crate::plan::services::assign(&mut plan, &target.apps, &positioned, config, &mut diags);
    plan.previews = target.plan.previews.clone();
    plan.lock.previews = target.plan.lock.previews.clone();
    plan
}
