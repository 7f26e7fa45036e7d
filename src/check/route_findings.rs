//! What the committed manifests show on their own: shadowed rules, Kong routes that
//! resolve nowhere or elsewhere, and routes over their quotas.

use std::collections::{BTreeMap, BTreeSet};

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::app::MatchKind;
use crate::input::quotas::RuleLimit;
use crate::plan::prepared::Prepared;
use latgen_sim::routing::Network;
/// In each Lattice route, in rule order under string-prefix first match: an earlier rule
/// that takes all of a later rule's traffic, and prefixes of different backends nested
/// segment-wise (the outer app's `…x` traffic goes to the inner app) unless the inner one
/// is written segment-safely (a prefix ending in `/`).
pub(super) fn shadowing(net: &Network) -> Diagnostics {
    let mut diags = Diagnostics::new();
    for route in &net.lattice {
        let rules: Vec<(
            usize,
            &latgen_sim::routing::PathRule,
            Option<&latgen_sim::routing::BackendRef>,
        )> = route
            .rules
            .iter()
            .enumerate()
            .flat_map(|(i, r)| r.matches.iter().map(move |m| (i, m, r.backend.as_ref())))
            .collect();
        let at =
            |m: &latgen_sim::routing::PathRule| Span::new(&route.file, m.pos.line, m.pos.column);
        let mut reported = BTreeSet::new();
        for (j, later, later_backend) in &rules {
            for (i, earlier, earlier_backend) in &rules {
                if i >= j || reported.contains(j) {
                    continue;
                }
                // Rules that match different values of one header (header dispatch) never
                // compete for a request, whatever their paths.
                if earlier.headers_exclusive(later) {
                    continue;
                }
                if earlier.takes_all_of(later) {
                    reported.insert(*j);
                    if earlier_backend == later_backend {
                        diags.push(
                            Diagnostic::warning(Code::UnreachableRule, format!("rule {} ({}) can never match: rule {} ({}) comes first and takes all of its requests", j + 1, later.path, i + 1, earlier.path))
                                .at(at(later))
                                .related(at(earlier), "matches first")
                                .help("order rules longest path first, or drop the covered rule"),
                        );
                    } else {
                        diags.push(
                            Diagnostic::error(Code::RuleShadowed, format!("rule {} ({}) never gets traffic: rule {} ({}) comes first and Lattice matches prefixes as strings", j + 1, later.path, i + 1, earlier.path))
                                .at(at(later))
                                .related(at(earlier), "takes its requests")
                                .help("order rules longest path first (latgen's templates do); check custom templates and hand edits"),
                        );
                    }
                    continue;
                }
                if earlier.nests_inside(later) && earlier_backend != later_backend {
                    reported.insert(*j);
                    diags.push(
                        Diagnostic::error(
                            Code::NestedPrefix,
                            format!(
                                "`{}` nests under `{}` with another backend in one Lattice route: Lattice sends `{}x`, which belongs to `{}`, to `{}`",
                                earlier.path, later.path, earlier.path, later.path, earlier.path
                            ),
                        )
                        .at(at(earlier))
                        .related(at(later), "the outer prefix")
                        .help(format!("keep them in different groups, or write the inner one segment-safely (Exact {0} and PathPrefix {0}/)", earlier.path)),
                    );
                }
            }
        }
    }
    diags
}

/// `order-dependent-group` as warnings: pairs of rules in one Lattice route that route right
/// only in their committed order (see [`latgen_sim::routing::LatticeRoute::order_dependent`]).
/// Where the change creates the pair, [`super::change_warnings`] reports it as an error.
pub(super) fn order_dependence(
    net: &Network,
    (apps, env): (&[crate::input::app::App], Option<&str>),
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    for route in &net.lattice {
        let at =
            |m: &latgen_sim::routing::PathRule| Span::new(&route.file, m.pos.line, m.pos.column);
        for pair in route.order_dependent() {
            diags.push(crate::rollout::warnings::order_dependence(
                route,
                &pair,
                (apps, env),
                crate::diag::codes::Severity::Warning,
                &at,
            ));
        }
    }
    diags
}

/// Every Kong route must reach, through its bridge and rewritten Host, a Lattice rule that
/// sends each of its paths to its own app's Service.
pub(super) fn resolution(
    net: &Network,
    prepared: Option<&Prepared>,
    flagged: &BTreeSet<String>,
) -> Diagnostics {
    use rayon::prelude::*;
    let apps: BTreeMap<&str, &crate::input::app::App> = prepared
        .map(|p| p.apps.iter().map(|a| (a.name.as_str(), a)).collect())
        .unwrap_or_default();
    // A preview's route goes to the preview's Service, by (app, preview).
    let previews: BTreeMap<(&str, &str), &crate::input::previews::Preview> = prepared
        .map(|p| {
            (p.plan.previews.list.iter())
                .map(|x| ((x.app_name.as_str(), x.name.as_str()), x))
                .collect()
        })
        .unwrap_or_default();
    // Each Kong route's requests are followed on their own: in parallel, found in order.
    let found: Vec<Vec<Diagnostic>> = net
        .kong
        .par_iter()
        .with_max_len(crate::diag::PIECE)
        .map(|kong| {
            let want = match (kong.app.as_deref(), kong.preview.as_deref()) {
                (Some(a), Some(p)) => previews
                    .get(&(a, p))
                    .map(|x| (&x.namespace, &x.service, i32::from(x.port))),
                (a, _) => a
                    .and_then(|a| apps.get(a))
                    .map(|a| (&a.namespace, &a.service, i32::from(a.port))),
            };
            kong_resolution(net, kong, want, flagged)
        })
        .collect();
    let mut diags = Diagnostics::new();
    for d in found.into_iter().flatten() {
        diags.push(d);
    }
    diags
}

/// Where one Kong route's requests go, against where its app (`want`: namespace, Service
/// and port) is.
fn kong_resolution(
    net: &Network,
    kong: &latgen_sim::routing::KongRoute,
    want: Option<(&String, &String, i32)>,
    flagged: &BTreeSet<String>,
) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let host = kong
        .hostnames
        .first()
        .map(String::as_str)
        .unwrap_or(latgen_sim::routing::ANY_HOST);
    let no_headers = latgen_sim::routing::Headers::new();
    for m in &kong.matches {
        // A prefix is also followed one segment further down.
        let below =
            (m.kind == MatchKind::Prefix).then(|| format!("{}/x", m.path.trim_end_matches('/')));
        let at = || Span::new(&kong.file, m.pos.line, m.pos.column);
        for p in std::iter::once(m.path.as_str()).chain(below.as_deref()) {
            match (net.follow(kong, host, p, &no_headers), want) {
                (Ok(reached), Some((ns, svc, port))) => {
                    let b = reached.backend;
                    let elsewhere = &b.namespace != ns || &b.name != svc || b.port != Some(port);
                    if elsewhere && !flagged.contains(&reached.lattice_route()) {
                        let got = reached.outcome(kong);
                        let note = other_app_header(kong).unwrap_or_default();
                        diags.push(
                            Diagnostic::error(Code::RouteMismatch, format!("Kong route `{}` sends {p} to {got}, not to its app's Service {ns}/{svc}:{port}{note}", kong.name))
                                .at(at())
                                .help("run `latgen render`; if it persists, check custom templates"),
                        );
                        break;
                    }
                }
                (Ok(_), None) => {}
                (Err(got), _) => {
                    diags.push(
                        Diagnostic::error(Code::RouteUnresolved, format!("Kong route `{}` sends {p} nowhere: {got}", kong.name))
                            .at(at())
                            .help("the bridge's externalName, the URLRewrite hostname and a Lattice route's first hostname must agree, and that route must have a rule for the path"),
                    );
                    break;
                }
            }
        }
    }
    diags
}

/// Under header dispatch, each Lattice rule that matches a header value must be named by
/// some Kong route that sends requests to its service: one whose rewritten Host is the
/// route's custom domain and that sets the header to that value. A rule no Kong route
/// names is never reached (an app whose Kong side is missing or sets another value).
pub(super) fn unnamed_header_rules(net: &Network) -> Diagnostics {
    let mut diags = Diagnostics::new();
    // Kong routes by the host they rewrite to, looked up once per Lattice route: a scan of
    // every Kong route per Lattice route grew with the square of the apps.
    let mut by_host: std::collections::HashMap<&str, Vec<&latgen_sim::routing::KongRoute>, _> =
        std::collections::HashMap::with_hasher(latgen_sim::routing::Hasher::default());
    for k in &net.kong {
        if let Some(host) = k.rewrite_host.as_deref() {
            by_host.entry(host).or_default().push(k);
        }
    }
    for route in &net.lattice {
        let Some(domain) = route.domain() else {
            continue;
        };
        let kong = by_host.get(domain).map_or(&[][..], Vec::as_slice);
        for (i, rule) in route.rules.iter().enumerate() {
            for m in &rule.matches {
                let Some((name, Some(value))) = m.headers.first() else {
                    continue;
                };
                // The app's own Kong route setting another value is a `route-mismatch`,
                // which says why; this is for rules no route of theirs reaches at all.
                let named = kong.iter().any(|k| {
                    k.app.as_deref() == Some(value.as_str())
                        || k.header_changes
                            .sets(name)
                            .is_some_and(|v| v.eq_ignore_ascii_case(value))
                });
                if !named {
                    diags.push(
                        Diagnostic::warning(
                            Code::UnreachableRule,
                            format!("rule {} ({name}: {value}) is never reached: no Kong route that sends requests to {domain} sets {name} to `{value}`", i + 1),
                        )
                        .at(Span::new(&route.file, m.pos.line, m.pos.column))
                        .help("run `latgen render`; if it persists, check custom templates and hand edits"),
                    );
                }
            }
        }
    }
    diags
}

/// Where a Kong route sets a header to a value other than its own app's name (header
/// dispatch names the app that way), what it sets, as a clause.
fn other_app_header(kong: &latgen_sim::routing::KongRoute) -> Option<String> {
    let app = match (kong.app.as_deref()?, kong.preview.as_deref()) {
        (app, Some(preview)) => format!("{preview}.{app}"),
        (app, None) => app.to_string(),
    };
    let app = app.as_str();
    let (name, value) = kong
        .header_changes
        .set
        .iter()
        .find(|(_, v)| !v.eq_ignore_ascii_case(app))?;
    Some(format!(": it sets `{name}: {value}`, not `{app}`"))
}

/// Rule and backend counts of the Lattice routes as committed.
pub(super) fn route_quotas(net: &Network, prepared: &Prepared) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let q = &prepared.config.quotas;
    for r in &net.lattice {
        let at = Span::new(&r.file, r.name_pos.line, r.name_pos.column);
        let n = r.rules.len();
        match q.route_over(n) {
            Some(RuleLimit::Crd) => diags.push(
                Diagnostic::error(
                    Code::CrdRuleLimit,
                    format!(
                        "route `{}` has {n} rules; the HTTPRoute CRD takes 16",
                        r.name
                    ),
                )
                .at(at.clone())
                .help("run `latgen render`: groups never hold more"),
            ),
            Some(RuleLimit::Quota) => diags.push(
                Diagnostic::error(
                    Code::GroupOverQuota,
                    format!("route `{}` has {n} rules; Lattice's \"rules per listener\" quota (`quotas.rulesPerService` in latgen.yaml) is {}: the controller drops the rest without an error", r.name, q.rules_per_service),
                )
                .at(at.clone())
                .help("run `latgen render`: groups never hold more"),
            ),
            None => {}
        }
        // Every backendRef is a target group, a canary's at weight 0 too.
        let backends: BTreeSet<_> = (r.rules.iter())
            .flat_map(|x| x.weighted.iter().map(|(b, _)| b))
            .collect();
        if !q.target_groups_fit(backends.len()) {
            diags.push(
                Diagnostic::error(
                    Code::TargetGroupQuota,
                    format!(
                        "route `{}` reaches {} backends; the target-group quota is {}",
                        r.name,
                        backends.len(),
                        q.target_groups_per_service
                    ),
                )
                .at(at)
                .help("run `latgen render`: groups never reach more"),
            );
        }
    }
    diags
}
