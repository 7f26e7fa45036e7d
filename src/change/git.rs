//! Reading a folder as it was at a Git revision, for `check --base`. Uses the `git` command
//! (present wherever a PR is checked): `ls-tree` to list, one `cat-file --batch` to read
//! the files that are not, byte for byte, as they are now.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::diag::Diagnostic;
use crate::diag::codes::Code;

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

/// The files under `folder` at revision `rev`, by path relative to `folder`. A file whose
/// object at `rev` is the text `now` has for it (the folder as it is, which a change leaves
/// mostly as it was) is taken from `now`: hashing it is far cheaper than having Git read
/// it. A folder that did not exist at `rev` gives an empty map.
pub(crate) fn read_folder_at(
    folder: &Path,
    rev: &str,
    now: &BTreeMap<PathBuf, String>,
) -> Result<BTreeMap<PathBuf, String>, Diagnostic> {
    use rayon::prelude::*;
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
    let paths: Vec<PathBuf> = names
        .iter()
        .map(|name| {
            let name = Path::new(name);
            name.strip_prefix(&rel).unwrap_or(name).to_path_buf()
        })
        .collect();
    // Git lists the files in byte order, which is the tree's order but where a name holds
    // a byte below `/`: they are paired side by side, and looked up only where the orders
    // part. The texts are then hashed in parallel.
    let mut cursor = now.iter().peekable();
    let known: Vec<Option<&String>> = (paths.iter())
        .map(|path| {
            while cursor.next_if(|(p, _)| *p < path).is_some() {}
            match cursor.peek() {
                Some((p, text)) if *p == path => Some(*text),
                _ => now.get(path),
            }
        })
        .collect();
    let same: Vec<Option<&String>> = (known.into_par_iter().zip(&objects))
        .map(|(text, id)| text.filter(|text| is_object(text, id)))
        .collect();
    let (unknown_names, unknown_objects): (Vec<String>, Vec<String>) = (names.iter().zip(&objects))
        .zip(&same)
        .filter(|(_, same)| same.is_none())
        .map(|((name, id), _)| (name.clone(), id.clone()))
        .unzip();
    let mut read = read_blobs(&top, &unknown_names, &unknown_objects)?.into_iter();
    let mut tree = Vec::with_capacity(paths.len());
    for (path, same) in paths.into_iter().zip(same) {
        let text = match same {
            Some(text) => text.clone(),
            None => read.next().expect("one answer per file asked for"),
        };
        tree.push((path, text));
    }
    Ok(tree.into_iter().collect())
}

/// Whether `text` is the Git object `id`: a blob's id is the SHA-1 of `blob <length>\0`
/// and its bytes. (A repository of SHA-256 ids never matches: its files are all read.)
fn is_object(text: &str, id: &str) -> bool {
    use sha1::{Digest, Sha1};
    let mut hash = Sha1::new();
    hash.update(format!("blob {}\0", text.len()));
    hash.update(text);
    let digest = hash.finalize();
    const HEX: &[u8; 16] = b"0123456789abcdef";
    id.len() == 2 * digest.len()
        && (digest.iter().zip(id.as_bytes().chunks(2)))
            .all(|(b, pair)| pair == [HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]])
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
    if names.is_empty() {
        return Ok(Vec::new());
    }
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
pub(crate) fn resolve_base(dir: &Path, rev: &str) -> Result<Option<String>, Diagnostic> {
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
pub(crate) fn read_file_at(path: &Path, rev: &str) -> Result<Option<String>, Diagnostic> {
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

/// The base revision, if one is given (`auto`: the merge base with the default branch, or
/// none when there is no default branch to compare with), and the output folder at it,
/// read from Git but for the files that are as they are in `now` (the folder as it is,
/// when it was read).
pub(crate) fn base_tree(
    rev: Option<&str>,
    output: &std::path::Path,
    now: &crate::manifest::tree::Tree,
) -> Result<Option<(String, crate::manifest::tree::Tree)>, crate::diag::Diagnostic> {
    let Some(rev) = rev else {
        return Ok(None);
    };
    let anchor = output.parent().unwrap_or(std::path::Path::new("."));
    match resolve_base(anchor, rev)? {
        Some(rev) => {
            let tree = read_folder_at(output, &rev, now)?;
            Ok(Some((rev, tree)))
        }
        None => {
            eprintln!(
                "note: --base auto found no default branch to compare with; checking without a base"
            );
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The id `git hash-object` gives a file holding `hello` and a line break.
    const HELLO: &str = "ce013625030ba8dba906f756967f9e9ca394464a";

    #[test]
    fn a_text_is_the_object_git_names_for_it() {
        assert!(is_object("hello\n", HELLO));
    }

    #[test]
    fn a_text_of_other_bytes_is_not_that_object() {
        assert!(!is_object("hello", HELLO));
        assert!(!is_object("hello\r\n", HELLO));
    }

    /// A folder at a commit is what Git holds, whether a file is taken from the folder as
    /// it is (unchanged) or read from Git (changed, gone, or named so that Git's byte order
    /// and the folder's path order part: `kong-x/`, `kong.yaml` and `kong/`).
    #[test]
    fn a_folder_at_a_commit_is_what_git_holds() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let run = |args: &[&str]| git(root, args).unwrap();
        run(&["init", "-q"]);
        run(&["config", "user.name", "t"]);
        run(&["config", "user.email", "t@example.com"]);
        run(&["config", "commit.gpgsign", "false"]);
        let names = [
            "out/kong/a.yaml",
            "out/kong/b.yaml",
            "out/kong-x/a.yaml",
            "out/kong.yaml",
            "out/kong0/a.yaml",
            "out/lattice/z.yaml",
        ];
        for n in names {
            let p = root.join(n);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, format!("{n} as committed\n")).unwrap();
        }
        run(&["add", "-A"]);
        run(&["commit", "-q", "-m", "base"]);
        let out = root.join("out");
        let mut now = crate::output::read_tree(&out).unwrap();
        now.insert("kong/b.yaml".into(), "edited\n".into());
        now.remove(Path::new("kong0/a.yaml"));
        let at = read_folder_at(&out, "HEAD", &now).unwrap();
        let want: BTreeMap<PathBuf, String> = names
            .iter()
            .map(|n| {
                let rel = Path::new(n).strip_prefix("out").unwrap().to_path_buf();
                (rel, format!("{n} as committed\n"))
            })
            .collect();
        assert_eq!(at, want);
    }

    /// A repository of SHA-256 ids: its files are read from Git, never taken as they are.
    #[test]
    fn an_id_of_another_length_matches_nothing() {
        assert!(!is_object("hello\n", &format!("{HELLO}{}", &HELLO[..24])));
        assert!(!is_object("hello\n", "ce01"));
    }
}
