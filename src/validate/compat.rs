//! Settings that are each valid but cannot work together, or with what the clusters serve:
//! Kong speaking a protocol or port the Lattice listener does not take
//! (`protocol-mismatch`), output in an API version the configured Gateway API CRDs do not
//! serve (`crd-version`), and — for a project that deploys with latgen's kit — dedicated
//! hosts with no word on how they resolve inside the gateway's VPC (`dns-unacknowledged`).
//! Run with the shared stages, so `render`, `check` and `manifests` all report them.

use std::cell::OnceCell;
use std::path::Path;

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::app::App;
use crate::input::config::{Config, Protocol};
use crate::input::places::Places;

/// The oldest Gateway API CRD release that serves ReferenceGrant `v1`.
pub(crate) const REFERENCE_GRANT_V1_SINCE: (u32, u32) = (1, 5);
/// The oldest Gateway API CRD release that serves HTTPRoute `v1`.
pub(crate) const HTTP_ROUTE_V1_SINCE: (u32, u32) = (1, 0);

/// Every finding about the settings' combination; `text` is latgen.yaml as read (for the
/// places), None when there is no file.
pub(crate) fn check(
    config: &Config,
    apps: &[App],
    file: &Path,
    text: Option<&str>,
    diags: &mut Diagnostics,
) {
    let places = OnceCell::new();
    // The place of a setting written in the file; None when it has its default.
    let at = |path: &[&str]| {
        let p = places.get_or_init(|| Places::settings(config, file, text));
        p.is_written(path).then(|| p.of(path))
    };
    // Where the key of a setting or section is written (the line to add a setting under).
    let key_at = |path: &[&str]| {
        places
            .get_or_init(|| Places::settings(config, file, text))
            .key_of(path)
    };
    if let Some(d) = protocol_mismatch(config, &at, file) {
        diags.push(d);
    }
    if let Some(d) = crd_version(config, &at, file) {
        diags.push(d);
    }
    if let Some(d) = dns_unacknowledged(config, apps, &at, &key_at, file) {
        diags.push(d);
    }
    for d in deploy_names(config, &at, file) {
        diags.push(d);
    }
}

/// The deploy kit's object names: the AppProject, the Applications (`<project>-lattice`)
/// and Argo CD's namespace must be names Kubernetes takes.
fn deploy_names(
    config: &Config,
    at: &dyn Fn(&[&str]) -> Option<Span>,
    file: &Path,
) -> Vec<Diagnostic> {
    let Some(deploy) = &config.deploy else {
        return Vec::new();
    };
    let longest = format!("{}-lattice", deploy.project);
    [
        ("project", &deploy.project, longest.as_str()),
        (
            "argocdNamespace",
            &deploy.argocd_namespace,
            deploy.argocd_namespace.as_str(),
        ),
    ]
    .into_iter()
    .filter_map(|(key, value, checked)| {
        let problem = latgen_sim::platform::dns1123_label_problem(checked)?;
        let what = if checked == value.as_str() {
            format!("deploy.{key} `{value}` {problem}")
        } else {
            format!("deploy.{key} `{value}` names the Application `{checked}`, which {problem}")
        };
        Some(
            Diagnostic::error(Code::InvalidConfig, what)
                .at(at(&["deploy", key]).unwrap_or_else(|| Span::file(file)))
                .help("use a DNS-1123 label: lowercase letters, digits and `-`"),
        )
    })
    .collect()
}

/// The protocol and port of the Lattice listener the routes attach to, and what says so;
/// None when latgen cannot know (a listener named otherwise, or every listener).
pub(crate) fn lattice_listener(config: &Config) -> Option<(Protocol, u16, &'static str)> {
    if let Some(l) = &config.lattice.listener {
        return Some((l.protocol, l.port, "lattice.listener"));
    }
    match config.lattice.gateway.section_name.as_deref() {
        Some("http") => Some((Protocol::Http, 80, "lattice.gateway.sectionName")),
        Some("https") => Some((Protocol::Https, 443, "lattice.gateway.sectionName")),
        _ => None,
    }
}

fn protocol_mismatch(
    config: &Config,
    at: &dyn Fn(&[&str]) -> Option<Span>,
    file: &Path,
) -> Option<Diagnostic> {
    let (protocol, port, said_by) = lattice_listener(config)?;
    let kong = &config.kong;
    let kong_port = kong.upstream_port();
    if kong.protocol == protocol && kong_port == port {
        return None;
    }
    let upper = |p: Protocol| p.as_str().to_ascii_uppercase();
    let listener = match &config.lattice.gateway.section_name {
        Some(name) => format!("listener `{name}`"),
        None => "every listener".to_string(),
    };
    let (kong_at, what) = if kong.protocol == protocol {
        (at(&["kong", "port"]), "port")
    } else {
        (at(&["kong", "protocol"]), "protocol")
    };
    let listener_at = if said_by == "lattice.listener" {
        at(&["lattice", "listener"])
    } else {
        at(&["lattice", "gateway", "sectionName"])
    };
    let defaulted = if listener_at.is_none() {
        ", by default"
    } else {
        ""
    };
    let fix = if kong.protocol == Protocol::Https && protocol == Protocol::Http {
        "attach the Lattice routes to the Lattice Gateway's HTTPS listener (`lattice.gateway.sectionName: https`, with a certificate for the custom domains), or set `kong.protocol: http`"
    } else if kong.protocol == Protocol::Http && protocol == Protocol::Https {
        "set `kong.protocol: https`, or attach the Lattice routes to the Gateway's HTTP listener (`lattice.gateway.sectionName: http`)"
    } else {
        "make `kong.port` the listener's port, or attach the routes to the listener on Kong's port; when the listener is named otherwise, give its protocol and port in `lattice.listener`"
    };
    let message = format!(
        "Kong speaks {} to port {kong_port}, but the Lattice routes attach to {listener}, which takes {} on port {port} ({said_by}{defaulted}): no Lattice service would answer Kong (the {what}s differ)",
        upper(kong.protocol),
        upper(protocol),
    );
    let d = Diagnostic::error(Code::ProtocolMismatch, message)
        .at(kong_at.unwrap_or_else(|| Span::file(file)))
        .help(fix);
    Some(match listener_at {
        Some(place) => d.related(place, "the Lattice listener"),
        None => d,
    })
}

/// A `MAJOR.MINOR` release from `1.5`, `v1.5.1` or `1.5.0-rc.1`.
pub(crate) fn parse_release(text: &str) -> Option<(u32, u32)> {
    let t = text.trim().strip_prefix('v').unwrap_or(text.trim());
    let t = t.split_once('-').map_or(t, |(v, _)| v);
    let mut parts = t.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    match parts.next() {
        Some(patch) if patch.parse::<u32>().is_err() => return None,
        _ => {}
    }
    parts.next().is_none().then_some((major, minor))
}

fn crd_version(
    config: &Config,
    at: &dyn Fn(&[&str]) -> Option<Span>,
    file: &Path,
) -> Option<Diagnostic> {
    let text = &config.gateway_api.crd_version;
    let place = || at(&["gatewayApi", "crdVersion"]).unwrap_or_else(|| Span::file(file));
    let Some(release) = parse_release(text) else {
        return Some(
            Diagnostic::error(
                Code::InvalidConfig,
                format!(
                    "gatewayApi.crdVersion `{text}` is not a release such as `1.5` or `v1.5.1`"
                ),
            )
            .at(place())
            .help("give the Gateway API CRD release installed in the clusters, quoted: \"1.5\""),
        );
    };
    // What the output holds in gateway.networking.k8s.io/v1, and since when it is served.
    let mut kinds = vec![("HTTPRoute", HTTP_ROUTE_V1_SINCE)];
    if config.lattice.reference_grants {
        kinds.push(("ReferenceGrant", REFERENCE_GRANT_V1_SINCE));
    }
    let unserved: Vec<String> = kinds
        .iter()
        .filter(|(_, since)| release < *since)
        .map(|(kind, since)| format!("{kind} (served from {}.{})", since.0, since.1))
        .collect();
    let needed = kinds
        .iter()
        .filter(|(_, since)| release < *since)
        .map(|(_, since)| *since)
        .max()?;
    let mut d = Diagnostic::error(
        Code::CrdVersion,
        format!(
            "gatewayApi.crdVersion says the clusters have Gateway API CRDs {}.{}, which do not serve {} in gateway.networking.k8s.io/v1, and the output holds them: Argo CD could not apply it",
            release.0,
            release.1,
            unserved.join(" or "),
        ),
    )
    .at(place());
    d = if config.lattice.reference_grants && release >= HTTP_ROUTE_V1_SINCE {
        if let Some(place) = at(&["lattice", "referenceGrants"]) {
            d = d.related(place, "ReferenceGrants are on");
        }
        d.help("upgrade the Gateway API CRDs to 1.5 or newer and set gatewayApi.crdVersion, or set `lattice.referenceGrants: false` (the AWS controller does not enforce ReferenceGrants)")
    } else {
        d.help(format!(
            "upgrade the Gateway API CRDs to {}.{} or newer and set gatewayApi.crdVersion",
            needed.0, needed.1
        ))
    };
    Some(d)
}

fn dns_unacknowledged(
    config: &Config,
    apps: &[App],
    at: &dyn Fn(&[&str]) -> Option<Span>,
    key_at: &dyn Fn(&[&str]) -> Option<Span>,
    file: &Path,
) -> Option<Diagnostic> {
    // Under header dispatch a host-routed app's bridge points at its group, not its host.
    if config.deploy.is_none()
        || config.lattice.dedicated_hosts.is_some()
        || config.header_dispatch()
    {
        return None;
    }
    let hosted: Vec<&App> = apps.iter().filter(|a| a.host.is_some()).collect();
    let first = hosted.first()?;
    let host = first.host.as_deref().unwrap_or_default();
    let others = match hosted.len() {
        1 => String::new(),
        2 => " and 1 other app".to_string(),
        n => format!(" and {} other apps", n - 1),
    };
    let mut d = Diagnostic::warning(
        Code::DnsUnacknowledged,
        format!(
            "app `{}`{others} answer{} on a host of {} own ({host}), and latgen.yaml does not say how such a host resolves inside the gateway cluster's VPC: unless it resolves to the app's Lattice service there, Kong sends the request to its own public load balancer and it loops",
            first.name,
            if hosted.len() == 1 { "s" } else { "" },
            if hosted.len() == 1 { "its" } else { "their" },
        ),
    )
    .at(dns_place(at, key_at, file))
    .help("point each dedicated host at its Lattice service's domain name in a Route 53 private hosted zone on the gateway VPC (or in the gateway cluster's DNS), then say so: `lattice.dedicatedHosts: privateZone` (or `clusterDns`)");
    for app in &hosted {
        d = d.related(
            Span::file(&app.file),
            format!(
                "{} on {}",
                app.name,
                app.host.as_deref().unwrap_or_default()
            ),
        );
    }
    Some(d)
}

/// Where `dns-unacknowledged` points: where the acknowledgement is to be written. The DNS
/// itself is set up outside the repository, and the one line a person then writes is
/// `lattice.dedicatedHosts` in latgen.yaml, so the finding points there rather than at an
/// app (the apps are its related places): at the setting when it is written without a
/// value; else at the `lattice:` line it goes under (not at the section's value, which
/// is its first setting, e.g. `gateway:`, a setting the finding is not about); else, with
/// no `lattice:` section, at the file.
fn dns_place(
    at: &dyn Fn(&[&str]) -> Option<Span>,
    key_at: &dyn Fn(&[&str]) -> Option<Span>,
    file: &Path,
) -> Span {
    at(&["lattice", "dedicatedHosts"])
        .or_else(|| key_at(&["lattice"]))
        .unwrap_or_else(|| Span::file(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases() {
        assert_eq!(parse_release("1.5"), Some((1, 5)));
        assert_eq!(parse_release("v1.5.1"), Some((1, 5)));
        assert_eq!(parse_release("1.4.0-rc.1"), Some((1, 4)));
        assert_eq!(parse_release("1.10"), Some((1, 10)));
        for bad in ["1", "1.x", "1.5.x", "1.5.1.2", "", "latest"] {
            assert_eq!(parse_release(bad), None, "{bad}");
        }
        assert!(parse_release("1.4") < Some(REFERENCE_GRANT_V1_SINCE));
        assert!(parse_release("1.10") > Some(REFERENCE_GRANT_V1_SINCE));
    }

    #[test]
    fn the_defaults_work_together() {
        let c = Config::default();
        let mut diags = Diagnostics::new();
        check(&c, &[], Path::new("latgen.yaml"), None, &mut diags);
        assert!(diags.is_empty(), "{diags:?}");
    }

    #[test]
    fn dns_unacknowledged_points_at_the_lattice_section_not_its_gateway() {
        let text = "# settings\n\nlattice:\n  # the Gateway\n  gateway:\n    name: lattice-gateway\ndeploy:\n  repoURL: https://git.example.com/r.git\n";
        let config: Config = serde_saphyr::from_str(text).unwrap();
        let app = App {
            host: Some("www.example.com".into()),
            ..App::sample("www", &[])
        };
        let mut diags = Diagnostics::new();
        check(
            &config,
            &[app],
            Path::new("latgen.yaml"),
            Some(text),
            &mut diags,
        );
        let d = diags.iter().find(|d| d.code == Code::DnsUnacknowledged);
        let span = d
            .and_then(|d| d.span.as_ref())
            .expect("a dns-unacknowledged finding");
        assert_eq!((span.line, span.column), (3, 1), "{span}");
    }

    #[test]
    fn the_listener_is_read_from_its_name_or_given() {
        let mut c = Config::default();
        assert_eq!(
            lattice_listener(&c),
            Some((Protocol::Http, 80, "lattice.gateway.sectionName"))
        );
        c.lattice.gateway.section_name = Some("web".into());
        assert_eq!(lattice_listener(&c), None);
        c.lattice.listener = Some(crate::input::config::Listener {
            protocol: Protocol::Https,
            port: 8443,
        });
        assert_eq!(lattice_listener(&c).map(|l| l.1), Some(8443));
    }
}
