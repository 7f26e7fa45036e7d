//! A route's rules: one per path of an app, or one per app in a group that dispatches on
//! the header Kong sets, in the order Lattice evaluates them; and which apps share groups.

use crate::input::app::{App, AppId, MatchKind};
use crate::input::config::Config;

/// A Lattice rule: a path match, and the app it sends requests to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rule {
    pub kind: MatchKind,
    pub path: String,
    /// The owning app.
    pub app: AppId,
}

/// Lattice evaluation order: longer paths first; on equal length Exact before PathPrefix;
/// then lexicographic, so the order never depends on input order.
pub(crate) fn sort_rules(rules: &mut [Rule]) {
    rules.sort_by(|a, b| {
        b.path
            .len()
            .cmp(&a.path.len())
            .then(a.kind.cmp(&b.kind))
            .then_with(|| a.path.cmp(&b.path))
            .then(a.app.cmp(&b.app))
    });
}

/// Rules app `app` takes in a shared group: one per path, or one in all when the group
/// dispatches on the header Kong sets.
pub(crate) fn rules_needed(app: &App, config: &Config) -> u32 {
    if config.header_dispatch() {
        1
    } else {
        app.rule_count()
    }
}

/// Whether app `app` goes into a shared group: path-routed apps do, and under header
/// dispatch host-routed apps too (a route's hostnames no longer matter to Lattice).
pub(crate) fn in_groups(app: &App, config: &Config) -> bool {
    // An adopted app keeps its own route until it is consolidated.
    app.adopted.is_none() && in_groups_once_placed(app, config)
}

/// Whether app `app` is in a group once it runs on no route of its own (an adopted one).
pub(crate) fn in_groups_once_placed(app: &App, config: &Config) -> bool {
    app.is_path_routed() || config.header_dispatch()
}

/// The header rule of app `id` in a group under header dispatch: it matches the header
/// Kong sets to the app's name, on every path (`PathPrefix /`, as the CRD defaults it).
pub(super) fn header_rule(id: AppId) -> Rule {
    Rule {
        kind: MatchKind::Prefix,
        path: "/".into(),
        app: id,
    }
}

/// The rules of app `id`, one per path, in declaration order.
pub(super) fn rules_of(apps: &[App], id: AppId) -> impl Iterator<Item = Rule> + '_ {
    apps[id].paths.iter().map(move |p| Rule {
        kind: p.kind,
        path: p.value.clone(),
        app: id,
    })
}

/// The rules of one app, in evaluation order.
pub(crate) fn app_rules(apps: &[App], id: AppId) -> Vec<Rule> {
    let mut rules: Vec<Rule> = rules_of(apps, id).collect();
    sort_rules(&mut rules);
    rules
}
