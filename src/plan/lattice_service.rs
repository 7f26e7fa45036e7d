//! What the plan decided for each Lattice service, recorded once when its groups are
//! placed: the service's name, its route's rules in the order they are rendered (with the
//! priority the controller gives each), its auth policy's statements and the apps its
//! monitoring counts. Render fills the templates from these records and the check reads
//! them, so that no later stage works a decision out again and none can disagree.

use rayon::prelude::*;

use crate::input::app::{App, AppId};
use crate::input::config::Config;
use crate::input::lock::{NamedBy, ServiceName};
use crate::plan::{Group, Plan, Rule, app_rules, policies};

pub(crate) use latgen_sim::platform::OVERRIDE_ANNOTATION;

/// Whose a Lattice service is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    /// A shared group's, by its number.
    Group(u32),
    /// A host-routed (dedicated) app's.
    App(AppId),
}

/// One Lattice service of the plan: a shared group's route, or a host-routed app's own.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LatticeService {
    /// The HTTPRoute's name: the lock's key for the service.
    pub route: String,
    pub namespace: String,
    pub owner: Owner,
    /// The service's name: the one the lock records, else the one the controller derives
    /// from the route's name and namespace.
    pub name: ServiceName,
    /// The route's rules, in the order they are rendered.
    pub rules: Vec<PlannedRule>,
    /// The auth policy beside the route; None while auth is off.
    pub policy: Option<Policy>,
    /// The apps its PrometheusRule counts, in name order: those the Kong side sends to it
    /// (a moving app counts where its requests go, not where its rules are); none for a
    /// service that serves no app yet, which gets no PrometheusRule.
    pub monitored: Vec<AppId>,
}

/// A rule of a Lattice route, where it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PlannedRule {
    /// Its Lattice priority: the controller gives the rule at index `i` priority `i + 1`,
    /// and Lattice tries rules in priority order.
    pub priority: u32,
    pub rule: Rule,
    /// Whether the rule also matches the dispatch header set to its app's name (a group
    /// under header dispatch).
    pub by_header: bool,
}

/// An auth policy: its statements, each compact JSON, in the order the policy lists them
/// (the canonical one: see [`policies::in_canonical_order`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Policy {
    statements: Vec<String>,
}

impl Policy {
    /// The policy of `statements`, put in the canonical order.
    pub fn new(mut statements: Vec<String>) -> Policy {
        policies::in_canonical_order(&mut statements);
        Policy { statements }
    }

    /// A policy read back from a written one's statements; None when one of them is not
    /// a statement latgen writes.
    pub fn read(statements: &[serde_json::Value]) -> Option<Policy> {
        let statements = (statements.iter())
            .map(policies::canonical_statement)
            .collect::<Option<Vec<String>>>()?;
        Some(Policy::new(statements))
    }

    /// The policy of the statements of both.
    pub fn both(&self, other: &Policy) -> Policy {
        Policy::new(
            self.statements
                .iter()
                .chain(&other.statements)
                .cloned()
                .collect(),
        )
    }

    /// The policy of the statements the two have in common.
    pub fn common(&self, other: &Policy) -> Policy {
        let statements = (self.statements.iter())
            .filter(|s| other.statements.contains(s))
            .cloned()
            .collect();
        Policy { statements }
    }

    /// Whether it has no statement.
    pub fn is_empty(&self) -> bool {
        self.statements.is_empty()
    }

    /// The policy document, a statement a line.
    pub fn text(&self) -> String {
        policies::policy(&self.statements)
    }
}

impl LatticeService {
    /// The group's number, for a group's service.
    pub fn group(&self) -> Option<u32> {
        match self.owner {
            Owner::Group(n) => Some(n),
            Owner::App(_) => None,
        }
    }

    /// The app, for a host-routed app's service.
    pub fn app(&self) -> Option<AppId> {
        match self.owner {
            Owner::App(id) => Some(id),
            Owner::Group(_) => None,
        }
    }

    /// The value of the route's override annotation: the service's name when latgen names
    /// it; None when the controller does.
    pub fn annotation(&self) -> Option<&str> {
        annotation(&self.name)
    }
}

/// The override annotation's value for a service named `name`: the name when latgen
/// chose it; None when the controller did (a route created without the annotation).
pub(crate) fn annotation(name: &ServiceName) -> Option<&str> {
    (name.set == NamedBy::Latgen).then_some(name.name.as_str())
}

impl Plan {
    /// The rules of app `id`, one per path, in evaluation order: what its Kong routes match.
    pub fn rules_of(&self, id: AppId) -> &[Rule] {
        &self.app_rules[id.index()]
    }

    /// Every Lattice service's route with its name: the groups', the host-routed apps',
    /// then the preview groups'.
    pub fn service_names(&self) -> Vec<(String, &ServiceName)> {
        let previews = (self.previews.groups.iter()).map(|g| (g.route(), &g.name));
        (self.services.iter())
            .map(|s| (s.route.clone(), &s.name))
            .chain(previews)
            .collect()
    }
}

/// The rules `rules` where they stand, the first at priority 1.
fn planned(rules: &[Rule], by_header: bool) -> Vec<PlannedRule> {
    (rules.iter().zip(1..))
        .map(|(rule, priority)| PlannedRule {
            priority,
            rule: rule.clone(),
            by_header,
        })
        .collect()
}

/// Records what was decided for every Lattice service of `plan` (the groups', then the
/// host-routed apps'), and every app's own rules. `statements` holds each app's auth
/// statements as a group holds them (the planner's; empty when auth is off).
pub(crate) fn record(plan: &mut Plan, apps: &[App], config: &Config, statements: &[Vec<String>]) {
    plan.app_rules = (0..apps.len())
        .into_par_iter()
        .map(|i| app_rules(apps, AppId::new(i)))
        .collect();
    let auth = config.auth.is_on();
    let header = config
        .header_dispatch()
        .then_some(config.lattice.dispatch_header.as_str());
    let plan_now: &Plan = plan;
    let groups: Vec<LatticeService> = (plan_now.groups.par_iter())
        .map(|g| group_service(plan_now, g, (apps, statements), (config, auth, header)))
        .collect();
    let dedicated: Vec<LatticeService> = (plan_now.dedicated.par_iter())
        .map(|d| {
            let app = &apps[d.app];
            let (route, namespace, _) = app.own_route();
            LatticeService {
                name: effective(plan_now, route, namespace),
                route: route.to_string(),
                namespace: namespace.to_string(),
                owner: Owner::App(d.app),
                rules: planned(plan_now.rules_of(d.app), false),
                policy: auth.then(|| Policy::new(policies::app_statements(app, config, None))),
                monitored: vec![d.app],
            }
        })
        .collect();
    plan.services = groups.into_iter().chain(dedicated).collect();
}

/// The record of group `g`'s service: its rules as the planner ordered them, and its
/// members' statements.
fn group_service(
    plan: &Plan,
    g: &Group,
    (apps, made): (&[App], &[Vec<String>]),
    (config, auth, header): (&Config, bool, Option<&str>),
) -> LatticeService {
    let route = config.group_name(g.number);
    let namespace = &config.lattice.namespace;
    let statements = || {
        (g.members())
            .flat_map(|id| match made.get(id.index()) {
                Some(s) => s.clone(),
                None => policies::app_statements(&apps[id], config, header),
            })
            .collect()
    };
    LatticeService {
        name: effective(plan, &route, namespace),
        namespace: namespace.clone(),
        owner: Owner::Group(g.number),
        rules: planned(&g.rules, header.is_some()),
        policy: auth.then(|| Policy::new(statements())),
        monitored: (g.members())
            .filter(|&id| plan.serving_group(id) == Some(g.number))
            .collect(),
        route,
    }
}

/// Names each recorded service as the plan's lock now says (see [`services::assign`]).
pub(crate) fn rename(plan: &mut Plan) {
    let names: Vec<ServiceName> = (plan.services.iter())
        .map(|s| effective(plan, &s.route, &s.namespace))
        .collect();
    for (s, name) in plan.services.iter_mut().zip(names) {
        s.name = name;
    }
}

/// The name a route's Lattice service has: the one the lock records, else the one the
/// controller derives from the route's name and namespace.
pub(crate) fn effective(plan: &Plan, route: &str, namespace: &str) -> ServiceName {
    plan.lock
        .services
        .as_ref()
        .and_then(|s| s.get(route))
        .cloned()
        .unwrap_or_else(|| ServiceName {
            name: latgen_sim::platform::lattice_service_name(route, namespace),
            set: NamedBy::Controller,
        })
}
