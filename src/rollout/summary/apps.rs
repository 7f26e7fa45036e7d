//! What a change does to each app, read from the routing states before and after it: the
//! paths its Kong route matches, the header it dispatches on, and the Lattice rules that
//! appear or go in each Lattice service for it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::input::app::{App, MatchKind};
use latgen_sim::routing::{Hasher, KongRoute, LatticeRoute, LatticeRule, Network, PathRule};

/// What one change does to one app, besides adding, removing or moving it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct AppChange {
    /// Paths its Kong route matches after the change and not before, and the other way.
    pub paths_added: Vec<String>,
    pub paths_removed: Vec<String>,
    /// A dispatch switch: `Some(header)`, its Kong route now names the app in `header`
    /// for Lattice to match; `None`, it no longer does (Lattice matches paths again).
    pub dispatch: Option<Option<String>>,
    /// Lattice service → the app's rules that appear in it.
    pub rules_added: BTreeMap<String, Vec<String>>,
    /// Lattice service → the app's rules that go from it.
    pub rules_removed: BTreeMap<String, Vec<String>>,
}

impl AppChange {
    pub fn is_empty(&self) -> bool {
        *self == AppChange::default()
    }
}

/// The apps a change touches, by name (a rule whose backend is no app's, by its backend).
pub(crate) fn app_changes(
    before: &Network,
    after: &Network,
    apps: &[App],
) -> BTreeMap<String, AppChange> {
    let mut out: BTreeMap<String, AppChange> = BTreeMap::new();
    kong_changes(before, after, &mut out);
    let delta = rule_delta(before, after);
    if delta.is_empty() {
        return out;
    }
    let owners: HashMap<String, &str, Hasher> = apps
        .iter()
        .map(|a| {
            let backend = format!("{}/{}:{}", a.namespace, a.service, a.port);
            (backend, a.name.as_str())
        })
        .collect();
    let owner = |backend: &str| owners.get(backend).map_or(backend, |a| a).to_string();
    for ((service, backend, rule), delta) in delta {
        let change = out.entry(owner(&backend)).or_default();
        let side = if delta > 0 {
            &mut change.rules_added
        } else {
            &mut change.rules_removed
        };
        let rules = side.entry(service).or_default();
        rules.extend(std::iter::repeat_n(rule, delta.unsigned_abs() as usize));
    }
    out.retain(|_, c| !c.is_empty());
    out
}

/// Paths and dispatch of the apps whose Kong route is in both states.
fn kong_changes(before: &Network, after: &Network, out: &mut BTreeMap<String, AppChange>) {
    let (was, is) = (kong_by_app(before), kong_by_app(after));
    for (app, new) in &is {
        let Some(old) = was.get(app) else {
            continue;
        };
        // The same route in both states (their documents are shared) changes nothing.
        if std::ptr::eq(*old, *new) {
            continue;
        }
        let paths = |r: &KongRoute| -> std::collections::BTreeSet<String> {
            r.matches.iter().map(describe_path).collect()
        };
        let (p0, p1) = (paths(old), paths(new));
        let (h0, h1) = (dispatch_header(old, app), dispatch_header(new, app));
        let change = AppChange {
            paths_added: p1.difference(&p0).cloned().collect(),
            paths_removed: p0.difference(&p1).cloned().collect(),
            dispatch: (h0 != h1).then_some(h1),
            ..AppChange::default()
        };
        if !change.is_empty() {
            out.insert(app.to_string(), change);
        }
    }
}

/// Each app's Kong route.
fn kong_by_app(net: &Network) -> BTreeMap<&str, &KongRoute> {
    // A preview's route is not its app's.
    (net.kong.iter())
        .filter(|r| r.preview.is_none())
        .map(|r| (r.app_name(), &**r))
        .collect()
}

/// The header a Kong route sets to its app's name: what Lattice matches under header
/// dispatch.
fn dispatch_header(r: &KongRoute, app: &str) -> Option<String> {
    (r.header_changes.set.iter())
        .find(|(_, v)| v.eq_ignore_ascii_case(app))
        .map(|(name, _)| name.to_ascii_lowercase())
}

/// (Lattice service, backend, rule) → how many more the state after has than the one
/// before (negative: fewer).
fn rule_delta(before: &Network, after: &Network) -> BTreeMap<(String, String, String), i64> {
    let mut delta: BTreeMap<(String, String, String), i64> = BTreeMap::new();
    for (routes, sign) in [(not_in(before, after), -1), (not_in(after, before), 1)] {
        for route in routes {
            for rule in &route.rules {
                let backend = rule.backend.as_ref().map(|b| b.to_string());
                let key = (
                    route.name.clone(),
                    backend.unwrap_or_default(),
                    describe(rule),
                );
                *delta.entry(key).or_default() += sign;
            }
        }
    }
    delta.retain(|_, d| *d != 0);
    delta
}

/// The Lattice routes of `one` that `other` does not hold: the two states' documents are
/// shared, and the same route adds and takes away the same rules, so only the routes a
/// change made or dropped are described (a state has thousands).
fn not_in<'n>(one: &'n Network, other: &Network) -> Vec<&'n LatticeRoute> {
    let mut held: HashMap<*const LatticeRoute, usize, Hasher> = HashMap::default();
    for route in &other.lattice {
        *held.entry(Arc::as_ptr(route)).or_default() += 1;
    }
    (one.lattice.iter())
        .filter(|route| match held.get_mut(&Arc::as_ptr(route)) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .map(|route| &**route)
        .collect()
}

/// A rule as a person reads it: its paths, or the header values it matches.
pub(crate) fn describe(rule: &LatticeRule) -> String {
    let parts: Vec<String> = rule
        .matches
        .iter()
        .map(|m| match m.headers.as_slice() {
            [] => describe_path(m),
            headers => headers
                .iter()
                .map(|(name, value)| format!("{name}: {}", value.as_deref().unwrap_or("*")))
                .collect::<Vec<_>>()
                .join(", "),
        })
        .collect();
    parts.join(" or ")
}

fn describe_path(m: &PathRule) -> String {
    match m.kind {
        MatchKind::Prefix => m.path.clone(),
        MatchKind::Exact => format!("{} (exact)", m.path),
    }
}
