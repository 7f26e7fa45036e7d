//! `latgen.yaml`: project settings. Every field is optional; the defaults are the ones the
//! field report ran with (Seoul prices, a quota of 10 rules per Lattice service).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::diag::Diagnostics;
use crate::input::quotas::Quotas;

/// Project settings, beside `apps/`. Every field is optional.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
#[schemars(title = "latgen.yaml")]
pub struct Config {
    /// The Lattice side: routes in the workload cluster.
    pub lattice: LatticeConfig,
    /// The Kong side: bridges and routes in the gateway cluster.
    pub kong: KongConfig,
    /// The account's Lattice quotas, which size the shared groups.
    pub quotas: Quotas,
    /// Throughput budget of a Lattice service.
    pub throughput: Throughput,
    /// Prices for `latgen cost` and `latgen plan`.
    pub pricing: Pricing,
    /// The Gateway API CRDs installed in the clusters.
    pub gateway_api: GatewayApi,
    /// The Argo CD deploy kit in `deploy/` (`latgen deploy`): two Applications and their
    /// AppProject. Unset = no kit; set, `latgen check` also checks what the first sync
    /// needs (placeholders left, the kit current, how dedicated hosts resolve).
    pub deploy: Option<DeployConfig>,
    /// Who may call each app: under `mode: iam`, an IAM auth policy on every Lattice
    /// service allows each app's callers (these, Kong, and the app's own `callers`) on
    /// exactly that app's requests.
    pub auth: crate::input::auth::AuthConfig,
    /// What latgen writes for per-app monitoring (off unless set): PrometheusRules from
    /// Kong's per-route metrics, and Lattice access logs.
    pub observability: crate::input::observability::Observability,
    /// Previews (`previews/*.yaml`): the host pattern of their Kong routes. Required once a
    /// preview exists.
    pub previews: Option<crate::input::previews::PreviewsConfig>,
    /// The environment these settings are for (`--env`), when the project has environments:
    /// latgen.yaml with its overlay merged in. Not a setting.
    #[serde(skip)]
    pub environment: Option<crate::input::environments::Environment>,
}

/// Parses the text of `latgen.yaml`; a problem goes to `diags`.
pub(crate) fn parse(file: &Path, text: &str, diags: &mut Diagnostics) -> Option<Config> {
    crate::input::yaml::parse_yaml(file, text, CONFIG_FIELDS, diags)
}

/// Field names at every level of `latgen.yaml`, for "did you mean" hints.
const CONFIG_FIELDS: &[&str] = &[
    "lattice",
    "kong",
    "quotas",
    "throughput",
    "pricing",
    "gateway",
    "namespace",
    "groupPrefix",
    "domain",
    "referenceGrants",
    "hostnames",
    "routeDefaults",
    "labels",
    "observability",
    "previews",
    "prometheus",
    "accessLogs",
    "destinationArn",
    "zones",
    "budgetThreshold",
    "for",
    "kongPlugin",
    "pluginFiles",
    "plugins",
    "timeouts",
    "retries",
    "connect",
    "read",
    "write",
    "protocol",
    "port",
    "name",
    "sectionName",
    "rulesPerService",
    "targetGroupsPerService",
    "reservedRules",
    "rpsPerService",
    "serviceHourUsd",
    "dispatch",
    "dispatchHeader",
    "serviceNamePrefix",
    "auth",
    "mode",
    "account",
    "region",
    "callers",
    "principals",
    "orgs",
    "vpcs",
    "methods",
    "serviceNetworkPolicy",
    "placement",
];

/// A Gateway that routes attach to (a parentRef).
// Serialize only so that the schema can show the defaults.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct GatewayRef {
    /// The Gateway's name.
    pub name: String,
    /// The Gateway's namespace; unset = the route's own namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// The Gateway listener to attach to; unset = every listener.
    #[serde(default)]
    pub section_name: Option<String>,
}

/// Settings of the Lattice side.
#[derive(Debug, Clone, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub(crate) struct LatticeConfig {
    /// The Gateway (gatewayClass amazon-vpc-lattice) every Lattice-side route attaches to.
    pub gateway: GatewayRef,
    /// Namespace of the shared group HTTPRoutes in the workload cluster.
    pub namespace: String,
    /// Group n is named `<groupPrefix><nn>`, e.g. `group-01`.
    pub group_prefix: String,
    /// Internal domain of the groups' custom domain names: `group-01.<domain>`.
    pub domain: String,
    /// Emit ReferenceGrants so group routes may point at Services in app namespaces.
    pub reference_grants: bool,
    /// Emit a TargetGroupPolicy (the AWS controller's health check settings) for the
    /// Service of each app that declares `healthCheck`.
    pub target_group_policies: bool,
    /// The protocol and port of the Lattice Gateway listener the routes attach to. Unset =
    /// read from `gateway.sectionName` when it is `http` (HTTP, port 80) or `https` (HTTPS,
    /// port 443), the listeners of the AWS controller's example Gateway. Kong must speak
    /// this protocol to this port (`kong.protocol`, `kong.port`).
    pub listener: Option<Listener>,
    /// How a host-routed app's public host resolves inside the gateway cluster's VPC. Its
    /// bridge points at that host: it must resolve to the app's Lattice service there, or
    /// Kong sends the request to its own public load balancer and loops. `privateZone`: a
    /// Route 53 private hosted zone on the gateway VPC maps each host to its Lattice
    /// service; `clusterDns`: the gateway cluster's DNS does (a CoreDNS rewrite, Kong's
    /// hosts file). Unset = not said: with `deploy:` set, `render` and `check` warn while
    /// an app has a host of its own.
    pub dedicated_hosts: Option<DedicatedHostDns>,
    /// How a shared group tells its apps apart. `path` (the default): Lattice matches each
    /// app's paths again, so nested prefixes of two apps never share a group and a
    /// host-routed app gets a service of its own. `header`: each app's Kong route sets
    /// `dispatchHeader` to the app's name and the group holds one rule per app matching
    /// it, so every app costs one rule and any apps share groups; only requests that come
    /// through Kong reach the apps.
    pub dispatch: Dispatch,
    /// The request header Kong sets to the app's name under `dispatch: header`, and the
    /// groups' rules match. Kong replaces any value the client sent.
    pub dispatch_header: String,
    /// Names the Lattice services of the routes latgen creates from now on, through the
    /// controller's `application-networking.k8s.aws/service-name-override` annotation:
    /// `<prefix>-g01` for group 1, `<prefix>-<app>` for a host-routed app. Lowercase
    /// letters, digits and single hyphens, not starting with `svc-`; unique to this
    /// project among those sharing a service network (e.g. `shop-prod`). A name is
    /// recorded in latgen.lock when its route is created and never changes (the controller
    /// ignores a later change); routes created before this was set keep the controller's
    /// name (20 characters of the route name, 18 of its namespace). Unset = the controller
    /// names every service.
    pub service_name_prefix: Option<String>,
    /// Where the service network and Lattice services live, for `check --env all`: two
    /// environments in one account and Region must not name a Lattice service alike, and
    /// two service networks must not share a VPC.
    pub placement: Placement,
}

/// The account, Region and VPCs of one environment's Lattice side.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub(crate) struct Placement {
    /// The AWS account of the service network and services; unset = `auth.account`.
    pub account: Option<String>,
    /// The AWS Region; unset = `auth.region`.
    pub region: Option<String>,
    /// The VPCs associated with the Gateway's service network (the workload cluster's and
    /// the gateway cluster's). A VPC is associated with one service network at most: a
    /// second environment reaches it through a service-network endpoint instead.
    pub vpcs: Vec<String>,
}

/// How a shared group's rules pick the app.
#[derive(
    Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Dispatch {
    /// Lattice matches the request's path: one rule per path of each app.
    #[default]
    Path,
    /// Lattice matches the header Kong sets to the app's name: one rule per app.
    Header,
}

impl Dispatch {
    pub fn as_str(self) -> &'static str {
        match self {
            Dispatch::Path => "path",
            Dispatch::Header => "header",
        }
    }

    /// The other mode.
    pub fn other(self) -> Dispatch {
        match self {
            Dispatch::Path => Dispatch::Header,
            Dispatch::Header => Dispatch::Path,
        }
    }
}

/// The header Kong sets to the app's name under `dispatch: header`.
pub(crate) const DEFAULT_DISPATCH_HEADER: &str = "x-latgen-app";

/// A Gateway listener: the protocol and port a Lattice service's listener takes.
// Serialize only so that the schema can show the defaults.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct Listener {
    /// The listener's protocol.
    pub protocol: Protocol,
    /// The listener's port.
    pub port: u16,
}

/// How a dedicated host resolves inside the gateway cluster's VPC.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) enum DedicatedHostDns {
    /// A Route 53 private hosted zone associated with the gateway cluster's VPC holds a
    /// record per dedicated host, pointing at its Lattice service's domain name.
    PrivateZone,
    /// The gateway cluster's own DNS answers for the dedicated hosts (a CoreDNS rewrite
    /// to the Lattice service's domain name, or Kong's DNS hosts file).
    ClusterDns,
}

/// The Gateway API CRDs the clusters serve.
#[derive(Debug, Clone, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub(crate) struct GatewayApi {
    /// The Gateway API CRD release installed, `MAJOR.MINOR` (`1.5`, `v1.5.1`); with two
    /// clusters, the older one's. ReferenceGrant `v1` is served from 1.5 on, HTTPRoute `v1`
    /// from 1.0. The default, 1.5, is the oldest release that serves all of latgen's output.
    pub crd_version: String,
}

impl Default for GatewayApi {
    fn default() -> Self {
        GatewayApi {
            crd_version: "1.5".into(),
        }
    }
}

/// Marks a deploy setting that `latgen init` could not know: `latgen check` reports every
/// setting that still holds it (`placeholder-setting`).
pub(crate) const PLACEHOLDER: &str = "CHANGE-ME";

/// The Argo CD deploy kit's settings.
#[derive(Debug, Clone, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub(crate) struct DeployConfig {
    /// The Git repository that holds this project, which Argo CD syncs the output from.
    #[serde(rename = "repoURL")]
    pub repo_url: String,
    /// The branch, tag or commit Argo CD follows.
    pub revision: String,
    /// The project's folder in that repository (`.` = its root): the Applications' paths
    /// are this, the output folder and the side (`generated/lattice`).
    pub path: String,
    /// Name of the Argo CD AppProject of both Applications, and the Applications' name
    /// prefix (`<project>-lattice`, `<project>-kong`).
    pub project: String,
    /// The namespace Argo CD runs in, where its Applications and AppProjects live.
    pub argocd_namespace: String,
    /// The workload cluster's name in Argo CD (destination of the Lattice side).
    pub lattice_cluster: String,
    /// The gateway cluster's name in Argo CD (destination of the Kong side).
    pub kong_cluster: String,
    /// Sync automatically, pruning what the output no longer holds: a merged PR goes live
    /// on its own, as the one-side-first PRs of a change expect.
    pub auto_sync: bool,
}

impl Default for DeployConfig {
    fn default() -> Self {
        DeployConfig {
            repo_url: format!("https://git.example.com/{PLACEHOLDER}.git"),
            revision: "HEAD".into(),
            path: ".".into(),
            project: "latgen".into(),
            argocd_namespace: "argocd".into(),
            lattice_cluster: format!("{PLACEHOLDER}-workload-cluster"),
            kong_cluster: format!("{PLACEHOLDER}-gateway-cluster"),
            auto_sync: true,
        }
    }
}

impl DeployConfig {
    /// Each string setting with its name in latgen.yaml, in the order of the file.
    pub fn settings(&self) -> [(&'static str, &str); 7] {
        [
            ("repoURL", &self.repo_url),
            ("revision", &self.revision),
            ("path", &self.path),
            ("project", &self.project),
            ("argocdNamespace", &self.argocd_namespace),
            ("latticeCluster", &self.lattice_cluster),
            ("kongCluster", &self.kong_cluster),
        ]
    }
}

/// Protocol Kong speaks to Lattice.
// Serialize only so that the schema can show the default.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Protocol {
    Http,
    Https,
}

impl Protocol {
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Http => "http",
            Protocol::Https => "https",
        }
    }
}

/// Settings of the Kong side.
#[derive(Debug, Clone, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub(crate) struct KongConfig {
    /// The Kong Gateway the per-app routes attach to (gateway cluster).
    pub gateway: GatewayRef,
    /// Namespace of the bridges and Kong routes in the gateway cluster.
    pub namespace: String,
    /// Public hostnames of the path-routed apps; empty = match any host.
    pub hostnames: Vec<String>,
    /// Protocol Kong speaks to Lattice (`konghq.com/protocol`).
    pub protocol: Protocol,
    /// Port of the bridge Services and Kong backendRefs; defaults by protocol (80/443).
    pub port: Option<u16>,
    /// What every app's Kong route and bridge get unless its declaration's `kong:` says
    /// otherwise: plugins, upstream timeouts, retries.
    pub route_defaults: crate::input::kong::RouteDefaults,
    /// Files or folders (under the project) holding the KongPlugins and KongClusterPlugins
    /// that routes name. `latgen check` reads them to tell a plugin that fights latgen's
    /// Host rewrite (a request-transformer) from one that does not, and to report a plugin
    /// no file defines (KIC would leave it off the route, with only an event to say so).
    /// Unset = plugins are not checked.
    pub plugin_files: Vec<String>,
}

impl KongConfig {
    pub fn upstream_port(&self) -> u16 {
        self.port.unwrap_or(match self.protocol {
            Protocol::Http => 80,
            Protocol::Https => 443,
        })
    }
}

/// Throughput budget.
#[derive(Debug, Clone, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub(crate) struct Throughput {
    /// Requests per second one Lattice service takes (per AZ); shared by a group's apps.
    pub rps_per_service: u64,
}

/// Lattice prices.
#[derive(Debug, Clone, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub(crate) struct Pricing {
    /// USD per Lattice service-hour.
    pub service_hour_usd: f64,
}

impl Default for LatticeConfig {
    fn default() -> Self {
        LatticeConfig {
            gateway: GatewayRef {
                name: "lattice-gateway".into(),
                namespace: Some("aws-application-networking-system".into()),
                section_name: Some("http".into()),
            },
            namespace: "lattice-groups".into(),
            group_prefix: "group-".into(),
            domain: "lattice.internal".into(),
            reference_grants: true,
            target_group_policies: true,
            listener: None,
            dedicated_hosts: None,
            dispatch: Dispatch::Path,
            dispatch_header: DEFAULT_DISPATCH_HEADER.into(),
            service_name_prefix: None,
            placement: Placement::default(),
        }
    }
}

impl Default for KongConfig {
    fn default() -> Self {
        KongConfig {
            gateway: GatewayRef {
                name: "kong".into(),
                namespace: Some("kong".into()),
                section_name: None,
            },
            namespace: "kong-routes".into(),
            hostnames: Vec::new(),
            protocol: Protocol::Http,
            port: None,
            route_defaults: Default::default(),
            plugin_files: Vec::new(),
        }
    }
}

impl Default for Throughput {
    fn default() -> Self {
        Throughput {
            rps_per_service: 10_000,
        }
    }
}

impl Default for Pricing {
    fn default() -> Self {
        Pricing {
            service_hour_usd: 0.0325,
        }
    }
}

impl Config {
    /// Whether groups dispatch on the header Kong sets rather than on the path.
    pub fn header_dispatch(&self) -> bool {
        self.lattice.dispatch == Dispatch::Header
    }

    /// The environment's name, when these are an environment's settings.
    pub fn env_name(&self) -> Option<&str> {
        self.environment.as_ref().map(|e| e.name.as_str())
    }

    pub fn group_name(&self, number: u32) -> String {
        format!("{}{:02}", self.lattice.group_prefix, number)
    }

    pub fn group_domain(&self, number: u32) -> String {
        format!("{}.{}", self.group_name(number), self.lattice.domain)
    }

    /// The group number a route name stands for, when it follows the group naming.
    pub fn parse_group_name(&self, name: &str) -> Option<u32> {
        let digits = name.strip_prefix(&self.lattice.group_prefix)?;
        if digits.len() >= 2 && digits.bytes().all(|b| b.is_ascii_digit()) {
            digits.parse().ok().filter(|n| *n > 0)
        } else {
            None
        }
    }
}

/// What is wrong with a `lattice.serviceNamePrefix`, if anything: the shortest name made
/// from it (`<prefix>-g01`) must be one Lattice takes.
pub(crate) fn prefix_problem(prefix: &str) -> Option<String> {
    if prefix.contains(PLACEHOLDER) {
        return None;
    }
    latgen_sim::platform::lattice_service_name_problem(&format!("{prefix}-g01"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_names_round_trip() {
        let c = Config::default();
        assert_eq!(c.group_name(3), "group-03");
        assert_eq!(c.group_domain(3), "group-03.lattice.internal");
        assert_eq!(c.group_name(123), "group-123");
        assert_eq!(c.parse_group_name("group-03"), Some(3));
        assert_eq!(c.parse_group_name("group-123"), Some(123));
        assert_eq!(c.parse_group_name("group-3"), None);
        assert_eq!(c.parse_group_name("shop"), None);
    }
}
