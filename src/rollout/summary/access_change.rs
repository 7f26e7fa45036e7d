//! Who gained or lost access to which app (`auth.mode: iam`), read from the auth policies of
//! the two routing states: each allowing statement is a caller of the app whose requests
//! its resources (or its dispatch header) name. Only the policies whose files the change
//! touches are read: the others grant what they did.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;

use crate::input::app::{App, MatchKind};
use latgen_sim::iam::Grant;
use latgen_sim::routing::{Hasher, Network};

/// One app's callers that the change lets in, and those it no longer lets in.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct AccessChange {
    pub gained: Vec<String>,
    pub lost: Vec<String>,
}

/// What a change does to access: per app, and the policies (by Lattice route) it writes
/// for the first time, rewrites with other grants, or deletes.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Access {
    pub apps: BTreeMap<String, AccessChange>,
    pub policies_written: Vec<String>,
    pub policies_changed: Vec<String>,
    pub policies_deleted: Vec<String>,
}

impl Access {
    pub fn is_empty(&self) -> bool {
        *self == Access::default()
    }
}

/// What one routing state's policies grant: per route whose policy file the change
/// touches, its grants; and (app, caller) for every grant of every policy, since an app's
/// callers are those of every policy that names it (a move or a dispatch switch writes its
/// statements into a new policy before the old one lets go of them).
#[derive(Default)]
struct Granted {
    changed: BTreeMap<String, BTreeSet<Grant>>,
    callers: BTreeSet<(String, String)>,
}

/// Reads each policy of `net` once. A grant's app is one of its route's backends', told
/// apart by the grant's dispatch header or paths.
fn granted(net: &Network, changed: &BTreeSet<PathBuf>, owners: &Owners) -> Granted {
    let mut out = Granted::default();
    for route in &net.lattice {
        let Some(policy) = net.auth_policy(route) else {
            continue;
        };
        let mut candidates: Vec<&str> = (route.rules.iter())
            .filter_map(|r| r.backend.as_ref())
            .flat_map(|b| owners.of_backend(b))
            .collect();
        candidates.sort_unstable();
        candidates.dedup();
        let grants = policy.grants();
        for grant in &grants {
            (out.callers).insert((owners.app(grant, &candidates), grant.who.clone()));
        }
        if changed.contains(&policy.file) {
            out.changed
                .insert(route.name.clone(), grants.into_iter().collect());
        }
    }
    out
}

/// Whether the change touches a policy file of either state: without one, access is as
/// it was, and no policy is read.
fn touches_a_policy(nets: [&Network; 2], changed: &BTreeSet<PathBuf>) -> bool {
    nets.iter().any(|net| {
        (net.lattice.iter()).any(|r| {
            net.auth_policy(r)
                .is_some_and(|p| changed.contains(&p.file))
        })
    })
}

/// The access change from `before` to `after`, whose changed files are `changed`.
pub(crate) fn access_change(
    before: &Network,
    after: &Network,
    changed: &BTreeSet<PathBuf>,
    apps: &[App],
) -> Access {
    if !touches_a_policy([before, after], changed) {
        return Access::default();
    }
    let owners = Owners::of(apps);
    let (was, is) = rayon::join(
        || granted(before, changed, &owners),
        || granted(after, changed, &owners),
    );
    let mut per_app: BTreeMap<String, AccessChange> = BTreeMap::new();
    for (app, who) in is.callers.difference(&was.callers) {
        let change = per_app.entry(app.clone()).or_default();
        change.gained.push(who.clone());
    }
    for (app, who) in was.callers.difference(&is.callers) {
        let change = per_app.entry(app.clone()).or_default();
        change.lost.push(who.clone());
    }
    let (was, is) = (was.changed, is.changed);
    let stays: BTreeSet<&str> = after.lattice.iter().map(|r| r.name.as_str()).collect();
    let names = |m: &BTreeMap<String, BTreeSet<Grant>>,
                 keep: &dyn Fn(&String, &BTreeSet<Grant>) -> bool| {
        (m.iter().filter(|(k, v)| keep(k, v)))
            .map(|(k, _)| k.clone())
            .collect()
    };
    Access {
        apps: per_app,
        policies_written: names(&is, &|k, _| !was.contains_key(k)),
        policies_changed: names(&is, &|k, v| was.get(k).is_some_and(|old| old != v)),
        policies_deleted: (was.keys())
            .filter(|k| !is.contains_key(*k))
            .map(|k| {
                if stays.contains(k.as_str()) {
                    format!("{k} (its Lattice service stays, open to every caller)")
                } else {
                    k.clone()
                }
            })
            .collect(),
    }
}

/// Which app a grant's requests are: one of its route's backends' apps, by the grant's
/// dispatch header, else by its paths.
struct Owners<'a> {
    /// `namespace/service:port` → the apps with that backend.
    by_backend: HashMap<String, Vec<&'a App>, Hasher>,
    by_name: HashMap<&'a str, &'a App, Hasher>,
}

impl<'a> Owners<'a> {
    fn of(apps: &'a [App]) -> Owners<'a> {
        let mut by_backend: HashMap<String, Vec<&'a App>, Hasher> = HashMap::default();
        for app in apps {
            let key = format!("{}/{}:{}", app.namespace, app.service, app.port);
            by_backend.entry(key).or_default().push(app);
        }
        let by_name = apps.iter().map(|a| (a.name.as_str(), a)).collect();
        Owners {
            by_backend,
            by_name,
        }
    }

    fn of_backend(&self, b: &latgen_sim::routing::BackendRef) -> Vec<&'a str> {
        let key = format!("{}/{}:{}", b.namespace, b.name, b.port.unwrap_or_default());
        (self.by_backend.get(&key).into_iter().flatten())
            .map(|a| a.name.as_str())
            .collect()
    }

    /// The app among `candidates` (names) the grant is for; the paths themselves when none
    /// is (an app the change removes).
    fn app(&self, g: &Grant, candidates: &[&str]) -> String {
        let apps = || {
            candidates
                .iter()
                .filter_map(|n| self.by_name.get(n).copied())
        };
        if let Some((_, value)) = &g.header {
            return (apps().find(|a| a.name.eq_ignore_ascii_case(value)))
                .map_or_else(|| value.clone(), |a| a.name.clone());
        }
        let names_path = |a: &App| {
            a.paths.iter().any(|p| {
                let resource = match p.kind {
                    MatchKind::Exact => p.value.clone(),
                    MatchKind::Prefix => format!("{}/*", p.value.trim_end_matches('/')),
                };
                g.paths.contains(&resource)
            })
        };
        match (apps().find(|a| names_path(a)), candidates) {
            (Some(a), _) => a.name.clone(),
            (None, [only]) => only.to_string(),
            (None, _) => g.paths.join(" "),
        }
    }
}
