//! The addresses a rollout keeps for direct callers. An app that declares callers of its own
//! is called straight at its Lattice service's domain; a move of it (or a switch of
//! dispatch mode) ends with a step that takes its rules off that service, and nothing in
//! the manifests tells those callers where it went. So `render --base` keeps each such
//! address working, rules and auth policy alike, until the user lets it go
//! (`--release-old-address APP`): the judge counts a state that breaks one as unsafe, and
//! a rollout whose only steps left break one is held, not stuck.

use std::collections::{BTreeMap, BTreeSet};

use crate::input::app::App;
use crate::rollout::addresses::is_apps;
use latgen_sim::iam::{AuthProbe, Identity, probe_headers, probe_paths};
use latgen_sim::routing::{BackendRef, Headers, LatticeRule, Network};

/// The apps whose addresses a rollout keeps: those with callers of their own that the user
/// has not released.
#[derive(Debug, Clone, Default)]
pub(crate) struct KeptApps {
    /// The kept apps' names.
    kept: BTreeSet<String>,
    /// The kept apps and those that share a Service with one of them (their paths tell
    /// whose a rule is).
    apps: Vec<App>,
}

impl KeptApps {
    /// The apps of `apps` with callers of their own, but those named in `released`.
    pub fn of(apps: &[App], released: &[String]) -> KeptApps {
        let kept: Vec<&App> = (apps.iter())
            .filter(|a| !a.callers.is_empty() && !released.contains(&a.name))
            .collect();
        let apps = (apps.iter())
            .filter(|a| {
                kept.iter()
                    .any(|k| k.service == a.service && k.namespace == a.namespace)
            })
            .cloned()
            .collect();
        KeptApps {
            kept: kept.iter().map(|a| a.name.clone()).collect(),
            apps,
        }
    }

    pub fn names(&self) -> &BTreeSet<String> {
        &self.kept
    }

    /// What a state between `before` and `after` must still do for the kept apps: every
    /// request that reaches a kept app (letting its callers in, with auth on: `probe`) at a
    /// domain where `before` has its rules and `after` none still does.
    pub fn requests(&self, before: &Network, after: &Network, probe: Option<&AuthProbe>) -> Kept {
        let mut kept = Kept {
            requests: Vec::new(),
            probe: probe.cloned(),
        };
        if self.kept.is_empty() {
            return kept;
        }
        // The apps on each Service: a rule's backend finds the few that may own it.
        let mut on: BTreeMap<BackendRef, Vec<App>> = BTreeMap::new();
        for a in &self.apps {
            let b = a.backend();
            let key = BackendRef {
                namespace: b.namespace,
                name: b.service,
                port: Some(i32::from(b.port)),
            };
            on.entry(key).or_default().push(a.clone());
        }
        let owner = |rule: &LatticeRule| -> Option<&App> {
            let apps = on.get(rule.backend.as_ref()?)?;
            (apps.iter()).find(|a| self.kept.contains(&a.name) && is_apps(rule, a, apps))
        };
        let stays = |domain: &str, app: &App| {
            (after.lattice_service(domain)).is_some_and(|r| {
                r.rules
                    .iter()
                    .any(|rule| owner(rule).is_some_and(|o| o.name == app.name))
            })
        };
        for route in &before.lattice {
            let Some(domain) = route.domain() else {
                continue;
            };
            for rule in &route.rules {
                let (Some(app), Some(backend)) = (owner(rule), &rule.backend) else {
                    continue;
                };
                if stays(domain, app) {
                    continue;
                }
                // Each caller as it declares itself (its near misses are for keeping out).
                let who: Vec<Identity> = (app.callers.iter())
                    .filter_map(|c| Identity::of_caller(c).into_iter().next())
                    .collect();
                for m in &rule.matches {
                    let header =
                        (m.headers.first()).and_then(|(n, v)| Some((n.as_str(), v.as_deref()?)));
                    for path in probe_paths(m.kind, &m.path) {
                        let k = KeptRequest {
                            domain: domain.to_string(),
                            path,
                            headers: probe_headers(header),
                            backend: backend.clone(),
                            who: who.clone(),
                        };
                        // Only what works before the change is kept working.
                        if kept.holds(&k, before) {
                            kept.requests.push(k);
                        }
                    }
                }
            }
        }
        kept
    }
}

/// A request to an address a rollout keeps: it must reach `backend`, and let `who` in.
#[derive(Debug)]
struct KeptRequest {
    domain: String,
    path: String,
    headers: Headers,
    backend: BackendRef,
    who: Vec<Identity>,
}

/// The requests to the addresses a rollout keeps, for a judge of one step.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    requests: Vec<KeptRequest>,
    probe: Option<AuthProbe>,
}

impl Kept {
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// Whether `net` still takes every kept request to its app, letting its callers in.
    pub fn held_in(&self, net: &Network) -> bool {
        self.requests.iter().all(|k| self.holds(k, net))
    }

    /// Whether `net` takes request `k` to its app, letting its callers in.
    fn holds(&self, k: &KeptRequest, net: &Network) -> bool {
        let reached = (net.lattice_service(&k.domain))
            .and_then(|s| {
                (s.rules.iter()).find(|r| {
                    r.matches
                        .iter()
                        .any(|m| m.lattice_match(&k.path, &k.headers))
                })
            })
            .is_some_and(|r| r.backend.as_ref() == Some(&k.backend));
        let at = (k.domain.as_str(), k.path.as_str(), &k.headers);
        reached
            && (self.probe.as_ref())
                .is_none_or(|p| k.who.iter().all(|w| net.direct_access(at, w, p)))
    }
}
