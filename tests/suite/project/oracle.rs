//! The oracle of the routing tests: which app Gateway API semantics name for a request,
//! from the declarations alone, and the requests worth asking about.

use latgen::input::app::{App, MatchKind};
use latgen::input::config::Config;
use latgen_sim::platform::segment_prefix_matches;
use latgen_sim::routing::{BackendRef, Headers, Network, Outcome};

/// The app Gateway API semantics choose for a request, from the declarations alone:
/// host-specific routes before hostless ones, then Exact, then the longest prefix. An
/// app's route answers on its own host (or the project's hostnames) and on its
/// `kong.hosts`.
pub fn expected<'a>(
    apps: &'a [App],
    kong_hostnames: &[String],
    host: &str,
    path: &str,
) -> Option<&'a App> {
    apps.iter()
        .filter_map(|a| {
            let host_rank = match &a.host {
                _ if a.kong.hosts.iter().any(|h| h == host) => host.len(),
                Some(h) if h == host => h.len(),
                Some(_) => return None,
                None if kong_hostnames.is_empty() => 0,
                None if kong_hostnames.iter().any(|h| h == host) => host.len(),
                None => return None,
            };
            let best = a
                .paths
                .iter()
                .filter(|p| match p.kind {
                    MatchKind::Exact => p.value == path,
                    MatchKind::Prefix => segment_prefix_matches(&p.value, path),
                })
                .map(|p| (p.kind == MatchKind::Exact, p.value.len()))
                .max()?;
            Some(((host_rank, best), a))
        })
        .max_by_key(|(k, _)| *k)
        .map(|(_, a)| a)
}

pub fn probes(apps: &[App]) -> Vec<String> {
    let mut out: Vec<String> = [
        "/",
        "/sh",
        "/shx",
        "/sh/x",
        "/shop",
        "/shopx",
        "/shop/",
        "/shop/cart",
        "/shop/cartx",
        "/shop/cart/items",
        "/shopping",
        "/shopping/list",
        "/shop-admin",
        "/shop-admin/x",
        "/api",
        "/apix",
        "/api/v2",
        "/api/v2x",
        "/api/v2/x",
        "/api/v22",
        "/api/v22/x",
        "/api/v2/health",
        "/api/v2/healthz",
        "/healthz",
        "/healthz/x",
        "/unknown",
        "/help/faqx",
        "/account/securityx",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for a in apps {
        for p in &a.paths {
            let v = p.value.trim_end_matches('/');
            for probe in [
                p.value.clone(),
                format!("{v}/"),
                format!("{v}/x"),
                format!("{v}x"),
                format!("{v}-x"),
                format!("{v}.x"),
            ] {
                out.push(probe);
            }
            let mut cut = v.len();
            while let Some(i) = v[..cut].rfind('/') {
                out.push(if i == 0 {
                    "/".into()
                } else {
                    v[..i].to_string()
                });
                cut = i;
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Follows every probe, on every host the project knows and once with each of `forged`
/// (headers the client adds), through `net`, and compares where it lands with the app
/// Gateway API semantics name (or Kong's 404 when none does). The number of requests
/// followed, or the first one that went astray.
pub fn misroutes(
    apps: &[App],
    config: &Config,
    net: &Network,
    forged: &[Headers],
) -> Result<usize, String> {
    let mut hosts: Vec<String> = vec!["public.example.org".into()];
    hosts.extend(config.kong.hostnames.iter().cloned());
    hosts.extend(apps.iter().filter_map(|a| a.host.clone()));
    hosts.extend(apps.iter().flat_map(|a| a.kong.hosts.iter().cloned()));
    let mut checked = 0;
    for host in &hosts {
        for path in probes(apps) {
            for client in forged {
                let want = expected(apps, &config.kong.hostnames, host, &path);
                let got = net.route_with(host, &path, client);
                let right = match want {
                    Some(app) => {
                        got.backend()
                            == Some(&BackendRef {
                                namespace: app.namespace.clone(),
                                name: app.service.clone(),
                                port: Some(i32::from(app.port)),
                            })
                    }
                    None => got == Outcome::NoKongRoute,
                };
                if !right {
                    let named = want.map_or("no app".to_string(), |a| format!("app `{}`", a.name));
                    return Err(format!(
                        "{host}{path} {client:?}: Gateway API names {named}, the manifests give {got:?}"
                    ));
                }
                checked += 1;
            }
        }
    }
    Ok(checked)
}
