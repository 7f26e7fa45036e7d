//! Adopting a live setup: its objects read into routes, apps and lock entries, what cannot be adopted said with a finding, and the declarations written.

use super::{read, routes};
use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics};
use crate::input::config::Config;
use crate::input::lock::{Adopted, LockState, NamedBy, ServiceName};
use read::Object;
use routes::{KongSide, LatticeRule, Path, Refusal};

/// An app as the manifests show it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ImportedApp {
    pub name: String,
    /// Where its declaration goes, under the apps folder (its Kong route's folder).
    pub folder: PathBuf,
    pub namespace: String,
    pub service: String,
    pub port: u64,
    /// Set for a host-routed app: its own host.
    pub host: Option<String>,
    pub paths: Vec<Path>,
    pub health: Option<(Option<String>, Option<u64>)>,
    pub plugins: Vec<String>,
    pub timeouts: Vec<(&'static str, u64)>,
    pub retries: Option<u64>,
    /// Hosts of its Kong route beyond its own and the project's.
    pub hosts: Vec<String>,
    /// The Lattice service's domain its Kong route rewrites Host to.
    pub domain: String,
    /// The Lattice route it is on: namespace, name.
    pub lattice_route: (String, String),
    /// Who its live auth policy lets in beyond the project's callers.
    pub callers: Vec<crate::input::auth::Caller>,
}

/// What import makes of the manifests.
#[derive(Debug, Default)]
pub(crate) struct Imported {
    pub apps: Vec<ImportedApp>,
    pub lock: LockState,
    /// Objects read that are none of the kinds import reads, or for another gateway.
    pub ignored: usize,
}

/// The objects by what they are to import.
#[derive(Default)]
struct Sorted {
    lattice: Vec<Object>,
    kong: Vec<Object>,
    services: BTreeMap<(String, String), Object>,
    policies: Vec<Object>,
    auth: Vec<Object>,
    ignored: usize,
}

fn sort(objects: Vec<Object>, config: &Config) -> Sorted {
    let mut s = Sorted::default();
    for o in objects {
        match o.kind.as_str() {
            "HTTPRoute" if routes::parented_to(&o, &config.lattice.gateway) => s.lattice.push(o),
            "HTTPRoute" if routes::parented_to(&o, &config.kong.gateway) => s.kong.push(o),
            "Service" => {
                let ns = o
                    .namespace
                    .clone()
                    .unwrap_or_else(|| config.kong.namespace.clone());
                s.services.insert((ns, o.name.clone()), o);
            }
            "TargetGroupPolicy" => s.policies.push(o),
            "IAMAuthPolicy" => s.auth.push(o),
            _ => s.ignored += 1,
        }
    }
    s
}

fn refused(obj: &Object, (what, help): Refusal) -> Diagnostic {
    Diagnostic::error(Code::ImportRefused, format!("{}: {what}", obj.label()))
        .at(obj.span())
        .help(help)
}

/// Reads the manifests under `inputs` and makes declarations and a lock of them. Every
/// object that cannot be expressed is reported; the rest is imported.
pub(crate) fn import(inputs: &[PathBuf], config: &Config, diags: &mut Diagnostics) -> Imported {
    let objects = read::read(inputs, diags);
    let sorted = sort(objects, config);
    let mut out = Imported {
        ignored: sorted.ignored,
        ..Imported::default()
    };
    // A Lattice route by each domain it serves: its hostnames, and the domain Lattice
    // assigned its service where the controller recorded it.
    let mut by_host: BTreeMap<String, usize> = BTreeMap::new();
    let mut lattice_rules = Vec::with_capacity(sorted.lattice.len());
    for (i, route) in sorted.lattice.iter().enumerate() {
        for h in route.spec()["hostnames"].as_array().into_iter().flatten() {
            by_host
                .entry(h.as_str().unwrap_or_default().to_string())
                .or_insert(i);
        }
        if let Some(assigned) = assigned_domain(route) {
            by_host.entry(assigned.to_string()).or_insert(i);
        }
        lattice_rules.push(routes::lattice_rules(route));
    }
    // A Lattice route some Kong route sends to: its problems are that route's findings.
    let mut reached = vec![false; sorted.lattice.len()];
    for kong in &sorted.kong {
        for rule in kong.spec()["rules"].as_array().into_iter().flatten() {
            for f in rule["filters"].as_array().into_iter().flatten() {
                let host = f["urlRewrite"]["hostname"].as_str().unwrap_or_default();
                if let Some(&i) = by_host.get(host) {
                    reached[i] = true;
                }
            }
        }
    }
    let mut found = Vec::new();
    let mut names = std::collections::BTreeSet::new();
    for kong in &sorted.kong {
        // An app is its Kong route: a second route of one name is not imported.
        if !names.insert(kong.name.as_str()) {
            let why = (
                "a second Kong route of this name: an app's name is its Kong route's".into(),
                "rename one, or import one of the two".into(),
            );
            found.push(refused(kong, why));
            continue;
        }
        match link(kong, &sorted, &by_host, &lattice_rules, config) {
            Ok((app, index, adopted)) => {
                record(&mut out.lock, &app, &sorted.lattice[index], adopted, config);
                out.apps.push(app);
            }
            Err((obj, refusal)) => found.push(refused(obj, refusal)),
        }
    }
    // A route several Kong routes reach is refused once.
    let mut seen = std::collections::BTreeSet::new();
    for d in found {
        if seen.insert((d.span.clone(), d.message.clone())) {
            diags.push(d);
        }
    }
    unreached(&sorted.lattice, &reached, &lattice_rules, diags);
    health_checks(&sorted.policies, &mut out.apps, diags);
    let policies = super::live_auth::read_policies(&sorted.auth, &mut out.apps, config);
    for (p, r) in policies.refused {
        diags.push(refused(p, r));
    }
    out.apps.retain(|a| !policies.unguarded.contains(&a.name));
    for app in &policies.unguarded {
        out.lock.adopted.remove(app);
        out.lock.apps.remove(app);
    }
    for (app, policy) in policies.named {
        if let Some(a) = out.lock.adopted.get_mut(&app) {
            a.auth_policy = Some(policy);
        }
    }
    out.apps.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The domain Lattice assigned a route's service, as the controller records it on a
/// route it has synced.
fn assigned_domain(route: &Object) -> Option<&str> {
    let key = latgen_sim::platform::ASSIGNED_DOMAIN_ANNOTATION;
    route.annotations.get(key).map(String::as_str)
}

/// Lattice routes no Kong route sends to: nothing declares how requests reach them.
fn unreached(
    lattice: &[Object],
    reached: &[bool],
    rules: &[Result<Vec<LatticeRule>, Refusal>],
    diags: &mut Diagnostics,
) {
    for (i, route) in lattice.iter().enumerate() {
        let no_host = route.spec()["hostnames"]
            .as_array()
            .is_none_or(Vec::is_empty);
        let why = match &rules[i] {
            _ if reached[i] => continue,
            Err(r) => r.clone(),
            Ok(_) if no_host && assigned_domain(route).is_none() => (
                "a route without a hostname and without the domain Lattice assigned its service (the controller's lattice-assigned-domain-name annotation): it was never synced, or was exported without its annotations".into(),
                "export it from the cluster as it runs (`kubectl get httproute -o yaml` keeps the annotation), or keep it out of the import".into(),
            ),
            Ok(_) if no_host => (
                "no Kong route rewrites Host to the domain Lattice assigned it, so no app reaches it through Kong".into(),
                "import its Kong route and bridge with it".into(),
            ),
            Ok(_) => (
                "no Kong route rewrites Host to any of its hostnames, so no app reaches it through Kong".into(),
                "import its Kong route and bridge with it".into(),
            ),
        };
        diags.push(refused(route, why));
    }
}

type Linked<'a> = Result<(ImportedApp, usize, bool), (&'a Object, Refusal)>;

/// The app a Kong route is, with the Lattice route it reaches and whether that route is
/// adopted (not one latgen would write under its own names).
fn link<'a>(
    kong: &'a Object,
    sorted: &'a Sorted,
    by_host: &BTreeMap<String, usize>,
    lattice_rules: &[Result<Vec<LatticeRule>, Refusal>],
    config: &Config,
) -> Linked<'a> {
    let side = routes::kong_side(kong, config).map_err(|r| (kong, r))?;
    let ns = kong.namespace.as_deref().unwrap_or(&config.kong.namespace);
    if ns != config.kong.namespace {
        let what = format!(
            "a Kong route in namespace {ns}, not latgen.yaml's kong.namespace ({})",
            config.kong.namespace
        );
        return Err((
            kong,
            (
                what,
                "set kong.namespace in latgen.yaml to the namespace your Kong routes live in"
                    .into(),
            ),
        ));
    }
    let expected_bridge = format!("{}{}", kong.name, crate::input::app::BRIDGE_SUFFIX);
    let bridge =
        (sorted.services.get(&(ns.to_string(), side.bridge.clone()))).ok_or_else(|| {
            (
                kong,
                (
                    format!(
                        "a Kong route with no bridge: Service {ns}/{} is not among the manifests",
                        side.bridge
                    ),
                    "import the bridge Service with the route".to_string(),
                ),
            )
        })?;
    if side.bridge != expected_bridge {
        let what = format!(
            "the bridge is `{}`; latgen names it `{expected_bridge}`",
            side.bridge
        );
        return Err((kong, (what, "rename the bridge before the import (a new Service, the route switched to it, the old one removed)".into())));
    }
    let settings = routes::bridge(bridge, &side.rewrite, side.port).map_err(|r| (bridge, r))?;
    let index = *by_host.get(side.rewrite.as_str()).ok_or_else(|| {
        (kong, (format!("no Lattice route among the manifests is reached at `{}`, the host the Kong route rewrites to (as its hostname, or as the domain Lattice assigned it)", side.rewrite), "import the app's Lattice route with it, as the cluster has it (with its annotations)".to_string()))
    })?;
    let route = &sorted.lattice[index];
    let has_hostname = route.spec()["hostnames"]
        .as_array()
        .is_some_and(|h| !h.is_empty());
    if has_hostname && assigned_domain(route) == Some(side.rewrite.as_str()) {
        let what = format!(
            "it reaches Lattice route {}/{} at the domain Lattice assigned, though that route has a hostname (its custom domain): latgen writes one domain for both",
            route.namespace.as_deref().unwrap_or_default(),
            route.name
        );
        return Err((
            kong,
            (
                what,
                "point the Kong route and its bridge at the route's custom domain, then import"
                    .into(),
            ),
        ));
    }
    check_names(kong, route, &side.rewrite)?;
    let rules = lattice_rules[index]
        .as_ref()
        .map_err(|r| (route, r.clone()))?;
    let app = app_of(kong, &side, route, rules, settings, config).map_err(|r| (route, r))?;
    let adopted = !is_latgens(&app, route, config);
    Ok((app, index, adopted))
}

/// Names latgen writes back (the app's file and bridge, the lock's keys, the route) must be
/// names it can write: DNS-1123 labels, a namespace, a hostname.
fn check_names<'a>(
    kong: &'a Object,
    route: &'a Object,
    rewrite: &str,
) -> Result<(), (&'a Object, Refusal)> {
    use latgen_sim::platform::{DNS1123_LABEL_MAX, dns1123_label_problem, hostname_problem};
    let max = DNS1123_LABEL_MAX - crate::input::app::BRIDGE_SUFFIX.len();
    let app = dns1123_label_problem(&kong.name)
        .or_else(|| (kong.name.len() > max).then(|| format!("is over {max} characters")))
        .or_else(|| {
            (!kong.name.starts_with(|c: char| c.is_ascii_lowercase()))
                .then(|| "does not start with a letter".to_string())
        });
    if let Some(p) = app {
        let what = format!("the app's name (its Kong route's), `{}`, {p}", kong.name);
        return Err((
            kong,
            (
                what,
                "rename the Kong route (and its bridge) before the import".into(),
            ),
        ));
    }
    if let Some(p) = hostname_problem(rewrite) {
        let what = format!("the host it rewrites to, `{rewrite}`, {p}");
        return Err((
            kong,
            (
                what,
                "rewrite to the Lattice service's custom domain".into(),
            ),
        ));
    }
    if let Some(p) = dns1123_label_problem(&route.name) {
        let what = format!("the route's name {p}: latgen writes it as a file name and a lock key");
        return Err((route, (what, "keep this route out of the import".into())));
    }
    if route.namespace.is_none() {
        let what =
            "a Lattice route without a namespace: its name and namespace are its Lattice service's"
                .to_string();
        return Err((
            route,
            (
                what,
                "export it with its namespace (`kubectl get -o yaml` writes it)".into(),
            ),
        ));
    }
    Ok(())
}

/// The app: its Kong side and its rules in the Lattice route.
fn app_of(
    kong: &Object,
    side: &KongSide,
    route: &Object,
    rules: &[LatticeRule],
    settings: routes::BridgeSettings,
    config: &Config,
) -> Result<ImportedApp, Refusal> {
    let route_ns = route.namespace.clone().unwrap_or_default();
    let mine: Vec<&LatticeRule> = rules
        .iter()
        .filter(|r| side.paths.contains(&r.path))
        .collect();
    let Some(first) = mine.first() else {
        return Err((
            format!(
                "none of its rules matches the paths of Kong route {}",
                kong.name
            ),
            "make the Lattice route's paths the Kong route's".into(),
        ));
    };
    let namespace = first.namespace.clone().unwrap_or_else(|| route_ns.clone());
    let same = |r: &&LatticeRule| {
        (
            &r.service,
            r.namespace.as_deref().unwrap_or(&route_ns),
            r.port,
        ) == (&first.service, namespace.as_str(), first.port)
    };
    if !mine.iter().all(same) || mine.len() != side.paths.len() {
        return Err((
            format!(
                "its rules for Kong route {} do not all go to {}/{}:{}",
                kong.name, namespace, first.service, first.port
            ),
            "give the app one Service, on every path its Kong route has".into(),
        ));
    }
    let group = group_of(route, config);
    if group.is_none() && rules.len() != mine.len() {
        let others = rules
            .iter()
            .filter(|r| !side.paths.contains(&r.path))
            .count();
        return Err((
            format!(
                "a route shared by several apps ({others} of its rules go elsewhere than Kong route {}), not one of latgen.yaml's groups",
                kong.name
            ),
            "import it once its apps have routes of their own, or name it as a latgen group".into(),
        ));
    }
    let own_host = side.hostnames.contains(&side.rewrite);
    let hosts = (side.hostnames.iter())
        .filter(|h| **h != side.rewrite && !config.kong.hostnames.contains(h))
        .cloned()
        .collect();
    Ok(ImportedApp {
        name: kong.name.clone(),
        folder: kong.folder.clone(),
        namespace,
        service: first.service.clone(),
        port: first.port,
        host: own_host.then(|| side.rewrite.clone()),
        paths: side.paths.clone(),
        health: None,
        plugins: side.plugins.clone(),
        timeouts: settings.timeouts,
        retries: settings.retries,
        hosts,
        domain: side.rewrite.clone(),
        lattice_route: (route_ns, route.name.clone()),
        callers: Vec::new(),
    })
}

/// Whether the route is what latgen writes for the app without adopting it: one of the
/// groups, or a host-routed app's own route under the app's name.
fn is_latgens(app: &ImportedApp, route: &Object, config: &Config) -> bool {
    let ns = route.namespace.as_deref().unwrap_or_default();
    match (group_of(route, config), &app.host) {
        (Some(n), None) => app.domain == config.group_domain(n),
        (None, Some(_)) => route.name == app.name && ns == app.namespace,
        _ => false,
    }
}

/// The project's group a route is: its name, in the groups' namespace, on its domain.
fn group_of(route: &Object, config: &Config) -> Option<u32> {
    let n = config.parse_group_name(&route.name)?;
    let ns = route.namespace.as_deref() == Some(config.lattice.namespace.as_str());
    let spec = route.spec();
    let hosts = spec["hostnames"].as_array().map_or(&[][..], Vec::as_slice);
    let domain = hosts
        .iter()
        .any(|h| h.as_str() == Some(&config.group_domain(n)));
    (ns && domain).then_some(n)
}

/// The app's entry in the lock: its group, or the route it is adopted with (and the
/// service name its route carries, if it names one).
fn record(lock: &mut LockState, app: &ImportedApp, route: &Object, adopted: bool, config: &Config) {
    let group = group_of(route, config);
    match (adopted, group) {
        (false, Some(n)) => {
            lock.apps.insert(app.name.clone(), n);
        }
        (false, None) => {}
        (true, _) => {
            lock.adopted.insert(
                app.name.clone(),
                Adopted {
                    route: route.name.clone(),
                    namespace: route.namespace.clone().unwrap_or_default(),
                    hostname: app.domain.clone(),
                    // Reached at the domain Lattice assigned, not at a hostname of its own.
                    assigned: assigned_domain(route) == Some(app.domain.as_str())
                        && !route.spec()["hostnames"]
                            .as_array()
                            .is_some_and(|h| h.iter().any(|h| h.as_str() == Some(&app.domain))),
                    auth_policy: None,
                },
            );
        }
    }
    let named = route
        .annotations
        .get(latgen_sim::platform::OVERRIDE_ANNOTATION);
    if let Some(name) = named {
        let services = lock.services.get_or_insert_with(BTreeMap::new);
        services.insert(
            route.name.clone(),
            ServiceName {
                name: name.clone(),
                set: NamedBy::Latgen,
            },
        );
    }
}

/// Each TargetGroupPolicy's health check, on the app whose Service it targets.
fn health_checks(policies: &[Object], apps: &mut [ImportedApp], diags: &mut Diagnostics) {
    // The app of each Service, looked up once per policy (thousands at 10,000 apps).
    let by_service: BTreeMap<(String, String), usize> = (apps.iter().enumerate())
        .map(|(i, a)| ((a.namespace.clone(), a.service.clone()), i))
        .collect();
    for p in policies {
        match routes::health_check(p) {
            Ok(((ns, service), check)) => match by_service.get(&(ns.clone(), service.clone())) {
                Some(&i) => apps[i].health = Some(check),
                None => diags.push(refused(
                    p,
                    (
                        format!("its Service {ns}/{service} is no imported app's"),
                        "import the app it belongs to with it, or leave the policy out".into(),
                    ),
                )),
            },
            Err(r) => diags.push(refused(p, r)),
        }
    }
}
