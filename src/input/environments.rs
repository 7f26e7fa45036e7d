//! Environments: `environments/<name>.yaml` beside `latgen.yaml`, each an overlay of the
//! project settings for one environment (staging, production), with its own lock
//! (`locks/<name>.lock`) and output (`generated/<name>/`). An overlay holds only what
//! differs: its mappings merge into latgen.yaml's, key by key, and any other value (a
//! number, a text, a list) replaces latgen.yaml's. A project without the folder has no
//! environments and reads exactly as before.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::config::Config;

/// The environment a project's settings are read for: its name, and its overlay's file and
/// text, where findings about a setting the overlay gives point.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Environment {
    pub name: String,
    pub overlay: PathBuf,
    pub text: String,
}

/// The folder of overlays, beside latgen.yaml.
pub(crate) const FOLDER: &str = "environments";
/// The folder of the environments' locks, beside latgen.yaml.
pub(crate) const LOCKS: &str = "locks";

/// The environments of the project at `root`: the names of `environments/*.yaml`, sorted.
/// A name that cannot name a folder and a suffix (`generated/<name>/`) is refused.
pub(crate) fn names(root: &Path) -> Result<Vec<String>, Diagnostic> {
    let dir = root.join(FOLDER);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut names = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        match path.extension().and_then(|e| e.to_str()) {
            Some("yaml") => {}
            // Read as an environment it is not: a project that would silently have one
            // environment fewer than its files say.
            Some("yml") => {
                return Err(Diagnostic::error(
                    Code::InvalidConfig,
                    format!(
                        "{} is not read: environments are `<name>.yaml` files",
                        path.display()
                    ),
                )
                .at(Span::file(&path))
                .help("rename it to end in .yaml"));
            }
            _ => continue,
        }
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !is_name(&name) {
            return Err(Diagnostic::error(
                Code::InvalidConfig,
                format!("`{name}` cannot name an environment"),
            )
            .at(Span::file(&path))
            .help("name the file with lowercase letters, digits and `-`, starting with a letter, at most 20 characters, not `all` (e.g. `staging.yaml`)"));
        }
        names.push(name);
    }
    names.sort();
    Ok(names)
}

/// Lowercase letters, digits and `-`, starting with a letter, at most 20 characters: the
/// name becomes a folder and a suffix of names in the clusters.
fn is_name(name: &str) -> bool {
    name.len() <= 20
        && name != "all"
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && !name.ends_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// Where one environment's files are in the project at `root`.
pub(crate) fn overlay_path(root: &Path, name: &str) -> PathBuf {
    root.join(FOLDER).join(format!("{name}.yaml"))
}

pub(crate) fn lock_path(root: &Path, name: &str) -> PathBuf {
    root.join(LOCKS).join(format!("{name}.lock"))
}

/// How messages name the lock of environment `env`: `latgen.lock`, or `locks/<env>.lock`.
pub(crate) fn lock_shown(env: Option<&str>) -> String {
    env.map_or("latgen.lock".to_string(), |e| format!("{LOCKS}/{e}.lock"))
}

/// ` --env NAME` for the commands a message suggests, or nothing without environments.
pub(crate) fn env_flag(env: Option<&str>) -> String {
    env.map_or(String::new(), |e| format!(" --env {e}"))
}

/// The settings of environment `name`: latgen.yaml's text with the overlay's merged in.
/// Problems in the overlay are reported at their place in it when the overlay alone shows
/// them (a field that does not exist, a value of the wrong type), else at the overlay file.
pub(crate) fn merged(
    name: &str,
    base: Option<&str>,
    overlay_file: &Path,
    overlay: &str,
    diags: &mut Diagnostics,
) -> Option<Config> {
    // The overlay read alone as settings: every field is there except those latgen.yaml
    // gives (a missing field is no problem of the overlay's).
    let mut alone = Diagnostics::new();
    let _: Option<Config> = crate::input::config::parse(overlay_file, overlay, &mut alone);
    let found: Vec<Diagnostic> = alone
        .into_iter()
        .filter(|d| d.code != Code::MissingField)
        .collect();
    if !found.is_empty() {
        diags.extend(found.into_iter().collect());
        return None;
    }
    let read = |text: &str| -> Result<Value, String> {
        match serde_saphyr::from_str::<Option<Value>>(text) {
            Ok(v) => Ok(v.unwrap_or(Value::Object(Default::default()))),
            Err(e) => Err(e.without_snippet().to_string()),
        }
    };
    let fail = |message: String, diags: &mut Diagnostics| {
        diags.push(
            Diagnostic::error(Code::InvalidConfig, message)
                .at(Span::file(overlay_file))
                .help("an overlay holds the settings that differ from latgen.yaml's, in latgen.yaml's shape (`latgen schema config`)"),
        );
        None
    };
    let mut value = match read(base.unwrap_or("")) {
        Ok(v) => v,
        // latgen.yaml's own problem is reported where latgen.yaml is read.
        Err(_) => return None,
    };
    let extra = match read(overlay) {
        Ok(o) => o,
        Err(e) => return fail(e, diags),
    };
    let names_project = extra.pointer("/deploy/project").is_some();
    merge(&mut value, extra);
    // Each environment's Argo CD Applications and AppProject are its own unless its overlay
    // names them: `<project>-<env>` (`latgen-staging`), not latgen.yaml's name for every
    // environment, which one Argo CD would hold once (the last sync wins). `latgen init`
    // writes `project: latgen` into latgen.yaml, so its presence there is no choice.
    if let Some(deploy) = value.get_mut("deploy").and_then(Value::as_object_mut)
        && !names_project
    {
        let base = deploy
            .get("project")
            .and_then(Value::as_str)
            .unwrap_or("latgen");
        let project = format!("{base}-{name}");
        deploy.insert("project".into(), Value::String(project));
    }
    // The merged settings are read by the settings' own reader, from their JSON text (JSON
    // is YAML): a plain `111122223333` where a text is taken reads as it does in
    // latgen.yaml. Its places are the JSON's, so a problem is placed at the overlay.
    let text = serde_json::to_string(&value).unwrap_or_default();
    let mut found = Diagnostics::new();
    match crate::input::config::parse(overlay_file, &text, &mut found) {
        Some(mut config) => {
            config.environment = Some(Environment {
                name: name.to_string(),
                overlay: overlay_file.to_path_buf(),
                text: overlay.to_string(),
            });
            Some(config)
        }
        None => {
            let why = found
                .iter()
                .next()
                .map_or(String::new(), |d| d.message.clone());
            fail(
                format!("latgen.yaml with this overlay merged in is not valid settings: {why}"),
                diags,
            )
        }
    }
}

/// Merges `overlay` into `base`: mappings key by key, anything else replaced.
fn merge(base: &mut Value, overlay: Value) {
    match (base, overlay) {
        (Value::Object(b), Value::Object(o)) => {
            for (key, value) in o {
                match b.get_mut(&key) {
                    Some(slot) => merge(slot, value),
                    None => {
                        b.insert(key, value);
                    }
                }
            }
        }
        (slot, value) => *slot = value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mappings_merge_and_lists_replace() {
        let mut base: Value = serde_json::json!({"quotas": {"rulesPerService": 10}, "kong": {"hostnames": ["a"], "namespace": "kong"}});
        merge(
            &mut base,
            serde_json::json!({"kong": {"hostnames": ["b"]}, "quotas": {"reservedRules": 1}}),
        );
        assert_eq!(
            base,
            serde_json::json!({"quotas": {"rulesPerService": 10, "reservedRules": 1}, "kong": {"hostnames": ["b"], "namespace": "kong"}})
        );
    }

    #[test]
    fn environment_names_are_folder_and_suffix_safe() {
        assert!(is_name("staging"));
        assert!(is_name("prod-eu1"));
        assert!(!is_name("Prod"));
        assert!(!is_name("1st"));
        assert!(!is_name("staging-"));
        // `--env all` means every environment.
        assert!(!is_name("all"));
        assert!(!is_name("a-very-long-environment-name"));
    }

    #[test]
    fn an_overlay_field_that_does_not_exist_is_placed_in_the_overlay() {
        let mut diags = Diagnostics::new();
        let config = merged(
            "staging",
            Some("quotas: {rulesPerService: 10}\n"),
            Path::new("environments/staging.yaml"),
            "quotas:\n  rulesPerServise: 20\n",
            &mut diags,
        );
        assert!(config.is_none());
        let d = diags.iter().next().unwrap();
        assert_eq!(d.code, Code::UnknownField);
        assert_eq!(d.span.as_ref().unwrap().line, 2);
    }

    #[test]
    fn an_overlay_changes_only_what_it_names() {
        let mut diags = Diagnostics::new();
        let config = merged(
            "staging",
            Some("quotas: {rulesPerService: 10}\nlattice: {namespace: groups}\n"),
            Path::new("environments/production.yaml"),
            "quotas: {rulesPerService: 50}\n",
            &mut diags,
        )
        .unwrap();
        assert!(diags.is_empty());
        assert_eq!(config.quotas.rules_per_service, 50);
        assert_eq!(config.lattice.namespace, "groups");
    }
}
