//! Auth across a rollout (`auth.mode: iam`). A state of a change is safe for auth when
//! every probe — Kong's requests, and each caller's requests straight to a Lattice service
//! the change touches — is let in where it was let in before the change or is after it, and
//! kept out where it was kept out before or is after: never let in where both keep it out
//! (an open window: a route whose policy is gone, or not there yet, lets everyone in), never
//! kept out where both let it in.

use std::collections::BTreeSet;
use std::path::PathBuf;

use latgen_sim::iam::{AuthProbe, Identity, probe_headers};
use latgen_sim::routing::{Headers, LatticeRoute, Network};

/// A request straight to a Lattice service: its domain, path and headers, and who sends it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Direct {
    domain: String,
    path: String,
    headers: Headers,
    who: Identity,
}

/// Whether each auth probe of a change is let in before and after it.
#[derive(Debug)]
pub(crate) struct AuthExpect {
    probe: AuthProbe,
    kong: Vec<((String, String), bool, bool)>,
    direct: Vec<(Direct, bool, bool)>,
}

/// A probe a state lets in or keeps out against both ends of the change.
pub(crate) struct Violation {
    /// The request, as a finding says it.
    pub request: String,
    pub now: bool,
    pub before: bool,
    pub after: bool,
}

fn verdict(allowed: bool) -> &'static str {
    if allowed { "let in" } else { "kept out" }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} is {} (before: {}; after: {})",
            self.request,
            verdict(self.now),
            verdict(self.before),
            verdict(self.after)
        )
    }
}

/// The Lattice routes of `net` in `files`.
fn routes_in<'n>(
    net: &'n Network,
    files: &BTreeSet<PathBuf>,
) -> impl Iterator<Item = &'n LatticeRoute> {
    net.lattice
        .iter()
        .filter(|r| files.contains(&r.file))
        .map(|r| &**r)
}

impl AuthExpect {
    /// The expectations of a change from `b` to `r` whose Kong requests `kong` and whose
    /// files in scope are `files`.
    pub fn of(
        probe: &AuthProbe,
        kong: &[(String, String)],
        files: &BTreeSet<PathBuf>,
        (b, r): (&Network, &Network),
    ) -> AuthExpect {
        let kong = kong
            .iter()
            .map(|(h, p)| {
                (
                    (h.clone(), p.clone()),
                    b.kong_access(h, p, probe),
                    r.kong_access(h, p, probe),
                )
            })
            .collect();
        let mut ids: BTreeSet<Identity> =
            BTreeSet::from([Identity::stranger(), probe.kong.clone()]);
        let mut requests: BTreeSet<(String, String, Headers)> = BTreeSet::new();
        for net in [b, r] {
            for route in routes_in(net, files) {
                if let Some(policy) = net.auth_policy(route) {
                    ids.extend(policy.identities());
                }
                let Some(domain) = route.domain() else {
                    continue;
                };
                for m in route.rules.iter().flat_map(|r| &r.matches) {
                    let header = m
                        .headers
                        .first()
                        .and_then(|(n, v)| Some((n.as_str(), v.as_deref()?)));
                    for path in latgen_sim::iam::probe_paths(m.kind, &m.path) {
                        requests.insert((domain.to_string(), path, probe_headers(header)));
                    }
                }
            }
        }
        let direct = requests
            .into_iter()
            .flat_map(|(domain, path, headers)| {
                ids.iter().map(move |who| Direct {
                    domain: domain.clone(),
                    path: path.clone(),
                    headers: headers.clone(),
                    who: who.clone(),
                })
            })
            .map(|d| {
                let at = |net: &Network| {
                    net.direct_access((&d.domain, &d.path, &d.headers), &d.who, probe)
                };
                let (before, after) = (at(b), at(r));
                (d, before, after)
            })
            .collect();
        AuthExpect {
            probe: probe.clone(),
            kong,
            direct,
        }
    }

    /// The first probe `net` lets in or keeps out against both ends of the change.
    pub fn violation(&self, net: &Network) -> Option<Violation> {
        let bad = |now: bool, before: bool, after: bool| now != before && now != after;
        for ((h, p), before, after) in &self.kong {
            let now = net.kong_access(h, p, &self.probe);
            if bad(now, *before, *after) {
                let request = format!(
                    "Kong's request for {}",
                    latgen_sim::routing::show_request(h, p)
                );
                return Some(Violation {
                    request,
                    now,
                    before: *before,
                    after: *after,
                });
            }
        }
        for (d, before, after) in &self.direct {
            let now = net.direct_access((&d.domain, &d.path, &d.headers), &d.who, &self.probe);
            if bad(now, *before, *after) {
                let request = format!("a request of {} to {}{}", d.who.show(), d.domain, d.path);
                return Some(Violation {
                    request,
                    now,
                    before: *before,
                    after: *after,
                });
            }
        }
        None
    }
}
