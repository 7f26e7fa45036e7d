//! A plan's whole tree: every object of both sides emitted as a job (the Lattice side's,
//! the Kong side's, the previews'), rendered, and put together with a kustomization per
//! side listing its files.

use crate::manifest::tree::{Text, Tree};
use std::collections::BTreeMap;
use std::path::PathBuf;

use super::jobs::{Docs, Expect, Job, Kind, RenderedObject, Renderer, render_job};
use super::objects::{BackendCtx, GatewayCtx, KustomizationCtx, Object, RuleCtx};
use super::templates::Templates;
use crate::diag::{Diagnostic, Diagnostics};
use crate::input::app::{App, AppId};
use crate::input::config::Config;
use crate::manifest::layout::Side;
use crate::plan::{Plan, Rule};
use latgen_sim::routing::Doc;

/// The rendered tree: path relative to the output folder → file content.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rendered {
    pub files: Tree,
    /// Objects a template wrote without fields the API server would add: Argo CD would
    /// never see them in sync (see [`latgen_sim::stored`]). Only custom templates are looked at:
    /// tests/suite/stored.rs proves that the built-in ones leave nothing out.
    pub not_stored: Vec<NotStored>,
}

/// An object rendered without fields the API server defaults.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct NotStored {
    /// The object's file, relative to the output folder.
    pub file: PathBuf,
    pub template: &'static str,
    /// What the API server would add to it.
    pub added: Vec<latgen_sim::stored::Added>,
}

/// Renders the whole tree, or returns every problem found.
pub fn render(
    plan: &Plan,
    apps: &[App],
    config: &Config,
    templates: &Templates,
) -> Result<Rendered, Diagnostics> {
    render_tree(plan, apps, config, templates, (false, None)).map(|(out, _)| out)
}

/// Renders the whole tree like [`render`], with the routing model of what it rendered. A
/// rendered text that `like` (a tree read beside the render) holds at the same path is
/// `like`'s: the two trees then hold one copy of it.
pub(crate) fn render_with_docs(
    plan: &Plan,
    apps: &[App],
    config: &Config,
    templates: &Templates,
    like: Option<&Tree>,
) -> Result<(Rendered, Docs), Diagnostics> {
    render_tree(plan, apps, config, templates, (true, like))
}

/// What the objects of a tree are made from; their contexts borrow it.
pub(super) struct Inputs<'a> {
    pub(super) plan: &'a Plan,
    pub(super) apps: &'a [App],
    pub(super) config: &'a Config,
    pub(super) lattice_gw: GatewayCtx<'a>,
    pub(super) kong_gw: GatewayCtx<'a>,
}

fn render_tree(
    plan: &Plan,
    apps: &[App],
    config: &Config,
    templates: &Templates,
    (keep_docs, like): (bool, Option<&Tree>),
) -> Result<(Rendered, Docs), Diagnostics> {
    crate::diag::progress::stage("rendering and checking objects", None);
    let inputs = Inputs {
        plan,
        apps,
        config,
        lattice_gw: GatewayCtx::from(&config.lattice.gateway),
        kong_gw: GatewayCtx::from(&config.kong.gateway),
    };
    let mut r = Renderer::new(templates, keep_docs, like);
    r.emit_lattice_routes(&inputs);
    if config.lattice.reference_grants {
        r.emit_reference_grants(&inputs);
    }
    if config.lattice.target_group_policies {
        r.emit_target_group_policies(&inputs);
    }
    r.emit_auth_policies(&inputs);
    if let Some(logs) = &config.observability.access_logs {
        r.emit_access_log_policies(&inputs, &logs.destination_arn);
    }
    if let Some(p) = &config.observability.prometheus {
        r.emit_prometheus_rules(&inputs, p);
    }
    // All routes, then all bridges: the files come out nearly in name order, which makes
    // the tree cheap to sort.
    // Each app's target once, each group's domain formatted once (the main thread emits
    // every object, so its work is the render's critical path).
    let mut domains = BTreeMap::new();
    let targets: Vec<Option<String>> = (AppId::enumerate(apps))
        .map(|(id, app)| kong_target(&inputs, id, app, &mut domains))
        .collect();
    for ((id, app), target) in AppId::enumerate(apps).zip(&targets) {
        if let Some(target) = target {
            r.emit_kong_route(&inputs, id, app, app.bridge_name(), target.clone());
        }
    }
    for ((_, app), target) in AppId::enumerate(apps).zip(targets) {
        if let Some(target) = target {
            r.emit_bridge(&inputs, app, app.bridge_name(), target);
        }
    }
    r.emit_previews(&inputs);
    let (rendered, diags) = r.run();
    assemble(rendered, diags, templates)
}

/// The context of a rule of the plan: its match, and its app's backends.
pub(super) fn rule_ctx<'a>(apps: &'a [App], rule: &'a Rule) -> RuleCtx<'a> {
    let app = &apps[rule.app];
    RuleCtx {
        kind: rule.kind.gateway_api_type(),
        path: &rule.path,
        app: &app.name,
        header: None,
        backend: BackendCtx {
            name: &app.service,
            namespace: &app.namespace,
            port: app.port,
        },
        canary: app.canary.as_ref().map(|c| BackendCtx {
            name: &c.service,
            namespace: &app.namespace,
            port: c.port,
        }),
    }
}

/// The header Kong sets and groups match, under header dispatch; None under path dispatch.
pub(super) fn dispatch_header(config: &Config) -> Option<&str> {
    config
        .header_dispatch()
        .then_some(config.lattice.dispatch_header.as_str())
}

/// The tree of the rendered objects, with a kustomization per side listing them; or every
/// problem found.
fn assemble(
    rendered: Vec<RenderedObject>,
    mut diags: Diagnostics,
    templates: &Templates,
) -> Result<(Rendered, Docs), Diagnostics> {
    let mut names = Vec::with_capacity(rendered.len());
    let mut parts = Vec::with_capacity(rendered.len());
    for x in rendered {
        names.push((x.side, x.file));
        parts.push((x.body, x.doc, x.template, x.added));
    }
    // The kustomizations (a line per file) are rendered while the tree is put together.
    let (kustomizations, (mut out, docs)) = rayon::join(
        || {
            let of = |side| kustomization_of(templates, side, &names);
            let (lattice, kong) = rayon::join(|| of(Side::Lattice), || of(Side::Kong));
            [(Side::Lattice, lattice), (Side::Kong, kong)]
        },
        || tree_of(&names, parts),
    );
    for (side, body) in kustomizations {
        match body {
            Ok(body) => {
                out.files
                    .insert(PathBuf::from(side.dir()).join("kustomization.yaml"), body);
            }
            Err(d) => diags.push(d),
        }
    }
    if diags.is_empty() {
        Ok((out, docs))
    } else {
        diags.sort();
        Err(diags)
    }
}

/// What a rendered object holds besides its place: its text, its routing model, its
/// template, and the fields the API server would add to it.
type Parts = (
    Text,
    Option<Doc>,
    &'static str,
    Vec<latgen_sim::stored::Added>,
);

/// The rendered files (`names`, with their `parts` in the same order) as a tree, with
/// their routing models in path order.
fn tree_of(names: &[(Side, String)], parts: Vec<Parts>) -> (Rendered, Docs) {
    let mut out = Rendered::default();
    let (mut files, mut docs) = (Vec::with_capacity(parts.len()), Vec::new());
    for ((side, file), (body, doc, template, added)) in names.iter().zip(parts) {
        // Sized once: a join that grows the path is a reallocation per file.
        let mut path = PathBuf::with_capacity(side.dir().len() + 1 + file.len());
        path.push(side.dir());
        path.push(file);
        if let Some(doc) = doc {
            docs.push((path.clone(), doc));
        }
        if !added.is_empty() {
            out.not_stored.push(NotStored {
                file: path.clone(),
                template,
                added,
            });
        }
        files.push((path, body));
    }
    // Built from a list in one go, not file by file: comparing paths is most of the cost
    // of a tree, and a list in nearly sorted order sorts in few comparisons. The documents
    // (a check's) are put in path order, as the files are, beside it: the two sorts were
    // the main thread's alone.
    let not_stored = &mut out.not_stored;
    let (tree, ()) = rayon::join(
        || files.into_iter().collect(),
        || {
            docs.sort_by(|a: &(PathBuf, Doc), b| a.0.cmp(&b.0));
            not_stored.sort_by(|a, b| a.file.cmp(&b.file));
        },
    );
    out.files = tree;
    let docs = docs.into_iter().map(|(p, d)| (p, std::sync::Arc::new(d)));
    (out, Docs::from_docs(docs.collect()))
}

/// The kustomization file of one side, listing the side's files in name order.
fn kustomization_of(
    templates: &Templates,
    side: Side,
    names: &[(Side, String)],
) -> Result<Text, Diagnostic> {
    let mut list: Vec<&str> = (names.iter())
        .filter(|(s, _)| *s == side)
        .map(|(_, f)| f.as_str())
        .collect();
    list.sort_unstable();
    kustomization(templates, &list)
}

/// A kustomization file listing `resources`.
pub(super) fn kustomization(templates: &Templates, resources: &[&str]) -> Result<Text, Diagnostic> {
    let job = Job {
        side: Side::Lattice,
        file: String::new(),
        template: "kustomization.yaml.j2",
        object: Box::new(|| Object::Kustomization(KustomizationCtx { resources })),
        expect: Expect {
            kind: Kind::Kustomization,
            name: String::new(),
            namespace: None,
            service_name: None,
        },
    };
    render_job(templates, job, (false, None)).map(|r| r.body)
}

/// The Lattice service Kong sends app `id` to, by its domain: its group's, or its own host
/// for a host-routed app (in a group only under header dispatch). An app with no group yet
/// has none, and no Kong side.
/// `domains` keeps each group's domain once made.
pub(super) fn kong_target(
    t: &Inputs,
    id: AppId,
    app: &App,
    domains: &mut BTreeMap<u32, String>,
) -> Option<String> {
    match t.plan.serving_group(id) {
        Some(n) => Some(
            (domains.entry(n))
                .or_insert_with(|| t.config.group_domain(n))
                .clone(),
        ),
        // Its own route's domain: the adopted route's, or its host.
        None => Some(app.own_route().2)
            .filter(|h| !h.is_empty())
            .map(str::to_string),
    }
}
