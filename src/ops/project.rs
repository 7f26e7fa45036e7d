//! The project an operation works on: its paths once per environment `--env` chooses, and
//! the shared stages ([`crate::pipeline`]) run on it with their problems reported.

use std::path::Path;

use super::shell::{Exit, Ui};
use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Sources};
use crate::input::ProjectPaths;
use crate::input::confine::Project;
use crate::plan::prepared::Prepared;
use crate::render::Templates;

/// Runs `one` once per environment chosen with `--env` (once, in a project without
/// environments), saying on stderr which environment each run is when there are several.
/// Every environment runs, whatever the one before found; the worst outcome is the exit.
/// `heading` says where the name goes: stdout for a command whose report is its stdout
/// (`status`), so that each environment's lines stay under its name; stderr where stdout
/// is a machine's (`cost --format json`) or the command reports on stderr (`render`).
pub(crate) fn per_env(
    envs: Result<Vec<ProjectPaths>, Diagnostic>,
    (ui, heading): (Ui, Heading),
    mut one: impl FnMut(ProjectPaths) -> Exit,
) -> Exit {
    let envs = match envs {
        Ok(e) => e,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    let many = envs.len() > 1;
    let mut worst = Exit::Success;
    for paths in envs {
        if many && let Some(name) = paths.env_name() {
            match heading {
                Heading::Stdout => println!("environment {name}:"),
                Heading::Stderr => eprintln!("environment {name}:"),
            }
        }
        worst = worst.worst(one(paths));
    }
    worst
}

/// Where [`per_env`] names each environment.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Heading {
    Stdout,
    Stderr,
}

/// The templates of a run: the built-in ones, or those of the folder `dir` inside the
/// project; with `verify`, the built-in templates' output is read back too (`--verify`).
pub(crate) fn templates(
    paths: &ProjectPaths,
    dir: Option<&Path>,
    verify: bool,
) -> Result<Templates, Diagnostic> {
    let project = Project::new(&paths.root);
    Ok(Templates::load(dir.map(|d| (d, &project)))?.verifying(verify))
}

/// Load → validate → plan → render in memory, reporting problems; None when it fails.
/// With `verify`, the built-in templates' output is read back too (`--verify`).
pub(crate) fn build(
    paths: &ProjectPaths,
    templates: Option<&Path>,
    verify: bool,
    ui: Ui,
) -> Option<crate::pipeline::Built> {
    let templates = match self::templates(paths, templates, verify) {
        Ok(t) => t,
        Err(d) => {
            ui.fail(d, &Sources::default());
            return None;
        }
    };
    match crate::pipeline::build(paths, &templates) {
        Ok(b) => Some(b),
        Err(failure) => {
            ui.report(&failure.diags, &failure.sources);
            None
        }
    }
}

/// Load → validate → plan, reporting problems; None when the project cannot be planned.
pub(crate) fn prepare(paths: &ProjectPaths, ui: Ui) -> Option<Prepared> {
    let run = crate::pipeline::prepare(paths);
    ui.report(&run.diags, &run.sources);
    run.prepared
}

/// The environments `--env` chooses in the project at `root`: None in a project without
/// environments (where `--env` is refused), else the one named or, for `all`, every one.
pub(crate) fn choose_envs(
    root: &Path,
    env: Option<&str>,
) -> Result<Option<Vec<String>>, Diagnostic> {
    let names = crate::input::environments::names(root)?;
    let listed = || names.join(", ");
    match env {
        None if names.is_empty() => Ok(None),
        Some(_) if names.is_empty() => Err(Diagnostic::error(
            Code::UnknownEnvironment,
            "--env chooses an environment, and this project has none",
        )
        .help("leave out --env, or add environments as environments/<name>.yaml overlays of latgen.yaml")),
        None => Err(Diagnostic::error(
            Code::UnknownEnvironment,
            format!("this project has environments ({}): say which", listed()),
        )
        .help("give --env NAME, or --env all for every one")),
        Some("all") => Ok(Some(names)),
        Some(name) if names.iter().any(|n| n == name) => Ok(Some(vec![name.to_string()])),
        Some(name) => {
            let near = crate::diag::did_you_mean(name, names.iter().map(String::as_str))
                .map_or(String::new(), |s| format!("did you mean `{s}`? "));
            Err(Diagnostic::error(
                Code::UnknownEnvironment,
                format!("`{name}` is not an environment of this project"),
            )
            .help(format!("{near}the environments are {} (or all)", listed())))
        }
    }
}

/// The one environment of `chosen`: a command that works on one at a time refuses `all`.
pub(crate) fn only_one<T>(mut chosen: Vec<T>) -> Result<T, Diagnostic> {
    if chosen.len() != 1 {
        return Err(Diagnostic::error(
            Code::UnknownEnvironment,
            "this command works on one environment at a time",
        )
        .help("give --env NAME"));
    }
    Ok(chosen.remove(0))
}
