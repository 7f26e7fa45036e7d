//! `latgen cost`: the shared stages up to the plan, then the monthly cost of the Lattice
//! services against one service per app.

use clap::ValueEnum;

use super::args::InputArgs;
use super::{Outcome, Ui};

#[derive(Debug, clap::Args)]
pub struct CostArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CostFormat::Table)]
    pub format: CostFormat,
    #[command(flatten)]
    pub color: super::args::ColorArg,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum CostFormat {
    Table,
    Json,
}

pub fn run(args: &CostArgs, ui: Ui) -> Outcome {
    let Some(prepared) = ui.prepare(&args.input.paths()) else {
        return Outcome::Error;
    };
    let c = crate::rebalance::cost(&prepared);
    match args.format {
        CostFormat::Table => print!("{}", crate::rebalance::cost_table(&c)),
        CostFormat::Json => println!(
            "{}",
            serde_json::json!({
                "services": c.services, "groups": c.groups, "dedicated": c.dedicated, "apps": c.apps,
                "monthlyUsd": (c.monthly * 100.0).round() / 100.0,
                "monthlyOnePerAppUsd": (c.monthly_one_per_app * 100.0).round() / 100.0,
                "savingUsd": (c.saving * 100.0).round() / 100.0,
                "savingRatio": (c.saving_ratio * 1000.0).round() / 1000.0,
                "otherDispatch": {
                    "dispatch": c.other.0.as_str(), "services": c.other.1,
                    "monthlyUsd": (c.other.2 * 100.0).round() / 100.0,
                },
                "serviceNames": c.names.iter().map(|(route, name, set)| serde_json::json!({
                    "route": route, "name": name, "namedBy": set,
                })).collect::<Vec<_>>(),
            })
        ),
    }
    Outcome::Success
}
