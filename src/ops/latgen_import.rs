//! `latgen import`: the project's settings, then its own steps: read the live setup's
//! manifests, make declarations and lock entries of them ([`crate::import`]), and write
//! them only when every object could be expressed (or `--partial` says to write the rest).

use std::path::{Path, PathBuf};

use super::shell::{Exit, Ui};
use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Sources};
use crate::import::{Imported, ImportedApp};
use crate::input::ProjectPaths;
use crate::input::lock::LockState;

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
    let mut diags = Diagnostics::new();
    // A new project has no apps folder yet: the declarations go into a new one, removed
    // again when nothing is written.
    let created = !args.apps_dir.exists();
    if created && let Err(e) = std::fs::create_dir_all(args.apps_dir) {
        return ui.fail(io(args.apps_dir, &e), &Sources::default());
    }
    let exit = import_into(args, paths, &mut diags, ui);
    if created {
        // Only an empty folder goes: one that received declarations stays.
        let _ = std::fs::remove_dir(args.apps_dir);
    }
    exit
}

fn import_into(
    args: &ImportOptions<'_>,
    paths: &ProjectPaths,
    diags: &mut Diagnostics,
    ui: Ui,
) -> Exit {
    // The lock is written as a render writes it: one run at a time, and after a killed
    // render is finished or undone (or the render's roll-forward would put its lock over
    // the entries this import adds).
    let _run = match crate::output::begin_in(&paths.root, &paths.output, true, false) {
        Ok(l) => l,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    let loaded = crate::input::load(paths, diags);
    if diags.has_errors() {
        ui.report(diags, &loaded.sources);
        return Exit::Error;
    }
    let imported = crate::import::import(args.manifests, &loaded.config, diags);
    let refused = diags.has_errors();
    let sources = Sources::default();
    if refused && !args.partial {
        ui.report(diags, &sources);
        eprintln!(
            "nothing written: {} of the objects cannot be expressed (each is listed above); fix them, or pass --partial to import the {} apps that can be",
            diags.count(crate::diag::codes::Severity::Error),
            imported.apps.len()
        );
        return Exit::Found;
    }
    ui.report(diags, &sources);
    let lock = match merged_lock(&loaded.lock.state(), &imported, &loaded.decls) {
        Ok(lock) => lock,
        Err(d) => return ui.fail(d, &sources),
    };
    if let Err(d) = write(&imported, args.apps_dir, &paths.root, &paths.lock, &lock) {
        return ui.fail(d, &sources);
    }
    summary(&imported, args.apps_dir);
    if refused { Exit::Found } else { Exit::Success }
}

/// The project's lock with the imported entries added; an app declared already is refused
/// (import adds apps, it does not redo them).
fn merged_lock(
    existing: &LockState,
    imported: &Imported,
    decls: &[crate::input::LoadedDecl],
) -> Result<LockState, Diagnostic> {
    let declared = |name: &str| {
        decls
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

/// Writes the declarations (new files, in parallel, not synced one by one: 10,000 fsyncs
/// would take most of the run), then the lock, whole or not at all: without the lock the
/// declarations place nothing, and a rerun refuses them as declared.
fn write(
    imported: &Imported,
    apps_dir: &Path,
    root: &Path,
    lock_path: &Path,
    lock: &LockState,
) -> Result<(), Diagnostic> {
    use rayon::prelude::*;
    imported.apps.par_iter().try_for_each(|app| {
        let dir = apps_dir.join(visible(&app.folder));
        // Made one name at a time from the project folder, never through a link.
        let folder = crate::input::beneath::Folder::open(root, &dir, true)?;
        let name = std::ffi::OsString::from(format!("{}.yaml", app.name));
        let file = dir.join(&name);
        let text =
            crate::import::write::declaration(app, &source_of(app), &schema_path(root, &dir));
        (folder.clear(&name))
            .and_then(|_| folder.create_new_unsynced(&name, text.as_bytes()))
            .map_err(|e| io(&file, &e))
    })?;
    let lock_text = crate::input::lock::serialize(lock);
    crate::output::write_atomic(root, lock_path, lock_text.as_bytes())
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

fn io(path: &Path, e: &std::io::Error) -> Diagnostic {
    Diagnostic::error(
        Code::IoError,
        format!("cannot write {}: {e}", path.display()),
    )
    .help("check that the folder can be written")
}

/// What was written, and what to do next.
fn summary(imported: &Imported, apps_dir: &Path) {
    let adopted = imported.lock.adopted.len();
    let grouped = imported.lock.apps.len();
    println!(
        "imported {} apps into {}: {adopted} keep the route they have (latgen.lock `adopted:`), {grouped} are in latgen groups already",
        imported.apps.len(),
        apps_dir.display(),
    );
    if imported.ignored > 0 {
        println!(
            "{} other objects were not for latgen (other kinds or gateways) and were left alone",
            imported.ignored
        );
    }
    println!(
        "next: `latgen render` writes the same objects (commit and let Argo CD adopt them: no change); `latgen plan` shows the consolidation, `latgen plan --apply` records it, and `latgen render --base auto` ships it in safe steps"
    );
}
