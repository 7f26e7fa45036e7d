//! Preview groups: every preview is one rule, dispatched by header (Kong sets the dispatch
//! header to `<name>.<app>`), in a Lattice service of previews only, so that adding or
//! removing a preview never changes a production group. A preview keeps the group the lock
//! gives it; a new one goes, in key order, to the lowest-numbered preview group with room.
//! Room: the rule capacity of a group, the target-group quota (each preview's Service is a
//! target group of its own) and, with `auth.mode: iam`, the auth policy's size.

use std::collections::BTreeMap;

use crate::input::app::App;
use crate::input::config::Config;
use crate::input::lock::{Lock, NamedBy, ServiceName};
use crate::input::previews::Preview;
use crate::input::quotas::Quotas;
use crate::plan::lattice_service::Policy;
use crate::plan::policies;
use crate::plan::services;
use latgen_sim::platform;

/// A Lattice service of previews: `preview-NN`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PreviewGroup {
    pub number: u32,
    /// The previews in it, by their place in [`Previews::list`], in header-value order: its
    /// rules, in the order they are rendered.
    pub members: Vec<usize>,
    /// Its service's name: `<prefix>-pvNN` under a usable `lattice.serviceNamePrefix`,
    /// else the controller's from `preview-NN` and the groups' namespace.
    pub name: ServiceName,
    /// Its auth policy: the members' statements; None while auth is off.
    pub policy: Option<Policy>,
}

impl PreviewGroup {
    /// The group's route name.
    pub fn route(&self) -> String {
        group_name(self.number)
    }

    /// The value of the route's override annotation, when latgen names the service.
    pub fn annotation(&self) -> Option<&str> {
        crate::plan::lattice_service::annotation(&self.name)
    }
}

/// The project's previews and where each is.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Previews {
    /// Every preview, in key order (`<app>/<name>`).
    pub list: Vec<Preview>,
    pub groups: Vec<PreviewGroup>,
    /// Each preview's header value ([`Preview::header_value`]), made once.
    pub values: Vec<String>,
    /// Each preview's Kong route and bridge name ([`Preview::route_name`]), made once.
    pub route_names: Vec<String>,
}

/// The name of preview group `number`.
pub(crate) fn group_name(number: u32) -> String {
    format!("preview-{number:02}")
}

/// The custom domain of preview group `number`.
pub(crate) fn group_domain(config: &Config, number: u32) -> String {
    format!("{}.{}", group_name(number), config.lattice.domain)
}

/// Places every preview: locked ones where the lock says while their group has room, the
/// rest in the lowest-numbered group with room.
pub(crate) fn place(list: Vec<Preview>, apps: &[App], lock: &Lock, config: &Config) -> Previews {
    let cap = config.quotas.previews_per_group();
    // Each preview's statements, and their share of its group's auth policy in bytes (none
    // with auth off).
    let header = config.lattice.dispatch_header.as_str();
    let statements: Vec<Vec<String>> = (list.iter())
        .map(|p| match config.auth.is_on() {
            true => policies::statements(&apps[p.app], config, Some((header, &p.header_value()))),
            false => Vec::new(),
        })
        .collect();
    let bytes: Vec<usize> = statements
        .iter()
        .map(|s| policies::statements_bytes(s))
        .collect();
    let mut groups: BTreeMap<u32, (Vec<usize>, usize)> = BTreeMap::new();
    let room = |groups: &BTreeMap<u32, (Vec<usize>, usize)>, n: u32, i: usize| {
        groups.get(&n).is_none_or(|(m, b)| {
            m.len() < cap && Quotas::policy_fits(policies::policy_bytes(b + bytes[i]))
        })
    };
    let mut unplaced = Vec::new();
    for (i, p) in list.iter().enumerate() {
        match lock.previews.get(&p.key()) {
            Some(&(n, _)) if n > 0 && room(&groups, n, i) => {
                let g = groups.entry(n).or_default();
                g.0.push(i);
                g.1 += bytes[i];
            }
            _ => unplaced.push(i),
        }
    }
    for i in unplaced {
        // A group not yet opened has room: a preview alone takes its app's statements,
        // which fit a policy (`auth-policy-too-large` refuses an app whose do not).
        let n = (1..)
            .find(|&n| room(&groups, n, i))
            .expect("a group with room");
        let g = groups.entry(n).or_default();
        g.0.push(i);
        g.1 += bytes[i];
    }
    let groups = groups
        .into_iter()
        .map(|(number, (mut members, _))| {
            members.sort_by_key(|&i| list[i].header_value());
            let policy = config.auth.is_on().then(|| {
                Policy::new(
                    (members.iter())
                        .flat_map(|&i| statements[i].iter().cloned())
                        .collect(),
                )
            });
            PreviewGroup {
                name: service_name(config, number),
                number,
                members,
                policy,
            }
        })
        .collect();
    let values = list.iter().map(Preview::header_value).collect();
    let route_names = list.iter().map(Preview::route_name).collect();
    Previews {
        list,
        groups,
        values,
        route_names,
    }
}

/// The name of preview group `number`'s service (see [`PreviewGroup::name`]).
fn service_name(config: &Config, number: u32) -> ServiceName {
    match services::preview_override(config, number) {
        Some(name) => ServiceName {
            name,
            set: NamedBy::Latgen,
        },
        None => ServiceName {
            name: platform::lattice_service_name(&group_name(number), &config.lattice.namespace),
            set: NamedBy::Controller,
        },
    }
}

impl Previews {
    /// The group number of each preview, by key: what the lock records.
    pub fn lock_entries(&self) -> BTreeMap<String, u32> {
        (self.groups.iter())
            .flat_map(|g| g.members.iter().map(|&i| (self.list[i].key(), g.number)))
            .collect()
    }

    /// The group a preview is in.
    pub fn group_of(&self, index: usize) -> Option<u32> {
        (self.groups.iter())
            .find(|g| g.members.contains(&index))
            .map(|g| g.number)
    }
}
