//! Changing groups without downtime: `move` (one app, three PR-sized steps), `plan` (the
//! fewest moves that bring the group count down to its lower bound) and `cost`.
//!
//! A move keeps the old rule alive until the new path is live: (1) the Lattice side adds
//! the app's rules to the new group while the old group keeps them, (2) the Kong side points
//! the bridge and the rewrite host at the new group, (3) the Lattice side drops the old
//! rules. The lock records the step; `render` writes the full state of the current step.

use crate::Prepared;
use crate::codes::Code;
use crate::config::Config;
use crate::diag::{Diagnostic, did_you_mean};
use crate::lock::{LockState, Move, Step};
use crate::plan::Occupancy;

/// Hours in a month, as Lattice pricing pages count them.
pub const HOURS_PER_MONTH: f64 = 730.0;

pub struct MoveResult {
    pub lock: LockState,
    /// What was done and what comes next, for a person.
    pub message: String,
}

fn refuse(message: String, help: impl Into<String>) -> Diagnostic {
    Diagnostic::error(Code::MoveRefused, message).help(help)
}

/// Starts a move of `app` to `group`, or advances the move in flight one step.
pub fn move_app(
    prepared: &Prepared,
    app: &str,
    group: Option<u32>,
    advance: bool,
) -> Result<MoveResult, Diagnostic> {
    let (index, home) = movable(prepared, app)?;
    let lock = prepared.plan.lock.clone();
    if let Some(m) = lock.moves.get(app).copied() {
        return continue_move(&prepared.config, lock, app, home, m, group);
    }
    if advance {
        return Err(refuse(
            format!("app `{app}` is not moving"),
            format!("start a move with `latgen move {app} --group N`"),
        ));
    }
    let Some(to) = group else {
        return Err(refuse(
            "give the group to move to".into(),
            format!("`latgen move {app} --group N`"),
        ));
    };
    start_move(prepared, lock, app, index, home, to)
}

/// The index of path-routed app `app` and the group it is in.
fn movable(prepared: &Prepared, app: &str) -> Result<(usize, u32), Diagnostic> {
    let Some(index) = prepared.apps.iter().position(|a| a.name == app) else {
        let names = prepared.apps.iter().map(|a| a.name.as_str());
        let help = match did_you_mean(app, names) {
            Some(s) => format!("did you mean `{s}`?"),
            None => "give the name of an app in apps/".to_string(),
        };
        return Err(refuse(format!("there is no app `{app}`"), help));
    };
    if prepared.apps[index].host.is_some() {
        return Err(refuse(
            format!(
                "app `{app}` is on its own host: it has a dedicated Lattice service, not a group"
            ),
            "only path-routed apps move between groups",
        ));
    }
    let Some(&home) = prepared.plan.lock.apps.get(app) else {
        return Err(refuse(
            format!("app `{app}` has no group yet"),
            "run `latgen render` first",
        ));
    };
    Ok((index, home))
}

/// Advances move `m` of `app` from `home` one step; `group`, when given, must be where it
/// is going.
fn continue_move(
    config: &Config,
    mut lock: LockState,
    app: &str,
    home: u32,
    m: Move,
    group: Option<u32>,
) -> Result<MoveResult, Diagnostic> {
    let name = |n: u32| config.group_name(n);
    if group.is_some_and(|g| g != m.to) {
        return Err(refuse(
            format!(
                "app `{app}` is moving from {} to {} (step {} of 3)",
                name(home),
                name(m.to),
                m.step.number()
            ),
            format!("finish that move first with `latgen move {app} --continue`"),
        ));
    }
    let message = match m.step {
        Step::AddRules => {
            lock.moves.insert(
                app.to_string(),
                Move {
                    to: m.to,
                    step: Step::SwitchKong,
                },
            );
            format!(
                "moving {app} from {} to {}: step 2 of 3\n  the Kong side now points {app}'s bridge and rewrite host at {}; both groups keep its rules.\nnext: run `latgen render` (only generated/kong/ changes), ship it as one PR, and once it is live run `latgen move {app} --continue`",
                name(home),
                name(m.to),
                name(m.to)
            )
        }
        Step::SwitchKong => {
            lock.moves.remove(app);
            lock.apps.insert(app.to_string(), m.to);
            format!(
                "moving {app} from {} to {}: step 3 of 3\n  the Lattice side now drops {app}'s rules from {}.\nnext: run `latgen render` (only generated/lattice/ changes) and ship it as one PR; the move is then done",
                name(home),
                name(m.to),
                name(home)
            )
        }
    };
    Ok(MoveResult { lock, message })
}

/// Starts moving app `app` (at `index`) from `home` to `to`: step 1, when `to` is a group
/// in use with room for it or the next new group.
fn start_move(
    prepared: &Prepared,
    mut lock: LockState,
    app: &str,
    index: usize,
    home: u32,
    to: u32,
) -> Result<MoveResult, Diagnostic> {
    let config = &prepared.config;
    let name = |n: u32| config.group_name(n);
    if to == home {
        return Err(refuse(
            format!("app `{app}` is already in {}", name(to)),
            "pick another group",
        ));
    }
    let occupancy = Occupancy::of(&prepared.plan, &prepared.apps, config, |_| true);
    let exists = prepared.plan.groups.iter().any(|g| g.number == to);
    let next = occupancy.next_new_group();
    if !exists && to != next {
        return Err(refuse(
            format!("{} does not exist", name(to)),
            format!(
                "move to a group in use, or to {} to open a new one",
                name(next)
            ),
        ));
    }
    if let Some(why) = occupancy.no_room(index, to) {
        let help = match occupancy.first_with_room(index).filter(|&g| g != home) {
            Some(g) => format!(
                "{} has room; or move it to a new group, {}",
                name(g),
                name(next)
            ),
            None => format!("move it to a new group, {}", name(next)),
        };
        return Err(refuse(why, help));
    }
    lock.moves.insert(
        app.to_string(),
        Move {
            to,
            step: Step::AddRules,
        },
    );
    let message = format!(
        "moving {app} from {} to {}: step 1 of 3\n  the Lattice side now adds {app}'s rules to {}; {} keeps them, and Kong still points at {}.\nnext: run `latgen render` (only generated/lattice/ changes), ship it as one PR, and once it is live run `latgen move {app} --continue`",
        name(home),
        name(to),
        name(to),
        name(home),
        name(home)
    );
    Ok(MoveResult { lock, message })
}

/// A proposal to bring the number of shared groups down.
#[derive(Debug, Clone, PartialEq)]
pub struct Compaction {
    pub groups_now: usize,
    /// The fewest groups the apps could fit in: total rules over capacity, isolated apps,
    /// total declared rps over the budget — whichever is largest.
    pub lower_bound: usize,
    pub groups_after: usize,
    /// (app, from, to), in the order to run them.
    pub moves: Vec<(String, u32, u32)>,
}

/// Combinations of groups to keep are tried exhaustively up to this many groups; above
/// it, the groups with the most apps are kept.
const EXHAUSTIVE_UP_TO: usize = 18;

pub fn compaction(prepared: &Prepared) -> Result<Compaction, Diagnostic> {
    let plan = &prepared.plan;
    let config = &prepared.config;
    if !plan.lock.moves.is_empty() {
        return Err(refuse(
            "moves are in flight".into(),
            "finish them with `latgen move APP --continue` first",
        ));
    }
    let apps = &prepared.apps;
    let cap = config.group_rule_capacity() as usize;
    let rules: usize = plan.groups.iter().map(|g| g.rules.len()).sum();
    let isolated = plan
        .groups
        .iter()
        .flat_map(|g| &g.apps)
        .filter(|&&i| apps[i].isolate)
        .count();
    let rps: u64 = plan
        .groups
        .iter()
        .flat_map(|g| &g.apps)
        .filter_map(|&i| apps[i].peak_rps)
        .sum();
    let budget = config.throughput.rps_per_service.max(1);
    let lower_bound = rules
        .div_ceil(cap.max(1))
        .max(isolated)
        .max(rps.div_ceil(budget) as usize);
    let n = plan.groups.len();
    let mut best = Compaction {
        groups_now: n,
        lower_bound,
        groups_after: n,
        moves: Vec::new(),
    };
    for k in lower_bound..n {
        let candidates: Vec<Vec<usize>> = if n <= EXHAUSTIVE_UP_TO {
            let mut all = combinations(n, k);
            // Fewest apps to move first; then prefer keeping low group numbers.
            all.sort_by_key(|keep| (evicted_apps(plan, keep), keep.clone()));
            all
        } else {
            let mut by_size: Vec<usize> = (0..n).collect();
            by_size.sort_by_key(|&g| (std::cmp::Reverse(plan.groups[g].apps.len()), g));
            let mut keep: Vec<usize> = by_size[..k].to_vec();
            keep.sort();
            vec![keep]
        };
        if let Some(moves) = candidates.iter().find_map(|keep| pack(prepared, keep)) {
            best = Compaction {
                groups_now: n,
                lower_bound,
                groups_after: k,
                moves,
            };
            break;
        }
    }
    Ok(best)
}

fn evicted_apps(plan: &crate::plan::Plan, keep: &[usize]) -> usize {
    (0..plan.groups.len())
        .filter(|g| !keep.contains(g))
        .map(|g| plan.groups[g].apps.len())
        .sum()
}

/// Moves that empty every group not in `keep` into the kept ones (largest apps first, each
/// to the lowest kept group with room), or None when they do not fit.
fn pack(prepared: &Prepared, keep: &[usize]) -> Option<Vec<(String, u32, u32)>> {
    let plan = &prepared.plan;
    let kept: Vec<u32> = keep.iter().map(|&g| plan.groups[g].number).collect();
    let mut occupancy = Occupancy::of(plan, &prepared.apps, &prepared.config, |n| {
        kept.contains(&n)
    });
    let mut evicted: Vec<(usize, u32)> = (0..plan.groups.len())
        .filter(|g| !keep.contains(g))
        .flat_map(|g| {
            plan.groups[g]
                .apps
                .iter()
                .map(move |&i| (i, plan.groups[g].number))
        })
        .collect();
    evicted.sort_by_key(|&(i, _)| {
        (
            std::cmp::Reverse(prepared.apps[i].rule_count()),
            prepared.apps[i].name.clone(),
        )
    });
    let mut moves = Vec::new();
    for (i, from) in evicted {
        let to = kept
            .iter()
            .copied()
            .find(|&n| occupancy.no_room(i, n).is_none())?;
        occupancy.place(to, i);
        moves.push((prepared.apps[i].name.clone(), from, to));
    }
    moves.sort();
    Some(moves)
}

fn combinations(n: usize, k: usize) -> Vec<Vec<usize>> {
    fn go(start: usize, n: usize, k: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == k {
            out.push(cur.clone());
            return;
        }
        for i in start..n {
            if n - i < k - cur.len() {
                break;
            }
            cur.push(i);
            go(i + 1, n, k, cur, out);
            cur.pop();
        }
    }
    let mut out = Vec::new();
    go(0, n, k, &mut Vec::new(), &mut out);
    out
}

/// What the Lattice services of a plan cost, against one service per app.
#[derive(Debug, Clone, PartialEq)]
pub struct Cost {
    pub services: usize,
    pub groups: usize,
    pub dedicated: usize,
    pub apps: usize,
    pub monthly: f64,
    pub monthly_one_per_app: f64,
    pub saving: f64,
    pub saving_ratio: f64,
}

pub fn cost(prepared: &Prepared) -> Cost {
    let price = prepared.config.pricing.service_hour_usd * HOURS_PER_MONTH;
    let plan = &prepared.plan;
    let services = plan.service_count();
    let apps = prepared.apps.len();
    let monthly = services as f64 * price;
    let monthly_one_per_app = apps as f64 * price;
    let saving = monthly_one_per_app - monthly;
    Cost {
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
    }
}

/// Dollars with thousands separators and cents: `$1,874.28`.
pub fn dollars(x: f64) -> String {
    let cents = (x * 100.0).round() as i64;
    let (whole, frac) = (cents / 100, cents % 100);
    let digits = whole.to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    format!("${grouped}.{frac:02}")
}

pub fn cost_table(c: &Cost) -> String {
    [
        format!(
            "{:<22}{:>6}  {:>12}/month  ({} shared groups, {} dedicated)",
            "Lattice services",
            c.services,
            dollars(c.monthly),
            c.groups,
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
    ]
    .join("\n")
        + "\n"
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

    #[test]
    fn combinations_are_all_k_subsets() {
        assert_eq!(combinations(4, 2).len(), 6);
        assert_eq!(combinations(3, 3), vec![vec![0, 1, 2]]);
    }
}
