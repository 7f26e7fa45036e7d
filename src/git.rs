//! Reading a folder as it was at a Git revision, for `check --base`. Uses the `git` command
//! (present wherever a PR is checked): `ls-tree` to list, one `cat-file --batch` to read.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::codes::Code;
use crate::diag::Diagnostic;

fn git_error(what: String) -> Diagnostic {
    Diagnostic::error(Code::GitError, what).help("run inside the Git repository, with the base revision fetched (e.g. `git fetch origin main`)")
}

fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, Diagnostic> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|e| git_error(format!("cannot run git: {e}")))?;
    if !out.status.success() {
        return Err(git_error(format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(out.stdout)
}

/// The files under `folder` at revision `rev`, by path relative to `folder`. A folder that
/// did not exist at `rev` gives an empty map.
pub fn read_folder_at(folder: &Path, rev: &str) -> Result<BTreeMap<PathBuf, String>, Diagnostic> {
    let top = repository_root(folder)?;
    let rel = relative_to(folder, &top)?;
    let rel_str = rel.to_string_lossy().replace('\\', "/");
    git(
        &top,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )?;
    let (names, objects) = list_blobs(&top, rev, &rel_str)?;
    if names.is_empty() {
        return Ok(BTreeMap::new());
    }
    let bodies = read_blobs(&top, &names, &objects)?;
    Ok(names
        .iter()
        .zip(bodies)
        .map(|(name, body)| {
            let path = Path::new(name)
                .strip_prefix(&rel)
                .unwrap_or(Path::new(name))
                .to_path_buf();
            (path, body)
        })
        .collect())
}

/// The root of the repository `folder` is in, canonical. The folder may not exist in the
/// work tree: then its parent is asked.
fn repository_root(folder: &Path) -> Result<PathBuf, Diagnostic> {
    let anchor = if folder.exists() {
        folder.to_path_buf()
    } else {
        folder.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    let anchor = if anchor.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        anchor
    };
    let top = String::from_utf8_lossy(&git(&anchor, &["rev-parse", "--show-toplevel"])?)
        .trim()
        .to_string();
    PathBuf::from(top)
        .canonicalize()
        .map_err(|e| git_error(format!("cannot resolve the repository root: {e}")))
}

/// `folder`'s path relative to the repository root `top`.
fn relative_to(folder: &Path, top: &Path) -> Result<PathBuf, Diagnostic> {
    let abs = absolute(folder)?;
    abs.strip_prefix(top).map(Path::to_path_buf).map_err(|_| {
        git_error(format!(
            "{} is not inside the repository at {}",
            folder.display(),
            top.display()
        ))
    })
}

/// The files under `rel` (relative to the root `top`) at `rev`: their paths from the root
/// and their object ids, in the same order.
fn list_blobs(top: &Path, rev: &str, rel: &str) -> Result<(Vec<String>, Vec<String>), Diagnostic> {
    let listing = git(
        top,
        &[
            "ls-tree",
            "-r",
            "-z",
            rev,
            "--",
            if rel.is_empty() { "." } else { rel },
        ],
    )?;
    // Entries are `<mode> blob <object>\t<path>`: asking cat-file for objects by id is a
    // look-up, while `REV:path` walks the tree again for every file.
    Ok(listing
        .split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .filter_map(|s| {
            let entry = String::from_utf8_lossy(s);
            let (meta, path) = entry.split_once('\t')?;
            let mut fields = meta.split(' ');
            let (_, kind, id) = (fields.next()?, fields.next()?, fields.next()?);
            (kind == "blob").then(|| (path.to_string(), id.to_string()))
        })
        .unzip())
}

/// The contents of `objects` (the files `names`, for messages), read through one
/// `git cat-file --batch`, in order.
fn read_blobs(top: &Path, names: &[String], objects: &[String]) -> Result<Vec<String>, Diagnostic> {
    let mut child = Command::new("git")
        .arg("-C")
        .arg(top)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| git_error(format!("cannot run git: {e}")))?;
    let mut stdin = child.stdin.take().expect("piped");
    let request: String = objects.iter().map(|id| format!("{id}\n")).collect();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(request.as_bytes());
    });
    let mut reader = BufReader::new(child.stdout.take().expect("piped"));
    let mut bodies = Vec::with_capacity(names.len());
    for name in names {
        bodies.push(read_blob(&mut reader, name)?);
    }
    let _ = writer.join();
    let _ = child.wait();
    Ok(bodies)
}

/// One answer of `git cat-file --batch`: a header line, the content and a newline.
fn read_blob(reader: &mut impl BufRead, name: &str) -> Result<String, Diagnostic> {
    let mut header = String::new();
    reader
        .read_line(&mut header)
        .map_err(|e| git_error(format!("git cat-file: {e}")))?;
    let size: usize = header
        .split_whitespace()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| {
            git_error(format!(
                "git cat-file: unexpected answer `{}` for {name}",
                header.trim()
            ))
        })?;
    let mut body = vec![0; size + 1];
    reader
        .read_exact(&mut body)
        .map_err(|e| git_error(format!("git cat-file: {e}")))?;
    body.pop();
    Ok(String::from_utf8_lossy(&body).into_owned())
}

fn absolute(p: &Path) -> Result<PathBuf, Diagnostic> {
    if p.exists() {
        return p
            .canonicalize()
            .map_err(|e| git_error(format!("cannot resolve {}: {e}", p.display())));
    }
    let parent = p
        .parent()
        .filter(|x| !x.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = p
        .file_name()
        .ok_or_else(|| git_error(format!("cannot resolve {}", p.display())))?;
    Ok(absolute(parent)?.join(name))
}

/// The revision `rev` names, with `auto` meaning the merge base of `HEAD` with the default
/// branch (`origin/HEAD`, else `origin/main`, `origin/master`, `main`, `master`): what a
/// pre-commit hook or a local run judges a change against. None when `auto` finds no
/// default branch (a repository with no history to compare with).
pub fn resolve_base(dir: &Path, rev: &str) -> Result<Option<String>, Diagnostic> {
    if rev != "auto" {
        return Ok(Some(rev.to_string()));
    }
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    for branch in [
        "origin/HEAD",
        "origin/main",
        "origin/master",
        "main",
        "master",
    ] {
        let spec = format!("{branch}^{{commit}}");
        if git(dir, &["rev-parse", "--verify", "--quiet", &spec]).is_err() {
            continue;
        }
        let base = git(dir, &["merge-base", "HEAD", branch])?;
        return Ok(Some(String::from_utf8_lossy(&base).trim().to_string()));
    }
    Ok(None)
}

/// The text of the file at `path` as it was at revision `rev`, or None when it did not
/// exist there.
pub fn read_file_at(path: &Path, rev: &str) -> Result<Option<String>, Diagnostic> {
    let folder = path.parent().unwrap_or(Path::new(""));
    let top = repository_root(folder)?;
    let dir = if folder.as_os_str().is_empty() {
        Path::new(".")
    } else {
        folder
    };
    let name = path.file_name().map(PathBuf::from).unwrap_or_default();
    let rel = relative_to(dir, &top)?.join(name);
    let spec = format!("{rev}:{}", rel.to_string_lossy().replace('\\', "/"));
    if git(&top, &["cat-file", "-e", &spec]).is_err() {
        return Ok(None);
    }
    let bytes = git(&top, &["cat-file", "blob", &spec])?;
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}
