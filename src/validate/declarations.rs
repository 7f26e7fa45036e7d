//! Each declaration on its own: whether it runs in this environment, and every value of it
//! against what Kubernetes, Lattice and Kong accept; the apps that pass, sorted by name.

use std::path::Path;

use serde_saphyr::Spanned;

use super::claims::{
    check_adopted_routes, check_path_claims, check_service_name_collisions, check_unique_names,
};
use super::env_overrides::{self, Effective};
use super::paths::{
    check_host_rule_count, span, validate_health_check, validate_host, validate_paths, validate_pin,
};
use super::settings::{check_dispatch_header, check_service_name_prefix, validate_config};
use super::{canary_backend, kong_settings, principals};
use crate::diag::codes::Code;
use crate::diag::codes::Severity;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::app::{App, BRIDGE_SUFFIX, MAX_PEAK_RPS, Pos, ServiceDecl};
use crate::input::config::Config;
use crate::input::{Loaded, LoadedDecl};
use latgen_sim::platform;

/// The apps the declarations make, in name order; every problem found goes to `diags`.
pub fn validate(loaded: &Loaded, config_file: &Path, diags: &mut Diagnostics) -> Vec<App> {
    validate_config(&loaded.config, config_file, diags);
    principals::validate_auth_config(
        &loaded.config,
        config_file,
        loaded.sources.text(config_file),
        diags,
    );
    check_service_name_prefix(loaded, config_file, diags);
    check_dispatch_header(loaded, config_file, diags);
    kong_settings::check_route_defaults(loaded, config_file, diags);
    // Each declaration on its own, in parallel; the findings merged in declaration order.
    use rayon::prelude::*;
    let checked: Vec<(Option<App>, Diagnostics)> = (loaded.decls.par_iter())
        .with_max_len(crate::diag::PIECE)
        .map(|d| {
            let mut found = Diagnostics::new();
            env_overrides::check_names(d, loaded, &mut found);
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
    kong_settings::check_host_claims(&apps, diags);
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

fn validate_app(d: &LoadedDecl, config: &Config, diags: &mut Diagnostics) -> Option<App> {
    let file = &d.file;
    let before = diags.count(Severity::Error);
    let decl = &d.decl;
    // The fields an environment may override, as the environment being read has them.
    let here = Effective::of(decl, config.env_name());

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
    if here.host.is_some() {
        check_not_a_service_suffix(&name, config, name_at, diags);
    }
    check_namespace(file, &decl.namespace, diags);
    let svc = &decl.service.value;
    check_service(file, svc, diags);
    let host = validate_host(file, here.host, config, diags);
    let paths = validate_paths(file, here.paths, here.host, diags);
    check_host_rule_count(file, &paths, host.is_some(), diags);
    let pin = validate_pin(file, decl.group.as_ref(), host.is_some(), diags);
    let health_check = validate_health_check(file, decl.health_check.as_ref(), diags);
    check_peak_rps(file, decl.peak_rps.as_ref(), diags);
    principals::check_paths(file, &paths, config, diags);
    let callers = principals::validate_callers(file, here.callers, config, diags);
    let kong = kong_settings::validate_app_kong(file, host.as_deref(), config, here.kong, diags);
    let canary = canary_backend::validate_canary(file, svc, here.canary, diags);

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
        peak_rps_pos: decl.peak_rps.as_ref().map_or(Pos::default(), Pos::of),
        isolate: decl.isolate,
        health_check,
        callers,
        kong,
        canary,
        adopted: None,
    })
}

/// `peakRps` above any rate an app serves: a typo or a counter's value rather than a rate,
/// and as a peak it would overflow the sums the plan makes. A peak above a Lattice
/// service's budget but within this is the app's own finding (`app-over-budget`), made by the
/// plan, which knows where the app is.
fn check_peak_rps(file: &Path, rps: Option<&Spanned<u64>>, diags: &mut Diagnostics) {
    let Some(rps) = rps.filter(|r| r.value > MAX_PEAK_RPS) else {
        return;
    };
    diags.push(
        Diagnostic::error(
            Code::InvalidValue,
            format!(
                "peakRps {} is more requests per second than any app serves (at most {MAX_PEAK_RPS})",
                rps.value
            ),
        )
        .at(span(file, Pos::of(rps)))
        .help("declare the app's peak in requests per second, e.g. the highest 5-minute rate of a week"),
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
