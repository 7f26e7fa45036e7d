//! Every finding code latgen can report, with its default severity and a one-line summary.
//! Codes are stable: they are part of the interface (SARIF rule ids, JSON, suppressions).

use crate::diag::Severity;

pub struct Code {
    pub id: &'static str,
    pub severity: Severity,
    pub summary: &'static str,
}

const fn e(id: &'static str, summary: &'static str) -> Code {
    Code {
        id,
        severity: Severity::Error,
        summary,
    }
}

const fn w(id: &'static str, summary: &'static str) -> Code {
    Code {
        id,
        severity: Severity::Warning,
        summary,
    }
}

pub const CODES: &[Code] = &[
    // Reading the inputs.
    e("io-error", "a file or folder cannot be read or written"),
    e(
        "symlink-loop",
        "a symbolic link under apps/ loops back to a folder above it",
    ),
    e("not-utf8", "a file is not UTF-8 text"),
    e("file-too-large", "a declaration is larger than 1 MiB"),
    e("empty-file", "a declaration file declares nothing"),
    e(
        "multiple-documents",
        "a declaration file holds more than one YAML document",
    ),
    e("not-a-mapping", "a declaration is not a mapping of fields"),
    e("yaml-syntax", "the YAML cannot be parsed"),
    e(
        "unknown-field",
        "a field latgen does not know (often a typo)",
    ),
    e("missing-field", "a required field is missing"),
    e("duplicate-key", "a field is given twice"),
    e("invalid-type", "a field has the wrong shape"),
    e("invalid-value", "a field's value is out of its range"),
    e("invalid-config", "a setting in latgen.yaml is not usable"),
    e("invalid-lock", "latgen.lock cannot be used"),
    // One declaration.
    e(
        "invalid-name",
        "an app name is not a DNS-1123 label of at most 55 characters",
    ),
    e(
        "reserved-name",
        "an app name has the form of a shared group's name",
    ),
    e("invalid-namespace", "a namespace is not a DNS-1123 label"),
    e("invalid-service", "a Service name is not a DNS-1123 label"),
    e("invalid-port", "a port is outside 1..65535"),
    e(
        "invalid-host",
        "a host is not a lowercase DNS name (no IP, port or wildcard)",
    ),
    e("invalid-path", "a path Gateway API or Lattice refuses"),
    e(
        "path-too-long",
        "a path longer than the 128 characters a Lattice rule takes",
    ),
    e(
        "trailing-slash",
        "a path ends with `/`, so Kong and Lattice miss the bare path",
    ),
    w(
        "kong-regex-path",
        "a prefix holds characters Kong's router reads as regex",
    ),
    e("no-paths", "`paths` is empty"),
    e("duplicate-path", "an app lists a path twice"),
    e("invalid-group", "a `group` pin that cannot be honoured"),
    e(
        "invalid-health-check",
        "a health check outside what Lattice takes",
    ),
    // Across declarations.
    e("duplicate-app", "two declarations have the same app name"),
    e("duplicate-host", "two apps are served on the same host"),
    e(
        "path-conflict",
        "two apps claim the same match on the same host",
    ),
    e(
        "invalid-lattice-name",
        "the controller's Lattice service name for a route is not valid",
    ),
    e(
        "lattice-name-collision",
        "two routes get the same truncated Lattice service name",
    ),
    // Groups and quotas.
    e(
        "app-too-big",
        "an app has more paths than a group holds rules",
    ),
    e(
        "pinned-group-full",
        "a pinned group has no room for the app",
    ),
    e(
        "pin-conflict",
        "an app is pinned to a group other than the one it is in: move it instead",
    ),
    e(
        "group-over-quota",
        "a route holds more rules than the Lattice rule quota",
    ),
    e(
        "crd-rule-limit",
        "a route holds more than the HTTPRoute CRD's 16 rules",
    ),
    e(
        "priority-limit",
        "more rules than Lattice's 100 rule priorities",
    ),
    e(
        "target-group-quota",
        "a route reaches more backends than the target-group quota",
    ),
    w(
        "group-at-quota",
        "a group is at its rule quota: a path edit in it would fail",
    ),
    e("isolation-conflict", "two `isolate` apps in one group"),
    e(
        "rps-budget",
        "a group's declared peak rps is over the per-service budget",
    ),
    e(
        "nested-prefix",
        "two apps' prefixes nest in one Lattice route: Lattice misroutes the outer app's traffic",
    ),
    // The manifests as committed.
    e(
        "rule-shadowed",
        "an earlier Lattice rule takes a later rule's traffic (string-prefix, first match)",
    ),
    w(
        "unreachable-rule",
        "a Lattice rule can never match: an earlier rule to the same backend covers it",
    ),
    e(
        "route-unresolved",
        "a Kong route does not reach a Lattice rule through its bridge and Host",
    ),
    e(
        "route-mismatch",
        "a Kong route's paths reach a Service other than its app's",
    ),
    e(
        "stale-output",
        "generated/ differs from what `latgen render` writes",
    ),
    e(
        "lock-stale",
        "latgen.lock differs from what `latgen render` writes",
    ),
    e(
        "unsafe-rollout",
        "one side of the change could go live first and break routing",
    ),
    w(
        "priority-churn",
        "a change renumbers more than 5 rules of one route",
    ),
    // Rendering and writing.
    e(
        "template-error",
        "a template cannot be compiled or rendered",
    ),
    e(
        "rendered-invalid",
        "a template rendered an object that is not what latgen meant",
    ),
    e(
        "invalid-output",
        "the output folder is a file or overlaps apps/",
    ),
    e("git-error", "the base revision cannot be read"),
    e(
        "move-refused",
        "a move that would break a quota or names no app or group",
    ),
];

pub fn lookup(id: &str) -> Option<&'static Code> {
    CODES.iter().find(|c| c.id == id)
}

/// Codes that mean "latgen could not do its job" (exit 2) rather than "the inputs have a
/// problem" (exit 1).
pub fn is_operational(id: &str) -> bool {
    matches!(
        id,
        "io-error" | "symlink-loop" | "invalid-output" | "git-error"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_kebab_case() {
        let mut seen = std::collections::BTreeSet::new();
        for c in CODES {
            assert!(seen.insert(c.id), "{} twice", c.id);
            assert!(
                c.id.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "{}",
                c.id
            );
        }
    }

    #[test]
    fn every_code_used_in_the_source_is_registered() {
        let src = concat!(
            include_str!("load.rs"),
            include_str!("validate.rs"),
            include_str!("plan.rs"),
            include_str!("render.rs"),
            include_str!("write.rs"),
            include_str!("lock.rs"),
            include_str!("platform.rs"),
            include_str!("check.rs"),
            include_str!("cli.rs"),
        );
        for piece in src
            .split("Diagnostic::error(\"")
            .chain(src.split("Diagnostic::warning(\""))
            .skip(1)
        {
            let id = piece.split('"').next().unwrap();
            if id.contains('{') || id.contains(' ') {
                continue;
            }
            assert!(lookup(id).is_some(), "code `{id}` is not in CODES");
        }
    }
}
