//! `latgen manifests`: the shared stages in memory, then one side's objects printed as a
//! YAML stream for an Argo CD Config Management Plugin.

use std::path::Path;

use super::shell::{Exit, Ui, to_stdout};
use crate::diag::Diagnostic;
use crate::input::ProjectPaths;
use crate::manifest::layout::Side;

/// Prints the objects of `side` of the project at `paths`, rendered with `templates`.
///
/// An Argo CD plugin runs this on every sync, so any error fails the sync (exit 2) rather
/// than printing less: an empty or partial stream would make Argo CD prune the objects it
/// no longer sees.
pub(crate) fn run(
    (side, templates): (Side, Option<&Path>),
    paths: Result<ProjectPaths, Diagnostic>,
    ui: Ui,
) -> Exit {
    let paths = match paths {
        Ok(p) => p,
        Err(d) => return ui.fail(d, &crate::diag::Sources::default()),
    };
    let Some(built) = super::project::build(&paths, templates, false, ui) else {
        return Exit::Error;
    };
    ui.report(&built.diags, &built.sources);
    // kustomization.yaml lists the files for kustomize; it is not an object to apply.
    let docs: Vec<&str> = built
        .output
        .files
        .iter()
        .filter(|(p, _)| {
            p.starts_with(side.dir()) && p.file_name() != Some("kustomization.yaml".as_ref())
        })
        .map(|(_, text)| &**text)
        .collect();
    if docs.is_empty() {
        eprintln!(
            "error: the {} side has no manifest; refusing to print an empty stream, which would make Argo CD prune every object of the Application",
            side.dir()
        );
        return Exit::Error;
    }
    // Every file starts its own document (`---` after the header), so the files joined as
    // they are make the stream.
    let mut out = String::new();
    for doc in docs {
        out.push_str(doc);
        if !doc.ends_with('\n') {
            out.push('\n');
        }
    }
    to_stdout(out.as_bytes())
}
