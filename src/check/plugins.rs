//! The KongPlugins and KongClusterPlugins the Kong routes name, as `kong.pluginFiles`
//! defines them, and what is wrong with a route's plugins.
//!
//! KIC turns a route's URLRewrite hostname and RequestHeaderModifier into one
//! request-transformer plugin on the Kong route. Kong runs one plugin of a name per route,
//! so a request-transformer KongPlugin of the user's own on that route means one of the two
//! configurations silently stops applying (KIC issue #6390): the Host rewrite that picks
//! the Lattice service, or the dispatch header that picks the app. Any other plugin
//! (rate-limiting, CORS, auth) runs beside it and is no concern of latgen's.

use crate::manifest::tree::Tree;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::ProjectPaths;
use crate::input::config::Config;
use crate::input::confine::Project;
use latgen_sim::routing::{KongRoute, Network};

/// The plugin KIC makes of a route's filters.
const REQUEST_TRANSFORMER: &str = "request-transformer";
/// Kong Enterprise's request transformer: a plugin of another name (so both run), which
/// fights the Host rewrite or the dispatch header only where it changes them.
const REQUEST_TRANSFORMER_ADVANCED: &str = "request-transformer-advanced";
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

/// The definitions read from `kong.pluginFiles`: KongPlugins by (namespace, name) (a
/// KongPlugin written without a namespace, as kustomize or Argo CD set it when they apply
/// it, is under `None`: in whatever namespace a route looks), KongClusterPlugins by name.
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    namespaced: BTreeMap<(Option<String>, String), PluginDef>,
    cluster: BTreeMap<String, PluginDef>,
    /// A file could not be read: a plugin not found may be in it, so none is reported
    /// missing (the unreadable file is the finding).
    incomplete: bool,
    /// Without `kong.pluginFiles`: it holds latgen's own plugins alone, so a name it
    /// lacks is one latgen cannot see, not one that is missing.
    unseen: bool,
}

impl Catalog {
    /// The plugin KIC finds for `name` on a route in `namespace`: the KongPlugin there,
    /// else the KongClusterPlugin (`getKongPluginOrKongClusterPlugin` in KIC's
    /// `internal/dataplane/kongstate/plugin.go`).
    pub fn find(&self, namespace: &str, name: &str) -> Option<&PluginDef> {
        let key = |ns: Option<&str>| (ns.map(str::to_string), name.to_string());
        (self.namespaced.get(&key(Some(namespace))))
            .or_else(|| self.namespaced.get(&key(None)))
            .or_else(|| self.cluster.get(name))
    }

    /// The namespaces other than `namespace` that define a KongPlugin `name`, for the
    /// message when a route does not find it.
    fn elsewhere(&self, namespace: &str, name: &str) -> Vec<&str> {
        (self.namespaced.keys())
            .filter(|(ns, n)| n == name && ns.as_deref().is_some_and(|ns| ns != namespace))
            .filter_map(|(ns, _)| ns.as_deref())
            .collect()
    }

    /// The catalog of a project without `kong.pluginFiles`, to hold latgen's own plugins.
    pub fn without_plugin_files() -> Catalog {
        Catalog {
            unseen: true,
            ..Catalog::default()
        }
    }

    /// Reads the files and folders `kong.pluginFiles` names (relative to the project
    /// folder, confined to it); None when it names none. A file or document it cannot
    /// read is a finding, and the rest is read.
    pub fn read(paths: &ProjectPaths, config: &Config, diags: &mut Diagnostics) -> Option<Catalog> {
        if config.kong.plugin_files.is_empty() {
            return None;
        }
        let project = Project::new(&paths.root);
        let mut catalog = Catalog::default();
        for entry in &config.kong.plugin_files {
            let path = paths.root.join(entry);
            // An entry that leads out of the project (`/usr`, `../..`, a link out) is
            // refused as a whole, before its folder is walked: one finding at the setting,
            // not one per file found there.
            if let Err(refusal) = project.resolve(&path) {
                catalog.incomplete = true;
                diags.push(outside(entry, refusal, paths, config, &project));
                continue;
            }
            let files = if path.is_dir() {
                crate::manifest::tree::manifest_files(&path)
            } else {
                vec![path]
            };
            for file in files {
                catalog.read_file(&project, &file, &paths.config, diags);
            }
        }
        Some(catalog)
    }

    /// Adds the KongPlugins the committed Kong side holds (latgen's own Prometheus plugin,
    /// with `observability.prometheus`): a route finds them as KIC would.
    pub fn add_committed(&mut self, tree: &Tree, out: &Path) {
        let ours = tree.iter().filter(|(rel, _)| {
            crate::manifest::layout::is_kong_file(rel)
                && (rel.file_name()).is_some_and(|n| n.to_string_lossy().starts_with("kongplugin-"))
        });
        for (rel, text) in ours {
            let Ok(docs) = serde_saphyr::from_multiple::<PluginDoc>(text) else {
                continue;
            };
            for doc in docs {
                self.add(&out.join(rel), doc);
            }
        }
    }

    fn read_file(
        &mut self,
        project: &Project,
        file: &Path,
        config: &Path,
        diags: &mut Diagnostics,
    ) {
        let text = match project.read_at_most(file, MAX_PLUGIN_FILE_BYTES) {
            Ok(Some(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
            Ok(None) => {
                self.incomplete = true;
                diags.push(
                    Diagnostic::error(
                        Code::InvalidConfig,
                        format!("kong.pluginFiles: {} does not exist", file.display()),
                    )
                    .at(Span::file(config))
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
                self.namespaced.entry((meta.namespace, name)).or_insert(def);
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
    let none = Catalog::without_plugin_files();
    let catalog = catalog.unwrap_or(&none);
    if catalog.unseen {
        diags.extend_from(unseen(net, catalog));
    }
    for kong in &net.kong {
        for name in plugin_names(kong) {
            match catalog.find(&kong.namespace, name) {
                None if catalog.incomplete || catalog.unseen => {}
                None => diags.push(missing(
                    kong,
                    name,
                    &catalog.elsewhere(&kong.namespace, name),
                )),
                Some(def) => diags.extend_from(conflict(kong, name, def, header)),
            }
        }
    }
    diags
}

fn plugin_names(kong: &KongRoute) -> impl Iterator<Item = &str> {
    let names = kong.plugins.as_deref().unwrap_or_default().split(',');
    names.map(str::trim).filter(|n| !n.is_empty())
}

/// Without `kong.pluginFiles`, latgen cannot tell a request-transformer from any other
/// plugin: one warning for the project, at the first route with plugins and filters.
/// latgen's own plugins (the Prometheus one) are in `own` and are no unknown.
fn unseen(net: &Network, own: &Catalog) -> Option<Diagnostic> {
    // Each route with a Host rewrite or header changes, and the plugins it names that
    // latgen cannot see.
    let routes: Vec<(&KongRoute, Vec<&str>)> = (net.kong.iter())
        .filter(|k| k.rewrite_host.is_some() || !k.header_changes.set.is_empty())
        .map(|k| {
            let unknown = (plugin_names(k)).filter(|n| own.find(&k.namespace, n).is_none());
            (&**k, unknown.collect::<Vec<_>>())
        })
        .filter(|(_, unknown)| !unknown.is_empty())
        .collect();
    let (first, _) = routes.first()?;
    let names: std::collections::BTreeSet<&str> =
        routes.iter().flat_map(|(_, u)| u.iter().copied()).collect();
    let shown: Vec<&str> = names.iter().take(3).copied().collect();
    let more = if names.len() > 3 { ", …" } else { "" };
    Some(
        Diagnostic::warning(
            Code::KongPluginConflict,
            format!(
                "{} latgen writes name{} plugins (`{}`{more}) that latgen cannot see: if one is a request-transformer, it and the one KIC makes of the route's Host rewrite replace each other without an error (KIC issue #6390)",
                match routes.len() {
                    1 => "1 Kong route".to_string(),
                    n => format!("{n} Kong routes"),
                },
                if routes.len() == 1 { "s" } else { "" },
                shown.join("`, `"),
            ),
        )
        .at(place(first))
        .help("set kong.pluginFiles in latgen.yaml to the files that define your KongPlugins: check then warns only on a real conflict"),
    )
}

fn place(kong: &KongRoute) -> Span {
    Span::new(&kong.file, kong.name_pos.line, kong.name_pos.column)
}

fn missing(kong: &KongRoute, name: &str, elsewhere: &[&str]) -> Diagnostic {
    let there = if elsewhere.is_empty() {
        String::new()
    } else {
        format!(
            " (kong.pluginFiles has one in `{}`: KIC looks in the route's namespace only)",
            elsewhere.join("`, `")
        )
    };
    Diagnostic::error(
        Code::KongPluginMissing,
        format!(
            "Kong route `{}` names plugin `{name}`, which no file in kong.pluginFiles defines as a KongPlugin in `{}` or a KongClusterPlugin{there}: KIC leaves it off the route and serves the route without it, with only an event to say so",
            kong.name, kong.namespace
        ),
    )
    .at(place(kong))
    .help("add the KongPlugin to a file kong.pluginFiles names (and to the gateway cluster), or fix the name in the app's kong.plugins")
}

/// A request-transformer on a route whose filters KIC also makes one of; or a
/// request-transformer-advanced that changes what those filters set.
fn conflict(kong: &KongRoute, name: &str, def: &PluginDef, header: &str) -> Option<Diagnostic> {
    let touches_ours = (def.headers.iter()).any(|h| h == "host" || h.eq_ignore_ascii_case(header));
    match def.plugin.as_str() {
        REQUEST_TRANSFORMER => {}
        REQUEST_TRANSFORMER_ADVANCED if touches_ours => {}
        _ => return None,
    }
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
                "Kong route `{}` names `{name}`, a {} ({}:{}){also}: KIC makes the route's {what} into a request-transformer, and the two change the same request, so one of them silently stops applying (KIC issue #6390) and requests can reach the wrong Lattice service or app",
                kong.name,
                def.plugin,
                def.file.display(),
                def.line
            ),
        )
        .at(place(kong))
        .help("take it off the routes latgen writes: on the app's Kong Service it would not run either (Kong runs the most specific plugin of a name); transform those requests on a route of your own. Other plugins (rate limiting, auth, CORS) are fine here"),
    )
}

/// The finding for a `kong.pluginFiles` entry that resolves outside the project or into
/// its Git folder, at the entry's line in latgen.yaml (or its environment's overlay). Where
/// it leads is not named: it may be a link's target, which is none of the PR's readers'
/// business.
fn outside(
    entry: &str,
    refusal: Diagnostic,
    paths: &ProjectPaths,
    config: &Config,
    project: &Project,
) -> Diagnostic {
    if refusal.code != Code::InputOutsideProject {
        return refusal;
    }
    let text = (project.read(&paths.config).ok().flatten())
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    let overlay = config.environment.as_ref();
    let at = (overlay.and_then(|e| entry_at(&e.overlay, &e.text, entry)))
        .or_else(|| entry_at(&paths.config, text.as_deref()?, entry))
        .unwrap_or_else(|| {
            crate::input::places::Places::settings(config, &paths.config, text.as_deref())
                .of(&["kong", "pluginFiles"])
        });
    Diagnostic::error(
        Code::InputOutsideProject,
        format!(
            "kong.pluginFiles: `{entry}` leads outside the project folder (or into its .git): latgen reads no plugin file there"
        ),
    )
    .at(at)
    .help("name files or folders inside the project (relative to latgen.yaml's folder) that hold your KongPlugins and KongClusterPlugins")
}

/// Where `entry` is written in the `kong.pluginFiles` of the settings file `file`.
fn entry_at(file: &Path, text: &str, entry: &str) -> Option<Span> {
    #[derive(Deserialize)]
    struct Settings {
        kong: Option<Kong>,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Kong {
        plugin_files: Option<Vec<Spanned<String>>>,
    }
    let settings: Settings = serde_saphyr::from_str(text).ok()?;
    let found = (settings.kong?.plugin_files?.into_iter()).find(|e| e.value == entry)?;
    Some(Span::at(file, &found.referenced))
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
        c.namespaced.insert(
            (Some("kong-routes".into()), "limit".into()),
            def("rate-limiting"),
        );
        c.namespaced.insert((None, "cors".into()), def("cors"));
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
        // Written without a namespace: found from any.
        assert_eq!(c.find("anywhere", "cors").unwrap().plugin, "cors");
        assert_eq!(c.elsewhere("other", "limit"), ["kong-routes"]);
    }
}
