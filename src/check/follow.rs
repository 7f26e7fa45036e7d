//! `latgen trace`: the path one request takes through the manifests in the output folder —
//! the Kong route that wins and why, the bridge Service, the rewritten Host, the Lattice
//! service and the rule that matches, and the backend. It reads the manifests as they are
//! (hand edits included) through the same model as `check`, so it explains `check`'s
//! routing findings one request at a time. What a trace says, for people or as JSON, is
//! in `trace_output.rs`.

use std::path::Path;

use super::trace_auth::{AuthCheck, Callers};
use crate::diag::Diagnostic;
use crate::diag::codes::Code;
use crate::input::app::MatchKind;
use crate::manifest::layout::is_kong_file;
use crate::rollout::addresses::{Address, of_backend};
use latgen_sim::platform::{segment_prefix_matches, string_prefix_matches};
use latgen_sim::routing::{
    Bridge, Headers, KongClaim, KongRoute, LatticeRoute, Network, Outcome, PathRule,
};

/// A request to follow. `host` is None for a bare path without `--host`: then only Kong
/// routes that take any host match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Request {
    pub host: Option<String>,
    pub path: String,
}

/// Reads `https://host[:port]/path[?query]`, or a bare `/path` with an optional host. The
/// query and fragment are dropped (neither Kong nor Lattice matches on them here), as is
/// the port (Host matching ignores it); hosts compare in lower case.
pub(crate) fn parse_request(url: &str, host: Option<&str>) -> Result<Request, String> {
    let lower = url.to_ascii_lowercase();
    let (url_host, rest) = if lower.starts_with("http://") || lower.starts_with("https://") {
        let after = &url[url.find("://").map_or(0, |i| i + 3)..];
        let end = after.find(['/', '?', '#']).unwrap_or(after.len());
        let authority = &after[..end];
        let host = bare_host(authority.rsplit('@').next().unwrap_or(authority));
        if host.is_empty() {
            return Err(format!("`{url}` has no host"));
        }
        (Some(host), &after[end..])
    } else if url.contains("://") {
        return Err(format!("`{url}`: only http and https URLs can be traced"));
    } else if url.starts_with('/') {
        (None, url)
    } else {
        return Err(format!(
            "`{url}` is neither a URL (https://www.example.com/shop) nor a path (/shop)"
        ));
    };
    let host = match (url_host, host) {
        (Some(_), Some(_)) => {
            return Err("give the host in the URL or with --host, not both".to_string());
        }
        (Some(h), None) => Some(h),
        (None, Some(h)) => Some(bare_host(h)).filter(|h| !h.is_empty()),
        (None, None) => None,
    };
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    let path = match &rest[..end] {
        "" => "/".to_string(),
        p => p.to_string(),
    };
    Ok(Request { host, path })
}

/// A host without its port, in lower case.
fn bare_host(authority: &str) -> String {
    let host = if authority.starts_with('[') {
        // An IPv6 literal keeps its colons.
        authority.find(']').map_or(authority, |i| &authority[..=i])
    } else {
        authority.split(':').next().unwrap_or(authority)
    };
    host.to_ascii_lowercase()
}

/// Reads every manifest under `out` into the routing model. Files are named as `out`
/// joined with their place under it, so places print the way the user gave the folder.
pub(crate) fn read_network(out: &Path) -> Result<Network, Diagnostic> {
    if !out.is_dir() {
        return Err(Diagnostic::error(
            Code::IoError,
            format!("{} is not a folder of manifests", out.display()),
        )
        .help("run `latgen render` first, or give the output folder with -o"));
    }
    let tree = crate::output::read_tree(out)?;
    let manifests = crate::output::manifests(&tree);
    let files: Vec<(std::path::PathBuf, &str, bool)> = manifests
        .iter()
        .map(|(rel, text)| (out.join(rel), &**text, is_kong_file(rel)))
        .collect();
    let (net, errors) = Network::from_files_par(&files);
    match errors.into_iter().next() {
        Some((_, e)) => Err(Diagnostic::error(Code::InvalidOutput, e)),
        None => Ok(net),
    }
}

/// One request followed through the network, with what explains each step.
#[derive(Debug)]
pub(crate) struct Trace<'a> {
    pub request: Request,
    /// Every Kong route that matches, the winner first.
    pub kong: Vec<KongClaim<'a>>,
    /// Kong prefixes on the request's host that the path starts with as a string but not
    /// segment by segment (`/shop/cart` for `/shop/cartx`): they do not match.
    pub near: Vec<(&'a KongRoute, &'a PathRule)>,
    pub bridge: Option<(String, &'a Bridge)>,
    /// The Host Lattice sees: the rewritten one, else the request's.
    pub lattice_host: Option<String>,
    /// The headers Kong sets on the way (header dispatch), as Lattice sees them.
    pub headers: Headers,
    pub lattice: Option<&'a LatticeRoute>,
    pub outcome: Outcome,
    /// Kong routes that would take the path on another host (a hint for a 404).
    pub other_hosts: Vec<(String, &'a str)>,
    /// The request went straight to a Lattice service's custom domain, not through Kong.
    pub direct: bool,
    /// Who the auth policy of the service reached is asked about (Kong, through Kong; the
    /// caller given, straight to a service's domain), and what it says.
    pub auth: Option<AuthCheck<'a>>,
    /// Where callers that skip Kong reach the backend the request reached: the Lattice
    /// service it reached it through, and any other that holds rules to it (a move in
    /// flight).
    pub address: Option<Address>,
    pub also_at: Vec<Address>,
}

impl Trace<'_> {
    pub fn reached(&self) -> bool {
        matches!(self.outcome, Outcome::Backend { .. })
    }

    /// Reached, and let in when the auth policy was asked.
    pub fn let_in(&self) -> bool {
        self.reached() && (self.auth.as_ref()).is_none_or(|a| a.verdict.lets_in())
    }
}

/// A request straight to a Lattice service's domain `host`: no Kong on the way.
fn trace_direct<'a>(mut t: Trace<'a>, service: &'a LatticeRoute) -> Trace<'a> {
    let path = t.request.path.clone();
    t.direct = true;
    t.lattice = Some(service);
    t.lattice_host = t.request.host.clone();
    let rule = (service.rules.iter().enumerate())
        .find(|(_, r)| r.matches.iter().any(|m| m.lattice_match(&path, &t.headers)));
    t.outcome = match rule {
        Some((i, r)) if r.backend.is_some() => Outcome::Backend {
            backend: r.backend.clone().expect("checked"),
            kong_route: String::new(),
            lattice_route: format!("{}/{}", service.namespace, service.name),
            rule: i,
        },
        _ => Outcome::NoLatticeRule {
            lattice_route: format!("{}/{}", service.namespace, service.name),
        },
    };
    t
}

/// Follows `request`, and asks the auth policy of the service it reaches about the caller
/// Lattice sees (see [`super::trace_auth`]).
pub(crate) fn trace<'a>(net: &'a Network, request: Request, callers: &Callers) -> Trace<'a> {
    let mut t = trace_request(net, request);
    if let Some(route) = t.lattice {
        let at = (t.request.path.as_str(), &t.headers);
        t.auth = super::trace_auth::check(net, (route, t.direct), at, callers);
    }
    find_addresses(net, &mut t);
    t
}

/// The addresses of the backend the request reached, for callers that skip Kong.
fn find_addresses(net: &Network, t: &mut Trace<'_>) {
    let (Some(backend), Some(route)) = (t.outcome.backend(), t.lattice) else {
        return;
    };
    t.address = of_backend(route, backend);
    t.also_at = (net.lattice.iter())
        .filter(|r| r.file != route.file)
        .filter_map(|r| of_backend(r, backend))
        .collect();
    t.also_at.sort();
}

fn trace_request<'a>(net: &'a Network, request: Request) -> Trace<'a> {
    let host = request.host.as_deref().unwrap_or("");
    let path = request.path.as_str();
    let kong = net.kong_candidates(host, path);
    let mut t = Trace {
        outcome: Outcome::NoKongRoute,
        near: near_misses(net, host, path),
        kong,
        bridge: None,
        lattice_host: None,
        headers: Headers::new(),
        lattice: None,
        other_hosts: Vec::new(),
        request: request.clone(),
        direct: false,
        auth: None,
        address: None,
        also_at: Vec::new(),
    };
    // A Lattice service's custom domain resolves to Lattice inside the service network:
    // such a request never passes Kong, unless a Kong route names the host (a dedicated
    // app's public host is also its service's domain).
    let named_by_kong = (net.kong.iter()).any(|r| r.hostnames.iter().any(|h| h == host));
    if !named_by_kong && let Some(service) = net.lattice_service(host) {
        t.kong.clear();
        t.near.clear();
        return trace_direct(t, service);
    }
    let Some(winner) = t.kong.first().map(|c| c.route) else {
        for r in &net.kong {
            for h in &r.hostnames {
                if h != host && r.claim(h, path).is_some() {
                    t.other_hosts
                        .push((format!("{}/{}", r.namespace, r.name), h));
                }
            }
        }
        t.other_hosts.sort();
        t.other_hosts.dedup();
        return t;
    };
    // The outcome comes from the model itself; the steps below only look up what it went
    // through, to show them.
    t.outcome = net.through(winner, host, path);
    t.headers = winner.header_changes.apply(&Headers::new());
    if let Some(b) = &winner.backend {
        t.bridge = net
            .bridge(&b.namespace, &b.name)
            .map(|bridge| (format!("{}/{}", b.namespace, b.name), &**bridge));
        let lattice_host = winner.rewrite_host.clone().unwrap_or(host.to_string());
        // Lattice sees the request only when the bridge and the Host agree.
        if matches!(
            t.outcome,
            Outcome::Backend { .. } | Outcome::NoLatticeRule { .. }
        ) {
            t.lattice = net.lattice_service(&lattice_host);
        }
        t.lattice_host = Some(lattice_host);
    }
    t
}

fn near_misses<'a>(net: &'a Network, host: &str, path: &str) -> Vec<(&'a KongRoute, &'a PathRule)> {
    net.kong
        .iter()
        .filter(|r| r.hostnames.is_empty() || r.hostnames.iter().any(|h| h == host))
        .flat_map(|r| r.matches.iter().map(move |m| (&**r, m)))
        .filter(|(_, m)| {
            m.kind == MatchKind::Prefix
                && string_prefix_matches(&m.path, path)
                && !segment_prefix_matches(&m.path, path)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(host: Option<&str>, path: &str) -> Request {
        Request {
            host: host.map(str::to_string),
            path: path.to_string(),
        }
    }

    #[test]
    fn urls_and_paths() {
        assert_eq!(
            parse_request("https://WWW.Example.com:8443/shop/cart?x=1#top", None),
            Ok(req(Some("www.example.com"), "/shop/cart"))
        );
        assert_eq!(
            parse_request("http://user@a.example.com", None),
            Ok(req(Some("a.example.com"), "/"))
        );
        assert_eq!(parse_request("/shop", None), Ok(req(None, "/shop")));
        assert_eq!(
            parse_request("/shop", Some("Shop.example.com:80")),
            Ok(req(Some("shop.example.com"), "/shop"))
        );
        assert!(parse_request("https://a.example.com/x", Some("b")).is_err());
        assert!(parse_request("ftp://a/x", None).is_err());
        assert!(parse_request("shop", None).is_err());
        assert!(parse_request("https:///x", None).is_err());
    }
}
