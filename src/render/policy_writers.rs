//! The writers of the policies latgen attaches to a Lattice route: its IAMAuthPolicy
//! (`auth.mode: iam`) and its AccessLogPolicy (`observability.accessLogs`), one per route
//! each. Each follows its template line by line, as the other writers do.

use std::fmt::Write as _;

use super::builtin::{line, metadata};
use crate::render::monitoring::AccessLogCtx;
use crate::render::objects::AuthPolicyCtx;
use crate::render::readback::Kind;

/// The label of a group route's policy (the template's `{% if group %}`: not for 0).
fn group_label(w: &mut String, group: Option<u32>) {
    if let Some(group) = group.filter(|&g| g != 0) {
        let _ = writeln!(w, "    latgen.dev/group: \"{group}\"");
    }
}

/// A policy's `targetRef` (under `spec:`): the route it is attached to.
fn target_ref(w: &mut String, route: &str) {
    w.push_str("  targetRef:\n    group: gateway.networking.k8s.io\n    kind: HTTPRoute\n");
    line(w, "    name: ", route);
}

/// `lattice/iam-auth-policy.yaml.j2`.
pub(super) fn iam_auth_policy(w: &mut String, c: &AuthPolicyCtx) {
    w.push_str(concat!(
        "# Who may call the Lattice service of the route below: each app's callers, on\n",
        "# that app's requests only, one statement a line. Pruned last: deleting it sets\n",
        "# the service's auth type to NONE, open to every caller.\n",
    ));
    metadata(w, Kind::IamAuthPolicy, &c.name, c.namespace);
    group_label(w, c.group);
    w.push_str("  annotations:\n    argocd.argoproj.io/sync-options: PruneLast=true\nspec:\n");
    target_ref(w, &c.route);
    w.push_str("  policy: |-\n");
    // The template gets the policy's lines as `str::lines` cuts them.
    for l in c.policy.lines() {
        let _ = writeln!(w, "    {l}");
    }
}

/// `lattice/access-log-policy.yaml.j2`.
pub(super) fn access_log_policy(w: &mut String, c: &AccessLogCtx) {
    w.push_str(concat!(
        "# Access logs of the Lattice service of the route below (AWS Gateway API\n",
        "# Controller): each request, with the path that names its app.\n",
    ));
    metadata(w, Kind::AccessLogPolicy, &c.name, c.namespace);
    group_label(w, c.group);
    w.push_str("spec:\n  destinationArn: >-\n");
    let _ = writeln!(w, "    {}", c.destination);
    target_ref(w, &c.route);
}
