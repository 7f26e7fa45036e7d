//! `latgen deploy`: the shared stages in memory, then the deploy kit ([`crate::render::deploy_kit`])
//! written to `deploy/` beside latgen.yaml (or, with `--check`, a diff and exit 1 when it
//! is stale); and the kit a render refreshes beside the output it writes.

use crate::manifest::tree::Tree;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::shell::{Exit, Ui};
use crate::diag::{Diagnostic, Sources, Span};
use crate::input::ProjectPaths;
use crate::manifest::layout::Side;
use crate::output::{Change, ChangeKind};
use crate::render::deploy_kit;

/// What `latgen deploy` is asked to do.
pub(crate) struct DeployOptions<'a> {
    /// The templates `render` is run with.
    pub templates: Option<&'a Path>,
    /// Write nothing; exit 1 with a diff when deploy/ is stale.
    pub check: bool,
}

/// Writes (or compares) the kit of each environment `envs` holds.
pub(crate) fn run(
    args: &DeployOptions<'_>,
    envs: Result<Vec<ProjectPaths>, Diagnostic>,
    ui: Ui,
) -> Exit {
    super::project::per_env(envs, (ui, super::project::Heading::Stderr), |paths| {
        deploy_env(args, paths, ui)
    })
}

/// One environment's kit (the project's, without environments).
fn deploy_env(args: &DeployOptions<'_>, paths: ProjectPaths, ui: Ui) -> Exit {
    // The kit is written beside the output, as a render writes it: one run at a time, after
    // a killed render is finished or undone.
    let _run =
        match crate::output::begin_in(&paths.root, &paths.output, !args.check, paths.env.is_some())
        {
            Ok(l) => l,
            Err(d) => return ui.fail(d, &Sources::default()),
        };
    let Some(built) = super::project::build(&paths, args.templates, false, ui) else {
        return Exit::Error;
    };
    ui.report(&built.diags, &built.sources);
    let config = &built.prepared.config;
    let Some(settings) = &config.deploy else {
        let d = Diagnostic::error(
            crate::diag::codes::Code::InvalidConfig,
            "latgen.yaml has no `deploy:` section, so there is no deploy kit to write",
        )
        .at(Span::file(&paths.config))
        .help("add `deploy:` with repoURL, latticeCluster and kongCluster (the section `latgen init` writes)");
        return ui.fail(d, &built.sources);
    };
    let root = deploy_kit::project_root(&paths);
    let out = paths.output.clone();
    let out_rel = deploy_kit::output_in_project(&root, &out);
    let kit = deploy_kit::kit(settings, config, &built.output.files, &out_rel);
    let changes = changes(&root, kit);
    if args.check {
        return stale(&changes);
    }
    for c in &changes {
        // The folders on the way are made, never followed where they are links.
        let text = c.new.as_deref().unwrap_or("");
        let written = crate::output::write_atomic(&paths.root, &c.path, text.as_bytes());
        if let Err(d) = written {
            return ui.fail(d, &Sources::default());
        }
        eprintln!("wrote {}", c.path.display());
    }
    // What is still to do before the first sync: `check` fails on it, here it is a note.
    let mut left = crate::diag::Diagnostics::new();
    for mut d in deploy_kit::placeholders(config, &paths.config, &built.sources)
        .iter()
        .cloned()
    {
        d.severity = crate::diag::codes::Severity::Warning;
        left.push(d);
    }
    ui.report(&left, &built.sources);
    if changes.is_empty() {
        let folder = if root == std::path::Path::new(".") {
            deploy_kit::folder(config)
        } else {
            root.join(deploy_kit::folder(config))
        };
        eprintln!("up to date: {}/", folder.display());
    }
    Exit::Success
}

/// The deploy kit as it fits the output this run leaves on disk (see
/// [`deploy_kit::kit_to_refresh`]; empty for a project without one). With `--only`, the
/// other side stays as it is on disk, and so does the part of the kit that follows from
/// it: an AppProject that dropped the namespaces of a side not yet shipped would stop Argo
/// CD from syncing (or pruning) what that side still has there.
pub(crate) fn kit_for_render(
    paths: &ProjectPaths,
    config: &crate::input::config::Config,
    all: &Tree,
    existing: &Tree,
    only: Option<Side>,
) -> Vec<(PathBuf, String)> {
    let out = &paths.output;
    if config.deploy.is_none() {
        return Vec::new();
    }
    let Some(side) = only else {
        return deploy_kit::kit_to_refresh(paths, out, config, all);
    };
    let files: Tree = (all.iter().filter(|(p, _)| p.starts_with(side.dir())))
        .chain(existing.iter().filter(|(p, text)| {
            !p.starts_with(side.dir()) && text.starts_with(crate::manifest::layout::HEADER)
        }))
        .map(|(p, text)| (p.clone(), text.clone()))
        .collect();
    deploy_kit::kit_to_refresh(paths, out, config, &files)
}

/// The kit's files that differ from what is on disk, by path from the current folder.
fn changes(root: &std::path::Path, kit: BTreeMap<PathBuf, String>) -> Vec<Change> {
    let mut changes = Vec::new();
    for (rel, text) in kit {
        let path = if root == std::path::Path::new(".") {
            rel
        } else {
            root.join(rel)
        };
        // Read as an input is: a file of the kit linked out of the project is not shown.
        let old = (crate::input::confine::Project::new(root)
            .read(&path)
            .ok()
            .flatten())
        .map(|b| String::from_utf8_lossy(&b).into_owned());
        if old.as_deref() != Some(text.as_str()) {
            let kind = if old.is_some() {
                ChangeKind::Changed
            } else {
                ChangeKind::Added
            };
            changes.push(Change {
                path,
                kind,
                old: old.map(Into::into),
                new: Some(text.into()),
            });
        }
    }
    changes
}

fn stale(changes: &[Change]) -> Exit {
    if changes.is_empty() {
        eprintln!("up to date");
        return Exit::Success;
    }
    print!("{}", crate::output::unified_diff(changes));
    eprintln!(
        "error: {} differ from what `latgen deploy` writes; run it and commit the result",
        changes
            .iter()
            .map(|c| c.path.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    Exit::Found
}
