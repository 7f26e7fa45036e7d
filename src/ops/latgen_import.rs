//! `latgen import`: the project's settings, then its own steps: read the live setup's
//! manifests, make declarations and lock entries of them ([`crate::import`]), and write
//! them through the output stage only when every object could be expressed (or `--partial`
//! says to write the rest), all or none.

use std::path::{Path, PathBuf};

use super::shell::{Exit, Ui};
use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Sources};
use crate::import::{Imported, ImportedApp};
use crate::input::ProjectPaths;
use crate::input::lock::LockState;
use crate::output::Additions;

/// What `latgen import` is asked to do.
pub(crate) struct ImportOptions<'a> {
    /// The live setup's manifest files or folders.
    pub manifests: &'a [PathBuf],
    /// The apps folder the declarations go into.
    pub apps_dir: &'a Path,
    /// Write what could be imported even when some objects could not be.
    pub partial: bool,
}

/// Imports the manifests into the project at `paths`.
pub(crate) fn run(args: &ImportOptions<'_>, paths: &ProjectPaths, ui: Ui) -> Exit {
    let mut added = Additions::new(&paths.root);
    // A new project has no apps folder yet: the declarations go into a new one, which goes
    // again when nothing is written.
    if args.apps_dir.symlink_metadata().is_err()
        && let Err(d) = added.folder(args.apps_dir)
    {
        added.undo();
        return ui.fail(d, &Sources::default());
    }
    match import_into(args, paths, &mut added, ui) {
        Ok(exit) => {
            added.finish();
            exit
        }
        Err(exit) => {
            added.undo();
            exit
        }
    }
}

/// How the import ends: Err when nothing of it may stay.
fn import_into(
    args: &ImportOptions<'_>,
    paths: &ProjectPaths,
    added: &mut Additions,
    ui: Ui,
) -> Result<Exit, Exit> {
    let mut diags = Diagnostics::new();
    // The lock is written as a render writes it: one run at a time, and after a killed
    // render is finished or undone (or the render's roll-forward would put its lock over
    // the entries this import adds).
    paths
        .make_env_folders()
        .map_err(|d| ui.fail(d, &Sources::default()))?;
    let _run = crate::output::begin_in(&paths.root, &paths.output, true, paths.env.is_some())
        .map_err(|d| ui.fail(d, &Sources::default()))?;
    let loaded = crate::input::load(paths, &mut diags);
    if diags.has_errors() {
        ui.report(&diags, &loaded.sources);
        return Err(Exit::Error);
    }
    let imported = crate::import::import(args.manifests, &loaded.config, &mut diags);
    let refused = diags.has_errors();
    let sources = Sources::default();
    if refused && !args.partial {
        ui.report(&diags, &sources);
        eprintln!(
            "nothing written: {} of the objects cannot be expressed (each is listed above); fix them, or pass --partial to import the {} apps that can be",
            diags.count(crate::diag::codes::Severity::Error),
            imported.apps.len()
        );
        return Err(Exit::Found);
    }
    ui.report(&diags, &sources);
    // Which environments each app runs in, as the exports say; written before the shared
    // declarations are compared, so that an app this environment now runs is compared too.
    let membership = match paths.env_name() {
        Some(env) => super::import_membership::membership(&loaded, &imported, env),
        None => Default::default(),
    };
    for (file, text) in &membership.edits {
        added
            .replace(file, text.as_bytes())
            .map_err(|d| ui.fail(d, &sources))?;
    }
    let shared = match &paths.env {
        Some(_) => super::import_shared::declared_alike(paths, &imported, ui)?,
        None => Vec::new(),
    };
    let lock = merged_lock(&loaded.lock.state(), &imported, (&loaded.decls, &shared))
        .map_err(|d| ui.fail(d, &sources))?;
    let new_envs = membership.new_apps.as_deref();
    write(
        &imported,
        (args.apps_dir, &shared, new_envs),
        paths,
        &lock,
        added,
    )
    .map_err(|d| ui.fail(d, &sources))?;
    summary(&imported, args.apps_dir, paths);
    membership_summary(&membership, paths.env_name().unwrap_or_default());
    if !shared.is_empty() {
        println!(
            "{} apps were declared already, as this environment runs them: their declarations are shared",
            shared.len()
        );
    }
    Ok(if refused { Exit::Found } else { Exit::Success })
}

/// The project's lock with the imported entries added; an app declared already is refused
/// (import adds apps, it does not redo them).
fn merged_lock(
    existing: &LockState,
    imported: &Imported,
    (decls, shared): (&[crate::input::LoadedDecl], &[String]),
) -> Result<LockState, Diagnostic> {
    let declared = |name: &str| {
        !shared.iter().any(|s| s == name)
            && decls
                .iter()
                .any(|d| d.stem == name || d.decl.name.as_ref().is_some_and(|n| n.value == name))
    };
    if let Some(app) = imported.apps.iter().find(|a| declared(&a.name)) {
        return Err(Diagnostic::error(
            Code::DuplicateApp,
            format!("app `{}` is declared already under the apps folder", app.name),
        )
        .help("import into a project that does not declare these apps yet (or remove their declarations first)"));
    }
    let mut lock = existing.clone();
    lock.apps.extend(imported.lock.apps.clone());
    lock.adopted.extend(imported.lock.adopted.clone());
    if let Some(s) = &imported.lock.services {
        lock.services
            .get_or_insert_with(Default::default)
            .extend(s.clone());
    }
    Ok(lock)
}

/// Writes the declarations, then the lock: without the lock the declarations place
/// nothing (and a rerun would refuse them as declared), so a lock that cannot be written
/// takes them back.
fn write(
    imported: &Imported,
    (apps_dir, shared, envs): (&Path, &[String], Option<&[String]>),
    paths: &ProjectPaths,
    lock: &LockState,
    added: &mut Additions,
) -> Result<(), Diagnostic> {
    let root = &paths.root;
    let files: Vec<(PathBuf, String)> = (imported.apps.iter())
        .filter(|app| !shared.contains(&app.name))
        .map(|app| {
            let dir = apps_dir.join(visible(&app.folder));
            let schema = schema_path(root, &dir);
            let text = crate::import::write::declaration(app, &source_of(app), &schema);
            let text = match envs {
                Some(e) => super::import_membership::with_environments(&text, e),
                None => text,
            };
            (dir.join(format!("{}.yaml", app.name)), text)
        })
        .collect();
    added.create_all(&files)?;
    added.replace(&paths.lock, crate::input::lock::serialize(lock).as_bytes())
}

/// What an environment's import changed in where the apps run.
fn membership_summary(m: &super::import_membership::Membership, env: &str) {
    let names = |apps: &[String]| {
        let shown: Vec<&str> = apps.iter().take(5).map(String::as_str).collect();
        let more = apps.len().saturating_sub(5);
        match more {
            0 => shown.join(", "),
            _ => format!("{} and {more} more", shown.join(", ")),
        }
    };
    if !m.left.is_empty() {
        println!(
            "{} declared apps are not in {env}'s export ({}): their `environments:` no longer lists {env}",
            m.left.len(),
            names(&m.left)
        );
    }
    if !m.joined.is_empty() {
        println!(
            "{} apps declared for other environments run in {env} too ({}): added to their `environments:`",
            m.joined.len(),
            names(&m.joined)
        );
    }
    if !m.stale.is_empty() {
        println!(
            "warning: {} apps are declared for {env} alone and not in its export ({}): remove their declarations if {env} no longer runs them",
            m.stale.len(),
            names(&m.stale)
        );
    }
}

/// A route's folder as the declaration's folder: each name without its leading dots. The
/// loader skips hidden folders (`apps/.team/`), so a declaration written there would drop
/// out of the next render.
fn visible(folder: &Path) -> PathBuf {
    folder
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(n) => {
                let n = n.to_string_lossy();
                let name = n.trim_start_matches('.');
                (!name.is_empty()).then(|| name.to_string())
            }
            _ => None,
        })
        .collect()
}

fn source_of(app: &ImportedApp) -> String {
    format!("its Kong route {}", app.name)
}

/// The schema's path from the folder a declaration is in (`../../schemas/...`).
fn schema_path(root: &Path, dir: &Path) -> String {
    let depth = dir
        .strip_prefix(root)
        .map_or(1, |rel| rel.components().count());
    format!("{}schemas/app.schema.json", "../".repeat(depth))
}

/// What was written, and what to do next.
fn summary(imported: &Imported, apps_dir: &Path, paths: &ProjectPaths) {
    let adopted = imported.lock.adopted.len();
    let grouped = imported.lock.apps.len();
    let lock = crate::input::environments::lock_shown(paths.env_name());
    println!(
        "imported {} apps into {}: {adopted} keep the route they have ({lock} `adopted:`), {grouped} are in latgen groups already",
        imported.apps.len(),
        apps_dir.display(),
    );
    if imported.ignored > 0 {
        println!(
            "{} other objects were not for latgen (other kinds or gateways) and were left alone",
            imported.ignored
        );
    }
    let env = paths.env_flag();
    println!(
        "next: `latgen render{env}` writes the same objects (commit and let Argo CD adopt them: no change); `latgen plan{env}` shows the consolidation, `latgen plan{env} --apply` records it, and `latgen render{env} --base auto` ships it in safe steps"
    );
}
