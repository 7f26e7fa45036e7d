//! Apps that declare more peak rps than a whole Lattice service takes
//! (`throughput.rpsPerService`): no group carries one, not even a group of its own, so no
//! move helps. The planner keeps such an app where the lock has it (a new one gets a group
//! of its own: nothing else that declares a peak fits beside it), and `app-over-budget`
//! says so, with what does help.

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::app::{App, AppId};
use crate::input::config::Config;
use crate::input::environments::env_flag;
use crate::plan::Plan;
use crate::plan::rebalance::compaction::and_list;
use crate::plan::rebalance::monthly_cost::grouped;

/// What helps an app over the budget: the finding's help, also where `plan --observed` finds
/// one.
pub(crate) const WHAT_HELPS: &str = "no move helps: split the app's paths among apps that each stay within the budget, or ask AWS to raise the account's Lattice limit for the service (Service Quotas, or a support case) and set `throughput.rpsPerService` to it";

/// `app-over-budget` for each app of `plan` whose own declared peak is over the budget.
pub(super) fn findings(plan: &Plan, apps: &[App], config: &Config) -> Diagnostics {
    let budget = config.throughput.rps_per_service;
    let mut diags = Diagnostics::new();
    for (id, app) in AppId::enumerate(apps) {
        let Some(rps) = app.peak_rps.filter(|&r| r > budget) else {
            continue;
        };
        let (place, help) = match plan.serving_group(id) {
            Some(number) => in_group(plan, apps, config, (id, number)),
            None => (
                format!(
                    "its own Lattice service (route `{}`) cannot carry it",
                    app.own_route().0
                ),
                String::new(),
            ),
        };
        diags.push(
            Diagnostic::warning(
                Code::AppOverBudget,
                format!(
                    "app `{}` declares peakRps {}, more than a Lattice service's whole budget of {} rps (`throughput.rpsPerService`): {place}",
                    app.name,
                    grouped(rps),
                    grouped(budget),
                ),
            )
            .at(Span::new(
                &app.file,
                app.peak_rps_pos.line,
                app.peak_rps_pos.column,
            ))
            .help(format!("{WHAT_HELPS}{help}")),
        );
    }
    diags
}

/// Where app `id`, in group `number`, stays, and how to take it off its neighbours'
/// service meanwhile when it has any.
fn in_group(
    plan: &Plan,
    apps: &[App],
    config: &Config,
    (id, number): (AppId, u32),
) -> (String, String) {
    let group = config.group_name(number);
    if let Some(m) = plan.lock.moves.get(&apps[id].name) {
        return (
            format!(
                "no group carries it; it is moving from {group} to {}",
                config.group_name(m.to)
            ),
            String::new(),
        );
    }
    let others: Vec<String> = (plan.groups.iter())
        .filter(|g| g.number == number)
        .flat_map(|g| g.members())
        .filter(|&other| other != id)
        .map(|other| format!("`{}`", apps[other].name))
        .collect();
    if others.is_empty() {
        return (
            format!("no group carries it, and it is alone in {group}"),
            String::new(),
        );
    }
    let used: Vec<u32> = plan.groups.iter().map(|g| g.number).collect();
    let new = (1..).find(|n| !used.contains(n)).unwrap_or(number);
    let env = env_flag(config.env_name());
    (
        format!(
            "no group carries it, and a move would only take the overload elsewhere, so it stays in {group}, where it overloads the Lattice service of {} too",
            and_list(&others)
        ),
        format!(
            "; meanwhile `latgen move {} --group {new}{env}` gives it a group of its own, off the others' service",
            apps[id].name
        ),
    )
}
