//! What each template is given; `typed.rs` holds the typed object a built-in template must
//! turn it into.
//!
//! Every object latgen writes is first one of these contexts. The template gets it as its
//! variables; [`Object::model`] builds, from the same context, the typed Kubernetes object
//! that the built-in template's output must parse back into. tests/suite/proof.rs and the
//! `pipeline` fuzz target hold the built-in templates to that for any declaration set, so a
//! run need not parse their output again (`--verify` does, for belt and braces); the
//! routing model a check needs is made from the model instead of from the text.

use minijinja::Value as Ctx;
use minijinja::value::Serde;
use serde::Serialize;

use crate::input::config::GatewayRef;

#[derive(Serialize)]
pub(super) struct GatewayCtx<'a> {
    pub name: &'a str,
    pub namespace: Option<&'a str>,
    #[serde(rename = "sectionName")]
    pub section_name: Option<&'a str>,
}

#[derive(Serialize)]
pub(super) struct BackendCtx<'a> {
    pub name: &'a str,
    pub namespace: &'a str,
    pub port: u16,
}

#[derive(Serialize)]
pub(super) struct HeaderCtx<'a> {
    pub name: &'a str,
    pub value: &'a str,
}

#[derive(Serialize)]
pub(super) struct RuleCtx<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub path: &'a str,
    pub app: &'a str,
    /// The header the rule also matches (header dispatch): the app's name.
    pub header: Option<HeaderCtx<'a>>,
    pub backend: BackendCtx<'a>,
    /// The app's canary Service, a second backend at weight 0 (the stable one at 100).
    pub canary: Option<BackendCtx<'a>>,
}

/// `lattice/group-route.yaml.j2`: a shared group's HTTPRoute.
#[derive(Serialize)]
pub(super) struct GroupRoute<'a> {
    pub name: String,
    pub namespace: &'a str,
    pub number: u32,
    pub service_name: Option<String>,
    pub hostname: String,
    pub gateway: &'a GatewayCtx<'a>,
    pub rules: Vec<RuleCtx<'a>>,
    pub dispatch_header: Option<&'a str>,
    /// A preview group's route (`preview-NN`), not a production group's.
    pub preview: bool,
}

/// `lattice/host-route.yaml.j2`: a host-routed app's own HTTPRoute.
#[derive(Serialize)]
pub(super) struct HostRoute<'a> {
    pub name: &'a str,
    pub namespace: &'a str,
    pub app: &'a str,
    pub service_name: Option<String>,
    pub hostname: &'a str,
    /// The route was adopted as it ran before latgen (`latgen import`).
    pub adopted: bool,
    /// Adopted without a hostname: `hostname` is the domain Lattice assigned its service,
    /// recorded on the route, never written as a hostname.
    pub assigned_domain: bool,
    /// Adopted in another namespace than the app's: its backends name the app's namespace,
    /// which a ReferenceGrant there lets the route reach.
    pub cross_namespace: bool,
    pub gateway: &'a GatewayCtx<'a>,
    pub rules: Vec<RuleCtx<'a>>,
}

/// `lattice/reference-grant.yaml.j2`.
#[derive(Serialize)]
pub(super) struct ReferenceGrant<'a> {
    pub name: String,
    pub namespace: &'a str,
    pub from_namespace: &'a str,
}

/// `lattice/target-group-policy.yaml.j2`.
#[derive(Serialize)]
pub(super) struct TargetGroupPolicy<'a> {
    pub name: &'a str,
    pub namespace: &'a str,
    pub app: &'a str,
    pub service: &'a str,
    pub port: u16,
    pub interval: Option<u32>,
    pub path: Option<&'a str>,
}

/// `lattice/iam-auth-policy.yaml.j2`: the auth policy of a Lattice route's service.
pub(super) struct AuthPolicyCtx<'a> {
    pub name: String,
    pub namespace: &'a str,
    /// The group's number, for a group route's policy.
    pub group: Option<u32>,
    pub route: String,
    /// The policy, compact JSON with a statement a line.
    pub policy: String,
}

/// What the template gets: the policy as its lines, for a block scalar.
#[derive(Serialize)]
struct AuthPolicyVars<'a> {
    name: &'a str,
    namespace: &'a str,
    group: Option<u32>,
    route: &'a str,
    policy: &'a str,
    policy_lines: Vec<&'a str>,
}

/// `kong/bridge-service.yaml.j2`: the ExternalName Service Kong routes an app to.
#[derive(Serialize)]
pub(super) struct Bridge<'a> {
    pub name: String,
    pub namespace: &'a str,
    pub app: &'a str,
    pub target: String,
    pub port: u16,
    pub protocol: &'static str,
    /// Upstream timeouts in milliseconds (`connect`, `read`, `write`), those set.
    pub timeouts: crate::input::kong::Timeouts,
    /// Kong's retries to Lattice, when set.
    pub retries: Option<u64>,
}

/// `kong/route.yaml.j2`: an app's HTTPRoute on the Kong side.
#[derive(Serialize)]
pub(super) struct KongRoute<'a> {
    pub name: &'a str,
    pub namespace: &'a str,
    pub app: &'a str,
    pub gateway: &'a GatewayCtx<'a>,
    pub hostnames: Vec<&'a str>,
    /// KongPlugin or KongClusterPlugin names, in order: the `konghq.com/plugins`
    /// annotation.
    pub plugins: Vec<&'a str>,
    pub matches: Vec<RuleCtx<'a>>,
    pub target: String,
    pub bridge: String,
    pub port: u16,
    pub dispatch_header: Option<&'a str>,
    /// What the route sets the dispatch header to: the app's name, or a preview's
    /// `<name>.<app>`.
    pub dispatch_value: &'a str,
    /// The preview's name, for a preview's route.
    pub preview: Option<&'a str>,
}

/// `kustomization.yaml.j2`: a side's list of files.
#[derive(Serialize)]
pub(super) struct KustomizationCtx<'a> {
    pub resources: &'a [&'a str],
}

/// The context of one object, as its template gets it.
pub(super) enum Object<'a> {
    GroupRoute(GroupRoute<'a>),
    HostRoute(HostRoute<'a>),
    ReferenceGrant(ReferenceGrant<'a>),
    TargetGroupPolicy(TargetGroupPolicy<'a>),
    AuthPolicy(AuthPolicyCtx<'a>),
    Bridge(Bridge<'a>),
    KongRoute(KongRoute<'a>),
    Kustomization(KustomizationCtx<'a>),
    PrometheusRule(super::monitoring::PrometheusRuleCtx),
    PrometheusPlugin(super::monitoring::KongPluginCtx<'a>),
    AccessLogPolicy(super::monitoring::AccessLogCtx<'a>),
}

impl Object<'_> {
    /// The template's variables.
    pub fn context(&self) -> Ctx {
        match self {
            Object::GroupRoute(c) => Ctx::from(Serde(c)),
            Object::HostRoute(c) => Ctx::from(Serde(c)),
            Object::ReferenceGrant(c) => Ctx::from(Serde(c)),
            Object::TargetGroupPolicy(c) => Ctx::from(Serde(c)),
            Object::AuthPolicy(c) => Ctx::from(Serde(AuthPolicyVars {
                name: &c.name,
                namespace: c.namespace,
                group: c.group,
                route: &c.route,
                policy: &c.policy,
                policy_lines: c.policy.lines().collect(),
            })),
            Object::Bridge(c) => Ctx::from(Serde(c)),
            Object::KongRoute(c) => Ctx::from(Serde(c)),
            Object::Kustomization(c) => Ctx::from(Serde(c)),
            Object::PrometheusRule(c) => Ctx::from(Serde(c)),
            Object::PrometheusPlugin(c) => Ctx::from(Serde(c)),
            Object::AccessLogPolicy(c) => Ctx::from(Serde(c)),
        }
    }
}

impl<'a> From<&'a GatewayRef> for GatewayCtx<'a> {
    fn from(g: &'a GatewayRef) -> Self {
        GatewayCtx {
            name: &g.name,
            namespace: g.namespace.as_deref(),
            section_name: g.section_name.as_deref(),
        }
    }
}
