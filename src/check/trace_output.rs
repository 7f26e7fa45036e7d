//! What a trace says ([`super::follow::Trace`]): for people, a line per hop with why each
//! route won; or as JSON.

use std::path::Path;

use serde_json::{Value, json};

use super::follow::Trace;
use crate::input::app::MatchKind;
use latgen_sim::routing::{
    BackendRef, Headers, KongClaim, KongRank, KongRoute, LatticeRoute, Outcome, PathRule,
};

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
        // A route reached at the domain Lattice assigned has no custom domain to name.
        let assigned = t.lattice.and_then(|r| r.assigned_domain.as_deref());
        let what = match (&t.request.host, assigned) {
            (Some(host), Some(domain)) if host == domain => "the domain Lattice assigned a service",
            _ => "a Lattice service's custom domain",
        };
        say(
            &mut o,
            format!("kong      not on the way: the host is {what}"),
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
    if let Some(a) = &t.auth
        && t.reached()
    {
        for line in super::trace_auth::human(a) {
            say(o, line);
        }
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
    if let Some(a) = &t.address {
        say(
            o,
            format!("address   callers that skip Kong reach it at {}", a.show()),
        );
    }
    for a in &t.also_at {
        say(o, format!("          also at {}", a.show()));
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
    let domain = route.domain_shown();
    say(
        o,
        format!(
            "lattice   service {} (route {}/{}), {domain} ({})",
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
pub(super) fn header_clause(rule: &PathRule) -> String {
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
            "assignedDomain": route.assigned_domain,
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
        "auth": t.auth.as_ref().map(super::trace_auth::to_json),
        "address": t.address.as_ref().map(|a| a.to_json()),
        "alsoAt": t.also_at.iter().map(|a| a.to_json()).collect::<Vec<_>>(),
    })
}
