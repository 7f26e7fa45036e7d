//! The suite's helpers that run latgen's stages in memory: render a fixture project, plan
//! and render apps, read the routing model of a tree, and the routing oracle.

pub mod auth;
pub mod oracle;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use latgen::input::ProjectPaths;
use latgen::render::Templates;

/// Renders the project at `dir` (apps/, optional latgen.yaml and latgen.lock) and returns
/// what `render` would write: the output tree plus `latgen.lock`, by relative path.
pub fn render_dir(dir: &Path) -> Result<BTreeMap<PathBuf, String>, String> {
    let paths = ProjectPaths::at_root(dir);
    let templates = Templates::load(None).map_err(|d| d.message)?;
    match latgen::pipeline::build(&paths, &templates) {
        Ok(built) => {
            let mut files = texts(&built.output.files);
            files.insert(PathBuf::from("latgen.lock"), built.prepared.lock_text());
            Ok(files)
        }
        Err(f) => Err(latgen::diag::render_human(&f.diags, &f.sources, false)),
    }
}

/// `apps` planned from no lock with `config` (an error fails the test) and rendered in
/// memory with the built-in templates: the plan and the files `render` would write.
pub fn plan_and_render(
    apps: &[latgen::input::app::App],
    config: &latgen::input::config::Config,
) -> (latgen::plan::Plan, BTreeMap<PathBuf, String>) {
    let mut diags = latgen::diag::Diagnostics::new();
    let lock = latgen::input::lock::Lock::default();
    let plan = latgen::plan::plan(apps, &lock, Path::new("latgen.lock"), config, &mut diags);
    assert!(!diags.has_errors(), "{diags:?}");
    let templates = Templates::load(None).unwrap();
    let files = latgen::render::render(&plan, apps, config, &templates)
        .unwrap()
        .files;
    (plan, texts(&files))
}

/// A tree of output files as plain texts, as the tests compare them.
pub fn texts(files: &latgen::manifest::tree::Tree) -> BTreeMap<PathBuf, String> {
    (files.iter())
        .map(|(p, t)| (p.clone(), t.to_string()))
        .collect()
}

/// The routing model of rendered files (paths under the output folder).
pub fn network<T: AsRef<str>>(files: &BTreeMap<PathBuf, T>) -> latgen_sim::routing::Network {
    network_of(files.iter().map(|(p, t)| (p.as_path(), t.as_ref())))
}

/// The routing model of manifests given by path under the output folder and text, as
/// latgen reads a tree: every manifest must parse.
pub fn network_of<'a>(
    files: impl IntoIterator<Item = (&'a Path, &'a str)>,
) -> latgen_sim::routing::Network {
    use latgen::manifest::layout::is_kong_file;
    use latgen_sim::routing::Network;
    let files: Vec<_> = (files.into_iter())
        .map(|(p, t)| (p.to_path_buf(), t, is_kong_file(p)))
        .collect();
    let (net, errors) = Network::from_files_par(&files);
    assert!(errors.is_empty(), "{errors:?}");
    net
}

pub fn built(dir: &Path) -> latgen::pipeline::Built {
    built_paths(&ProjectPaths::at_root(dir))
}

/// [`built`] in one environment of a project with environments.
pub fn built_in(dir: &Path, env: &str) -> latgen::pipeline::Built {
    built_paths(&ProjectPaths::at_root(dir).in_env(env, false, false))
}

fn built_paths(paths: &ProjectPaths) -> latgen::pipeline::Built {
    let paths = paths.clone();
    let templates = Templates::load(None).unwrap();
    match latgen::pipeline::build(&paths, &templates) {
        Ok(b) => b,
        Err(f) => panic!(
            "{}",
            latgen::diag::render_human(&f.diags, &f.sources, false)
        ),
    }
}
