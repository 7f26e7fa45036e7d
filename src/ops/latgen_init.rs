//! `latgen init`: a new project (settings, an example app, the schemas, a CI workflow and
//! the deploy kit), written through the output stage only where no file exists yet, and a
//! `.gitignore` that keeps what an interrupted render leaves out of commits (appended to
//! when the project has one). A failed init takes back all it wrote.

use std::path::Path;

use super::shell::{Exit, Ui};
use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Sources};
use crate::output::Additions;

/// What `latgen init` is asked: the project folder, and the settings it cannot guess.
pub(crate) struct InitOptions<'a> {
    /// The project folder (made when missing).
    pub dir: &'a Path,
    /// deploy.repoURL, deploy.project, deploy.latticeCluster, deploy.kongCluster.
    pub repo_url: Option<&'a str>,
    pub project: Option<&'a str>,
    pub lattice_cluster: Option<&'a str>,
    pub kong_cluster: Option<&'a str>,
    /// lattice.serviceNamePrefix.
    pub service_name_prefix: Option<&'a str>,
}

const SCAFFOLD_SETTINGS: &str = include_str!("../../scaffold/latgen.yaml");

/// The scaffold's latgen.yaml with the deploy settings given as flags written in.
fn settings(args: &InitOptions<'_>) -> String {
    let defaults = crate::input::config::DeployConfig::default();
    let mut text = SCAFFOLD_SETTINGS.to_string();
    for (key, default, given) in [
        ("repoURL", &defaults.repo_url, &args.repo_url),
        ("project", &defaults.project, &args.project),
        (
            "latticeCluster",
            &defaults.lattice_cluster,
            &args.lattice_cluster,
        ),
        ("kongCluster", &defaults.kong_cluster, &args.kong_cluster),
    ] {
        if let Some(value) = given {
            let line = format!("\n  {key}: {default}\n");
            let value = crate::render::yaml_scalar(value.to_string());
            text = text.replacen(&line, &format!("\n  {key}: {value}\n"), 1);
        }
    }
    if let Some(prefix) = args.service_name_prefix {
        let value = crate::render::yaml_scalar(prefix.to_string());
        text = text.replacen(
            &format!(
                "\n  serviceNamePrefix: {}\n",
                crate::input::config::PLACEHOLDER
            ),
            &format!("\n  serviceNamePrefix: {value}\n"),
            1,
        );
    }
    text
}

/// What `latgen init` writes, by path relative to the project folder (the deploy kit is
/// written after these, from the project they make).
fn files(args: &InitOptions<'_>) -> Vec<(&'static str, String)> {
    vec![
        ("latgen.yaml", settings(args)),
        (
            "apps/example.yaml",
            include_str!("../../scaffold/apps/example.yaml").to_string(),
        ),
        (
            crate::input::json_schemas::Kind::App.file(),
            crate::input::json_schemas::Kind::App.text(),
        ),
        (
            crate::input::json_schemas::Kind::Config.file(),
            crate::input::json_schemas::Kind::Config.text(),
        ),
        (
            ".github/workflows/latgen.yml",
            include_str!("../../examples/github-workflow.yml").to_string(),
        ),
    ]
}

/// Writes the new project.
pub(crate) fn run(args: &InitOptions<'_>, ui: Ui) -> Exit {
    let files = files(args);
    let kit_files = crate::render::deploy_kit::FILES
        .map(|f| Path::new(crate::render::deploy_kit::FOLDER).join(f));
    // Refuse before writing anything, so that a refused init changes nothing.
    let existing: Vec<String> = files
        .iter()
        .map(|(rel, _)| args.dir.join(rel))
        .chain(kit_files.iter().map(|rel| args.dir.join(rel)))
        .filter(|p| p.symlink_metadata().is_ok())
        .map(|p| p.display().to_string())
        .collect();
    if !existing.is_empty() {
        eprintln!(
            "error: {} already exist{}; latgen init writes only new files and changed nothing",
            existing.join(", "),
            if existing.len() == 1 { "s" } else { "" }
        );
        return Exit::Error;
    }
    let mut added = Additions::new(args.dir);
    if let Err(d) = write_project(args.dir, &files, &mut added) {
        // A failed init leaves the folder as it found it, so that it can simply be run again
        // (with the setting fixed).
        added.undo();
        eprintln!("init failed: it removed what it had written");
        return ui.fail(d, &Sources::default());
    }
    added.finish();
    eprint!("{}", next_steps(args));
    Exit::Success
}

/// `names`, comma-separated, on lines of at most 80 columns indented as a step's text.
fn wrapped(names: &[&str]) -> String {
    let mut lines = vec![String::new()];
    for (i, name) in names.iter().enumerate() {
        let item = if i + 1 < names.len() {
            format!("{name},")
        } else {
            name.to_string()
        };
        let line = lines.last_mut().expect("one line at least");
        if !line.is_empty() && 5 + line.len() + 1 + item.len() > 80 {
            lines.push(item);
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(&item);
        }
    }
    lines.join("\n     ")
}

/// What to do after `init`, on one screen: the settings still placeholders (those no flag
/// gave), then the way from a first app to a synced cluster and a checked PR.
fn next_steps(args: &InitOptions<'_>) -> String {
    let left: Vec<&str> = [
        ("deploy.repoURL", args.repo_url.is_none()),
        ("deploy.latticeCluster", args.lattice_cluster.is_none()),
        ("deploy.kongCluster", args.kong_cluster.is_none()),
        (
            "lattice.serviceNamePrefix",
            args.service_name_prefix.is_none(),
        ),
    ]
    .into_iter()
    .filter_map(|(setting, left)| left.then_some(setting))
    .collect();
    let mut steps = Vec::new();
    if !left.is_empty() {
        steps.push(format!(
            "Set what init could not know in latgen.yaml:\n     {}\n     (`latgen check` names each one still a placeholder).",
            wrapped(&left)
        ));
    }
    steps.extend(
        [
            "Describe your apps in apps/, one file each, as apps/example.yaml does\n     (editors complete the fields from schemas/).",
            "Run `latgen render`: it writes generated/ (the manifests of both\n     clusters) and latgen.lock (which group each app is in).",
            "Commit apps/, latgen.yaml, latgen.lock, generated/, deploy/, schemas/\n     and .github/, and push.",
            "Apply the Argo CD Applications once: `kubectl -n argocd apply -f deploy/`.\n     From then on each merged PR syncs, and each PR is checked by\n     .github/workflows/latgen.yml (annotations and a comment).",
        ]
        .map(str::to_string),
    );
    let mut text = if args.dir == Path::new(".") {
        String::from("\nNext:\n")
    } else {
        format!("\nNext, in {}:\n", args.dir.display())
    };
    for (i, step) in steps.iter().enumerate() {
        text += &format!("  {}. {step}\n", i + 1);
    }
    text += "\nMore: `latgen explain CODE` for a finding, `latgen completions SHELL`\nfor Tab completion, and latgen's book (docs/ in its repository).\n";
    text
}

/// The project's files, its `.gitignore` lines and its deploy kit, each said as written.
fn write_project(
    dir: &Path,
    files: &[(&'static str, String)],
    added: &mut Additions,
) -> Result<(), Diagnostic> {
    for (rel, text) in files {
        create(added, &dir.join(rel), text)?;
    }
    let ignore = dir.join(".gitignore");
    if let Some((text, what)) = ignore_leftovers(&ignore)? {
        added.replace(&ignore, text.as_bytes())?;
        eprintln!("{what} {}", ignore.display());
    }
    write_kit(dir, added)
}

/// Writes the new file `path`, and says so.
fn create(added: &mut Additions, path: &Path, text: &str) -> Result<(), Diagnostic> {
    added.create(path, text)?;
    eprintln!("created {}", path.display());
    Ok(())
}

/// Writes the deploy kit of the project just written, made as `latgen deploy` makes it.
fn write_kit(dir: &Path, added: &mut Additions) -> Result<(), Diagnostic> {
    let paths = crate::input::ProjectPaths::at_root(dir);
    let templates = crate::render::Templates::load(None)?;
    let built = crate::pipeline::build(&paths, &templates).map_err(|f| {
        let first = f.diags.iter().next().cloned();
        first.unwrap_or_else(|| {
            Diagnostic::error(Code::InvalidConfig, "the new project does not build")
        })
    })?;
    let config = &built.prepared.config;
    let Some(settings) = &config.deploy else {
        return Ok(());
    };
    for (rel, text) in crate::render::deploy_kit::kit(
        settings,
        config,
        &built.output.files,
        Path::new("generated"),
    ) {
        create(added, &dir.join(rel), &text)?;
    }
    Ok(())
}

/// `.gitignore` (`path`) made to ignore what an interrupted run can leave beside the output
/// folder and the lock, so that `git add -A` never commits it: its new text and whether it
/// is `created` or `updated`; None when it ignores all that already.
fn ignore_leftovers(path: &Path) -> Result<Option<(String, &'static str)>, Diagnostic> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(Diagnostic::error(
                Code::IoError,
                format!("cannot write {}: {e}", path.display()),
            ));
        }
    };
    let have = text.as_deref().unwrap_or("");
    let missing: Vec<&str> = crate::output::IGNORED
        .iter()
        .copied()
        .filter(|p| !have.lines().any(|l| l.trim() == *p))
        .collect();
    if missing.is_empty() {
        return Ok(None);
    }
    let mut new = have.to_string();
    if !have.is_empty() {
        new.push_str(if have.ends_with('\n') { "\n" } else { "\n\n" });
    }
    new.push_str("# What an interrupted `latgen render` leaves; the next render removes it.\n");
    for p in missing {
        new.push_str(p);
        new.push('\n');
    }
    Ok(Some((
        new,
        if text.is_some() { "updated" } else { "created" },
    )))
}
