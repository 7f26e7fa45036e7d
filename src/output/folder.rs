//! The output folder against a run: latgen's files told from others by their header, the
//! change set between what is there and what a run wants, and writing it (the folder is
//! read into a tree in `reading.rs`).

use super::{additions, journal, transaction};
use crate::manifest::tree::{Text, Tree};
pub(crate) use additions::Additions;
pub(crate) use journal::planted as planted_transaction_file;
pub(crate) use transaction::{
    IGNORED, apply, begin_all, begin_in, interrupted_render, leftovers, write_atomic,
};

use std::borrow::Cow;
use std::fs;
use std::path::{Path, PathBuf};

use similar::TextDiff;

use crate::diag::Diagnostic;
use crate::diag::codes::Code;
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
/// [`super::read_tree`]), into `output`, plus `extra` files such as the lock; of the output
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
}
