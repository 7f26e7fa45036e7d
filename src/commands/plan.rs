//! `latgen plan`: the shared stages up to the plan, then the fewest moves that bring the
//! number of shared groups down, printed as `latgen move` commands.

use super::args::InputArgs;
use super::{Outcome, Ui, plural};
use crate::diag::Sources;

#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub color: super::args::ColorArg,
}

pub fn run(args: &PlanArgs, ui: Ui) -> Outcome {
    let Some(prepared) = ui.prepare(&args.input.paths()) else {
        return Outcome::Error;
    };
    let c = match crate::rebalance::compaction(&prepared) {
        Ok(c) => c,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    let price = prepared.config.pricing.service_hour_usd * crate::rebalance::HOURS_PER_MONTH;
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
    if c.moves.is_empty() {
        println!("no move brings the count down");
        return Outcome::Success;
    }
    println!(
        "{} bring it to {}, saving {}/month; each move is three PRs, and nothing is applied until you run them:",
        plural(c.moves.len(), "move"),
        c.groups_after,
        crate::rebalance::dollars((c.groups_now - c.groups_after) as f64 * price)
    );
    for (app, _, to) in &c.moves {
        println!("  latgen move {app} --group {to}");
    }
    Outcome::Success
}
