//! The KongPlugins and KongClusterPlugins the Kong routes name, as `kong.pluginFiles`
//! defines them, and what is wrong with a route's plugins.
//!
//! KIC turns a route's URLRewrite hostname and RequestHeaderModifier into one
//! request-transformer plugin on the Kong route. Kong runs one plugin of a name per route,
//! so a request-transformer KongPlugin of the user's own on that route means one of the two
//! configurations silently stops applying (KIC issue #6390): the Host rewrite that picks
//! the Lattice service, or the dispatch header that picks the app. Any other plugin
//! (rate-limiting, CORS, auth) runs beside it and is no concern of latgen's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::config::Config;
use crate::input::confine::Project;
use crate::manifest::routing::{KongRoute, Network};

/// The plugin KIC makes of a route's filters.
const REQUEST_TRANSFORMER: &str = "request-transformer";
/// A plugin definition file larger than this is refused (a KongPlugin is a few lines).
const MAX_PLUGIN_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// One plugin definition: what it is and where.
#[derive(Debug, Clone)]
pub(crate) struct PluginDef {
    /// The Kong plugin it configures (`plugin:`), e.g. `rate-limiting`.
    pub plugin: String,
    /// Header names its configuration adds, sets, renames or removes, lower case.
    pub headers: Vec<String>,
    pub file: PathBuf,
    pub line: u32,
}

/// The definitions read from `kong.pluginFiles`: KongPlugins by (namespace, name),
/// KongClusterPlugins by name.
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    namespaced: BTreeMap<(String, String), PluginDef>,
    cluster: BTreeMap<String, PluginDef>,
    /// A file could not be read: a plugin not found may be in it, so none is reported
    /// missing (the unreadable file is the finding).
    incomplete: bool,
}

impl Catalog {
    /// The plugin KIC finds for `name` on a route in `namespace`: the KongPlugin there,
    /// else the KongClusterPlugin (`getKongPluginOrKongClusterPlugin` in KIC's
    /// `internal/dataplane/kongstate/plugin.go`).
    pub fn find(&self, namespace: &str, name: &str) -> Option<&PluginDef> {
        let key = (namespace.to_string(), name.to_string());
        self.namespaced.get(&key).or_else(|| self.cluster.get(name))
    }

    /// Reads the files and folders `kong.pluginFiles` names (relative to the project
    /// folder, confined to it); None when it names none. A file or document it cannot
    /// read is a finding, and the rest is read.
    pub fn read(root: &Path, config: &Config, diags: &mut Diagnostics) -> Option<Catalog> {
        if config.kong.plugin_files.is_empty() {
            return None;
        }
        let project = Project::new(root);
        let mut catalog = Catalog::default();
        for entry in &config.kong.plugin_files {
            let path = root.join(entry);
            let files = if path.is_dir() {
                crate::input::find_declarations(&path, &project, diags)
            } else {
                vec![path]
            };
            for file in files {
                catalog.read_file(&project, &file, diags);
            }
        }
        Some(catalog)
    }

    fn read_file(&mut self, project: &Project, file: &Path, diags: &mut Diagnostics) {
        let text = match project.read_at_most(file, MAX_PLUGIN_FILE_BYTES) {
            Ok(Some(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
            Ok(None) => {
                self.incomplete = true;
                diags.push(
                    Diagnostic::error(
                        Code::InvalidConfig,
                        format!("kong.pluginFiles: {} does not exist", file.display()),
                    )
                    .help("name files or folders, relative to the project folder, that hold your KongPlugins and KongClusterPlugins"),
                );
                return;
            }
            Err(d) => {
                self.incomplete = true;
                return diags.push(d);
            }
        };
        let docs: Vec<PluginDoc> = match serde_saphyr::from_multiple(&text) {
            Ok(docs) => docs,
            Err(e) => {
                self.incomplete = true;
                diags.push(
                    Diagnostic::error(Code::YamlSyntax, e.without_snippet().to_string())
                        .at(Span::file(file))
                        .help(
                            "kong.pluginFiles names files of Kubernetes manifests (YAML or JSON)",
                        ),
                );
                return;
            }
        };
        // Named in messages as the user wrote it in latgen.yaml: from the project folder.
        let shown = file.strip_prefix(project.root()).unwrap_or(file);
        for doc in docs {
            self.add(shown, doc);
        }
    }

    fn add(&mut self, file: &Path, doc: PluginDoc) {
        if doc.kind.as_deref() == Some("List") {
            for item in doc.items {
                self.add(file, item);
            }
            return;
        }
        let (Some(kind), Some(meta)) = (doc.kind.as_deref(), doc.metadata) else {
            return;
        };
        let def = PluginDef {
            plugin: doc.plugin.unwrap_or_default(),
            headers: doc.config.as_ref().map(touched_headers).unwrap_or_default(),
            file: file.to_path_buf(),
            line: meta.name.referenced.line() as u32,
        };
        let name = meta.name.value;
        match kind {
            "KongPlugin" => {
                let namespace = meta.namespace.unwrap_or_else(|| "default".into());
                self.namespaced.entry((namespace, name)).or_insert(def);
            }
            "KongClusterPlugin" => {
                self.cluster.entry(name).or_insert(def);
            }
            _ => {}
        }
    }
}

/// What is read of a manifest: enough to know a plugin and what it changes.
#[derive(Deserialize)]
struct PluginDoc {
    kind: Option<String>,
    metadata: Option<Meta>,
    plugin: Option<String>,
    config: Option<serde_json::Value>,
    #[serde(default)]
    items: Vec<PluginDoc>,
}

#[derive(Deserialize)]
struct Meta {
    name: Spanned<String>,
    namespace: Option<String>,
}

/// The header names a request-transformer configuration touches: `remove`, `rename`,
/// `replace`, `add` and `append` each list `headers` (`name:value`, or `old:new` for a
/// rename; names alone for `remove`).
fn touched_headers(config: &serde_json::Value) -> Vec<String> {
    let mut names = Vec::new();
    for action in ["remove", "rename", "replace", "add", "append"] {
        let Some(list) = config.pointer(&format!("/{action}/headers")) else {
            continue;
        };
        let entries = list
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| e.as_str());
        for entry in entries {
            let name = entry.split(':').next().unwrap_or_default().trim();
            names.push(name.to_ascii_lowercase());
        }
    }
    names
}

/// The findings about the plugins the Kong routes name: a request-transformer on a route
/// with a Host rewrite or a dispatch header (`kong-plugin-conflict`), and with plugin files
/// given, a name none defines (`kong-plugin-missing`).
pub(super) fn kong_plugins(net: &Network, catalog: Option<&Catalog>, header: &str) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let Some(catalog) = catalog else {
        return diags;
    };
    for kong in &net.kong {
        let names = kong.plugins.as_deref().unwrap_or_default().split(',');
        for name in names.map(str::trim).filter(|n| !n.is_empty()) {
            match catalog.find(&kong.namespace, name) {
                None if catalog.incomplete => {}
                None => diags.push(missing(kong, name)),
                Some(def) if def.plugin == REQUEST_TRANSFORMER => {
                    if let Some(d) = conflict(kong, name, def, header) {
                        diags.push(d);
                    }
                }
                Some(_) => {}
            }
        }
    }
    diags
}

fn place(kong: &KongRoute) -> Span {
    Span::new(&kong.file, kong.name_pos.line, kong.name_pos.column)
}

fn missing(kong: &KongRoute, name: &str) -> Diagnostic {
    Diagnostic::error(
        Code::KongPluginMissing,
        format!(
            "Kong route `{}` names plugin `{name}`, which no file in kong.pluginFiles defines as a KongPlugin in `{}` or a KongClusterPlugin: KIC leaves it off the route and serves the route without it, with only an event to say so",
            kong.name, kong.namespace
        ),
    )
    .at(place(kong))
    .help("add the KongPlugin to a file kong.pluginFiles names (and to the gateway cluster), or fix the name in the app's kong.plugins")
}

/// A request-transformer on a route whose filters KIC also makes one of.
fn conflict(kong: &KongRoute, name: &str, def: &PluginDef, header: &str) -> Option<Diagnostic> {
    let sets_header = !kong.header_changes.set.is_empty();
    let what = match (kong.rewrite_host.is_some(), sets_header) {
        (true, true) => "Host rewrite and dispatch header",
        (true, false) => "Host rewrite",
        (false, true) => "dispatch header",
        (false, false) => return None,
    };
    let touches: Vec<&str> = (def.headers.iter())
        .filter(|h| *h == "host" || h.eq_ignore_ascii_case(header))
        .map(String::as_str)
        .collect();
    let also = if touches.is_empty() {
        String::new()
    } else {
        format!(", and it changes `{}` itself", touches.join("`, `"))
    };
    Some(
        Diagnostic::warning(
            Code::KongPluginConflict,
            format!(
                "Kong route `{}` names `{name}`, a request-transformer ({}:{}){also}: KIC makes the route's {what} into a request-transformer too, and Kong runs one per route, so one of the two silently stops applying (KIC issue #6390) and requests can reach the wrong Lattice service or app",
                kong.name,
                def.file.display(),
                def.line
            ),
        )
        .at(place(kong))
        .help("take it off the routes latgen writes: on the app's Kong Service it would not run either (Kong runs the most specific plugin of a name); transform those requests on a route of your own. Other plugins (rate limiting, auth, CORS) are fine here"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_headers_a_request_transformer_touches_are_read_from_each_action() {
        let config = serde_json::json!({
            "remove": {"headers": ["X-Debug"]},
            "rename": {"headers": ["x-old:x-new"]},
            "replace": {"headers": ["Host:example.com"], "uri": "/x"},
            "add": {"headers": ["x-latgen-app:shop"]},
            "append": {"querystring": ["a:b"]},
        });
        assert_eq!(
            touched_headers(&config),
            ["x-debug", "x-old", "host", "x-latgen-app"]
        );
    }

    #[test]
    fn a_kongplugin_in_the_routes_namespace_comes_before_a_cluster_plugin() {
        let def = |plugin: &str| PluginDef {
            plugin: plugin.into(),
            headers: Vec::new(),
            file: "p.yaml".into(),
            line: 1,
        };
        let mut c = Catalog::default();
        c.namespaced
            .insert(("kong-routes".into(), "limit".into()), def("rate-limiting"));
        c.cluster.insert("limit".into(), def("request-transformer"));
        assert_eq!(
            c.find("kong-routes", "limit").unwrap().plugin,
            "rate-limiting"
        );
        assert_eq!(
            c.find("other", "limit").unwrap().plugin,
            "request-transformer"
        );
        assert!(c.find("other", "none").is_none());
    }
}
