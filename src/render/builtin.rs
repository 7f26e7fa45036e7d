//! The built-in templates that render nearly every file (a Kong route and its bridge
//! Service per app, a Lattice route per group or host, the kustomizations, the auth
//! policies, and with `observability:` the PrometheusRules and AccessLogPolicies), written
//! straight from their contexts: at 10,000 apps the template engine spent about a fifth of
//! a render's processor time on them, making each context a template value and
//! interpreting the template.
//!
//! The `.j2` files stay what they are: the templates a `--templates` folder overrides, and
//! the text these writers must give. tests/suite/proof.rs renders generated projects (with
//! hostile values in every field) both ways and requires the same bytes, and the golden
//! trees were made by the templates; a writer that drifted from its template fails both.
//! Each writer follows its template line by line, with the template engine's truth rules:
//! an absent, empty or zero value is false (see [`set`]), and an absent value printed is
//! `None`.

use std::fmt::Write as _;

use super::objects::{Bridge, GatewayCtx, GroupRoute, HostRoute, KongRoute, Object, RuleCtx};
use super::readback::Kind;
use super::templates::push_yaml;

/// The text the built-in template renders for `object`, where it has a writer here; None
/// sends the object to the template engine.
pub(super) fn write(object: &Object) -> Option<String> {
    let mut out = String::with_capacity(1024);
    let w = &mut out;
    match object {
        Object::KongRoute(c) => kong_route(w, c),
        Object::Bridge(c) => bridge(w, c),
        Object::GroupRoute(c) => group_route(w, c),
        Object::HostRoute(c) => host_route(w, c),
        Object::PrometheusRule(c) => super::rule_writer::prometheus_rule(w, c)?,
        Object::AccessLogPolicy(c) => super::policy_writers::access_log_policy(w, c),
        Object::AuthPolicy(c) => super::policy_writers::iam_auth_policy(w, c),
        Object::Kustomization(c) => {
            head(w, Kind::Kustomization);
            if c.resources.is_empty() {
                w.push_str("resources: []\n");
            } else {
                w.push_str("resources:\n");
                for r in c.resources {
                    line(w, "  - ", r);
                }
            }
        }
        _ => return None,
    }
    Some(out)
}

/// A text value as the templates test it: set when present and not empty.
pub(super) fn set(value: Option<&str>) -> Option<&str> {
    value.filter(|v| !v.is_empty())
}

/// `{prefix}{{ value | yaml }}` and a line break.
pub(super) fn line(w: &mut String, prefix: &str, value: &str) {
    w.push_str(prefix);
    push_yaml(w, value);
    w.push('\n');
}

/// `{prefix}{{ value }}` (a number) and a line break.
fn number(w: &mut String, prefix: &str, value: impl std::fmt::Display) {
    let _ = writeln!(w, "{prefix}{value}");
}

/// An object's `apiVersion` and `kind`, as the typed read-back expects them.
pub(super) fn head(w: &mut String, kind: Kind) {
    let (api, kind) = kind.api();
    let _ = write!(w, "apiVersion: {api}\nkind: {kind}\n");
}

/// The head every route and Service has: its name, namespace and the managed-by label.
pub(super) fn metadata(w: &mut String, kind: Kind, name: &str, namespace: &str) {
    head(w, kind);
    w.push_str("metadata:\n");
    line(w, "  name: ", name);
    line(w, "  namespace: ", namespace);
    w.push_str("  labels:\n    app.kubernetes.io/managed-by: latgen\n");
}

/// The head of one app's object (its Kong route, bridge Service or host route): with the
/// app's label.
fn app_head(w: &mut String, kind: Kind, name: &str, namespace: &str, app: &str) {
    metadata(w, kind, name, namespace);
    line(w, "    app.kubernetes.io/name: ", app);
}

/// A route's `parentRefs` (after `spec:`).
fn parent_refs(w: &mut String, g: &GatewayCtx) {
    w.push_str("spec:\n  parentRefs:\n");
    line(w, "    - name: ", g.name);
    w.push_str("      group: gateway.networking.k8s.io\n      kind: Gateway\n");
    if let Some(ns) = set(g.namespace) {
        line(w, "      namespace: ", ns);
    }
    if let Some(section) = set(g.section_name) {
        line(w, "      sectionName: ", section);
    }
}

/// `kong/route.yaml.j2`.
fn kong_route(w: &mut String, c: &KongRoute) {
    app_head(w, Kind::HttpRoute, c.name, c.namespace, c.app);
    if let Some(preview) = set(c.preview) {
        line(w, "    latgen.dev/preview: ", preview);
    }
    if !c.plugins.is_empty() {
        w.push_str("  annotations:\n");
        line(w, "    konghq.com/plugins: ", &c.plugins.join(","));
    }
    parent_refs(w, c.gateway);
    if !c.hostnames.is_empty() {
        w.push_str("  hostnames:\n");
        for h in &c.hostnames {
            line(w, "    - ", h);
        }
    }
    w.push_str("  rules:\n    - matches:\n");
    for m in &c.matches {
        let _ = writeln!(w, "        - path:\n            type: {}", m.kind);
        line(w, "            value: ", m.path);
    }
    w.push_str(concat!(
        "      # Lattice finds the service by Host; the client's host goes on in\n",
        "      # X-Forwarded-Host.\n",
        "      filters:\n",
        "        - type: URLRewrite\n",
        "          urlRewrite:\n",
    ));
    line(w, "            hostname: ", &c.target);
    if let Some(header) = set(c.dispatch_header) {
        w.push_str(concat!(
            "        # Set, not add: a value the client sent is replaced, so a client cannot\n",
            "        # pick another app.\n",
            "        - type: RequestHeaderModifier\n",
            "          requestHeaderModifier:\n",
            "            set:\n",
        ));
        line(w, "              - name: ", header);
        line(w, "                value: ", c.dispatch_value);
    }
    w.push_str("      backendRefs:\n        - group: \"\"\n          kind: Service\n");
    line(w, "          name: ", &c.bridge);
    number(w, "          port: ", c.port);
    w.push_str("          weight: 1\n");
}

/// `kong/bridge-service.yaml.j2`.
fn bridge(w: &mut String, c: &Bridge) {
    w.push_str(concat!(
        "# Kong can only route to a Service: this one resolves to the app's Lattice\n",
        "# service.\n",
    ));
    app_head(w, Kind::Service, &c.name, c.namespace, c.app);
    let ms = |m: Option<crate::input::kong::Millis>| m.map(|m| m.0).filter(|&m| m != 0);
    let t = &c.timeouts;
    let (connect, read, write) = (ms(t.connect), ms(t.read), ms(t.write));
    let https = c.protocol == "https";
    let tuned = connect.is_some() || read.is_some() || write.is_some() || c.retries.is_some();
    if https || tuned {
        w.push_str("  annotations:\n");
    }
    if https {
        w.push_str("    konghq.com/protocol: https\n");
    }
    if tuned {
        w.push_str(concat!(
            "    # KIC sets these on the Kong Service it makes of this one (timeouts in\n",
            "    # milliseconds).\n",
        ));
    }
    for (key, value) in [("connect", connect), ("read", read), ("write", write)] {
        if let Some(v) = value {
            let _ = writeln!(w, "    konghq.com/{key}-timeout: \"{v}\"");
        }
    }
    if let Some(r) = c.retries {
        let _ = writeln!(w, "    konghq.com/retries: \"{r}\"");
    }
    w.push_str("spec:\n  type: ExternalName\n");
    line(w, "  externalName: ", &c.target);
    w.push_str("  sessionAffinity: None\n  ports:\n");
    line(w, "    - name: ", c.protocol);
    number(w, "      port: ", c.port);
    w.push_str("      protocol: TCP\n");
    number(w, "      targetPort: ", c.port);
}

/// `lattice/group-route.yaml.j2`.
fn group_route(w: &mut String, c: &GroupRoute) {
    metadata(w, Kind::HttpRoute, &c.name, c.namespace);
    let label = if c.preview { "preview-group" } else { "group" };
    line(
        w,
        &format!("    latgen.dev/{label}: "),
        &c.number.to_string(),
    );
    if let Some(service) = set(c.service_name.as_deref()) {
        w.push_str(concat!(
            "  # The Lattice service's name: the controller reads it only when it\n",
            "  # creates the service.\n",
            "  annotations:\n",
        ));
        line(
            w,
            "    application-networking.k8s.aws/service-name-override: ",
            service,
        );
    }
    parent_refs(w, c.gateway);
    w.push_str("  # The Lattice custom domain: fixed once the service exists.\n  hostnames:\n");
    line(w, "    - ", &c.hostname);
    // Printed as the template engine prints a value: an absent one is `None` (no preview
    // group is without a header; the writer follows the template all the same).
    let header = c.dispatch_header.unwrap_or("None");
    if c.preview {
        let _ = writeln!(
            w,
            "  # One rule per preview: Kong sets {header} to <preview>.<app>\n  # on the preview's host (replacing a client's), and Lattice matches it."
        );
    } else if set(c.dispatch_header).is_some() {
        let _ = writeln!(
            w,
            "  # One rule per app: Kong sets {header} to the app's name\n  # (replacing a client's), and Lattice matches it."
        );
    } else {
        w.push_str(concat!(
            "  # Lattice compares prefixes as strings and takes the first rule that matches:\n",
            "  # longest path first, and no two apps' prefixes nest in one group.\n",
        ));
    }
    w.push_str("  rules:\n");
    for rule in &c.rules {
        let _ = writeln!(w, "    # {}", rule.app);
        rule_matches(w, rule);
        if let Some(h) = &rule.header {
            w.push_str("          headers:\n            - type: Exact\n");
            line(w, "              name: ", h.name);
            line(w, "              value: ", h.value);
        }
        backends(w, rule, true);
    }
}

/// `lattice/host-route.yaml.j2`.
fn host_route(w: &mut String, c: &HostRoute) {
    app_head(w, Kind::HttpRoute, c.name, c.namespace, c.app);
    let service = set(c.service_name.as_deref());
    if service.is_some() {
        w.push_str(concat!(
            "  # The Lattice service's name: the controller reads it only when it\n",
            "  # creates the service.\n",
        ));
    }
    if service.is_some() || c.assigned_domain {
        w.push_str("  annotations:\n");
    }
    if let Some(service) = service {
        line(
            w,
            "    application-networking.k8s.aws/service-name-override: ",
            service,
        );
    }
    if c.assigned_domain {
        w.push_str(concat!(
            "    # The domain Lattice assigned the service, as the controller recorded it:\n",
            "    # where Kong reaches this route, which has no custom domain.\n",
        ));
        line(
            w,
            "    application-networking.k8s.aws/lattice-assigned-domain-name: ",
            c.hostname,
        );
    }
    parent_refs(w, c.gateway);
    w.push_str(if c.assigned_domain {
        "  # Adopted as it ran before latgen: its name is its Lattice service's, and\n  # it has no hostname (a service's custom domain is set when it is created).\n"
    } else if c.adopted {
        "  # Adopted as it ran before latgen: its name is its Lattice service's, and\n  # its hostname the service's custom domain.\n"
    } else {
        "  # The app's own host is its dedicated Lattice service's custom domain.\n"
    });
    if !c.assigned_domain {
        w.push_str("  hostnames:\n");
        line(w, "    - ", c.hostname);
    }
    w.push_str("  rules:\n");
    for rule in &c.rules {
        rule_matches(w, rule);
        backends(w, rule, c.cross_namespace);
    }
}

/// A Lattice rule's path match, up to its headers.
fn rule_matches(w: &mut String, rule: &RuleCtx) {
    let _ = writeln!(
        w,
        "    - matches:\n        - path:\n            type: {}",
        rule.kind
    );
    line(w, "            value: ", rule.path);
}

/// A Lattice rule's backends: the app's Service, and its canary at weight 0 beside it.
fn backends(w: &mut String, rule: &RuleCtx, namespaced: bool) {
    w.push_str("      backendRefs:\n");
    let service = |w: &mut String, b: &super::objects::BackendCtx| {
        w.push_str("        - group: \"\"\n          kind: Service\n");
        line(w, "          name: ", b.name);
        if namespaced {
            line(w, "          namespace: ", b.namespace);
        }
        number(w, "          port: ", b.port);
    };
    service(w, &rule.backend);
    match &rule.canary {
        Some(canary) => {
            w.push_str(concat!(
                "          # Stable 100, canary 0: the Rollout moves both, Argo CD ignores them.\n",
                "          weight: 100\n",
            ));
            service(w, canary);
            w.push_str("          weight: 0\n");
        }
        None => w.push_str("          weight: 1\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::objects::{GatewayCtx, GroupRoute, Object};
    use super::super::templates::Templates;

    /// A context no run makes (a preview group route without a dispatch header) is still
    /// written as its template renders it: the property test reaches only contexts a plan
    /// makes.
    #[test]
    fn a_preview_group_route_without_a_header_is_written_as_its_template_renders_it() {
        let templates = Templates::load(None).unwrap().interpreting(true);
        let gateway = GatewayCtx {
            name: "lattice",
            namespace: None,
            section_name: Some(""),
        };
        let object = Object::GroupRoute(GroupRoute {
            name: "preview-01".into(),
            namespace: "apps",
            number: 1,
            service_name: Some(String::new()),
            hostname: "preview-01.example".into(),
            gateway: &gateway,
            rules: Vec::new(),
            dispatch_header: None,
            preview: true,
        });
        let rendered = (templates.render("lattice/group-route.yaml.j2", object.context()))
            .expect("the template renders");
        let written = super::write(&object).expect("a writer");
        assert_eq!(written.trim_end(), rendered.trim_end());
    }
}
