//! `latgen plan` on a project with adopted apps (`latgen import`): the consolidation, what
//! it saves, and with `--apply` the lock that records it.

use super::latgen_plan::PlanOptions;
use super::shell::{Exit, Ui};
use crate::input::ProjectPaths;
use crate::plan::rebalance::consolidation::Consolidation;
use crate::plan::rebalance::cost::{HOURS_PER_MONTH, dollars};
use crate::report::plural;

pub(super) fn run(
    (args, paths): (&PlanOptions<'_>, &ProjectPaths),
    c: &Consolidation,
    ui: Ui,
) -> Exit {
    let price = c.after.config.pricing.service_hour_usd * HOURS_PER_MONTH;
    let cost = |n: usize| dollars(n as f64 * price);
    let groups = c.after.plan.groups.len();
    let bound = crate::plan::rebalance::compaction::compaction(&c.after)
        .map(|b| format!("{} (lower bound: {})", b.lower_bound, b.bound_by))
        .unwrap_or_else(|_| "?".into());
    println!(
        "{} still on the route they had before latgen (latgen.lock `adopted:`)",
        plural(c.apps.len(), "path-routed app")
    );
    println!(
        "consolidated: {} shared groups (the fewest they fit in: {bound})",
        groups
    );
    println!(
        "Lattice services {} -> {}, {}/month -> {}/month (saving {}/month)",
        c.services_before,
        c.services_after,
        cost(c.services_before),
        cost(c.services_after),
        cost(c.services_before.saturating_sub(c.services_after)),
    );
    if !args.apply {
        println!(
            "`latgen plan --apply` records it in latgen.lock; `latgen render --base REV` then ships it in three PRs for all the apps: the groups (Lattice side), Kong's switch to them, the old routes' removal"
        );
        return Exit::Success;
    }
    super::latgen_plan::record(
        paths,
        c.lock().clone(),
        c.after.rollout,
        "the groups, beside the routes the apps have",
        ui,
    )
}
