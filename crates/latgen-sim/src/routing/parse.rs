//! Reading manifests into the routing model: a light mirror of the fields routing needs,
//! which keeps the line of every name, rule and path so that findings can point into the
//! committed files (hand edits included); fields it does not need are ignored. A typed
//! object that latgen's render already holds becomes the same model without parsing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use gateway_api::apis::standard::httproutes::HttpRouteSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use serde_saphyr::Spanned;

use super::*;
use crate::Pos;
use crate::iam::AuthPolicy;
use crate::platform::MatchKind;

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
pub(crate) struct AnyDoc {
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
pub enum Source<'a> {
    Text(&'a str),
    Read(&'a Doc),
}

/// The Lattice service name of a route: its override annotation's, else the controller's.
fn service_name_of(metadata: &Meta, name: &str, namespace: &str) -> String {
    metadata
        .annotations
        .get(crate::platform::OVERRIDE_ANNOTATION)
        .cloned()
        .unwrap_or_else(|| crate::platform::lattice_service_name(name, namespace))
}

/// A manifest as the routing model reads it: what it adds to a network. Made by parsing
/// the text, or from the typed object the render's read-back already parsed (then without
/// positions: see [`Doc::from_route`]).
#[derive(Clone, Debug)]
pub struct Doc(pub(crate) Arc<Entry>);

/// The position of what a model made without parsing holds: the one a typed object's
/// model has (see [`Doc::from_route`]).
pub fn no_position() -> Pos {
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
                crate::platform::OVERRIDE_ANNOTATION,
                crate::platform::ASSIGNED_DOMAIN_ANNOTATION,
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
    /// Parses a manifest's text, keeping the positions of names, rules and paths. An
    /// HTTPRoute of a Kong file (`kong`) is Kong's; any other is Lattice's.
    pub fn parse(file: &Path, text: &str, kong: bool) -> Result<Doc, String> {
        parse_doc(file, text).map(|d| Doc::of(file, &d, kong))
    }

    fn of(file: &Path, doc: &AnyDoc, kong: bool) -> Doc {
        Doc(Arc::new(Entry::of(file, doc, kong)))
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

    /// For a Lattice route, its namespace and each namespace its backends are in: a route
    /// reaches a Service in another namespace only while a ReferenceGrant there lets it.
    pub fn lattice_backend_namespaces(&self) -> Option<(&str, BTreeSet<&str>)> {
        match &*self.0 {
            Entry::Lattice(route) => Some((
                route.namespace.as_str(),
                (route.rules.iter())
                    .flat_map(|r| &r.weighted)
                    .map(|(b, _)| b.namespace.as_str())
                    .collect(),
            )),
            _ => None,
        }
    }

    /// The domains a Lattice route answers on: its hostnames, and the domain Lattice
    /// assigned its service where the route records it. Empty for other objects.
    pub fn lattice_hostnames(&self) -> Vec<&str> {
        match &*self.0 {
            Entry::Lattice(route) => (route.hostnames.iter())
                .chain(route.assigned_domain.as_ref())
                .map(String::as_str)
                .collect(),
            _ => Vec::new(),
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
    pub fn from_route(file: &Path, meta: &ObjectMeta, spec: &HttpRouteSpec, kong: bool) -> Doc {
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
        Doc::of(file, &doc, kong)
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
        Doc::of(file, &doc, false)
    }
}

pub(crate) fn parse_doc(file: &Path, text: &str) -> Result<AnyDoc, String> {
    serde_saphyr::from_str(text).map_err(|e| format!("{}: {}", file.display(), e.without_snippet()))
}

/// What one manifest adds to a network, made on its own (in parallel with the others).
#[derive(Clone, Debug)]
pub(crate) enum Entry {
    Kong(Vec<Arc<KongRoute>>),
    Lattice(Arc<LatticeRoute>),
    Bridge((String, String), Arc<Bridge>),
    Auth(Arc<AuthPolicy>),
    Nothing,
}

impl Entry {
    pub(crate) fn of(file: &Path, doc: &AnyDoc, is_kong: bool) -> Entry {
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
        assigned_domain: (metadata.annotations)
            .get(crate::platform::ASSIGNED_DOMAIN_ANNOTATION)
            .cloned(),
        rules,
    }
}
