//! `latgen plan`: the moves that separate apps whose paths one request can match both
//! (order-dependent pairs) where a lock keeps them in one group, so that every group routes
//! right in any order of its rules.
//!
//! The planner never puts such apps together; a group can still hold them when it was
//! planned before that rule, or when an app's paths change in place. Moving them is a
//! rollout like any move: recorded in the lock, shipped by `render --base` in safe steps.

use crate::input::app::AppId;
use crate::plan::Occupancy;
use crate::plan::placement::{Budget, NewGroups};
use crate::plan::prepared::Prepared;
use latgen_sim::platform::lattice_matches_overlap;
use std::collections::BTreeMap;

/// Two apps of one group whose paths one request can match both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OrderDependentPair {
    pub group: u32,
    /// (app, path) of each, in name order.
    pub apps: [(String, String); 2],
}

/// The order-dependent pairs of every group, and the moves that separate them: (app, from,
/// to), in the order to record them. Empty under header dispatch, where no two apps'
/// rules match one request.
pub(crate) fn separation(
    prepared: &Prepared,
) -> (Vec<OrderDependentPair>, Vec<(String, u32, u32)>) {
    let (plan, apps, config) = (&prepared.plan, &prepared.apps, &prepared.config);
    if config.header_dispatch() {
        return (Vec::new(), Vec::new());
    }
    let mut pairs = Vec::new();
    let mut evicted: Vec<(AppId, u32)> = Vec::new();
    for group in &plan.groups {
        let members: Vec<AppId> = group.members().collect();
        let mut clashes: Vec<(AppId, AppId)> = Vec::new();
        for (i, &a) in members.iter().enumerate() {
            for &b in &members[i + 1..] {
                if let Some((pa, pb)) = overlap(prepared, a, b) {
                    pairs.push(OrderDependentPair {
                        group: group.number,
                        apps: [(apps[a].name.clone(), pa), (apps[b].name.clone(), pb)],
                    });
                    clashes.push((a, b));
                }
            }
        }
        evicted.extend(
            evict(prepared, clashes)
                .into_iter()
                .map(|a| (a, group.number)),
        );
    }
    // The evicted apps as one batch, each to the lowest-numbered group with room (a new one
    // if none has), counting those already placed: the groups it leaves still hold it until
    // its move ends.
    let mut occupancy = Occupancy::of(plan, apps, config, |_| true);
    let from: BTreeMap<AppId, u32> = evicted.into_iter().collect();
    let batch: Vec<AppId> = from.keys().copied().collect();
    let placed = occupancy
        .place_batch(&batch, NewGroups::Open, &mut Budget::new())
        .unwrap_or_default();
    let mut moves: Vec<(String, u32, u32)> = (placed.into_iter())
        .map(|(id, to)| (apps[id].name.clone(), from[&id], to))
        .collect();
    moves.sort_by(|a, b| a.0.cmp(&b.0));
    (pairs, moves)
}

/// A path of `a` and one of `b` that one request can match both, if any.
fn overlap(prepared: &Prepared, a: AppId, b: AppId) -> Option<(String, String)> {
    let apps = &prepared.apps;
    // Two apps on one Service reach it in either order: `check` reports no such pair.
    if apps[a].backend() == apps[b].backend() {
        return None;
    }
    apps[a].paths.iter().find_map(|pa| {
        apps[b]
            .paths
            .iter()
            .find(|pb| lattice_matches_overlap((pa.kind, &pa.value), (pb.kind, &pb.value)))
            .map(|pb| (pa.value.clone(), pb.value.clone()))
    })
}

/// The apps to move out of a group so that none of `clashes` is left: each time the app in
/// the most clashes (an app without a `group:` pin first, since a pin must agree with the
/// lock; on a tie, the one with fewer rules, then the later name, so that the earlier-named
/// stays), until none is left.
fn evict(prepared: &Prepared, mut clashes: Vec<(AppId, AppId)>) -> Vec<AppId> {
    let apps = &prepared.apps;
    let mut out = Vec::new();
    while !clashes.is_empty() {
        let mut count: std::collections::BTreeMap<AppId, usize> = Default::default();
        for &(a, b) in &clashes {
            *count.entry(a).or_default() += 1;
            *count.entry(b).or_default() += 1;
        }
        let unpinned = |id: AppId| apps[id].pin.is_none();
        let Some((&worst, _)) = count.iter().max_by(|(a, ca), (b, cb)| {
            unpinned(**a)
                .cmp(&unpinned(**b))
                .then_with(|| ca.cmp(cb))
                .then_with(|| apps[**b].rule_count().cmp(&apps[**a].rule_count()))
                .then_with(|| apps[**a].name.cmp(&apps[**b].name))
        }) else {
            break;
        };
        clashes.retain(|&(a, b)| a != worst && b != worst);
        out.push(worst);
    }
    out
}
