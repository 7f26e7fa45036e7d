//! `latgen init`: a new project (settings, an example app, the schemas, a CI workflow),
//! written only where no file exists yet, and a `.gitignore` that keeps what an
//! interrupted render leaves out of commits (appended to when the project has one).

use std::path::PathBuf;

use super::{Outcome, Ui};
use crate::codes::Code;
use crate::diag::{Diagnostic, Sources};

#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// The project folder (created when missing).
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    #[command(flatten)]
    pub color: super::args::ColorArg,
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
    let ignore = args.dir.join(".gitignore");
    match ignore_leftovers(&ignore) {
        Ok(Some(what)) => eprintln!("{what} {}", ignore.display()),
        Ok(None) => {}
        Err(e) => {
            let d = Diagnostic::error(
                Code::IoError,
                format!("cannot write {}: {e}", ignore.display()),
            );
            return ui.fail(d, &Sources::default());
        }
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

/// Makes `.gitignore` (created when missing) ignore what an interrupted run can leave beside
/// the output folder and the lock, so that `git add -A` never commits it. Says what it did,
/// if anything.
fn ignore_leftovers(path: &std::path::Path) -> std::io::Result<Option<&'static str>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
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
    let mut add = String::new();
    if !have.is_empty() {
        add.push_str(if have.ends_with('\n') { "\n" } else { "\n\n" });
    }
    add.push_str("# What an interrupted `latgen render` leaves; the next render removes it.\n");
    for p in missing {
        add.push_str(p);
        add.push('\n');
    }
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)?;
    std::io::Write::write_all(&mut f, add.as_bytes())?;
    Ok(Some(if text.is_some() { "updated" } else { "created" }))
}
