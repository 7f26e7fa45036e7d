//! Lattice service names against what exists: a route's service keeps the name it was
//! created with, so a lock that records another name for a committed route is wrong
//! (`service-name-changed`); and another project's lock given with `--also-lock` must not
//! hold a name of this one (`service-name-collision`). And the placeholder prefix `init`
//! writes: an error in `check`, a warning in `render` when it writes a route new to the
//! output folder (`placeholder-setting`).

use crate::manifest::tree::Tree;
use std::path::{Path, PathBuf};

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Sources, Span};
use crate::input::config::{Config, PLACEHOLDER};
use crate::input::confine::Project;
use crate::input::lock::NamedBy;
use crate::plan::prepared::Prepared;
use crate::render::annotation_in;
use latgen_sim::platform;

/// The committed trees a route may already exist in: the head's, and the base's.
pub(crate) struct Committed<'a> {
    pub head: &'a Tree,
    pub base: Option<&'a Tree>,
    pub out_dir: &'a Path,
}

/// Every finding about service names: changed names, collisions with the locks given with
/// `--also-lock`, and the placeholder prefix.
pub(crate) fn findings(
    prepared: Option<&Prepared>,
    committed: &Committed,
    opts: &super::CheckOptions,
    sources: &mut Sources,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let Some(prepared) = prepared else {
        return diags;
    };
    diags.extend(changed_names(prepared, committed));
    diags.extend(also_locks(
        prepared,
        &opts.also_locks,
        &opts.paths.root,
        sources,
    ));
    if let Some(d) = placeholder_prefix(&prepared.config, &opts.paths.config, sources) {
        diags.push(d);
    }
    diags
}

/// Each route whose committed manifest shows a Lattice service name (its annotation, or
/// the controller's name without one) other than the one the lock records.
pub(crate) fn changed_names(prepared: &Prepared, committed: &Committed) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let plan = &prepared.plan;
    if plan.lock.services.is_none() {
        return diags;
    }
    let env = prepared.config.env_name();
    let (lock, flag) = (
        crate::input::environments::lock_shown(env),
        crate::input::environments::env_flag(env),
    );
    for r in &plan.services {
        let rel = Path::new("lattice").join(format!("httproute-{}.yaml", r.route));
        let recorded = &r.name;
        // The base is what is live (or about to be); the head, what this change commits.
        let found = committed
            .base
            .and_then(|b| b.get(&rel))
            .or_else(|| committed.head.get(&rel));
        let Some(text) = found else {
            continue;
        };
        let (created, by) = match annotation_in(text) {
            Some(name) => (name, NamedBy::Latgen),
            None => (
                platform::lattice_service_name(&r.route, &r.namespace),
                NamedBy::Controller,
            ),
        };
        if created != recorded.name {
            diags.push(
                Diagnostic::error(
                    Code::ServiceNameChanged,
                    format!(
                        "route `{}` exists with the Lattice service name `{created}`, but {lock} records `{}`: the controller names a service only when it creates it and ignores the change",
                        r.route, recorded.name
                    ),
                )
                .at(Span::file(committed.out_dir.join(&rel)))
                .help(format!(
                    "put back `{}: {{name: {created}, set: {}}}` under services in {lock}, then run `latgen render{flag}` (to rename the service, delete the route and let latgen create it anew)",
                    r.route,
                    by.as_str()
                )),
            );
        }
    }
    diags
}

/// The findings of `--also-lock`: names this project's routes share with another
/// project's lock, and any problem reading it.
pub(crate) fn also_locks(
    prepared: &Prepared,
    files: &[PathBuf],
    root: &Path,
    sources: &mut Sources,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let project = Project::new(root);
    for file in files {
        let text = match read_other_lock(file, &project) {
            Ok(t) => t,
            Err(d) => {
                diags.push(d);
                continue;
            }
        };
        let Some(lock) = crate::input::lock::parse(file, &text, &mut diags) else {
            continue;
        };
        sources.insert(file.clone(), text);
        diags.extend(crate::plan::services::collisions_with(
            &prepared.plan,
            &lock,
            file,
        ));
    }
    diags
}

/// Another project's lock, held to the rule every input is (inside the project folder, no
/// link out of it, a regular file, at most the size of a lock): a lock outside is refused
/// like `--config /etc/x`, so that no path on a CI command line can make a finding quote a
/// file of the runner. Check the other project out into a folder of this one.
fn read_other_lock(file: &Path, project: &Project) -> Result<String, Diagnostic> {
    let cannot = |why: String| {
        Diagnostic::error(
            Code::IoError,
            format!("cannot read {}: {why}", file.display()),
        )
        .help("give --also-lock the latgen.lock of another project that shares the service network")
    };
    let bytes = project
        .read_at_most(file, crate::input::MAX_LOCK_BYTES)?
        .ok_or_else(|| cannot("no such file".to_string()))?;
    String::from_utf8(bytes).map_err(|_| cannot("it is not UTF-8 text".to_string()))
}

/// `lattice.serviceNamePrefix` still the placeholder `init` wrote: the routes rendered
/// meanwhile carry no name, and would keep the controller's once created.
pub(crate) fn placeholder_prefix(
    config: &Config,
    file: &Path,
    sources: &Sources,
) -> Option<Diagnostic> {
    let prefix = config.lattice.service_name_prefix.as_deref()?;
    if !prefix.contains(PLACEHOLDER) {
        return None;
    }
    let places = crate::input::places::Places::settings(config, file, sources.text(file));
    Some(
        Diagnostic::error(
            Code::PlaceholderSetting,
            format!("lattice.serviceNamePrefix is still the placeholder `{prefix}`: latgen names no Lattice service until it is set, and a route created meanwhile keeps the controller's name for good"),
        )
        .at(places.of(&["lattice", "serviceNamePrefix"]))
        .help("set it in latgen.yaml to a name for this project unique in its service network (e.g. `shop-prod`), then run `latgen render`"),
    )
}

/// What `render` says when it creates a route (its manifest is new to the output folder)
/// while `lattice.serviceNamePrefix` is still the placeholder: the route carries no name,
/// and once the controller creates it, its service keeps the controller's name for good.
/// A warning, not `check`'s error: render writes what it is asked to, and `check` (the PR
/// gate) fails on the placeholder anyway. Only a route new to the output folder: the
/// moment a name is lost is the first render of a route; one already written was warned
/// about then (a project that stays on the placeholder would otherwise hear it on every
/// render), and is `check`'s business from there.
/// `written` says whether render writes a file of the output now (all of it, or one side
/// with `--only`); `existing` is the folder as it was; both take paths relative to
/// `out_dir`.
pub(crate) fn placeholder_new_routes(
    prepared: &Prepared,
    written: &dyn Fn(&Path) -> bool,
    existing: &Tree,
    (file, out_dir): (&Path, &Path),
    sources: &Sources,
) -> Option<Diagnostic> {
    let prefix = prepared.config.lattice.service_name_prefix.as_deref()?;
    if !prefix.contains(PLACEHOLDER) {
        return None;
    }
    let mut new: Vec<PathBuf> = (prepared.plan.services.iter())
        .map(|r| Path::new("lattice").join(format!("httproute-{}.yaml", r.route)))
        .filter(|rel| written(rel) && !existing.contains_key(rel))
        .collect();
    let first = new.first()?;
    let places = crate::input::places::Places::settings(&prepared.config, file, sources.text(file));
    let (routes, them) = match new.len() {
        1 => (
            format!("a new route, {},", first.display()),
            "it, its service keeps the controller's name",
        ),
        n => (
            format!("{n} new routes"),
            "them, their services keep the controller's names",
        ),
    };
    let mut d = Diagnostic::warning(
        Code::PlaceholderSetting,
        format!("lattice.serviceNamePrefix is still the placeholder `{prefix}`, and render writes {routes} with no Lattice service name: once the controller creates {them} for good"),
    )
    .at(places.of(&["lattice", "serviceNamePrefix"]))
    .help("set lattice.serviceNamePrefix in latgen.yaml to a name for this project unique in its service network (e.g. `shop-prod`) and run `latgen render` again before the new routes are merged");
    new.sort();
    for rel in new {
        d = d.related(Span::file(out_dir.join(rel)), "a new route");
    }
    Some(d)
}
