//! Layer 3, plan (stage 3): which shared group each path-routed app is in, the order of
//! every route's rules, and what was decided for each Lattice service, which render writes
//! and the check reads.
//!
//! - `passes`: the planning passes, the lock's placements first, and what "room" in a group
//!   means; `planner`: what a group holds and whether an app fits it; `no_room`: why not;
//! - `rules`: rules and their order; `decisions`: the [`Plan`] they make;
//! - [`lattice_service`]: the record of each Lattice service; [`services`]: their names;
//!   [`auth`]: their auth policies' statements; [`previews`]: the preview groups;
//! - [`placement`]: where a batch of new apps goes; [`rebalance`]: `move`, compaction, cost;
//!   [`observed`]: placement by observed traffic; `over_budget`: apps no service carries;
//!   [`prepared`]: a project through this stage.

mod decisions;
pub(crate) mod lattice_service;
mod no_room;
pub(crate) mod observed;
pub(crate) mod over_budget;
mod passes;
pub(crate) mod placement;
mod planner;
pub(crate) mod policies;
pub(crate) mod prepared;
pub(crate) mod preview_groups;
pub(crate) mod rebalance;
mod rules;
pub mod services;

pub use decisions::Plan;
pub(crate) use decisions::{Dedicated, Group, NoPrevious, Outgrown, Previous};
pub(crate) use no_room::NoRoom;
pub use passes::plan;
pub(crate) use passes::{no_such_group, plan_with, switching};
pub(crate) use planner::Occupancy;
use planner::Planner;
pub(crate) use rules::{Rule, app_rules, in_groups, in_groups_once_placed, rules_needed};
