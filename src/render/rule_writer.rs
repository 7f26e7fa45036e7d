//! The writer of `observability.prometheus`'s PrometheusRules: one per Lattice service and
//! one for the apps. With the AccessLogPolicies (see `policy_writers`), `observability:` adds a
//! quarter more files at 10,000 apps, and the template engine took about a twentieth of
//! such a render's processor time on them. It follows its template line by line, as the
//! other writers do.

use std::fmt::Write as _;

use super::builtin::{head, line, set};
use crate::render::monitoring::{PrometheusRuleCtx, RuleCtx};
use crate::render::readback::Kind;
use crate::render::templates::push_yaml;

/// `kong/prometheus-rule.yaml.j2`; None for a rule neither recorded nor alerting, which no
/// plan makes (the template engine then says what it says of it).
pub(super) fn prometheus_rule(w: &mut String, c: &PrometheusRuleCtx) -> Option<()> {
    w.push_str(concat!(
        "# Per-app series from Kong's per-route metrics (an app keeps its Kong route\n",
        "# through every move), and the alerts on them (observability.prometheus).\n",
    ));
    head(w, Kind::PrometheusRule);
    w.push_str("metadata:\n");
    line(w, "  name: ", &c.name);
    line(w, "  namespace: ", &c.namespace);
    w.push_str("  labels:\n");
    for (key, value) in &c.labels {
        pair(w, "    ", key, value);
    }
    w.push_str("spec:\n  groups:\n");
    line(w, "    - name: ", &c.group);
    w.push_str("      rules:\n");
    c.rules.iter().try_for_each(|r| rule(w, r))
}

/// One rule of a PrometheusRule's group.
fn rule(w: &mut String, r: &RuleCtx) -> Option<()> {
    match (set(r.record.as_deref()), r.alert.as_deref()) {
        (Some(record), _) => line(w, "        - record: ", record),
        (None, Some(alert)) => line(w, "        - alert: ", alert),
        (None, None) => return None,
    }
    w.push_str("          expr: >-\n");
    for l in &r.expr_lines {
        let _ = writeln!(w, "            {l}");
    }
    if let Some(for_) = set(r.for_.as_deref()) {
        line(w, "          for: ", for_);
    }
    if !r.labels.is_empty() {
        w.push_str("          labels:\n");
        for (key, value) in &r.labels {
            pair(w, "            ", key, value);
        }
    }
    if !r.annotations.is_empty() {
        w.push_str("          annotations:\n");
        for a in &r.annotations {
            let _ = writeln!(w, "            {}: >-", a.name);
            for l in &a.lines {
                let _ = writeln!(w, "              {l}");
            }
        }
    }
    Some(())
}

/// `{indent}{{ key | yaml }}: {{ value | yaml }}` and a line break.
fn pair(w: &mut String, indent: &str, key: &str, value: &str) {
    w.push_str(indent);
    push_yaml(w, key);
    w.push_str(": ");
    push_yaml(w, value);
    w.push('\n');
}
