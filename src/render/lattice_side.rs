//! The Lattice side's objects, in the workload cluster: an HTTPRoute per Lattice service
//! of the plan (its rules as the plan ordered them, its name as the plan records it), and
//! beside each its auth policy and access log policy; ReferenceGrants into the apps'
//! namespaces, and TargetGroupPolicies for health checks.

use super::assembly::{Inputs, dispatch_header, rule_ctx};
use super::jobs::{Expect, Kind, Renderer, file_name};
use super::monitoring;
use super::objects::{
    AuthPolicyCtx, GroupRoute, HeaderCtx, HostRoute, Object, ReferenceGrant, RuleCtx,
    TargetGroupPolicy,
};
use crate::input::app::App;
use crate::manifest::layout::Side;
use crate::plan::lattice_service::{LatticeService, Owner, Policy};

impl<'a> Renderer<'a> {
    /// The Lattice side: an HTTPRoute per Lattice service of the plan, a shared group's or
    /// a host-routed app's.
    pub(super) fn emit_lattice_routes(&mut self, t: &'a Inputs<'a>) {
        for service in &t.plan.services {
            match service.owner {
                Owner::Group(number) => self.emit_group_route(t, service, number),
                Owner::App(id) => self.emit_host_route(t, service, &t.apps[id]),
            }
        }
    }

    /// A shared group's HTTPRoute, its rules as the plan ordered them.
    fn emit_group_route(&mut self, t: &'a Inputs<'a>, service: &'a LatticeService, number: u32) {
        let config = t.config;
        let name = service.route.clone();
        let service_name = service.annotation().map(str::to_string);
        let object = {
            let name = name.clone();
            let service_name = service_name.clone();
            move || {
                let header = dispatch_header(config);
                let rules = (service.rules.iter())
                    .map(|planned| RuleCtx {
                        header: header.filter(|_| planned.by_header).map(|name| HeaderCtx {
                            name,
                            value: &t.apps[planned.rule.app].name,
                        }),
                        ..rule_ctx(t.apps, &planned.rule)
                    })
                    .collect();
                Object::GroupRoute(GroupRoute {
                    name,
                    namespace: &service.namespace,
                    number,
                    service_name,
                    hostname: config.group_domain(number),
                    gateway: &t.lattice_gw,
                    rules,
                    dispatch_header: header,
                    preview: false,
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
                namespace: Some(service.namespace.clone()),
                service_name,
            },
        );
    }

    /// A host-routed app's own HTTPRoute, in the app's namespace.
    fn emit_host_route(&mut self, t: &'a Inputs<'a>, service: &'a LatticeService, app: &'a App) {
        let service_name = service.annotation().map(str::to_string);
        let in_ctx = service_name.clone();
        let object = move || {
            let rules = (service.rules.iter())
                .map(|planned| rule_ctx(t.apps, &planned.rule))
                .collect();
            Object::HostRoute(HostRoute {
                name: &service.route,
                namespace: &service.namespace,
                app: &app.name,
                service_name: in_ctx,
                hostname: app.own_route().2,
                adopted: app.adopted.is_some(),
                assigned_domain: app.adopted.as_ref().is_some_and(|a| a.assigned),
                cross_namespace: service.namespace != app.namespace,
                gateway: &t.lattice_gw,
                rules,
            })
        };
        self.emit(
            Side::Lattice,
            "lattice/host-route.yaml.j2",
            object,
            Expect {
                kind: Kind::HttpRoute,
                name: service.route.clone(),
                namespace: Some(service.namespace.clone()),
                service_name,
            },
        );
    }

    /// The Lattice side: an IAMAuthPolicy beside each Lattice route the plan gives one,
    /// letting in each app's callers on that app's requests.
    pub(super) fn emit_auth_policies(&mut self, t: &'a Inputs<'a>) {
        for service in &t.plan.services {
            if let Some(policy) = &service.policy {
                let (route, namespace) = (service.route.clone(), service.namespace.as_str());
                // An adopted route's live policy keeps its name: the same object, taken over.
                let name = match service.owner {
                    Owner::App(id) => {
                        (t.apps[id].adopted.as_ref()).and_then(|a| a.auth_policy.clone())
                    }
                    Owner::Group(_) => None,
                };
                let name = name.unwrap_or_else(|| route.clone());
                self.emit_auth_policy((route, name), namespace, service.group(), policy);
            }
        }
    }

    /// An IAMAuthPolicy named `target.1` on route `target.0`.
    pub(super) fn emit_auth_policy(
        &mut self,
        (route, name): (String, String),
        namespace: &'a str,
        group: Option<u32>,
        policy: &'a Policy,
    ) {
        let expect = Expect {
            kind: Kind::IamAuthPolicy,
            name: name.clone(),
            namespace: Some(namespace.to_string()),
            service_name: None,
        };
        let object = move || {
            Object::AuthPolicy(AuthPolicyCtx {
                name,
                namespace,
                group,
                policy: policy.text(),
                route,
            })
        };
        self.emit(
            Side::Lattice,
            "lattice/iam-auth-policy.yaml.j2",
            object,
            expect,
        );
    }

    /// The Lattice side: an AccessLogPolicy per Lattice route, beside it.
    pub(super) fn emit_access_log_policies(&mut self, t: &'a Inputs<'a>, destination: &'a str) {
        for service in &t.plan.services {
            let (route, namespace, group) = (
                service.route.clone(),
                service.namespace.as_str(),
                service.group(),
            );
            let expect = Expect {
                kind: Kind::AccessLogPolicy,
                name: route.clone(),
                namespace: Some(namespace.to_string()),
                service_name: None,
            };
            let object = move || {
                Object::AccessLogPolicy(monitoring::AccessLogCtx {
                    name: route.clone(),
                    namespace,
                    group,
                    route,
                    destination,
                })
            };
            self.emit(
                Side::Lattice,
                "lattice/access-log-policy.yaml.j2",
                object,
                expect,
            );
        }
    }

    /// The Lattice side: a ReferenceGrant in each namespace a group route points into.
    pub(super) fn emit_reference_grants(&mut self, t: &'a Inputs<'a>) {
        let config = t.config;
        let namespaces: std::collections::BTreeSet<&str> = t
            .plan
            .groups
            .iter()
            .flat_map(|g| g.members().map(|id| t.apps[id].namespace.as_str()))
            // Preview groups point into the previewed apps' namespaces too.
            .chain(t.plan.previews.list.iter().map(|p| p.namespace.as_str()))
            // So does a route adopted in the groups' namespace: one grant lets both in.
            .chain(
                (t.apps.iter())
                    .filter(|a| {
                        a.adopted
                            .as_ref()
                            .is_some_and(|r| r.namespace == config.lattice.namespace)
                    })
                    .map(|a| a.namespace.as_str()),
            )
            .filter(|ns| *ns != config.lattice.namespace)
            .collect();
        self.emit_adopted_grants(t);
        for ns in namespaces {
            // One grant per namespace, all with one name: the file name carries the namespace.
            let file = file_name(Kind::ReferenceGrant, ns);
            self.emit_grant(ns, &config.lattice.namespace, file);
        }
    }

    /// `latgen-from-<from>`: a ReferenceGrant in namespace `ns` that lets the HTTPRoutes of
    /// namespace `from` reach its Services, written to `file`.
    fn emit_grant(&mut self, ns: &'a str, from: &'a str, file: String) {
        let name = format!("latgen-from-{from}");
        let object = {
            let name = name.clone();
            move || {
                Object::ReferenceGrant(ReferenceGrant {
                    name,
                    namespace: ns,
                    from_namespace: from,
                })
            }
        };
        let expect = Expect {
            kind: Kind::ReferenceGrant,
            name,
            namespace: Some(ns.to_string()),
            service_name: None,
        };
        self.emit_as(
            Side::Lattice,
            file,
            "lattice/reference-grant.yaml.j2",
            object,
            expect,
        );
    }

    /// A ReferenceGrant into an app's namespace for its adopted route in another namespace
    /// (a live setup that kept its routes apart from its apps), one per pair of namespaces.
    fn emit_adopted_grants(&mut self, t: &'a Inputs<'a>) {
        let pairs: std::collections::BTreeSet<(&str, &str)> = (t.apps.iter())
            .filter_map(|app| {
                let a = app.adopted.as_ref()?;
                // One in the groups' namespace is let in by the groups' grant.
                let apart =
                    a.namespace != app.namespace && a.namespace != t.config.lattice.namespace;
                apart.then_some((app.namespace.as_str(), a.namespace.as_str()))
            })
            .collect();
        for (ns, from) in pairs {
            // Beside the groups' grant into the same namespace, under a name of its own.
            let file = file_name(Kind::ReferenceGrant, &format!("{ns}-from-{from}"));
            self.emit_grant(ns, from, file);
        }
    }

    /// The Lattice side: a TargetGroupPolicy per Service of an app with a health check;
    /// when several apps share one, the first by name sets it.
    pub(super) fn emit_target_group_policies(&mut self, t: &'a Inputs<'a>) {
        let mut seen = std::collections::BTreeSet::new();
        // A canary's Service is probed as the app's own is: the same health check.
        let targets = (t.apps.iter().filter(|a| a.health_check.is_some())).flat_map(|app| {
            let canary = app
                .canary
                .as_ref()
                .map(|c| (app, c.service.as_str(), c.port));
            std::iter::once((app, app.service.as_str(), app.port)).chain(canary)
        });
        for (app, service, port) in targets {
            if !seen.insert((app.namespace.as_str(), service)) {
                continue;
            }
            let hc = app.health_check.as_ref().expect("filtered");
            let object = move || {
                Object::TargetGroupPolicy(TargetGroupPolicy {
                    name: service,
                    namespace: &app.namespace,
                    app: &app.name,
                    service,
                    port,
                    interval: hc.interval_seconds,
                    path: hc.path.as_deref(),
                })
            };
            let expect = Expect {
                kind: Kind::TargetGroupPolicy,
                name: service.to_string(),
                namespace: Some(app.namespace.clone()),
                service_name: None,
            };
            let file = file_name(
                Kind::TargetGroupPolicy,
                &format!("{}-{}", app.namespace, service),
            );
            self.emit_as(
                Side::Lattice,
                file,
                "lattice/target-group-policy.yaml.j2",
                object,
                expect,
            );
        }
    }
}
