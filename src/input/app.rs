//! The app declaration as written in `apps/*.yaml` ([`AppDecl`], with source positions) and
//! as the later stages use it once validated ([`App`]).

use std::fmt;
use std::ops::Index;
use std::path::PathBuf;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_saphyr::Spanned;

pub use latgen_sim::Pos;
pub(crate) use latgen_sim::platform::MatchKind;
use latgen_sim::routing::{BackendRef, PathRule};

/// Suffix of the name of an app's bridge Service in the gateway cluster.
pub(crate) const BRIDGE_SUFFIX: &str = "-lattice";

/// The highest peak an app may declare or be observed at, requests per second: 2^32 - 1.
/// A Lattice service serves 10,000 by default; a rate billions of times that is a typo or
/// a counter's value rather than its `rate()`, and as a `peakRps` it would overflow the
/// sums the plan makes.
pub(crate) const MAX_PEAK_RPS: u64 = u32::MAX as u64;

/// Field names of an app declaration, for "did you mean" hints.
pub(crate) const APP_FIELDS: &[&str] = &[
    "name",
    "namespace",
    "service",
    "paths",
    "host",
    "group",
    "peakRps",
    "isolate",
    "healthCheck",
    "callers",
    "kong",
    "canary",
    "environments",
    "overrides",
];

/// A web app routed through Kong and VPC Lattice: one file per app under `apps/`.
///
/// Path-routed apps (`paths`) share Kong's host space and become rules of a shared Lattice
/// service; host-routed apps (`host`) get a dedicated route and Lattice service.
// `Spanned` has no schema of its own: the schema is the one of the value it wraps.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "latgen app declaration")]
pub(crate) struct AppDecl {
    /// The app's name; defaults to the file name. Lowercase letters, digits and `-`,
    /// starting with a letter (its bridge Service's name must), at most 55 characters.
    #[schemars(with = "Option<String>")]
    pub name: Option<Spanned<String>>,
    /// Namespace of the app's Service in the workload cluster.
    #[schemars(with = "String")]
    pub namespace: Spanned<String>,
    /// The Kubernetes Service Lattice sends the app's requests to.
    #[schemars(with = "ServiceDecl")]
    pub service: Spanned<ServiceDecl>,
    /// Paths the app answers on, one Lattice rule each. A bare string is a PathPrefix.
    /// Defaults to `[/]` for a host-routed app.
    #[schemars(with = "Option<Vec<PathDecl>>")]
    pub paths: Option<Spanned<Vec<Spanned<PathDecl>>>>,
    /// Routes the app by host instead: a dedicated route and Lattice service, whose custom
    /// domain is this host.
    #[schemars(with = "Option<String>")]
    pub host: Option<Spanned<String>>,
    /// Places a new app in this shared group: one in use, or the number the next new group
    /// gets. Once the app is placed, the pin must name the group the lock gives it (or the
    /// one it is moving to), else it is a `pin-conflict` error; use `latgen move` to change
    /// its group.
    #[schemars(with = "Option<u32>", range(min = 1))]
    pub group: Option<Spanned<u32>>,
    /// Declared peak requests per second, a whole number; counts against the group's
    /// throughput budget.
    #[schemars(with = "Option<u64>")]
    pub peak_rps: Option<Spanned<u64>>,
    /// Never share a group with another isolated app.
    #[serde(default)]
    pub isolate: bool,
    /// The Lattice target group health check.
    #[schemars(with = "Option<HealthCheck>")]
    pub health_check: Option<Spanned<HealthCheck>>,
    /// Who may call the app besides Kong and the callers `auth.callers` in latgen.yaml
    /// gives every app (with `auth.mode: iam`): each entry one kind of caller.
    #[schemars(with = "Option<Vec<crate::input::auth::Caller>>")]
    pub callers: Option<Vec<Spanned<crate::input::auth::Caller>>>,
    /// What the app's own Kong route and Service get: plugins, upstream timeouts,
    /// retries, more hostnames. Defaults come from `kong.routeDefaults` in latgen.yaml.
    pub kong: Option<crate::input::kong::KongDecl>,
    /// A canary Service beside `service`, for an Argo Rollouts canary: both become backends
    /// of each of the app's Lattice rules (the canary at weight 0).
    pub canary: Option<crate::input::canary::CanaryDecl>,
    /// The environments the app runs in (names of `environments/<name>.yaml`); unset =
    /// every environment. Only for a project with environments.
    #[schemars(with = "Option<Vec<String>>")]
    pub environments: Option<Spanned<Vec<Spanned<String>>>>,
    /// What an environment changes of this declaration, by environment name: its `host`,
    /// `paths`, `kong`, `callers` or `canary`, each replacing the declaration's own. Only for
    /// a project with environments.
    #[schemars(
        with = "Option<std::collections::BTreeMap<String, crate::input::overrides::AppOverride>>"
    )]
    pub overrides: Option<Spanned<crate::input::overrides::Overrides>>,
}

/// A Service and port in the app's namespace.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct ServiceDecl {
    /// The Service's name.
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// The Service's port number, 1 to 65535: Lattice targets a port by its number, so a
    /// named port such as `http` is not taken.
    // Wider than u16 so that 70000 gets latgen's message rather than a parser's.
    #[schemars(with = "u32", range(min = 1, max = 65535))]
    pub port: Spanned<u32>,
}

/// The health check of the app's Lattice target group.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct HealthCheck {
    /// The path probed.
    pub path: Option<String>,
    /// Seconds between probes, 5 to 300.
    #[schemars(range(min = 5, max = 300))]
    pub interval_seconds: Option<u32>,
}

/// One entry of `paths:`: a bare string is a prefix; `{prefix: …}` or `{exact: …}` says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathDecl {
    pub kind: MatchKind,
    pub value: String,
}

impl<'de> Deserialize<'de> for PathDecl {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PathVisitor;

        impl<'de> Visitor<'de> for PathVisitor {
            type Value = PathDecl;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a path such as /shop, or a map { prefix: /shop } or { exact: /shop }")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<PathDecl, E> {
                Ok(PathDecl {
                    kind: MatchKind::Prefix,
                    value: v.to_string(),
                })
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<PathDecl, A::Error> {
                let mut found: Option<PathDecl> = None;
                while let Some(key) = map.next_key::<String>()? {
                    let kind = match key.as_str() {
                        "prefix" => MatchKind::Prefix,
                        "exact" => MatchKind::Exact,
                        other => return Err(de::Error::unknown_field(other, &["prefix", "exact"])),
                    };
                    let value: String = map.next_value()?;
                    if found.is_some() {
                        return Err(de::Error::custom(
                            "a path entry takes one of `prefix` or `exact`, not both",
                        ));
                    }
                    found = Some(PathDecl { kind, value });
                }
                found.ok_or_else(|| de::Error::missing_field("prefix"))
            }
        }

        deserializer.deserialize_any(PathVisitor)
    }
}

// Written by hand to match the hand-written Deserialize above.
impl schemars::JsonSchema for PathDecl {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "PathDecl".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A path such as `/shop` (PathPrefix), or a map `{ prefix: /shop }` or `{ exact: /shop }`.",
            "oneOf": [
                { "type": "string", "pattern": "^/" },
                {
                    "type": "object",
                    "properties": {
                        "prefix": {
                            "description": "Matches the path and everything under it, segment by segment.",
                            "type": "string",
                            "pattern": "^/"
                        },
                        "exact": {
                            "description": "Matches this path only.",
                            "type": "string",
                            "pattern": "^/"
                        }
                    },
                    "additionalProperties": false,
                    "minProperties": 1,
                    "maxProperties": 1
                }
            ]
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathMatch {
    pub kind: MatchKind,
    pub value: String,
    pub pos: Pos,
}

/// A validated app. Its place in the validated app list, an [`AppId`], is its identity in
/// later stages.
#[derive(Debug, Clone, PartialEq)]
pub struct App {
    pub name: String,
    /// The declaration file, as given on the command line joined with its place under apps/.
    pub file: PathBuf,
    pub name_pos: Pos,
    pub namespace: String,
    pub service: String,
    pub port: u16,
    /// Set for host-routed apps (dedicated route); None for path-routed apps (groups).
    pub host: Option<String>,
    pub paths: Vec<PathMatch>,
    pub pin: Option<(u32, Pos)>,
    pub peak_rps: Option<u64>,
    /// Where `peakRps` is declared, for a finding about it.
    pub peak_rps_pos: Pos,
    pub isolate: bool,
    pub health_check: Option<HealthCheck>,
    /// The app's own callers (`callers:`), validated.
    pub callers: Vec<crate::input::auth::Caller>,
    /// The app's Kong settings, the project's defaults applied.
    pub kong: crate::input::kong::KongSettings,
    /// The app's canary Service, if it declares one.
    pub canary: Option<crate::input::canary::Canary>,
    /// The route the app had before latgen, kept as it is (the lock's `adopted:`).
    pub adopted: Option<crate::input::lock::Adopted>,
}

impl App {
    /// Whether a route's match is one that this app's declaration writes: one of its
    /// paths, or a dispatch header set to its name. Apps that share a Service are told
    /// apart by it.
    pub fn writes(&self, m: &PathRule) -> bool {
        self.paths
            .iter()
            .any(|p| p.kind == m.kind && p.value == m.path)
            || m.headers
                .iter()
                .any(|(_, v)| v.as_deref() == Some(self.name.as_str()))
    }

    /// Whether a route's backend is this app's Service, on its port.
    pub fn is_backend(&self, b: &BackendRef) -> bool {
        b.namespace == self.namespace
            && b.name == self.service
            && b.port == Some(i32::from(self.port))
    }

    pub fn is_path_routed(&self) -> bool {
        self.host.is_none()
    }

    /// The name, namespace and hostname of the app's own Lattice route, when it has one:
    /// the route it was adopted with, else (host-routed) one named after it, on its host.
    pub fn own_route(&self) -> (&str, &str, &str) {
        match &self.adopted {
            Some(a) => (&a.route, &a.namespace, &a.hostname),
            None => (
                &self.name,
                &self.namespace,
                self.host.as_deref().unwrap_or_default(),
            ),
        }
    }

    /// Rules this app takes in a Lattice route: one per path.
    pub fn rule_count(&self) -> u32 {
        self.paths.len() as u32
    }

    /// The name of the app's bridge Service in the gateway cluster: the Service Kong sends
    /// the app's requests to, which stands for its Lattice service.
    pub fn bridge_name(&self) -> String {
        format!("{}{BRIDGE_SUFFIX}", self.name)
    }

    /// The Lattice target a rule of this app forwards to.
    pub fn backend(&self) -> Backend {
        Backend {
            namespace: self.namespace.clone(),
            service: self.service.clone(),
            port: self.port,
        }
    }

    /// The canary's Lattice target, if the app declares one: a target group of its own.
    pub fn canary_backend(&self) -> Option<Backend> {
        self.canary.as_ref().map(|c| Backend {
            namespace: self.namespace.clone(),
            service: c.service.clone(),
            port: c.port,
        })
    }

    /// Every Lattice target of the app's rules (each a target group): its own, then its
    /// canary's.
    pub fn backends(&self) -> impl Iterator<Item = Backend> + '_ {
        std::iter::once(self.backend()).chain(self.canary_backend())
    }
}

/// An app's identity in the stages after validation: its place in the validated app list.
/// Look the app up with `apps[id]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct AppId(usize);

impl AppId {
    /// The app at `index` in the validated app list.
    pub fn new(index: usize) -> AppId {
        AppId(index)
    }

    /// The app's place in the validated app list.
    pub fn index(self) -> usize {
        self.0
    }

    /// Every app of `apps` with its id, in list order.
    pub fn enumerate(apps: &[App]) -> impl Iterator<Item = (AppId, &App)> {
        apps.iter().enumerate().map(|(i, app)| (AppId(i), app))
    }
}

impl Index<AppId> for [App] {
    type Output = App;

    fn index(&self, id: AppId) -> &App {
        &self[id.0]
    }
}

impl Index<AppId> for Vec<App> {
    type Output = App;

    fn index(&self, id: AppId) -> &App {
        &self[id.0]
    }
}

/// A Kubernetes Service port; each distinct one is a Lattice target group.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Backend {
    pub namespace: String,
    pub service: String,
    pub port: u16,
}

/// The apps the unit tests build: path-routed, in namespace `shop`, with every other field
/// at its default.
#[cfg(test)]
impl App {
    pub(crate) fn sample(name: &str, paths: &[(MatchKind, &str)]) -> App {
        App {
            name: name.into(),
            file: format!("apps/{name}.yaml").into(),
            name_pos: Pos::default(),
            namespace: "shop".into(),
            service: name.into(),
            port: 80,
            host: None,
            paths: (paths.iter())
                .map(|(kind, v)| PathMatch {
                    kind: *kind,
                    value: v.to_string(),
                    pos: Pos::default(),
                })
                .collect(),
            pin: None,
            peak_rps: None,
            peak_rps_pos: Pos::default(),
            isolate: false,
            health_check: None,
            callers: Vec::new(),
            kong: Default::default(),
            canary: None,
            adopted: None,
        }
    }
}
