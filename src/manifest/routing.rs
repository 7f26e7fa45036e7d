//! Where a request goes, computed from the manifests themselves: Kong picks a route with
//! Gateway API semantics (host, then Exact over the longest segment-wise prefix), the route
//! rewrites the Host and sends the request to its bridge Service, whose ExternalName names
//! a Lattice service; Lattice takes that service's first rule whose path matches as a
//! string. This model is behind the routing tests, `check`'s consistency and shadowing
//! findings, and the safety of a change across the two Argo CD Applications.
//!
//! Manifests are read into a light model that keeps the line of every path, so findings can
//! point into the committed files (hand edits included); fields it does not need are ignored.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gateway_api::apis::standard::httproutes::HttpRouteSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::input::model::{MatchKind, Pos};
use crate::input::platform::{segment_prefix_matches, string_prefix_matches};
use crate::manifest::auth::{AuthPolicy, AuthProbe, Call, Identity};

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PathRule {
    pub kind: MatchKind,
    pub path: String,
    pub pos: Pos,
    /// Header conditions of the match, all of which must hold: (name in lower case, Exact
    /// value). A header match of another type never matches (Lattice takes Exact only).
    pub headers: Vec<(String, Option<String>)>,
}

/// The label that names the app a route serves.
pub(crate) const APP_LABEL: &str = "app.kubernetes.io/name";
/// The label of a preview's Kong route: the preview's name (its app is `APP_LABEL`).
pub(crate) const PREVIEW_LABEL: &str = "latgen.dev/preview";
/// The annotation that names a Kong route's KongPlugins.
pub(crate) const PLUGINS_ANNOTATION: &str = "konghq.com/plugins";

/// Request headers as one hop sees them: name in lower case → value.
pub(crate) type Headers = BTreeMap<String, String>;

/// What a Kong route's RequestHeaderModifier does to the request's headers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HeaderChanges {
    pub set: Vec<(String, String)>,
    pub add: Vec<(String, String)>,
    pub remove: Vec<String>,
}

impl HeaderChanges {
    /// The headers Lattice receives for a client's `headers`: Kong's request-transformer
    /// removes, then replaces (`set`, which also adds a missing header), then appends
    /// (`add`, joined to a client's value with a comma); Lattice then strips its own
    /// reserved headers.
    pub fn apply(&self, headers: &Headers) -> Headers {
        let mut out = headers.clone();
        for name in &self.remove {
            out.remove(&name.to_ascii_lowercase());
        }
        for (name, value) in &self.set {
            out.insert(name.to_ascii_lowercase(), value.clone());
        }
        for (name, value) in &self.add {
            out.entry(name.to_ascii_lowercase())
                .and_modify(|v| {
                    v.push(',');
                    v.push_str(value);
                })
                .or_insert_with(|| value.clone());
        }
        out.retain(|name, _| {
            !name.starts_with(crate::input::platform::LATTICE_RESERVED_HEADER_PREFIX)
        });
        out
    }

    /// The value the route sets `name` to, whatever the client sent.
    pub fn sets(&self, name: &str) -> Option<&str> {
        self.set
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

impl PathRule {
    pub fn gateway_api_match(&self, path: &str) -> bool {
        match self.kind {
            MatchKind::Exact => self.path == path,
            MatchKind::Prefix => segment_prefix_matches(&self.path, path),
        }
    }

    /// Lattice's answer for a request with this path and these headers: the path compared
    /// as a string, header values compared ignoring case.
    pub fn lattice_match(&self, path: &str, headers: &Headers) -> bool {
        let path_matches = match self.kind {
            MatchKind::Exact => self.path == path,
            MatchKind::Prefix => string_prefix_matches(&self.path, path),
        };
        path_matches && self.headers_match(headers)
    }

    /// Whether this match is one that `app`'s declaration writes: one of its paths, or a
    /// dispatch header set to its name. Apps that share a Service are told apart by it.
    pub fn is_of(&self, app: &crate::input::model::App) -> bool {
        app.paths
            .iter()
            .any(|p| p.kind == self.kind && p.value == self.path)
            || self
                .headers
                .iter()
                .any(|(_, v)| v.as_deref() == Some(app.name.as_str()))
    }

    pub fn headers_match(&self, headers: &Headers) -> bool {
        self.headers.iter().all(|(name, want)| {
            matches!((want, headers.get(name)), (Some(w), Some(v)) if w.eq_ignore_ascii_case(v))
        })
    }

    /// Whether any request that meets this match's header conditions meets `other`'s:
    /// each of `other`'s conditions is one of these.
    pub fn headers_imply(&self, other: &PathRule) -> bool {
        other.headers.iter().all(|(name, want)| {
            self.headers.iter().any(|(n, w)| {
                n == name && matches!((w, want), (Some(a), Some(b)) if a.eq_ignore_ascii_case(b))
            })
        })
    }

    /// Whether this match, earlier in a Lattice route, takes every request of `later`: its
    /// prefix starts `later`'s path (or both are the same Exact path), and every request
    /// that meets `later`'s header conditions meets this one's (`rule-shadowed`).
    pub fn takes_all_of(&self, later: &PathRule) -> bool {
        let path = match self.kind {
            MatchKind::Prefix => later.path.starts_with(&self.path),
            MatchKind::Exact => later.kind == MatchKind::Exact && self.path == later.path,
        };
        path && later.headers_imply(self)
    }

    /// Whether this prefix, earlier in a Lattice route, lies segment-wise under the prefix
    /// `later` and is not written segment-safely (ending in `/`): Lattice gives it
    /// `later`'s `…x` requests in the written order (`nested-prefix`).
    pub fn nests_inside(&self, later: &PathRule) -> bool {
        self.kind == MatchKind::Prefix
            && later.kind == MatchKind::Prefix
            && !self.path.ends_with('/')
            && crate::input::platform::nests_under(&self.path, &later.path)
    }

    /// Whether no request meets both matches' header conditions: one header must have two
    /// different values.
    pub fn headers_exclusive(&self, other: &PathRule) -> bool {
        self.headers.iter().any(|(name, w)| {
            other.headers.iter().any(|(n, v)| {
                n == name && matches!((w, v), (Some(a), Some(b)) if !a.eq_ignore_ascii_case(b))
            })
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct BackendRef {
    pub namespace: String,
    pub name: String,
    pub port: Option<i32>,
}

impl BackendRef {
    /// Whether this is `app`'s Service, on its port.
    pub fn is_of(&self, app: &crate::input::model::App) -> bool {
        self.namespace == app.namespace
            && self.name == app.service
            && self.port == Some(i32::from(app.port))
    }
}

impl std::fmt::Display for BackendRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)?;
        if let Some(p) = self.port {
            write!(f, ":{p}")?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone)]
pub(crate) struct KongRoute {
    pub file: PathBuf,
    pub namespace: String,
    pub name: String,
    /// `app.kubernetes.io/name`: the app the route serves.
    pub app: Option<String>,
    /// `latgen.dev/preview`: the preview of that app the route serves, if it is a
    /// preview's route.
    pub preview: Option<String>,
    pub hostnames: Vec<String>,
    pub matches: Vec<PathRule>,
    pub rewrite_host: Option<String>,
    /// The route's RequestHeaderModifier.
    pub header_changes: HeaderChanges,
    /// The KongPlugins the route names (`konghq.com/plugins`), if any.
    pub plugins: Option<String>,
    /// Where the route's name is written.
    pub name_pos: Pos,
    pub backend: Option<BackendRef>,
}

/// How strongly a Kong route claims a request, compared field by field (higher wins): how
/// specifically a hostname matched (its length; 0 when the route takes any host), whether
/// the best path match is Exact, and that path's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct KongRank {
    pub host: usize,
    pub exact: bool,
    pub length: usize,
}

/// A Kong route that matches a request, and the path that makes it match.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KongClaim<'a> {
    pub route: &'a KongRoute,
    pub rank: KongRank,
    pub rule: &'a PathRule,
}

/// Orders two matching routes: the greater one wins. On equal rank the route first by
/// namespace/name wins.
fn kong_precedence(a: (KongRank, &KongRoute), b: (KongRank, &KongRoute)) -> std::cmp::Ordering {
    a.0.cmp(&b.0)
        .then_with(|| (&b.1.namespace, &b.1.name).cmp(&(&a.1.namespace, &a.1.name)))
}

impl KongRoute {
    /// The app the route serves: its label, else its name (latgen names it after the app).
    pub fn app_name(&self) -> &str {
        self.app.as_deref().unwrap_or(&self.name)
    }

    /// The route's claim on a request: its rank and best matching path, or None when it
    /// does not match the host or the path.
    pub fn claim(&self, host: &str, path: &str) -> Option<(KongRank, &PathRule)> {
        let host_rank = if self.hostnames.is_empty() {
            Some(0)
        } else {
            self.hostnames
                .iter()
                .filter(|h| h.as_str() == host)
                .map(|h| h.len())
                .max()
        }?;
        let best = self
            .matches
            .iter()
            .filter(|m| m.gateway_api_match(path))
            .max_by_key(|m| (m.kind == MatchKind::Exact, m.path.len()))?;
        let rank = KongRank {
            host: host_rank,
            exact: best.kind == MatchKind::Exact,
            length: best.path.len(),
        };
        Some((rank, best))
    }
}

#[derive(Debug, Clone)]
pub(crate) struct LatticeRule {
    pub matches: Vec<PathRule>,
    /// The rule's first backendRef: where a request goes at the weights latgen commits
    /// (a canary's stable Service comes first, at weight 100).
    pub backend: Option<BackendRef>,
    /// Every backendRef with its weight (1 when unset, as Gateway API defaults it).
    pub weighted: Vec<(BackendRef, i32)>,
}

#[derive(Debug, Clone)]
pub(crate) struct LatticeRoute {
    pub file: PathBuf,
    pub namespace: String,
    pub name: String,
    pub name_pos: Pos,
    /// The Lattice service's name: the override annotation's, else the controller's.
    pub service_name: String,
    pub hostnames: Vec<String>,
    pub rules: Vec<LatticeRule>,
}

#[derive(Debug, Clone)]
pub(crate) struct Bridge {
    pub file: PathBuf,
    pub target: String,
}

/// Both halves of the request path, as parsed from manifests.
#[derive(Default, Clone)]
pub(crate) struct Network {
    // Routes are shared with the documents they come from (and so between the networks
    // of two versions of a tree): a network adds only its indexes.
    pub kong: Vec<Arc<KongRoute>>,
    /// Namespace → name → bridge: looked up by borrowed names.
    bridges: BTreeMap<String, BTreeMap<String, Arc<Bridge>>>,
    pub lattice: Vec<Arc<LatticeRoute>>,
    /// First hostname → index in `lattice` (the first route to claim it), so that finding
    /// the Lattice service of a request is a look-up, not a scan.
    by_domain: HashMap<String, usize>,
    /// Hostname ("" for a route that takes any host) → match path (a prefix without its
    /// trailing `/`) → Kong routes that declare it, so that finding the routes a request
    /// could match is a few look-ups, not a scan of them all (nor of every route for `/`).
    /// Made when first asked: a check of one tree follows each Kong route from itself.
    by_match: std::sync::OnceLock<ByMatch>,
    /// Auth policies by the (namespace, name) of the route they target.
    auth: BTreeMap<(String, String), Arc<AuthPolicy>>,
}

type ByMatch = HashMap<String, HashMap<String, Vec<usize>>>;

// The indexes are made from the routes, and a hash map prints in no fixed order: a
// network shows its routes.
impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Network")
            .field("kong", &self.kong)
            .field("bridges", &self.bridges)
            .field("lattice", &self.lattice)
            .finish_non_exhaustive()
    }
}

/// The index keys a request's path could be claimed under: the path itself, without its
/// trailing `/`, and each of its segment-wise ancestors (`/` included).
fn request_keys(path: &str) -> Vec<&str> {
    let mut keys = Vec::new();
    any_request_key(path, |k| {
        keys.push(k);
        false
    });
    keys
}

/// Whether `found` holds for one of the [`request_keys`] of `path`, tried in their order.
fn any_request_key<'p>(path: &'p str, mut found: impl FnMut(&'p str) -> bool) -> bool {
    if found(path) {
        return true;
    }
    let mut rest = path.trim_end_matches('/');
    if rest.is_empty() {
        rest = "/";
    }
    if found(rest) {
        return true;
    }
    while let Some(i) = rest.rfind('/') {
        rest = if i == 0 { "/" } else { &rest[..i] };
        if found(rest) {
            return true;
        }
        if i == 0 {
            break;
        }
    }
    false
}

/// Match keys of Kong routes by hostname ("" for any host); see [`Network::reroutable`].
#[derive(Debug, Default)]
pub(crate) struct Reroutable(BTreeMap<String, BTreeSet<String>>);

impl Reroutable {
    /// Adds the keys of `other`.
    pub fn extend(&mut self, other: Reroutable) {
        for (host, keys) in other.0 {
            self.0.entry(host).or_default().extend(keys);
        }
    }

    /// Whether a route with one of these keys could claim the request.
    pub fn could_claim(&self, host: &str, path: &str) -> bool {
        // Asked of every probe of a large tree: the keys are not collected.
        let (named, any) = (self.0.get(host), self.0.get(""));
        (named.is_some() || any.is_some())
            && any_request_key(path, |k| {
                named.is_some_and(|s| s.contains(k)) || any.is_some_and(|s| s.contains(k))
            })
    }
}

/// The probes of one Kong route that `keep` accepts, into `out`; `p` is the buffer each
/// candidate path is made in.
fn kept_probes(
    r: &KongRoute,
    keep: &impl Fn(&str, &str) -> bool,
    p: &mut String,
    out: &mut BTreeSet<(String, String)>,
) {
    let hosts: Vec<&str> = if r.hostnames.is_empty() {
        vec![ANY_HOST]
    } else {
        r.hostnames.iter().map(String::as_str).collect()
    };
    for m in &r.matches {
        let v = m.path.trim_end_matches('/');
        for suffix in [None, Some("/x"), Some("x"), Some("-x")] {
            p.clear();
            match suffix {
                None => p.push_str(&m.path),
                Some(s) => {
                    p.push_str(v);
                    p.push_str(s);
                }
            }
            for h in hosts.iter().filter(|h| keep(h, p)) {
                out.insert((h.to_string(), p.clone()));
            }
        }
    }
}

/// The index key of a Kong match: segment matching ignores a prefix's trailing `/`.
fn match_key(m: &PathRule) -> &str {
    match m.kind {
        MatchKind::Prefix if m.path.len() > 1 => m.path.trim_end_matches('/'),
        _ => &m.path,
    }
}

/// Where a request ended.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Outcome {
    /// Delivered to this Service, through these routes (Lattice rule index is 0-based).
    Backend {
        backend: BackendRef,
        kong_route: String,
        lattice_route: String,
        rule: usize,
    },
    /// No Kong route matches: Kong answers 404.
    NoKongRoute,
    /// The Kong route's backend is not a known bridge Service.
    NoBridge(String),
    /// The bridge resolves to a name other than the Host the route rewrites to.
    HostMismatch {
        bridge_target: String,
        rewrite_host: String,
    },
    /// No Lattice service has this custom domain.
    NoLatticeService(String),
    /// The Lattice service has no rule for the path: Lattice answers 404.
    NoLatticeRule { lattice_route: String },
}

/// A request that reached a Service: the Service, the Lattice route that sent it there,
/// and the 0-based index of that route's rule.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reached<'a> {
    pub backend: &'a BackendRef,
    pub service: &'a LatticeRoute,
    pub rule: usize,
}

impl Reached<'_> {
    /// The Lattice route as `namespace/name`.
    pub fn lattice_route(&self) -> String {
        format!("{}/{}", self.service.namespace, self.service.name)
    }

    /// The outcome of the request, sent through `kong`, that reached this Service.
    pub fn outcome(&self, kong: &KongRoute) -> Outcome {
        Outcome::Backend {
            backend: self.backend.clone(),
            kong_route: format!("{}/{}", kong.namespace, kong.name),
            lattice_route: self.lattice_route(),
            rule: self.rule,
        }
    }
}

/// The host a request to a Kong route that matches every host is followed with. It stands
/// for any host: [`show_request`] never shows it.
pub(crate) const ANY_HOST: &str = "latgen.probe";

/// A request as a finding shows it: `www.example.com/shop`, or `/shop (any host)`.
pub(crate) fn show_request(host: &str, path: &str) -> String {
    if host == ANY_HOST {
        format!("{path} (any host)")
    } else {
        format!("{host}{path}")
    }
}

impl Outcome {
    /// The Service the request reached, if any.
    pub fn backend(&self) -> Option<&BackendRef> {
        match self {
            Outcome::Backend { backend, .. } => Some(backend),
            _ => None,
        }
    }

    /// A request that Kong accepted but that goes nowhere: a broken request path.
    pub fn is_broken(&self) -> bool {
        !matches!(self, Outcome::Backend { .. } | Outcome::NoKongRoute)
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Backend {
                backend,
                lattice_route,
                rule,
                ..
            } => {
                write!(f, "{backend} (rule {} of {lattice_route})", rule + 1)
            }
            Outcome::NoKongRoute => write!(f, "404 from Kong (no route)"),
            // Each reads on its own and after "goes to": what, then why in brackets.
            Outcome::NoBridge(b) => write!(f, "no bridge (Service `{b}` does not exist)"),
            Outcome::HostMismatch {
                bridge_target,
                rewrite_host,
            } => {
                write!(
                    f,
                    "a Host mismatch (the bridge points at {bridge_target} but the Host is rewritten to {rewrite_host})"
                )
            }
            Outcome::NoLatticeService(h) => {
                write!(f, "no Lattice service (none answers on {h})")
            }
            Outcome::NoLatticeRule { lattice_route } => {
                write!(f, "404 from Lattice ({lattice_route} has no matching rule)")
            }
        }
    }
}

// The parts of the manifests the model reads, with positions.

/// A field written but left empty (`labels:`) is null in YAML; it reads as absent, as the
/// typed objects read it, so that both give the same model.
fn null_as_default<'de, D, T>(de: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Option::<T>::deserialize(de).map(Option::unwrap_or_default)
}

/// Any manifest, read once: the fields of routes and of Services together (each kind
/// simply lacks the other's), so a file is parsed a single time whatever its kind.
#[derive(Deserialize, Clone, Debug)]
struct AnyDoc {
    kind: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    metadata: Meta,
    spec: Option<AnySpec>,
}

#[derive(Deserialize, Clone, Debug, Default)]
#[serde(rename_all = "camelCase")]
struct AnySpec {
    #[serde(default, deserialize_with = "null_as_default")]
    hostnames: Vec<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    rules: Vec<Spanned<RuleDoc>>,
    external_name: Option<String>,
    /// An IAMAuthPolicy's policy text and target.
    policy: Option<String>,
    target_ref: Option<TargetRefDoc>,
}

#[derive(Deserialize, Clone, Debug)]
struct TargetRefDoc {
    kind: Option<String>,
    name: String,
}

#[derive(Deserialize, Clone, Debug, Default)]
struct Meta {
    name: Option<Spanned<String>>,
    namespace: Option<String>,
    #[serde(default, deserialize_with = "null_as_default")]
    labels: BTreeMap<String, String>,
    #[serde(default, deserialize_with = "null_as_default")]
    annotations: BTreeMap<String, String>,
}

#[derive(Deserialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
struct RuleDoc {
    #[serde(default, deserialize_with = "null_as_default")]
    matches: Vec<MatchDoc>,
    #[serde(default, deserialize_with = "null_as_default")]
    filters: Vec<FilterDoc>,
    #[serde(default, deserialize_with = "null_as_default")]
    backend_refs: Vec<BackendDoc>,
}

#[derive(Deserialize, Clone, Debug)]
struct MatchDoc {
    path: Option<PathDoc>,
    #[serde(default, deserialize_with = "null_as_default")]
    headers: Vec<HeaderMatchDoc>,
}

#[derive(Deserialize, Clone, Debug)]
struct HeaderMatchDoc {
    #[serde(rename = "type")]
    kind: Option<String>,
    name: String,
    value: String,
}

#[derive(Deserialize, Clone, Debug, Default)]
struct HeaderModDoc {
    #[serde(default, deserialize_with = "null_as_default")]
    set: Vec<HeaderValueDoc>,
    #[serde(default, deserialize_with = "null_as_default")]
    add: Vec<HeaderValueDoc>,
    #[serde(default, deserialize_with = "null_as_default")]
    remove: Vec<String>,
}

#[derive(Deserialize, Clone, Debug)]
struct HeaderValueDoc {
    name: String,
    value: String,
}

#[derive(Deserialize, Clone, Debug)]
struct PathDoc {
    #[serde(rename = "type")]
    kind: Option<String>,
    value: Option<Spanned<String>>,
}

#[derive(Deserialize, Clone, Debug)]
#[serde(rename_all = "camelCase")]
struct FilterDoc {
    url_rewrite: Option<UrlRewriteDoc>,
    request_header_modifier: Option<HeaderModDoc>,
}

#[derive(Deserialize, Clone, Debug)]
struct UrlRewriteDoc {
    hostname: Option<String>,
}

#[derive(Deserialize, Clone, Debug)]
struct BackendDoc {
    name: String,
    namespace: Option<String>,
    port: Option<i32>,
    weight: Option<i32>,
}

/// A match's header conditions; a header named twice counts once, the first time (as
/// Gateway API says).
fn header_rules(m: &MatchDoc) -> Vec<(String, Option<String>)> {
    let mut out: Vec<(String, Option<String>)> = Vec::new();
    for h in &m.headers {
        let name = h.name.to_ascii_lowercase();
        if out.iter().any(|(n, _)| *n == name) {
            continue;
        }
        let exact = matches!(h.kind.as_deref(), Some("Exact") | None);
        out.push((name, exact.then(|| h.value.clone())));
    }
    out
}

/// What a rule's RequestHeaderModifier filters do, all of them together.
fn header_changes(filters: &[FilterDoc]) -> HeaderChanges {
    let mut out = HeaderChanges::default();
    for m in filters
        .iter()
        .filter_map(|f| f.request_header_modifier.as_ref())
    {
        out.set
            .extend(m.set.iter().map(|h| (h.name.clone(), h.value.clone())));
        out.add
            .extend(m.add.iter().map(|h| (h.name.clone(), h.value.clone())));
        out.remove.extend(m.remove.iter().cloned());
    }
    out
}

fn path_rules(matches: &[MatchDoc], rule_pos: Pos) -> Vec<PathRule> {
    matches
        .iter()
        .filter_map(|m| {
            let headers = header_rules(m);
            let Some(p) = &m.path else {
                // A match without a path matches every path (PathPrefix /).
                return Some(PathRule {
                    kind: MatchKind::Prefix,
                    path: "/".into(),
                    pos: rule_pos,
                    headers,
                });
            };
            let kind = match p.kind.as_deref() {
                Some("Exact") => MatchKind::Exact,
                Some("PathPrefix") | None => MatchKind::Prefix,
                Some(_) => return None,
            };
            let (path, pos) = match &p.value {
                Some(v) => (v.value.clone(), Pos::of(v)),
                None => ("/".into(), rule_pos),
            };
            Some(PathRule {
                kind,
                path,
                pos,
                headers,
            })
        })
        .collect()
}

/// A manifest to read into the model: its text, or the model of it already made.
#[derive(Clone, Copy)]
pub(crate) enum Source<'a> {
    Text(&'a str),
    Read(&'a Doc),
}

/// The Lattice service name of a route: its override annotation's, else the controller's.
fn service_name_of(metadata: &Meta, name: &str, namespace: &str) -> String {
    metadata
        .annotations
        .get(crate::plan::services::OVERRIDE_ANNOTATION)
        .cloned()
        .unwrap_or_else(|| crate::input::platform::lattice_service_name(name, namespace))
}

/// A manifest as the routing model reads it: what it adds to a network. Made by parsing
/// the text, or from the typed object the render's read-back already parsed (then without
/// positions: see [`Doc::from_route`]).
#[derive(Clone, Debug)]
pub(crate) struct Doc(Arc<Entry>);

/// The position of what a model made without parsing holds: the one a typed object's
/// model has (see [`Doc::from_route`]).
pub(crate) fn no_position() -> Pos {
    Pos::of(&unplaced(()))
}

fn unplaced<T>(value: T) -> Spanned<T> {
    use serde_saphyr::Location;
    Spanned::new(value, Location::UNKNOWN, Location::UNKNOWN)
}

/// The metadata of a typed object, as far as the model reads it: the labels and
/// annotations it looks up, not all of them.
fn meta_of(meta: &ObjectMeta) -> Meta {
    let only = |map: &Option<BTreeMap<String, String>>, keys: &[&str]| -> BTreeMap<_, _> {
        let map = map.as_ref();
        (keys.iter())
            .filter_map(|k| Some((k.to_string(), map?.get(*k)?.clone())))
            .collect()
    };
    Meta {
        name: meta.name.clone().map(unplaced),
        namespace: meta.namespace.clone(),
        labels: only(&meta.labels, &[APP_LABEL]),
        annotations: only(
            &meta.annotations,
            &[
                PLUGINS_ANNOTATION,
                crate::plan::services::OVERRIDE_ANNOTATION,
            ],
        ),
    }
}

/// The model of typed header matches.
fn header_matches_of(
    headers: &[gateway_api::apis::standard::httproutes::HttpRouteRulesMatchesHeaders],
) -> Vec<HeaderMatchDoc> {
    headers
        .iter()
        .map(|h| HeaderMatchDoc {
            kind: h.r#type.as_ref().map(|t| format!("{t:?}")),
            name: h.name.clone(),
            value: h.value.clone(),
        })
        .collect()
}

/// The model of a typed RequestHeaderModifier.
fn header_mod_of(
    m: &gateway_api::apis::standard::httproutes::HttpRouteRulesFiltersRequestHeaderModifier,
) -> HeaderModDoc {
    let pair = |name: &String, value: &String| HeaderValueDoc {
        name: name.clone(),
        value: value.clone(),
    };
    HeaderModDoc {
        set: m
            .set
            .as_deref()
            .unwrap_or_default()
            .iter()
            .map(|h| pair(&h.name, &h.value))
            .collect(),
        add: m
            .add
            .as_deref()
            .unwrap_or_default()
            .iter()
            .map(|h| pair(&h.name, &h.value))
            .collect(),
        remove: m.remove.clone().unwrap_or_default(),
    }
}

impl Doc {
    /// Parses a manifest's text, keeping the positions of names, rules and paths.
    pub fn parse(file: &Path, text: &str) -> Result<Doc, String> {
        parse_doc(file, text).map(|d| Doc::of(file, &d))
    }

    fn of(file: &Path, doc: &AnyDoc) -> Doc {
        Doc(Arc::new(Entry::of(file, doc, is_kong_file(file))))
    }

    /// The Lattice service domains this object sends requests to: a Kong route's rewritten
    /// Host and a bridge's target. Empty for other objects.
    pub fn lattice_domains(&self) -> Vec<&str> {
        match &*self.0 {
            Entry::Kong(routes) => (routes.iter())
                .filter_map(|r| r.rewrite_host.as_deref())
                .collect(),
            Entry::Bridge(_, bridge) => vec![bridge.target.as_str()],
            _ => Vec::new(),
        }
    }

    /// The domains a Lattice route answers on. Empty for other objects.
    pub fn lattice_hostnames(&self) -> &[String] {
        match &*self.0 {
            Entry::Lattice(route) => &route.hostnames,
            _ => &[],
        }
    }

    /// The model of an object of a kind the routing model ignores (a ReferenceGrant, a
    /// TargetGroupPolicy): equal to what parsing its text gives, as far as routing goes.
    pub fn other() -> Doc {
        Doc(Arc::new(Entry::Nothing))
    }

    /// The model of a typed HTTPRoute written to `file` (under the output folder), equal
    /// to what parsing its text gives except that it has no positions (every line is 0); a
    /// finding about it needs the text parsed.
    pub fn from_route(file: &Path, meta: &ObjectMeta, spec: &HttpRouteSpec) -> Doc {
        use gateway_api::apis::standard::httproutes::HttpRouteRulesMatchesPathType as T;
        let rules = spec.rules.as_deref().unwrap_or_default().iter().map(|r| {
            unplaced(RuleDoc {
                matches: r
                    .matches
                    .as_deref()
                    .unwrap_or_default()
                    .iter()
                    .map(|m| MatchDoc {
                        headers: header_matches_of(m.headers.as_deref().unwrap_or_default()),
                        path: m.path.as_ref().map(|p| PathDoc {
                            kind: p.r#type.as_ref().map(|t| {
                                match t {
                                    T::Exact => "Exact",
                                    T::PathPrefix => "PathPrefix",
                                    T::RegularExpression => "RegularExpression",
                                }
                                .to_string()
                            }),
                            value: p.value.clone().map(unplaced),
                        }),
                    })
                    .collect(),
                filters: r
                    .filters
                    .as_deref()
                    .unwrap_or_default()
                    .iter()
                    .map(|f| FilterDoc {
                        url_rewrite: f.url_rewrite.as_ref().map(|u| UrlRewriteDoc {
                            hostname: u.hostname.clone(),
                        }),
                        request_header_modifier: f
                            .request_header_modifier
                            .as_ref()
                            .map(header_mod_of),
                    })
                    .collect(),
                backend_refs: r
                    .backend_refs
                    .as_deref()
                    .unwrap_or_default()
                    .iter()
                    .map(|b| BackendDoc {
                        name: b.name.clone(),
                        namespace: b.namespace.clone(),
                        port: b.port,
                        weight: b.weight,
                    })
                    .collect(),
            })
        });
        let doc = AnyDoc {
            kind: Some("HTTPRoute".into()),
            metadata: meta_of(meta),
            spec: Some(AnySpec {
                hostnames: spec.hostnames.clone().unwrap_or_default(),
                rules: rules.collect(),
                ..AnySpec::default()
            }),
        };
        Doc::of(file, &doc)
    }

    /// The model of a bridge: a Service `namespace/name` of type ExternalName `target`,
    /// written to `file`. Equal to what parsing it gives, without the typed Service.
    pub fn bridge(file: &Path, namespace: &str, name: &str, target: &str) -> Doc {
        let bridge = Bridge {
            file: file.to_path_buf(),
            target: target.to_string(),
        };
        let key = (namespace.to_string(), name.to_string());
        Doc(Arc::new(Entry::Bridge(key, Arc::new(bridge))))
    }

    /// The model of a Kong HTTPRoute made from its routes (one per rule), without parsing
    /// or typing it: see [`no_position`].
    pub fn kong(routes: Vec<KongRoute>) -> Doc {
        Doc(Arc::new(Entry::Kong(
            routes.into_iter().map(Arc::new).collect(),
        )))
    }

    /// The model of an IAMAuthPolicy in `namespace` with policy text `policy`, targeting
    /// the route `target`.
    pub fn auth(file: &Path, namespace: &str, target: &str, policy: &str) -> Doc {
        let p = AuthPolicy::read(file.to_path_buf(), namespace.into(), target.into(), policy);
        Doc(Arc::new(Entry::Auth(Arc::new(p))))
    }

    /// The model of a typed Service (see [`Doc::from_route`]).
    pub fn from_service(file: &Path, meta: &ObjectMeta, external_name: Option<&str>) -> Doc {
        let doc = AnyDoc {
            kind: Some("Service".into()),
            metadata: meta_of(meta),
            spec: Some(AnySpec {
                external_name: external_name.map(str::to_string),
                ..AnySpec::default()
            }),
        };
        Doc::of(file, &doc)
    }
}

fn parse_doc(file: &Path, text: &str) -> Result<AnyDoc, String> {
    serde_saphyr::from_str(text).map_err(|e| format!("{}: {}", file.display(), e.without_snippet()))
}

/// What one manifest adds to a network, made on its own (in parallel with the others).
#[derive(Clone, Debug)]
enum Entry {
    Kong(Vec<Arc<KongRoute>>),
    Lattice(Arc<LatticeRoute>),
    Bridge((String, String), Arc<Bridge>),
    Auth(Arc<AuthPolicy>),
    Nothing,
}

impl Entry {
    fn of(file: &Path, doc: &AnyDoc, is_kong: bool) -> Entry {
        let spec = doc.spec.as_ref();
        match doc.kind.as_deref() {
            Some("HTTPRoute") => {
                let empty = AnySpec::default();
                let spec = spec.unwrap_or(&empty);
                if is_kong {
                    Entry::Kong(kong_routes(file, &doc.metadata, spec))
                } else {
                    Entry::Lattice(Arc::new(lattice_route(file, &doc.metadata, spec)))
                }
            }
            Some("Service") => match spec.and_then(|s| s.external_name.clone()) {
                Some(target) => {
                    let name = doc.metadata.name.as_ref().map(|n| n.value.clone());
                    let namespace = doc.metadata.namespace.clone().unwrap_or_default();
                    let bridge = Bridge {
                        file: file.to_path_buf(),
                        target,
                    };
                    Entry::Bridge((namespace, name.unwrap_or_default()), Arc::new(bridge))
                }
                None => Entry::Nothing,
            },
            Some("IAMAuthPolicy") => {
                match spec.and_then(|s| Some((s.policy.as_deref()?, s.target_ref.as_ref()?))) {
                    Some((policy, target)) if target.kind.as_deref() == Some("HTTPRoute") => {
                        let namespace = doc.metadata.namespace.clone().unwrap_or_default();
                        let p = AuthPolicy::read(
                            file.to_path_buf(),
                            namespace,
                            target.name.clone(),
                            policy,
                        );
                        Entry::Auth(Arc::new(p))
                    }
                    _ => Entry::Nothing,
                }
            }
            _ => Entry::Nothing,
        }
    }
}

/// A route's namespace, name and where the name is written.
fn identity(metadata: &Meta) -> (String, String, Pos) {
    let namespace = metadata.namespace.clone().unwrap_or_default();
    let (name, name_pos) = metadata
        .name
        .as_ref()
        .map(|n| (n.value.clone(), Pos::of(n)))
        .unwrap_or_default();
    (namespace, name, name_pos)
}

/// A rule's backend: its first backendRef, in the route's namespace unless it names one.
fn backend_of(refs: &[BackendDoc], namespace: &str) -> Option<BackendRef> {
    refs.first().map(|b| backend_ref(b, namespace))
}

fn backend_ref(b: &BackendDoc, namespace: &str) -> BackendRef {
    BackendRef {
        namespace: b.namespace.clone().unwrap_or_else(|| namespace.to_string()),
        name: b.name.clone(),
        port: b.port,
    }
}

/// The Kong routes of an HTTPRoute on the Kong side: one per rule.
fn kong_routes(file: &Path, metadata: &Meta, spec: &AnySpec) -> Vec<Arc<KongRoute>> {
    let (namespace, name, name_pos) = identity(metadata);
    spec.rules
        .iter()
        .map(|rule| {
            Arc::new(KongRoute {
                file: file.to_path_buf(),
                namespace: namespace.clone(),
                name: name.clone(),
                app: metadata.labels.get(APP_LABEL).cloned(),
                preview: metadata.labels.get(PREVIEW_LABEL).cloned(),
                plugins: metadata.annotations.get(PLUGINS_ANNOTATION).cloned(),
                name_pos,
                hostnames: spec.hostnames.clone(),
                matches: path_rules(&rule.value.matches, Pos::of(rule)),
                rewrite_host: rule
                    .value
                    .filters
                    .iter()
                    .find_map(|f| f.url_rewrite.as_ref()?.hostname.clone()),
                header_changes: header_changes(&rule.value.filters),
                backend: backend_of(&rule.value.backend_refs, &namespace),
            })
        })
        .collect()
}

/// The Lattice route of an HTTPRoute on the Lattice side.
fn lattice_route(file: &Path, metadata: &Meta, spec: &AnySpec) -> LatticeRoute {
    let (namespace, name, name_pos) = identity(metadata);
    let rules = spec
        .rules
        .iter()
        .map(|r| LatticeRule {
            matches: path_rules(&r.value.matches, Pos::of(r)),
            backend: backend_of(&r.value.backend_refs, &namespace),
            weighted: (r.value.backend_refs.iter())
                .map(|b| (backend_ref(b, &namespace), b.weight.unwrap_or(1)))
                .collect(),
        })
        .collect();
    let service_name = service_name_of(metadata, &name, &namespace);
    LatticeRoute {
        file: file.to_path_buf(),
        namespace,
        name,
        name_pos,
        service_name,
        hostnames: spec.hostnames.clone(),
        rules,
    }
}

/// Two rules of one Lattice route, to different backends, that one request can match both:
/// the route sends it where its rule order says, and the controller does not keep that order.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OrderDependence<'a> {
    /// The rule that comes first in the route as written (the one that matches first).
    pub first: (&'a PathRule, Option<&'a BackendRef>),
    pub then: (&'a PathRule, Option<&'a BackendRef>),
}

impl OrderDependence<'_> {
    /// The key of the pair, whatever the order of its rules: the two (path type, path,
    /// backend) triples, sorted.
    pub fn key(&self) -> [(MatchKind, String, Option<BackendRef>); 2] {
        let side = |(m, b): (&PathRule, Option<&BackendRef>)| (m.kind, m.path.clone(), b.cloned());
        let mut key = [side(self.first), side(self.then)];
        key.sort();
        key
    }
}

impl LatticeRoute {
    /// Pairs of rules to different backends that one request can match both, whose
    /// matches' headers do not exclude each other, and that the route as written orders
    /// right (the later path is not one the earlier matches whole): they route right only
    /// while the rules keep this order. Pairs ordered wrong, and prefixes that nest
    /// segment-wise, misroute in any order and are other findings.
    pub fn order_dependent(&self) -> Vec<OrderDependence<'_>> {
        let rules: Vec<(&PathRule, Option<&BackendRef>)> = self
            .rules
            .iter()
            .flat_map(|r| r.matches.iter().map(move |m| (m, r.backend.as_ref())))
            .collect();
        let mut pairs = Vec::new();
        for (i, &(a, a_backend)) in rules.iter().enumerate() {
            for &(b, b_backend) in &rules[i + 1..] {
                let overlap = crate::input::platform::lattice_matches_overlap(
                    (a.kind, &a.path),
                    (b.kind, &b.path),
                );
                if a_backend == b_backend || !overlap || a.headers_exclusive(b) {
                    continue;
                }
                // Misrouted in the written order already: check's shadowing findings.
                if !a.takes_all_of(b) && !a.nests_inside(b) {
                    pairs.push(OrderDependence {
                        first: (a, a_backend),
                        then: (b, b_backend),
                    });
                }
            }
        }
        pairs
    }

    /// The Lattice route a manifest (on the Lattice side) holds, if it holds one.
    pub fn parse(file: &Path, text: &str) -> Option<LatticeRoute> {
        match Entry::of(file, &parse_doc(file, text).ok()?, false) {
            Entry::Lattice(route) => Some(Arc::unwrap_or_clone(route)),
            _ => None,
        }
    }
}

/// Which half of the output a file belongs to, by its first folder.
pub(crate) fn is_kong_file(path: &Path) -> bool {
    crate::manifest::layout::side_of(path) == crate::manifest::layout::Side::Kong
}

impl Network {
    /// Adds what one manifest holds, and indexes it.
    fn add_entry(&mut self, entry: Entry) {
        match entry {
            Entry::Kong(routes) => {
                for route in routes {
                    self.add_kong(route);
                }
            }
            Entry::Lattice(route) => {
                if let Some(first) = route.hostnames.first()
                    && !self.by_domain.contains_key(first)
                {
                    self.by_domain.insert(first.clone(), self.lattice.len());
                }
                self.lattice.push(route);
            }
            Entry::Bridge((namespace, name), bridge) => {
                self.bridges
                    .entry(namespace)
                    .or_default()
                    .insert(name, bridge);
            }
            Entry::Auth(policy) => {
                // The controller lets the first policy of a target win; the others are
                // Conflicted.
                let key = (policy.namespace.clone(), policy.target.clone());
                self.auth.entry(key).or_insert(policy);
            }
            Entry::Nothing => {}
        }
    }

    /// The auth policy of a Lattice route, if it has one.
    pub fn auth_policy(&self, route: &LatticeRoute) -> Option<&AuthPolicy> {
        (self
            .auth
            .get(&(route.namespace.clone(), route.name.clone())))
        .map(|p| &**p)
    }

    /// The files that go with `files` for auth: the policy of each route among them, and
    /// the route of each policy among them.
    pub fn auth_companions(&self, files: &BTreeSet<PathBuf>) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for route in &self.lattice {
            if let Some(policy) = self.auth_policy(route)
                && (files.contains(&route.file) || files.contains(&policy.file))
            {
                out.extend([route.file.clone(), policy.file.clone()]);
            }
        }
        out
    }

    fn add_kong(&mut self, route: Arc<KongRoute>) {
        self.kong.push(route);
        self.by_match.take();
    }

    fn by_match(&self) -> &ByMatch {
        self.by_match.get_or_init(|| {
            let mut by_match = ByMatch::new();
            let any_host = [String::new()];
            for (index, route) in self.kong.iter().enumerate() {
                let hosts = match route.hostnames.as_slice() {
                    [] => &any_host[..],
                    named => named,
                };
                for host in hosts {
                    let by_path = by_match.entry(host.clone()).or_default();
                    for m in &route.matches {
                        let routes = by_path.entry(match_key(m).to_string()).or_default();
                        if routes.last() != Some(&index) {
                            routes.push(index);
                        }
                    }
                }
            }
            by_match
        })
    }

    /// Reads many manifests (path, text, which half) in parallel, keeping their order;
    /// returns the network and the files that could not be read, with why.
    pub fn from_files_par(files: &[(PathBuf, &str, bool)]) -> (Network, Vec<(PathBuf, String)>) {
        let sources: Vec<(PathBuf, Source<'_>, bool)> = files
            .iter()
            .map(|(p, t, k)| (p.clone(), Source::Text(t), *k))
            .collect();
        Network::from_sources(&sources)
    }

    /// Like [`Network::from_files_par`], but a manifest may come already read.
    pub fn from_sources<P: AsRef<Path> + Sync>(
        files: &[(P, Source<'_>, bool)],
    ) -> (Network, Vec<(PathBuf, String)>) {
        use rayon::prelude::*;
        // Parsing and making the routes of each manifest are independent: done in parallel;
        // only indexing them is done in order.
        let entries: Vec<Result<Entry, String>> = files
            .par_iter()
            .map(|(p, source, is_kong)| match source {
                Source::Text(t) => Ok(Entry::of(p.as_ref(), &parse_doc(p.as_ref(), t)?, *is_kong)),
                Source::Read(doc) => Ok((*doc.0).clone()),
            })
            .collect();
        let mut net = Network::default();
        let mut errors = Vec::new();
        for ((path, _, _), entry) in files.iter().zip(entries) {
            match entry {
                Ok(entry) => net.add_entry(entry),
                Err(e) => errors.push((path.as_ref().to_path_buf(), e)),
            }
        }
        (net, errors)
    }

    /// The Lattice route that owns a custom domain: the controller takes a route's first
    /// hostname as its service's custom domain.
    pub fn lattice_service(&self, host: &str) -> Option<&LatticeRoute> {
        self.by_domain.get(host).map(|&i| &*self.lattice[i])
    }

    /// Follows one request for `host` and `path` through Kong, the bridge and Lattice.
    pub fn route(&self, host: &str, path: &str) -> Outcome {
        self.route_with(host, path, &Headers::new())
    }

    /// Like [`Network::route`], for a client that sends `headers` (forged ones included).
    pub fn route_with(&self, host: &str, path: &str, headers: &Headers) -> Outcome {
        match self.kong_route(host, path) {
            Some(kong) => self.through_with(kong, host, path, headers),
            None => Outcome::NoKongRoute,
        }
    }

    /// Follows a request that Kong matched to `kong` onward, through the bridge and Lattice.
    pub fn through(&self, kong: &KongRoute, host: &str, path: &str) -> Outcome {
        self.through_with(kong, host, path, &Headers::new())
    }

    /// Like [`Network::through`], for a client that sends `headers`.
    pub fn through_with(
        &self,
        kong: &KongRoute,
        host: &str,
        path: &str,
        headers: &Headers,
    ) -> Outcome {
        match self.follow(kong, host, path, headers) {
            Ok(reached) => reached.outcome(kong),
            Err(outcome) => outcome,
        }
    }

    /// Where a request through `kong` ends, by reference: the Service it reaches, or the
    /// outcome that says why it reaches none. A check follows tens of thousands of
    /// requests, most of which arrive: their outcome is not built.
    pub fn follow<'a>(
        &'a self,
        kong: &'a KongRoute,
        host: &str,
        path: &str,
        headers: &Headers,
    ) -> Result<Reached<'a>, Outcome> {
        let Some(backend) = &kong.backend else {
            return Err(Outcome::NoBridge(String::new()));
        };
        let Some(bridge) = self.bridge(&backend.namespace, &backend.name) else {
            return Err(Outcome::NoBridge(backend.name.clone()));
        };
        let lattice_host = kong.rewrite_host.as_deref().unwrap_or(host);
        if bridge.target != lattice_host {
            return Err(Outcome::HostMismatch {
                bridge_target: bridge.target.clone(),
                rewrite_host: lattice_host.to_string(),
            });
        }
        let Some(service) = self.lattice_service(lattice_host) else {
            return Err(Outcome::NoLatticeService(lattice_host.to_string()));
        };
        let headers = kong.header_changes.apply(headers);
        for (rule, r) in service.rules.iter().enumerate() {
            if r.matches.iter().any(|m| m.lattice_match(path, &headers))
                && let Some(backend) = &r.backend
            {
                return Ok(Reached {
                    backend,
                    service,
                    rule,
                });
            }
        }
        Err(Outcome::NoLatticeRule {
            lattice_route: format!("{}/{}", service.namespace, service.name),
        })
    }

    /// Whether Kong's request for `host` and `path` reaches a Service and is let in by the
    /// auth policy of the Lattice service that serves it (one with no policy lets all in).
    pub fn kong_access(&self, host: &str, path: &str, probe: &AuthProbe) -> bool {
        let Some(kong) = self.kong_route(host, path) else {
            return false;
        };
        let Ok(reached) = self.follow(kong, host, path, &Headers::new()) else {
            return false;
        };
        let headers = kong.header_changes.apply(&Headers::new());
        self.allows(reached.service, &probe.kong, path, &headers, probe)
    }

    /// Whether a request of `who` straight to the Lattice service of domain `domain`
    /// reaches a Service and is let in.
    pub fn direct_access(
        &self,
        (domain, path, headers): (&str, &str, &Headers),
        who: &Identity,
        probe: &AuthProbe,
    ) -> bool {
        let Some(service) = self.lattice_service(domain) else {
            return false;
        };
        let reaches = (service.rules.iter())
            .find(|r| r.matches.iter().any(|m| m.lattice_match(path, headers)))
            .is_some_and(|r| r.backend.is_some());
        reaches && self.allows(service, who, path, headers, probe)
    }

    fn allows(
        &self,
        service: &LatticeRoute,
        who: &Identity,
        path: &str,
        headers: &Headers,
        probe: &AuthProbe,
    ) -> bool {
        let Some(policy) = self.auth_policy(service) else {
            return true;
        };
        let resource = probe.resource(path);
        policy
            .decide(&Call {
                who,
                resource: &resource,
                headers,
            })
            .allows()
    }

    /// The bridge Service `namespace/name`.
    pub fn bridge(&self, namespace: &str, name: &str) -> Option<&Arc<Bridge>> {
        self.bridges.get(namespace)?.get(name)
    }

    /// Gateway API precedence: the most specific matching hostname, then an Exact match,
    /// then the longest prefix; ties go to the route first by namespace/name.
    pub fn kong_route(&self, host: &str, path: &str) -> Option<&KongRoute> {
        self.kong_routes_for(host, path)
            .into_iter()
            .map(|i| &*self.kong[i])
            .filter_map(|r| Some((r.claim(host, path)?.0, r)))
            .max_by(|(ka, ra), (kb, rb)| kong_precedence((*ka, ra), (*kb, rb)))
            .map(|(_, r)| r)
    }

    /// The Kong routes for `host` (or for any host) with a match that could apply to
    /// `path`: an Exact match on it, or a prefix that is `path` or one of its segment-wise
    /// ancestors (`/` included).
    fn kong_routes_for(&self, host: &str, path: &str) -> Vec<usize> {
        let keys = request_keys(path);
        let mut routes: Vec<usize> = [host, ""]
            .iter()
            .filter_map(|h| self.by_match().get(*h))
            .flat_map(|by_path| keys.iter().filter_map(|k| by_path.get(*k)))
            .flatten()
            .copied()
            .collect();
        routes.sort_unstable();
        routes.dedup();
        routes
    }

    /// The files a request's way through this network depends on: every Kong route that
    /// claims it, their bridges, and the Lattice route serving each host they send it to.
    pub fn files_on_the_way(&self, host: &str, path: &str) -> Vec<&Path> {
        let mut out = Vec::new();
        for route in self
            .kong_routes_for(host, path)
            .into_iter()
            .map(|i| &self.kong[i])
        {
            if route.claim(host, path).is_none() {
                continue;
            }
            out.push(route.file.as_path());
            if let Some(b) = &route.backend
                && let Some(bridge) = self.bridge(&b.namespace, &b.name)
            {
                out.push(bridge.file.as_path());
            }
            let lattice_host = route.rewrite_host.as_deref().unwrap_or(host);
            if let Some(service) = self.lattice_service(lattice_host) {
                out.push(service.file.as_path());
            }
        }
        out
    }

    /// The match keys, by hostname ("" for any host), of the Kong routes whose requests a
    /// change to the `changed` files can reroute: the routes in those files, those whose
    /// bridge is in them, and those that send requests to a Lattice service one of them
    /// serves. A request no such key could claim goes the same way whatever those files say.
    pub fn reroutable(&self, changed: &BTreeSet<PathBuf>) -> Reroutable {
        let hosts: BTreeSet<&str> = self
            .lattice
            .iter()
            .filter(|l| changed.contains(&l.file))
            .flat_map(|l| l.hostnames.iter().map(String::as_str))
            .collect();
        let touched = |r: &KongRoute| {
            let bridge = r
                .backend
                .as_ref()
                .and_then(|b| self.bridge(&b.namespace, &b.name));
            let sends_to = match (&r.rewrite_host, r.hostnames.is_empty()) {
                (Some(h), _) => hosts.contains(h.as_str()),
                // The request's own host: any, for a route that takes any host.
                (None, true) => !hosts.is_empty(),
                (None, false) => r.hostnames.iter().any(|h| hosts.contains(h.as_str())),
            };
            changed.contains(&r.file)
                || bridge.is_some_and(|b| changed.contains(&b.file))
                || sends_to
        };
        let mut keys = Reroutable::default();
        for r in self.kong.iter().filter(|r| touched(r)) {
            let on: Vec<&str> = if r.hostnames.is_empty() {
                vec![""]
            } else {
                r.hostnames.iter().map(String::as_str).collect()
            };
            for host in on {
                let by_host = keys.0.entry(host.to_string()).or_default();
                by_host.extend(r.matches.iter().map(|m| match_key(m).to_string()));
            }
        }
        keys
    }

    /// Every Kong route that matches a request, with its rank and best path, in precedence
    /// order: the first is [`Network::kong_route`]'s answer, the others lost to it.
    pub fn kong_candidates(&self, host: &str, path: &str) -> Vec<KongClaim<'_>> {
        let mut out: Vec<KongClaim<'_>> = self
            .kong
            .iter()
            .filter_map(|route| {
                let (rank, rule) = route.claim(host, path)?;
                Some(KongClaim { route, rank, rule })
            })
            .collect();
        out.sort_by(|a, b| kong_precedence((b.rank, b.route), (a.rank, a.route)));
        out
    }

    #[cfg(test)]
    /// Requests worth following to compare two networks or to check one: every path a Kong
    /// route declares, one segment deeper, and string extensions that expose string-prefix
    /// matching (`/shop` → `/shopx`, `/shop-x`), on each route's hosts.
    pub fn probes(&self) -> Vec<(String, String)> {
        self.probes_where(|_, _| true).into_iter().collect()
    }

    /// The [`Network::probes`] that `keep` accepts (host, path). The Kong routes are
    /// gone through in parallel: a rollout asks this of every route of a large tree.
    pub fn probes_where(
        &self,
        keep: impl Fn(&str, &str) -> bool + Sync,
    ) -> BTreeSet<(String, String)> {
        use rayon::prelude::*;
        self.kong
            .par_chunks(512)
            .map(|routes| {
                let mut out = BTreeSet::new();
                // One buffer for every candidate path: most are not kept, and are never
                // allocated.
                let mut p = String::new();
                for r in routes {
                    kept_probes(r, &keep, &mut p, &mut out);
                }
                out
            })
            .reduce(BTreeSet::new, |mut a, mut b| {
                a.append(&mut b);
                a
            })
    }
}
