//! Whether the committed auth policies let in exactly the declared callers (`auth.mode:
//! iam`): each Lattice route's requests, the way Lattice routes them, probed with every
//! identity a declaration of that route's apps names, Kong's, and one nobody declared. A
//! request must be allowed when the app it reaches declares the caller, and denied when
//! not — also after a hand edit of a committed policy. Then each statement that allows is
//! searched for a request it lets in that no declaration asks for, over every value the
//! declarations and the policy name (see [`latgen_sim::iam::Space`]): what a custom
//! template or a hand edit adds (another VPC, method, header, account, organization or
//! path) is found whatever values it names.

use std::collections::{BTreeSet, HashMap};

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::app::{App, MatchKind};
use crate::input::auth::Caller;
use crate::input::config::Config;
use crate::input::quotas::{POLICY_MAX_BYTES, Quotas};
use crate::plan::policies::callers_of;
use latgen_sim::iam::{Call, Identity, Probe, Space, probe_headers, probe_paths, request_resource};
use latgen_sim::platform::segment_prefix_matches;
use latgen_sim::routing::{BackendRef, Headers, LatticeRoute, Network};

/// The apps by the name of their Service, so that a rule's app is a look-up.
type ByBackend<'a> = HashMap<&'a str, Vec<&'a App>, latgen_sim::routing::Hasher>;

fn by_backend(apps: &[App]) -> ByBackend<'_> {
    let mut out: ByBackend = HashMap::default();
    for app in apps {
        out.entry(app.service.as_str()).or_default().push(app);
    }
    out
}

/// The apps whose Service and port `backend` is.
fn owners<'a>(backend: &BackendRef, apps: &ByBackend<'a>) -> Vec<&'a App> {
    let named = apps
        .get(backend.name.as_str())
        .map_or(&[][..], Vec::as_slice);
    named
        .iter()
        .copied()
        .filter(|a| a.is_backend(backend))
        .collect()
}

/// The app of the rule of `route` that Lattice sends `path` with `headers` to.
fn reached<'a>(
    route: &LatticeRoute,
    path: &str,
    headers: &Headers,
    apps: &ByBackend<'a>,
) -> Option<&'a App> {
    reached_by(route, path, headers, apps).map(|(app, _)| app)
}

/// [`reached`], and whether the rule's match that took the request names a header (the
/// app's dispatch header, which lets its callers in on any path).
fn reached_by<'a>(
    route: &LatticeRoute,
    path: &str,
    headers: &Headers,
    apps: &ByBackend<'a>,
) -> Option<(&'a App, bool)> {
    let (rule, by_header) = route.rules.iter().find_map(|r| {
        let m = r.matches.iter().find(|m| m.lattice_match(path, headers))?;
        Some((r, !m.headers.is_empty()))
    })?;
    let backend = rule.backend.as_ref()?;
    let mut owners = owners(backend, apps).into_iter();
    let first = owners.next()?;
    // Apps that share a Service are told apart by the match the rule has.
    let by_match = std::iter::once(first)
        .chain(owners)
        .find(|a| rule.matches.iter().any(|m| a.writes(m)));
    Some((by_match.unwrap_or(first), by_header))
}

/// The identities that probe a route: Kong's, those of every caller of its apps and of
/// every app, and a stranger's.
fn identities(route: &LatticeRoute, apps: &ByBackend, config: &Config) -> BTreeSet<Identity> {
    let mut out: BTreeSet<Identity> = BTreeSet::from([Identity::stranger()]);
    let auth = &config.auth;
    for c in auth.kong.iter().chain(&auth.callers) {
        out.extend(Identity::of_caller(c));
    }
    for rule in &route.rules {
        let Some(b) = &rule.backend else { continue };
        for app in owners(b, apps) {
            for c in &app.callers {
                out.extend(Identity::of_caller(c));
            }
        }
    }
    out
}

/// The findings about every route's auth policy.
/// Routes whose file and policy's file are both in `proven` (exactly as the built-in
/// templates render them) are not probed: the property tests prove those for any
/// declarations, as they prove the templates.
pub(crate) fn auth_findings(
    net: &Network,
    (apps, config): (&[App], &Config),
    proven: &BTreeSet<&std::path::Path>,
) -> Diagnostics {
    use rayon::prelude::*;
    let mut diags = Diagnostics::new();
    if !config.auth.is_on() {
        return diags;
    }
    let apps = by_backend(apps);
    let found: Vec<Diagnostics> = (net.lattice.par_iter())
        .map(|route| route_findings(net, route, (&apps, config), proven))
        .collect();
    for d in found {
        diags.extend(d);
    }
    diags
}

fn route_findings(
    net: &Network,
    route: &LatticeRoute,
    (apps, config): (&ByBackend, &Config),
    proven: &BTreeSet<&std::path::Path>,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let name = format!("{}/{}", route.namespace, route.name);
    let Some(policy) = net.auth_policy(route) else {
        diags.push(
            Diagnostic::error(
                Code::AuthMismatch,
                format!("Lattice route `{name}` has no auth policy: its service has auth type NONE, so every caller reaches its apps"),
            )
            .at(Span::file(&route.file))
            .help("run `latgen render`, which writes an IAMAuthPolicy beside every route while `auth.mode` is `iam`"),
        );
        return diags;
    };
    let at = Span::file(&policy.file);
    if !Quotas::policy_fits(policy.bytes) {
        diags.push(
            Diagnostic::error(
                Code::AuthPolicyTooLarge,
                format!("the auth policy of `{name}` takes {} bytes; Lattice takes at most {POLICY_MAX_BYTES}, so the controller cannot attach it", policy.bytes),
            )
            .at(at.clone())
            .help("run `latgen render`, which sizes groups so that their policies fit; declare fewer callers per app (an account or an organization rather than each role)"),
        );
    }
    // A proven policy is read by the property tests too (a declared caller is let in only
    // through its statements), so it is not parsed here: at 10,000 apps that parse was a
    // tenth of the check's auth time.
    if proven.contains(route.file.as_path()) && proven.contains(policy.file.as_path()) {
        return diags;
    }
    if let Some(why) = policy.unreadable() {
        diags.push(
            Diagnostic::error(Code::AuthMismatch, format!("the auth policy of `{name}` cannot be checked: {why}"))
                .at(at)
                .help("run `latgen render` to write it anew; declare callers in the apps' `callers:` rather than editing the policy"),
        );
        return diags;
    }
    let mut told = BTreeSet::new();
    diags.extend(probe_declared(
        route,
        policy,
        (apps, config),
        (&name, &at),
        &mut told,
    ));
    let found = widenings(route, policy, (apps, config));
    for (statement, probe, app) in found {
        let key = (
            app.map(|a| a.name.clone()).unwrap_or_default(),
            probe.who.clone(),
        );
        if told.insert(key) {
            diags.push(widening(&name, statement, &probe, app, &at));
        }
    }
    diags
}

/// The findings of probing `route`'s rules with every identity a declaration names, Kong's
/// and a stranger's: each let in exactly when the app it reaches declares it. `told` holds
/// the (app, identity) pairs reported, to report each once.
fn probe_declared(
    route: &LatticeRoute,
    policy: &latgen_sim::iam::AuthPolicy,
    (apps, config): (&ByBackend, &Config),
    (name, at): (&str, &Span),
    told: &mut BTreeSet<(String, Identity)>,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let (region, account) = (
        config.auth.region.as_deref().unwrap_or_default(),
        config.auth.account.as_deref().unwrap_or_default(),
    );
    let ids = identities(route, apps, config);
    for rule in &route.rules {
        for m in &rule.matches {
            let header = m
                .headers
                .first()
                .and_then(|(n, v)| Some((n.as_str(), v.as_deref()?)));
            let headers = probe_headers(header);
            for path in probe_paths(m.kind, &m.path) {
                let Some(app) = reached(route, &path, &headers, apps) else {
                    continue;
                };
                let resource = request_resource(region, account, &path);
                for who in &ids {
                    let declared = callers_of(app, config).any(|c| who.declared_by(c));
                    let decision = policy.decide(&Call {
                        who,
                        resource: &resource,
                        headers: &headers,
                    });
                    if decision.allows() == declared
                        || !told.insert((app.name.clone(), who.clone()))
                    {
                        continue;
                    }
                    diags.push(mismatch(name, app, who, &path, declared, decision, at));
                }
            }
        }
    }
    diags
}

/// The requests of a route for the witness search: each match's path, one under a
/// prefix and one that only shares its string (`/shopx` for `/shop`), with the match's
/// header.
fn route_requests(route: &LatticeRoute) -> Vec<(String, Headers)> {
    let mut out = Vec::new();
    for m in route.rules.iter().flat_map(|r| &r.matches) {
        let header = m
            .headers
            .first()
            .and_then(|(n, v)| Some((n.as_str(), v.as_deref()?)));
        let mut paths = probe_paths(m.kind, &m.path);
        let stem = m.path.trim_end_matches('/');
        if m.kind == MatchKind::Prefix && !stem.is_empty() {
            paths.push(format!("{stem}latgen-probe"));
        }
        out.extend(paths.into_iter().map(|p| (p, probe_headers(header))));
    }
    out
}

/// For each statement of `policy` that lets in a request no declaration asks for, one such
/// request and the app it reaches (none when no rule of the route takes it). A request is
/// asked for when it reaches an app whose own paths hold it (or whose dispatch header it
/// carries) and a caller of that app names its sender.
fn widenings<'a>(
    route: &LatticeRoute,
    policy: &latgen_sim::iam::AuthPolicy,
    (apps, config): (&ByBackend<'a>, &Config),
) -> Vec<(usize, Probe, Option<&'a App>)> {
    let auth = &config.auth;
    let mut callers: Vec<&Caller> = auth.kong.iter().chain(&auth.callers).collect();
    for b in route.rules.iter().filter_map(|r| r.backend.as_ref()) {
        callers.extend(owners(b, apps).iter().flat_map(|a| &a.callers));
    }
    let requests = route_requests(route);
    let space = Space {
        requests: &requests,
        callers: &callers,
        region: auth.region.as_deref().unwrap_or_default(),
        account: auth.account.as_deref().unwrap_or_default(),
    };
    let declared = |p: &Probe| {
        let Some((app, by_header)) = reached_by(route, &p.path, &p.headers, apps) else {
            return false;
        };
        let owned = by_header
            || app.paths.iter().any(|m| match m.kind {
                MatchKind::Exact => m.value == p.path,
                MatchKind::Prefix => segment_prefix_matches(&m.value, &p.path),
            });
        owned && callers_of(app, config).any(|c| p.who.declared_by(c))
    };
    (policy.witnesses(&space, &declared).into_iter())
        .map(|(i, p)| {
            let app = reached(route, &p.path, &p.headers, apps);
            (i, p, app)
        })
        .collect()
}

/// A statement that lets in what no declaration asks for.
fn widening(
    route: &str,
    statement: usize,
    probe: &Probe,
    app: Option<&App>,
    at: &Span,
) -> Diagnostic {
    let with: Vec<String> = (probe.headers.iter())
        .map(|(n, v)| format!("`{n}: {v}`"))
        .collect();
    let with = match with.is_empty() {
        true => String::new(),
        false => format!(" with {}", with.join(" and ")),
    };
    let (who, path, n) = (probe.who.show(), &probe.path, statement + 1);
    let message = match app {
        Some(a) => format!(
            "statement {n} of the auth policy of `{route}` lets {who} call app `{}` ({path}{with}), which no declaration asks for",
            a.name
        ),
        None => format!(
            "statement {n} of the auth policy of `{route}` lets {who} send {path}{with}, which no rule of the route takes and no declaration asks for"
        ),
    };
    let d = Diagnostic::error(Code::AuthMismatch, message)
    .at(at.clone())
    .help("a custom template or a hand edit widened the policy: drop that statement and run `latgen render`; to let this caller in, declare it in the app's `callers:`");
    match app {
        Some(a) => d.related(
            Span::new(&a.file, a.name_pos.line, a.name_pos.column),
            "the app",
        ),
        None => d,
    }
}

fn mismatch(
    route: &str,
    app: &App,
    who: &Identity,
    path: &str,
    declared: bool,
    decision: latgen_sim::iam::Decision,
    at: &Span,
) -> Diagnostic {
    let (message, help) = if declared {
        (
            format!(
                "the auth policy of `{route}` keeps {} out of app `{}` ({path}: {decision}), although the app declares that caller",
                who.show(),
                app.name
            ),
            "run `latgen render` to write the policy anew",
        )
    } else {
        (
            format!(
                "the auth policy of `{route}` lets {} call app `{}` ({path}: {decision}), which no caller of the app declares",
                who.show(),
                app.name
            ),
            "run `latgen render` to write the policy anew; to let this caller in, declare it in the app's `callers:`",
        )
    };
    Diagnostic::error(Code::AuthMismatch, message)
        .at(at.clone())
        .related(
            Span::new(&app.file, app.name_pos.line, app.name_pos.column),
            "the app",
        )
        .help(help)
}
