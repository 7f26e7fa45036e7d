//! The output folder read and written: latgen's files told from others by their header, the change set between what is there and what a run wants, and writing it.

use super::{additions, journal, transaction};
use crate::manifest::tree::{Text, Tree};
pub(crate) use additions::Additions;
pub(crate) use journal::planted as planted_transaction_file;
pub(crate) use transaction::{
    IGNORED, apply, begin_all, begin_in, interrupted_render, leftovers, write_atomic,
};

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use similar::TextDiff;

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Span};
use crate::manifest::layout::{HEADER, Side};
use crate::render::Rendered;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ChangeKind {
    Added,
    Changed,
    Removed,
}

/// One file to create, rewrite or delete, at `path` (the output folder joined with the
/// file's path in it, as given on the command line).
#[derive(Debug, Clone)]
pub struct Change {
    pub path: PathBuf,
    pub kind: ChangeKind,
    pub old: Option<Text>,
    pub new: Option<Text>,
}

// One wording for a failed read or write, shared with the folder handles that write it.
use crate::input::beneath::io_error;

fn read_if_exists(path: &Path) -> Result<Option<String>, Diagnostic> {
    match fs::read(path) {
        Ok(b) => Ok(Some(String::from_utf8_lossy(&b).into_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_error(path, "read", &e)),
    }
}

/// The text of a file outside the output folder (the lock, a file of the deploy kit), None
/// when there is none. Inside the project it is read as an input is (`confine.rs`: a link
/// out of the project or into .git is refused), through folders that are no links (as it
/// is written).
fn read_outside(root: &Path, path: &Path) -> Result<Option<String>, Diagnostic> {
    let project = crate::input::confine::Project::new(root);
    if !project.holds_lexically(path) {
        return read_if_exists(path);
    }
    let parent = transaction::parent_of(path);
    if parent.symlink_metadata().is_err() {
        return Ok(None);
    }
    crate::input::beneath::Folder::open(root, &parent, false)?;
    Ok(project
        .read(path)?
        .map(|b| String::from_utf8_lossy(&b).into_owned()))
}

/// Every file under `dir`, by path relative to it, read in parallel (a large tree has tens
/// of thousands of small files). A missing folder is an empty tree.
pub fn read_tree(dir: &Path) -> Result<Tree, Diagnostic> {
    read_tree_like(dir, &Tree::new())
}

/// [`read_tree`], each file that `like` holds with the same text at the same path taking
/// `like`'s copy: the tree as read then costs memory only where it differs. (At 100,000
/// apps the output folder is about 230 MB of text; a render with nothing changed would
/// otherwise hold it twice.)
pub(crate) fn read_tree_like(dir: &Path, like: &Tree) -> Result<Tree, Diagnostic> {
    use crate::manifest::tree::beside;
    use rayon::prelude::*;
    let files = list_tree(dir)?;
    // Paired in one walk (both lists are in path order), read and compared in parallel.
    let known: Vec<Option<&Text>> = beside(files.iter().map(|(rel, _)| (rel, ())), like.iter())
        .map(|(_, (), known)| known)
        .collect();
    let texts = (files
        .par_iter()
        .zip(&known)
        .with_max_len(crate::diag::PIECE))
    .map(|((_, full), known)| {
        let bytes = fs::read(full).map_err(|e| io_error(full, "read", &e))?;
        Ok(match known {
            Some(known) if known.as_bytes() == bytes.as_slice() => Text::clone(known),
            _ => text_of(bytes),
        })
    })
    .collect::<Result<Vec<Text>, Diagnostic>>()?;
    Ok(files.into_iter().map(|(rel, _)| rel).zip(texts).collect())
}

/// Runs `work` and reads the tree under `dir` (as [`read_tree`] does) in the time `work`
/// leaves a core idle. The reader takes any work the pool has pending before each file, so
/// it fills the gaps between `work`'s parallel parts rather than competing with them; when
/// `work` is done, what is left is read on every thread of the pool.
pub(crate) fn read_tree_while<R: Send>(
    dir: &Path,
    work: impl FnOnce() -> R + Send,
) -> (R, Result<Tree, Diagnostic>) {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listed: OnceLock<Result<Vec<(PathBuf, PathBuf)>, Diagnostic>> = OnceLock::new();
    let next = AtomicUsize::new(0);
    // Files are taken one at a time from a shared counter, by whichever thread is free;
    // each thread keeps what it read by the file's place in the list.
    let read_some = |yielding: bool| {
        let mut got = Vec::new();
        let Some(Ok(files)) = listed.get() else {
            return Ok(got);
        };
        loop {
            while yielding && rayon::yield_now() == Some(rayon::Yield::Executed) {}
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some((_, p)) = files.get(i) else {
                return Ok(got);
            };
            got.push((i, read_text(p)?));
        }
    };
    let ((result, mine), theirs) = rayon::join(
        || {
            use rayon::prelude::*;
            let result = work();
            // Waits for the listing if the reader is still at it (or makes it, if the
            // reader has not started).
            listed.get_or_init(|| list_tree(dir));
            let rest: Result<Vec<Vec<_>>, Diagnostic> = (0..rayon::current_num_threads())
                .into_par_iter()
                .map(|_| read_some(false))
                .collect();
            (
                result,
                rest.map(|r| r.into_iter().flatten().collect::<Vec<_>>()),
            )
        },
        || {
            listed.get_or_init(|| list_tree(dir));
            read_some(true)
        },
    );
    let tree = (|| {
        let Some(files) = listed.into_inner().transpose()? else {
            return Ok(BTreeMap::new());
        };
        let mut texts = mine?;
        texts.extend(theirs?);
        texts.sort_unstable_by_key(|(i, _)| *i);
        let texts = texts.into_iter().map(|(_, text)| text);
        Ok(files.into_iter().map(|(rel, _)| rel).zip(texts).collect())
    })();
    (result, tree)
}

/// The files under `dir` in path order, each by its path relative to `dir` and its full
/// path. A missing folder holds none.
fn list_tree(dir: &Path) -> Result<Vec<(PathBuf, PathBuf)>, Diagnostic> {
    if !dir.exists() {
        return Ok(Vec::new());
    }
    if !dir.is_dir() {
        return Err(Diagnostic::error(
            Code::IoError,
            format!("output {} is a file, not a folder", dir.display()),
        )
        .help("give a folder for -o, e.g. `-o generated/`"));
    }
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(dir) {
        let entry = entry.map_err(|e| {
            Diagnostic::error(Code::IoError, format!("cannot read the output folder: {e}"))
                .at(Span::file(dir))
        })?;
        if entry.file_type().is_file() {
            let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path());
            files.push((path_order(rel), rel.to_path_buf(), entry.into_path()));
        }
    }
    // In path order, the files are read into a tree in one go: comparing paths one insertion
    // at a time is a large part of reading tens of thousands of them. Sorted once by a key
    // (a walk sorted by name splits two paths at every comparison).
    files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok(files.into_iter().map(|(_, rel, p)| (rel, p)).collect())
}

/// One file's text, as the trees hold it (shared).
fn read_text(p: &Path) -> Result<Text, Diagnostic> {
    let bytes = fs::read(p).map_err(|e| io_error(p, "read", &e))?;
    Ok(text_of(bytes))
}

/// A file's bytes as the trees hold them (a byte that is not UTF-8 made U+FFFD).
fn text_of(bytes: Vec<u8>) -> Text {
    match std::str::from_utf8(&bytes) {
        Ok(text) => Text::from(text),
        Err(_) => Text::from(String::from_utf8_lossy(&bytes)),
    }
}

/// A key that orders paths as `Path` does, component by component: each component ends in
/// a byte no name holds and that sorts before every byte one can.
fn path_order(rel: &Path) -> Vec<u8> {
    let mut key = Vec::with_capacity(rel.as_os_str().len() + 1);
    for c in rel.components() {
        key.extend_from_slice(c.as_os_str().as_encoded_bytes());
        key.push(0);
    }
    key
}

/// The YAML files under the output folder's `lattice/` and `kong/`, by relative path;
/// the tree itself when it holds nothing else (as latgen writes it).
pub(crate) fn manifests(tree: &Tree) -> Cow<'_, Tree> {
    if tree.keys().all(|p| is_manifest(p)) {
        return Cow::Borrowed(tree);
    }
    Cow::Owned(
        tree.iter()
            .filter(|(p, _)| is_manifest(p))
            .map(|(p, t)| (p.clone(), t.clone()))
            .collect(),
    )
}

/// A YAML file under `lattice/` or `kong/`.
fn is_manifest(p: &Path) -> bool {
    is_plain_manifest(p) || is_manifest_by_components(p)
}

/// [`is_manifest`] told from the path's bytes, for the names latgen writes: asked of every
/// file of a large tree, where parsing each path into components showed. Never true where
/// [`is_manifest_by_components`] is false.
fn is_plain_manifest(p: &Path) -> bool {
    let b = p.as_os_str().as_encoded_bytes();
    let name = b.rsplit(|&c| c == b'/').next().unwrap_or(b);
    (b.starts_with(b"lattice/") || b.starts_with(b"kong/"))
        && [&b".yaml"[..], b".yml"]
            .iter()
            .any(|e| name.len() > e.len() && name.ends_with(e) && name[0] != b'.')
}

fn is_manifest_by_components(p: &Path) -> bool {
    (p.starts_with(Side::Lattice.dir()) || p.starts_with(Side::Kong.dir()))
        && matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"))
}

/// A file outside the output folder that a render brings along, and the text the rendered
/// state needs in it: the lock, or a file of the deploy kit.
pub struct OutsideFile<'a> {
    pub path: &'a Path,
    pub text: String,
}

/// The change set from the output folder's files `existing` to `output` and the files
/// outside it (the lock, the deploy kit), keeping only changes to the files `keep` accepts
/// by their path under the output folder (to leave one side exactly as it is); the files
/// outside, when given, are always in it. Sorted by path.
pub(crate) fn change_set<'a>(
    root: &Path,
    out_dir: &Path,
    existing: &Tree,
    output: Cow<'_, Rendered>,
    outside: impl IntoIterator<Item = OutsideFile<'a>>,
    keep: impl Fn(&Path) -> bool,
) -> Result<Vec<Change>, Diagnostic> {
    let outside: Vec<(PathBuf, String)> = outside
        .into_iter()
        .map(|l| (l.path.to_path_buf(), l.text))
        .collect();
    changes(root, (out_dir, existing, output), &outside, keep)
}

/// Brings the output folder, whose files are `existing`, and the files outside it (the
/// lock, the deploy kit) to the rendered state: the change set of [`change_set`], applied.
pub fn sync<'a>(
    root: &Path,
    out_dir: &Path,
    existing: &Tree,
    output: Cow<'_, Rendered>,
    outside: impl IntoIterator<Item = OutsideFile<'a>>,
    keep: impl Fn(&Path) -> bool,
) -> Result<Vec<Change>, Diagnostic> {
    let changes = change_set(root, out_dir, existing, output, outside, keep)?;
    apply(root, out_dir, existing, &changes)?;
    Ok(changes)
}

/// The output folder must not be a file nor lie inside the apps folder (its YAML would be
/// read back as app declarations).
pub(crate) fn check_location(out: &Path, apps: &Path) -> Option<Diagnostic> {
    if out.is_file() {
        return Some(
            Diagnostic::error(
                Code::InvalidOutput,
                format!("output {} is a file", out.display()),
            )
            .help("give a folder for -o, e.g. `-o generated/`"),
        );
    }
    let (o, a) = (absolute(out)?, absolute(apps)?);
    if o.starts_with(&a) || a.starts_with(&o) {
        return Some(
            Diagnostic::error(
                Code::InvalidOutput,
                format!(
                    "output {} overlaps the apps folder {}",
                    out.display(),
                    apps.display()
                ),
            )
            .help("write the manifests to a folder beside apps/, e.g. `-o generated/`"),
        );
    }
    None
}

/// `p` made absolute through its nearest existing ancestor (the output may not exist yet).
fn absolute(p: &Path) -> Option<PathBuf> {
    let mut existing = p.to_path_buf();
    let mut rest = Vec::new();
    while !existing.exists() {
        rest.push(existing.file_name()?.to_owned());
        existing = existing
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        if existing.as_os_str().is_empty() {
            existing = PathBuf::from(".");
        }
    }
    let mut full = existing.canonicalize().ok()?;
    full.extend(rest.into_iter().rev());
    Some(full)
}

/// What it takes to turn the output folder, whose files are `existing` (from
/// [`read_tree`]), into `output`, plus `extra` files such as the lock; of the output
/// folder's files, those `keep` accepts by their path in it. Files without latgen's header
/// are never touched. Sorted by path.
fn changes(
    root: &Path,
    (out_dir, existing, output): (&Path, &Tree, Cow<'_, Rendered>),
    extra: &[(PathBuf, String)],
    keep: impl Fn(&Path) -> bool,
) -> Result<Vec<Change>, Diagnostic> {
    let mut out = Vec::new();
    // The output folder's files are judged by `keep` here, where their paths in it are at
    // hand, rather than taken back out of the joined paths (see `under`).
    let mut change = |inside: bool, rel: &Path, old: Option<&Text>, new: Option<Text>| {
        if inside && !keep(rel) {
            return;
        }
        let kind = match (old, &new) {
            (Some(o), Some(n)) if o == n => return,
            (Some(_), Some(_)) => ChangeKind::Changed,
            (None, Some(_)) => ChangeKind::Added,
            (Some(_), None) => ChangeKind::Removed,
            (None, None) => return,
        };
        out.push(Change {
            path: if inside {
                out_dir.join(rel)
            } else {
                rel.to_path_buf()
            },
            kind,
            old: old.cloned(),
            new,
        });
    };
    // An owned output gives its paths away; the texts are shared either way.
    let files: Box<dyn Iterator<Item = (Cow<'_, Path>, Text)>> = match output {
        Cow::Owned(output) => Box::new(
            output
                .files
                .into_iter()
                .map(|(rel, text)| (Cow::Owned(rel), text)),
        ),
        Cow::Borrowed(output) => Box::new(
            output
                .files
                .iter()
                .map(|(rel, text)| (Cow::Borrowed(rel.as_path()), Text::clone(text))),
        ),
    };
    // Both trees are sorted by path: walked side by side rather than looked up file by
    // file. An old file the output no longer has is removed if latgen wrote it.
    let mut old_files = existing.iter().peekable();
    for (rel, new) in files {
        while let Some((gone, text)) = old_files.next_if(|(old, _)| old.as_path() < rel.as_ref()) {
            if text.starts_with(HEADER) {
                change(true, gone, Some(text), None);
            }
        }
        let old = old_files
            .next_if(|(old, _)| old.as_path() == rel.as_ref())
            .map(|(_, text)| text);
        change(true, &rel, old, Some(new));
    }
    for (gone, text) in old_files {
        if text.starts_with(HEADER) {
            change(true, gone, Some(text), None);
        }
    }
    for (path, new) in extra {
        let old = read_outside(root, path)?.map(Text::from);
        change(false, path, old.as_ref(), Some(Text::from(new.as_str())));
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// `path` in `dir` (`path.strip_prefix(dir)`), found from the bytes when `path` is `dir`
/// joined with a plain relative path, as every path of a change set is: comparing paths by
/// their components cost the write of a 10,000-app render about 15 ms of one core.
pub(crate) fn under<'p>(dir: &Path, path: &'p Path) -> Option<&'p Path> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let rest = (path
            .as_os_str()
            .as_bytes()
            .strip_prefix(dir.as_os_str().as_bytes()))
        .and_then(|r| r.strip_prefix(b"/"));
        // What follows the separator is the remainder as `strip_prefix` gives it unless it
        // has separators or `.` to trim at either end.
        let plain = |r: &[u8]| {
            !r.is_empty()
                && r != b"."
                && !r.starts_with(b"/")
                && !r.starts_with(b"./")
                && !r.ends_with(b"/")
                && !r.ends_with(b"/.")
        };
        if let Some(rest) = rest.filter(|r| plain(r) && !dir.as_os_str().is_empty()) {
            return Some(Path::new(std::ffi::OsStr::from_bytes(rest)));
        }
    }
    path.strip_prefix(dir).ok()
}

/// A unified diff of the changes, the way `git diff` shows them.
pub(crate) fn unified_diff(changes: &[Change]) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every file of a nested tree, by its path under the folder, in path order.
    #[test]
    fn every_file_of_a_nested_tree_is_read_from_its_own_folder() {
        let dir = tempfile::tempdir().unwrap();
        let files = [
            "top.yaml",
            "kong/a.yaml",
            "kong/deep/b.yaml",
            "kong/deep/deeper/c.yaml",
            "kong/z.yaml",
            "lattice/d.yaml",
            "zz.yaml",
        ];
        for f in files {
            let path = dir.path().join(f);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, format!("# {f}\n")).unwrap();
        }
        let tree = read_tree(dir.path()).unwrap();
        let read: Vec<(String, String)> = (tree.iter())
            .map(|(p, t)| (p.display().to_string(), t.to_string()))
            .collect();
        let mut want: Vec<(String, String)> = files
            .iter()
            .map(|f| (f.to_string(), format!("# {f}\n")))
            .collect();
        want.sort_by(|a, b| Path::new(&a.0).cmp(Path::new(&b.0)));
        assert_eq!(read, want);
    }

    /// Read beside another tree, a folder is read exactly as on its own; a file whose text
    /// the other tree holds at its path takes that copy, and no other file does (a changed
    /// text, a path the other tree lacks, bytes that are not UTF-8).
    #[test]
    fn a_tree_read_like_another_shares_only_its_equal_texts() {
        use std::sync::Arc;
        let dir = tempfile::tempdir().unwrap();
        let on_disk: [(&str, &[u8]); 5] = [
            ("kong/a.yaml", b"same\n"),
            ("kong/a-b.yaml", b"same too\n"),
            ("kong/c.yaml", b"changed\n"),
            ("lattice/new.yaml", b"only here\n"),
            ("lattice/odd.yaml", b"\xff\n"),
        ];
        for (f, bytes) in on_disk {
            let path = dir.path().join(f);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, bytes).unwrap();
        }
        let like: Tree = [
            ("kong/a.yaml", "same\n"),
            ("kong/a-b.yaml", "same too\n"),
            ("kong/b.yaml", "gone\n"),
            ("kong/c.yaml", "was\n"),
            ("lattice/odd.yaml", "\u{fffd}\n"),
        ]
        .into_iter()
        .map(|(p, t)| (PathBuf::from(p), Text::from(t)))
        .collect();
        let tree = read_tree_like(dir.path(), &like).unwrap();
        assert_eq!(tree, read_tree(dir.path()).unwrap());
        let shared: Vec<&str> = (tree.iter())
            .filter(|(p, t)| like.get(*p).is_some_and(|l| Arc::ptr_eq(l, t)))
            .map(|(p, _)| p.to_str().unwrap())
            .collect();
        assert_eq!(shared, ["kong/a-b.yaml", "kong/a.yaml"]);
    }

    /// Read in the gaps of parallel work, a tree is read exactly as on its own, and the
    /// work's result comes back with it.
    #[test]
    fn a_tree_read_alongside_work_is_the_tree_read_alone() {
        use rayon::prelude::*;
        let dir = tempfile::tempdir().unwrap();
        for i in 0..300 {
            let path = dir.path().join(format!("side{}/f{i:03}.yaml", i % 3));
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, format!("# {i}\n")).unwrap();
        }
        let work = || (0..100_000u64).into_par_iter().map(|n| n % 7).sum::<u64>();
        let (sum, tree) = read_tree_while(dir.path(), work);
        assert_eq!(sum, work());
        let tree = tree.unwrap();
        assert_eq!(tree.len(), 300);
        assert_eq!(tree, read_tree(dir.path()).unwrap());
    }

    /// A file where the folder should be is refused, and the work still runs.
    #[test]
    fn a_file_for_the_tree_is_refused_alongside_work() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("generated");
        fs::write(&file, "not a folder\n").unwrap();
        let (done, tree) = read_tree_while(&file, || 42);
        assert_eq!(done, 42);
        let err = tree.unwrap_err();
        assert!(
            err.message.contains("is a file, not a folder"),
            "{}",
            err.message
        );
    }

    /// The manifests told by their bytes are manifests by their components too, and
    /// latgen's own names are told by their bytes.
    #[test]
    fn manifests_told_by_bytes_are_manifests() {
        let cases = [
            ("kong/httproute-shop.yaml", true),
            ("lattice/httproute-group-1.yaml", true),
            ("kong/kustomization.yaml", true),
            ("kong/deep/x.yml", true),
            ("kong//x.yaml", true),
            ("kong/./x.yaml", true),
            ("kong/.x.yaml", true),
            ("kong/.yaml", false),
            ("kong/x.yaml.bak", false),
            ("kong/x.json", false),
            ("kongx/a.yaml", false),
            ("kong", false),
            ("README.md", false),
            ("x/kong/a.yaml", false),
            ("lattice/x.yaml/.", true),
        ];
        for (p, manifest) in cases {
            let p = Path::new(p);
            assert_eq!(is_manifest(p), manifest, "{}", p.display());
            assert!(
                !is_plain_manifest(p) || is_manifest_by_components(p),
                "{}",
                p.display()
            );
        }
        assert!(is_plain_manifest(Path::new(
            "kong/service-shop-lattice.yaml"
        )));
    }

    /// The byte-wise reading of a path in a folder answers as `Path::strip_prefix` does,
    /// for the paths a change set holds and for the odd ones a user could give.
    #[test]
    fn a_path_in_a_folder_is_what_strip_prefix_finds() {
        let dirs = [
            "out", "./out", "out/", "/abs/out", "a/./b", "a/.", "a//b", "",
        ];
        let rels = [
            "kong/x.yaml",
            "x",
            "./x",
            "/x",
            "x/",
            "x/.",
            ".",
            "",
            "kong//x",
            "kong/./x",
            "..",
            "../x",
        ];
        for dir in dirs {
            for rel in rels {
                for path in [
                    format!("{dir}/{rel}"),
                    format!("{dir}{rel}"),
                    rel.to_string(),
                ] {
                    let path = Path::new(&path);
                    let expected = path.strip_prefix(dir).ok();
                    assert_eq!(
                        super::under(Path::new(dir), path),
                        expected,
                        "{dir} {path:?}"
                    );
                }
            }
        }
    }

    /// Names that sort one way as text and the other as paths: `-`, `.` and `0` come
    /// before `/` in ASCII, after it component by component.
    #[test]
    fn the_sort_key_orders_paths_as_paths_order() {
        let paths = [
            "kong/a.yaml",
            "kong-x/a.yaml",
            "kong.yaml",
            "kong/a/b.yaml",
            "kong/a-b.yaml",
            "kong0/a.yaml",
            "kong",
            "lattice/z.yaml",
            "a b/c",
            "a/c",
        ];
        let mut by_key: Vec<&Path> = paths.iter().map(Path::new).collect();
        by_key.sort_by_key(|p| path_order(p));
        let mut by_path: Vec<&Path> = paths.iter().map(Path::new).collect();
        by_path.sort();
        assert_eq!(by_key, by_path);
    }
}
