//! Layer 2, validate (stage 2): turn declarations into [`App`]s, checking every value
//! against what Kubernetes, Gateway API, Lattice and Kong accept, and the apps against each
//! other (unique names, no path claimed twice). All problems are collected.

pub(crate) mod auth;
mod canary;
pub(crate) mod compat;
mod kong;
pub(crate) mod previews;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde_saphyr::Spanned;

use crate::diag::codes::Code;
use crate::diag::codes::Severity;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::config::Config;
use crate::input::model::{
    App, BRIDGE_SUFFIX, HealthCheck, MatchKind, PathDecl, PathMatch, Pos, ServiceDecl,
};
use crate::input::platform;
use crate::input::quotas::Quotas;
use crate::input::{Loaded, LoadedDecl};

pub fn validate(loaded: &Loaded, config_file: &Path, diags: &mut Diagnostics) -> Vec<App> {
    validate_config(&loaded.config, config_file, diags);
    auth::validate_auth_config(
        &loaded.config,
        config_file,
        loaded.sources.text(config_file),
        diags,
    );
    check_service_name_prefix(loaded, config_file, diags);
    check_dispatch_header(loaded, config_file, diags);
    kong::check_route_defaults(loaded, config_file, diags);
    // Each declaration on its own, in parallel; the findings merged in declaration order.
    use rayon::prelude::*;
    let checked: Vec<(Option<App>, Diagnostics)> = (loaded.decls.par_iter())
        .map(|d| {
            let mut found = Diagnostics::new();
            if !runs_here(d, loaded, &mut found) {
                return (None, found);
            }
            (validate_app(d, &loaded.config, &mut found), found)
        })
        .collect();
    let mut apps = Vec::with_capacity(checked.len());
    for (app, found) in checked {
        diags.extend(found);
        apps.extend(app);
    }
    apps.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.file.cmp(&b.file)));
    // An adopted app keeps the route it had until it is consolidated (the lock says which).
    for app in &mut apps {
        app.adopted = loaded.lock.adopted.get(&app.name).cloned();
    }
    check_adopted_routes(&apps, &loaded.config, diags);
    check_unique_names(&mut apps, diags);
    check_path_claims(&apps, diags);
    kong::check_host_claims(&apps, diags);
    check_service_name_collisions(&apps, &loaded.config, diags);
    apps
}

/// Whether the app runs in the environment being read: every app does unless its
/// `environments:` lists others. Names that are no environment of the project are errors.
fn runs_here(d: &LoadedDecl, loaded: &Loaded, diags: &mut Diagnostics) -> bool {
    let Some(listed) = &d.decl.environments else {
        return true;
    };
    let known = &loaded.environments;
    if known.is_empty() {
        diags.push(
            Diagnostic::error(
                Code::InvalidValue,
                "`environments` names environments, and this project has none",
            )
            .at(span(&d.file, Pos::of(listed)))
            .help("remove it, or add the environments as environments/<name>.yaml overlays of latgen.yaml"),
        );
        return false;
    }
    for e in &listed.value {
        if !known.contains(&e.value) {
            let hint = crate::diag::did_you_mean(&e.value, known.iter().map(String::as_str))
                .map_or(String::new(), |s| format!("did you mean `{s}`? "));
            diags.push(
                Diagnostic::error(
                    Code::InvalidValue,
                    format!("`{}` is not an environment of this project", e.value),
                )
                .at(span(&d.file, Pos::of(e)))
                .help(format!("{hint}the environments are {}", known.join(", "))),
            );
        }
    }
    let here = loaded.config.env_name();
    here.is_none_or(|h| listed.value.iter().any(|e| e.value == h))
}

/// Two apps adopted with one route (or an adopted route named like a group in the groups'
/// namespace) would write one object twice: the lock was edited by hand, or two imports
/// overlap.
fn check_adopted_routes(apps: &[App], config: &Config, diags: &mut Diagnostics) {
    let mut seen: HashMap<(&str, &str), &str> = HashMap::new();
    for app in apps.iter().filter(|a| a.adopted.is_some()) {
        let (route, namespace, _) = app.own_route();
        let group =
            namespace == config.lattice.namespace && config.parse_group_name(route).is_some();
        let other = seen.insert((namespace, route), &app.name);
        let problem = match other {
            Some(other) => format!(
                "apps `{other}` and `{}` are adopted with one route, {namespace}/{route}",
                app.name
            ),
            None if group => format!(
                "app `{}` is adopted with route {namespace}/{route}, a shared group's name",
                app.name
            ),
            None => continue,
        };
        diags.push(
            Diagnostic::error(Code::InvalidLock, problem)
                .at(span(&app.file, app.name_pos))
                .help("put back the `adopted:` entries `latgen import` wrote in latgen.lock (one route per app, as it runs)"),
        );
    }
}

fn span(file: &Path, pos: Pos) -> Span {
    Span::new(file, pos.line, pos.column)
}

fn validate_app(d: &LoadedDecl, config: &Config, diags: &mut Diagnostics) -> Option<App> {
    let file = &d.file;
    let before = diags.count(Severity::Error);
    let decl = &d.decl;

    let (name, name_pos) = match &decl.name {
        Some(n) => (n.value.clone(), Pos::of(n)),
        // Named by its file: the file itself is the place.
        None => (d.stem.clone(), Pos::default()),
    };
    let from_stem = decl.name.is_none();
    let name_at = if from_stem {
        Span::file(file)
    } else {
        span(file, name_pos)
    };
    check_name(&name, from_stem, &name_at, diags);
    check_not_a_group_name(&name, config, name_at.clone(), diags);
    if decl.host.is_some() {
        check_not_a_service_suffix(&name, config, name_at, diags);
    }
    check_namespace(file, &decl.namespace, diags);
    let svc = &decl.service.value;
    check_service(file, svc, diags);
    let host = validate_host(file, decl.host.as_ref(), config, diags);
    let paths = validate_paths(file, decl.paths.as_ref(), decl.host.as_ref(), diags);
    check_host_rule_count(file, &paths, host.is_some(), diags);
    let pin = validate_pin(file, decl.group.as_ref(), host.is_some(), diags);
    let health_check = validate_health_check(file, decl.health_check.as_ref(), diags);
    check_peak_rps(file, decl.peak_rps.as_ref(), config, diags);
    auth::check_paths(file, &paths, config, diags);
    let callers = auth::validate_callers(file, decl.callers.as_ref(), config, diags);
    let kong = kong::validate_app_kong(file, host.as_deref(), config, decl.kong.as_ref(), diags);
    let canary = canary::validate_canary(file, svc, decl.canary.as_ref(), diags);

    if diags.count(Severity::Error) > before {
        return None;
    }
    Some(App {
        name,
        file: file.clone(),
        name_pos,
        namespace: decl.namespace.value.clone(),
        service: svc.name.value.clone(),
        port: svc.port.value as u16,
        host,
        paths,
        pin,
        peak_rps: decl.peak_rps.as_ref().map(|r| r.value),
        isolate: decl.isolate,
        health_check,
        callers,
        kong,
        canary,
        adopted: None,
    })
}

/// `peakRps` above a Lattice service's whole budget (`throughput.rpsPerService`): no group
/// can carry the app, and the planner would give it a group of its own that is over budget
/// from the start.
fn check_peak_rps(
    file: &Path,
    rps: Option<&Spanned<u64>>,
    config: &Config,
    diags: &mut Diagnostics,
) {
    let budget = config.throughput.rps_per_service;
    let Some(rps) = rps.filter(|r| r.value > budget) else {
        return;
    };
    diags.push(
        Diagnostic::error(
            Code::RpsBudget,
            format!(
                "peakRps {} is more than a Lattice service's whole budget of {budget} rps (throughput.rpsPerService in latgen.yaml): no group can carry the app",
                rps.value
            ),
        )
        .at(span(file, Pos::of(rps)))
        .help("declare the app's real peak; if the account's Lattice quota is higher, raise throughput.rpsPerService to it"),
    );
}

/// The name makes a valid bridge Service name, `<name>-lattice`: a DNS-1035 label (a
/// DNS-1123 label that starts with a letter), which Kubernetes requires of a Service's name.
fn check_name(name: &str, from_stem: bool, at: &Span, diags: &mut Diagnostics) {
    let max_name = platform::DNS1123_LABEL_MAX - BRIDGE_SUFFIX.len();
    let name_problem = platform::dns1123_label_problem(name)
        .or_else(|| {
            (name.len() > max_name).then(|| {
                format!(
                    "is {} characters; at most {max_name}, so that `<name>{BRIDGE_SUFFIX}` fits 63",
                    name.len()
                )
            })
        })
        .or_else(|| {
            (!name.starts_with(|c: char| c.is_ascii_lowercase())).then(|| {
                format!(
                    "starts with a digit, so its bridge Service `{name}{BRIDGE_SUFFIX}` would not be a valid Service name: Kubernetes wants a Service's name to start with a letter"
                )
            })
        });
    if let Some(p) = name_problem {
        let what = if from_stem {
            "file name (the app's default name)"
        } else {
            "app name"
        };
        diags.push(
            Diagnostic::error(Code::InvalidName, format!("{what} `{name}` {p}"))
                .at(at.clone())
                .help("an app name is lowercase letters, digits and `-`, starting with a letter, e.g. `shop-web`; set `name:` or rename the file"),
        );
    }
}

/// An app may not take a name of the form the shared groups' routes have.
fn check_not_a_group_name(name: &str, config: &Config, at: Span, diags: &mut Diagnostics) {
    if config.parse_group_name(name).is_some() {
        diags.push(
            Diagnostic::error(
                Code::ReservedName,
                format!("app name `{name}` has the form of a shared group's name"),
            )
            .at(at.clone())
            .help(
                "choose another name; group routes are named by `lattice.groupPrefix` and a number",
            ),
        );
    }
    // Preview groups' routes are `preview-NN`: an app of that name would write the same file.
    let preview_group = name
        .strip_prefix("preview-")
        .is_some_and(|n| n.len() >= 2 && n.bytes().all(|b| b.is_ascii_digit()));
    if preview_group && config.previews.is_some() {
        diags.push(
            Diagnostic::error(
                Code::ReservedName,
                format!("app name `{name}` has the form of a preview group's name"),
            )
            .at(at)
            .help("choose another name; preview groups are named `preview-` and a number"),
        );
    }
}

/// Under `lattice.serviceNamePrefix`, latgen names group 1's Lattice service `<prefix>-g01`,
/// preview group 1's `<prefix>-pv01` and a host-routed app's `<prefix>-<app>`: a
/// host-routed app named `g01` or `pv01` would share the group's service (the controller
/// finds the service by name and takes it over), whether the group exists yet or not.
fn check_not_a_service_suffix(name: &str, config: &Config, at: Span, diags: &mut Diagnostics) {
    let Some(prefix) = config.lattice.service_name_prefix.as_deref() else {
        return;
    };
    // The names latgen writes: `g01`, `g100`, `pv07` (two digits at least, no more zeros).
    let number = |p: &str| {
        let digits = name.strip_prefix(p)?;
        let n = digits.parse::<u32>().ok()?;
        (digits.bytes().all(|b| b.is_ascii_digit()) && format!("{n:02}") == digits).then_some(n)
    };
    let whose = if let Some(n) = number("g") {
        format!("group {n}'s")
    } else if let Some(n) = number("pv") {
        format!("preview group {n}'s")
    } else {
        return;
    };
    diags.push(
        Diagnostic::error(
            Code::ReservedName,
            format!(
                "host-routed app `{name}` would get the Lattice service name `{prefix}-{name}`, which is {whose} under lattice.serviceNamePrefix `{prefix}`: the two would share one Lattice service"
            ),
        )
        .at(at)
        .help("choose another name; under lattice.serviceNamePrefix, `g` and `pv` followed by digits name the groups' services"),
    );
}

fn check_namespace(file: &Path, ns: &Spanned<String>, diags: &mut Diagnostics) {
    if let Some(p) = platform::dns1123_label_problem(&ns.value) {
        diags.push(
            Diagnostic::error(
                Code::InvalidNamespace,
                format!("namespace `{}` {p}", ns.value),
            )
            .at(span(file, Pos::of(ns)))
            .help("give the Kubernetes namespace of the app's Service"),
        );
    }
}

/// The Service's name is a DNS-1123 label and its port a TCP port.
fn check_service(file: &Path, svc: &ServiceDecl, diags: &mut Diagnostics) {
    if let Some(p) = platform::dns1123_label_problem(&svc.name.value) {
        diags.push(
            Diagnostic::error(
                Code::InvalidService,
                format!("service name `{}` {p}", svc.name.value),
            )
            .at(span(file, Pos::of(&svc.name)))
            .help("give the name of the app's Kubernetes Service"),
        );
    }
    let port = svc.port.value;
    if !(1..=65535).contains(&port) {
        diags.push(
            Diagnostic::error(Code::InvalidPort, format!("port {port} is out of range"))
                .at(span(file, Pos::of(&svc.port)))
                .help("give the Service port, 1 to 65535"),
        );
    }
}

fn validate_host(
    file: &Path,
    host: Option<&Spanned<String>>,
    config: &Config,
    diags: &mut Diagnostics,
) -> Option<String> {
    host.map(|h| {
        // The groups' own names live under this domain: a declared host there would collide
        // with a group's custom domain name once the group exists.
        let own = &config.lattice.domain;
        let under_own = h.value == *own || h.value.ends_with(&format!(".{own}"));
        if under_own {
            diags.push(
                Diagnostic::error(
                    Code::InvalidHost,
                    format!(
                        "host `{}` is under `{own}`, the domain latgen names its groups in (`lattice.domain` in latgen.yaml)",
                        h.value
                    ),
                )
                .at(span(file, Pos::of(h)))
                .help("give the app a host of its own outside that domain, e.g. shop.example.com"),
            );
        }
        if let Some(p) = platform::hostname_problem(&h.value) {
            let help = match platform::bare_host(&h.value) {
                Some(bare) if platform::hostname_problem(bare).is_none() => {
                    format!("write `host: {bare}`")
                }
                _ => "give the lowercase DNS name the app answers on, e.g. shop.example.com"
                    .to_string(),
            };
            diags.push(
                Diagnostic::error(Code::InvalidHost, format!("host `{}` {p}", h.value))
                    .at(span(file, Pos::of(h)))
                    .help(help),
            );
        }
        h.value.clone()
    })
}

/// The app's matches: the listed paths, or `/` for a host-routed app that lists none.
fn validate_paths(
    file: &Path,
    list: Option<&Spanned<Vec<Spanned<PathDecl>>>>,
    host: Option<&Spanned<String>>,
    diags: &mut Diagnostics,
) -> Vec<PathMatch> {
    let mut paths = Vec::new();
    match (list, host) {
        (Some(list), _) => {
            if list.value.is_empty() {
                diags.push(
                    Diagnostic::error(Code::NoPaths, "`paths` is empty")
                        .at(span(file, Pos::of(list)))
                        .help(if host.is_some() {
                            "remove `paths` to serve the whole host, or list the paths"
                        } else {
                            "list at least one path, e.g. `paths: [/shop]`"
                        }),
                );
            }
            for p in &list.value {
                if let Some(m) = validate_path(file, p, &paths, diags) {
                    paths.push(m);
                }
            }
        }
        (None, Some(host)) => paths.push(PathMatch {
            kind: MatchKind::Prefix,
            value: "/".into(),
            pos: Pos::of(host),
        }),
        (None, None) => diags.push(
            Diagnostic::error(Code::MissingField, "missing field `paths` (or `host`)")
                .at(Span::new(file, 1, 1))
                .help("add `paths: [/your-prefix]`, or `host:` for an app on its own host"),
        ),
    }
    paths
}

/// One entry of `paths`; None when it repeats an earlier entry (`earlier`).
fn validate_path(
    file: &Path,
    p: &Spanned<PathDecl>,
    earlier: &[PathMatch],
    diags: &mut Diagnostics,
) -> Option<PathMatch> {
    let pos = Pos::of(p);
    let problems = platform::path_problems(&p.value.value);
    let refused = !problems.is_empty();
    for prob in problems {
        diags.push(
            Diagnostic::error(prob.code, prob.message)
                .at(span(file, pos))
                .help(prob.help),
        );
    }
    // A refused path needs no advice on how Kong would read it.
    let meta = platform::kong_regex_metachars(&p.value.value);
    if !refused && !meta.is_empty() && p.value.kind == MatchKind::Prefix {
        let shown: String = meta.iter().collect();
        diags.push(
            Diagnostic::warning(
                Code::KongRegexPath,
                format!(
                    "path `{}` has `{shown}`, which Kong's router reads as regex syntax",
                    p.value.value
                ),
            )
            .at(span(file, pos))
            .help("avoid regex metacharacters in prefixes; Kong does not escape them"),
        );
    }
    if let Some(prev) = earlier
        .iter()
        .find(|m| m.kind == p.value.kind && m.value == p.value.value)
    {
        diags.push(
            Diagnostic::error(
                Code::DuplicatePath,
                format!("path `{}` is listed twice", p.value.value),
            )
            .at(span(file, pos))
            .related(span(file, prev.pos), "first listed here")
            .help("remove one of them"),
        );
        return None;
    }
    Some(PathMatch {
        kind: p.value.kind,
        value: p.value.value.clone(),
        pos,
    })
}

/// A host-routed app's paths are the rules of one HTTPRoute.
fn check_host_rule_count(
    file: &Path,
    paths: &[PathMatch],
    host_routed: bool,
    diags: &mut Diagnostics,
) {
    if Quotas::over_crd(paths.len()) && host_routed {
        diags.push(
            Diagnostic::error(
                Code::AppTooBig,
                format!(
                    "app has {} paths; an HTTPRoute holds at most {} rules",
                    paths.len(),
                    Quotas::crd_rules()
                ),
            )
            .at(span(file, paths[0].pos))
            .help("merge paths under a common prefix"),
        );
    }
}

fn validate_pin(
    file: &Path,
    group: Option<&Spanned<u32>>,
    host_routed: bool,
    diags: &mut Diagnostics,
) -> Option<(u32, Pos)> {
    let pin = group.map(|g| (g.value, Pos::of(g)));
    if let Some((g, pos)) = pin {
        if g == 0 {
            diags.push(
                Diagnostic::error(
                    Code::InvalidGroup,
                    "group 0 does not exist; groups start at 1",
                )
                .at(span(file, pos))
                .help("pin a group number of 1 or more, or remove `group`"),
            );
        }
        if host_routed {
            diags.push(
                Diagnostic::error(
                    Code::InvalidGroup,
                    "a host-routed app has its own route and no group",
                )
                .at(span(file, pos))
                .help("remove `group`, or remove `host` to share a group"),
            );
        }
    }
    pin
}

fn validate_health_check(
    file: &Path,
    health_check: Option<&Spanned<HealthCheck>>,
    diags: &mut Diagnostics,
) -> Option<HealthCheck> {
    health_check.map(|h| {
        if let Some(p) = &h.value.path {
            for prob in platform::path_problems(p) {
                diags.push(
                    Diagnostic::error(prob.code, format!("health check {}", prob.message))
                        .at(span(file, Pos::of(h)))
                        .help(prob.help),
                );
            }
        }
        if let Some(i) = h.value.interval_seconds
            && !(5..=300).contains(&i)
        {
            diags.push(
                Diagnostic::error(
                    Code::InvalidHealthCheck,
                    format!("interval {i}s is out of range"),
                )
                .at(span(file, Pos::of(h)))
                .help("Lattice health check intervals are 5 to 300 seconds"),
            );
        }
        h.value.clone()
    })
}

fn validate_config(config: &Config, file: &Path, diags: &mut Diagnostics) {
    let at = Span::file(file);
    check_priority_limit(config, &at, diags);
    let mut bad = |what: String, help: &str| {
        diags.push(
            Diagnostic::error(Code::InvalidConfig, what)
                .at(at.clone())
                .help(help.to_string()),
        );
    };
    check_quotas(config, &mut bad);
    check_config_names(config, &mut bad);
    check_kong_hostnames(config, &mut bad);
    check_observability(config, &mut bad);
}

/// `observability:`: settings the PrometheusRule and AccessLogPolicy CRDs would refuse, or
/// alerts that could never fire or always would.
fn check_observability(config: &Config, bad: &mut impl FnMut(String, &str)) {
    use crate::input::observability::{destination_problem, is_duration};
    let o = &config.observability;
    if let Some(logs) = &o.access_logs
        && let Some(p) = destination_problem(&logs.destination_arn)
    {
        bad(
            format!(
                "observability.accessLogs.destinationArn `{}` {p}",
                logs.destination_arn
            ),
            "give the ARN of an S3 bucket (arn:aws:s3:::bucket), a CloudWatch Logs log group or a Firehose delivery stream",
        );
    }
    let Some(p) = &o.prometheus else {
        return;
    };
    if !(p.budget_threshold > 0.0 && p.budget_threshold <= 1.0) {
        bad(
            format!(
                "observability.prometheus.budgetThreshold {} is not above 0 and at most 1",
                p.budget_threshold
            ),
            "give the share of the budget at which to alert, e.g. 0.8",
        );
    }
    if !(1..=16).contains(&p.zones) {
        bad(
            format!("observability.prometheus.zones {} is not 1 to 16", p.zones),
            "give the number of Availability Zones the service network's traffic comes through",
        );
    }
    if !is_duration(&p.for_) {
        bad(
            format!(
                "observability.prometheus.for `{}` is not a Prometheus duration",
                p.for_
            ),
            "write e.g. 10m, 1h30m or 90s",
        );
    }
    for (k, v) in &p.labels {
        if k.is_empty() || k.len() > 317 || v.len() > 63 {
            bad(
                format!("observability.prometheus.labels `{k}: {v}` is not a Kubernetes label"),
                "a label name is a DNS prefix and a name of at most 63 characters; a value at most 63",
            );
        }
    }
}

/// The header a group dispatches on: a header name Lattice can match, and one that nothing
/// between Kong's plugins and the Lattice rule sets, strips or takes from the client.
fn check_dispatch_header(loaded: &Loaded, file: &Path, diags: &mut Diagnostics) {
    let h = &loaded.config.lattice.dispatch_header;
    // Lower case, so that the name reads back from the manifests as it was written.
    let tchar =
        |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "!#$%&'*+-.^_`|~".contains(c);
    let problem = if h.is_empty() || !h.chars().all(tchar) {
        "is not a lowercase header name (letters, digits and `-`, no spaces)".to_string()
    } else if h.len() > platform::LATTICE_MAX_HEADER_NAME {
        "is longer than the 40 characters a Lattice header match takes".to_string()
    } else if h
        .to_ascii_lowercase()
        .starts_with(platform::LATTICE_RESERVED_HEADER_PREFIX)
    {
        "starts with `x-amzn-lattice-`, which Lattice strips from incoming requests".to_string()
    } else if let Some(why) = platform::dispatch_header_refusal(h) {
        format!("is a header that Kong's proxy, nginx or Lattice sets or strips: {why}")
    } else {
        return;
    };
    let places =
        crate::input::places::Places::settings(&loaded.config, file, loaded.sources.text(file));
    diags.push(
        Diagnostic::error(
            Code::InvalidConfig,
            format!("lattice.dispatchHeader `{h}` {problem}"),
        )
        .at(places.of(&["lattice", "dispatchHeader"]))
        .help("use a short header of your own, such as `x-latgen-app` (the default)"),
    );
}

/// `lattice.serviceNamePrefix`: a prefix that makes names Lattice refuses. (The placeholder
/// `init` writes is `check`'s finding: render names nothing with it.)
fn check_service_name_prefix(loaded: &Loaded, file: &Path, diags: &mut Diagnostics) {
    let Some(prefix) = &loaded.config.lattice.service_name_prefix else {
        return;
    };
    let places =
        crate::input::places::Places::settings(&loaded.config, file, loaded.sources.text(file));
    let at = &places.of(&["lattice", "serviceNamePrefix"]);
    if let Some(problem) = crate::input::config::prefix_problem(prefix) {
        diags.push(
            Diagnostic::error(
                Code::InvalidConfig,
                format!("lattice.serviceNamePrefix `{prefix}` makes Lattice service names such as `{prefix}-g01`, which {problem}"),
            )
            .at(at.clone())
            .help("use lowercase letters, digits and single hyphens, not starting with `svc-`, at most 36 characters (shorter leaves room for app names)"),
        );
    }
}

/// A Lattice listener has 100 rule priorities, whatever the account's quota says.
fn check_priority_limit(config: &Config, at: &Span, diags: &mut Diagnostics) {
    let q = &config.quotas;
    if q.over_priorities() {
        diags.push(
            Diagnostic::error(
                Code::PriorityLimit,
                format!(
                    "quotas.rulesPerService is {}, more than the {} rule priorities a Lattice listener has",
                    q.rules_per_service,
                    platform::LATTICE_MAX_PRIORITY
                ),
            )
            .at(at.clone())
            .help("set it to the account's Lattice rules-per-listener quota (at most 100)"),
        );
    }
}

/// Quotas that leave no room for a rule or a target group.
fn check_quotas(config: &Config, bad: &mut impl FnMut(String, &str)) {
    for (problem, help) in config.quotas.problems() {
        bad(problem, help);
    }
}

/// Namespaces, Gateway names, and the group names and domains the settings give.
fn check_config_names(config: &Config, bad: &mut impl FnMut(String, &str)) {
    for (what, v) in [
        ("lattice.namespace", &config.lattice.namespace),
        ("kong.namespace", &config.kong.namespace),
        ("lattice.gateway.name", &config.lattice.gateway.name),
        ("kong.gateway.name", &config.kong.gateway.name),
    ] {
        if let Some(p) = platform::dns1123_label_problem(v) {
            bad(format!("{what} `{v}` {p}"), "use a DNS-1123 label");
        }
    }
    let sample = config.group_name(1);
    if let Some(p) = platform::dns1123_label_problem(&sample) {
        bad(
            format!("lattice.groupPrefix gives group names like `{sample}`, which {p}"),
            "use a lowercase prefix such as `group-`",
        );
    }
    if let Some(p) = platform::hostname_problem(&config.group_domain(1)) {
        bad(
            format!("lattice.domain gives group domains that are not valid: {p}"),
            "use a lowercase internal domain such as `lattice.internal`",
        );
    }
}

fn check_kong_hostnames(config: &Config, bad: &mut impl FnMut(String, &str)) {
    for h in &config.kong.hostnames {
        if let Some(p) = platform::hostname_problem(h) {
            bad(
                format!("kong.hostnames: `{h}` {p}"),
                "give lowercase DNS names",
            );
        }
    }
    if config.kong.hostnames.len() > platform::CRD_MAX_HOSTNAMES {
        bad(
            format!(
                "kong.hostnames has {} entries; an HTTPRoute takes 16",
                config.kong.hostnames.len()
            ),
            "shorten the list",
        );
    }
}

fn check_unique_names(apps: &mut Vec<App>, diags: &mut Diagnostics) {
    // Sorted by name, an app declared twice follows its first declaration.
    let mut first = 0;
    let mut drop = Vec::new();
    for (i, app) in apps.iter().enumerate() {
        if i > 0 && apps[first].name == app.name {
            let other = &apps[first];
            diags.push(
                Diagnostic::error(
                    Code::DuplicateApp,
                    format!("app `{}` is declared twice", app.name),
                )
                .at(span(&app.file, app.name_pos))
                .related(span(&other.file, other.name_pos), "also declared here")
                .help("give each app a unique name (`name:` or the file name)"),
            );
            drop.push(i);
        } else {
            first = i;
        }
    }
    for i in drop.into_iter().rev() {
        apps.remove(i);
    }
}

/// Two apps may not claim the same match on the same host: path-routed apps share Kong's
/// host space, host-routed apps each have their own.
fn check_path_claims(apps: &[App], diags: &mut Diagnostics) {
    // Only looked up, never listed: the findings follow the apps' order.
    let mut claims: HashMap<(Option<&str>, MatchKind, &str), &App> = HashMap::new();
    let mut hosts: HashMap<&str, &App> = HashMap::new();
    for app in apps {
        if let Some(h) = &app.host
            && let Some(other) = hosts.insert(h, app)
        {
            diags.push(
                Diagnostic::error(
                    Code::DuplicateHost,
                    format!(
                        "host `{h}` is served by two apps, {}",
                        pair(&app.name, &other.name)
                    ),
                )
                .at(span(&app.file, app.name_pos))
                .related(span(&other.file, other.name_pos), "the other app")
                .help(
                    "a host gets one dedicated Lattice service: merge the apps or use another host",
                ),
            );
        }
        for p in &app.paths {
            let key = (app.host.as_deref(), p.kind, p.value.as_str());
            if let Some(other) = claims.get(&key) {
                let op = other
                    .paths
                    .iter()
                    .find(|q| q.kind == p.kind && q.value == p.value);
                diags.push(
                    Diagnostic::error(
                        Code::PathConflict,
                        format!(
                            "path `{}` is claimed by two apps, {}",
                            p.value,
                            pair(&app.name, &other.name)
                        ),
                    )
                    .at(span(&app.file, p.pos))
                    .related(
                        span(&other.file, op.map(|q| q.pos).unwrap_or_default()),
                        "claimed here",
                    )
                    .help("each path belongs to one app; remove it from one of them"),
                );
            } else {
                claims.insert(key, app);
            }
        }
    }
}

/// Two apps named in name order: the finding reads the same whichever of their files it
/// is placed on (`check --base` places it on the one the change touched).
fn pair(a: &str, b: &str) -> String {
    let (first, second) = if a <= b { (a, b) } else { (b, a) };
    format!("`{first}` and `{second}`")
}

/// The controller derives the Lattice service name from the route's name and namespace,
/// truncated; two dedicated routes whose names collide would share one Lattice service.
/// With `lattice.serviceNamePrefix` set, names are the plan's business (crate::plan::services).
fn check_service_name_collisions(apps: &[App], config: &Config, diags: &mut Diagnostics) {
    if config.lattice.service_name_prefix.is_some() {
        return;
    }
    let mut seen: BTreeMap<String, &App> = BTreeMap::new();
    for app in apps.iter().filter(|a| a.host.is_some()) {
        let svc = platform::lattice_service_name(&app.name, &app.namespace);
        if let Some(p) = platform::lattice_service_name_problem(&svc) {
            diags.push(
                Diagnostic::error(
                    Code::InvalidLatticeName,
                    format!("the Lattice service name of app `{}` would be `{svc}`, which {p}", app.name),
                )
                .at(span(&app.file, app.name_pos))
                .help("rename the app (the controller uses 20 characters of it and 18 of the namespace)"),
            );
        }
        if let Some(other) = seen.insert(svc.clone(), app) {
            diags.push(
                Diagnostic::error(
                    Code::LatticeNameCollision,
                    format!(
                        "apps `{}` and `{}` get the same Lattice service name `{svc}`",
                        other.name, app.name
                    ),
                )
                .at(span(&app.file, app.name_pos))
                .related(span(&other.file, other.name_pos), "the other app")
                .help("the controller keeps 20 characters of the route name: make them differ earlier"),
            );
        }
    }
    let groups_ns = &config.lattice.namespace;
    let group_svc = platform::lattice_service_name(&config.group_name(1), groups_ns);
    if let Some(p) = platform::lattice_service_name_problem(&group_svc) {
        diags.push(
            Diagnostic::error(
                Code::InvalidLatticeName,
                format!("shared groups get Lattice service names like `{group_svc}`, which {p}"),
            )
            .help("shorten lattice.groupPrefix or lattice.namespace in latgen.yaml"),
        );
    }
}
