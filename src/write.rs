//! Stage 5, write: bring the output folder and the lock file to the rendered state, all or
//! nothing. Only files that differ are written (unchanged files keep their mtime, so Git and
//! Argo CD see no churn); generated files no longer wanted are removed; files latgen did not
//! generate (no header) are never touched. `--check` computes the same changes and shows
//! them as a unified diff instead.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use similar::TextDiff;

use crate::diag::{Diagnostic, Span};
use crate::render::{HEADER, Output};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeKind {
    Added,
    Changed,
    Removed,
}

/// One file to create, rewrite or delete. `path` is the real path; `shown` the path to
/// print (relative to the output folder's parent as given).
#[derive(Debug, Clone)]
pub struct Change {
    pub path: PathBuf,
    pub kind: ChangeKind,
    pub old: Option<String>,
    pub new: Option<String>,
}

/// The files under `dir` that latgen generated (they start with its header).
fn owned_files(dir: &Path) -> Result<Vec<PathBuf>, Diagnostic> {
    let mut out = Vec::new();
    if !dir.exists() {
        return Ok(out);
    }
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.map_err(|e| {
            Diagnostic::error("io-error", format!("cannot read the output folder: {e}"))
                .at(Span::file(dir))
        })?;
        if !entry.file_type().is_file() {
            continue;
        }
        let mut head = [0u8; 256];
        let n = fs::File::open(entry.path())
            .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
            .map_err(|e| io_error(entry.path(), "read", &e))?;
        if head[..n].starts_with(HEADER.as_bytes()) {
            out.push(entry.path().to_path_buf());
        }
    }
    Ok(out)
}

fn io_error(path: &Path, what: &str, e: &std::io::Error) -> Diagnostic {
    Diagnostic::error("io-error", format!("cannot {what} {}: {e}", path.display()))
        .at(Span::file(path))
        .help("check that the folder exists and is writable")
}

fn read_if_exists(path: &Path) -> Result<Option<String>, Diagnostic> {
    match fs::read(path) {
        Ok(b) => Ok(Some(String::from_utf8_lossy(&b).into_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(path, "read", &e)),
    }
}

/// What it takes to turn the disk into `output` (under `out_dir`) plus `extra` files (the
/// lock). Sorted by path.
pub fn changes(
    out_dir: &Path,
    output: &Output,
    extra: &[(PathBuf, String)],
) -> Result<Vec<Change>, Diagnostic> {
    if out_dir.exists() && !out_dir.is_dir() {
        return Err(Diagnostic::error(
            "io-error",
            format!("output {} is a file, not a folder", out_dir.display()),
        )
        .help("give a folder for -o, e.g. `-o generated/`"));
    }
    let mut wanted: BTreeMap<PathBuf, &str> = output
        .files
        .iter()
        .map(|(rel, text)| (out_dir.join(rel), text.as_str()))
        .collect();
    for (p, text) in extra {
        wanted.insert(p.clone(), text);
    }
    let mut out = Vec::new();
    for (path, new) in &wanted {
        match read_if_exists(path)? {
            Some(old) if old == *new => {}
            Some(old) => out.push(Change {
                path: path.clone(),
                kind: ChangeKind::Changed,
                old: Some(old),
                new: Some(new.to_string()),
            }),
            None => out.push(Change {
                path: path.clone(),
                kind: ChangeKind::Added,
                old: None,
                new: Some(new.to_string()),
            }),
        }
    }
    for path in owned_files(out_dir)? {
        if !wanted.contains_key(&path) {
            let old = read_if_exists(&path)?;
            out.push(Change {
                path,
                kind: ChangeKind::Removed,
                old,
                new: None,
            });
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// A unified diff of the changes, the way `git diff` shows them.
pub fn unified_diff(changes: &[Change]) -> String {
    let mut out = String::new();
    for c in changes {
        let shown = c.path.display().to_string();
        let old = c.old.as_deref().unwrap_or("");
        let new = c.new.as_deref().unwrap_or("");
        let (a, b) = match c.kind {
            ChangeKind::Added => ("/dev/null".to_string(), format!("b/{shown}")),
            ChangeKind::Removed => (format!("a/{shown}"), "/dev/null".to_string()),
            ChangeKind::Changed => (format!("a/{shown}"), format!("b/{shown}")),
        };
        let diff = TextDiff::from_lines(old, new);
        out.push_str(
            &diff
                .unified_diff()
                .context_radius(3)
                .header(&a, &b)
                .to_string(),
        );
    }
    out
}

/// Applies the changes; on any failure, restores every file already touched and removes
/// folders it created, so the disk is left as it was.
pub fn apply(changes: &[Change]) -> Result<(), Diagnostic> {
    let mut done: Vec<&Change> = Vec::new();
    let mut created_dirs: Vec<PathBuf> = Vec::new();
    for c in changes {
        let result = apply_one(c, &mut created_dirs);
        if let Err(e) = result {
            rollback(&done, &created_dirs);
            return Err(e);
        }
        done.push(c);
    }
    Ok(())
}

fn apply_one(c: &Change, created_dirs: &mut Vec<PathBuf>) -> Result<(), Diagnostic> {
    match &c.new {
        Some(text) => {
            if let Some(parent) = c.path.parent() {
                let mut missing = Vec::new();
                let mut p = parent;
                while !p.as_os_str().is_empty() && !p.exists() {
                    missing.push(p.to_path_buf());
                    match p.parent() {
                        Some(q) => p = q,
                        None => break,
                    }
                }
                fs::create_dir_all(parent).map_err(|e| io_error(parent, "create", &e))?;
                created_dirs.extend(missing.into_iter().rev());
            }
            write_atomic(&c.path, text.as_bytes())
        }
        None => fs::remove_file(&c.path).map_err(|e| io_error(&c.path, "remove", &e)),
    }
}

/// Writes through a temporary file in the same folder and renames it into place, so a
/// reader never sees half a file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Diagnostic> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.latgen-tmp"));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = fs::remove_file(&tmp);
        io_error(path, "write", &e)
    })
}

fn rollback(done: &[&Change], created_dirs: &[PathBuf]) {
    for c in done.iter().rev() {
        let _ = match &c.old {
            Some(old) => write_atomic(&c.path, old.as_bytes()).map(|_| ()),
            None => fs::remove_file(&c.path).map_err(|e| io_error(&c.path, "remove", &e)),
        };
    }
    for d in created_dirs.iter().rev() {
        let _ = fs::remove_dir(d);
    }
}
