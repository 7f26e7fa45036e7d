//! What `observability:` in latgen.yaml adds to the output: PrometheusRules on the Kong
//! side (each app's series from Kong's per-route metrics, and per Lattice service its
//! apps' share of the throughput budget), the KongPlugin that makes Kong export those
//! metrics, and an AccessLogPolicy per Lattice route. The contexts the templates get, the
//! rules' content, and the typed objects the built-in templates must turn into.
//!
//! Facts the rules rest on: KIC names the Kong route of rule `r`, match `m` of HTTPRoute
//! `<ns>/<name>` `httproute.<ns>.<name>.<r>.<m>`
//! (`internal/dataplane/translator/subtranslator/httproute.go` in
//! Kong/kubernetes-ingress-controller); Kong 3.x's Prometheus plugin counts
//! `kong_http_requests_total{service,route,code,source,workspace,consumer}` with
//! `status_code_metrics` on and observes `kong_request_latency_ms{service,route,workspace}`
//! with `latency_metrics` on (`kong/plugins/prometheus/exporter.lua` and `schema.lua`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::readback::{Kind, file_name};
use crate::input::app::App;
use crate::input::config::Config;
use crate::input::observability::PrometheusConfig;
use crate::manifest::layout::{Side, side_of};

/// The name of the PrometheusRule with every app's series.
pub(crate) const APPS_RULE: &str = "latgen-apps";

/// Recorded series: each app's request rate, error ratio and 99th-percentile latency (label
/// `app`), the same per app with its Lattice service (labels `app`, `lattice_route`), and each
/// Lattice service's total (label `lattice_route`).
pub(crate) const APP_RATE: &str = "latgen:app_requests:rate5m";
pub(crate) const APP_ERRORS: &str = "latgen:app_errors:ratio_rate5m";
pub(crate) const APP_LATENCY: &str = "latgen:app_request_latency_ms:p99_5m";
pub(crate) const APP_RATE_BY_ROUTE: &str = "latgen:app_requests_by_lattice_route:rate5m";
pub(crate) const ROUTE_RATE: &str = "latgen:lattice_route_requests:rate5m";

/// Columns a folded line of a rule takes after its indentation (80 in all, as yamllint's
/// default wants).
const FOLD_WIDTH: usize = 66;

/// One rule of a PrometheusRule, as the template gets it.
#[derive(Serialize, Debug, Clone)]
pub(super) struct RuleCtx {
    pub record: Option<String>,
    pub alert: Option<String>,
    /// The expression, cut at spaces into lines a folded block scalar joins back.
    pub expr_lines: Vec<String>,
    #[serde(rename = "for")]
    pub for_: Option<String>,
    pub labels: Vec<(String, String)>,
    pub annotations: Vec<AnnotationCtx>,
    /// The expression whole, for the typed model.
    #[serde(skip)]
    pub expr: String,
}

#[derive(Serialize, Debug, Clone)]
pub(super) struct AnnotationCtx {
    pub name: &'static str,
    pub lines: Vec<String>,
    #[serde(skip)]
    pub text: String,
}

/// `kong/prometheus-rule.yaml.j2`.
#[derive(Serialize)]
pub(super) struct PrometheusRuleCtx {
    pub name: String,
    pub namespace: String,
    pub labels: Vec<(String, String)>,
    pub group: String,
    pub rules: Vec<RuleCtx>,
}

/// `kong/prometheus-plugin.yaml.j2`.
#[derive(Serialize)]
pub(super) struct KongPluginCtx<'a> {
    pub name: &'static str,
    pub namespace: &'a str,
}

/// `lattice/access-log-policy.yaml.j2`.
#[derive(Serialize)]
pub(super) struct AccessLogCtx<'a> {
    pub name: String,
    pub namespace: &'a str,
    pub group: Option<u32>,
    pub route: String,
    pub destination: &'a str,
}

/// `text` cut at spaces into lines of at most [`FOLD_WIDTH`] (a word longer than that on a
/// line of its own): a folded scalar joins them with one space each, giving `text` back as
/// long as it has no two spaces in a row, which the rules never have.
pub(super) fn fold(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if line.len() + 1 + word.len() <= FOLD_WIDTH => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

fn record(name: &str, expr: String, labels: Vec<(String, String)>) -> RuleCtx {
    RuleCtx {
        record: Some(name.into()),
        alert: None,
        expr_lines: fold(&expr),
        for_: None,
        labels,
        annotations: Vec::new(),
        expr,
    }
}

fn alert(
    name: &str,
    expr: String,
    for_: &str,
    labels: Vec<(String, String)>,
    annotations: [(&'static str, String); 2],
) -> RuleCtx {
    RuleCtx {
        record: None,
        alert: Some(name.into()),
        expr_lines: fold(&expr),
        for_: Some(for_.into()),
        labels,
        annotations: annotations
            .into_iter()
            .map(|(name, text)| AnnotationCtx {
                name,
                lines: fold(&text),
                text,
            })
            .collect(),
        expr,
    }
}

/// The PrometheusRule's labels: latgen's, then the ones the settings give.
pub(super) fn rule_labels(p: &PrometheusConfig) -> Vec<(String, String)> {
    let mut labels = BTreeMap::from([(
        "app.kubernetes.io/managed-by".to_string(),
        "latgen".to_string(),
    )]);
    labels.extend(p.labels.clone());
    labels.into_iter().collect()
}

/// `inner` with each of Kong's routes of the project's namespace given the `app` label of
/// the HTTPRoute it comes from.
fn by_app(inner: &str, namespace: &str) -> String {
    let ns = namespace.replace('.', "\\\\.");
    format!(
        "label_replace({inner}, \"app\", \"$1\", \"route\", \"httproute\\\\.{ns}\\\\.([^.]+)\\\\..+\")"
    )
}

/// The per-app recording rules: the same for every app, keyed by the Kong route's name, so
/// that an app's series keeps its name through every move.
pub(super) fn app_rules(config: &Config) -> Vec<RuleCtx> {
    let ns = &config.kong.namespace;
    let routes = format!(
        "route=~\"httproute\\\\.{}\\\\..+\"",
        ns.replace('.', "\\\\.")
    );
    let rate = |filter: &str| {
        by_app(
            &format!("rate(kong_http_requests_total{{{routes}{filter}}}[5m])"),
            ns,
        )
    };
    let latency = by_app(
        &format!("rate(kong_request_latency_ms_bucket{{{routes}}}[5m])"),
        ns,
    );
    vec![
        record(APP_RATE, format!("sum by (app) ({})", rate("")), Vec::new()),
        record(
            APP_ERRORS,
            format!("sum by (app) ({}) / {APP_RATE}", rate(", code=~\"5..\"")),
            Vec::new(),
        ),
        record(
            APP_LATENCY,
            format!("histogram_quantile(0.99, sum by (app, le) ({latency}))"),
            Vec::new(),
        ),
    ]
}

/// The name of the PrometheusRule of Lattice route `route`.
pub(crate) fn service_rule_name(route: &str) -> String {
    format!("latgen-{route}")
}

/// The Kong side's file of the PrometheusRule of Lattice route `route`.
pub(crate) fn service_rule_file(route: &str) -> PathBuf {
    Path::new(Side::Kong.dir()).join(file_name(Kind::PrometheusRule, &service_rule_name(route)))
}

/// The Lattice route whose PrometheusRule file `rel` is ([`service_rule_file`]); None for
/// any other file.
pub(crate) fn service_rule_route(rel: &Path) -> Option<&str> {
    let prefix = file_name(Kind::PrometheusRule, &service_rule_name(""));
    let route = (rel.file_name()?.to_str()?)
        .strip_prefix(prefix.strip_suffix(".yaml")?)?
        .strip_suffix(".yaml")?;
    let is_apps = service_rule_name(route) == APPS_RULE;
    (side_of(rel) == Side::Kong && !route.is_empty() && !is_apps).then_some(route)
}

/// The PrometheusRule of Lattice route `route` (a group's, or a host-routed app's), which
/// the Kong side sends `apps` to.
pub(super) fn service_rule(
    route: &str,
    apps: &[&App],
    config: &Config,
    p: &PrometheusConfig,
) -> PrometheusRuleCtx {
    let name = service_rule_name(route);
    PrometheusRuleCtx {
        rules: service_rules(route, apps, config, p),
        namespace: config.kong.namespace.clone(),
        labels: rule_labels(p),
        group: name.clone(),
        name,
    }
}

/// The rules of one Lattice service: the series of `apps` with the route's name, their
/// total, the budget alert, and an alert per app that declares a peak.
fn service_rules(
    route: &str,
    apps: &[&App],
    config: &Config,
    p: &PrometheusConfig,
) -> Vec<RuleCtx> {
    let names: Vec<&str> = apps.iter().map(|a| a.name.as_str()).collect();
    let selector = format!("{{app=~\"{}\"}}", names.join("|"));
    let here = || vec![("lattice_route".to_string(), route.to_string())];
    let budget = config.throughput.rps_per_service * u64::from(p.zones);
    let threshold = (budget as f64 * p.budget_threshold).round() as u64;
    let mut rules = vec![
        record(APP_RATE_BY_ROUTE, format!("{APP_RATE}{selector}"), here()),
        record(ROUTE_RATE, format!("sum({APP_RATE}{selector})"), here()),
        alert(
            "LatgenLatticeServiceNearBudget",
            format!("{ROUTE_RATE}{{lattice_route=\"{route}\"}} > {threshold}"),
            &p.for_,
            vec![
                ("lattice_route".into(), route.into()),
                ("severity".into(), "warning".into()),
            ],
            [
                (
                    "summary",
                    format!("The apps of Lattice route {route} near its throughput budget"),
                ),
                (
                    "description",
                    format!(
                        "{} rps, over {:.0}% of the {budget} rps the service takes ({} per AZ, {} AZ): its apps ({}) share it. Run `latgen plan --observed` to see which to move.",
                        "{{ $value | humanize }}",
                        p.budget_threshold * 100.0,
                        config.throughput.rps_per_service,
                        p.zones,
                        names.join(", ")
                    ),
                ),
            ],
        ),
    ];
    rules.extend(peak_alert(apps, route, p));
    rules
}

/// The alert of the service's apps that run above their declared `peakRps` (the plan
/// counts the declarations, so the group may be fuller than it knows): one rule for the
/// service, each app's rate against its own peak, so that a firing alert carries the app.
fn peak_alert(apps: &[&App], route: &str, p: &PrometheusConfig) -> Option<RuleCtx> {
    let each: Vec<String> = (apps.iter())
        .filter_map(|a| {
            Some(format!(
                "{APP_RATE}{{app=\"{}\"}} > {}",
                a.name, a.peak_rps?
            ))
        })
        .collect();
    if each.is_empty() {
        return None;
    }
    Some(alert(
        "LatgenAppAboveDeclaredPeak",
        each.join(" or "),
        &p.for_,
        vec![
            ("lattice_route".into(), route.into()),
            ("severity".into(), "info".into()),
        ],
        [
            (
                "summary",
                "App {{ $labels.app }} runs above its declared peakRps".to_string(),
            ),
            (
                "description",
                "{{ $value | humanize }} rps, above the peakRps the app declares: the plan packs by it. Declare what the app does and run `latgen render`.".to_string(),
            ),
        ],
    ))
}

/// A PrometheusRule, reduced to what latgen writes (prometheus-operator's
/// `monitoring.coreos.com/v1`; its CRD is in tests/data/prometheus/).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct PrometheusRuleSpec {
    pub groups: Vec<RuleGroup>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct RuleGroup {
    pub name: String,
    pub rules: Vec<Rule>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct Rule {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alert: Option<String>,
    pub expr: String,
    #[serde(default, rename = "for", skip_serializing_if = "Option::is_none")]
    pub for_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
}

impl PrometheusRuleCtx {
    /// The spec the built-in template writes.
    pub fn spec(&self) -> PrometheusRuleSpec {
        let map = |pairs: Vec<(String, String)>| {
            (!pairs.is_empty()).then(|| pairs.into_iter().collect::<BTreeMap<_, _>>())
        };
        let rules = self.rules.iter().map(|r| Rule {
            record: r.record.clone(),
            alert: r.alert.clone(),
            expr: r.expr.clone(),
            for_: r.for_.clone(),
            labels: map(r.labels.clone()),
            annotations: map((r.annotations.iter())
                .map(|a| (a.name.to_string(), a.text.clone()))
                .collect()),
        });
        PrometheusRuleSpec {
            groups: vec![RuleGroup {
                name: self.group.clone(),
                rules: rules.collect(),
            }],
        }
    }
}

/// An AccessLogPolicy's spec (the AWS Gateway API Controller's, v2.1.3 CRD in
/// tests/data/aws/), reduced to what latgen writes.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct AccessLogPolicySpec {
    pub destination_arn: String,
    pub target_ref: TargetRef,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct TargetRef {
    pub group: String,
    pub kind: String,
    pub name: String,
}

/// A KongPlugin as latgen writes it: the plugin and its configuration sit beside
/// `metadata`, not in a spec.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub(crate) struct KongPluginObject {
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    pub kind: String,
    pub metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    pub plugin: String,
    pub config: BTreeMap<String, bool>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folded_lines_join_back_into_the_text() {
        let text = "sum by (app) (label_replace(rate(kong_http_requests_total{route=~\"httproute\\\\.kong-routes\\\\..+\"}[5m]), \"app\", \"$1\", \"route\", \"x\"))";
        let lines = fold(text);
        assert!(lines.len() > 1);
        assert!(
            lines
                .iter()
                .all(|l| l.len() <= FOLD_WIDTH || !l.contains(' '))
        );
        assert_eq!(lines.join(" "), text);
    }

    #[test]
    fn a_service_rules_file_names_its_route() {
        let file = service_rule_file("group-01");
        assert_eq!(file, Path::new("kong/prometheusrule-latgen-group-01.yaml"));
        assert_eq!(service_rule_route(&file), Some("group-01"));
        let apps = Path::new("kong/prometheusrule-latgen-apps.yaml");
        assert_eq!(service_rule_route(apps), None);
        let policy = Path::new("lattice/iamauthpolicy-group-01.yaml");
        assert_eq!(service_rule_route(policy), None);
    }
}
