//! `previews/*.yaml`: each preview names a declared app, a Service Lattice can target and
//! a day it ends; its name makes a Kong route and bridge name and a host from
//! `previews.host`. Two previews of one app never share a name.

use std::collections::BTreeMap;
use std::path::Path;

use serde_saphyr::Spanned;

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span, did_you_mean};
use crate::input::Loaded;
use crate::input::app::{App, AppId, Pos};
use crate::input::previews::{LoadedPreview, Preview, host_of, route_name};
use latgen_sim::platform;

fn at<T>(file: &Path, s: &Spanned<T>) -> Span {
    Span::new(file, Pos::of(s).line, Pos::of(s).column)
}

/// The previews that can be planned; problems go to `diags`.
pub(crate) fn validate_previews(
    loaded: &Loaded,
    apps: &[App],
    config_file: &Path,
    diags: &mut Diagnostics,
) -> Vec<Preview> {
    if loaded.previews.is_empty() {
        return Vec::new();
    }
    let Some(settings) = &loaded.config.previews else {
        diags.push(
            Diagnostic::error(
                Code::InvalidConfig,
                "previews/ holds previews but latgen.yaml has no `previews.host` to make their hosts",
            )
            .at(Span::file(config_file))
            .help("set `previews: { host: \"{name}.{app}.preview.example.com\" }` in latgen.yaml, under a domain whose DNS points at Kong"),
        );
        return Vec::new();
    };
    let by_name: BTreeMap<&str, AppId> = AppId::enumerate(apps)
        .map(|(id, a)| (a.name.as_str(), id))
        .collect();
    let mut seen: BTreeMap<String, &Path> = BTreeMap::new();
    let mut out = Vec::new();
    for p in &loaded.previews {
        let Some(preview) = validate_one(p, apps, &by_name, &settings.host, loaded, diags) else {
            continue;
        };
        if let Some(first) = seen.insert(preview.key(), &p.file) {
            diags.push(
                Diagnostic::error(
                    Code::InvalidValue,
                    format!(
                        "preview `{}` of app `{}` is declared twice (also in {})",
                        preview.name,
                        preview.app_name,
                        first.display()
                    ),
                )
                .at(at(&p.file, &p.decl.name))
                .help("give each preview of an app its own name"),
            );
            continue;
        }
        out.push(preview);
    }
    out.sort_by_key(Preview::key);
    out
}

fn validate_one(
    p: &LoadedPreview,
    apps: &[App],
    by_name: &BTreeMap<&str, AppId>,
    pattern: &str,
    loaded: &Loaded,
    diags: &mut Diagnostics,
) -> Option<Preview> {
    let (file, d) = (&p.file, &p.decl);
    let before = diags.len();
    let app = by_name.get(d.app.value.as_str()).copied();
    if app.is_none() {
        let mut diag = Diagnostic::error(
            Code::PreviewUnknownApp,
            format!(
                "preview `{}` is of app `{}`, which no declaration under apps/ declares",
                d.name.value, d.app.value
            ),
        )
        .at(at(file, &d.app));
        diag = match did_you_mean(&d.app.value, by_name.keys().copied()) {
            Some(s) => diag.help(format!("did you mean `{s}`?")),
            None => diag.help("name the app the preview is a build of, or delete the preview"),
        };
        diags.push(diag);
    }
    let (name, app_name) = (&d.name.value, d.app.value.as_str());
    check_name(file, d, by_name, diags);
    if let Some(problem) = platform::dns1123_label_problem(&d.service.value) {
        diags.push(
            Diagnostic::error(
                Code::InvalidService,
                format!("service name `{}` {problem}", d.service.value),
            )
            .at(at(file, &d.service))
            .help("give the Service that runs the preview's build, in the app's namespace"),
        );
    }
    if let Some(port) = &d.port
        && !(1..=65535).contains(&port.value)
    {
        diags.push(
            Diagnostic::error(
                Code::InvalidPort,
                format!("port {} is out of range", port.value),
            )
            .at(at(file, port))
            .help("give the preview Service's port, 1 to 65535"),
        );
    }
    let expires = check_expires(file, &d.expires, diags);
    let host = host_of(pattern, name, app_name);
    // A bad name already explains a bad host.
    let named = diags.len() == before;
    if let Some(problem) = host_problem(pattern, &host, loaded).filter(|_| named) {
        diags.push(
            Diagnostic::error(Code::InvalidHost, format!("preview host `{host}` {problem}"))
                .at(at(file, &d.name))
                .help("`previews.host` in latgen.yaml makes each preview's host from `{name}` and `{app}`, e.g. `{name}.{app}.preview.example.com`"),
        );
    }
    if diags.len() == before {
        production_claim(file, d, &host, apps, loaded, diags);
    }
    if diags.len() > before {
        return None;
    }
    let app = app?;
    Some(Preview {
        app,
        app_name: app_name.to_string(),
        name: name.clone(),
        namespace: apps[app].namespace.clone(),
        service: d.service.value.clone(),
        port: d.port.as_ref().map_or(apps[app].port, |p| p.value as u16),
        expires: expires?,
        host,
        file: file.clone(),
        name_pos: Pos::of(&d.name),
    })
}

/// The preview's last day; None, with the finding, when it is not a day written as the
/// declarations say.
fn check_expires(
    file: &Path,
    expires: &Spanned<String>,
    diags: &mut Diagnostics,
) -> Option<jiff::civil::Date> {
    let problem = match date_of(&expires.value) {
        Ok(day) => return Some(day),
        Err(problem) => problem,
    };
    diags.push(
        Diagnostic::error(Code::InvalidValue, format!("`{}` {problem}", expires.value))
            .at(at(file, expires))
            .help("give the last day the preview is wanted as YYYY-MM-DD, e.g. 2026-12-31"),
    );
    None
}

/// A day written as `YYYY-MM-DD`, the one form the declarations document. The date parser
/// alone also takes ISO 8601's other forms (`20201231`, `2020-12-31 23:59`), which a
/// reviewer would read as something else than the day compared (is `23:59` UTC?).
fn date_of(text: &str) -> Result<jiff::civil::Date, &'static str> {
    let b = text.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    let shaped = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && digits(0..4)
        && digits(5..7)
        && digits(8..10);
    if !shaped {
        return Err("is not written YYYY-MM-DD (a day alone, no time)");
    }
    text.parse().map_err(|_| "is not a date")
}

/// The preview's name is a label, and makes a Kong route and bridge name that is one too
/// and is no app's name.
fn check_name(
    file: &Path,
    d: &crate::input::previews::PreviewDecl,
    by_name: &BTreeMap<&str, AppId>,
    diags: &mut Diagnostics,
) {
    let (name, app_name) = (&d.name.value, d.app.value.as_str());
    if let Some(problem) = platform::dns1123_label_problem(name) {
        diags.push(
            Diagnostic::error(
                Code::InvalidValue,
                format!("preview name `{name}` {problem}"),
            )
            .at(at(file, &d.name))
            .help("name the preview like `pr-123`: lowercase letters, digits and `-`"),
        );
    } else if let Some(problem) = platform::dns1123_label_problem(&route_name(name, app_name)) {
        diags.push(
            Diagnostic::error(
                Code::InvalidValue,
                format!(
                    "preview `{name}` of app `{app_name}` makes the Kong route and bridge name `{}`, which {problem}",
                    route_name(name, app_name)
                ),
            )
            .at(at(file, &d.name))
            .help("use a shorter preview name"),
        );
    }
    if by_name.contains_key(route_name(name, app_name).as_str()) {
        diags.push(
            Diagnostic::error(
                Code::InvalidValue,
                format!(
                    "preview `{name}` of app `{app_name}` would write a Kong route `{}`, an app's name",
                    route_name(name, app_name)
                ),
            )
            .at(at(file, &d.name))
            .help("give the preview another name"),
        );
    }
}

/// What is wrong with a preview's host: the pattern does not name the preview and its app
/// (two previews would share a host), the host is no DNS name, or it is under the Lattice
/// domain.
fn host_problem(pattern: &str, host: &str, loaded: &Loaded) -> Option<String> {
    if !pattern.contains("{name}") || !pattern.contains("{app}") {
        return Some(format!(
            "comes from `previews.host: {pattern}`, which must hold both `{{name}}` and `{{app}}`"
        ));
    }
    if let Some(p) = platform::hostname_problem(host) {
        return Some(p);
    }
    let domain = &loaded.config.lattice.domain;
    (host == domain || host.ends_with(&format!(".{domain}")))
        .then(|| format!("is under the Lattice domain `{domain}`"))
}

/// A preview's host that production answers on too: the preview's Kong route names the
/// host with a `/` prefix, so Kong would send it the requests meant for production there
/// (`kong.hostnames`, the shared host) or for a host-routed app.
fn production_claim(
    file: &Path,
    d: &crate::input::previews::PreviewDecl,
    host: &str,
    apps: &[App],
    loaded: &Loaded,
    diags: &mut Diagnostics,
) {
    let claim = if loaded.config.kong.hostnames.iter().any(|h| h == host) {
        Some((
            "is in `kong.hostnames` in latgen.yaml, the path-routed apps' shared host".to_string(),
            None,
        ))
    } else {
        apps.iter().find_map(|a| {
            let how = if a.host.as_deref() == Some(host) {
                "the host"
            } else if a.kong.hosts.iter().any(|h| h == host) {
                "in the kong.hosts"
            } else {
                return None;
            };
            let at = Span::new(&a.file, a.name_pos.line, a.name_pos.column);
            Some((format!("is {how} of app `{}`", a.name), Some(at)))
        })
    };
    let Some((problem, app_at)) = claim else {
        return;
    };
    let mut diag = Diagnostic::error(
        Code::DuplicateHost,
        format!(
            "preview `{}` of app `{}` has the host `{host}`, which {problem}: its Kong route would take production's requests there",
            d.name.value, d.app.value
        ),
    )
    .at(at(file, &d.name))
    .help("give the preview another name, or change `previews.host` in latgen.yaml so that previews live under a domain of their own, e.g. `{name}.{app}.preview.example.com`");
    if let Some(app_at) = app_at {
        diag = diag.related(app_at, "the app answering on that host");
    }
    diags.push(diag);
}
