//! What a change to the Lattice routes does while the controller applies it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::output::side_of;
use crate::render::Side;
use crate::routing::{LatticeRoute, LatticeRule};

/// A rule's matches as `Type path` keys.
fn match_keys(rule: &LatticeRule) -> impl Iterator<Item = String> + '_ {
    rule.matches
        .iter()
        .map(|m| format!("{} {}", m.kind.gateway_api_type(), m.path))
}

/// What a change to the Lattice routes does while the controller applies it, comparing
/// each route in `old` with the same file in `new` (files by path under the output folder;
/// each changed route is read once per side):
/// - `group-at-quota`: the controller creates the new rules before it deletes the old
///   ones, so for a while the route holds both; over the quota, the extra rules are
///   dropped without an error.
/// - `priority-churn`: the controller renumbers rules whose position changes; more than 5
///   at once need a BatchUpdateRule call, which the Lattice API caps at 5 items.
pub fn change_warnings(
    old: &BTreeMap<PathBuf, String>,
    new: &BTreeMap<PathBuf, String>,
    quota: usize,
    out_dir: &Path,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    // Both trees are sorted alike: walked side by side, not looked up file by file.
    let mut before = old.iter().peekable();
    for (rel, text) in new {
        while before.next_if(|(p, _)| *p < rel).is_some() {}
        let Some(before_text) = before
            .peek()
            .filter(|(p, t)| *p == rel && *t != text)
            .map(|(_, t)| *t)
        else {
            continue;
        };
        if side_of(rel) != Side::Lattice {
            continue;
        }
        let (Some(before), Some(after)) = (
            LatticeRoute::parse(rel, before_text),
            LatticeRoute::parse(rel, text),
        ) else {
            continue;
        };
        let span = Span::new(out_dir.join(rel), after.name_pos.line.max(1), 0);
        if let Some(d) = group_at_quota(&before, &after, quota) {
            diags.push(d.at(span.clone()));
        }
        if let Some(d) = priority_churn(&before, &after) {
            diags.push(d.at(span));
        }
    }
    diags
}

/// `group-at-quota`: the old and new rules together are over the quota.
fn group_at_quota(before: &LatticeRoute, after: &LatticeRoute, quota: usize) -> Option<Diagnostic> {
    let keys =
        |r: &LatticeRoute| -> BTreeSet<String> { r.rules.iter().flat_map(match_keys).collect() };
    let (was, will) = (keys(before), keys(after));
    let peak = was.union(&will).count();
    if peak <= quota || was == will {
        return None;
    }
    let shown = |s: &String| match s.split_once(' ') {
        Some(("Exact", p)) => format!("{p} (Exact)"),
        Some((_, p)) => p.to_string(),
        None => s.clone(),
    };
    let added: Vec<String> = will.difference(&was).map(shown).collect();
    let removed: Vec<String> = was.difference(&will).map(shown).collect();
    Some(
        Diagnostic::warning(
            Code::GroupAtQuota,
            format!(
                "{} would briefly hold {peak} rules (quota {quota}) while the controller replaces {} with {}: the rules over the quota are dropped without an error",
                after.name,
                removed.join(", "),
                added.join(", ")
            ),
        )
        .help("ship the removal and the addition as two changes, or keep a rule free with `quotas.reservedRules: 1`"),
    )
}

/// `priority-churn`: more than 5 rules change position.
fn priority_churn(before: &LatticeRoute, after: &LatticeRoute) -> Option<Diagnostic> {
    let order = |r: &LatticeRoute| -> Vec<String> {
        r.rules
            .iter()
            .map(|rule| {
                let backend = rule
                    .backend
                    .as_ref()
                    .map(|b| b.to_string())
                    .unwrap_or_default();
                format!(
                    "{} -> {backend}",
                    match_keys(rule).collect::<Vec<_>>().join(",")
                )
            })
            .collect()
    };
    let (was, will) = (order(before), order(after));
    let moved = will
        .iter()
        .enumerate()
        .filter(|(i, rule)| was.iter().position(|b| b == *rule).is_some_and(|j| j != *i))
        .count();
    (moved > 5).then(|| {
        Diagnostic::warning(
            Code::PriorityChurn,
            format!(
                "{moved} rules of {} change position, so their priorities change: more than the 5 one BatchUpdateRule call takes",
                after.name
            ),
        )
        .help("watch the controller's events for this route when it syncs, or add the new paths in smaller changes")
    })
}
