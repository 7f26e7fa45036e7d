//! `latgen plan`: the lower bound on the number of shared groups, and the fewest moves
//! that bring the count down to it (or as close as they can).

use super::refuse;
use crate::Prepared;
use crate::diag::Diagnostic;
use crate::model::AppId;
use crate::plan::{Group, Occupancy, Plan};

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
        .flat_map(Group::members)
        .filter(|&id| apps[id].isolate)
        .count();
    let rps: u64 = plan
        .groups
        .iter()
        .flat_map(Group::members)
        .filter_map(|id| apps[id].peak_rps)
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

fn evicted_apps(plan: &Plan, keep: &[usize]) -> usize {
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
    let mut evicted: Vec<(AppId, u32)> = (0..plan.groups.len())
        .filter(|g| !keep.contains(g))
        .flat_map(|g| {
            let group = &plan.groups[g];
            group.members().map(move |id| (id, group.number))
        })
        .collect();
    evicted.sort_by_key(|&(id, _)| {
        (
            std::cmp::Reverse(prepared.apps[id].rule_count()),
            prepared.apps[id].name.clone(),
        )
    });
    let mut moves = Vec::new();
    for (id, from) in evicted {
        let to = kept
            .iter()
            .copied()
            .find(|&n| occupancy.no_room(id, n).is_none())?;
        occupancy.place(to, id);
        moves.push((prepared.apps[id].name.clone(), from, to));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combinations_are_all_k_subsets() {
        assert_eq!(combinations(4, 2).len(), 6);
        assert_eq!(combinations(3, 3), vec![vec![0, 1, 2]]);
    }
}
