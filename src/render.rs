//! Stage 4, render: the plan becomes Kubernetes manifests through the minijinja templates in
//! `templates/` (embedded; a folder given with `--templates` overrides them file by file).
//! Every rendered document is parsed back into its typed object and must say exactly what
//! was meant: one document, the expected kind, name and namespace, and no field the type
//! does not know. Templates cannot inject objects or keys through a value.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use minijinja::value::Serde;
use minijinja::{AutoEscape, Environment, UndefinedBehavior, Value as Ctx};
use serde::{Deserialize, Serialize};

use crate::codes::Code;
use crate::config::{Config, GatewayRef};
use crate::confine::Project;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::model::{App, AppId};
use crate::plan::{Plan, Rule};
use crate::routing::Doc;

pub use crate::layout::{HEADER, HEADER_COMMENT, HEADER_LINES, Side};

/// The rendered tree: path relative to the output folder → file content.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Output {
    pub files: BTreeMap<PathBuf, String>,
    /// Objects a template wrote without fields the API server would add: Argo CD would
    /// never see them in sync (see [`crate::stored`]). Only custom templates are looked at:
    /// tests/stored.rs proves that the built-in ones leave nothing out.
    pub not_stored: Vec<NotStored>,
}

/// An object rendered without fields the API server defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct NotStored {
    /// The object's file, relative to the output folder.
    pub file: PathBuf,
    pub template: &'static str,
    /// What the API server would add to it.
    pub added: Vec<crate::stored::Added>,
}

/// The embedded templates, by name.
pub const TEMPLATES: &[(&str, &str)] = &[
    (
        "lattice/group-route.yaml.j2",
        include_str!("../templates/lattice/group-route.yaml.j2"),
    ),
    (
        "lattice/host-route.yaml.j2",
        include_str!("../templates/lattice/host-route.yaml.j2"),
    ),
    (
        "lattice/target-group-policy.yaml.j2",
        include_str!("../templates/lattice/target-group-policy.yaml.j2"),
    ),
    (
        "lattice/reference-grant.yaml.j2",
        include_str!("../templates/lattice/reference-grant.yaml.j2"),
    ),
    (
        "kong/bridge-service.yaml.j2",
        include_str!("../templates/kong/bridge-service.yaml.j2"),
    ),
    (
        "kong/route.yaml.j2",
        include_str!("../templates/kong/route.yaml.j2"),
    ),
    (
        "kustomization.yaml.j2",
        include_str!("../templates/kustomization.yaml.j2"),
    ),
];

mod between;
mod not_stored;
pub use between::Between;
pub use not_stored::not_stored_findings;

/// A compiled template set, built once per run.
pub struct Templates {
    env: Environment<'static>,
    /// The folder given with `--templates`, and the names of the templates found there.
    custom: Option<(PathBuf, Vec<&'static str>)>,
}

impl Templates {
    /// The embedded templates, with those found in `dir` (same relative names) instead. A
    /// template in `dir` must resolve inside the project it comes with (see
    /// [`crate::confine`]): one that leads out of it is refused, never read.
    pub fn load(dir: Option<(&Path, &Project)>) -> Result<Templates, Diagnostic> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_auto_escape_callback(|_| AutoEscape::None);
        env.set_syntax(
            minijinja::syntax::SyntaxConfig::builder()
                .trim_blocks(true)
                .lstrip_blocks(true)
                .build()
                .expect("static syntax config"),
        );
        // Untrusted templates must end: bound the work and the recursion of one render.
        env.set_fuel(Some(5_000_000));
        env.set_recursion_limit(64);
        env.add_filter("yaml", yaml_scalar);
        let mut custom = Vec::new();
        for (name, embedded) in TEMPLATES {
            let given = dir
                .map(|(d, project)| (d.join(name), project))
                .filter(|(p, _)| p.is_symlink() || p.is_file());
            let source = match given {
                Some((path, project)) => {
                    custom.push(*name);
                    let bytes = project.read(&path)?.unwrap_or_default();
                    String::from_utf8(bytes).map_err(|_| {
                        Diagnostic::error(Code::IoError, "cannot read template: not UTF-8 text")
                            .at(Span::file(&path))
                    })?
                }
                None => embedded.to_string(),
            };
            env.add_template_owned(name.to_string(), source)
                .map_err(|e| template_error(name, dir.map(|(d, _)| d), &e))?;
        }
        Ok(Templates {
            env,
            custom: dir.map(|(d, _)| (d.to_path_buf(), custom)),
        })
    }

    /// Whether template `name` comes from the `--templates` folder: only those can leave
    /// out a field the API server defaults (tests/stored.rs proves the built-in ones).
    pub fn is_custom(&self, name: &str) -> bool {
        self.custom
            .as_ref()
            .is_some_and(|(_, names)| names.contains(&name))
    }

    /// Where template `name` comes from: its file in the `--templates` folder, or the
    /// built-in one (named as in latgen's source tree).
    pub fn file_of(&self, name: &str) -> PathBuf {
        match &self.custom {
            Some((dir, names)) if names.contains(&name) => dir.join(name),
            _ => PathBuf::from("templates").join(name),
        }
    }

    fn render(&self, name: &str, ctx: Ctx) -> Result<String, minijinja::Error> {
        self.env.get_template(name)?.render(ctx)
    }
}

fn template_error(name: &str, dir: Option<&Path>, e: &minijinja::Error) -> Diagnostic {
    let file = dir
        .map(|d| d.join(name))
        .unwrap_or_else(|| PathBuf::from("templates").join(name));
    let line = e.line().unwrap_or(0) as u32;
    Diagnostic::error(
        Code::TemplateError,
        format!("template {name}: {}", e.detail().unwrap_or(&e.to_string())),
    )
    .at(Span::new(file, line, 0))
    .help("fix the template; `latgen render` without --templates uses the built-in ones")
}

/// Formats a string as a YAML scalar that reads back as exactly that string: plain when it
/// is unambiguous, otherwise a JSON string (valid YAML), so no value can add lines or keys.
pub fn yaml_scalar(value: String) -> String {
    let plain_safe = !value.is_empty()
        && value
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic() || b == b'/')
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-".contains(&b))
        && !matches!(
            value.to_ascii_lowercase().as_str(),
            "y" | "n" | "yes" | "no" | "on" | "off" | "true" | "false" | "null"
        );
    if plain_safe {
        value
    } else {
        serde_json::to_string(&value).expect("strings always serialize")
    }
}

#[derive(Serialize)]
struct GatewayCtx<'a> {
    name: &'a str,
    namespace: Option<&'a str>,
    #[serde(rename = "sectionName")]
    section_name: Option<&'a str>,
}

impl<'a> From<&'a GatewayRef> for GatewayCtx<'a> {
    fn from(g: &'a GatewayRef) -> Self {
        GatewayCtx {
            name: &g.name,
            namespace: g.namespace.as_deref(),
            section_name: g.section_name.as_deref(),
        }
    }
}

#[derive(Serialize)]
struct BackendCtx<'a> {
    name: &'a str,
    namespace: &'a str,
    port: u16,
}

#[derive(Serialize)]
struct HeaderCtx<'a> {
    name: &'a str,
    value: &'a str,
}

#[derive(Serialize)]
struct RuleCtx<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    path: &'a str,
    app: &'a str,
    /// The header the rule also matches (header dispatch): the app's name.
    header: Option<HeaderCtx<'a>>,
    backend: BackendCtx<'a>,
}

fn rule_ctx<'a>(apps: &'a [App], rule: &'a Rule) -> RuleCtx<'a> {
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
    }
}

/// The header Kong sets and groups match, under header dispatch; None under path dispatch.
fn dispatch_header(config: &Config) -> Option<&str> {
    config
        .header_dispatch()
        .then_some(config.lattice.dispatch_header.as_str())
}

/// What a rendered document must be.
struct Expect {
    kind: Kind,
    name: String,
    namespace: Option<String>,
    /// The Lattice service name the route must carry in the override annotation.
    service_name: Option<String>,
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    HttpRoute,
    Service,
    ReferenceGrant,
    TargetGroupPolicy,
    Kustomization,
}

impl Kind {
    fn api(self) -> (&'static str, &'static str) {
        match self {
            Kind::HttpRoute => ("gateway.networking.k8s.io/v1", "HTTPRoute"),
            Kind::Service => ("v1", "Service"),
            Kind::ReferenceGrant => ("gateway.networking.k8s.io/v1", "ReferenceGrant"),
            Kind::TargetGroupPolicy => (
                "application-networking.k8s.aws/v1alpha1",
                "TargetGroupPolicy",
            ),
            Kind::Kustomization => ("kustomize.config.k8s.io/v1beta1", "Kustomization"),
        }
    }
}

/// kustomize's file format, reduced to what latgen writes.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Kustomization {
    #[serde(rename = "apiVersion")]
    api_version: String,
    kind: String,
    resources: Vec<String>,
}

/// File name of an object: `<kind>-<name>.yaml`, lowercase, predictable from the plan.
fn file_name(kind: Kind, name: &str) -> String {
    format!("{}-{name}.yaml", kind.api().1.to_ascii_lowercase())
}

/// How to make an object's template context; made on the thread that renders it.
type MakeCtx<'a> = Box<dyn FnOnce() -> Ctx + Send + 'a>;

/// One object to render: the template, its context and what it must turn out to be.
struct Job<'a> {
    side: Side,
    file: String,
    template: &'static str,
    ctx: MakeCtx<'a>,
    expect: Expect,
}

/// Collects the objects of a tree and renders and checks them in parallel, a batch at a
/// time (making the contexts, rendering and the typed read-back are the work, and
/// independent per object; batches keep the jobs waiting in memory few).
struct Renderer<'a> {
    templates: &'a Templates,
    jobs: Vec<Job<'a>>,
    done: Vec<Rendered>,
    diags: Diagnostics,
    keep_docs: bool,
}

/// Objects rendered per parallel batch.
const BATCH: usize = 4096;

/// A rendered, checked object.
struct Rendered {
    side: Side,
    file: String,
    template: &'static str,
    body: String,
    /// The routing model of the object, from its read-back, when asked for.
    doc: Option<Doc>,
    /// Fields the API server would add to it.
    added: Vec<crate::stored::Added>,
}

/// The routing model of each rendered route and Service, by path relative to the output
/// folder, made from the typed read-back so that a check need not parse them again.
pub type Docs = BTreeMap<PathBuf, Doc>;

impl<'a> Renderer<'a> {
    fn emit(
        &mut self,
        side: Side,
        template: &'static str,
        ctx: impl FnOnce() -> Ctx + Send + 'a,
        expect: Expect,
    ) {
        let file = file_name(expect.kind, &expect.name);
        self.emit_as(side, file, template, ctx, expect);
    }

    fn emit_as(
        &mut self,
        side: Side,
        file: String,
        template: &'static str,
        ctx: impl FnOnce() -> Ctx + Send + 'a,
        expect: Expect,
    ) {
        self.jobs.push(Job {
            side,
            file,
            template,
            ctx: Box::new(ctx),
            expect,
        });
        if self.jobs.len() >= BATCH {
            self.flush();
        }
    }

    fn flush(&mut self) {
        use rayon::prelude::*;
        let templates = self.templates;
        let keep = self.keep_docs;
        let results: Vec<Result<Rendered, Diagnostic>> = std::mem::take(&mut self.jobs)
            .into_par_iter()
            .map(|job| {
                let text = templates
                    .render(job.template, (job.ctx)())
                    .map_err(|e| template_error(job.template, None, &e))?;
                let read = ReadOptions {
                    keep_doc: keep,
                    stored_form: templates.is_custom(job.template),
                };
                let checked = checked_file(job.template, &text, &job.expect, read)?;
                crate::progress::advance(1);
                Ok(Rendered {
                    side: job.side,
                    file: job.file,
                    template: job.template,
                    body: checked.body,
                    doc: checked.doc,
                    added: checked.added,
                })
            })
            .collect();
        for r in results {
            match r {
                Ok(x) => self.done.push(x),
                Err(d) => self.diags.push(d),
            }
        }
    }

    fn run(mut self) -> (Vec<Rendered>, Diagnostics) {
        self.flush();
        (self.done, self.diags)
    }
}

/// A rendered object as it is written, and what its read-back found.
struct CheckedFile {
    body: String,
    /// The routing model of a route or Service, when asked for.
    doc: Option<Doc>,
    /// Fields the API server would add to the object.
    added: Vec<crate::stored::Added>,
}

/// What the read-back of a rendered object finds besides checking it.
#[derive(Clone, Copy, Default)]
struct ReadOptions {
    /// The routing model of a route or Service.
    keep_doc: bool,
    /// The fields the API server would add to it.
    stored_form: bool,
}

/// The file a rendered object is written as (the header, then the text), checked: what is
/// read back is exactly what is written after the header lines; with `read`, also what
/// else the read-back should find.
fn checked_file(
    template: &str,
    text: &str,
    expect: &Expect,
    read: ReadOptions,
) -> Result<CheckedFile, Diagnostic> {
    let head = if starts_document(text) {
        HEADER_COMMENT
    } else {
        HEADER_LINES
    };
    let mut body = String::with_capacity(head.len() + text.len());
    body.push_str(head);
    body.push_str(text.trim_end());
    body.push('\n');
    match typed_check(&body[head.len()..], expect, read) {
        Ok(read) => Ok(CheckedFile {
            body,
            doc: read.doc,
            added: read.added,
        }),
        Err(why) => {
            let (_, kind) = expect.kind.api();
            let what = match expect.name.as_str() {
                "" => kind.to_string(),
                name => format!("{kind} `{name}`"),
            };
            Err(Diagnostic::error(
                Code::RenderedInvalid,
                format!("template {template} rendered an invalid {what}: {why}"),
            )
            .help("fix the template; every rendered object must parse back as the object latgen meant"))
        }
    }
}

/// What the read-back of a rendered object found.
#[derive(Debug)]
struct ReadBack {
    /// The routing model of a route or Service, when asked for.
    doc: Option<Doc>,
    /// Fields the API server would add to the object.
    added: Vec<crate::stored::Added>,
}

/// The fields the API server would add to a typed object; `spec` alone for a custom
/// resource, where the CRD's defaults apply under `spec`.
fn added_by_server<T: Serialize>(
    kind: crate::stored::StoredKind,
    spec: &T,
) -> Vec<crate::stored::Added> {
    use crate::stored::{StoredKind, missing_defaults};
    if kind == StoredKind::NoDefaults {
        return Vec::new();
    }
    let Ok(value) = serde_json::to_value(spec) else {
        return Vec::new();
    };
    let mut object = match kind {
        StoredKind::HttpRoute => serde_json::json!({ "spec": value }),
        _ => value,
    };
    missing_defaults(kind, &mut object)
}

/// Whether `text` has its own document start (`---`) before any content, as a custom
/// template may: the header then adds none, which would leave an empty document first.
fn starts_document(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| l == "---" || l.starts_with("--- "))
}

/// Parses `text` as one YAML document of the expected kind and checks that its typed form
/// says the same as the text (no unknown or mistyped fields) and names the expected object.
/// Finds what `read` asks for besides.
fn typed_check(text: &str, expect: &Expect, read: ReadOptions) -> Result<ReadBack, String> {
    use crate::crd::targetgrouppolicy::TargetGroupPolicySpec;
    use crate::stored::StoredKind;
    use gateway_api::apis::standard::{
        httproutes::HttpRouteSpec, referencegrants::ReferenceGrantSpec,
    };
    use k8s_openapi::api::core::v1::Service;
    let keep = read.keep_doc;
    let stored = |kind| {
        if read.stored_form {
            kind
        } else {
            StoredKind::NoDefaults
        }
    };
    let (api_version, kind) = expect.kind.api();
    let (doc_api, doc_kind, meta, doc, added) = match expect.kind {
        Kind::HttpRoute => {
            let d: Object<HttpRouteSpec> = parse_typed(text)?;
            let doc = keep.then(|| Doc::from_route(&d.metadata, &d.spec));
            let added = added_by_server(stored(StoredKind::HttpRoute), &d.spec);
            (d.api_version, d.kind, d.metadata, doc, added)
        }
        Kind::ReferenceGrant => {
            let d: Object<ReferenceGrantSpec> = parse_typed(text)?;
            (d.api_version, d.kind, d.metadata, None, Vec::new())
        }
        Kind::TargetGroupPolicy => {
            let d: Object<TargetGroupPolicySpec> = parse_typed(text)?;
            (d.api_version, d.kind, d.metadata, None, Vec::new())
        }
        // k8s-openapi checks apiVersion and kind itself.
        Kind::Service => {
            let svc: Service = parse_typed(text)?;
            let doc = keep.then(|| {
                let external = svc.spec.as_ref().and_then(|s| s.external_name.as_deref());
                Doc::from_service(&svc.metadata, external)
            });
            let added = added_by_server(stored(StoredKind::Service), &svc);
            (
                api_version.to_string(),
                kind.to_string(),
                svc.metadata,
                doc,
                added,
            )
        }
        Kind::Kustomization => {
            let k: Kustomization = parse_typed(text)?;
            return if (k.api_version.as_str(), k.kind.as_str()) == (api_version, kind) {
                Ok(ReadBack {
                    doc: None,
                    added: Vec::new(),
                })
            } else {
                Err(format!("expected apiVersion {api_version} and kind {kind}"))
            };
        }
    };
    if (doc_api.as_str(), doc_kind.as_str()) != (api_version, kind) {
        return Err(format!("expected apiVersion {api_version} and kind {kind}"));
    }
    if meta.name.as_deref() != Some(expect.name.as_str()) {
        return Err(format!("metadata.name is not `{}`", expect.name));
    }
    if meta.namespace != expect.namespace {
        return Err(format!(
            "metadata.namespace is not `{}`",
            expect.namespace.as_deref().unwrap_or("")
        ));
    }
    check_override(&meta, expect)?;
    Ok(ReadBack { doc, added })
}

/// A route latgen names the Lattice service of must carry the name in the override
/// annotation (a custom template could leave it out).
fn check_override(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    expect: &Expect,
) -> Result<(), String> {
    if let Some(want) = &expect.service_name {
        let have = meta
            .annotations
            .as_ref()
            .and_then(|a| a.get(crate::services::OVERRIDE_ANNOTATION));
        if have != Some(want) {
            return Err(format!(
                "metadata.annotations must hold `{}: {want}` (the Lattice service name latgen.lock records; the template is given it as `service_name`)",
                crate::services::OVERRIDE_ANNOTATION
            ));
        }
    }
    Ok(())
}

/// A Kubernetes object with a typed spec, as a manifest writes it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Object<S> {
    #[serde(rename = "apiVersion")]
    api_version: String,
    kind: String,
    metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    // Read only to be checked: it must parse as the typed spec.
    #[allow(dead_code)]
    spec: S,
}

/// Parses one YAML document into `T` in a single pass; a field `T` does not define (at any
/// depth) is an error rather than silently dropped. A second document is an error too.
fn parse_typed<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
    let mut ignored = Vec::new();
    // Error snippets are not needed to judge a document; skipping them is measurably
    // faster on the tens of thousands of documents of a large tree. (Comments are not
    // even scanned: serde-saphyr is built without its `comments` feature.)
    let mut options = serde_saphyr::Options::default();
    options.with_snippet = false;
    let value = serde_saphyr::with_deserializer_from_str_with_options(text, options, |de| {
        serde_ignored::deserialize(de, |path| ignored.push(path.to_string()))
    })
    .map_err(|e| {
        let msg = e.without_snippet().to_string();
        if msg.contains("from_str_multiple") || msg.contains("multiple documents") {
            "expected one YAML document, found more".to_string()
        } else {
            msg
        }
    })?;
    if ignored.is_empty() {
        Ok(value)
    } else {
        Err(format!(
            "it has fields its type does not define: {}",
            ignored.join(", ")
        ))
    }
}

/// Renders the whole tree, or returns every problem found.
pub fn render(
    plan: &Plan,
    apps: &[App],
    config: &Config,
    templates: &Templates,
) -> Result<Output, Diagnostics> {
    render_tree(plan, apps, config, templates, false).map(|(out, _)| out)
}

/// Renders the whole tree like [`render`], with the routing model of what it rendered.
pub fn render_with_docs(
    plan: &Plan,
    apps: &[App],
    config: &Config,
    templates: &Templates,
) -> Result<(Output, Docs), Diagnostics> {
    render_tree(plan, apps, config, templates, true)
}

/// What the objects of a tree are made from; their contexts borrow it.
struct Inputs<'a> {
    plan: &'a Plan,
    apps: &'a [App],
    config: &'a Config,
    lattice_gw: GatewayCtx<'a>,
    kong_gw: GatewayCtx<'a>,
}

fn render_tree(
    plan: &Plan,
    apps: &[App],
    config: &Config,
    templates: &Templates,
    keep_docs: bool,
) -> Result<(Output, Docs), Diagnostics> {
    crate::progress::stage("rendering and checking objects", None);
    let inputs = Inputs {
        plan,
        apps,
        config,
        lattice_gw: GatewayCtx::from(&config.lattice.gateway),
        kong_gw: GatewayCtx::from(&config.kong.gateway),
    };
    let mut r = Renderer {
        templates,
        jobs: Vec::new(),
        done: Vec::new(),
        diags: Diagnostics::new(),
        keep_docs,
    };
    r.emit_group_routes(&inputs);
    r.emit_dedicated_routes(&inputs);
    if config.lattice.reference_grants {
        r.emit_reference_grants(&inputs);
    }
    if config.lattice.target_group_policies {
        r.emit_target_group_policies(&inputs);
    }
    for (id, app) in AppId::enumerate(apps) {
        r.emit_kong_side(&inputs, id, app);
    }
    let (rendered, diags) = r.run();
    assemble(rendered, diags, templates)
}

impl<'a> Renderer<'a> {
    /// The Lattice side: one HTTPRoute per shared group.
    fn emit_group_routes(&mut self, t: &'a Inputs<'a>) {
        let config = t.config;
        for group in &t.plan.groups {
            let name = config.group_name(group.number);
            let service_name = crate::services::override_name(t.plan, &name);
            let ctx = {
                let name = name.clone();
                let service_name = service_name.clone();
                move || {
                    let header = dispatch_header(config);
                    let rules: Vec<RuleCtx> = group
                        .rules
                        .iter()
                        .map(|rule| RuleCtx {
                            header: header.map(|name| HeaderCtx {
                                name,
                                value: &t.apps[rule.app].name,
                            }),
                            ..rule_ctx(t.apps, rule)
                        })
                        .collect();
                    minijinja::context! {
                        name => &name,
                        namespace => &config.lattice.namespace,
                        number => group.number,
                        service_name => service_name,
                        hostname => config.group_domain(group.number),
                        gateway => Ctx::from(Serde(&t.lattice_gw)),
                        rules => Ctx::from(Serde(&rules)),
                        dispatch_header => header,
                    }
                }
            };
            self.emit(
                Side::Lattice,
                "lattice/group-route.yaml.j2",
                ctx,
                Expect {
                    kind: Kind::HttpRoute,
                    name: name.clone(),
                    namespace: Some(config.lattice.namespace.clone()),
                    service_name,
                },
            );
        }
    }

    /// The Lattice side: one HTTPRoute per host-routed app, in the app's namespace.
    fn emit_dedicated_routes(&mut self, t: &'a Inputs<'a>) {
        for d in &t.plan.dedicated {
            let app = &t.apps[d.app];
            let service_name = crate::services::override_name(t.plan, &app.name);
            let in_ctx = service_name.clone();
            let ctx = move || {
                let rules: Vec<RuleCtx> =
                    d.rules.iter().map(|rule| rule_ctx(t.apps, rule)).collect();
                minijinja::context! {
                    name => &app.name,
                    namespace => &app.namespace,
                    app => &app.name,
                    service_name => in_ctx,
                    hostname => app.host.as_deref().unwrap_or_default(),
                    gateway => Ctx::from(Serde(&t.lattice_gw)),
                    rules => Ctx::from(Serde(&rules)),
                }
            };
            self.emit(
                Side::Lattice,
                "lattice/host-route.yaml.j2",
                ctx,
                Expect {
                    kind: Kind::HttpRoute,
                    name: app.name.clone(),
                    namespace: Some(app.namespace.clone()),
                    service_name,
                },
            );
        }
    }

    /// The Lattice side: a ReferenceGrant in each namespace a group route points into.
    fn emit_reference_grants(&mut self, t: &'a Inputs<'a>) {
        let config = t.config;
        let namespaces: std::collections::BTreeSet<&str> = t
            .plan
            .groups
            .iter()
            .flat_map(|g| g.members().map(|id| t.apps[id].namespace.as_str()))
            .filter(|ns| *ns != config.lattice.namespace)
            .collect();
        let name = format!("latgen-from-{}", config.lattice.namespace);
        for ns in namespaces {
            let ctx = {
                let name = name.clone();
                move || minijinja::context! { name => &name, namespace => ns, from_namespace => &config.lattice.namespace }
            };
            // One grant per namespace, all with one name: the file name carries the namespace.
            let expect = Expect {
                kind: Kind::ReferenceGrant,
                name: name.clone(),
                namespace: Some(ns.to_string()),
                service_name: None,
            };
            self.emit_as(
                Side::Lattice,
                file_name(Kind::ReferenceGrant, ns),
                "lattice/reference-grant.yaml.j2",
                ctx,
                expect,
            );
        }
    }

    /// The Lattice side: a TargetGroupPolicy per Service of an app with a health check;
    /// when several apps share one, the first by name sets it.
    fn emit_target_group_policies(&mut self, t: &'a Inputs<'a>) {
        let mut seen = std::collections::BTreeSet::new();
        for app in t.apps.iter().filter(|a| a.health_check.is_some()) {
            if !seen.insert((app.namespace.as_str(), app.service.as_str())) {
                continue;
            }
            let hc = app.health_check.as_ref().expect("filtered");
            let ctx = move || {
                minijinja::context! {
                    name => &app.service, namespace => &app.namespace, app => &app.name,
                    service => &app.service, port => app.port,
                    interval => hc.interval_seconds, path => hc.path.as_deref(),
                }
            };
            let expect = Expect {
                kind: Kind::TargetGroupPolicy,
                name: app.service.clone(),
                namespace: Some(app.namespace.clone()),
                service_name: None,
            };
            let file = file_name(
                Kind::TargetGroupPolicy,
                &format!("{}-{}", app.namespace, app.service),
            );
            self.emit_as(
                Side::Lattice,
                file,
                "lattice/target-group-policy.yaml.j2",
                ctx,
                expect,
            );
        }
    }

    /// The Kong side of app `id`: its bridge Service and its route, both to the Lattice
    /// service that serves it. An app with no group yet has none.
    fn emit_kong_side(&mut self, t: &'a Inputs<'a>, id: AppId, app: &'a App) {
        // A host-routed app is in a group only under header dispatch.
        let target = match (t.plan.serving_group(id), &app.host) {
            (Some(n), _) => t.config.group_domain(n),
            (None, Some(host)) => host.clone(),
            (None, None) => return,
        };
        let bridge = app.bridge_name();
        self.emit_bridge(t, app, bridge.clone(), target.clone());
        self.emit_kong_route(t, id, app, bridge, target);
    }

    /// The Kong side: an ExternalName Service that stands for the app's Lattice service.
    fn emit_bridge(&mut self, t: &'a Inputs<'a>, app: &'a App, bridge: String, target: String) {
        let config = t.config;
        let (port, protocol) = (config.kong.upstream_port(), config.kong.protocol.as_str());
        let name = bridge.clone();
        let ctx = move || {
            minijinja::context! {
                name => &bridge, namespace => &config.kong.namespace, app => &app.name,
                target => &target, port => port, protocol => protocol,
            }
        };
        self.emit(
            Side::Kong,
            "kong/bridge-service.yaml.j2",
            ctx,
            Expect {
                kind: Kind::Service,
                name,
                namespace: Some(config.kong.namespace.clone()),
                service_name: None,
            },
        );
    }

    /// The Kong side: the app's route, matching its own paths in the order its Lattice
    /// rules have, to its bridge.
    fn emit_kong_route(
        &mut self,
        t: &'a Inputs<'a>,
        id: AppId,
        app: &'a App,
        bridge: String,
        target: String,
    ) {
        let config = t.config;
        let port = config.kong.upstream_port();
        let ctx = move || {
            let hostnames: Vec<&str> = match &app.host {
                Some(h) => vec![h.as_str()],
                None => config.kong.hostnames.iter().map(String::as_str).collect(),
            };
            let rules = crate::plan::app_rules(t.apps, id);
            let matches: Vec<RuleCtx> = rules.iter().map(|rule| rule_ctx(t.apps, rule)).collect();
            minijinja::context! {
                name => &app.name, namespace => &config.kong.namespace, app => &app.name,
                gateway => Ctx::from(Serde(&t.kong_gw)), hostnames => Ctx::from(Serde(&hostnames)), matches => Ctx::from(Serde(&matches)),
                target => &target, bridge => &bridge, port => port,
                dispatch_header => dispatch_header(config),
            }
        };
        self.emit(
            Side::Kong,
            "kong/route.yaml.j2",
            ctx,
            Expect {
                kind: Kind::HttpRoute,
                name: app.name.clone(),
                namespace: Some(config.kong.namespace.clone()),
                service_name: None,
            },
        );
    }
}

/// The tree of the rendered objects, with a kustomization per side listing them; or every
/// problem found.
fn assemble(
    rendered: Vec<Rendered>,
    mut diags: Diagnostics,
    templates: &Templates,
) -> Result<(Output, Docs), Diagnostics> {
    let mut out = Output::default();
    let mut docs = Docs::new();
    let mut resources: BTreeMap<Side, Vec<String>> = BTreeMap::new();
    for x in rendered {
        resources.entry(x.side).or_default().push(x.file.clone());
        let path = PathBuf::from(x.side.dir()).join(&x.file);
        if let Some(doc) = x.doc {
            docs.insert(path.clone(), doc);
        }
        if !x.added.is_empty() {
            out.not_stored.push(NotStored {
                file: path.clone(),
                template: x.template,
                added: x.added,
            });
        }
        out.files.insert(path, x.body);
    }
    out.not_stored.sort_by(|a, b| a.file.cmp(&b.file));
    for side in [Side::Lattice, Side::Kong] {
        let mut list = resources.remove(&side).unwrap_or_default();
        list.sort();
        match kustomization(templates, &list) {
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

/// The kustomization file of one side, listing its files.
fn kustomization(templates: &Templates, resources: &[String]) -> Result<String, Diagnostic> {
    let ctx = minijinja::context! { resources => Ctx::from(Serde(resources)) };
    let text = templates
        .render("kustomization.yaml.j2", ctx)
        .map_err(|e| template_error("kustomization.yaml.j2", None, &e))?;
    let expect = Expect {
        kind: Kind::Kustomization,
        name: String::new(),
        namespace: None,
        service_name: None,
    };
    checked_file(
        "kustomization.yaml.j2",
        &text,
        &expect,
        ReadOptions::default(),
    )
    .map(|c| c.body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_cannot_inject_yaml() {
        assert_eq!(yaml_scalar("shop-web".into()), "shop-web");
        assert_eq!(yaml_scalar("/shop/cart".into()), "/shop/cart");
        assert_eq!(yaml_scalar("yes".into()), "\"yes\"");
        assert_eq!(yaml_scalar("80".into()), "\"80\"");
        let evil = "x\nkind: Secret".to_string();
        let quoted = yaml_scalar(evil.clone());
        let back: String = serde_saphyr::from_str(&quoted).unwrap();
        assert_eq!(back, evil);
        let evil = "a: b".to_string();
        let back: String = serde_saphyr::from_str(&yaml_scalar(evil.clone())).unwrap();
        assert_eq!(back, evil);
    }

    #[test]
    fn typed_check_refuses_unknown_fields_and_second_documents() {
        let ok = "apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  namespace: b\nspec:\n  type: ExternalName\n  externalName: x.y\n";
        let expect = Expect {
            kind: Kind::Service,
            name: "a".into(),
            namespace: Some("b".into()),
            service_name: None,
        };
        assert!(
            typed_check(ok, &expect, ReadOptions::default()).is_ok_and(|read| read.doc.is_none())
        );
        let typo = ok.replace("externalName", "externalNmae");
        assert!(typed_check(&typo, &expect, ReadOptions::default()).is_err());
        let two = format!("{ok}---\n{ok}");
        assert!(
            typed_check(&two, &expect, ReadOptions::default())
                .unwrap_err()
                .contains("one YAML document")
        );
        let renamed = ok.replace("name: a", "name: z");
        assert!(typed_check(&renamed, &expect, ReadOptions::default()).is_err());
    }
}
