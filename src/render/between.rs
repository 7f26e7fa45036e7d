//! Objects between a base and a target, for `render --base`: a shared group route holding
//! the rules of both versions (the old rules stay until Kong has moved off them), and a
//! side's kustomization for whatever files a step holds. Both go through the same
//! templates, and the same read-back when there is one, as every other object.

use super::Templates;
use super::assembly::kustomization;
use super::jobs::{Expect, Job, Kind, render_job};
use super::monitoring;
use super::objects::{
    AuthPolicyCtx, BackendCtx, GatewayCtx, GroupRoute, HeaderCtx, Object, RuleCtx,
};
use crate::input::app::{App, MatchKind};
use crate::input::config::Config;
use crate::input::quotas::Quotas;
use crate::manifest::layout::Side;
use crate::manifest::tree::{Keep, Text, Versions};
use crate::plan::lattice_service::Policy;
use latgen_sim::crd::iamauthpolicy::IamAuthPolicy;
use latgen_sim::routing::LatticeRoute;
use std::path::Path;

/// Renders the objects between two versions with a project's templates and settings.
pub(crate) struct Between<'a> {
    pub templates: &'a Templates,
    pub config: &'a Config,
    /// The declared apps, to name the rules of a route (removed apps' rules are named by
    /// their Service).
    pub apps: &'a [App],
}

/// One rule of a union route, owned.
struct Rule {
    kind: MatchKind,
    path: String,
    /// The header value the rule matches as well (header dispatch).
    header: Option<(String, String)>,
    app: String,
    service: String,
    namespace: String,
    port: u16,
    /// The canary Service and port, a second backend of the rule.
    canary: Option<(String, u16)>,
}

impl Between<'_> {
    /// The rules of `route` as owned rules, or None when one has no usable backend.
    fn rules(&self, route: &LatticeRoute) -> Option<Vec<Rule>> {
        let mut out = Vec::new();
        for r in &route.rules {
            let b = r.backend.as_ref()?;
            let port = u16::try_from(b.port?).ok()?;
            let app = self
                .apps
                .iter()
                .find(|a| a.namespace == b.namespace && a.service == b.name && a.port == port)
                .map_or_else(|| b.name.clone(), |a| a.name.clone());
            let canary = match r.weighted.get(1) {
                Some((c, _)) => Some((c.name.clone(), u16::try_from(c.port?).ok()?)),
                None => None,
            };
            for m in &r.matches {
                let header = m
                    .headers
                    .first()
                    .and_then(|(n, v)| Some((n.clone(), v.clone()?)));
                out.push(Rule {
                    kind: m.kind,
                    path: m.path.clone(),
                    header,
                    app: app.clone(),
                    service: b.name.clone(),
                    namespace: b.namespace.clone(),
                    port,
                    canary: canary.clone(),
                });
            }
        }
        Some(out)
    }
}

/// An auth policy's object and its policy read back; None when the policy is not one
/// latgen writes.
fn policy_of(text: &str) -> Option<(IamAuthPolicy, Policy)> {
    let object: IamAuthPolicy = serde_saphyr::from_str(text).ok()?;
    let value: serde_json::Value = serde_json::from_str(&object.spec.policy).ok()?;
    let policy = Policy::read(value["Statement"].as_array()?)?;
    Some((object, policy))
}

impl Between<'_> {
    /// The auth policy between two versions: the statements of both (the old ones stay
    /// while their rules do), or those both have; None when it would be over the size
    /// Lattice takes, or a version is not latgen's. Written in the canonical form, so that
    /// a policy whose statements do not change is the same bytes as in either version.
    fn auth_policy(&self, base: &str, target: &str, keep: Keep) -> Option<String> {
        let ((_, old), (new, target_policy)) = (policy_of(base)?, policy_of(target)?);
        let policy = match keep {
            Keep::Both => target_policy.both(&old),
            Keep::Common => target_policy.common(&old),
        };
        if policy.is_empty() {
            return None;
        }
        let policy = policy.text();
        if !Quotas::policy_fits(policy.len()) {
            return None;
        }
        let (name, namespace) = (new.metadata.name?, new.metadata.namespace?);
        let group =
            (new.metadata.labels.as_ref()).and_then(|l| l.get("latgen.dev/group")?.parse().ok());
        let expect = Expect {
            kind: Kind::IamAuthPolicy,
            name: name.clone(),
            namespace: Some(namespace.clone()),
            service_name: None,
        };
        let object = AuthPolicyCtx {
            name,
            namespace: &namespace,
            group,
            route: new.spec.target_ref.name,
            policy,
        };
        let job = Job {
            side: Side::Lattice,
            file: String::new(),
            template: "lattice/iam-auth-policy.yaml.j2",
            object: Box::new(|| Object::AuthPolicy(object)),
            expect,
        };
        render_job(self.templates, job, (false, None))
            .ok()
            .map(|r| r.body.to_string())
    }
}

impl Versions for Between<'_> {
    fn between(&self, rel: &Path, base: &str, target: &str, keep: Keep) -> Option<String> {
        let is_policy =
            (rel.file_name()).is_some_and(|n| n.to_string_lossy().starts_with("iamauthpolicy-"));
        if is_policy {
            self.auth_policy(base, target, keep)
        } else {
            self.group_route(rel, base, target, keep)
        }
    }

    fn kustomization(&self, _side: Side, files: &[&Path]) -> Option<Text> {
        let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
        let mut list: Vec<&str> = names.iter().map(String::as_str).collect();
        list.sort_unstable();
        kustomization(self.templates, &list).ok()
    }

    fn monitoring(&self, route: &str, apps: &[&str]) -> Option<String> {
        let p = self.config.observability.prometheus.as_ref()?;
        let apps = (apps.iter())
            .map(|name| self.apps.iter().find(|a| a.name == *name))
            .collect::<Option<Vec<&App>>>()?;
        let object = monitoring::service_rule(route, &apps, self.config, p);
        let expect = Expect {
            kind: Kind::PrometheusRule,
            name: object.name.clone(),
            namespace: Some(object.namespace.clone()),
            service_name: None,
        };
        let job = Job {
            side: Side::Kong,
            file: String::new(),
            template: "kong/prometheus-rule.yaml.j2",
            object: Box::new(|| Object::PrometheusRule(object)),
            expect,
        };
        render_job(self.templates, job, (false, None))
            .ok()
            .map(|r| r.body.to_string())
    }
}

impl Between<'_> {
    /// A shared group's route between two versions: the rules of both, or those both have.
    fn group_route(&self, rel: &Path, base: &str, target: &str, keep: Keep) -> Option<String> {
        let (old, new) = (
            LatticeRoute::parse(rel, base)?,
            LatticeRoute::parse(rel, target)?,
        );
        let number = self.config.parse_group_name(&new.name)?;
        if old.name != new.name || new.namespace != self.config.lattice.namespace {
            return None;
        }
        let (mut rules, old_rules) = (self.rules(&new)?, self.rules(&old)?);
        let same = |x: &Rule, r: &Rule| {
            (
                x.kind,
                &x.path,
                &x.header,
                &x.service,
                &x.namespace,
                x.port,
                &x.canary,
            ) == (
                r.kind,
                &r.path,
                &r.header,
                &r.service,
                &r.namespace,
                r.port,
                &r.canary,
            )
        };
        match keep {
            Keep::Both => {
                for r in old_rules {
                    if !rules.iter().any(|x| same(x, &r)) {
                        rules.push(r);
                    }
                }
            }
            Keep::Common => rules.retain(|x| old_rules.iter().any(|r| same(x, r))),
        }
        // The planner's order: longer paths first, Exact before PathPrefix, then by name;
        // header rules (all on `/`) come after the path rules, in app name order.
        rules.sort_by(|a, b| {
            (b.path.len(), a.kind, &a.path, a.header.is_some(), &a.app).cmp(&(
                a.path.len(),
                b.kind,
                &b.path,
                b.header.is_some(),
                &b.app,
            ))
        });
        let dispatch_header = rules
            .iter()
            .find_map(|r| r.header.as_ref().map(|h| h.0.as_str()));
        let ctx_rules = rule_ctxs(&rules);
        // The route keeps the service name it is created with, whatever step it is at.
        let service_name = super::annotation_in(target);
        let gateway = GatewayCtx::from(&self.config.lattice.gateway);
        let object = GroupRoute {
            name: new.name.clone(),
            namespace: &new.namespace,
            number,
            service_name: service_name.clone(),
            hostname: self.config.group_domain(number),
            gateway: &gateway,
            rules: ctx_rules,
            dispatch_header,
            preview: false,
        };
        let job = Job {
            side: Side::Lattice,
            file: String::new(),
            template: "lattice/group-route.yaml.j2",
            object: Box::new(|| Object::GroupRoute(object)),
            expect: Expect {
                kind: Kind::HttpRoute,
                name: new.name.clone(),
                namespace: Some(new.namespace.clone()),
                service_name,
            },
        };
        render_job(self.templates, job, (false, None))
            .ok()
            .map(|r| r.body.to_string())
    }
}

/// The template context of owned rules.
fn rule_ctxs(rules: &[Rule]) -> Vec<RuleCtx<'_>> {
    rules
        .iter()
        .map(|r| RuleCtx {
            kind: r.kind.gateway_api_type(),
            path: &r.path,
            app: &r.app,
            header: r
                .header
                .as_ref()
                .map(|(name, value)| HeaderCtx { name, value }),
            backend: BackendCtx {
                name: &r.service,
                namespace: &r.namespace,
                port: r.port,
            },
            canary: r.canary.as_ref().map(|(name, port)| BackendCtx {
                name,
                namespace: &r.namespace,
                port: *port,
            }),
        })
        .collect()
}
