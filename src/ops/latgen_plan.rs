//! `latgen plan`: the shared stages up to the plan, then the moves that separate apps whose
//! rules depend on their order (when a group holds such a pair), else the fewest moves that
//! bring the number of shared groups down; printed, or with `--apply` recorded in the lock
//! for `render --base` to ship. A project with adopted apps is consolidated first
//! (`consolidate`); `--observed` judges the plan by observed load instead
//! ([`super::plan_observed`]).

use std::path::Path;

use super::shell::{Exit, Ui};
use crate::diag::{Diagnostic, Sources};
use crate::input::ProjectPaths;
use crate::plan::rebalance::consolidation::Consolidation;
use crate::plan::rebalance::monthly_cost::{HOURS_PER_MONTH, dollars};
use crate::report::plural;

/// What `latgen plan` is asked to do.
pub(crate) struct PlanOptions<'a> {
    /// Record the moves in the lock.
    pub apply: bool,
    /// Judge the plan by the apps' observed peak rates in this file instead.
    pub observed: Option<&'a Path>,
}

/// Plans each environment `envs` holds.
pub(crate) fn run(
    args: &PlanOptions<'_>,
    envs: Result<Vec<ProjectPaths>, Diagnostic>,
    ui: Ui,
) -> Exit {
    super::project::per_env(envs, (ui, super::project::Heading::Stderr), |paths| {
        plan_env(args, &paths, ui)
    })
}

/// One environment's plan (the project's, without environments).
fn plan_env(args: &PlanOptions<'_>, paths: &ProjectPaths, ui: Ui) -> Exit {
    if args.apply
        && let Err(d) = paths.make_env_folders()
    {
        return ui.fail(d, &Sources::default());
    }
    // One run at a time, as `move`: the plan reads the lock and, with --apply, writes it,
    // after a killed render is finished or undone.
    let _run = match crate::output::begin_in(
        &paths.root,
        &paths.output,
        args.apply,
        paths.env.is_some(),
    ) {
        Ok(l) => l,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    let Some(prepared) = super::project::prepare(paths, ui) else {
        return Exit::Error;
    };
    if let Some(file) = args.observed {
        return super::plan_observed::run(file, &prepared, ui);
    }
    // Adopted apps are consolidated first: the groups they make are what later moves
    // would compact.
    if let Some(c) = crate::plan::rebalance::consolidation::consolidation(&prepared) {
        return consolidate((args, paths), &c, ui);
    }
    let c = match crate::plan::rebalance::compaction::compaction(&prepared) {
        Ok(c) => c,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    let price = prepared.config.pricing.service_hour_usd
        * crate::plan::rebalance::monthly_cost::HOURS_PER_MONTH;
    // Under header dispatch every app is in a group, host-routed ones too.
    let grouped = if prepared.config.header_dispatch() {
        "the apps"
    } else {
        "the path-routed apps"
    };
    println!(
        "{} now; {grouped} fit in no fewer than {} (lower bound: {})",
        plural(c.groups_now, "shared group"),
        c.lower_bound,
        c.bound_by
    );
    if c.dedicated > 0 {
        let has = if c.dedicated == 1 { "has" } else { "each have" };
        println!(
            "{} {has} a Lattice service of its own, which no move changes",
            plural(c.dedicated, "host-routed app")
        );
    }
    let (pairs, separating) = crate::plan::rebalance::separation::separation(&prepared);
    if !pairs.is_empty() {
        return separate((args, paths), &prepared, &pairs, &separating, ui);
    }
    if c.moves.is_empty() {
        println!("no move brings the count down");
        return Exit::Success;
    }
    let verb = if args.apply { "recorded" } else { "printed" };
    let bring = if c.moves.len() == 1 {
        "brings"
    } else {
        "bring"
    };
    println!(
        "{} {bring} it to {}, saving {}/month ({verb}; nothing changes until they are shipped):",
        plural(c.moves.len(), "move"),
        c.groups_after,
        crate::plan::rebalance::monthly_cost::dollars(
            (c.groups_now - c.groups_after) as f64 * price
        )
    );
    finish((args, paths), &prepared, &c.moves, ui)
}

/// Groups hold order-dependent pairs: the moves that separate them come first.
fn separate(
    (args, paths): (&PlanOptions<'_>, &ProjectPaths),
    prepared: &crate::plan::prepared::Prepared,
    pairs: &[crate::plan::rebalance::separation::OrderDependentPair],
    moves: &[(String, u32, u32)],
    ui: Ui,
) -> Exit {
    let (count, route) = match pairs.len() {
        1 => ("1 pair of apps".to_string(), "routes"),
        n => (format!("{n} pairs of apps"), "route"),
    };
    println!(
        "{count} {route} right only in the order latgen wrote their rules, which the controller does not keep:"
    );
    for p in pairs {
        let [(a, pa), (b, pb)] = &p.apps;
        println!(
            "  {}: {a} ({pa}) and {b} ({pb})",
            prepared.config.group_name(p.group)
        );
    }
    let verb = if args.apply { "recorded" } else { "printed" };
    let separate = if moves.len() == 1 {
        "separates"
    } else {
        "separate"
    };
    println!(
        "{} {separate} them ({verb}; run `latgen plan{}` again once they are shipped for moves that bring the count down):",
        plural(moves.len(), "move"),
        paths.env_flag()
    );
    finish((args, paths), prepared, moves, ui)
}

/// Prints `moves`; with `--apply`, records them in the lock and says how to ship them.
fn finish(
    (args, paths): (&PlanOptions<'_>, &ProjectPaths),
    prepared: &crate::plan::prepared::Prepared,
    moves: &[(String, u32, u32)],
    ui: Ui,
) -> Exit {
    let name = |n: u32| prepared.config.group_name(n);
    let env = paths.env_flag();
    for (app, from, to) in moves {
        if args.apply {
            println!("  {app}: {} -> {}", name(*from), name(*to));
        } else {
            println!("  latgen move {app} --group {to}{env}");
        }
    }
    if !args.apply {
        println!(
            "`latgen plan{env} --apply` records them all in {}; `latgen render{env} --base REV` then ships them in safe steps",
            crate::input::environments::lock_shown(paths.env_name())
        );
        return Exit::Success;
    }
    let mut lock = prepared.plan.lock.clone();
    for (app, _, to) in moves {
        lock.moves.insert(
            app.clone(),
            crate::input::lock::Move {
                to: *to,
                step: crate::input::lock::MoveStep::AddRules,
            },
        );
    }
    record(
        paths,
        lock,
        prepared.rollout,
        "the Lattice side adds the apps to their new groups",
        ui,
    )
}

/// `--apply`: writes `lock` (what the plan records) and says how to ship it; `first` is
/// what the first safe step does.
pub(super) fn record(
    paths: &ProjectPaths,
    mut lock: crate::input::lock::LockState,
    rollout: Option<crate::input::lock::Rollout>,
    first: &str,
    ui: Ui,
) -> Exit {
    // The output has not changed: it is still the step of a rollout the lock records.
    lock.rollout = rollout;
    let text = crate::input::lock::serialize(&lock);
    if let Err(d) = crate::output::write_atomic(&paths.root, &paths.lock, text.as_bytes()) {
        return ui.fail(d, &Sources::default());
    }
    println!(
        "next: `latgen render{} --base auto` writes the first safe step ({first}) against the default branch; ship it, and run it again after each merge until it says the change is complete",
        paths.env_flag()
    );
    Exit::Success
}

/// `latgen plan` on a project with adopted apps (`latgen import`): the consolidation, what
/// it saves, and with `--apply` the lock that records it.
fn consolidate(
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
    let lock = crate::input::environments::lock_shown(paths.env_name());
    let env = paths.env_flag();
    println!(
        "{} still on the route they had before latgen ({lock} `adopted:`)",
        plural(
            c.apps.len(),
            if c.after.config.header_dispatch() {
                "app"
            } else {
                "path-routed app"
            }
        )
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
            "`latgen plan{env} --apply` records it in {lock}; `latgen render{env} --base auto` then ships it in three PRs for all the apps: the groups (Lattice side), Kong's switch to them, the old routes' removal"
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
