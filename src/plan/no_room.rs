//! Why an app does not fit a group: the reasons the planner finds, as a finding's sentence
//! and code.

use crate::diag::codes::Code;
use crate::input::app::{App, AppId};
use crate::input::config::Config;

/// Where a placement that failed came from.
#[derive(Debug, Clone, Copy)]
pub(super) enum Origin {
    Lock,
    Pin,
}

/// Why an app does not fit a group, with the app in the way where there is one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NoRoom {
    /// The group's rules and the app's would be more than a group holds.
    Rules { have: u32, need: u32, cap: u32 },
    /// The app's Service would be one target group too many.
    Backends { have: usize, cap: u32 },
    /// The app is isolated and so is `other`, already in the group.
    Isolated { other: AppId },
    /// The app's declared rps would take the group over its budget.
    Rps { have: u64, budget: u64 },
    /// The app's auth policy statements would take the group's policy over its size limit.
    AuthPolicy {
        have: usize,
        need: usize,
        cap: usize,
    },
    /// The app's prefix `path` nests with `other_path`, of `other`, already in the group.
    Nested {
        path: String,
        other_path: String,
        other: AppId,
    },
    /// One request can match both the app's `path` and `other_path`, of `other`, already
    /// in the group (string-sharing prefixes, or an Exact path under a prefix): the group
    /// would route right only in one order of its rules, which the controller does not keep.
    Overlap {
        path: String,
        other_path: String,
        other: AppId,
    },
}

impl NoRoom {
    /// Why app `id` does not fit the group named `group`, as a sentence.
    pub fn message(&self, apps: &[App], id: AppId, group: &str) -> String {
        let app = &apps[id];
        match self {
            NoRoom::Rules { have, need, cap } => format!(
                "{group} has {have}/{cap} rules; app `{}` needs {need}",
                app.name
            ),
            NoRoom::Backends { have, cap } => format!(
                "{group} already routes to {have}/{cap} target groups; app `{}` adds one",
                app.name
            ),
            NoRoom::Isolated { other } => format!(
                "apps `{}` and `{}` are both `isolate: true` and cannot share {group}",
                app.name, apps[*other].name
            ),
            NoRoom::Rps { have, budget } => format!(
                "{group} already carries {have} rps of its {budget} rps budget; app `{}` adds {}",
                app.name,
                app.peak_rps.unwrap_or(0)
            ),
            NoRoom::AuthPolicy { have, need, cap } => format!(
                "{group}'s auth policy takes {have} of its {cap} bytes; the statements that let app `{}`'s callers in add {need}",
                app.name
            ),
            NoRoom::Nested {
                path,
                other_path,
                other,
            } => {
                let (me, them) = (&app.name, &apps[*other].name);
                let ((inner, inner_app), (outer, outer_app)) = if path.len() > other_path.len() {
                    ((path, me), (other_path, them))
                } else {
                    ((other_path, them), (path, me))
                };
                format!(
                    "apps `{me}` ({path}) and `{them}` ({other_path}) cannot share {group}: their prefixes nest, and Lattice would send `{inner}x` to `{inner_app}` although it belongs to `{outer_app}` ({outer})"
                )
            }
            NoRoom::Overlap {
                path,
                other_path,
                other,
            } => {
                let (me, them) = (&app.name, &apps[*other].name);
                let longer = if path.len() >= other_path.len() {
                    path
                } else {
                    other_path
                };
                format!(
                    "apps `{me}` ({path}) and `{them}` ({other_path}) cannot share {group}: Lattice compares paths as strings, so `{longer}` matches both rules, and which app gets it would depend on an order of rules the controller does not keep"
                )
            }
        }
    }

    /// The finding's code, which for a full group depends on where the placement came from
    /// and on what limits the group's capacity.
    pub(super) fn code(&self, origin: Origin, config: &Config) -> Code {
        match self {
            NoRoom::Rules { .. } if matches!(origin, Origin::Pin) => Code::PinnedGroupFull,
            NoRoom::Rules { .. } if config.quotas.crd_bounds_groups() => Code::CrdRuleLimit,
            NoRoom::Rules { .. } => Code::GroupOverQuota,
            NoRoom::Backends { .. } => Code::TargetGroupQuota,
            NoRoom::Isolated { .. } => Code::IsolationConflict,
            NoRoom::Rps { .. } => Code::RpsBudget,
            NoRoom::AuthPolicy { .. } => Code::AuthPolicyTooLarge,
            NoRoom::Nested { .. } => Code::NestedPrefix,
            NoRoom::Overlap { .. } => Code::OrderDependentGroup,
        }
    }

    /// The app in the way, if there is one, and what to call it.
    pub(super) fn other_app(&self) -> Option<(AppId, &'static str)> {
        match self {
            NoRoom::Isolated { other } => Some((*other, "the other isolated app")),
            NoRoom::Nested { other, .. } | NoRoom::Overlap { other, .. } => {
                Some((*other, "the other app"))
            }
            _ => None,
        }
    }
}
