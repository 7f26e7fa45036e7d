//! The app declaration as written in `apps/*.yaml` ([`AppDecl`], with source positions) and
//! as the later stages use it once validated ([`App`]).

use std::fmt;
use std::path::PathBuf;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_saphyr::Spanned;

/// Field names of an app declaration, for "did you mean" hints.
pub const APP_FIELDS: &[&str] = &[
    "name",
    "namespace",
    "service",
    "paths",
    "host",
    "group",
    "peakRps",
    "isolate",
    "healthCheck",
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AppDecl {
    pub name: Option<Spanned<String>>,
    pub namespace: Spanned<String>,
    pub service: Spanned<ServiceDecl>,
    pub paths: Option<Spanned<Vec<Spanned<PathDecl>>>>,
    pub host: Option<Spanned<String>>,
    pub group: Option<Spanned<u32>>,
    pub peak_rps: Option<Spanned<u64>>,
    #[serde(default)]
    pub isolate: bool,
    pub health_check: Option<Spanned<HealthCheck>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ServiceDecl {
    pub name: Spanned<String>,
    /// Wider than u16 so that 70000 gets latgen's message rather than a parser's.
    pub port: Spanned<u32>,
}

#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HealthCheck {
    pub path: Option<String>,
    pub interval_seconds: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MatchKind {
    /// Listed first so that, on equal length, Exact sorts before PathPrefix.
    Exact,
    Prefix,
}

impl MatchKind {
    /// The Gateway API `path.type` value.
    pub fn gateway_api_type(self) -> &'static str {
        match self {
            MatchKind::Exact => "Exact",
            MatchKind::Prefix => "PathPrefix",
        }
    }
}

/// One entry of `paths:`: a bare string is a prefix; `{prefix: …}` or `{exact: …}` says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathDecl {
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

/// A position in a declaration file (1-based line and column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Pos {
    pub line: u32,
    pub column: u32,
}

impl Pos {
    pub fn of<T>(s: &Spanned<T>) -> Pos {
        Pos {
            line: s.referenced.line() as u32,
            column: s.referenced.column() as u32,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathMatch {
    pub kind: MatchKind,
    pub value: String,
    pub pos: Pos,
}

/// A validated app. Index into [`crate::load::Inputs::apps`] is its identity in later stages.
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
    pub isolate: bool,
    pub health_check: Option<HealthCheck>,
}

impl App {
    pub fn is_path_routed(&self) -> bool {
        self.host.is_none()
    }

    /// Rules this app takes in a Lattice route: one per path.
    pub fn rule_count(&self) -> u32 {
        self.paths.len() as u32
    }

    /// The Lattice target a rule of this app forwards to.
    pub fn backend(&self) -> Backend {
        Backend {
            namespace: self.namespace.clone(),
            service: self.service.clone(),
            port: self.port,
        }
    }
}

/// A Kubernetes Service port; each distinct one is a Lattice target group.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Backend {
    pub namespace: String,
    pub service: String,
    pub port: u16,
}
