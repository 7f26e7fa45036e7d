//! The oracle of the auth tests: from the declarations alone, who may call each app, and a
//! check that the auth policies of a tree let in exactly those callers on every request a
//! Lattice route serves, at the app the route sends it to.

use std::collections::BTreeSet;

use latgen::input::app::{App, MatchKind};
use latgen::input::auth::Caller;
use latgen::input::config::Config;
use latgen_sim::iam::{Call, Identity, probe_headers, request_resource};
use latgen_sim::platform::segment_prefix_matches;
use latgen_sim::routing::{Headers, LatticeRoute, Network};

/// The callers an app declares, with those every app has (Kong's, `auth.callers`).
pub fn declared<'a>(app: &'a App, config: &'a Config) -> Vec<&'a Caller> {
    let auth = &config.auth;
    auth.kong
        .iter()
        .chain(&auth.callers)
        .chain(&app.callers)
        .collect()
}

/// Every identity a declaration names, its near misses, and a stranger's.
pub fn identities(apps: &[App], config: &Config) -> BTreeSet<Identity> {
    let mut out = BTreeSet::from([Identity::stranger()]);
    let auth = &config.auth;
    for c in auth
        .kong
        .iter()
        .chain(&auth.callers)
        .chain(apps.iter().flat_map(|a| &a.callers))
    {
        out.extend(Identity::of_caller(c));
    }
    out
}

/// The requests worth asking a route about: each match, one segment under it, and one
/// that shares its string prefix; with its header when it has one.
fn requests(route: &LatticeRoute) -> Vec<(String, Headers)> {
    let mut out = Vec::new();
    for m in route.rules.iter().flat_map(|r| &r.matches) {
        let header = m
            .headers
            .first()
            .and_then(|(n, v)| Some((n.as_str(), v.as_deref()?)));
        let stem = m.path.trim_end_matches('/');
        let mut paths = vec![m.path.clone(), format!("{stem}/x"), format!("{stem}x")];
        if m.kind == MatchKind::Prefix {
            paths.push(format!("{stem}/x/y"));
        }
        for p in paths {
            out.push((p, probe_headers(header)));
        }
    }
    out
}

/// The app the route sends a request to: the first rule that matches, told by its backend
/// (and its match, for apps that share a Service).
fn reached<'a>(
    route: &LatticeRoute,
    path: &str,
    headers: &Headers,
    apps: &'a [App],
) -> Option<&'a App> {
    let rule = route
        .rules
        .iter()
        .find(|r| r.matches.iter().any(|m| m.lattice_match(path, headers)))?;
    let b = rule.backend.as_ref()?;
    let owners: Vec<&App> = apps.iter().filter(|a| a.is_backend(b)).collect();
    owners
        .iter()
        .copied()
        .find(|a| rule.matches.iter().any(|m| a.writes(m)))
        .or(owners.first().copied())
}

/// Whether `who` may send `path` (with `headers`) to `app` by the declarations: the path
/// is the app's as Gateway API reads its matches (segment by segment), or any path with its
/// dispatch header (Lattice's string prefixes reach the app with more, which no caller is
/// let in on), and a caller of the app names `who`.
fn may(app: &App, config: &Config, who: &Identity, path: &str, headers: &Headers) -> bool {
    let owned = !headers.is_empty()
        || app.paths.iter().any(|p| match p.kind {
            MatchKind::Exact => p.value == path,
            MatchKind::Prefix => segment_prefix_matches(&p.value, path),
        });
    owned && declared(app, config).iter().any(|c| who.declared_by(c))
}

/// Every request of every Lattice route in `net`, from every identity: let in exactly when
/// the app it reaches declares the caller. The number of requests asked, or the first that
/// is let in or kept out wrongly.
pub fn holes(apps: &[App], config: &Config, net: &Network) -> Result<usize, String> {
    holes_between(&[apps], config, net)
}

/// [`holes`] for a state between versions of the declarations (a rollout's base and
/// target): each request is let in as one of them says (never where all keep it out, never
/// kept out where all let it in).
pub fn holes_between(versions: &[&[App]], config: &Config, net: &Network) -> Result<usize, String> {
    let region = config.auth.region.as_deref().unwrap();
    let account = config.auth.account.as_deref().unwrap();
    let all: Vec<App> = versions.iter().flat_map(|v| v.iter().cloned()).collect();
    let ids = identities(&all, config);
    let mut asked = 0;
    for route in &net.lattice {
        let policy = net.auth_policy(route);
        for (path, headers) in requests(route) {
            let reached: Vec<Option<&App>> = versions
                .iter()
                .map(|v| reached(route, &path, &headers, v))
                .collect();
            if reached.iter().all(Option::is_none) {
                continue;
            }
            let resource = request_resource(region, account, &path);
            for who in &ids {
                let say: Vec<bool> = (reached.iter())
                    .map(|a| a.is_some_and(|a| may(a, config, who, &path, &headers)))
                    .collect();
                let call = Call {
                    who,
                    resource: &resource,
                    headers: &headers,
                };
                let allowed = policy.is_none_or(|p| p.decide(&call).allows());
                if !say.contains(&allowed) {
                    let app = reached
                        .iter()
                        .flatten()
                        .next()
                        .map_or("", |a| a.name.as_str());
                    return Err(format!(
                        "{}/{} {path} {headers:?}: {} is {} at app `{app}`, which the declarations {}",
                        route.namespace,
                        route.name,
                        who.show(),
                        if allowed { "let in" } else { "kept out" },
                        if allowed {
                            "never let in"
                        } else {
                            "always let in"
                        },
                    ));
                }
                asked += 1;
            }
        }
    }
    Ok(asked)
}
