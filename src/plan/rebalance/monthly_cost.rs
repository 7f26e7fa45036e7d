//! `latgen cost`: what the Lattice services of a plan cost, against one service per app.

use std::path::Path;

use crate::input::config::Dispatch;
use crate::input::lock::Lock;
use crate::plan::prepared::Prepared;

/// Hours in a month, as Lattice pricing pages count them.
pub(crate) const HOURS_PER_MONTH: f64 = 730.0;

/// What the Lattice services of a plan cost, against one service per app.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Cost {
    pub services: usize,
    pub groups: usize,
    pub dedicated: usize,
    pub apps: usize,
    pub monthly: f64,
    pub monthly_one_per_app: f64,
    pub saving: f64,
    pub saving_ratio: f64,
    /// What the other dispatch mode would give, planned afresh: the mode, its Lattice
    /// services and their monthly cost.
    pub other: (Dispatch, usize, f64),
    /// Each Lattice service: its route (a group's, or a host-routed app's), its name and
    /// who chose the name (`latgen` or `controller`).
    pub names: Vec<(String, String, &'static str)>,
    /// Previews apart from production: how many, in how many preview groups (each a
    /// Lattice service), and what those cost a month.
    pub previews: (usize, usize, f64),
}

/// The Lattice services a fresh plan of `prepared`'s apps takes under `dispatch`.
fn services_under(prepared: &Prepared, dispatch: Dispatch) -> usize {
    let mut config = prepared.config.clone();
    config.lattice.dispatch = dispatch;
    let mut diags = crate::diag::Diagnostics::new();
    let plan = crate::plan::plan(
        &prepared.apps,
        &Lock::default(),
        Path::new("latgen.lock"),
        &config,
        &mut diags,
    );
    plan.service_count()
}

pub(crate) fn cost(prepared: &Prepared) -> Cost {
    let price = prepared.config.pricing.service_hour_usd * HOURS_PER_MONTH;
    let plan = &prepared.plan;
    let services = plan.service_count();
    let apps = prepared.apps.len();
    let monthly = services as f64 * price;
    let monthly_one_per_app = apps as f64 * price;
    let saving = monthly_one_per_app - monthly;
    let other_mode = prepared.config.lattice.dispatch.other();
    let other_services = services_under(prepared, other_mode);
    // Preview groups' services are listed too: names to find in the console.
    let names = (plan.service_names().into_iter())
        .map(|(route, n)| (route, n.name.clone(), n.set.as_str()))
        .collect();
    let preview_groups = plan.previews.groups.len();
    Cost {
        previews: (
            plan.previews.list.len(),
            preview_groups,
            preview_groups as f64 * price,
        ),
        other: (other_mode, other_services, other_services as f64 * price),
        services,
        groups: plan.groups.len(),
        dedicated: plan.dedicated.len(),
        apps,
        monthly,
        monthly_one_per_app,
        saving,
        saving_ratio: if monthly_one_per_app > 0.0 {
            saving / monthly_one_per_app
        } else {
            0.0
        },
        names,
    }
}

/// Dollars with thousands separators and cents: `$1,874.28`.
pub(crate) fn dollars(x: f64) -> String {
    let cents = (x * 100.0).round() as i64;
    let (whole, frac) = (cents / 100, cents % 100);
    format!("${}.{frac:02}", grouped(whole.unsigned_abs()))
}

/// A whole number with thousands separators: `12,340`.
pub(crate) fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A shared group's throughput budget use by its apps' declared `peakRps`: the group's
/// route, the declared total, and the budget (`throughput.rpsPerService`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BudgetUse {
    pub route: String,
    pub declared: u64,
    pub budget: u64,
}

/// Each shared group's budget use, fullest first (then by number).
pub(crate) fn budget_use(prepared: &Prepared) -> Vec<BudgetUse> {
    let config = &prepared.config;
    let mut uses: Vec<(u32, BudgetUse)> = (prepared.plan.groups.iter())
        .map(|g| {
            let declared = g
                .members()
                .filter_map(|id| prepared.apps[id].peak_rps)
                .sum();
            let u = BudgetUse {
                route: config.group_name(g.number),
                declared,
                budget: config.throughput.rps_per_service,
            };
            (g.number, u)
        })
        .collect();
    uses.sort_by(|a, b| b.1.declared.cmp(&a.1.declared).then(a.0.cmp(&b.0)));
    uses.into_iter().map(|(_, u)| u).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dollars_are_grouped_and_rounded() {
        assert_eq!(dollars(1874.275), "$1,874.28");
        assert_eq!(dollars(332.15), "$332.15");
        assert_eq!(dollars(1234567.0), "$1,234,567.00");
    }
}
