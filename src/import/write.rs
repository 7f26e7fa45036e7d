//! The text of an imported app's declaration: the fields the manifests hold, in the order
//! the declaration reference lists them, each value as a plain scalar where YAML reads it
//! back unchanged and JSON-quoted (valid YAML) where it might not.

use std::fmt::Write as _;

use super::ImportedApp;
use crate::input::app::MatchKind;

/// A scalar as YAML reads it back: plain when it is a safe word or path, else quoted.
fn scalar(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/-_.".contains(&b))
        && !s.starts_with(['-', '.'])
        && !["true", "false", "null", "yes", "no", "on", "off", "~"]
            .contains(&s.to_ascii_lowercase().as_str())
        && s.parse::<f64>().is_err();
    if plain {
        s.to_string()
    } else {
        serde_json::to_string(s).unwrap_or_default()
    }
}

/// Milliseconds as the declaration writes them: `2m`, `30s` or `250ms`.
fn duration(ms: u64) -> String {
    match ms {
        0 => "0ms".into(),
        _ if ms.is_multiple_of(60_000) => format!("{}m", ms / 60_000),
        _ if ms.is_multiple_of(1_000) => format!("{}s", ms / 1_000),
        _ => format!("{ms}ms"),
    }
}

fn list(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|s| scalar(s)).collect();
    format!("[{}]", items.join(", "))
}

/// The declaration of `app`. `from` names the manifest it was imported from.
pub(crate) fn declaration(app: &ImportedApp, from: &str, schema: &str) -> String {
    let mut out = format!(
        "# yaml-language-server: $schema={schema}\n# Imported by `latgen import` from {from}.\n"
    );
    let _ = writeln!(out, "namespace: {}", scalar(&app.namespace));
    let _ = writeln!(
        out,
        "service: {{name: {}, port: {}}}",
        scalar(&app.service),
        app.port
    );
    if let Some(host) = &app.host {
        let _ = writeln!(out, "host: {}", scalar(host));
    }
    let only_root = app.paths == [(MatchKind::Prefix, "/".to_string())];
    if !(app.host.is_some() && only_root) {
        out.push_str(&paths(app));
    }
    if let Some((path, interval)) = &app.health {
        let mut fields = Vec::new();
        if let Some(p) = path {
            fields.push(format!("path: {}", scalar(p)));
        }
        if let Some(i) = interval {
            fields.push(format!("intervalSeconds: {i}"));
        }
        let _ = writeln!(out, "healthCheck: {{{}}}", fields.join(", "));
    }
    out.push_str(&callers(app));
    out.push_str(&kong(app));
    out
}

fn paths(app: &ImportedApp) -> String {
    if app.paths.iter().all(|(k, _)| *k == MatchKind::Prefix) {
        let ps: Vec<String> = app.paths.iter().map(|(_, p)| p.clone()).collect();
        return format!("paths: {}\n", list(&ps));
    }
    let mut out = String::from("paths:\n");
    for (kind, p) in &app.paths {
        let key = if *kind == MatchKind::Exact {
            "exact"
        } else {
            "prefix"
        };
        let _ = writeln!(out, "  - {key}: {}", scalar(p));
    }
    out
}

/// The callers its live auth policy lets in, a field a line (an ARN is long).
fn callers(app: &ImportedApp) -> String {
    if app.callers.is_empty() {
        return String::new();
    }
    let mut out = String::from("callers:\n");
    for c in &app.callers {
        let mut lead = "  - ";
        for (field, values) in c.fields() {
            if !values.is_empty() {
                let _ = writeln!(out, "{lead}{field}: {}", list(values));
                lead = "    ";
            }
        }
    }
    out
}

fn kong(app: &ImportedApp) -> String {
    if app.plugins.is_empty()
        && app.timeouts.is_empty()
        && app.retries.is_none()
        && app.hosts.is_empty()
    {
        return String::new();
    }
    let mut out = String::from("kong:\n");
    if !app.plugins.is_empty() {
        let _ = writeln!(out, "  plugins: {}", list(&app.plugins));
    }
    if !app.timeouts.is_empty() {
        let ts: Vec<String> = (app.timeouts.iter())
            .map(|(k, ms)| format!("{k}: {}", duration(*ms)))
            .collect();
        let _ = writeln!(out, "  timeouts: {{{}}}", ts.join(", "));
    }
    if let Some(r) = app.retries {
        let _ = writeln!(out, "  retries: {r}");
    }
    if !app.hosts.is_empty() {
        let _ = writeln!(out, "  hosts: {}", list(&app.hosts));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_written_in_the_largest_whole_unit() {
        assert_eq!(
            [
                duration(120_000),
                duration(30_000),
                duration(250),
                duration(0)
            ],
            ["2m", "30s", "250ms", "0ms"]
        );
    }

    #[test]
    fn a_scalar_yaml_would_read_as_another_type_is_quoted() {
        assert_eq!(scalar("/shop"), "/shop");
        assert_eq!(scalar("on"), "\"on\"");
        assert_eq!(scalar("8080"), "\"8080\"");
        assert_eq!(scalar("/a b"), "\"/a b\"");
    }
}
