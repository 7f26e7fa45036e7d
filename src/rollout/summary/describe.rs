//! What a PR does, worked out from the two output trees: apps and files changed, services and their cost before and after, and the rollout step.

use super::apps;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::manifest::layout::Side;
use crate::manifest::layout::side_of;
use crate::manifest::tree::{Docs, Pair, Tree, state};
use crate::plan::rebalance::monthly_cost::HOURS_PER_MONTH;
use latgen_sim::routing::Network;

use apps::{AppChange, app_changes};

/// Files added, changed and removed on one side.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct FileCounts {
    pub added: Vec<PathBuf>,
    pub changed: Vec<PathBuf>,
    pub removed: Vec<PathBuf>,
}

impl FileCounts {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.changed.is_empty() && self.removed.is_empty()
    }
}

/// Where the PR stands in a rollout of several PRs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Progress {
    /// This PR's step, counted from 1.
    pub step: usize,
    /// How many steps the rollout takes.
    pub of: usize,
    /// What to run once this PR is merged and live, or None when it completes the change.
    pub next: Option<String>,
}

/// The summary of one PR.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PrSummary {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// App, the Lattice service its traffic went to, and the one it goes to.
    pub moved: Vec<(String, String, String)>,
    /// What the change does to each app it touches besides adding, removing or moving it
    /// (paths, dispatch, Lattice rules), by app name.
    pub apps: BTreeMap<String, AppChange>,
    /// Lattice services (routes) the change creates, and those it deletes.
    pub services_added: Vec<String>,
    pub services_removed: Vec<String>,
    pub lattice: FileCounts,
    pub kong: FileCounts,
    pub services_before: usize,
    pub services_after: usize,
    pub monthly_before: f64,
    pub monthly_after: f64,
    pub progress: Option<Progress>,
    /// The findings this step leaves for a later step of its rollout to resolve, by code
    /// (not reported as findings of the step).
    pub transient: Vec<crate::diag::codes::Code>,
    /// The shared groups' throughput budget use after the change, fullest first.
    pub budgets: Vec<crate::plan::rebalance::monthly_cost::BudgetUse>,
    /// Previews (`<app>/<preview>`, host) the change adds, and those it removes.
    pub previews_added: Vec<(String, String)>,
    pub previews_removed: Vec<(String, String)>,
    /// Who gained or lost access to which app, and the auth policies written or deleted.
    pub access: super::access_change::Access,
    /// The PrometheusRules added, removed or changed.
    pub monitoring: super::monitoring_change::Monitoring,
    /// The deploy kit's files the change adds or changes (`deploy/…`, "added" or
    /// "changed"): applied by hand, not by Argo CD.
    pub deploy_kit: Vec<(String, &'static str)>,
}

/// The app each Kong route serves, and the Lattice service domain its requests go to.
fn kong_targets(net: &Network) -> BTreeMap<String, String> {
    net.kong
        .iter()
        .filter(|r| r.preview.is_none())
        .map(|r| {
            let app = r.app_name().to_string();
            let to = r
                .rewrite_host
                .clone()
                .or_else(|| r.hostnames.first().cloned())
                .unwrap_or_default();
            (app, to)
        })
        .collect()
}

/// Every preview a Kong route serves, as `<app>/<preview>` with its host.
fn previews(net: &Network) -> BTreeMap<String, String> {
    (net.kong.iter())
        .filter_map(|r| {
            let preview = r.preview.as_deref()?;
            let host = r.hostnames.first().cloned().unwrap_or_default();
            Some((format!("{}/{preview}", r.app_name()), host))
        })
        .collect()
}

/// Every Lattice route, by name.
fn services(net: &Network) -> BTreeSet<String> {
    net.lattice.iter().map(|r| r.name.clone()).collect()
}

/// The Lattice service that answers on `domain`, by route name, or the domain itself.
fn service_name(net: &Network, domain: &str) -> String {
    net.lattice_service(domain)
        .map_or_else(|| domain.to_string(), |r| r.name.clone())
}

fn file_counts(differ: &[Pair], side: Side) -> FileCounts {
    let mut c = FileCounts::default();
    for (p, old, new) in differ.iter().filter(|(p, _, _)| side_of(p) == side) {
        let p = PathBuf::clone(p);
        match (old, new) {
            (None, _) => c.added.push(p),
            (_, None) => c.removed.push(p),
            _ => c.changed.push(p),
        }
    }
    c
}

/// The summary of the change from `base` to `head` (manifests by path under the output
/// folder), with services priced at `service_hour_usd`; a Lattice rule is told as the
/// app of `apps` it serves.
pub(crate) fn summarize(
    base: &Tree,
    head: &Tree,
    (service_hour_usd, apps): (f64, &[crate::input::app::App]),
    progress: Option<Progress>,
) -> PrSummary {
    let (b, h) = (Docs::read(base), Docs::read(head));
    let states = (&state(&b, &b), &state(&h, &h));
    summarize_states(base, head, states, (service_hour_usd, apps), progress)
}

/// [`summarize`] with the trees already read into routing states (base, head).
pub(crate) fn summarize_states(
    base: &Tree,
    head: &Tree,
    (before, after): (&Network, &Network),
    (service_hour_usd, apps): (f64, &[crate::input::app::App]),
    progress: Option<Progress>,
) -> PrSummary {
    // The two states' apps and backends, and the files that changed (both trees walked
    // side by side: looking each of tens of thousands of paths up in the other tree was a
    // tenth of `check --base`), are found in parallel.
    let ((((was, old), (is, new)), changes), differ) = rayon::join(
        || {
            rayon::join(
                || {
                    rayon::join(
                        || (kong_targets(before), services(before)),
                        || (kong_targets(after), services(after)),
                    )
                },
                || app_changes(before, after, apps),
            )
        },
        || crate::manifest::tree::differing(base, head).0,
    );
    let changed: BTreeSet<PathBuf> = differ.iter().map(|(p, _, _)| PathBuf::clone(p)).collect();
    let moved = is
        .iter()
        .filter_map(|(app, to)| {
            let from = was.get(app)?;
            let (from, to) = (service_name(before, from), service_name(after, to));
            (from != to).then(|| (app.clone(), from, to))
        })
        .collect();
    let price = service_hour_usd * HOURS_PER_MONTH;
    let (had, has) = (previews(before), previews(after));
    let only = |a: &BTreeMap<String, String>, b: &BTreeMap<String, String>| {
        (a.iter())
            .filter(|(k, _)| !b.contains_key(*k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    PrSummary {
        previews_added: only(&has, &had),
        previews_removed: only(&had, &has),
        added: is
            .keys()
            .filter(|a| !was.contains_key(*a))
            .cloned()
            .collect(),
        removed: was
            .keys()
            .filter(|a| !is.contains_key(*a))
            .cloned()
            .collect(),
        moved,
        apps: changes,
        services_added: new.difference(&old).cloned().collect(),
        services_removed: old.difference(&new).cloned().collect(),
        lattice: file_counts(&differ, Side::Lattice),
        kong: file_counts(&differ, Side::Kong),
        services_before: before.lattice.len(),
        services_after: after.lattice.len(),
        monthly_before: before.lattice.len() as f64 * price,
        monthly_after: after.lattice.len() as f64 * price,
        access: super::access_change::access_change(before, after, &changed, apps),
        monitoring: super::monitoring_change::monitoring_change(&differ),
        progress,
        transient: Vec::new(),
        budgets: Vec::new(),
        deploy_kit: Vec::new(),
    }
}
