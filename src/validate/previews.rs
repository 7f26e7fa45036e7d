//! `previews/*.yaml`: each preview names a declared app, a Service Lattice can target and
//! a day it ends; its name makes a Kong route and bridge name and a host from
//! `previews.host`. Two previews of one app never share a name.

use std::collections::BTreeMap;
use std::path::Path;

use serde_saphyr::Spanned;

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span, did_you_mean};
use crate::input::Loaded;
use crate::input::model::{App, AppId, Pos};
use crate::input::platform;
use crate::input::previews::{LoadedPreview, Preview, host_of, route_name};

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
    let expires = d.expires.value.parse::<jiff::civil::Date>().ok();
    if expires.is_none() {
        diags.push(
            Diagnostic::error(
                Code::InvalidValue,
                format!("`{}` is not a date", d.expires.value),
            )
            .at(at(file, &d.expires))
            .help("give the last day the preview is wanted as YYYY-MM-DD, e.g. 2026-12-31"),
        );
    }
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
