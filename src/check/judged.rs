//! The findings as the change shows them: a finding about two declarations placed on the
//! one the change touched, a finding another supersedes dropped, and what a rollout step
//! leaves for its later steps set apart.

use crate::manifest::tree::Tree;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::route_findings::{shadowing, unnamed_header_rules};
use super::{CheckOptions, rollout};
use crate::diag::codes::{Code, Severity};
use crate::diag::{Diagnostic, Diagnostics, Sources};
use latgen_sim::routing::Network;

/// The findings as the change shows them: placed on the files it touched, and, for a step
/// short of its rollout's target, without what the step leaves for a later one to finish
/// (rules live before the Kong routes that reach them), which come back apart.
pub(super) fn judged_as_change(
    diags: Diagnostics,
    opts: &CheckOptions,
    (states, at_step): (
        Option<&rollout::ChangeStates>,
        &Option<crate::rollout::summary::Progress>,
    ),
    sources: &Sources,
) -> (Diagnostics, Diagnostics) {
    let mut kept = drop_superseded(diags);
    if let Some(rev) = &opts.base_commit {
        kept = on_changed_file(kept, rev, sources);
    }
    let target = states
        .filter(|_| at_step.as_ref().is_some_and(|p| p.step < p.of))
        .map(|s| &s.rendered);
    match target {
        Some(target) => split_transient(kept, target),
        None => (kept, Diagnostics::new()),
    }
}

/// A finding about two declarations (a path or a host both claim, a name both take) is
/// placed on the one the change touched, where the PR's author looks (and where a GitHub
/// annotation shows), not on the other app's unchanged file.
fn on_changed_file(diags: Diagnostics, rev: &str, sources: &Sources) -> Diagnostics {
    let codes = [Code::PathConflict, Code::DuplicateHost, Code::DuplicateApp];
    // Each declaration is asked of Git once, however many findings name it.
    let files: BTreeSet<&Path> = (diags.iter())
        .filter(|d| codes.contains(&d.code))
        .flat_map(|d| d.span.iter().chain(d.related.iter().map(|l| &l.span)))
        .map(|s| s.file.as_path())
        .collect();
    let changed: BTreeSet<PathBuf> = (files.into_iter())
        .filter(|file| match crate::rollout::git::read_file_at(file, rev) {
            Ok(Some(old)) => sources.text(file) != Some(old.as_str()),
            Ok(None) => true,
            Err(_) => false,
        })
        .map(Path::to_path_buf)
        .collect();
    let mut out = Diagnostics::new();
    for mut d in diags {
        if codes.contains(&d.code)
            && let (Some(span), Some(other)) = (d.span.clone(), d.related.first_mut())
            && !changed.contains(&span.file)
            && changed.contains(&other.span.file)
        {
            d.span = Some(std::mem::replace(&mut other.span, span));
        }
        out.push(d);
    }
    out
}

/// The findings of a rollout step that its target does not have and that a step leaves
/// behind by design: rules that go live before the Kong routes that reach them, or stay
/// until Kong has moved off them (`unreachable-rule`), and the auth statements that go
/// with them (`auth-mismatch` against the target's declarations: the rollout judge holds
/// each state of the step to the declarations before or after, and staleness holds the
/// committed step to the one `render --base` writes). The target's own findings are
/// found again on its routing model; a finding is the same when its code, file and
/// message are, rule numbers aside (a step's rules are numbered differently).
fn split_transient(diags: Diagnostics, target: &Network) -> (Diagnostics, Diagnostics) {
    let transient_codes = [Code::UnreachableRule, Code::AuthMismatch];
    if !diags.iter().any(|d| transient_codes.contains(&d.code)) {
        return (diags, Diagnostics::new());
    }
    let mut at_target = shadowing(target);
    at_target.extend(unnamed_header_rules(target));
    let key = |d: &Diagnostic| {
        let file = d.span.as_ref().map(|s| s.file.clone());
        (d.code, file, without_rule_numbers(&d.message))
    };
    let lasting: BTreeSet<_> = at_target.iter().map(key).collect();
    let (mut kept, mut transient) = (Diagnostics::new(), Diagnostics::new());
    for d in diags {
        if transient_codes.contains(&d.code) && !lasting.contains(&key(&d)) {
            transient.push(d);
        } else {
            kept.push(d);
        }
    }
    (kept, transient)
}

/// `rule 9 (x: a) is never reached` → `rule (x: a) is never reached`.
fn without_rule_numbers(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(i) = rest.find("rule ") {
        out.push_str(&rest[..i + "rule".len()]);
        let after = &rest[i + "rule ".len()..];
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        rest = if digits > 0 {
            &after[digits..]
        } else {
            &rest[i + "rule".len()..]
        };
    }
    out.push_str(rest);
    out
}

/// A Kong route that is broken because its half went first is an ordering problem: the
/// unsafe-rollout finding says which half to ship first, so it stands alone. A pair of
/// order-dependent rules the change creates is an error; the committed tree's warning about
/// the same pair goes.
fn drop_superseded(diags: Diagnostics) -> Diagnostics {
    let created: BTreeSet<String> = diags
        .iter()
        .filter(|d| d.code == Code::OrderDependentGroup && d.severity == Severity::Error)
        .map(|d| d.message.clone())
        .collect();
    let reordered: BTreeSet<PathBuf> = diags
        .iter()
        .filter(|d| d.code == Code::UnsafeRollout)
        .filter_map(|d| d.span.as_ref().map(|s| s.file.clone()))
        .collect();
    let mut kept = Diagnostics::new();
    for d in diags {
        let superseded = d.code == Code::RouteUnresolved
            && d.span.as_ref().is_some_and(|s| reordered.contains(&s.file))
            || d.code == Code::OrderDependentGroup
                && d.severity == Severity::Warning
                && created.contains(&d.message);
        if !superseded {
            kept.push(d);
        }
    }
    kept.sort();
    kept
}

/// Keeps the text of the committed files the findings point into, to show their lines.
pub(super) fn quote_committed(
    diags: &Diagnostics,
    committed: &Tree,
    out_dir: &Path,
    sources: &mut Sources,
) {
    for span in diags
        .iter()
        .flat_map(|d| d.span.iter().chain(d.related.iter().map(|l| &l.span)))
    {
        if let Ok(rel) = span.file.strip_prefix(out_dir)
            && let Some(text) = committed.get(rel)
        {
            sources.insert(span.file.clone(), text.to_string());
        }
    }
}
