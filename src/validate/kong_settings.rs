//! Per-app Kong settings (`kong:` in a declaration, `kong.routeDefaults` in latgen.yaml):
//! plugin names as Kubernetes object names, timeouts and retries in Kong's ranges, more
//! hostnames as hosts no other app owns.

use std::collections::BTreeMap;
use std::path::Path;

use serde_saphyr::Spanned;

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::Loaded;
use crate::input::app::{App, Pos};
use crate::input::config::Config;
use crate::input::kong::{KongDecl, KongSettings, Millis, RETRIES, TIMEOUT_MS, Timeouts};
use latgen_sim::platform;

fn at<T>(file: &Path, s: &Spanned<T>) -> Span {
    Span::new(file, Pos::of(s).line, Pos::of(s).column)
}

/// What is wrong with a plugin name: KongPlugins and KongClusterPlugins are Kubernetes
/// objects, named by DNS-1123 subdomains; and the names go into one comma-separated
/// annotation.
pub(crate) fn plugin_name_problem(name: &str) -> Option<String> {
    if name.is_empty() || name.len() > 253 {
        return Some("must be 1 to 253 characters".into());
    }
    name.split('.')
        .find_map(platform::dns1123_label_problem)
        .map(|p| format!("is not a Kubernetes object name: {p}"))
}

fn timeout_problem(ms: Millis) -> Option<String> {
    (!TIMEOUT_MS.contains(&ms.0)).then(|| {
        format!(
            "{} ms is outside Kong's range, 1 ms to {} ms (about 24.8 days)",
            ms.0,
            TIMEOUT_MS.end()
        )
    })
}

fn timeouts_problems(t: &Timeouts) -> Vec<String> {
    t.named()
        .filter_map(|(name, ms)| Some(format!("{name}: {}", timeout_problem(ms)?)))
        .collect()
}

fn retries_problem(n: u64) -> Option<String> {
    (!RETRIES.contains(&n)).then(|| format!("retries {n} is outside Kong's range, 0 to 32767"))
}

/// An app's `kong:`, validated, with the project's defaults applied.
pub(super) fn validate_app_kong(
    file: &Path,
    app_host: Option<&str>,
    config: &Config,
    decl: Option<&KongDecl>,
    diags: &mut Diagnostics,
) -> KongSettings {
    let settings = KongSettings::of(&config.kong.route_defaults, decl);
    let Some(decl) = decl else {
        return settings;
    };
    let mut bad = |code: Code, place: Span, what: String, help: &str| {
        diags.push(
            Diagnostic::error(code, what)
                .at(place)
                .help(help.to_string()),
        );
    };
    let mut seen = Vec::new();
    for p in decl.plugins.iter().flatten() {
        if let Some(problem) = plugin_name_problem(&p.value) {
            bad(
                Code::InvalidValue,
                at(file, p),
                format!("kong.plugins: `{}` {problem}", p.value),
                "name the KongPlugin (in the Kong routes' namespace) or KongClusterPlugin as its metadata.name",
            );
        } else if seen.contains(&&p.value) {
            bad(
                Code::InvalidValue,
                at(file, p),
                format!("kong.plugins names `{}` twice", p.value),
                "name each plugin once",
            );
        }
        seen.push(&p.value);
    }
    if let Some(t) = &decl.timeouts {
        for problem in timeouts_problems(&t.value) {
            bad(
                Code::InvalidValue,
                at(file, t),
                format!("kong.timeouts {problem}"),
                "give milliseconds (60000) or a duration (60s)",
            );
        }
    }
    if let Some(r) = &decl.retries
        && let Some(problem) = retries_problem(r.value)
    {
        bad(
            Code::InvalidValue,
            at(file, r),
            format!("kong.{problem}"),
            "Kong retries a failed request at most 32767 times; 0 turns retries off",
        );
    }
    check_hosts(file, app_host, config, decl, &mut bad);
    settings
}

/// `kong.hosts`: DNS names, each once, none the route has already, none under the groups'
/// domain; and room for them in the route.
fn check_hosts(
    file: &Path,
    app_host: Option<&str>,
    config: &Config,
    decl: &KongDecl,
    bad: &mut impl FnMut(Code, Span, String, &str),
) {
    let Some(hosts) = &decl.hosts else {
        return;
    };
    let base: Vec<&str> = match app_host {
        Some(h) => vec![h],
        None => config.kong.hostnames.iter().map(String::as_str).collect(),
    };
    let domain = &config.lattice.domain;
    let mut seen: Vec<&str> = Vec::new();
    for h in hosts {
        let value = h.value.as_str();
        let problem = if let Some(p) = platform::hostname_problem(value) {
            Some(p.replace("a Lattice custom domain", "a Kong route's extra host"))
        } else if base.is_empty() {
            Some("cannot be added: `kong.hostnames` in latgen.yaml is empty, so the app's Kong route matches every host already, and naming one would narrow it to that host".into())
        } else if base.contains(&value) || seen.contains(&value) {
            Some("is on the route already".into())
        } else if app_host.is_some() && config.kong.hostnames.iter().any(|h| h == value) {
            Some("is in `kong.hostnames`, the path-routed apps' shared host: this app's own route (its `/`) would take every path there that no other app routes".into())
        } else if value == domain || value.ends_with(&format!(".{domain}")) {
            Some(format!(
                "is under `{domain}`, the domain latgen names its groups in"
            ))
        } else {
            None
        };
        if let Some(problem) = problem {
            bad(
                Code::InvalidHost,
                at(file, h),
                format!("kong.hosts: `{value}` {problem}"),
                "list the other lowercase DNS names the app answers on, e.g. shop.example.com",
            );
        }
        seen.push(value);
    }
    let total = base.len() + hosts.len();
    if let Some(first) = hosts.first()
        && total > platform::CRD_MAX_HOSTNAMES
    {
        bad(
            Code::InvalidHost,
            at(file, first),
            format!("the app's Kong route would have {total} hostnames; an HTTPRoute takes 16"),
            "list fewer hosts",
        );
    }
}

/// `kong.routeDefaults` in latgen.yaml, each problem at the setting it is about.
pub(super) fn check_route_defaults(loaded: &Loaded, file: &Path, diags: &mut Diagnostics) {
    let places =
        crate::input::places::Places::settings(&loaded.config, file, loaded.sources.text(file));
    let mut bad = |what: String, help: &str, key: &str| {
        diags.push(
            Diagnostic::error(Code::InvalidConfig, what)
                .at(places.of(&["kong", "routeDefaults", key]))
                .help(help.to_string()),
        );
    };
    let d = &loaded.config.kong.route_defaults;
    for (i, p) in d.plugins.iter().enumerate() {
        if let Some(problem) = plugin_name_problem(p) {
            bad(
                format!("kong.routeDefaults.plugins: `{p}` {problem}"),
                "name the KongPlugin or KongClusterPlugin as its metadata.name",
                "plugins",
            );
        } else if d.plugins[..i].contains(p) {
            bad(
                format!("kong.routeDefaults.plugins names `{p}` twice"),
                "name each plugin once",
                "plugins",
            );
        }
    }
    for problem in timeouts_problems(&d.timeouts) {
        bad(
            format!("kong.routeDefaults.timeouts {problem}"),
            "give milliseconds (60000) or a duration (60s)",
            "timeouts",
        );
    }
    if let Some(problem) = d.retries.and_then(retries_problem) {
        bad(
            format!("kong.routeDefaults.{problem}"),
            "0 turns retries off",
            "retries",
        );
    }
}

/// A host a host-routed app answers on (its `host` or one of its `kong.hosts`) belongs to
/// it alone: another app's route naming it too would take part of its traffic on Kong.
/// Each other claimant is paired with the first host-routed one. (Two apps with one
/// `host` are `check_path_claims`' finding.)
pub(super) fn check_host_claims(apps: &[App], diags: &mut Diagnostics) {
    // Each host's claimants in app order, as (app, claimed in kong.hosts).
    let mut claims: BTreeMap<&str, Vec<(&App, bool)>> = BTreeMap::new();
    for app in apps {
        if let Some(h) = &app.host {
            claims.entry(h).or_default().push((app, false));
        }
        for h in &app.kong.hosts {
            claims.entry(h).or_default().push((app, true));
        }
    }
    for (host, list) in claims {
        let Some(&(owner, owner_extra)) = list.iter().find(|(a, _)| a.host.is_some()) else {
            continue;
        };
        for &(app, extra) in &list {
            if app.name == owner.name || !(extra || owner_extra) {
                continue;
            }
            let how = |a: &App, extra: bool| {
                let way = if extra {
                    "in its kong.hosts"
                } else {
                    "as its host"
                };
                format!("`{}` {way}", a.name)
            };
            diags.push(
                Diagnostic::error(
                    Code::DuplicateHost,
                    format!(
                        "host `{host}` is claimed by {} and by {}, which has a route of its own there",
                        how(app, extra),
                        how(owner, owner_extra)
                    ),
                )
                .at(Span::new(&app.file, app.name_pos.line, app.name_pos.column))
                .related(
                    Span::new(&owner.file, owner.name_pos.line, owner.name_pos.column),
                    "the app with its own route",
                )
                .help("a host-routed app's hosts are its own: drop the host from the other app's kong.hosts"),
            );
        }
    }
}
