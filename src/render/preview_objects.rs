//! The previews' objects: per preview group, a Lattice route with one header rule per
//! preview (and its auth policy when auth is on); per preview, a Kong route on the
//! preview's host that rewrites Host to its group and sets the dispatch header to
//! `<name>.<app>`, and a bridge. Nothing here reads or changes a production group.

use super::assembly::{Inputs, rule_ctx};
use super::jobs::{Expect, Kind, Renderer};
use super::kong_side::route_plugins;
use super::objects::{BackendCtx, GroupRoute, HeaderCtx, KongRoute, Object, RuleCtx};
use crate::manifest::layout::Side;
use crate::plan::preview_groups::{PreviewGroup, group_domain};

impl<'a> Renderer<'a> {
    /// Every preview group's objects, then every preview's Kong route and bridge.
    pub(super) fn emit_previews(&mut self, t: &'a Inputs<'a>) {
        let previews = &t.plan.previews;
        let namespace = t.config.lattice.namespace.as_str();
        for group in &previews.groups {
            self.emit_preview_group(t, group);
            if let Some(policy) = &group.policy {
                self.emit_auth_policy((group.route(), group.route()), namespace, None, policy);
            }
        }
        for group in &previews.groups {
            for &i in &group.members {
                self.emit_preview_kong_route(t, i, group.number);
            }
        }
        for group in &previews.groups {
            for &i in &group.members {
                let p = &previews.list[i];
                let app = &t.apps[p.app];
                let target = group_domain(t.config, group.number);
                self.emit_bridge(t, app, p.route_name(), target);
            }
        }
    }

    fn emit_preview_group(&mut self, t: &'a Inputs<'a>, group: &'a PreviewGroup) {
        let config = t.config;
        let name = group.route();
        let header = config.lattice.dispatch_header.as_str();
        let service_name = group.annotation().map(str::to_string);
        let object = {
            let name = name.clone();
            let service_name = service_name.clone();
            move || {
                let rules = (group.members.iter())
                    .map(|&i| {
                        let p = &t.plan.previews.list[i];
                        RuleCtx {
                            kind: "PathPrefix",
                            path: "/",
                            app: value_of(t, i),
                            header: Some(HeaderCtx {
                                name: header,
                                value: value_of(t, i),
                            }),
                            backend: BackendCtx {
                                name: &p.service,
                                namespace: &p.namespace,
                                port: p.port,
                            },
                            canary: None,
                        }
                    })
                    .collect();
                Object::GroupRoute(GroupRoute {
                    name,
                    namespace: &config.lattice.namespace,
                    number: group.number,
                    service_name,
                    hostname: group_domain(config, group.number),
                    gateway: &t.lattice_gw,
                    rules,
                    dispatch_header: Some(header),
                    preview: true,
                })
            }
        };
        self.emit(
            Side::Lattice,
            "lattice/group-route.yaml.j2",
            object,
            Expect {
                kind: Kind::HttpRoute,
                name,
                namespace: Some(config.lattice.namespace.clone()),
                service_name,
            },
        );
    }

    fn emit_preview_kong_route(&mut self, t: &'a Inputs<'a>, i: usize, number: u32) {
        let config = t.config;
        let p = &t.plan.previews.list[i];
        let app = &t.apps[p.app];
        let name = p.route_name();
        let object = {
            move || {
                let matches = (t.plan.rules_of(p.app).iter())
                    .map(|rule| rule_ctx(t.apps, rule))
                    .collect();
                Object::KongRoute(KongRoute {
                    name: t.plan.previews.route_names[i].as_str(),
                    namespace: &config.kong.namespace,
                    app: &app.name,
                    gateway: &t.kong_gw,
                    hostnames: vec![p.host.as_str()],
                    plugins: route_plugins(config, app),
                    matches,
                    target: group_domain(config, number),
                    bridge: p.route_name(),
                    port: config.kong.upstream_port(),
                    dispatch_header: Some(config.lattice.dispatch_header.as_str()),
                    dispatch_value: value_of(t, i),
                    preview: Some(&p.name),
                })
            }
        };
        self.emit(
            Side::Kong,
            "kong/route.yaml.j2",
            object,
            Expect {
                kind: Kind::HttpRoute,
                name,
                namespace: Some(config.kong.namespace.clone()),
                service_name: None,
            },
        );
    }
}

/// The header value of preview `i`, borrowed from the inputs for as long as they live.
fn value_of<'a>(t: &'a Inputs<'a>, i: usize) -> &'a str {
    t.plan.previews.values[i].as_str()
}
