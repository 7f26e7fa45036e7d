//! Consolidating adopted apps (`latgen import`): every path-routed app that still has the
//! route it had before latgen is placed into the shared groups, as a new app would be, and
//! the lock records where. `render --base` then ships it like any change: the groups
//! first, then Kong's switch, then the old routes' removal, each step for all the apps at
//! once (each app's switch is safe on its own, so no step needs splitting).

use crate::diag::Diagnostics;
use crate::input::lock::LockState;
use crate::plan::prepared::Prepared;
use crate::plan::{NoPrevious, Plan};

/// What consolidating the adopted apps makes of the project.
#[derive(Debug)]
pub(crate) struct Consolidation {
    /// The adopted apps that move into groups.
    pub apps: Vec<String>,
    /// Lattice services before and after.
    pub services_before: usize,
    pub services_after: usize,
    /// The consolidated project (apps no longer adopted, the plan placing them).
    pub after: Prepared,
}

impl Consolidation {
    /// The lock that records it.
    pub fn lock(&self) -> &LockState {
        &self.after.plan.lock
    }
}

/// The consolidation of `prepared`'s adopted apps that groups take (path-routed ones, and
/// under header dispatch every one); None when there are none. Under path dispatch an
/// adopted host-routed app keeps its route: its host is its service's domain.
pub(crate) fn consolidation(prepared: &Prepared) -> Option<Consolidation> {
    let config = &prepared.config;
    let movable = |a: &crate::input::app::App| {
        a.adopted.is_some() && crate::plan::in_groups_once_placed(a, config)
    };
    let names: Vec<String> = (prepared.apps.iter().filter(|a| movable(a)))
        .map(|a| a.name.clone())
        .collect();
    if names.is_empty() {
        return None;
    }
    let mut apps = prepared.apps.clone();
    for a in apps.iter_mut().filter(|a| movable(a)) {
        a.adopted = None;
    }
    let mut lock = prepared.plan.lock.clone();
    lock.adopted.retain(|app, _| !names.contains(app));
    let positioned = lock.positioned();
    let mut diags = Diagnostics::new();
    let lock_file = std::path::Path::new("latgen.lock");
    let mut plan: Plan = crate::plan::plan_with(
        &apps,
        &positioned,
        lock_file,
        config,
        &NoPrevious,
        &mut diags,
    );
    crate::plan::services::assign(&mut plan, &apps, &positioned, config, &mut diags);
    plan.previews = prepared.plan.previews.clone();
    plan.lock.previews = prepared.plan.lock.previews.clone();
    Some(Consolidation {
        apps: names,
        services_before: prepared.plan.service_count(),
        services_after: plan.service_count(),
        after: Prepared {
            config: config.clone(),
            apps,
            plan,
            finished_moves: Vec::new(),
            rollout: prepared.rollout,
        },
    })
}
