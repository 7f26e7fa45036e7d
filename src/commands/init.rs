//! `latgen init`: a new project (settings, an example app, the schemas, a CI workflow),
//! written only where no file exists yet.

use std::path::PathBuf;

use super::{Outcome, Ui};
use crate::codes::Code;
use crate::diag::{Diagnostic, Sources};

#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// The project folder (created when missing).
    #[arg(default_value = ".")]
    pub dir: PathBuf,
}

/// What `latgen init` writes, by path relative to the project folder.
fn files() -> Vec<(&'static str, String)> {
    vec![
        (
            "latgen.yaml",
            include_str!("../../scaffold/latgen.yaml").to_string(),
        ),
        (
            "apps/example.yaml",
            include_str!("../../scaffold/apps/example.yaml").to_string(),
        ),
        (
            crate::schema::Kind::App.file(),
            crate::schema::Kind::App.text(),
        ),
        (
            crate::schema::Kind::Config.file(),
            crate::schema::Kind::Config.text(),
        ),
        (
            ".github/workflows/latgen.yml",
            include_str!("../../examples/github-actions.yml").to_string(),
        ),
    ]
}

pub fn run(args: &InitArgs, ui: Ui) -> Outcome {
    let files = files();
    // Refuse before writing anything, so that a refused init changes nothing.
    let existing: Vec<String> = files
        .iter()
        .map(|(rel, _)| args.dir.join(rel))
        .filter(|p| p.symlink_metadata().is_ok())
        .map(|p| p.display().to_string())
        .collect();
    if !existing.is_empty() {
        eprintln!(
            "error: {} already exist{}; latgen init writes only new files and changed nothing",
            existing.join(", "),
            if existing.len() == 1 { "s" } else { "" }
        );
        return Outcome::Error;
    }
    for (rel, text) in &files {
        let path = args.dir.join(rel);
        if let Err(e) = create_new(&path, text) {
            let d = Diagnostic::error(
                Code::IoError,
                format!("cannot write {}: {e}", path.display()),
            );
            return ui.fail(d, &Sources::default());
        }
        eprintln!("created {}", path.display());
    }
    eprintln!(
        "next: describe your apps in apps/ (one file each), run `latgen render`, and commit apps/, latgen.yaml, latgen.lock and generated/"
    );
    Outcome::Success
}

/// Writes a new file, creating its folder; a file that appeared since the check for
/// existing ones is still not overwritten.
fn create_new(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    std::io::Write::write_all(&mut f, text.as_bytes())
}
