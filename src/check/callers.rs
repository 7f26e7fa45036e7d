//! Who may call an app (`latgen trace --callers APP`): the callers the settings and its
//! declaration name — Kong (`auth.kong`), every app's (`auth.callers`), the app's own
//! (`callers:`) — each with what the committed auth policy of every Lattice service that
//! holds the app's rules says of it (more than one while a move is under way), and the
//! address a direct caller calls. What a hand edit lets in beyond the declarations is
//! `check`'s to find (`auth-mismatch`).

use serde_json::{Value, json};

use crate::input::app::App;
use crate::input::config::Config;
use latgen_sim::iam::{AuthPolicy, Call, Caller, Decision, Identity, probe_headers, probe_paths};
use latgen_sim::routing::{LatticeRoute, Network, PathRule};

/// A declared caller of an app: where it is declared, and the declaration.
pub(crate) type Declared<'a> = (String, &'a Caller);

/// Who may call one app.
#[derive(Debug)]
pub(crate) struct AppCallers<'a> {
    pub app: &'a App,
    /// Kong's, every app's and the app's own, in that order (as the policies list them).
    pub declared: Vec<Declared<'a>>,
    /// Each committed Lattice route that holds a rule of the app, by namespace and name.
    pub routes: Vec<RouteCallers<'a>>,
}

/// One Lattice route of an app, and what its policy says of each declared caller.
#[derive(Debug)]
pub(crate) struct RouteCallers<'a> {
    pub route: &'a LatticeRoute,
    /// The app's matches on the route.
    pub matches: Vec<&'a PathRule>,
    pub policy: Option<&'a AuthPolicy>,
    /// For each declared caller, in order: the decision on the first of its requests the
    /// policy keeps out, else on its first; None without a policy (auth type NONE).
    pub decisions: Vec<Option<Decision>>,
}

impl AppCallers<'_> {
    /// The app is on some route, and every declared caller is let in on each.
    pub fn all_let_in(&self) -> bool {
        !self.routes.is_empty()
            && (self.routes.iter())
                .flat_map(|r| &r.decisions)
                .all(|d| d.is_none_or(Decision::allows))
    }
}

/// Who may call `app`, by the declarations of `config` and the policies of `net`.
pub(crate) fn of_app<'a>(net: &'a Network, app: &'a App, config: &'a Config) -> AppCallers<'a> {
    let auth = &config.auth;
    let mut declared: Vec<Declared> = auth.kong.iter().map(|c| ("auth.kong".into(), c)).collect();
    declared.extend(
        auth.callers
            .iter()
            .enumerate()
            .map(|(i, c)| (format!("auth.callers[{i}]"), c)),
    );
    declared.extend(
        app.callers
            .iter()
            .enumerate()
            .map(|(i, c)| (format!("callers[{i}]"), c)),
    );
    let mut routes: Vec<RouteCallers> = (net.lattice.iter())
        .filter_map(|route| {
            let matches = app_matches(route, app);
            (!matches.is_empty()).then(|| {
                let policy = net.auth_policy(route);
                let decisions = (declared.iter())
                    .map(|(_, c)| policy.map(|p| decide(p, c, &matches)))
                    .collect();
                RouteCallers {
                    route,
                    matches,
                    policy,
                    decisions,
                }
            })
        })
        .collect();
    routes.sort_by(|a, b| {
        (&a.route.namespace, &a.route.name).cmp(&(&b.route.namespace, &b.route.name))
    });
    AppCallers {
        app,
        declared,
        routes,
    }
}

/// The matches of `route`'s rules that send `app`'s requests to it.
fn app_matches<'a>(route: &'a LatticeRoute, app: &App) -> Vec<&'a PathRule> {
    (route.rules.iter())
        .filter(|r| {
            r.backend.iter().any(|b| app.is_backend(b))
                || r.weighted.iter().any(|(b, _)| app.is_backend(b))
        })
        .flat_map(|r| r.matches.iter().filter(|m| app.writes(m)))
        .collect()
}

/// What `policy` says of caller `c` on the app's requests (one per match): the decision
/// on the first request of one of its identities that it keeps out, else on the first.
fn decide(policy: &AuthPolicy, c: &Caller, matches: &[&PathRule]) -> Decision {
    // Only the identities the declaration stands for: its near misses are another's.
    let ids: Vec<Identity> = (Identity::of_caller(c).into_iter())
        .filter(|who| who.declared_by(c))
        .collect();
    let mut first = None;
    for m in matches {
        let header = (m.headers.first()).and_then(|(n, v)| Some((n.as_str(), v.as_deref()?)));
        let headers = probe_headers(header);
        let Some(path) = probe_paths(m.kind, &m.path).into_iter().next() else {
            continue;
        };
        let resource = policy.resource(&path);
        for who in &ids {
            let d = policy.decide(&Call {
                who,
                resource: &resource,
                headers: &headers,
            });
            if !d.allows() {
                return d;
            }
            first.get_or_insert(d);
        }
    }
    first.unwrap_or(Decision::NotAllowed)
}

/// A caller declaration as a person reads it: every condition it sets.
fn show(c: &Caller) -> String {
    let or = |v: &[String]| v.join(" or ");
    let who = match (c.principals.is_empty(), c.orgs.is_empty()) {
        (true, true) => "any caller, signed or not".to_string(),
        (true, false) => "any principal".to_string(),
        (false, _) => or(&c.principals),
    };
    let org = match c.orgs.is_empty() {
        true => String::new(),
        false => format!(" of organization {}", or(&c.orgs)),
    };
    let vpcs = match c.vpcs.is_empty() {
        true => "any VPC".to_string(),
        false => or(&c.vpcs),
    };
    let methods = match c.methods.is_empty() {
        true => "any method".to_string(),
        false => or(&c.methods),
    };
    format!("{who}{org}, from {vpcs}, {methods}")
}

/// Whose caller a declaration is, as the output names it.
fn whose(declared_in: &str) -> String {
    match declared_in {
        "auth.kong" => "Kong (auth.kong)".to_string(),
        d if d.starts_with("auth.") => format!("every app's ({d})"),
        d => format!("the app's ({d})"),
    }
}

fn matches_text(matches: &[&PathRule]) -> String {
    (matches.iter())
        .map(|m| {
            let header = super::trace_output::header_clause(m);
            format!("{header}{} {}", m.kind.gateway_api_type(), m.path)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What one app's callers are, for people.
pub(crate) fn human(a: &AppCallers<'_>) -> String {
    let mut o = String::new();
    let mut say = |line: String| {
        o.push_str(&line);
        o.push('\n');
    };
    say(format!(
        "app       {} ({})",
        a.app.name,
        a.app.file.display()
    ));
    if a.declared.is_empty() {
        say("callers   none declared (no auth.kong, auth.callers or callers:)".into());
    }
    if a.routes.is_empty() {
        say(
            "lattice   no Lattice route of the output holds the app's rules: run `latgen render`"
                .into(),
        );
    }
    for r in &a.routes {
        let route = r.route;
        let domain = route.domain_shown();
        say(format!(
            "lattice   service {} (route {}/{}), {domain}: {} ({})",
            route.service_name,
            route.namespace,
            route.name,
            matches_text(&r.matches),
            route.file.display()
        ));
        match r.policy {
            Some(p) => say(format!("auth      policy {}", p.file.display())),
            None => say("auth      no policy (auth type NONE): every caller the service network lets in reaches the app".into()),
        }
        for ((declared_in, c), d) in a.declared.iter().zip(&r.decisions) {
            let answer = d.map_or("let in (no policy)".to_string(), |d| d.to_string());
            say(format!(
                "caller    {}: {}: {answer}",
                whose(declared_in),
                show(c)
            ));
        }
    }
    o
}

/// What the apps' callers are, as JSON.
pub(crate) fn to_json(apps: &[AppCallers<'_>]) -> Value {
    let caller = |(declared_in, c): &Declared| {
        json!({
            "declaredIn": declared_in,
            "principals": c.principals,
            "orgs": c.orgs,
            "vpcs": c.vpcs,
            "methods": c.methods,
        })
    };
    let route = |a: &AppCallers, r: &RouteCallers| {
        let verdicts: Vec<Value> = (a.declared.iter().zip(&r.decisions))
            .map(|((declared_in, _), d)| {
                json!({
                    "declaredIn": declared_in,
                    "allowed": d.is_none_or(Decision::allows),
                    "message": d.map_or("the service has no auth policy (auth type NONE)".to_string(), |d| d.to_string()),
                })
            })
            .collect();
        json!({
            "route": format!("{}/{}", r.route.namespace, r.route.name),
            "service": r.route.service_name,
            "customDomain": r.route.hostnames.first(),
            "assignedDomain": r.route.assigned_domain,
            "file": r.route.file,
            "matches": (r.matches.iter()).map(|m| json!({ "type": m.kind.gateway_api_type(), "value": m.path })).collect::<Vec<_>>(),
            "policy": r.policy.map(|p| p.file.display().to_string()),
            "callers": verdicts,
        })
    };
    let apps: Vec<Value> = (apps.iter())
        .map(|a| {
            json!({
                "app": a.app.name,
                "file": a.app.file,
                "callers": a.declared.iter().map(caller).collect::<Vec<_>>(),
                "services": a.routes.iter().map(|r| route(a, r)).collect::<Vec<_>>(),
                "allowed": a.all_let_in(),
            })
        })
        .collect();
    json!({ "apps": apps })
}
