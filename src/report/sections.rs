//! The PR comment's sections on what a change does besides routing, each written only when
//! it has something to say: who gains or loses access to which app, what the deploy kit
//! changes (applied by hand, not by Argo CD), and what monitoring counts and alerts on.

use super::markdown::{BUDGET, Comment, code, code_list, quoted};
use crate::rollout::summary::PrSummary;

pub(super) fn sections(c: &mut Comment, s: &PrSummary) {
    access(c, s);
    deploy_kit(c, s);
    monitoring(c, s);
}

fn access(c: &mut Comment, s: &PrSummary) {
    let a = &s.access;
    if a.is_empty() {
        return;
    }
    c.out.push_str("\n### Access\n\n");
    for (app, change) in &a.apps {
        let mut items: Vec<String> = (change.gained.iter())
            .map(|who| format!("lets in {}", code(who)))
            .collect();
        items.extend((change.lost.iter()).map(|who| format!("no longer lets in {}", code(who))));
        c.list(&format!("App {}", code(app)), &items, BUDGET);
    }
    c.list(
        "Auth policies written",
        &quoted(&a.policies_written),
        BUDGET,
    );
    c.list(
        "Auth policies rewritten",
        &quoted(&a.policies_changed),
        BUDGET,
    );
    c.list(
        "Auth policies deleted",
        &quoted(&a.policies_deleted),
        BUDGET,
    );
}

fn deploy_kit(c: &mut Comment, s: &PrSummary) {
    if s.deploy_kit.is_empty() {
        return;
    }
    c.out.push_str(
        "\n### Deploy kit\n\nArgo CD does not apply the kit, and what this PR syncs needs it: apply these files by hand (`kubectl apply -f`) when the PR merges.\n\n",
    );
    for (path, kind) in &s.deploy_kit {
        c.item(&format!("- {} ({kind})", code(path)), BUDGET);
    }
}

fn monitoring(c: &mut Comment, s: &PrSummary) {
    let m = &s.monitoring;
    if m.is_empty() {
        return;
    }
    c.out.push_str("\n### Monitoring\n\n");
    c.list("PrometheusRules added", &quoted(&m.added), BUDGET);
    c.list("PrometheusRules removed", &quoted(&m.removed), BUDGET);
    for rule in &m.changed {
        let mut items = Vec::new();
        if !rule.counts.is_empty() {
            items.push(format!("now counts {}", code_list(&rule.counts)));
        }
        if !rule.stops_counting.is_empty() {
            items.push(format!(
                "no longer counts {}",
                code_list(&rule.stops_counting)
            ));
        }
        if !rule.alerts_added.is_empty() {
            items.push(format!("alerts added: {}", code_list(&rule.alerts_added)));
        }
        if !rule.alerts_removed.is_empty() {
            items.push(format!(
                "alerts removed: {}",
                code_list(&rule.alerts_removed)
            ));
        }
        c.list(
            &format!("PrometheusRule {}", code(&rule.name)),
            &items,
            BUDGET,
        );
    }
}
