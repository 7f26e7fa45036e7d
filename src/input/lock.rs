//! `latgen.lock`: which shared group each path-routed app is in, and the moves in flight.
//! Committed, so that assignments stay put across runs and machines: adding an app never
//! moves another, and a move goes through its steps one PR at a time.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::app::Pos;
use crate::input::config::Dispatch;

pub(crate) const LOCK_VERSION: u32 = 1;

/// The steps of a move between groups; each is its own PR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum MoveStep {
    /// The Lattice side adds the app's rules to the new group; the old group keeps them.
    AddRules = 1,
    /// The Kong side points the bridge and the rewrite host at the new group.
    SwitchKong = 2,
}

impl MoveStep {
    pub fn number(self) -> u32 {
        self as u32
    }

    pub fn from_number(n: u32) -> Option<MoveStep> {
        match n {
            1 => Some(MoveStep::AddRules),
            2 => Some(MoveStep::SwitchKong),
            _ => None,
        }
    }
}

/// A move in flight: the app is in its `apps` group and also in `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Move {
    pub to: u32,
    pub step: MoveStep,
}

/// Where the output stands in a change shipped as several PRs (`render --base`): this
/// state is step `step` of `of`. Only a step short of the target records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Rollout {
    /// The step this output is.
    pub step: u32,
    /// The number of steps of the change.
    pub of: u32,
}

/// Who named a route's Lattice service.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum NamedBy {
    /// latgen, through the `service-name-override` annotation on the route.
    Latgen,
    /// The controller, from the route's name and namespace: the route was created without
    /// the annotation, and adding it later does nothing.
    Controller,
}

impl NamedBy {
    pub fn as_str(self) -> &'static str {
        match self {
            NamedBy::Latgen => "latgen",
            NamedBy::Controller => "controller",
        }
    }
}

/// The Lattice service name of a group or dedicated route, fixed when the route is created.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ServiceName {
    /// The Lattice service's name.
    pub name: String,
    /// Who chose it: `latgen` (the route carries the override annotation) or `controller`
    /// (derived from the route's name and namespace).
    pub set: NamedBy,
}

/// The route an app had before latgen, adopted as it is (`latgen import`): its name is its
/// Lattice service's, so latgen writes it under that name, in that namespace, on that
/// custom domain, until the app is consolidated into a group (`latgen plan --apply`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adopted {
    /// The HTTPRoute's name.
    pub route: String,
    /// The HTTPRoute's namespace (the app's).
    pub namespace: String,
    /// Where Kong sends the app's requests: the route's hostname (its Lattice service's
    /// custom domain), or the domain Lattice assigned a service without one.
    pub hostname: String,
    /// The route has no hostname: Kong reaches it at the domain Lattice assigned
    /// (`assignedDomain:` in the lock), which latgen records on the route and never
    /// writes as a hostname (a service's custom domain is set when it is created).
    pub assigned: bool,
    /// The name of the route's live IAMAuthPolicy (`authPolicy:` in the lock) when it is not
    /// the route's: render writes the policy under it, so that Argo CD takes over the object
    /// that guards the service rather than adding a second and pruning the first (deleting
    /// a service's policy sets its auth type to NONE, open to every caller).
    pub auth_policy: Option<String>,
}

/// An `adopted:` entry as written: one of `hostname` or `assignedDomain`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct AdoptedFile {
    /// The HTTPRoute's name.
    route: String,
    /// The HTTPRoute's namespace (the app's).
    namespace: String,
    /// The route's hostname: its Lattice service's custom domain.
    hostname: Option<String>,
    /// The domain Lattice assigned the route's service, for a route without a hostname.
    assigned_domain: Option<String>,
    /// The name of the route's live IAMAuthPolicy, when it is not the route's name.
    auth_policy: Option<String>,
}

/// What the lock file records: the group of each path-routed app, and the moves in flight,
/// by app name. An entry holds `G` (a group) and `M` (a move): as read from the file
/// ([`Lock`], the default), each with the place it was read from, for findings; as a plan
/// writes it ([`LockState`]), the bare values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lock<G = (u32, Pos), M = (Move, Pos)> {
    /// App → the group that serves it (its Kong side points there).
    pub apps: BTreeMap<String, G>,
    /// App → the move it is in the middle of.
    pub moves: BTreeMap<String, M>,
    /// The rollout the output is in the middle of, if any.
    pub rollout: Option<Rollout>,
    /// The dispatch mode the groups were planned for: a plan for the other mode places
    /// every app anew, in groups numbered after these.
    pub dispatch: Dispatch,
    /// Route (a group's or a host-routed app's) → its Lattice service name. `None`: the
    /// lock has no `services:` section (written before latgen named services, or never
    /// with a prefix set).
    pub services: Option<BTreeMap<String, ServiceName>>,
    /// Preview (`<app>/<name>`) → the number of the preview group it is in.
    pub previews: BTreeMap<String, G>,
    /// App → the route it had before latgen, kept as it is (`latgen import`).
    pub adopted: BTreeMap<String, Adopted>,
    /// The output folder (from the project folder) where this environment's live setup was
    /// rendered before it took over the project's `latgen.lock` (`render --adopt-lock`):
    /// a base revision with no output of the environment's own is read from there.
    pub adopted_from: Option<String>,
    /// Whether the lock was read from a file (`false`: a new project).
    pub existed: bool,
}

/// A lock without positions, as a plan or a move writes it.
pub(crate) type LockState = Lock<u32, Move>;

impl<G, M> Default for Lock<G, M> {
    fn default() -> Self {
        Lock {
            apps: BTreeMap::new(),
            moves: BTreeMap::new(),
            rollout: None,
            dispatch: Dispatch::Path,
            services: None,
            previews: BTreeMap::new(),
            adopted: BTreeMap::new(),
            adopted_from: None,
            existed: false,
        }
    }
}

impl Lock {
    /// The same lock without positions.
    pub fn state(&self) -> LockState {
        Lock {
            apps: self.apps.iter().map(|(k, v)| (k.clone(), v.0)).collect(),
            moves: self.moves.iter().map(|(k, v)| (k.clone(), v.0)).collect(),
            rollout: self.rollout,
            dispatch: self.dispatch,
            services: self.services.clone(),
            previews: self
                .previews
                .iter()
                .map(|(k, v)| (k.clone(), v.0))
                .collect(),
            adopted: self.adopted.clone(),
            adopted_from: self.adopted_from.clone(),
            existed: self.existed,
        }
    }
}

impl LockState {
    /// The same lock as if read from a file, every entry placed nowhere: for planning
    /// again from a plan's lock.
    pub fn positioned(&self) -> Lock {
        Lock {
            apps: (self.apps.iter())
                .map(|(k, v)| (k.clone(), (*v, Pos::default())))
                .collect(),
            moves: (self.moves.iter())
                .map(|(k, v)| (k.clone(), (*v, Pos::default())))
                .collect(),
            rollout: self.rollout,
            dispatch: self.dispatch,
            services: self.services.clone(),
            previews: (self.previews.iter())
                .map(|(k, v)| (k.clone(), (*v, Pos::default())))
                .collect(),
            adopted: self.adopted.clone(),
            adopted_from: self.adopted_from.clone(),
            existed: self.existed,
        }
    }
}

/// `latgen.lock`. The schema is what its reader checks values against.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct LockFile {
    /// The lock file format's version.
    #[schemars(with = "u32")]
    version: Spanned<u32>,
    /// App → the number of the shared group it is in.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, u32>")]
    apps: BTreeMap<String, Spanned<u32>>,
    /// App → the move it is in the middle of.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, MoveFile>")]
    moves: BTreeMap<String, Spanned<MoveFile>>,
    /// The rollout the output is in the middle of.
    #[serde(default)]
    rollout: Option<Rollout>,
    /// `header` when the groups were planned for `lattice.dispatch: header`; absent for
    /// `path`.
    #[serde(default)]
    dispatch: Dispatch,
    /// Route (`group-01`, or a host-routed app's name) → the name of its Lattice service,
    /// recorded when the route is created and never changed: `set: latgen` when the route
    /// carries the `service-name-override` annotation, `set: controller` when the
    /// controller derived the name (routes created before `lattice.serviceNamePrefix`).
    #[serde(default)]
    #[schemars(with = "Option<BTreeMap<String, ServiceName>>")]
    services: Option<BTreeMap<String, Spanned<ServiceName>>>,
    /// Preview (`<app>/<name>`) → the number of the preview group it is in.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, u32>")]
    previews: BTreeMap<String, Spanned<u32>>,
    /// App → the route it had before latgen (`latgen import`), written under its own name
    /// until the app is consolidated into a group.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, AdoptedFile>")]
    adopted: BTreeMap<String, Spanned<AdoptedFile>>,
    /// The output folder this environment's live setup was rendered to before it took over
    /// the project's `latgen.lock` (`latgen render --adopt-lock ENV`).
    #[serde(default, rename = "adoptedFrom")]
    #[schemars(with = "Option<String>")]
    adopted_from: Option<Spanned<String>>,
}

/// A move in flight.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct MoveFile {
    /// The number of the group the app moves to.
    to: u32,
    /// The step of the move (1 or 2).
    step: u32,
}

/// Field names of `latgen.lock`, for "did you mean" hints.
pub(crate) const LOCK_FIELDS: &[&str] = &[
    "version",
    "apps",
    "moves",
    "rollout",
    "dispatch",
    "services",
    "name",
    "set",
    "previews",
    "adopted",
    "route",
    "namespace",
    "hostname",
    "assignedDomain",
    "authPolicy",
    "adoptedFrom",
];

pub(crate) fn parse(file: &Path, text: &str, diags: &mut Diagnostics) -> Option<Lock> {
    let raw: LockFile = crate::input::yaml::parse_yaml(file, text, LOCK_FIELDS, diags)?;
    let at = |p: Pos| Span::new(file, p.line, p.column);
    if raw.version.value != LOCK_VERSION {
        diags.push(
            Diagnostic::error(
                Code::InvalidLock,
                format!(
                    "lock file version {} is not supported (this latgen writes version {LOCK_VERSION})",
                    raw.version.value
                ),
            )
            .at(at(Pos::of(&raw.version)))
            .help("use the latgen version that wrote it, or delete the file to assign groups anew"),
        );
        return None;
    }
    let mut lock = Lock {
        rollout: raw.rollout,
        dispatch: raw.dispatch,
        services: raw.services.map(|s| checked_services(s, file, diags)),
        // A bad entry only places the preview anew: group 0 is never kept.
        previews: (raw.previews.into_iter())
            .map(|(k, v)| (k, (v.value, Pos::of(&v))))
            .collect(),
        adopted: checked_adopted(raw.adopted, file, diags),
        adopted_from: checked_folder(raw.adopted_from, file, diags),
        existed: true,
        ..Lock::default()
    };
    for (name, group) in raw.apps {
        let pos = Pos::of(&group);
        if group.value == 0 {
            diags.push(
                Diagnostic::error(
                    Code::InvalidLock,
                    format!("app `{name}` is in group 0; groups start at 1"),
                )
                .at(at(pos))
                .help("remove the line so that render places the app anew"),
            );
            continue;
        }
        lock.apps.insert(name, (group.value, pos));
    }
    for (name, m) in raw.moves {
        let pos = Pos::of(&m);
        let step = MoveStep::from_number(m.value.step);
        let from = lock.apps.get(&name).map(|g| g.0);
        let problem = match (step, from) {
            (None, _) => Some(format!(
                "move of `{name}` is at step {}; steps are 1 and 2",
                m.value.step
            )),
            (_, None) => Some(format!("`{name}` is moving but has no group under `apps`")),
            (_, Some(f)) if f == m.value.to || m.value.to == 0 => {
                Some(format!("move of `{name}` goes to group {}", m.value.to))
            }
            _ => None,
        };
        match (problem, step) {
            (None, Some(step)) => {
                lock.moves.insert(
                    name,
                    (
                        Move {
                            to: m.value.to,
                            step,
                        },
                        pos,
                    ),
                );
            }
            (p, _) => diags.push(
                Diagnostic::error(Code::InvalidLock, p.unwrap_or_default())
                    .at(at(pos))
                    .help("restart the move with `latgen move APP --group N`, or remove the line"),
            ),
        }
    }
    Some(lock)
}

/// The `services:` entries that can be used: a route name and a name Lattice takes (both
/// are written back unquoted, and the name goes into the route's annotation).
fn checked_services(
    raw: BTreeMap<String, Spanned<ServiceName>>,
    file: &Path,
    diags: &mut Diagnostics,
) -> BTreeMap<String, ServiceName> {
    let mut services = BTreeMap::new();
    for (route, entry) in raw {
        let pos = Pos::of(&entry);
        let problem = if latgen_sim::platform::dns1123_label_problem(&route).is_some() {
            Some(format!("`{route}` under services is not a route name"))
        } else {
            latgen_sim::platform::lattice_service_name_problem(&entry.value.name).map(|p| {
                format!(
                    "the Lattice service name of route `{route}` is `{}`, which {p}",
                    entry.value.name
                )
            })
        };
        match problem {
            None => {
                services.insert(route, entry.value);
            }
            Some(problem) => diags.push(
                Diagnostic::error(Code::InvalidLock, problem)
                    .at(Span::new(file, pos.line, pos.column))
                    .help("put back the name the route was created with (its service-name-override annotation in the committed output, or the controller's name without one)"),
            ),
        }
    }
    services
}

/// The `adopted:` entries that can be written back: names Kubernetes takes and a DNS
/// hostname (each goes unquoted into the lock and into a route).
fn checked_adopted(
    raw: BTreeMap<String, Spanned<AdoptedFile>>,
    file: &Path,
    diags: &mut Diagnostics,
) -> BTreeMap<String, Adopted> {
    use latgen_sim::platform::{dns1123_label_problem, hostname_problem};
    let mut adopted = BTreeMap::new();
    for (app, entry) in raw {
        let pos = Pos::of(&entry);
        let (a, one_domain) = adopted_of(entry.value);
        let problem = [
            (!one_domain).then(|| {
                format!("the adopted route of `{app}` gives both or neither of `hostname` and `assignedDomain`")
            }),
            dns1123_label_problem(&app)
                .map(|p| format!("`{app}` under adopted is not an app name: {p}")),
            dns1123_label_problem(&a.route)
                .map(|p| format!("the adopted route of `{app}`, `{}`, {p}", a.route)),
            dns1123_label_problem(&a.namespace).map(|p| {
                format!(
                    "the namespace of `{app}`'s adopted route, `{}`, {p}",
                    a.namespace
                )
            }),
            hostname_problem(&a.hostname).map(|p| {
                format!(
                    "the hostname of `{app}`'s adopted route, `{}`, {p}",
                    a.hostname
                )
            }),
            (a.auth_policy.as_deref())
                .and_then(dns1123_label_problem)
                .map(|p| format!("the auth policy of `{app}`'s adopted route {p}")),
        ]
        .into_iter()
        .flatten()
        .next();
        match problem {
            None => {
                adopted.insert(app, a);
            }
            Some(problem) => diags.push(
                Diagnostic::error(Code::InvalidLock, problem)
                    .at(Span::new(file, pos.line, pos.column))
                    .help("put back what `latgen import` wrote: the name, namespace and hostname of the route as it runs"),
            ),
        }
    }
    adopted
}

/// An entry as latgen reads it, and whether it gives exactly one domain.
fn adopted_of(raw: AdoptedFile) -> (Adopted, bool) {
    let one = raw.hostname.is_some() != raw.assigned_domain.is_some();
    let assigned = raw.hostname.is_none() && raw.assigned_domain.is_some();
    let hostname = (raw.hostname.or(raw.assigned_domain)).unwrap_or_default();
    let a = Adopted {
        route: raw.route,
        namespace: raw.namespace,
        hostname,
        assigned,
        auth_policy: raw.auth_policy,
    };
    (a, one)
}

/// `adoptedFrom`: a folder inside the project, as a relative path of plain names, so that a
/// lock cannot send the base's reading elsewhere.
fn checked_folder(
    f: Option<Spanned<String>>,
    file: &Path,
    diags: &mut Diagnostics,
) -> Option<String> {
    let f = f?;
    let pos = Pos::of(&f);
    let plain = |c: &str| {
        !c.is_empty()
            && c != "."
            && c != ".."
            && c.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
    };
    if f.value.split('/').all(plain) {
        return Some(f.value);
    }
    diags.push(
        Diagnostic::error(
            Code::InvalidLock,
            format!("adoptedFrom `{}` is not a folder inside the project", f.value),
        )
        .at(Span::new(file, pos.line, pos.column))
        .help("put back what `latgen render --adopt-lock` wrote (the project's output folder, `generated`), or remove the line"),
    );
    None
}

/// The lock file's text: sorted, one app per line, so a change is a one-line diff.
pub fn serialize(state: &LockState) -> String {
    // Lines within 80 columns, a document start and no spaces inside braces: what
    // yamllint's default rules ask, so that a repository that lints its YAML lints this too.
    let mut out = String::from(
        "# latgen.lock: the shared Lattice group of each path-routed app, and moves in\n\
         # flight. Written by `latgen render` and `latgen move`; commit it with apps/.\n\
         # Groups never change on their own: adding an app never moves another.\n\
         ---\n",
    );
    out.push_str(&format!("version: {LOCK_VERSION}\n"));
    // Only header dispatch is written, so a path-dispatch lock reads as it always has.
    if state.dispatch == Dispatch::Header {
        out.push_str("dispatch: header\n");
    }
    if state.apps.is_empty() {
        out.push_str("apps: {}\n");
    } else {
        out.push_str("apps:\n");
        for (name, group) in &state.apps {
            // Names are validated DNS-1123 labels, so they need no quoting.
            out.push_str(&format!("  {name}: {group}\n"));
        }
    }
    if !state.moves.is_empty() {
        out.push_str("moves:\n");
        for (name, m) in &state.moves {
            out.push_str(&format!(
                "  {name}: {{to: {}, step: {}}}\n",
                m.to,
                m.step.number()
            ));
        }
    }
    if let Some(services) = &state.services {
        out.push_str(&services_text(services));
    }
    if !state.previews.is_empty() {
        out.push_str("previews:\n");
        for (key, group) in &state.previews {
            // `<app>/<name>`: two validated labels and a slash, a plain scalar.
            out.push_str(&format!("  {key}: {group}\n"));
        }
    }
    if !state.adopted.is_empty() {
        out.push_str("adopted:\n");
        for (app, a) in &state.adopted {
            // Validated names and a DNS hostname: plain scalars, a field a line to stay
            // within 80 columns.
            let key = if a.assigned {
                "assignedDomain"
            } else {
                "hostname"
            };
            out.push_str(&format!(
                "  {app}:\n    route: {}\n    namespace: {}\n    {key}: {}\n",
                a.route, a.namespace, a.hostname
            ));
            if let Some(policy) = &a.auth_policy {
                out.push_str(&format!("    authPolicy: {policy}\n"));
            }
        }
    }
    if let Some(from) = &state.adopted_from {
        // Checked to be plain names and slashes: a plain scalar.
        out.push_str(&format!("adoptedFrom: {from}\n"));
    }
    if let Some(r) = state.rollout {
        out.push_str(&format!("rollout: {{ step: {}, of: {} }}\n", r.step, r.of));
    }
    out
}

/// The `services:` section: one route a line.
fn services_text(services: &BTreeMap<String, ServiceName>) -> String {
    if services.is_empty() {
        return "services: {}\n".to_string();
    }
    let mut out = String::from("services:\n");
    for (route, s) in services {
        // Route and service names are validated labels, so they need no quoting.
        out.push_str(&format!(
            "  {route}: {{name: {}, set: {}}}\n",
            s.name,
            s.set.as_str()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let mut state = LockState::default();
        state.apps.insert("shop".to_string(), 2);
        state.apps.insert("cart".to_string(), 1);
        state.moves.insert(
            "shop".to_string(),
            Move {
                to: 4,
                step: MoveStep::SwitchKong,
            },
        );
        state.services = Some(BTreeMap::from([(
            "group-01".to_string(),
            ServiceName {
                name: "shop-g01".to_string(),
                set: NamedBy::Latgen,
            },
        )]));
        state.existed = true;
        let text = serialize(&state);
        let mut diags = Diagnostics::new();
        let lock = parse(Path::new("latgen.lock"), &text, &mut diags).unwrap();
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(lock.state(), state);
        assert!(text.find("cart").unwrap() < text.find("shop").unwrap());
    }

    #[test]
    fn refuses_a_service_name_lattice_refuses_or_that_would_inject_yaml() {
        let mut diags = Diagnostics::new();
        let lock = parse(
            Path::new("l"),
            "version: 1\napps: {}\nservices:\n  a: {name: \"x: y\", set: latgen}\n  b: {name: svc-b, set: latgen}\n  c: {name: shop-c, set: controller}\n",
            &mut diags,
        )
        .unwrap();
        assert_eq!(diags.len(), 2, "{diags:?}");
        let services = lock.services.unwrap();
        assert_eq!(services.keys().collect::<Vec<_>>(), ["c"]);
        assert_eq!(services["c"].set, NamedBy::Controller);
    }

    #[test]
    fn a_lock_without_services_is_told_from_one_with_none() {
        let mut diags = Diagnostics::new();
        let old = parse(Path::new("l"), "version: 1\napps: {}\n", &mut diags).unwrap();
        assert_eq!((old.services, old.existed), (None, true));
        let new = parse(
            Path::new("l"),
            "version: 1\napps: {}\nservices: {}\n",
            &mut diags,
        );
        assert_eq!(new.unwrap().services, Some(BTreeMap::new()));
        assert!(diags.is_empty());
    }

    #[test]
    fn refuses_an_unknown_version() {
        let mut diags = Diagnostics::new();
        assert!(parse(Path::new("l"), "version: 9\napps: {}\n", &mut diags).is_none());
        assert_eq!(diags.iter().next().unwrap().code, Code::InvalidLock);
    }

    #[test]
    fn refuses_a_move_without_a_home_or_with_a_bad_step() {
        let mut diags = Diagnostics::new();
        let lock = parse(
            Path::new("l"),
            "version: 1\napps:\n  a: 1\nmoves:\n  a: { to: 2, step: 3 }\n  b: { to: 2, step: 1 }\n",
            &mut diags,
        )
        .unwrap();
        assert!(lock.moves.is_empty());
        assert_eq!(diags.len(), 2);
    }
}
