//! `latgen plan`: the lower bound on the number of shared groups, and the fewest moves
//! that bring the count down to it (or as close as they can).

use super::moves::refuse;
use crate::diag::Diagnostic;
use crate::plan::prepared::Prepared;
use std::collections::{BTreeMap, BTreeSet};

use crate::input::app::{AppId, Backend, MatchKind};
use crate::plan::placement::{Budget, NewGroups};
use crate::plan::{Group, Occupancy, Plan};

/// A proposal to bring the number of shared groups down.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Compaction {
    pub groups_now: usize,
    /// The fewest groups the path-routed apps could fit in: total rules over capacity,
    /// Services over the target-group quota, isolated apps, total declared rps over the
    /// budget, the longest chain of apps whose paths one request can match all — whichever
    /// is largest.
    pub lower_bound: usize,
    /// What sets the bound, in words (`/shop and /shop/cart nest …`).
    pub bound_by: String,
    /// Host-routed apps: each has a Lattice service of its own, which no move changes.
    pub dedicated: usize,
    pub groups_after: usize,
    /// (app, from, to), in the order to run them.
    pub moves: Vec<(String, u32, u32)>,
}

/// Combinations of groups to keep are tried exhaustively up to this many groups; above
/// it, the groups with the most apps are kept.
const EXHAUSTIVE_UP_TO: usize = 18;

pub(crate) fn compaction(prepared: &Prepared) -> Result<Compaction, Diagnostic> {
    let plan = &prepared.plan;
    if !plan.lock.moves.is_empty() {
        let env = crate::input::environments::env_flag(prepared.config.env_name());
        return Err(refuse(
            "moves are in flight".into(),
            format!(
                "finish them first: `latgen render{env} --base auto` writes their next safe step, once per merged step until it says the change is complete"
            ),
        ));
    }
    let (lower_bound, bound_by) = lower_bound(prepared);
    let n = plan.groups.len();
    let mut best = Compaction {
        groups_now: n,
        lower_bound,
        bound_by: bound_by.clone(),
        dedicated: plan.dedicated.len(),
        groups_after: n,
        moves: Vec::new(),
    };
    // One budget for every candidate: past it, each is packed without a search.
    let mut budget = Budget::new();
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
        if let Some(moves) = (candidates.iter()).find_map(|keep| pack(prepared, keep, &mut budget))
        {
            best = Compaction {
                groups_after: k,
                moves,
                ..best
            };
            break;
        }
    }
    Ok(best)
}

/// The fewest shared groups the path-routed apps could fit in, and what sets that number.
/// Each count is one no group arrangement can beat, so the largest is too.
fn lower_bound(prepared: &Prepared) -> (usize, String) {
    let (plan, config, apps) = (&prepared.plan, &prepared.config, &prepared.apps);
    let members = || plan.groups.iter().flat_map(Group::members);
    let per_group = |total: u64, cap: u64| total.div_ceil(cap.max(1)) as usize;
    let cap = config.quotas.rules_per_group();
    let rules: usize = plan.groups.iter().map(|g| g.rules.len()).sum();
    let services: BTreeSet<Backend> = members().flat_map(|id| apps[id].backends()).collect();
    let target_groups = config.quotas.target_groups_per_service;
    let isolated = members().filter(|&id| apps[id].isolate).count();
    let budget = config.throughput.rps_per_service;
    // An app over the budget on its own fills one group and no more: however much it
    // declares, it takes one group's share.
    let peaks = || members().filter_map(|id| apps[id].peak_rps);
    let rps: u64 = peaks().map(|r| r.min(budget)).sum();
    let rps_counted = if peaks().any(|r| r > budget) {
        format!("{rps} declared rps (an app over the budget counted at it)")
    } else {
        format!("{rps} declared rps")
    };
    let chain = overlap_chain(prepared);
    let chain_paths: Vec<String> = chain.iter().map(|p| format!("`{p}`")).collect();
    let header = (config.header_dispatch()).then_some(config.lattice.dispatch_header.as_str());
    let policy: usize = match config.auth.is_on() {
        true => (members())
            .map(|id| crate::plan::policies::app_bytes(&apps[id], config, header))
            .sum(),
        false => 0,
    };
    let policy_cap = crate::plan::policies::statements_budget();
    [
        (
            per_group(policy as u64, policy_cap as u64),
            format!("{policy} bytes of auth policy statements, {policy_cap} a group"),
        ),
        (
            config.quotas.groups_for_rules(rules as u64),
            format!("{rules} rules, {cap} a group"),
        ),
        (
            per_group(services.len() as u64, target_groups.into()),
            format!(
                "{} Services, {target_groups} target groups a group",
                services.len()
            ),
        ),
        (isolated, format!("{isolated} isolated apps, one a group")),
        (
            per_group(rps, budget),
            format!("{rps_counted}, {budget} a group"),
        ),
        (
            chain.len(),
            format!(
                "one request can match each of {} (Lattice compares paths as strings), and apps whose paths one request can match both never share a group",
                and_list(&chain_paths)
            ),
        ),
    ]
    .into_iter()
    .fold(
        (0, String::new()),
        |best, b| if b.0 > best.0 { b } else { best },
    )
}

/// The paths of the longest chain of path-routed apps whose paths one request can match all
/// (`/pay`, `/payment`, `/payments`: each a string prefix of the next, the last a prefix or
/// an Exact path), shortest first: no two of those apps can share a group, so the chain's
/// length is a lower bound.
fn overlap_chain(prepared: &Prepared) -> Vec<&str> {
    // Under header dispatch, paths never decide where an app may go.
    if prepared.config.header_dispatch() {
        return Vec::new();
    }
    let grouped = || {
        prepared
            .plan
            .groups
            .iter()
            .flat_map(Group::members)
            .flat_map(|id| prepared.apps[id].paths.iter().map(move |p| (p, id)))
    };
    let prefixes: BTreeMap<&str, AppId> = grouped()
        .filter(|(p, _)| p.kind == MatchKind::Prefix)
        .map(|(p, id)| (p.value.as_str(), id))
        .collect();
    let mut best: Vec<(&str, AppId)> = Vec::new();
    for (p, id) in grouped() {
        let path = p.value.as_str();
        // Every prefix `path` starts with, shortest first, one app each; `path`'s app last.
        let mut chain: Vec<(&str, AppId)> = Vec::new();
        // The path itself too: another app's prefix equal to this app's Exact path.
        let starts = (1..=path.len()).filter(|&i| path.is_char_boundary(i));
        for start in starts.map(|i| &path[..i]) {
            if let Some(&other) = prefixes.get(start)
                && other != id
                && chain.iter().all(|&(_, app)| app != other)
            {
                chain.push((start, other));
            }
        }
        chain.push((path, id));
        if chain.len() > best.len() {
            best = chain;
        }
    }
    best.iter().map(|&(p, _)| p).collect()
}

/// `a`, `a and b`, `a, b and c`.
pub(crate) fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

fn evicted_apps(plan: &Plan, keep: &[usize]) -> usize {
    (0..plan.groups.len())
        .filter(|g| !keep.contains(g))
        .map(|g| plan.groups[g].apps.len())
        .sum()
}

/// Moves that empty every group not in `keep` into the kept ones (placed as one batch, as
/// a render places new apps: each app to the lowest kept group with room, in the order
/// that fits them), or None when they do not fit.
fn pack(
    prepared: &Prepared,
    keep: &[usize],
    budget: &mut Budget,
) -> Option<Vec<(String, u32, u32)>> {
    let plan = &prepared.plan;
    let kept: Vec<u32> = keep.iter().map(|&g| plan.groups[g].number).collect();
    let mut occupancy = Occupancy::of(plan, &prepared.apps, &prepared.config, |n| {
        kept.contains(&n)
    });
    let evicted: BTreeMap<AppId, u32> = (0..plan.groups.len())
        .filter(|g| !keep.contains(g))
        .flat_map(|g| {
            let group = &plan.groups[g];
            group.members().map(move |id| (id, group.number))
        })
        .collect();
    let batch: Vec<AppId> = evicted.keys().copied().collect();
    let placed = occupancy.place_batch(&batch, NewGroups::Closed, budget)?;
    let mut moves: Vec<(String, u32, u32)> = (placed.into_iter())
        .map(|(id, to)| (prepared.apps[id].name.clone(), evicted[&id], to))
        .collect();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::planner::ancestors;

    #[test]
    fn ancestors_are_segment_wise_nearest_first() {
        assert_eq!(ancestors("/shop/cart").collect::<Vec<_>>(), ["/shop", "/"]);
        assert_eq!(ancestors("/shop").collect::<Vec<_>>(), ["/"]);
        assert_eq!(ancestors("/").count(), 0);
    }

    #[test]
    fn lists_are_joined_with_and() {
        let l = |v: &[&str]| and_list(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(l(&["a", "b", "c"]), "a, b and c");
        assert_eq!(l(&["a", "b"]), "a and b");
    }

    #[test]
    fn combinations_are_all_k_subsets() {
        assert_eq!(combinations(4, 2).len(), 6);
        assert_eq!(combinations(3, 3), vec![vec![0, 1, 2]]);
    }
}
