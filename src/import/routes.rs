//! What each kind of existing object says, in latgen's terms, or why it cannot be said:
//! a Kong route (an app's paths, the host it rewrites to, its bridge), a bridge (where it
//! resolves, Kong's timeouts), a Lattice route (its hostnames and rules) and a
//! TargetGroupPolicy (a health check).

use serde_json::Value;

use super::read::Object;
use crate::input::app::MatchKind;
use crate::input::config::{Config, GatewayRef};

/// A refusal: what cannot be expressed, and what to do.
pub(crate) type Refusal = (String, String);

fn refuse(what: impl Into<String>, help: impl Into<String>) -> Refusal {
    (what.into(), help.into())
}

/// One path match.
pub(crate) type Path = (MatchKind, String);

/// An app's Kong route.
#[derive(Debug)]
pub(crate) struct KongSide {
    pub paths: Vec<Path>,
    pub hostnames: Vec<String>,
    /// The URLRewrite hostname: the Lattice service's domain.
    pub rewrite: String,
    pub bridge: String,
    pub port: u64,
    pub plugins: Vec<String>,
}

/// A Lattice rule: its match and its one backend (namespace as written, if any).
#[derive(Debug, Clone)]
pub(crate) struct LatticeRule {
    pub path: Path,
    pub service: String,
    pub namespace: Option<String>,
    pub port: u64,
}

/// Whether `obj` is an HTTPRoute whose every parent is `gateway`.
pub(crate) fn parented_to(obj: &Object, gateway: &GatewayRef) -> bool {
    let spec = obj.spec();
    let parents = spec["parentRefs"].as_array();
    parents.is_some_and(|ps| {
        !ps.is_empty()
            && ps.iter().all(|p| {
                let ns = p["namespace"].as_str().or(obj.namespace.as_deref());
                p["name"].as_str() == Some(gateway.name.as_str())
                    && (gateway.namespace.is_none() || ns == gateway.namespace.as_deref())
                    && p["kind"].as_str().is_none_or(|k| k == "Gateway")
            })
    })
}

/// The fields of `value` other than `known`.
fn unknown<'a>(value: &'a Value, known: &[&str]) -> Vec<&'a str> {
    value.as_object().map_or_else(Vec::new, |m| {
        m.keys()
            .map(String::as_str)
            .filter(|k| !known.contains(k))
            .collect()
    })
}

fn path_of(m: &Value) -> Result<Path, Refusal> {
    if let Some(extra) = unknown(m, &["path"]).first() {
        return Err(refuse(
            format!("a match on `{extra}`: latgen routes by path alone"),
            "drop the match, or keep this route out of the import",
        ));
    }
    let kind = match m["path"]["type"].as_str().unwrap_or("PathPrefix") {
        "PathPrefix" => MatchKind::Prefix,
        "Exact" => MatchKind::Exact,
        other => {
            return Err(refuse(
                format!("a path match of type {other}: latgen writes PathPrefix and Exact"),
                "keep this route out of the import",
            ));
        }
    };
    Ok((kind, m["path"]["value"].as_str().unwrap_or("/").to_string()))
}

fn backend_of(rule: &Value) -> Result<(String, Option<String>, u64), Refusal> {
    let refs = rule["backendRefs"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let [b] = refs else {
        return Err(refuse(
            format!(
                "a rule with {} backends: latgen writes one per rule",
                refs.len()
            ),
            "split the traffic before the import (a canary is declared with `canary:` afterwards)",
        ));
    };
    let kind_ok = b["kind"].as_str().is_none_or(|k| k == "Service")
        && b["group"].as_str().is_none_or(str::is_empty);
    if !kind_ok || b["filters"].is_array() {
        return Err(refuse(
            "a backend that is not a plain Service",
            "keep this route out of the import",
        ));
    }
    let name = b["name"].as_str().unwrap_or_default().to_string();
    let ns = b["namespace"].as_str().map(str::to_string);
    Ok((name, ns, b["port"].as_u64().unwrap_or(0)))
}

/// The app a Kong route is: one set of paths, one URLRewrite hostname, one bridge.
pub(crate) fn kong_side(obj: &Object, config: &Config) -> Result<KongSide, Refusal> {
    let spec = obj.spec();
    let rules = spec["rules"].as_array().map_or(&[][..], Vec::as_slice);
    let mut side: Option<KongSide> = None;
    for rule in rules {
        let rewrite = rewrite_of(rule)?;
        let (bridge, _, port) = backend_of(rule)?;
        let matches = rule["matches"].as_array().map_or(&[][..], Vec::as_slice);
        let mut paths = Vec::new();
        for m in matches {
            paths.push(path_of(m)?);
        }
        if matches.is_empty() {
            paths.push((MatchKind::Prefix, "/".to_string()));
        }
        match &mut side {
            None => {
                side = Some(KongSide {
                    paths,
                    hostnames: strings(&spec["hostnames"]),
                    rewrite,
                    bridge,
                    port,
                    plugins: plugins_of(obj, config)?,
                });
            }
            Some(s) if s.rewrite == rewrite && s.bridge == bridge => s.paths.extend(paths),
            Some(s) => {
                return Err(refuse(
                    format!(
                        "a Kong route shared by two apps: its rules go to `{}` ({}) and `{bridge}` ({rewrite})",
                        s.bridge, s.rewrite
                    ),
                    "split it into one Kong route per app before the import",
                ));
            }
        }
    }
    side.ok_or_else(|| refuse("a Kong route without rules", "keep it out of the import"))
}

/// A rule's URLRewrite hostname; any other filter is refused.
fn rewrite_of(rule: &Value) -> Result<String, Refusal> {
    let filters = rule["filters"].as_array().map_or(&[][..], Vec::as_slice);
    let mut host = None;
    for f in filters {
        let t = f["type"].as_str().unwrap_or_default();
        let rewrite = &f["urlRewrite"];
        if t != "URLRewrite" || !unknown(rewrite, &["hostname"]).is_empty() {
            return Err(refuse(
                format!(
                    "a `{t}` filter latgen does not write (it writes a URLRewrite of the hostname alone)"
                ),
                "move what the filter does into a KongPlugin named in `kong.plugins` after the import, or keep this route out",
            ));
        }
        host = rewrite["hostname"].as_str().map(str::to_string);
    }
    host.ok_or_else(|| {
        refuse(
            "a Kong route that does not rewrite Host: Lattice finds its service by Host",
            "add a URLRewrite of the hostname to the Lattice service's domain, or keep this route out",
        )
    })
}

/// The route's plugins (`konghq.com/plugins`), without the one latgen writes itself; any
/// other Kong annotation is refused.
fn plugins_of(obj: &Object, config: &Config) -> Result<Vec<String>, Refusal> {
    let ours = config
        .observability
        .prometheus
        .as_ref()
        .is_some_and(|p| p.kong_plugin);
    let mut plugins = Vec::new();
    for (k, v) in &obj.annotations {
        if k == "konghq.com/plugins" {
            let names = v.split(',').map(str::trim).filter(|p| !p.is_empty());
            plugins.extend(names.map(str::to_string));
        } else if k.starts_with("konghq.com/") {
            return Err(refuse(
                format!("the annotation `{k}`, which latgen does not write"),
                "remove it, or keep this route out of the import",
            ));
        }
    }
    let kong_plugin = crate::input::observability::KONG_PLUGIN;
    plugins.retain(|p| !(ours && p == kong_plugin));
    Ok(plugins)
}

fn strings(v: &Value) -> Vec<String> {
    (v.as_array().into_iter().flatten())
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

/// A Lattice route's hostnames and rules, each rule one match and one backend.
pub(crate) fn lattice_rules(obj: &Object) -> Result<Vec<LatticeRule>, Refusal> {
    let mut out = Vec::new();
    let spec = obj.spec();
    for rule in spec["rules"].as_array().map_or(&[][..], Vec::as_slice) {
        if let Some(f) = rule["filters"].as_array().and_then(|f| f.first()) {
            return Err(refuse(
                format!(
                    "a `{}` filter latgen does not write on a Lattice rule",
                    f["type"].as_str().unwrap_or_default()
                ),
                "keep this route out of the import",
            ));
        }
        let (service, namespace, port) = backend_of(rule)?;
        let matches = rule["matches"].as_array().map_or(&[][..], Vec::as_slice);
        let paths: Vec<Path> = if matches.is_empty() {
            vec![(MatchKind::Prefix, "/".to_string())]
        } else {
            matches.iter().map(path_of).collect::<Result<_, _>>()?
        };
        for path in paths {
            out.push(LatticeRule {
                path,
                service: service.clone(),
                namespace: namespace.clone(),
                port,
            });
        }
    }
    Ok(out)
}

/// Timeouts and retries of a bridge Service, from KIC's annotations.
#[derive(Debug, Default)]
pub(crate) struct BridgeSettings {
    pub timeouts: Vec<(&'static str, u64)>,
    pub retries: Option<u64>,
}

/// The bridge Service: ExternalName to `rewrite`, one port, Kong annotations latgen
/// writes.
pub(crate) fn bridge(obj: &Object, rewrite: &str, port: u64) -> Result<BridgeSettings, Refusal> {
    let spec = &obj.spec();
    if spec["type"].as_str() != Some("ExternalName") {
        return Err(refuse(
            "the Kong route's backend is not an ExternalName Service",
            "latgen adopts routes whose bridge resolves to the Lattice service's domain",
        ));
    }
    let target = spec["externalName"].as_str().unwrap_or_default();
    if target != rewrite {
        return Err(refuse(
            format!(
                "the bridge resolves to `{target}` but the Kong route rewrites Host to `{rewrite}`"
            ),
            "make the two agree (latgen writes one domain in both), or keep this app out",
        ));
    }
    let ports = spec["ports"].as_array().map_or(&[][..], Vec::as_slice);
    if ports.len() != 1 || ports[0]["port"].as_u64() != Some(port) {
        return Err(refuse(
            format!("the bridge has no single port {port}, the one the Kong route names"),
            "give the bridge one port, the Kong route's",
        ));
    }
    let mut settings = BridgeSettings::default();
    for (k, v) in &obj.annotations {
        let Some(what) = k.strip_prefix("konghq.com/") else {
            continue;
        };
        let value = v.trim().parse::<u64>().ok();
        match (what, value) {
            ("connect-timeout", Some(ms)) => settings.timeouts.push(("connect", ms)),
            ("read-timeout", Some(ms)) => settings.timeouts.push(("read", ms)),
            ("write-timeout", Some(ms)) => settings.timeouts.push(("write", ms)),
            ("retries", Some(n)) => settings.retries = Some(n),
            _ => {
                return Err(refuse(
                    format!("the bridge's annotation `{k}: {v}`, which latgen does not write"),
                    "remove it, or keep this app out of the import",
                ));
            }
        }
    }
    Ok(settings)
}

/// A health check as a TargetGroupPolicy sets it: path and interval.
pub(crate) type Check = (Option<String>, Option<u64>);

/// A TargetGroupPolicy's Service (namespace, name) and health check.
pub(crate) fn health_check(obj: &Object) -> Result<((String, String), Check), Refusal> {
    let spec = &obj.spec();
    let target = &spec["targetRef"];
    let extra = unknown(spec, &["targetRef", "healthCheck"]);
    let check = &spec["healthCheck"];
    let extra_check = unknown(check, &["enabled", "path", "intervalSeconds"]);
    if let Some(f) = extra.first().or(extra_check.first()) {
        return Err(refuse(
            format!("the TargetGroupPolicy sets `{f}`, which latgen does not write"),
            "latgen writes a health check's path and interval: drop the field, or keep this policy out",
        ));
    }
    if target["kind"].as_str() != Some("Service") || check["enabled"].as_bool() == Some(false) {
        return Err(refuse(
            "a TargetGroupPolicy that is not an enabled health check of a Service",
            "keep this policy out of the import",
        ));
    }
    let ns = (obj.namespace.clone()).unwrap_or_default();
    let service = target["name"].as_str().unwrap_or_default().to_string();
    let path = check["path"].as_str().map(str::to_string);
    Ok(((ns, service), (path, check["intervalSeconds"].as_u64())))
}
