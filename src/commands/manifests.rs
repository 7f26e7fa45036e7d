//! `latgen manifests`: the shared stages in memory, then one side's objects printed as a
//! YAML stream for an Argo CD Config Management Plugin.

use std::path::PathBuf;

use super::args::{InputArgs, OnlySide};
use super::{Exit, Ui, to_stdout};

#[derive(Debug, clap::Args)]
pub(crate) struct ManifestsArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Folder of templates to use instead of the built-in ones (same file names).
    #[arg(long)]
    pub templates: Option<PathBuf>,
    /// The side to print.
    #[arg(long, value_enum)]
    pub side: OnlySide,
    #[command(flatten)]
    pub color: super::args::ColorArg,
}

/// An Argo CD plugin runs this on every sync, so any error fails the sync (exit 2) rather
/// than printing less: an empty or partial stream would make Argo CD prune the objects it
/// no longer sees.
pub(crate) fn run(args: &ManifestsArgs, ui: Ui) -> Exit {
    let paths = match args.input.one_env(None) {
        Ok(p) => p,
        Err(d) => return ui.fail(d, &crate::diag::Sources::default()),
    };
    let Some(built) = ui.build(&paths, args.templates.as_deref(), false) else {
        return Exit::Error;
    };
    ui.report(&built.diags, &built.sources);
    let side = args.side.side();
    // kustomization.yaml lists the files for kustomize; it is not an object to apply.
    let docs: Vec<&str> = built
        .output
        .files
        .iter()
        .filter(|(p, _)| {
            p.starts_with(side.dir()) && p.file_name() != Some("kustomization.yaml".as_ref())
        })
        .map(|(_, text)| text.as_str())
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
