//! `latgen.yaml` on its own: the quotas, the names and domains it gives groups, Kong's
//! hostnames, the dispatch header, the service name prefix and observability.

use std::path::Path;

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::Loaded;
use crate::input::config::Config;
use latgen_sim::platform;

pub(super) fn validate_config(config: &Config, file: &Path, diags: &mut Diagnostics) {
    let at = Span::file(file);
    check_priority_limit(config, &at, diags);
    let mut bad = |what: String, help: &str| {
        diags.push(
            Diagnostic::error(Code::InvalidConfig, what)
                .at(at.clone())
                .help(help.to_string()),
        );
    };
    check_quotas(config, &mut bad);
    check_config_names(config, &mut bad);
    check_kong_hostnames(config, &mut bad);
    check_observability(config, &mut bad);
}

/// `observability:`: settings the PrometheusRule and AccessLogPolicy CRDs would refuse, or
/// alerts that could never fire or always would.
fn check_observability(config: &Config, bad: &mut impl FnMut(String, &str)) {
    use crate::input::observability::{destination_problem, is_duration};
    let o = &config.observability;
    if let Some(logs) = &o.access_logs
        && let Some(p) = destination_problem(&logs.destination_arn)
    {
        bad(
            format!(
                "observability.accessLogs.destinationArn `{}` {p}",
                logs.destination_arn
            ),
            "give the ARN of an S3 bucket (arn:aws:s3:::bucket), a CloudWatch Logs log group or a Firehose delivery stream",
        );
    }
    let Some(p) = &o.prometheus else {
        return;
    };
    if !(p.budget_threshold > 0.0 && p.budget_threshold <= 1.0) {
        bad(
            format!(
                "observability.prometheus.budgetThreshold {} is not above 0 and at most 1",
                p.budget_threshold
            ),
            "give the share of the budget at which to alert, e.g. 0.8",
        );
    }
    if !(1..=16).contains(&p.zones) {
        bad(
            format!("observability.prometheus.zones {} is not 1 to 16", p.zones),
            "give the number of Availability Zones the service network's traffic comes through",
        );
    }
    if !is_duration(&p.for_) {
        bad(
            format!(
                "observability.prometheus.for `{}` is not a Prometheus duration",
                p.for_
            ),
            "write e.g. 10m, 1h30m or 90s",
        );
    }
    for (k, v) in &p.labels {
        if k.is_empty() || k.len() > 317 || v.len() > 63 {
            bad(
                format!("observability.prometheus.labels `{k}: {v}` is not a Kubernetes label"),
                "a label name is a DNS prefix and a name of at most 63 characters; a value at most 63",
            );
        }
    }
}

/// The header a group dispatches on: a header name Lattice can match, and one that nothing
/// between Kong's plugins and the Lattice rule sets, strips or takes from the client.
pub(super) fn check_dispatch_header(loaded: &Loaded, file: &Path, diags: &mut Diagnostics) {
    let h = &loaded.config.lattice.dispatch_header;
    // Lower case, so that the name reads back from the manifests as it was written.
    let tchar =
        |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "!#$%&'*+-.^_`|~".contains(c);
    let problem = if h.is_empty() || !h.chars().all(tchar) {
        "is not a lowercase header name (letters, digits and `-`, no spaces)".to_string()
    } else if h.len() > platform::LATTICE_MAX_HEADER_NAME {
        "is longer than the 40 characters a Lattice header match takes".to_string()
    } else if h
        .to_ascii_lowercase()
        .starts_with(platform::LATTICE_RESERVED_HEADER_PREFIX)
    {
        "starts with `x-amzn-lattice-`, which Lattice strips from incoming requests".to_string()
    } else if let Some(why) = platform::dispatch_header_refusal(h) {
        format!("is a header that Kong's proxy, nginx or Lattice sets or strips: {why}")
    } else {
        return;
    };
    let places =
        crate::input::places::Places::settings(&loaded.config, file, loaded.sources.text(file));
    diags.push(
        Diagnostic::error(
            Code::InvalidConfig,
            format!("lattice.dispatchHeader `{h}` {problem}"),
        )
        .at(places.of(&["lattice", "dispatchHeader"]))
        .help("use a short header of your own, such as `x-latgen-app` (the default)"),
    );
}

/// `lattice.serviceNamePrefix`: a prefix that makes names Lattice refuses. (The placeholder
/// `init` writes is `check`'s finding: render names nothing with it.)
pub(super) fn check_service_name_prefix(loaded: &Loaded, file: &Path, diags: &mut Diagnostics) {
    let Some(prefix) = &loaded.config.lattice.service_name_prefix else {
        return;
    };
    let places =
        crate::input::places::Places::settings(&loaded.config, file, loaded.sources.text(file));
    let at = &places.of(&["lattice", "serviceNamePrefix"]);
    if let Some(problem) = crate::input::config::prefix_problem(prefix) {
        diags.push(
            Diagnostic::error(
                Code::InvalidConfig,
                format!("lattice.serviceNamePrefix `{prefix}` makes Lattice service names such as `{prefix}-g01`, which {problem}"),
            )
            .at(at.clone())
            .help("use lowercase letters, digits and single hyphens, not starting with `svc-`, at most 36 characters (shorter leaves room for app names)"),
        );
    }
}

/// A Lattice listener has 100 rule priorities, whatever the account's quota says.
fn check_priority_limit(config: &Config, at: &Span, diags: &mut Diagnostics) {
    let q = &config.quotas;
    if q.over_priorities() {
        diags.push(
            Diagnostic::error(
                Code::PriorityLimit,
                format!(
                    "quotas.rulesPerService is {}, more than the {} rule priorities a Lattice listener has",
                    q.rules_per_service,
                    platform::LATTICE_MAX_PRIORITY
                ),
            )
            .at(at.clone())
            .help("set it to the account's Lattice rules-per-listener quota (at most 100)"),
        );
    }
}

/// Quotas that leave no room for a rule or a target group.
fn check_quotas(config: &Config, bad: &mut impl FnMut(String, &str)) {
    for (problem, help) in config.quotas.problems() {
        bad(problem, help);
    }
}

/// Namespaces, Gateway names, and the group names and domains the settings give.
fn check_config_names(config: &Config, bad: &mut impl FnMut(String, &str)) {
    for (what, v) in [
        ("lattice.namespace", &config.lattice.namespace),
        ("kong.namespace", &config.kong.namespace),
        ("lattice.gateway.name", &config.lattice.gateway.name),
        ("kong.gateway.name", &config.kong.gateway.name),
    ] {
        if let Some(p) = platform::dns1123_label_problem(v) {
            bad(format!("{what} `{v}` {p}"), "use a DNS-1123 label");
        }
    }
    let sample = config.group_name(1);
    if let Some(p) = platform::dns1123_label_problem(&sample) {
        bad(
            format!("lattice.groupPrefix gives group names like `{sample}`, which {p}"),
            "use a lowercase prefix such as `group-`",
        );
    }
    if let Some(p) = platform::hostname_problem(&config.group_domain(1)) {
        bad(
            format!("lattice.domain gives group domains that are not valid: {p}"),
            "use a lowercase internal domain such as `lattice.internal`",
        );
    }
}

fn check_kong_hostnames(config: &Config, bad: &mut impl FnMut(String, &str)) {
    for h in &config.kong.hostnames {
        if let Some(p) = platform::hostname_problem(h) {
            bad(
                format!("kong.hostnames: `{h}` {p}"),
                "give lowercase DNS names",
            );
        }
    }
    if config.kong.hostnames.len() > platform::CRD_MAX_HOSTNAMES {
        bad(
            format!(
                "kong.hostnames has {} entries; an HTTPRoute takes 16",
                config.kong.hostnames.len()
            ),
            "shorten the list",
        );
    }
}
