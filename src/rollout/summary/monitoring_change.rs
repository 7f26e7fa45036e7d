//! What a change does to monitoring (`observability.prometheus`): the PrometheusRules it
//! adds or removes, and for each it changes, the apps it counts toward its Lattice route and
//! the alerts it holds. Read from the files' text as latgen writes them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::manifest::tree::Pair;

// The recording rule whose expression names the apps a Lattice route's rule counts.
use crate::render::APP_RATE_BY_ROUTE as BY_ROUTE;

/// One PrometheusRule the change rewrites: apps now counted and no longer, alerts added
/// and removed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct RuleChange {
    pub name: String,
    pub counts: Vec<String>,
    pub stops_counting: Vec<String>,
    pub alerts_added: Vec<String>,
    pub alerts_removed: Vec<String>,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Monitoring {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<RuleChange>,
}

impl Monitoring {
    pub fn is_empty(&self) -> bool {
        *self == Monitoring::default()
    }
}

/// A PrometheusRule as the comment reads it.
struct Rule {
    name: String,
    apps: BTreeSet<String>,
    alerts: BTreeSet<String>,
}

fn read(text: &str) -> Option<Rule> {
    if !text.lines().any(|l| l == "kind: PrometheusRule") {
        return None;
    }
    let mut lines = text.lines().skip_while(|l| *l != "metadata:");
    let name = lines
        .find_map(|l| l.strip_prefix("  name: "))?
        .trim_matches('"');
    let mut apps = BTreeSet::new();
    let mut after_record = false;
    let mut alerts = BTreeSet::new();
    for line in text.lines().map(str::trim) {
        if let Some(a) = line.strip_prefix("- alert: ") {
            alerts.insert(a.trim_matches('"').to_string());
        }
        if line.contains(BY_ROUTE) && line.starts_with("- record:") {
            after_record = true;
        } else if after_record && let Some((_, rest)) = line.split_once("{app=~\"") {
            let list = rest.split('"').next().unwrap_or_default();
            apps.extend(
                list.split('|')
                    .filter(|a| !a.is_empty())
                    .map(str::to_string),
            );
            after_record = false;
        }
    }
    Some(Rule {
        name: name.to_string(),
        apps,
        alerts,
    })
}

/// The monitoring change among the files that `differ` (each with its text in the base and
/// in the head).
pub(crate) fn monitoring_change(differ: &[Pair]) -> Monitoring {
    // The rules of one side of each pair: the base's, or (`head`) the head's.
    let rules = |head: bool| -> BTreeMap<&PathBuf, Rule> {
        (differ.iter())
            .filter_map(|&(p, old, new)| Some((p, read(if head { new } else { old }?)?)))
            .collect()
    };
    let (was, is) = (rules(false), rules(true));
    let mut out = Monitoring::default();
    for (path, rule) in &is {
        let Some(old) = was.get(path) else {
            out.added.push(rule.name.clone());
            continue;
        };
        let only = |a: &BTreeSet<String>, b: &BTreeSet<String>| a.difference(b).cloned().collect();
        let change = RuleChange {
            name: rule.name.clone(),
            counts: only(&rule.apps, &old.apps),
            stops_counting: only(&old.apps, &rule.apps),
            alerts_added: only(&rule.alerts, &old.alerts),
            alerts_removed: only(&old.alerts, &rule.alerts),
        };
        let nothing = RuleChange {
            name: rule.name.clone(),
            ..RuleChange::default()
        };
        if change != nothing {
            out.changed.push(change);
        }
    }
    out.removed = (was.iter())
        .filter(|(p, _)| !is.contains_key(*p))
        .map(|(_, r)| r.name.clone())
        .collect();
    out
}
