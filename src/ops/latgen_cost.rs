//! `latgen cost`: the shared stages up to the plan, then the monthly cost of the Lattice
//! services against one service per app.

use super::shell::{Exit, Ui};
use crate::diag::Diagnostic;
use crate::input::ProjectPaths;
use crate::plan::rebalance::monthly_cost::{Cost, dollars};
use crate::report::plural;

/// A value of `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum CostFormat {
    Table,
    Json,
}

/// Prints the cost of each environment `envs` holds, in `format`.
pub(crate) fn run(format: CostFormat, envs: Result<Vec<ProjectPaths>, Diagnostic>, ui: Ui) -> Exit {
    super::project::per_env(envs, (ui, super::project::Heading::Stderr), |paths| {
        cost_env(format, &paths, ui)
    })
}

/// One environment's cost (the project's, without environments).
fn cost_env(format: CostFormat, paths: &ProjectPaths, ui: Ui) -> Exit {
    let Some(prepared) = super::project::prepare(paths, ui) else {
        return Exit::Error;
    };
    let c = crate::plan::rebalance::monthly_cost::cost(&prepared);
    let budgets = crate::plan::rebalance::monthly_cost::budget_use(&prepared);
    match format {
        CostFormat::Table => print!("{}{}", table(&c), budget_bars(&budgets)),
        CostFormat::Json => {
            let mut doc = serde_json::json!({
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
                "previews": {
                    "previews": c.previews.0, "groups": c.previews.1,
                    "monthlyUsd": (c.previews.2 * 100.0).round() / 100.0,
                },
                "budgets": budgets.iter().map(|b| serde_json::json!({
                    "route": b.route, "declaredRps": b.declared, "budgetRps": b.budget,
                })).collect::<Vec<_>>(),
            });
            // `--env all` prints a line per environment, each naming its own.
            if let Some(env) = prepared.config.env_name() {
                doc["environment"] = serde_json::json!(env);
            }
            println!("{doc}");
        }
    }
    Exit::Success
}

/// Each shared group's declared load against its throughput budget, as a bar, fullest
/// first.
fn budget_bars(budgets: &[crate::plan::rebalance::monthly_cost::BudgetUse]) -> String {
    use crate::plan::rebalance::monthly_cost::grouped;
    if budgets.is_empty() {
        return String::new();
    }
    let width = budgets.iter().map(|b| b.route.len()).max().unwrap_or(0);
    let mut out = String::from("\nThroughput budget of the shared groups (declared peakRps)\n");
    for b in budgets {
        out.push_str(&format!(
            "  {:<width$}  {}  {:>7} / {} rps {:>4.0}%\n",
            b.route,
            crate::report::bar(b.declared as f64, b.budget as f64, 24),
            grouped(b.declared),
            grouped(b.budget),
            100.0 * b.declared as f64 / b.budget.max(1) as f64,
        ));
    }
    out
}

/// The cost as a table, its counts in words (`1 shared group`, `2 services`):
/// ```text
/// Lattice services          14       $332.15/month  (8 shared groups, 6 dedicated)
/// one service per app       79     $1,874.28/month
/// saving                    65     $1,542.13/month  (-82%)
/// with dispatch: header: 11 services, $260.98/month
/// ```
/// then each Lattice service's name.
fn table(c: &Cost) -> String {
    let mut out = [
        format!(
            "{:<22}{:>6}  {:>12}/month  ({}, {} dedicated)",
            "Lattice services",
            c.services,
            dollars(c.monthly),
            plural(c.groups, "shared group"),
            c.dedicated
        ),
        format!(
            "{:<22}{:>6}  {:>12}/month",
            "one service per app",
            c.apps,
            dollars(c.monthly_one_per_app)
        ),
        format!(
            "{:<22}{:>6}  {:>12}/month  (-{:.0}%)",
            "saving",
            c.apps - c.services,
            dollars(c.saving),
            c.saving_ratio * 100.0
        ),
        format!(
            "with dispatch: {}: {}, {}/month",
            c.other.0.as_str(),
            plural(c.other.1, "service"),
            dollars(c.other.2)
        ),
    ]
    .join("\n");
    // Previews are not production: counted apart, and not in the saving above.
    let (previews, groups, monthly) = c.previews;
    if previews > 0 {
        out.push_str(&format!(
            "\n{:<22}{:>6}  {:>12}/month  ({} in preview groups of their own)",
            "preview groups",
            groups,
            dollars(monthly),
            plural(previews, "preview")
        ));
    }
    out.push_str("\n\nLattice service names (route: name, named by)\n");
    for (route, name, set) in &c.names {
        out.push_str(&format!("  {route}: {name} ({set})\n"));
    }
    out
}
