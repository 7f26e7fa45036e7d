//! `latgen trace`: the path one request takes through the manifests in the output folder —
//! the Kong route that wins and why, the bridge Service, the rewritten Host, the Lattice
//! service and the rule that matches, and the backend. It reads the manifests as they are
//! (hand edits included) through the same model as `check`, so it explains `check`'s
//! routing findings one request at a time.

use std::path::Path;

use serde_json::{Value, json};

use crate::diag::Diagnostic;
use crate::diag::codes::Code;
use crate::input::model::MatchKind;
use latgen_sim::iam::{AuthPolicy, Call, Decision, Identity};
use latgen_sim::platform::{segment_prefix_matches, string_prefix_matches};
use latgen_sim::routing::{
    BackendRef, Bridge, Headers, KongClaim, KongRank, KongRoute, LatticeRoute, Network, Outcome,
    PathRule,
};

use crate::manifest::layout::is_kong_file;

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
        .map(|(rel, text)| (out.join(rel), text.as_str(), is_kong_file(rel)))
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
    /// Who sends the request (`--as`, `--from-vpc`), and what the service's auth policy
    /// says: None when no policy guards the service (auth type NONE).
    pub auth: Option<(Identity, Option<(&'a AuthPolicy, Decision)>)>,
}

impl Trace<'_> {
    pub fn reached(&self) -> bool {
        matches!(self.outcome, Outcome::Backend { .. })
    }

    /// Reached, and let in when a caller was given.
    pub fn let_in(&self) -> bool {
        self.reached()
            && self
                .auth
                .as_ref()
                .is_none_or(|(_, verdict)| verdict.is_none_or(|(_, d)| d.allows()))
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

/// What the auth policy of the service the request reached says of `who`.
fn judge_auth<'a>(net: &'a Network, t: &mut Trace<'a>, who: Option<Identity>) {
    let Some(who) = who else { return };
    let verdict = t.lattice.and_then(|route| {
        let policy = net.auth_policy(route)?;
        let resource = policy.resource(&t.request.path);
        let call = Call {
            who: &who,
            resource: &resource,
            headers: &t.headers,
        };
        Some((policy, policy.decide(&call)))
    });
    t.auth = Some((who, verdict));
}

pub(crate) fn trace<'a>(net: &'a Network, request: Request, who: Option<Identity>) -> Trace<'a> {
    let mut t = trace_request(net, request);
    judge_auth(net, &mut t, who);
    t
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

fn kind_name(kind: MatchKind) -> &'static str {
    kind.gateway_api_type()
}

fn place(file: &Path, line: u32) -> String {
    if line > 0 {
        format!("{}:{line}", file.display())
    } else {
        file.display().to_string()
    }
}

/// Why `winner` beat `loser`, both matching the request.
fn lost_because(winner: &KongClaim<'_>, loser: &KongClaim<'_>) -> String {
    let (w, l): (KongRank, KongRank) = (winner.rank, loser.rank);
    if w.host != l.host {
        if l.host == 0 {
            "it takes any host, and a route naming the host wins".to_string()
        } else {
            "a less specific hostname".to_string()
        }
    } else if w.exact != l.exact {
        "a prefix, and an Exact match wins".to_string()
    } else if w.length != l.length {
        "a shorter prefix".to_string()
    } else {
        format!(
            "as specific; {}/{} comes first by namespace/name",
            winner.route.namespace, winner.route.name
        )
    }
}

/// What decided for the winner, against the runner-up.
fn won_because(t: &Trace<'_>) -> String {
    let win = &t.kong[0];
    let Some(next) = t.kong.get(1) else {
        return "no other route matches".to_string();
    };
    let (w, n) = (win.rank, next.rank);
    if w.host != n.host {
        if n.host == 0 {
            "a route naming the request's host wins over routes for any host".to_string()
        } else {
            "the most specific hostname wins".to_string()
        }
    } else if w.exact != n.exact {
        "an Exact match wins over prefixes".to_string()
    } else if w.length != n.length {
        "the longest matching prefix wins".to_string()
    } else {
        "as specific as the next route, and first by namespace/name".to_string()
    }
}

fn host_clause(route: &KongRoute, host: Option<&str>) -> String {
    if route.hostnames.is_empty() {
        "on any host (the route names no hostname)".to_string()
    } else {
        format!("on hostname {}", host.unwrap_or_default())
    }
}

/// A later rule that matches too: its number, its match, and whether it sends requests to
/// another backend than the rule that matched.
type RuleMatch<'a> = (usize, &'a PathRule, bool);

/// The rule that matched (1-based) and its path, and the later rules that match too (they
/// never see the request while the rules keep this order: Lattice takes the first match).
fn lattice_rule<'a>(
    route: &'a LatticeRoute,
    path: &str,
    headers: &Headers,
) -> Option<(usize, &'a PathRule, Vec<RuleMatch<'a>>)> {
    let mut matching = route.rules.iter().enumerate().filter_map(|(i, r)| {
        let m = r.matches.iter().find(|m| m.lattice_match(path, headers))?;
        Some((i + 1, m, r.backend.as_ref()))
    });
    // A rule without a backend does not take the request (as in `Network::through`).
    let (n, rule, backend) = matching
        .by_ref()
        .find(|(_, _, backend)| backend.is_some())?;
    let later = matching.map(|(i, m, b)| (i, m, b != backend)).collect();
    Some((n, rule, later))
}

/// Prefixes that look as if they match but do not: Gateway API compares whole segments.
fn write_near(o: &mut String, t: &Trace<'_>) {
    for (r, m) in &t.near {
        say(
            o,
            format!(
                "          not {}/{} ({} {}): a prefix matches whole path segments, and {} is not under {}",
                r.namespace,
                r.name,
                kind_name(m.kind),
                m.path,
                t.request.path,
                m.path
            ),
        );
    }
}

fn lattice_why(rule: &PathRule) -> &'static str {
    if !rule.headers.is_empty() {
        return "the first rule, in order, whose header and path match";
    }
    match rule.kind {
        MatchKind::Exact => "an Exact match",
        MatchKind::Prefix => "the first rule, in order, whose prefix starts the path as a string",
    }
}

pub(crate) fn human(t: &Trace<'_>) -> String {
    let mut o = String::new();
    match &t.request.host {
        Some(host) => say(
            &mut o,
            format!("request   Host {host}, path {}", t.request.path),
        ),
        None => say(
            &mut o,
            format!(
                "request   path {}, no Host (only routes for any host match)",
                t.request.path
            ),
        ),
    }
    if t.direct {
        say(
            &mut o,
            "kong      not on the way: the host is a Lattice service's custom domain",
        );
    }
    let Some(win) = t.kong.first().filter(|_| !t.direct) else {
        if t.direct {
            if let Some(route) = t.lattice {
                human_lattice(&mut o, t, route);
            }
            human_end(&mut o, t);
            return o;
        }
        say(&mut o, "kong      no route matches: Kong answers 404");
        write_near(&mut o, t);
        for (route, h) in &t.other_hosts {
            say(
                &mut o,
                format!("          {route} would take it on host {h}"),
            );
        }
        return o;
    };
    human_kong(&mut o, t, win);
    write_near(&mut o, t);
    human_bridge(&mut o, t, win.route);
    if let Some(route) = t.lattice {
        human_lattice(&mut o, t, route);
    }
    human_end(&mut o, t);
    o
}

/// The auth verdict and the backend, or why none.
fn human_end(o: &mut String, t: &Trace<'_>) {
    if let Some((who, verdict)) = &t.auth
        && t.reached()
    {
        let line = match verdict {
            Some((policy, d)) => {
                format!("auth      {}: {d} ({})", who.show(), policy.file.display())
            }
            None => format!(
                "auth      {}: let in: the service has no auth policy (auth type NONE)",
                who.show()
            ),
        };
        say(o, line);
    }
    let port = |b: &BackendRef| b.port.map(|p| format!(", port {p}")).unwrap_or_default();
    match (&t.outcome, weighted(t)) {
        (Outcome::Backend { .. }, Some(refs)) => {
            // A canary: every backend of the rule with the weight the manifests commit
            // (a Rollout in progress shifts them in the cluster).
            for (i, (b, w)) in refs.iter().enumerate() {
                let label = if i == 0 { "backends" } else { "" };
                say(
                    o,
                    format!(
                        "{label:<9} Service {}/{}{} (weight {w})",
                        b.namespace,
                        b.name,
                        port(b)
                    ),
                );
            }
        }
        (Outcome::Backend { backend, .. }, None) => say(
            o,
            format!(
                "backend   Service {}/{}{}",
                backend.namespace,
                backend.name,
                port(backend)
            ),
        ),
        (other, _) => say(o, format!("broken    {other}")),
    }
}

/// The backends of the Lattice rule reached, with their weights, when it has more than one
/// (a canary's stable and canary Services).
fn weighted<'a>(t: &Trace<'a>) -> Option<&'a [(BackendRef, i32)]> {
    let Outcome::Backend { rule, .. } = &t.outcome else {
        return None;
    };
    let refs = &t.lattice?.rules.get(*rule)?.weighted;
    (refs.len() > 1).then_some(refs.as_slice())
}

/// Appends a line.
fn say(o: &mut String, line: impl AsRef<str>) {
    o.push_str(line.as_ref());
    o.push('\n');
}

/// The Kong route that won, and the routes it beat.
fn human_kong(o: &mut String, t: &Trace<'_>, win: &KongClaim<'_>) {
    let r = win.route;
    say(
        o,
        format!(
            "kong      route {}/{} ({})",
            r.namespace,
            r.name,
            place(&r.file, win.rule.pos.line)
        ),
    );
    say(
        o,
        format!(
            "          matched {} {} {}: {}",
            kind_name(win.rule.kind),
            win.rule.path,
            host_clause(r, t.request.host.as_deref()),
            won_because(t)
        ),
    );
    for lost in &t.kong[1..] {
        say(
            o,
            format!(
                "          won over {}/{} ({} {}): {}",
                lost.route.namespace,
                lost.route.name,
                kind_name(lost.rule.kind),
                lost.rule.path,
                lost_because(win, lost)
            ),
        );
    }
}

/// The bridge Service and the Host Lattice sees.
fn human_bridge(o: &mut String, t: &Trace<'_>, r: &KongRoute) {
    if let Some((name, bridge)) = &t.bridge {
        say(
            o,
            format!(
                "bridge    Service {name}, ExternalName {} ({})",
                bridge.target,
                bridge.file.display()
            ),
        );
    }
    match (&r.rewrite_host, &t.lattice_host) {
        (Some(h), _) => {
            say(o, format!("          Host rewritten to {h}"));
        }
        (None, Some(h)) => {
            say(o, format!("          Host kept: {h}"));
        }
        (None, None) => {}
    }
    for (name, value) in &t.headers {
        say(
            o,
            format!("          header {name}: {value} set (a client's value is replaced)"),
        );
    }
}

/// The Lattice service and the rule that matched first.
fn human_lattice(o: &mut String, t: &Trace<'_>, route: &LatticeRoute) {
    let domain = route.hostnames.first().map_or("", String::as_str);
    say(
        o,
        format!(
            "lattice   service {} (route {}/{}), custom domain {domain} ({})",
            route.service_name,
            route.namespace,
            route.name,
            route.file.display()
        ),
    );
    if let Some((n, rule, later)) = lattice_rule(route, &t.request.path, &t.headers) {
        say(
            o,
            format!(
                "          rule {n} of {} matched: {}{} {} ({}), {}",
                route.rules.len(),
                header_clause(rule),
                kind_name(rule.kind),
                rule.path,
                place(&route.file, rule.pos.line),
                lattice_why(rule)
            ),
        );
        for (n, rule, elsewhere) in later {
            // Another app's rule is reached if the controller leaves it first, which it
            // may: it does not keep the order of a route's rules.
            let reached = if elsewhere {
                "it takes the request if the controller puts it first (order-dependent-group)"
            } else {
                "never reached"
            };
            say(
                o,
                format!(
                    "          rule {n} ({} {}) matches too but comes later: {reached}",
                    kind_name(rule.kind),
                    rule.path
                ),
            );
        }
    }
}

/// The header conditions of a Lattice match, as `header x-latgen-app: shop and `.
fn header_clause(rule: &PathRule) -> String {
    rule.headers
        .iter()
        .map(|(name, value)| {
            format!(
                "header {name}: {} and ",
                value.as_deref().unwrap_or("(not Exact)")
            )
        })
        .collect()
}

fn outcome_code(o: &Outcome) -> &'static str {
    match o {
        Outcome::Backend { .. } => "backend",
        Outcome::NoKongRoute => "no-kong-route",
        Outcome::NoBridge(_) => "no-bridge",
        Outcome::HostMismatch { .. } => "host-mismatch",
        Outcome::NoLatticeService(_) => "no-lattice-service",
        Outcome::NoLatticeRule { .. } => "no-lattice-rule",
    }
}

fn path_json(rule: &PathRule) -> Value {
    let mut v = json!({ "type": kind_name(rule.kind), "value": rule.path });
    if !rule.headers.is_empty() {
        v["headers"] = rule
            .headers
            .iter()
            .map(|(name, value)| json!({ "name": name, "value": value }))
            .collect();
    }
    v
}

/// The Kong route that took the request, and those it won over.
fn kong_json(t: &Trace<'_>) -> Option<Value> {
    let kong = t.kong.first().map(|win| {
        let r = win.route;
        json!({
            "route": format!("{}/{}", r.namespace, r.name),
            "file": r.file,
            "line": win.rule.pos.line,
            "hostnames": r.hostnames,
            "match": path_json(win.rule),
            "why": won_because(t),
            "over": t.kong[1..].iter().map(|l| json!({
                "route": format!("{}/{}", l.route.namespace, l.route.name),
                "match": path_json(l.rule),
                "why": lost_because(win, l),
            })).collect::<Vec<_>>(),
            "rewriteHost": r.rewrite_host,
        })
    });
    kong.map(|mut k| {
        if !t.headers.is_empty() {
            k["setsHeaders"] = json!(t.headers);
        }
        k
    })
}

pub(crate) fn to_json(t: &Trace<'_>) -> Value {
    let kong = kong_json(t);
    let bridge = t
        .bridge
        .as_ref()
        .map(|(name, b)| json!({ "service": name, "externalName": b.target, "file": b.file }));
    let lattice = t.lattice.map(|route| {
        let mut v = json!({
            "route": format!("{}/{}", route.namespace, route.name),
            "service": route.service_name,
            "customDomain": route.hostnames.first(),
            "file": route.file,
            "rules": route.rules.len(),
        });
        if let Some((n, rule, later)) = lattice_rule(route, &t.request.path, &t.headers) {
            v["rule"] = json!(n);
            v["line"] = json!(rule.pos.line);
            v["match"] = path_json(rule);
            v["why"] = json!(lattice_why(rule));
            v["laterMatching"] = later
                .iter()
                .map(|(n, m, elsewhere)| {
                    json!({ "rule": n, "match": path_json(m), "otherBackend": elsewhere })
                })
                .collect();
        }
        v
    });
    let backend = t
        .outcome
        .backend()
        .map(|b| json!({ "namespace": b.namespace, "name": b.name, "port": b.port }));
    let backends: Vec<Value> = (weighted(t).unwrap_or_default().iter())
        .map(|(b, w)| json!({ "namespace": b.namespace, "name": b.name, "port": b.port, "weight": w }))
        .collect();
    let near: Vec<Value> = t
        .near
        .iter()
        .map(|(r, m)| {
            let route = format!("{}/{}", r.namespace, r.name);
            json!({ "route": route, "match": path_json(m) })
        })
        .collect();
    let other_hosts: Vec<Value> = t
        .other_hosts
        .iter()
        .map(|(r, h)| json!({ "route": r, "host": h }))
        .collect();
    json!({
        "request": { "host": t.request.host, "path": t.request.path },
        "notMatching": near,
        "reached": t.reached(),
        "outcome": outcome_code(&t.outcome),
        "message": t.outcome.to_string(),
        "kong": kong,
        "bridge": bridge,
        "latticeHost": t.lattice_host,
        "lattice": lattice,
        "backend": backend,
        "backends": backends,
        "otherHosts": other_hosts,
        "direct": t.direct,
        "auth": auth_json(t),
    })
}

/// The caller and the auth verdict, when a caller was given.
fn auth_json(t: &Trace<'_>) -> Value {
    let Some((who, verdict)) = &t.auth else {
        return Value::Null;
    };
    let message = verdict.map_or(
        "the service has no auth policy (auth type NONE)".to_string(),
        |(_, d)| d.to_string(),
    );
    json!({
        "caller": {
            "principal": who.principal,
            "org": who.org,
            "vpc": who.vpc,
            "method": who.method,
        },
        "policy": verdict.map(|(p, _)| p.file.display().to_string()),
        "allowed": verdict.is_none_or(|(_, d)| d.allows()),
        "message": message,
    })
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
