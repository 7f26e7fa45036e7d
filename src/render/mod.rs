//! Layer 5, render (stage 4): the plan becomes Kubernetes manifests through the minijinja
//! templates in `templates/` (embedded; a folder given with `--templates` overrides them
//! file by file). Every rendered document is parsed back into its typed object and must say
//! exactly what was meant: one document, the expected kind, name and namespace, and no
//! field the type does not know. Templates cannot inject objects or keys through a value.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use minijinja::{AutoEscape, Environment, UndefinedBehavior, Value as Ctx};

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::config::{Config, GatewayRef};
use crate::input::confine::Project;
use crate::input::model::{App, AppId};
use crate::input::observability::PrometheusConfig;
use crate::manifest::routing::Doc;
use crate::plan::lattice_service::{LatticeService, Owner, Policy};
use crate::plan::{Plan, Rule};

use crate::manifest::layout::{HEADER_COMMENT, HEADER_LINES, Side};

/// The rendered tree: path relative to the output folder → file content.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rendered {
    pub files: BTreeMap<PathBuf, String>,
    /// Objects a template wrote without fields the API server would add: Argo CD would
    /// never see them in sync (see [`crate::manifest::stored`]). Only custom templates are looked at:
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
    pub added: Vec<crate::manifest::stored::Added>,
}

/// The embedded templates, by name.
pub const TEMPLATES: &[(&str, &str)] = &[
    (
        "lattice/group-route.yaml.j2",
        include_str!("../../templates/lattice/group-route.yaml.j2"),
    ),
    (
        "lattice/host-route.yaml.j2",
        include_str!("../../templates/lattice/host-route.yaml.j2"),
    ),
    (
        "lattice/target-group-policy.yaml.j2",
        include_str!("../../templates/lattice/target-group-policy.yaml.j2"),
    ),
    (
        "lattice/iam-auth-policy.yaml.j2",
        include_str!("../../templates/lattice/iam-auth-policy.yaml.j2"),
    ),
    (
        "lattice/reference-grant.yaml.j2",
        include_str!("../../templates/lattice/reference-grant.yaml.j2"),
    ),
    (
        "kong/bridge-service.yaml.j2",
        include_str!("../../templates/kong/bridge-service.yaml.j2"),
    ),
    (
        "kong/route.yaml.j2",
        include_str!("../../templates/kong/route.yaml.j2"),
    ),
    (
        "kong/prometheus-rule.yaml.j2",
        include_str!("../../templates/kong/prometheus-rule.yaml.j2"),
    ),
    (
        "kong/prometheus-plugin.yaml.j2",
        include_str!("../../templates/kong/prometheus-plugin.yaml.j2"),
    ),
    (
        "lattice/access-log-policy.yaml.j2",
        include_str!("../../templates/lattice/access-log-policy.yaml.j2"),
    ),
    (
        "kustomization.yaml.j2",
        include_str!("../../templates/kustomization.yaml.j2"),
    ),
];

pub(crate) mod between;
pub mod budget;
pub(crate) mod deploy;
mod monitoring;
pub(crate) mod not_stored;
mod objects;
mod previews;
mod readback;
use objects::{
    AuthPolicyCtx, BackendCtx, Bridge, GatewayCtx, GroupRoute, HeaderCtx, HostRoute, KongRoute,
    KustomizationCtx, Object, ReferenceGrant, RuleCtx, TargetGroupPolicy,
};
pub(crate) use readback::annotation_in;
use readback::{CheckedFile, ReadOptions, checked_file, with_header};

/// A compiled template set, built once per run.
pub struct Templates {
    env: Environment<'static>,
    /// The folder given with `--templates`, and the names of the templates found there.
    custom: Option<(PathBuf, Vec<&'static str>)>,
    /// Whether the built-in templates' output is read back too (`--verify`).
    verify: bool,
    /// What the custom templates have rendered so far in this run, in bytes (see
    /// [`budget::CUSTOM_OUTPUT`]).
    custom_output: std::sync::atomic::AtomicUsize,
}

impl Templates {
    /// The embedded templates, with those found in `dir` (same relative names) instead. A
    /// template in `dir` must resolve inside the project it comes with (see
    /// [`crate::input::confine`]): one that leads out of it is refused, never read.
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
        if let Some((d, _)) = dir {
            missing_templates_folder(d)?;
        }
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
            verify: false,
            custom_output: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// With `on`, the built-in templates' output is parsed back too and must equal the
    /// typed model of each object (`--verify`); custom templates' always is.
    pub fn verifying(mut self, on: bool) -> Templates {
        self.verify = on;
        self
    }

    /// Whether template `name` comes from the `--templates` folder: only those can leave
    /// out a field the API server defaults (tests/suite/stored.rs proves the built-in ones).
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

    /// Counts `bytes` a custom template rendered for one object against the caps on one
    /// object and on the run: its output is parsed back afterwards, which takes far more
    /// memory than the text.
    fn count_custom_output(&self, name: &str, bytes: usize) -> Result<(), Diagnostic> {
        use std::sync::atomic::Ordering;
        let total = self.custom_output.fetch_add(bytes, Ordering::Relaxed) + bytes;
        let (what, cap) = if bytes > budget::OBJECT_OUTPUT {
            ("one object", budget::OBJECT_OUTPUT)
        } else if total > budget::CUSTOM_OUTPUT {
            ("the run's objects in all", budget::CUSTOM_OUTPUT)
        } else {
            return Ok(());
        };
        Err(Diagnostic::error(
            Code::TemplateError,
            format!(
                "template {name} rendered more than {} MiB for {what}",
                cap / (1024 * 1024)
            ),
        )
        .at(Span::file(self.file_of(name)))
        .help("a template renders one Kubernetes object, which the API server stores only up to about 1.5 MiB: look for text repeated or joined with itself"))
    }

    fn render(&self, name: &str, ctx: Ctx) -> Result<String, minijinja::Error> {
        let template = self.env.get_template(name)?;
        match TEMPLATES.iter().find(|(n, _)| *n == name) {
            Some((name, _)) => budget::within(name, || template.render(ctx)),
            None => template.render(ctx),
        }
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
/// The characters JSON leaves as they are but YAML does not are escaped too.
pub(crate) fn yaml_scalar(value: String) -> String {
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
        return value;
    }
    let json = serde_json::to_string(&value).expect("strings always serialize");
    if !json.contains(json_raw_but_not_yaml) {
        return json;
    }
    // A raw character is never part of one of JSON's escapes, so each can be replaced alone.
    json.chars()
        .map(|c| {
            if json_raw_but_not_yaml(c) {
                format!("\\u{:04x}", u32::from(c))
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Characters that JSON writes as they are but that YAML does not read back as themselves:
/// not printable (DEL, the C1 controls, U+FFFE, U+FFFF, and to Kubernetes' parser, go-yaml,
/// the byte order mark: refused), or a line break to go-yaml (NEL, U+2028, U+2029: folded
/// to a space in a quoted scalar).
fn json_raw_but_not_yaml(c: char) -> bool {
    matches!(
        c,
        '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
    )
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

/// The context of a rule of the plan: its match, and its app's backends.
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
        canary: app.canary.as_ref().map(|c| BackendCtx {
            name: &c.service,
            namespace: &app.namespace,
            port: c.port,
        }),
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
    IamAuthPolicy,
    Kustomization,
    PrometheusRule,
    KongPlugin,
    AccessLogPolicy,
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
            Kind::IamAuthPolicy => ("application-networking.k8s.aws/v1alpha1", "IAMAuthPolicy"),
            Kind::Kustomization => ("kustomize.config.k8s.io/v1beta1", "Kustomization"),
            Kind::PrometheusRule => ("monitoring.coreos.com/v1", "PrometheusRule"),
            Kind::KongPlugin => ("configuration.konghq.com/v1", "KongPlugin"),
            Kind::AccessLogPolicy => ("application-networking.k8s.aws/v1alpha1", "AccessLogPolicy"),
        }
    }
}

/// File name of an object: `<kind>-<name>.yaml`, lowercase, predictable from the plan.
fn file_name(kind: Kind, name: &str) -> String {
    format!("{}-{name}.yaml", kind.api().1.to_ascii_lowercase())
}

/// How to make an object's context; made on the thread that renders it.
type MakeObject<'a> = Box<dyn FnOnce() -> Object<'a> + Send + 'a>;

/// One object to render: the template, its context and what it must turn out to be.
struct Job<'a> {
    side: Side,
    file: String,
    template: &'static str,
    object: MakeObject<'a>,
    expect: Expect,
}

/// Collects the objects of a tree and renders them in parallel, a batch at a time (making
/// the contexts and rendering, and the typed read-back where there is one, are the work,
/// and independent per object; batches keep the jobs waiting in memory few).
struct Renderer<'a> {
    templates: &'a Templates,
    jobs: Vec<Job<'a>>,
    done: Vec<RenderedObject>,
    diags: Diagnostics,
    keep_docs: bool,
}

/// Objects rendered per parallel batch.
const BATCH: usize = 4096;

/// A rendered, checked object.
struct RenderedObject {
    side: Side,
    file: String,
    template: &'static str,
    body: String,
    /// The routing model of the object, when asked for.
    doc: Option<Doc>,
    /// Fields the API server would add to it.
    added: Vec<crate::manifest::stored::Added>,
}

/// The routing model of each rendered object, by path relative to the output folder in
/// order: from the typed model of a built-in template's object, from the typed read-back of
/// a custom one's; a check, and a rollout, need not parse them again.
pub(crate) type Docs = crate::manifest::tree::Docs;

impl<'a> Renderer<'a> {
    fn emit(
        &mut self,
        side: Side,
        template: &'static str,
        object: impl FnOnce() -> Object<'a> + Send + 'a,
        expect: Expect,
    ) {
        let file = file_name(expect.kind, &expect.name);
        self.emit_as(side, file, template, object, expect);
    }

    fn emit_as(
        &mut self,
        side: Side,
        file: String,
        template: &'static str,
        object: impl FnOnce() -> Object<'a> + Send + 'a,
        expect: Expect,
    ) {
        self.jobs.push(Job {
            side,
            file,
            template,
            object: Box::new(object),
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
        let results: Vec<Result<RenderedObject, Diagnostic>> = std::mem::take(&mut self.jobs)
            .into_par_iter()
            .map(|job| {
                let done = render_job(templates, job, keep);
                crate::diag::progress::advance(1);
                done
            })
            .collect();
        for r in results {
            match r {
                Ok(x) => self.done.push(x),
                Err(d) => self.diags.push(d),
            }
        }
    }

    fn run(mut self) -> (Vec<RenderedObject>, Diagnostics) {
        self.flush();
        (self.done, self.diags)
    }
}

/// Renders one object. A custom template's output is read back into its typed object,
/// always; a built-in template's only with `--verify` (then it must equal the typed
/// model), since tests/suite/proof.rs and the `pipeline` fuzz target prove that it does for any
/// valid input. The routing model, when asked for, comes from a built-in template's object
/// (see [`Object::doc`]) and from the read-back of a custom one's.
fn render_job(
    templates: &Templates,
    job: Job,
    keep_doc: bool,
) -> Result<RenderedObject, Diagnostic> {
    let object = (job.object)();
    let text = templates
        .render(job.template, object.context())
        .map_err(|e| template_error(job.template, None, &e))?;
    let custom = templates.is_custom(job.template);
    if custom {
        templates.count_custom_output(job.template, text.len())?;
    }
    let model = (!custom && templates.verify).then(|| object.model());
    // Where the file goes under the output folder: the routing model names it.
    let path = keep_doc.then(|| PathBuf::from(job.side.dir()).join(&job.file));
    let checked = if custom || templates.verify {
        let read = ReadOptions {
            keep_doc: path.as_deref().filter(|_| custom),
            stored_form: custom,
            model: model.as_ref(),
        };
        checked_file(job.template, &text, &job.expect, read)?
    } else {
        CheckedFile {
            body: with_header(&text).0,
            doc: None,
            added: Vec::new(),
        }
    };
    let doc = match (&model, path.as_deref()) {
        _ if custom => checked.doc,
        (Some(model), Some(p)) => model.doc(p),
        (None, Some(p)) => object.doc(p),
        (_, None) => None,
    };
    Ok(RenderedObject {
        side: job.side,
        file: job.file,
        template: job.template,
        body: checked.body,
        doc,
        added: checked.added,
    })
}

/// Renders the whole tree, or returns every problem found.
pub fn render(
    plan: &Plan,
    apps: &[App],
    config: &Config,
    templates: &Templates,
) -> Result<Rendered, Diagnostics> {
    render_tree(plan, apps, config, templates, false).map(|(out, _)| out)
}

/// Renders the whole tree like [`render`], with the routing model of what it rendered.
pub(crate) fn render_with_docs(
    plan: &Plan,
    apps: &[App],
    config: &Config,
    templates: &Templates,
) -> Result<(Rendered, Docs), Diagnostics> {
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
) -> Result<(Rendered, Docs), Diagnostics> {
    crate::diag::progress::stage("rendering and checking objects", None);
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
    for (id, app) in AppId::enumerate(apps) {
        if let Some(target) = kong_target(&inputs, id, app) {
            r.emit_kong_route(&inputs, id, app, app.bridge_name(), target);
        }
    }
    for (id, app) in AppId::enumerate(apps) {
        if let Some(target) = kong_target(&inputs, id, app) {
            r.emit_bridge(&inputs, app, app.bridge_name(), target);
        }
    }
    r.emit_previews(&inputs);
    let (rendered, diags) = r.run();
    assemble(rendered, diags, templates)
}

impl<'a> Renderer<'a> {
    /// The Lattice side: an HTTPRoute per Lattice service of the plan, a shared group's or
    /// a host-routed app's.
    fn emit_lattice_routes(&mut self, t: &'a Inputs<'a>) {
        for service in &t.plan.services {
            match service.owner {
                Owner::Group(number) => self.emit_group_route(t, service, number),
                Owner::App(id) => self.emit_host_route(t, service, &t.apps[id]),
            }
        }
    }

    /// A shared group's HTTPRoute, its rules as the plan ordered them.
    fn emit_group_route(&mut self, t: &'a Inputs<'a>, service: &'a LatticeService, number: u32) {
        let config = t.config;
        let name = service.route.clone();
        let service_name = service.annotation().map(str::to_string);
        let object = {
            let name = name.clone();
            let service_name = service_name.clone();
            move || {
                let header = dispatch_header(config);
                let rules = (service.rules.iter())
                    .map(|planned| RuleCtx {
                        header: header.filter(|_| planned.by_header).map(|name| HeaderCtx {
                            name,
                            value: &t.apps[planned.rule.app].name,
                        }),
                        ..rule_ctx(t.apps, &planned.rule)
                    })
                    .collect();
                Object::GroupRoute(GroupRoute {
                    name,
                    namespace: &service.namespace,
                    number,
                    service_name,
                    hostname: config.group_domain(number),
                    gateway: &t.lattice_gw,
                    rules,
                    dispatch_header: header,
                    preview: false,
                })
            }
        };
        self.emit(
            Side::Lattice,
            "lattice/group-route.yaml.j2",
            object,
            Expect {
                kind: Kind::HttpRoute,
                name,
                namespace: Some(service.namespace.clone()),
                service_name,
            },
        );
    }

    /// A host-routed app's own HTTPRoute, in the app's namespace.
    fn emit_host_route(&mut self, t: &'a Inputs<'a>, service: &'a LatticeService, app: &'a App) {
        let service_name = service.annotation().map(str::to_string);
        let in_ctx = service_name.clone();
        let object = move || {
            let rules = (service.rules.iter())
                .map(|planned| rule_ctx(t.apps, &planned.rule))
                .collect();
            Object::HostRoute(HostRoute {
                name: &service.route,
                namespace: &service.namespace,
                app: &app.name,
                service_name: in_ctx,
                hostname: app.own_route().2,
                adopted: app.adopted.is_some(),
                gateway: &t.lattice_gw,
                rules,
            })
        };
        self.emit(
            Side::Lattice,
            "lattice/host-route.yaml.j2",
            object,
            Expect {
                kind: Kind::HttpRoute,
                name: service.route.clone(),
                namespace: Some(service.namespace.clone()),
                service_name,
            },
        );
    }

    /// The Lattice side: an IAMAuthPolicy beside each Lattice route the plan gives one,
    /// letting in each app's callers on that app's requests.
    fn emit_auth_policies(&mut self, t: &'a Inputs<'a>) {
        for service in &t.plan.services {
            if let Some(policy) = &service.policy {
                let (route, namespace) = (service.route.clone(), service.namespace.as_str());
                self.emit_auth_policy(route, namespace, service.group(), policy);
            }
        }
    }

    fn emit_auth_policy(
        &mut self,
        route: String,
        namespace: &'a str,
        group: Option<u32>,
        policy: &'a Policy,
    ) {
        let expect = Expect {
            kind: Kind::IamAuthPolicy,
            name: route.clone(),
            namespace: Some(namespace.to_string()),
            service_name: None,
        };
        let object = move || {
            Object::AuthPolicy(AuthPolicyCtx {
                name: route.clone(),
                namespace,
                group,
                policy: policy.text(),
                route,
            })
        };
        self.emit(
            Side::Lattice,
            "lattice/iam-auth-policy.yaml.j2",
            object,
            expect,
        );
    }

    /// The Lattice side: an AccessLogPolicy per Lattice route, beside it.
    fn emit_access_log_policies(&mut self, t: &'a Inputs<'a>, destination: &'a str) {
        for service in &t.plan.services {
            let (route, namespace, group) = (
                service.route.clone(),
                service.namespace.as_str(),
                service.group(),
            );
            let expect = Expect {
                kind: Kind::AccessLogPolicy,
                name: route.clone(),
                namespace: Some(namespace.to_string()),
                service_name: None,
            };
            let object = move || {
                Object::AccessLogPolicy(monitoring::AccessLogCtx {
                    name: route.clone(),
                    namespace,
                    group,
                    route,
                    destination,
                })
            };
            self.emit(
                Side::Lattice,
                "lattice/access-log-policy.yaml.j2",
                object,
                expect,
            );
        }
    }

    /// The Kong side: the apps' PrometheusRule, one per Lattice service, and the
    /// Prometheus plugin when latgen writes it.
    fn emit_prometheus_rules(&mut self, t: &'a Inputs<'a>, p: &'a PrometheusConfig) {
        let config = t.config;
        let namespace = &config.kong.namespace;
        let apps_rule = move || monitoring::PrometheusRuleCtx {
            name: monitoring::APPS_RULE.into(),
            namespace: namespace.clone(),
            labels: monitoring::rule_labels(p),
            group: monitoring::APPS_RULE.into(),
            rules: monitoring::app_rules(config),
        };
        self.emit_prometheus_rule(monitoring::APPS_RULE.into(), namespace, apps_rule);
        for service in &t.plan.services {
            let name = format!("latgen-{}", service.route);
            let rule = {
                let name = name.clone();
                move || monitoring::PrometheusRuleCtx {
                    rules: monitoring::service_rules(service, t.apps, config, p),
                    name: name.clone(),
                    namespace: namespace.clone(),
                    labels: monitoring::rule_labels(p),
                    group: name,
                }
            };
            self.emit_prometheus_rule(name, namespace, rule);
        }
        if p.kong_plugin {
            let name = crate::input::observability::KONG_PLUGIN;
            let object =
                move || Object::PrometheusPlugin(monitoring::KongPluginCtx { name, namespace });
            let expect = Expect {
                kind: Kind::KongPlugin,
                name: name.to_string(),
                namespace: Some(namespace.clone()),
                service_name: None,
            };
            self.emit(Side::Kong, "kong/prometheus-plugin.yaml.j2", object, expect);
        }
    }

    fn emit_prometheus_rule(
        &mut self,
        name: String,
        namespace: &str,
        rule: impl FnOnce() -> monitoring::PrometheusRuleCtx + Send + 'a,
    ) {
        let expect = Expect {
            kind: Kind::PrometheusRule,
            name,
            namespace: Some(namespace.to_string()),
            service_name: None,
        };
        let object = move || Object::PrometheusRule(rule());
        self.emit(Side::Kong, "kong/prometheus-rule.yaml.j2", object, expect);
    }

    /// The Lattice side: a ReferenceGrant in each namespace a group route points into.
    fn emit_reference_grants(&mut self, t: &'a Inputs<'a>) {
        let config = t.config;
        let namespaces: std::collections::BTreeSet<&str> = t
            .plan
            .groups
            .iter()
            .flat_map(|g| g.members().map(|id| t.apps[id].namespace.as_str()))
            // Preview groups point into the previewed apps' namespaces too.
            .chain(t.plan.previews.list.iter().map(|p| p.namespace.as_str()))
            .filter(|ns| *ns != config.lattice.namespace)
            .collect();
        let name = format!("latgen-from-{}", config.lattice.namespace);
        for ns in namespaces {
            let object = {
                let name = name.clone();
                move || {
                    Object::ReferenceGrant(ReferenceGrant {
                        name,
                        namespace: ns,
                        from_namespace: &config.lattice.namespace,
                    })
                }
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
                object,
                expect,
            );
        }
    }

    /// The Lattice side: a TargetGroupPolicy per Service of an app with a health check;
    /// when several apps share one, the first by name sets it.
    fn emit_target_group_policies(&mut self, t: &'a Inputs<'a>) {
        let mut seen = std::collections::BTreeSet::new();
        // A canary's Service is probed as the app's own is: the same health check.
        let targets = (t.apps.iter().filter(|a| a.health_check.is_some())).flat_map(|app| {
            let canary = app
                .canary
                .as_ref()
                .map(|c| (app, c.service.as_str(), c.port));
            std::iter::once((app, app.service.as_str(), app.port)).chain(canary)
        });
        for (app, service, port) in targets {
            if !seen.insert((app.namespace.as_str(), service)) {
                continue;
            }
            let hc = app.health_check.as_ref().expect("filtered");
            let object = move || {
                Object::TargetGroupPolicy(TargetGroupPolicy {
                    name: service,
                    namespace: &app.namespace,
                    app: &app.name,
                    service,
                    port,
                    interval: hc.interval_seconds,
                    path: hc.path.as_deref(),
                })
            };
            let expect = Expect {
                kind: Kind::TargetGroupPolicy,
                name: service.to_string(),
                namespace: Some(app.namespace.clone()),
                service_name: None,
            };
            let file = file_name(
                Kind::TargetGroupPolicy,
                &format!("{}-{}", app.namespace, service),
            );
            self.emit_as(
                Side::Lattice,
                file,
                "lattice/target-group-policy.yaml.j2",
                object,
                expect,
            );
        }
    }

    /// The Kong side: an ExternalName Service that stands for the app's Lattice service.
    fn emit_bridge(&mut self, t: &'a Inputs<'a>, app: &'a App, bridge: String, target: String) {
        let config = t.config;
        let (port, protocol) = (config.kong.upstream_port(), config.kong.protocol.as_str());
        let name = bridge.clone();
        let object = move || {
            Object::Bridge(Bridge {
                name: bridge,
                namespace: &config.kong.namespace,
                app: &app.name,
                target,
                port,
                protocol,
                timeouts: app.kong.timeouts,
                retries: app.kong.retries,
            })
        };
        self.emit(
            Side::Kong,
            "kong/bridge-service.yaml.j2",
            object,
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
        let object = move || {
            let base = match &app.host {
                Some(h) => vec![h.as_str()],
                None => config.kong.hostnames.iter().map(String::as_str).collect(),
            };
            let extra = app.kong.hosts.iter().map(String::as_str);
            let hostnames = base.into_iter().chain(extra).collect();
            let matches = (t.plan.rules_of(id).iter())
                .map(|rule| rule_ctx(t.apps, rule))
                .collect();
            Object::KongRoute(KongRoute {
                name: &app.name,
                namespace: &config.kong.namespace,
                app: &app.name,
                gateway: &t.kong_gw,
                hostnames,
                plugins: route_plugins(config, app),
                matches,
                target,
                bridge,
                port,
                dispatch_header: dispatch_header(config),
                dispatch_value: &app.name,
                preview: None,
            })
        };
        self.emit(
            Side::Kong,
            "kong/route.yaml.j2",
            object,
            Expect {
                kind: Kind::HttpRoute,
                name: app.name.clone(),
                namespace: Some(config.kong.namespace.clone()),
                service_name: None,
            },
        );
    }
}

/// The plugins an app's Kong route names: the app's, then the Prometheus plugin latgen
/// writes when observability asks for it.
fn route_plugins<'a>(config: &Config, app: &'a App) -> Vec<&'a str> {
    let mut plugins: Vec<&str> = app.kong.plugins.iter().map(String::as_str).collect();
    let ours = crate::input::observability::KONG_PLUGIN;
    let wanted = (config.observability.prometheus.as_ref()).is_some_and(|p| p.kong_plugin);
    if wanted && !plugins.contains(&ours) {
        plugins.push(ours);
    }
    plugins
}

/// The Lattice service Kong sends app `id` to, by its domain: its group's, or its own host
/// for a host-routed app (in a group only under header dispatch). An app with no group yet
/// has none, and no Kong side.
fn kong_target(t: &Inputs, id: AppId, app: &App) -> Option<String> {
    match t.plan.serving_group(id) {
        Some(n) => Some(t.config.group_domain(n)),
        // Its own route's domain: the adopted route's, or its host.
        None => Some(app.own_route().2)
            .filter(|h| !h.is_empty())
            .map(str::to_string),
    }
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
    String,
    Option<Doc>,
    &'static str,
    Vec<crate::manifest::stored::Added>,
);

/// The rendered files (`names`, with their `parts` in the same order) as a tree, with
/// their routing models in path order.
fn tree_of(names: &[(Side, String)], parts: Vec<Parts>) -> (Rendered, Docs) {
    let mut out = Rendered::default();
    let (mut files, mut docs) = (Vec::with_capacity(parts.len()), Vec::new());
    for ((side, file), (body, doc, template, added)) in names.iter().zip(parts) {
        let path = PathBuf::from(side.dir()).join(file);
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
    // of a tree, and a list in nearly sorted order sorts in few comparisons.
    out.files = files.into_iter().collect();
    // In path order, as the files are.
    docs.sort_by(|a: &(PathBuf, Doc), b| a.0.cmp(&b.0));
    out.not_stored.sort_by(|a, b| a.file.cmp(&b.file));
    (out, Docs::from_docs(docs))
}

/// The kustomization file of one side, listing the side's files in name order.
fn kustomization_of(
    templates: &Templates,
    side: Side,
    names: &[(Side, String)],
) -> Result<String, Diagnostic> {
    let mut list: Vec<&str> = (names.iter())
        .filter(|(s, _)| *s == side)
        .map(|(_, f)| f.as_str())
        .collect();
    list.sort_unstable();
    kustomization(templates, &list)
}

/// A kustomization file listing `resources`.
fn kustomization(templates: &Templates, resources: &[&str]) -> Result<String, Diagnostic> {
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
    render_job(templates, job, false).map(|r| r.body)
}

/// A `--templates` folder that is not there is an error, not the built-in templates: a typo
/// in a CI command would otherwise change what is rendered and checked without a word.
fn missing_templates_folder(dir: &Path) -> Result<(), Diagnostic> {
    if dir.is_dir() {
        return Ok(());
    }
    let why = if dir.exists() {
        "is not a folder"
    } else {
        "does not exist"
    };
    Err(Diagnostic::error(
        Code::IoError,
        format!("the templates folder {} {why}", dir.display()),
    )
    .at(Span::file(dir))
    .help("give --templates the folder that holds your templates (the built-in ones are in the templates/ folder of latgen's source, same file names), or leave it out to use those"))
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

    /// Found by tests/suite/proof.rs: a gateway namespace with U+009F rendered a route that does
    /// not parse, since JSON leaves the character as it is and YAML cannot print it.
    #[test]
    fn scalars_escape_what_yaml_cannot_print_or_reads_as_a_line_break() {
        for c in [
            '\u{7f}', '\u{85}', '\u{9f}', '\u{2028}', '\u{2029}', '\u{feff}', '\u{fffe}',
            '\u{ffff}',
        ] {
            let value = format!("a{c}b");
            let scalar = yaml_scalar(value.clone());
            assert!(!scalar.contains(c), "{c:?} is left raw in {scalar}");
            let back: String = serde_saphyr::from_str(&scalar).unwrap();
            assert_eq!(back, value);
        }
        // Characters YAML prints are left as they are.
        assert_eq!(yaml_scalar("é\u{1f600}".into()), "\"é\u{1f600}\"");
    }
}
