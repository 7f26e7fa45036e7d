//! What a plan holds: the shared groups and their rules, the host-routed apps, the lock to
//! write, where each app's Kong side points, the records of its Lattice services and its
//! previews; and what the planner may ask of the output as last rendered.

use std::collections::BTreeMap;

use crate::input::app::{App, AppId};
use crate::input::lock::LockState;
use crate::plan::{NoRoom, Rule, lattice_service, preview_groups};

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Group {
    pub number: u32,
    /// Apps in name order, by [`AppId::index`]; [`Group::members`] gives their ids.
    pub apps: Vec<usize>,
    /// Rules in Lattice evaluation order.
    pub rules: Vec<Rule>,
}

impl Group {
    /// The apps in the group, in name order.
    pub fn members(&self) -> impl Iterator<Item = AppId> + '_ {
        self.apps.iter().map(|&i| AppId::new(i))
    }
}

/// A host-routed app, with a Lattice route and service of its own.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Dedicated {
    pub app: AppId,
}

/// A project's plan: where every app is, and what was decided for each Lattice service.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    pub groups: Vec<Group>,
    pub dedicated: Vec<Dedicated>,
    /// What the lock file records: path-routed app → group, and the moves in flight.
    pub lock: LockState,
    /// Path-routed app → the group its Kong side points at.
    pub kong_group: BTreeMap<AppId, u32>,
    /// Locked apps that no longer fit the group the lock gives them, placed anew.
    pub outgrown: Vec<Outgrown>,
    /// The previews and their preview groups.
    pub previews: preview_groups::Previews,
    /// What was decided for each Lattice service: the groups' (in number order), then the
    /// host-routed apps' (see [`lattice_service`]).
    pub services: Vec<lattice_service::LatticeService>,
    /// Each app's own rules, one per path in evaluation order, by [`AppId::index`]: what
    /// its Kong routes match ([`Plan::rules_of`]).
    pub app_rules: Vec<Vec<Rule>>,
}

/// A locked app that no longer fits its group (it grew, or the group's limits shrank),
/// placed anew: a move the plan decides, shipped like any other (`render --base`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Outgrown {
    pub app: AppId,
    /// The group the lock gave it.
    pub from: u32,
    /// The group it goes to.
    pub to: u32,
    /// Why it no longer fits `from`.
    pub why: NoRoom,
}

/// How many rules of a group served an app in the output as last rendered. When a group no
/// longer holds its locked apps, this tells which of them grew: that app leaves, not the
/// one that comes last by name.
pub(crate) trait Previous {
    /// The rules of group `number` that served `app`; None when unknown.
    fn rules(&self, number: u32, app: &App) -> Option<u32>;
}

/// No output to ask: the locked apps of a group that do not fit are the last by name.
pub(crate) struct NoPrevious;

impl Previous for NoPrevious {
    fn rules(&self, _: u32, _: &App) -> Option<u32> {
        None
    }
}

impl Plan {
    /// Lattice services this plan provisions (each is billed per hour).
    pub fn service_count(&self) -> usize {
        self.groups.len() + self.dedicated.len()
    }

    /// The group that serves a path-routed app: where its bridge and rewrite host point.
    pub fn serving_group(&self, app: AppId) -> Option<u32> {
        self.kong_group.get(&app).copied()
    }
}
