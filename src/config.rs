//! `latgen.yaml`: project settings. Every field is optional; the defaults are the ones the
//! field report ran with (Seoul prices, a quota of 10 rules per Lattice service).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::diag::Diagnostics;

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
}

/// Parses the text of `latgen.yaml`; a problem goes to `diags`.
pub fn parse(file: &Path, text: &str, diags: &mut Diagnostics) -> Option<Config> {
    crate::yaml::parse_yaml(file, text, CONFIG_FIELDS, diags)
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
    "protocol",
    "port",
    "name",
    "sectionName",
    "rulesPerService",
    "targetGroupsPerService",
    "reservedRules",
    "rpsPerService",
    "serviceHourUsd",
];

/// A Gateway that routes attach to (a parentRef).
// Serialize only so that the schema can show the defaults.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GatewayRef {
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
pub struct LatticeConfig {
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
}

/// Protocol Kong speaks to Lattice.
// Serialize only so that the schema can show the default.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
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
pub struct KongConfig {
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
}

impl KongConfig {
    pub fn upstream_port(&self) -> u16 {
        self.port.unwrap_or(match self.protocol {
            Protocol::Http => 80,
            Protocol::Https => 443,
        })
    }
}

/// Lattice service quotas of the account.
#[derive(Debug, Clone, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct Quotas {
    /// Lattice "rules per listener" quota of the account.
    pub rules_per_service: u32,
    /// Lattice "target groups per service" quota.
    pub target_groups_per_service: u32,
    /// Rules left free in each shared group, e.g. so a path can be renamed in place
    /// (the controller creates the new rule before deleting the old one).
    pub reserved_rules: u32,
}

/// Throughput budget.
#[derive(Debug, Clone, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct Throughput {
    /// Requests per second one Lattice service takes (per AZ); shared by a group's apps.
    pub rps_per_service: u64,
}

/// Lattice prices.
#[derive(Debug, Clone, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct Pricing {
    /// USD per Lattice service-hour.
    pub service_hour_usd: f64,
}

/// The HTTPRoute CRD allows at most 16 rules per route.
const CRD_MAX_RULES: u32 = crate::platform::CRD_MAX_RULES as u32;

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
        }
    }
}

impl Default for Quotas {
    fn default() -> Self {
        Quotas {
            rules_per_service: 10,
            target_groups_per_service: 10,
            reserved_rules: 0,
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
    /// Rules one shared group may hold: the account quota less the reserve, and never more
    /// than the HTTPRoute CRD allows.
    pub fn group_rule_capacity(&self) -> u32 {
        self.quotas
            .rules_per_service
            .saturating_sub(self.quotas.reserved_rules)
            .min(CRD_MAX_RULES)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_never_exceeds_the_crd_limit() {
        let mut c = Config::default();
        assert_eq!(c.group_rule_capacity(), 10);
        c.quotas.rules_per_service = 40;
        assert_eq!(c.group_rule_capacity(), CRD_MAX_RULES);
        c.quotas.reserved_rules = 30;
        assert_eq!(c.group_rule_capacity(), 10);
    }

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
