//! The typed Kubernetes object a built-in template must turn each context into (see
//! `objects`): what the template's output parses back into, field for field, and the
//! routing model a check reads from it.

use gateway_api::apis::standard::httproutes::{
    HttpRouteParentRefs, HttpRouteRules, HttpRouteRulesBackendRefs, HttpRouteRulesFilters,
    HttpRouteRulesFiltersRequestHeaderModifier, HttpRouteRulesFiltersRequestHeaderModifierSet,
    HttpRouteRulesFiltersType, HttpRouteRulesFiltersUrlRewrite, HttpRouteRulesMatches,
    HttpRouteRulesMatchesHeaders, HttpRouteRulesMatchesHeadersType, HttpRouteRulesMatchesPath,
    HttpRouteRulesMatchesPathType, HttpRouteSpec,
};
use gateway_api::apis::standard::referencegrants::{
    ReferenceGrantFrom, ReferenceGrantSpec, ReferenceGrantTo,
};
use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use super::objects::{
    AuthPolicyCtx, BackendCtx, Bridge, GatewayCtx, GroupRoute, HostRoute, KongRoute, Object,
    ReferenceGrant, RuleCtx, TargetGroupPolicy,
};
use crate::manifest::layout::is_kong_file;
use latgen_sim::crd::iamauthpolicy::{IamAuthPolicySpec, IamAuthPolicyTargetRef};
use latgen_sim::crd::targetgrouppolicy::{
    TargetGroupPolicyHealthCheck, TargetGroupPolicySpec, TargetGroupPolicyTargetRef,
};
use latgen_sim::routing::{APP_LABEL as APP_NAME, Doc};

const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "latgen");
const GROUP_LABEL: &str = "latgen.dev/group";
/// The label of a preview group's route: its number among the preview groups.
pub(crate) const PREVIEW_GROUP_LABEL: &str = "latgen.dev/preview-group";
const GATEWAY_API_GROUP: &str = "gateway.networking.k8s.io";

/// kustomize's file format, reduced to what latgen writes.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Kustomization {
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    pub kind: String,
    pub resources: Vec<String>,
}

/// A Kubernetes object with a typed spec, as a manifest writes it.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Typed<S> {
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    pub kind: String,
    pub metadata: ObjectMeta,
    pub spec: S,
}

/// The typed object a built-in template's output must parse back into.
pub(super) enum Model {
    Route(Box<Typed<HttpRouteSpec>>),
    Service(Box<Service>),
    ReferenceGrant(Box<Typed<ReferenceGrantSpec>>),
    TargetGroupPolicy(Box<Typed<TargetGroupPolicySpec>>),
    AuthPolicy(Box<Typed<IamAuthPolicySpec>>),
    Kustomization(Kustomization),
    PrometheusRule(Box<Typed<super::monitoring::PrometheusRuleSpec>>),
    KongPlugin(Box<super::monitoring::KongPluginObject>),
    AccessLogPolicy(Box<Typed<super::monitoring::AccessLogPolicySpec>>),
}

impl Model {
    /// The routing model of the object, as a check reads it (the kustomization is not
    /// read into it).
    pub fn doc(&self, file: &std::path::Path) -> Option<Doc> {
        match self {
            Model::ReferenceGrant(_)
            | Model::TargetGroupPolicy(_)
            | Model::PrometheusRule(_)
            | Model::KongPlugin(_)
            | Model::AccessLogPolicy(_) => Some(Doc::other()),
            Model::Route(r) => Some(Doc::from_route(
                file,
                &r.metadata,
                &r.spec,
                is_kong_file(file),
            )),
            Model::Service(s) => {
                let external = s.spec.as_ref().and_then(|s| s.external_name.as_deref());
                Some(Doc::from_service(file, &s.metadata, external))
            }
            Model::AuthPolicy(p) => Some(auth_doc(file, &p.metadata, &p.spec)),
            Model::Kustomization(_) => None,
        }
    }

    /// The model as JSON, to compare with what a template's output parses into.
    pub fn json(&self) -> serde_json::Value {
        let value = match self {
            Model::Route(r) => serde_json::to_value(r),
            Model::Service(s) => serde_json::to_value(s),
            Model::ReferenceGrant(g) => serde_json::to_value(g),
            Model::TargetGroupPolicy(p) => serde_json::to_value(p),
            Model::AuthPolicy(p) => serde_json::to_value(p),
            Model::Kustomization(k) => serde_json::to_value(k),
            Model::PrometheusRule(r) => serde_json::to_value(r),
            Model::KongPlugin(p) => serde_json::to_value(p),
            Model::AccessLogPolicy(p) => serde_json::to_value(p),
        };
        value.expect("typed objects serialize")
    }
}

pub(super) fn route(metadata: ObjectMeta, spec: HttpRouteSpec) -> Model {
    Model::Route(Box::new(Typed {
        api_version: format!("{GATEWAY_API_GROUP}/v1"),
        kind: "HTTPRoute".into(),
        metadata,
        spec,
    }))
}

fn labels(app: Option<&str>) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::from([(MANAGED_BY.0.to_string(), MANAGED_BY.1.to_string())]);
    if let Some(app) = app {
        labels.insert(APP_NAME.into(), app.into());
    }
    labels
}

fn meta(name: &str, namespace: &str, labels: BTreeMap<String, String>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        namespace: Some(namespace.into()),
        labels: Some(labels),
        ..ObjectMeta::default()
    }
}

/// The Lattice service name latgen sets, in the controller's override annotation.
fn with_override(mut meta: ObjectMeta, service_name: Option<&String>) -> ObjectMeta {
    meta.annotations = service_name.map(|s| {
        BTreeMap::from([(
            crate::plan::lattice_service::OVERRIDE_ANNOTATION.to_string(),
            s.clone(),
        )])
    });
    meta
}

pub(super) fn group_route_meta(c: &GroupRoute) -> ObjectMeta {
    let mut labels = labels(None);
    let key = if c.preview {
        PREVIEW_GROUP_LABEL
    } else {
        GROUP_LABEL
    };
    labels.insert(key.into(), c.number.to_string());
    with_override(meta(&c.name, c.namespace, labels), c.service_name.as_ref())
}

pub(super) fn host_route_meta(c: &HostRoute) -> ObjectMeta {
    let meta = meta(c.name, c.namespace, labels(Some(c.app)));
    let mut meta = with_override(meta, c.service_name.as_ref());
    if c.assigned_domain {
        meta.annotations.get_or_insert_with(BTreeMap::new).insert(
            latgen_sim::platform::ASSIGNED_DOMAIN_ANNOTATION.to_string(),
            c.hostname.to_string(),
        );
    }
    meta
}

fn parent_refs(g: &GatewayCtx) -> Option<Vec<HttpRouteParentRefs>> {
    Some(vec![HttpRouteParentRefs {
        name: g.name.into(),
        group: Some(GATEWAY_API_GROUP.into()),
        kind: Some("Gateway".into()),
        namespace: g.namespace.filter(|n| !n.is_empty()).map(Into::into),
        section_name: g.section_name.filter(|s| !s.is_empty()).map(Into::into),
        ..HttpRouteParentRefs::default()
    }])
}

/// A rule's path match, and its header match where the template writes one.
fn path_match(rule: &RuleCtx, with_header: bool) -> HttpRouteRulesMatches {
    let kind = match rule.kind {
        "Exact" => HttpRouteRulesMatchesPathType::Exact,
        _ => HttpRouteRulesMatchesPathType::PathPrefix,
    };
    HttpRouteRulesMatches {
        path: Some(HttpRouteRulesMatchesPath {
            r#type: Some(kind),
            value: Some(rule.path.to_string()),
        }),
        headers: rule.header.as_ref().filter(|_| with_header).map(|h| {
            vec![HttpRouteRulesMatchesHeaders {
                r#type: Some(HttpRouteRulesMatchesHeadersType::Exact),
                name: h.name.into(),
                value: h.value.into(),
            }]
        }),
        ..HttpRouteRulesMatches::default()
    }
}

/// A backend as the templates write it: the fields the API server defaults included.
fn backend(name: &str, namespace: Option<&str>, port: u16) -> HttpRouteRulesBackendRefs {
    weighted(name, namespace, port, 1)
}

fn weighted(
    name: &str,
    namespace: Option<&str>,
    port: u16,
    weight: u32,
) -> HttpRouteRulesBackendRefs {
    HttpRouteRulesBackendRefs {
        group: Some(String::new()),
        kind: Some("Service".into()),
        name: name.into(),
        namespace: namespace.map(Into::into),
        port: Some(i32::from(port)),
        weight: Some(weight as i32),
        ..HttpRouteRulesBackendRefs::default()
    }
}

/// A Lattice rule's backends: the app's Service alone, or with a canary the stable one at
/// weight 100 and the canary at 0, as Argo Rollouts' Gateway API plugin expects to find
/// them (it edits the weights of the backendRefs it finds by name).
fn lattice_backends(r: &RuleCtx, group: bool) -> Vec<HttpRouteRulesBackendRefs> {
    use crate::input::canary::{CANARY_WEIGHT, STABLE_WEIGHT};
    fn ns<'b>(b: &BackendCtx<'b>, group: bool) -> Option<&'b str> {
        group.then_some(b.namespace)
    }
    match &r.canary {
        None => vec![backend(
            r.backend.name,
            ns(&r.backend, group),
            r.backend.port,
        )],
        Some(c) => vec![
            weighted(
                r.backend.name,
                ns(&r.backend, group),
                r.backend.port,
                STABLE_WEIGHT,
            ),
            weighted(c.name, ns(c, group), c.port, CANARY_WEIGHT),
        ],
    }
}

/// A Lattice route's spec: one rule per path. A group route's backends name their namespace
/// (they are in the apps' namespaces) and may match a header; a host route's are its own.
pub(super) fn lattice_spec(
    gateway: &GatewayCtx,
    hostname: Option<&str>,
    rules: &[RuleCtx],
    group: bool,
) -> HttpRouteSpec {
    let rules = rules.iter().map(|r| HttpRouteRules {
        matches: Some(vec![path_match(r, group)]),
        backend_refs: Some(lattice_backends(r, group)),
        ..HttpRouteRules::default()
    });
    HttpRouteSpec {
        parent_refs: parent_refs(gateway),
        hostnames: hostname.map(|h| vec![h.to_string()]),
        rules: Some(rules.collect()),
    }
}

/// A host route's spec: its backends name their namespace only when the route is in
/// another (an adopted route kept apart from its app).
fn host_route_spec(c: &HostRoute) -> HttpRouteSpec {
    let hostname = (!c.assigned_domain).then_some(c.hostname);
    let mut spec = lattice_spec(c.gateway, hostname, &c.rules, false);
    if c.cross_namespace {
        let rules = spec.rules.iter_mut().flatten();
        for (rule, ctx) in rules.zip(&c.rules) {
            rule.backend_refs = Some(lattice_backends(ctx, true));
        }
    }
    spec
}

/// What the routing model reads of a Kong route (the one rule of [`kong_route_spec`]): the
/// match paths, the Host rewrite, the dispatch header set, the bridge.
pub(super) fn kong_routing(
    c: &KongRoute,
    file: &std::path::Path,
) -> latgen_sim::routing::KongRoute {
    use crate::input::app::MatchKind;
    let pos = latgen_sim::routing::no_position();
    let matches = (c.matches.iter())
        .map(|r| latgen_sim::routing::PathRule {
            kind: match r.kind {
                "Exact" => MatchKind::Exact,
                _ => MatchKind::Prefix,
            },
            path: r.path.to_string(),
            pos,
            headers: Vec::new(),
        })
        .collect();
    let mut header_changes = latgen_sim::routing::HeaderChanges::default();
    if let Some(header) = c.dispatch_header.filter(|h| !h.is_empty()) {
        header_changes
            .set
            .push((header.to_string(), c.dispatch_value.to_string()));
    }
    latgen_sim::routing::KongRoute {
        file: file.to_path_buf(),
        namespace: c.namespace.to_string(),
        name: c.name.to_string(),
        app: Some(c.app.to_string()),
        preview: c.preview.map(str::to_string),
        hostnames: c.hostnames.iter().map(|h| h.to_string()).collect(),
        matches,
        rewrite_host: Some(c.target.clone()),
        header_changes,
        plugins: (!c.plugins.is_empty()).then(|| c.plugins.join(",")),
        name_pos: pos,
        backend: Some(latgen_sim::routing::BackendRef {
            namespace: c.namespace.to_string(),
            name: c.bridge.clone(),
            port: Some(i32::from(c.port)),
        }),
    }
}

pub(super) fn kong_route_meta(c: &KongRoute) -> ObjectMeta {
    let mut labels = labels(Some(c.app));
    if let Some(p) = c.preview {
        labels.insert(latgen_sim::routing::PREVIEW_LABEL.into(), p.into());
    }
    let mut meta = meta(c.name, c.namespace, labels);
    if !c.plugins.is_empty() {
        meta.annotations = Some(BTreeMap::from([(
            latgen_sim::routing::PLUGINS_ANNOTATION.to_string(),
            c.plugins.join(","),
        )]));
    }
    meta
}

pub(super) fn kong_route_spec(c: &KongRoute) -> HttpRouteSpec {
    let mut filters = vec![HttpRouteRulesFilters {
        r#type: HttpRouteRulesFiltersType::UrlRewrite,
        url_rewrite: Some(HttpRouteRulesFiltersUrlRewrite {
            hostname: Some(c.target.clone()),
            path: None,
        }),
        ..HttpRouteRulesFilters::default()
    }];
    if let Some(header) = c.dispatch_header.filter(|h| !h.is_empty()) {
        filters.push(HttpRouteRulesFilters {
            r#type: HttpRouteRulesFiltersType::RequestHeaderModifier,
            request_header_modifier: Some(HttpRouteRulesFiltersRequestHeaderModifier {
                set: Some(vec![HttpRouteRulesFiltersRequestHeaderModifierSet {
                    name: header.into(),
                    value: c.dispatch_value.into(),
                }]),
                ..HttpRouteRulesFiltersRequestHeaderModifier::default()
            }),
            ..HttpRouteRulesFilters::default()
        });
    }
    let matches = c.matches.iter().map(|r| path_match(r, false));
    HttpRouteSpec {
        parent_refs: parent_refs(c.gateway),
        hostnames: (!c.hostnames.is_empty())
            .then(|| c.hostnames.iter().map(|h| h.to_string()).collect()),
        rules: Some(vec![HttpRouteRules {
            matches: Some(matches.collect()),
            filters: Some(filters),
            backend_refs: Some(vec![backend(&c.bridge, None, c.port)]),
            ..HttpRouteRules::default()
        }]),
    }
}

pub(super) fn bridge(c: &Bridge) -> Service {
    let mut metadata = meta(&c.name, c.namespace, labels(Some(c.app)));
    let mut annotations = BTreeMap::new();
    if c.protocol == "https" {
        annotations.insert("konghq.com/protocol".to_string(), "https".to_string());
    }
    for (name, ms) in c.timeouts.named() {
        annotations.insert(format!("konghq.com/{name}"), ms.0.to_string());
    }
    if let Some(n) = c.retries {
        annotations.insert("konghq.com/retries".to_string(), n.to_string());
    }
    metadata.annotations = (!annotations.is_empty()).then_some(annotations);
    Service {
        metadata,
        spec: Some(ServiceSpec {
            type_: Some("ExternalName".into()),
            external_name: Some(c.target.clone()),
            session_affinity: Some("None".into()),
            ports: Some(vec![ServicePort {
                name: Some(c.protocol.into()),
                port: i32::from(c.port),
                protocol: Some("TCP".into()),
                target_port: Some(IntOrString::Int(i32::from(c.port))),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        status: None,
    }
}

pub(super) fn reference_grant(c: &ReferenceGrant) -> Typed<ReferenceGrantSpec> {
    Typed {
        api_version: format!("{GATEWAY_API_GROUP}/v1"),
        kind: "ReferenceGrant".into(),
        metadata: meta(&c.name, c.namespace, labels(None)),
        spec: ReferenceGrantSpec {
            from: vec![ReferenceGrantFrom {
                group: GATEWAY_API_GROUP.into(),
                kind: "HTTPRoute".into(),
                namespace: c.from_namespace.into(),
            }],
            to: vec![ReferenceGrantTo {
                group: String::new(),
                kind: "Service".into(),
                name: None,
            }],
        },
    }
}

pub(super) fn target_group_policy(c: &TargetGroupPolicy) -> Typed<TargetGroupPolicySpec> {
    Typed {
        api_version: "application-networking.k8s.aws/v1alpha1".into(),
        kind: "TargetGroupPolicy".into(),
        metadata: meta(c.name, c.namespace, labels(Some(c.app))),
        spec: TargetGroupPolicySpec {
            target_ref: TargetGroupPolicyTargetRef {
                group: String::new(),
                kind: "Service".into(),
                name: c.service.into(),
                namespace: None,
            },
            health_check: Some(TargetGroupPolicyHealthCheck {
                enabled: Some(true),
                interval_seconds: c.interval.filter(|i| *i != 0).map(i64::from),
                path: c.path.filter(|p| !p.is_empty()).map(Into::into),
                healthy_threshold_count: None,
                port: None,
                protocol: None,
                protocol_version: None,
                status_match: None,
                timeout_seconds: None,
                unhealthy_threshold_count: None,
            }),
            protocol: None,
            protocol_version: None,
        },
    }
}

/// The routing model of an auth policy.
pub(super) fn auth_doc(file: &std::path::Path, meta: &ObjectMeta, spec: &IamAuthPolicySpec) -> Doc {
    if spec.target_ref.kind != "HTTPRoute" {
        return Doc::other();
    }
    let namespace = meta.namespace.as_deref().unwrap_or_default();
    Doc::auth(file, namespace, &spec.target_ref.name, &spec.policy)
}

pub(super) fn auth_policy(c: &AuthPolicyCtx) -> Typed<IamAuthPolicySpec> {
    let mut labels = labels(None);
    if let Some(n) = c.group {
        labels.insert(GROUP_LABEL.into(), n.to_string());
    }
    let mut metadata = meta(&c.name, c.namespace, labels);
    metadata.annotations = Some(BTreeMap::from([(
        "argocd.argoproj.io/sync-options".to_string(),
        "PruneLast=true".to_string(),
    )]));
    Typed {
        api_version: "application-networking.k8s.aws/v1alpha1".into(),
        kind: "IAMAuthPolicy".into(),
        metadata,
        spec: IamAuthPolicySpec {
            policy: c.policy.clone(),
            target_ref: IamAuthPolicyTargetRef {
                group: GATEWAY_API_GROUP.into(),
                kind: "HTTPRoute".into(),
                name: c.route.clone(),
                namespace: None,
            },
        },
    }
}

pub(super) fn prometheus_plugin(
    c: &super::monitoring::KongPluginCtx,
) -> super::monitoring::KongPluginObject {
    super::monitoring::KongPluginObject {
        api_version: "configuration.konghq.com/v1".into(),
        kind: "KongPlugin".into(),
        metadata: meta(c.name, c.namespace, labels(None)),
        plugin: "prometheus".into(),
        config: BTreeMap::from([
            ("latency_metrics".to_string(), true),
            ("status_code_metrics".to_string(), true),
        ]),
    }
}

pub(super) fn access_log_policy(
    c: &super::monitoring::AccessLogCtx,
) -> Typed<super::monitoring::AccessLogPolicySpec> {
    let mut labels = labels(None);
    if let Some(n) = c.group {
        labels.insert(GROUP_LABEL.into(), n.to_string());
    }
    Typed {
        api_version: "application-networking.k8s.aws/v1alpha1".into(),
        kind: "AccessLogPolicy".into(),
        metadata: meta(&c.name, c.namespace, labels),
        spec: super::monitoring::AccessLogPolicySpec {
            destination_arn: c.destination.to_string(),
            target_ref: super::monitoring::TargetRef {
                group: GATEWAY_API_GROUP.into(),
                kind: "HTTPRoute".into(),
                name: c.route.clone(),
            },
        },
    }
}

/// The typed side of an object's context: what the built-in template must make of it.
impl Object<'_> {
    /// The routing model of the object written to `file`: made from the object itself for
    /// a bridge or a Kong route (the most numerous kinds), from its typed model otherwise.
    pub fn doc(&self, file: &std::path::Path) -> Option<Doc> {
        match self {
            Object::Bridge(c) => Some(Doc::bridge(file, c.namespace, &c.name, &c.target)),
            Object::KongRoute(c) => Some(Doc::kong(vec![kong_routing(c, file)])),
            _ => self.model().doc(file),
        }
    }

    /// The typed object the built-in template makes of this context.
    pub fn model(&self) -> Model {
        match self {
            Object::GroupRoute(c) => route(
                group_route_meta(c),
                lattice_spec(c.gateway, Some(&c.hostname), &c.rules, true),
            ),
            Object::HostRoute(c) => route(host_route_meta(c), host_route_spec(c)),
            Object::KongRoute(c) => route(kong_route_meta(c), kong_route_spec(c)),
            Object::Bridge(c) => Model::Service(Box::new(bridge(c))),
            Object::ReferenceGrant(c) => Model::ReferenceGrant(Box::new(reference_grant(c))),
            Object::TargetGroupPolicy(c) => {
                Model::TargetGroupPolicy(Box::new(target_group_policy(c)))
            }
            Object::AuthPolicy(c) => Model::AuthPolicy(Box::new(auth_policy(c))),
            Object::Kustomization(c) => Model::Kustomization(Kustomization {
                api_version: "kustomize.config.k8s.io/v1beta1".into(),
                kind: "Kustomization".into(),
                resources: c.resources.iter().map(|r| r.to_string()).collect(),
            }),
            Object::PrometheusRule(c) => Model::PrometheusRule(Box::new(Typed {
                api_version: "monitoring.coreos.com/v1".into(),
                kind: "PrometheusRule".into(),
                metadata: ObjectMeta {
                    name: Some(c.name.clone()),
                    namespace: Some(c.namespace.clone()),
                    labels: Some(c.labels.iter().cloned().collect()),
                    ..ObjectMeta::default()
                },
                spec: c.spec(),
            })),
            Object::PrometheusPlugin(c) => Model::KongPlugin(Box::new(prometheus_plugin(c))),
            Object::AccessLogPolicy(c) => Model::AccessLogPolicy(Box::new(access_log_policy(c))),
        }
    }
}
