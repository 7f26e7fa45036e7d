//! Reading a folder as it was at a Git revision, for `check --base`. Uses the `git` command
//! (present wherever a PR is checked): `ls-tree` to list, one `cat-file --batch` to read
//! the files that are not, byte for byte, as they are now.
//!
//! The repository is the project's own: found from the project folder, never from a
//! folder inside the output, and only one a `.git` entry names (Git never commits an entry
//! of that name). A PR can commit `HEAD`, `config`, `objects/` and `refs/` into any folder,
//! which Git then takes for a bare repository of the PR's choosing; so every run of `git`
//! refuses implicit bare repositories (`safe.bareRepository=explicit`, Git 2.38), and the
//! repository found is checked and then named explicitly (`--git-dir`, `--work-tree`).

use std::io::{BufRead, BufReader, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::diag::Diagnostic;
use crate::diag::codes::Code;
use crate::manifest::tree::{Text, Tree};

fn git_error(what: String) -> Diagnostic {
    Diagnostic::error(Code::GitError, what).help("run inside the Git repository, with the base revision fetched (e.g. `git fetch origin main`)")
}

/// `git` in `dir`, refusing a repository that is a folder of committed files (see the
/// module's comment).
fn command(dir: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.args(["-c", "safe.bareRepository=explicit"])
        .arg("-C")
        .arg(dir);
    cmd
}

fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, Diagnostic> {
    run(command(dir), args)
}

fn run(mut cmd: Command, args: &[&str]) -> Result<Vec<u8>, Diagnostic> {
    let out = cmd
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

/// A repository whose work tree holds the project: its top folder and its Git folder,
/// both canonical.
struct Repo {
    top: PathBuf,
    git_dir: PathBuf,
}

impl Repo {
    /// The repository that holds `anchor` (a folder of the project; its parent when it
    /// does not exist yet), when a `.git` entry at its top names it: a worktree's or a
    /// submodule's `.git` file, or the `.git` folder itself. Anything else is a folder of
    /// committed files that looks like a repository, and is refused.
    fn of(anchor: &Path) -> Result<Repo, Diagnostic> {
        let anchor = if anchor.exists() {
            anchor.to_path_buf()
        } else {
            anchor.parent().map(Path::to_path_buf).unwrap_or_default()
        };
        let anchor = if anchor.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            anchor
        };
        let found = git(
            &anchor,
            &["rev-parse", "--show-toplevel", "--absolute-git-dir"],
        )?;
        let found = String::from_utf8_lossy(&found);
        let mut lines = found.lines();
        let (Some(top), Some(git_dir)) = (lines.next(), lines.next()) else {
            return Err(git_error("git rev-parse named no repository".into()));
        };
        let canonical = |p: &str| {
            Path::new(p)
                .canonicalize()
                .map_err(|e| git_error(format!("cannot resolve {p}: {e}")))
        };
        let (top, git_dir) = (canonical(top)?, canonical(git_dir)?);
        let dot = top.join(".git");
        let named = match std::fs::metadata(&dot) {
            Ok(m) if m.is_dir() => dot.canonicalize().is_ok_and(|d| d == git_dir),
            Ok(m) => m.is_file(),
            Err(_) => false,
        };
        if !named {
            return Err(Diagnostic::error(
                Code::GitError,
                format!(
                    "{} takes {} for its repository, which no `.git` entry names: files committed there (HEAD, objects/, refs/) make it look like one",
                    anchor.display(),
                    git_dir.display()
                ),
            )
            .help("latgen reads the base only from the project's own repository: remove the committed repository files, and run inside a clone of the project"));
        }
        Ok(Repo { top, git_dir })
    }

    /// `git` on this repository, named explicitly (nothing below it is looked for).
    fn git(&self, args: &[&str]) -> Result<Vec<u8>, Diagnostic> {
        run(self.command(), args)
    }

    /// `git` with `input` on its standard input, never fetching a missing object (a
    /// partial clone's): what it asks is worth no download.
    fn git_offline(&self, args: &[&str], input: Option<&str>) -> std::io::Result<Vec<u8>> {
        let mut cmd = self.command();
        cmd.env("GIT_NO_LAZY_FETCH", "1").args(args);
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
        cmd.stderr(Stdio::null());
        let mut child = cmd.spawn()?;
        // A few lines: the pipe holds them whole, so they are written before any is read.
        let mut stdin = child.stdin.take();
        if let (Some(stdin), Some(input)) = (stdin.as_mut(), input) {
            stdin.write_all(input.as_bytes())?;
        }
        drop(stdin);
        let out = child.wait_with_output()?;
        match out.status.success() {
            true => Ok(out.stdout),
            false => Err(std::io::Error::other("git failed")),
        }
    }

    /// The text of the file at `rel` (from the top) at revision `rev`, or None when it did
    /// not exist there.
    fn text_at(&self, rev: &str, rel: &str) -> Result<Option<String>, Diagnostic> {
        let spec = format!("{rev}:{rel}");
        if self.git(&["cat-file", "-e", &spec]).is_err() {
            return Ok(None);
        }
        let bytes = self.git(&["cat-file", "blob", &spec])?;
        Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
    }

    fn command(&self) -> Command {
        let mut cmd = command(&self.top);
        cmd.arg(format!("--git-dir={}", self.git_dir.display()))
            .arg(format!("--work-tree={}", self.top.display()));
        cmd
    }
}

/// The files under `folder` at revision `rev`, by path relative to `folder`. A file whose
/// object at `rev` is the text `now` has for it (the folder as it is, which a change leaves
/// mostly as it was) is taken from `now`: hashing it is far cheaper than having Git read
/// it. A folder that did not exist at `rev` gives an empty map.
/// The repository is the one of the project folder `root`.
pub(crate) fn read_folder_at(
    root: &Path,
    folder: &Path,
    rev: &str,
    now: &Tree,
) -> Result<Tree, Diagnostic> {
    use rayon::prelude::*;
    let repo = Repo::of(root)?;
    let rel = relative_to(folder, &repo.top)?;
    let rel_str = rel.to_string_lossy().replace('\\', "/");
    repo.git(&[
        "rev-parse",
        "--verify",
        "--quiet",
        &format!("{rev}^{{commit}}"),
    ])?;
    let (names, objects) = list_blobs(&repo, rev, &rel_str)?;
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
    let known: Vec<Option<&Text>> = (paths.iter())
        .map(|path| {
            while cursor.next_if(|(p, _)| *p < path).is_some() {}
            match cursor.peek() {
                Some((p, text)) if *p == path => Some(*text),
                _ => now.get(path),
            }
        })
        .collect();
    let same: Vec<Option<&Text>> = (known.into_par_iter().zip(&objects))
        .with_max_len(crate::diag::PIECE)
        .map(|(text, id)| text.filter(|text| is_object(text, id)))
        .collect();
    let (unknown_names, unknown_objects): (Vec<String>, Vec<String>) = (names.iter().zip(&objects))
        .zip(&same)
        .filter(|(_, same)| same.is_none())
        .map(|((name, id), _)| (name.clone(), id.clone()))
        .unzip();
    let mut read = read_blobs(&repo, &unknown_names, &unknown_objects)?.into_iter();
    let mut tree = Vec::with_capacity(paths.len());
    for (path, same) in paths.into_iter().zip(same) {
        let text = match same {
            Some(text) => text.clone(),
            None => read.next().expect("one answer per file asked for").into(),
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
fn list_blobs(repo: &Repo, rev: &str, rel: &str) -> Result<(Vec<String>, Vec<String>), Diagnostic> {
    let listing = repo.git(&[
        "ls-tree",
        "-r",
        "-z",
        rev,
        "--",
        if rel.is_empty() { "." } else { rel },
    ])?;
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
fn read_blobs(
    repo: &Repo,
    names: &[String],
    objects: &[String],
) -> Result<Vec<String>, Diagnostic> {
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let mut child = repo
        .command()
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
    let repo = Repo::of(dir)?;
    for branch in [
        "origin/HEAD",
        "origin/main",
        "origin/master",
        "main",
        "master",
    ] {
        let spec = format!("{branch}^{{commit}}");
        if repo
            .git(&["rev-parse", "--verify", "--quiet", &spec])
            .is_err()
        {
            continue;
        }
        let base = repo.git(&["merge-base", "HEAD", branch])?;
        return Ok(Some(String::from_utf8_lossy(&base).trim().to_string()));
    }
    Ok(None)
}

/// The text of the file at `path` as it was at revision `rev`, or None when it did not
/// exist there.
pub(crate) fn read_file_at(path: &Path, rev: &str) -> Result<Option<String>, Diagnostic> {
    let (repo, rel) = in_repo(path)?;
    repo.text_at(rev, &rel)
}

/// Goes back through the versions of the file at `path` before `rev`'s, newest first, as
/// the commits along the first parents from `rev` (at most `commits` of them) hold them,
/// until `pick` breaks: where a rollout in flight finds the lock it started from. A version
/// over `max_bytes` ends the search unread, and so does a commit without the file. Nothing
/// is fetched (a partial clone's missing objects end it too). None when `pick` never
/// breaks with a value, or the history cannot be read.
pub(crate) fn search_versions<T>(
    path: &Path,
    rev: &str,
    (commits, max_bytes): (usize, u64),
    mut pick: impl FnMut(String) -> ControlFlow<Option<T>>,
) -> Option<T> {
    let (repo, rel) = in_repo(path).ok()?;
    let count = format!("--max-count={commits}");
    let args = [
        "rev-list",
        "--first-parent",
        &count,
        "--end-of-options",
        rev,
    ];
    let listed = repo.git_offline(&args, None).ok()?;
    // Each commit's version of the file, as Git names and sizes it, in one run.
    let query: String = (String::from_utf8_lossy(&listed).lines())
        .map(|commit| format!("{commit}:{rel}\n"))
        .collect();
    let found = repo
        .git_offline(&["cat-file", "--batch-check"], Some(&query))
        .ok()?;
    let found = String::from_utf8_lossy(&found).into_owned();
    let mut lines = found.lines().map(|l| l.split(' ').collect::<Vec<_>>());
    // The first is `rev`'s own version; a commit that left the file as its parent has it
    // names the same object, and is passed over.
    let mut last = lines.next()?.first()?.to_string();
    for fields in lines {
        let [id, "blob", size] = fields[..] else {
            return None;
        };
        if id == last {
            continue;
        }
        if size.parse::<u64>().ok()? > max_bytes {
            return None;
        }
        last = id.to_string();
        let text = repo.git_offline(&["cat-file", "blob", id], None).ok()?;
        if let ControlFlow::Break(found) = pick(String::from_utf8_lossy(&text).into_owned()) {
            return found;
        }
    }
    None
}

/// The repository that holds `path`, and the path from its top, as Git writes it.
fn in_repo(path: &Path) -> Result<(Repo, String), Diagnostic> {
    let folder = path.parent().unwrap_or(Path::new(""));
    let repo = Repo::of(folder)?;
    let dir = if folder.as_os_str().is_empty() {
        Path::new(".")
    } else {
        folder
    };
    let name = path.file_name().map(PathBuf::from).unwrap_or_default();
    let rel = relative_to(dir, &repo.top)?.join(name);
    let rel = rel.to_string_lossy().replace('\\', "/");
    Ok((repo, rel))
}

/// The base revision, if one is given (`auto`: the merge base with the default branch, or
/// none when there is no default branch to compare with), and the output folder at it,
/// read from Git but for the files that are as they are in `now` (the folder as it is,
/// when it was read). The repository is the project folder `root`'s; an output folder that
/// holds a repository's files is refused (see [`planted_repository`]).
pub(crate) fn base_tree(
    root: &Path,
    rev: Option<&str>,
    output: &Path,
    now: &crate::manifest::tree::Tree,
) -> Result<Option<(String, crate::manifest::tree::Tree)>, crate::diag::Diagnostic> {
    let Some(rev) = rev else {
        return Ok(None);
    };
    if let Some(found) = planted_repository(root, output, now) {
        return Err(Diagnostic::error(
            Code::GitError,
            format!(
                "{} holds the files of a Git repository (HEAD, objects/, refs/), which latgen never writes: a base read there would be the repository's, not the project's",
                found.display()
            ),
        )
        .at(crate::diag::Span::file(&found))
        .help("remove them from the output folder (it holds latgen's files only); the base is read from the project's own repository"));
    }
    match resolve_base(root, rev)? {
        Some(rev) => {
            let tree = read_folder_at(root, output, &rev, now)?;
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

/// [`base_tree`] of the output of the project at `paths`. An environment that took over the
/// project's lock (`adoptedFrom` in its lock) and has no output of its own at the base is
/// read from where the live output was: adopting changes where the files are, not what is
/// live.
pub(crate) fn base_tree_of(
    paths: &crate::input::ProjectPaths,
    rev: Option<&str>,
    now: &crate::manifest::tree::Tree,
) -> Result<Option<(String, crate::manifest::tree::Tree)>, crate::diag::Diagnostic> {
    let found = base_tree(&paths.root, rev, &paths.output, now)?;
    if let Some((resolved, tree)) = &found
        && tree.is_empty()
        && let Some(from) = adopted_from(paths)
    {
        let old = paths.root.join(from);
        let tree = read_folder_at(&paths.root, &old, resolved, &Default::default())?;
        return Ok(Some((resolved.clone(), tree)));
    }
    Ok(found)
}

/// The `adoptedFrom` folder of an environment's lock, read inside the project only.
fn adopted_from(paths: &crate::input::ProjectPaths) -> Option<String> {
    paths.env.as_ref()?;
    let project = crate::input::confine::Project::new(&paths.root);
    let bytes = project.read(&paths.lock).ok()??;
    let text = String::from_utf8(bytes).ok()?;
    let mut ignored = crate::diag::Diagnostics::new();
    crate::input::lock::parse(&paths.lock, &text, &mut ignored)?.adopted_from
}

/// Whether the repository that holds `path` has it in its `HEAD` commit; false outside a
/// repository, or in one with no commit yet.
pub(crate) fn committed(path: &Path) -> bool {
    read_file_at(path, "HEAD").is_ok_and(|t| t.is_some())
}

/// Whether `path` (a file, or a folder with a file in it) is tracked by the repository of
/// the project folder `root`; false outside a repository.
pub(crate) fn tracked(root: &Path, path: &Path) -> bool {
    let (Ok(repo), Ok(path)) = (Repo::of(root), std::path::absolute(path)) else {
        return false;
    };
    let path = path.to_string_lossy();
    repo.git(&["ls-files", "--error-unmatch", "--", &path])
        .is_ok()
}

/// A folder in the output that Git would take for a repository: it holds `HEAD` and
/// something under `objects/` or `refs/` (read from `now`, the output folder's files);
/// or the output folder itself, or a folder that holds it below the project folder `root`
/// (an environment's `generated/`), that does, on disk.
fn planted_repository(
    root: &Path,
    output: &Path,
    now: &crate::manifest::tree::Tree,
) -> Option<PathBuf> {
    let looks = |dir: &Path, has: &dyn Fn(&Path) -> bool| {
        has(&dir.join("HEAD")) && (has(&dir.join("objects")) || has(&dir.join("refs")))
    };
    let on_disk = |p: &Path| p.symlink_metadata().is_ok();
    let root = crate::input::confine::lexical(if root.as_os_str().is_empty() {
        Path::new(".")
    } else {
        root
    });
    let mut dir = output.to_path_buf();
    while !dir.as_os_str().is_empty() && crate::input::confine::lexical(&dir) != root {
        if looks(&dir, &on_disk) {
            return Some(dir);
        }
        dir = dir.parent().map(Path::to_path_buf).unwrap_or_default();
    }
    let under = |p: &Path| now.keys().any(|k| k.starts_with(p));
    now.keys()
        .filter(|k| k.file_name().is_some_and(|n| n == "HEAD"))
        .filter_map(|k| k.parent())
        .find(|dir| looks(dir, &under))
        .map(|dir| output.join(dir))
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
        let at = read_folder_at(root, &out, "HEAD", &now).unwrap();
        let want: Tree = names
            .iter()
            .map(|n| {
                let rel = Path::new(n).strip_prefix("out").unwrap().to_path_buf();
                (rel, format!("{n} as committed\n").into())
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
