//! `observability:` in latgen.yaml: what latgen writes so that per-app monitoring survives
//! consolidation. Sharing a Lattice service takes away its metrics' app (the service is the
//! group's), and each move gives an app a new target group; Kong keeps one route per app
//! through every move, so the per-app series are made from Kong's, and each Lattice
//! service's budget is watched there too.

use serde::Deserialize;

/// The `observability:` section. Everything is off unless set.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub(crate) struct Observability {
    /// PrometheusRules on the Kong side: each app's request rate, error ratio and latency
    /// under its own name and its group's, an alert when a Lattice service's apps near its
    /// throughput budget, and one when an app runs above its declared `peakRps`.
    pub prometheus: Option<PrometheusConfig>,
    /// Lattice access logs: an AccessLogPolicy on each Lattice route, to this destination.
    pub access_logs: Option<AccessLogs>,
}

/// `observability.prometheus`.
#[derive(Debug, Clone, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub(crate) struct PrometheusConfig {
    /// Labels on the PrometheusRules, for the Prometheus's `ruleSelector` (e.g. `release:
    /// kube-prometheus-stack`).
    pub labels: std::collections::BTreeMap<String, String>,
    /// Availability Zones the traffic comes through: Lattice's quota
    /// (`throughput.rpsPerService`) is per service and zone, so a service's budget in the
    /// alerts is the quota times this.
    #[schemars(range(min = 1, max = 16))]
    pub zones: u32,
    /// The share of the budget at which a service's alert fires, above 0 and at most 1.
    pub budget_threshold: f64,
    /// How long a rate must stay over before its alert fires (a Prometheus duration).
    #[serde(rename = "for")]
    pub for_: String,
    /// Write a KongPlugin `latgen-prometheus` (Kong's Prometheus plugin with the status-code
    /// and latency metrics the rules read) and name it on every app's Kong route. `false`
    /// when a global Prometheus plugin of your own exports them already.
    pub kong_plugin: bool,
}

impl Default for PrometheusConfig {
    fn default() -> Self {
        PrometheusConfig {
            labels: Default::default(),
            zones: 1,
            budget_threshold: 0.8,
            for_: "10m".into(),
            kong_plugin: true,
        }
    }
}

/// `observability.accessLogs`.
#[derive(Debug, Clone, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct AccessLogs {
    /// Where Lattice publishes each service's access logs: an S3 bucket, CloudWatch Logs log
    /// group or Firehose delivery stream ARN.
    pub destination_arn: String,
}

/// The KongPlugin latgen writes (and every Kong route names) with `kongPlugin: true`.
pub(crate) const KONG_PLUGIN: &str = "latgen-prometheus";

/// A Prometheus duration, as the PrometheusRule CRD takes it (its `for` pattern): units y,
/// w, d, h, m, s, ms in that order, each once.
pub(crate) fn is_duration(d: &str) -> bool {
    if d == "0" {
        return true;
    }
    let mut rest = d;
    let mut any = false;
    for unit in ["y", "w", "d", "h", "ms", "m", "s"] {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest[digits..].starts_with(unit) {
            // `m` must not take the `m` of `ms`.
            let after = &rest[digits + unit.len()..];
            if unit == "m" && after.starts_with('s') {
                continue;
            }
            rest = after;
            any = true;
        }
    }
    any && rest.is_empty()
}

/// What is wrong with an ARN the AccessLogPolicy CRD would refuse, or one Lattice does not
/// publish access logs to.
pub(crate) fn destination_problem(arn: &str) -> Option<&'static str> {
    if arn.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some("holds a space or a control character");
    }
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    if parts.len() < 6 || parts[0] != "arn" || parts[5].is_empty() || parts[5].starts_with('/') {
        return Some("is not an ARN (arn:partition:service:region:account:resource)");
    }
    match parts[2] {
        "s3" | "logs" | "firehose" => None,
        _ => Some("is not an S3 bucket, CloudWatch Logs log group or Firehose stream ARN"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_durations_as_the_crd_takes_them() {
        for ok in ["0", "10m", "1h30m", "90s", "500ms", "1d", "2w"] {
            assert!(is_duration(ok), "{ok}");
        }
        for bad in ["", "10", "m", "1.5m", "10 m", "30m1h", "1h1h", "-1m"] {
            assert!(!is_duration(bad), "{bad}");
        }
    }

    #[test]
    fn destinations_lattice_publishes_to() {
        assert_eq!(destination_problem("arn:aws:s3:::my-bucket"), None);
        let group = "arn:aws:logs:us-west-2:123456789012:log-group:lattice:*";
        assert_eq!(destination_problem(group), None);
        assert!(destination_problem("my-bucket").is_some());
        assert!(destination_problem("arn:aws:s3:::a\n  b").is_some());
        assert!(destination_problem("arn:aws:sqs:us-west-2:123456789012:q").is_some());
    }
}
