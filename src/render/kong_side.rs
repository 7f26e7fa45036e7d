//! The Kong side's objects, in the gateway cluster: per app, a route that matches its own
//! paths in their Lattice order and rewrites Host to its Lattice service, and the bridge
//! Service that stands for that service; and the PrometheusRules and Kong's Prometheus
//! plugin when observability asks for them.

use super::assembly::{Inputs, dispatch_header, rule_ctx};
use super::jobs::{Expect, Kind, Renderer};
use super::monitoring;
use super::objects::{Bridge, KongRoute, Object};
use crate::input::app::{App, AppId};
use crate::input::config::Config;
use crate::input::observability::PrometheusConfig;
use crate::manifest::layout::Side;

impl<'a> Renderer<'a> {
    /// The Kong side: the apps' PrometheusRule, one per Lattice service, and the
    /// Prometheus plugin when latgen writes it.
    pub(super) fn emit_prometheus_rules(&mut self, t: &'a Inputs<'a>, p: &'a PrometheusConfig) {
        let config = t.config;
        let namespace = &config.kong.namespace;
        let apps_rule = move || monitoring::PrometheusRuleCtx {
            name: monitoring::APPS_RULE.into(),
            namespace: namespace.clone(),
            labels: monitoring::rule_labels(p),
            group: monitoring::APPS_RULE.into(),
            rules: monitoring::app_rules(config),
        };
        self.emit_prometheus_rule(monitoring::APPS_RULE.into(), namespace, apps_rule);
        // A service the Kong side sends no app to yet (a move's new group before Kong
        // switches) has nothing to count.
        for service in (t.plan.services.iter()).filter(|s| !s.monitored.is_empty()) {
            let name = monitoring::service_rule_name(&service.route);
            let rule = move || {
                let apps: Vec<&App> = (service.monitored.iter()).map(|&id| &t.apps[id]).collect();
                monitoring::service_rule(&service.route, &apps, config, p)
            };
            self.emit_prometheus_rule(name, namespace, rule);
        }
        if p.kong_plugin {
            let name = crate::input::observability::KONG_PLUGIN;
            let object =
                move || Object::PrometheusPlugin(monitoring::KongPluginCtx { name, namespace });
            let expect = Expect {
                kind: Kind::KongPlugin,
                name: name.to_string(),
                namespace: Some(namespace.clone()),
                service_name: None,
            };
            self.emit(Side::Kong, "kong/prometheus-plugin.yaml.j2", object, expect);
        }
    }

    fn emit_prometheus_rule(
        &mut self,
        name: String,
        namespace: &str,
        rule: impl FnOnce() -> monitoring::PrometheusRuleCtx + Send + 'a,
    ) {
        let expect = Expect {
            kind: Kind::PrometheusRule,
            name,
            namespace: Some(namespace.to_string()),
            service_name: None,
        };
        let object = move || Object::PrometheusRule(rule());
        self.emit(Side::Kong, "kong/prometheus-rule.yaml.j2", object, expect);
    }

    /// The Kong side: an ExternalName Service that stands for the app's Lattice service.
    pub(super) fn emit_bridge(
        &mut self,
        t: &'a Inputs<'a>,
        app: &'a App,
        bridge: String,
        target: String,
    ) {
        let config = t.config;
        let (port, protocol) = (config.kong.upstream_port(), config.kong.protocol.as_str());
        let name = bridge.clone();
        let object = move || {
            Object::Bridge(Bridge {
                name: bridge,
                namespace: &config.kong.namespace,
                app: &app.name,
                target,
                port,
                protocol,
                timeouts: app.kong.timeouts,
                retries: app.kong.retries,
            })
        };
        self.emit(
            Side::Kong,
            "kong/bridge-service.yaml.j2",
            object,
            Expect {
                kind: Kind::Service,
                name,
                namespace: Some(config.kong.namespace.clone()),
                service_name: None,
            },
        );
    }

    /// The Kong side: the app's route, matching its own paths in the order its Lattice
    /// rules have, to its bridge.
    pub(super) fn emit_kong_route(
        &mut self,
        t: &'a Inputs<'a>,
        id: AppId,
        app: &'a App,
        bridge: String,
        target: String,
    ) {
        let config = t.config;
        let port = config.kong.upstream_port();
        let object = move || {
            let base = match &app.host {
                Some(h) => vec![h.as_str()],
                None => config.kong.hostnames.iter().map(String::as_str).collect(),
            };
            let extra = app.kong.hosts.iter().map(String::as_str);
            let hostnames = base.into_iter().chain(extra).collect();
            let matches = (t.plan.rules_of(id).iter())
                .map(|rule| rule_ctx(t.apps, rule))
                .collect();
            Object::KongRoute(KongRoute {
                name: &app.name,
                namespace: &config.kong.namespace,
                app: &app.name,
                gateway: &t.kong_gw,
                hostnames,
                plugins: route_plugins(config, app),
                matches,
                target,
                bridge,
                port,
                dispatch_header: dispatch_header(config),
                dispatch_value: &app.name,
                preview: None,
            })
        };
        self.emit(
            Side::Kong,
            "kong/route.yaml.j2",
            object,
            Expect {
                kind: Kind::HttpRoute,
                name: app.name.clone(),
                namespace: Some(config.kong.namespace.clone()),
                service_name: None,
            },
        );
    }
}

/// The plugins an app's Kong route names: the app's, then the Prometheus plugin latgen
/// writes when observability asks for it.
pub(super) fn route_plugins<'a>(config: &Config, app: &'a App) -> Vec<&'a str> {
    let mut plugins: Vec<&str> = app.kong.plugins.iter().map(String::as_str).collect();
    let ours = crate::input::observability::KONG_PLUGIN;
    let wanted = (config.observability.prometheus.as_ref()).is_some_and(|p| p.kong_plugin);
    if wanted && !plugins.contains(&ours) {
        plugins.push(ours);
    }
    plugins
}
