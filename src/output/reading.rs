//! The output folder read into a tree: its files listed in path order and read in
//! parallel, beside a build or beside a tree whose equal texts they share.

use std::fs;
use std::path::{Path, PathBuf};

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Span};
use crate::input::beneath::io_error;
use crate::manifest::tree::{Text, Tree};

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
        read_with(full, |bytes| match known {
            Some(known) if known.as_bytes() == bytes => Text::clone(known),
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
            return Ok(Tree::new());
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
    read_with(p, text_of)
}

/// What `made` makes of the bytes of the file at `p`. They are read into a buffer each
/// thread keeps, to the end, rather than by `fs::read`: that asks for the file's size
/// first (a `statx` per file, a sixth of the time spent reading a tree of tens of
/// thousands of small files) and allocates a buffer per file, which the text's own copy
/// makes needless.
fn read_with<T>(p: &Path, made: impl FnOnce(&[u8]) -> T) -> Result<T, Diagnostic> {
    use std::cell::RefCell;
    use std::io::Read;
    // Larger than nearly every file latgen writes; a larger one grows it for the one read.
    const USUAL: usize = 64 * 1024;
    thread_local!(static BUF: RefCell<Vec<u8>> = RefCell::new(vec![0; USUAL]));
    let read = |buf: &mut Vec<u8>| -> std::io::Result<usize> {
        let mut file = fs::File::open(p)?;
        let mut n = 0;
        loop {
            if n == buf.len() {
                buf.resize(2 * buf.len(), 0);
            }
            match file.read(&mut buf[n..]) {
                Ok(0) => return Ok(n),
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    };
    BUF.with_borrow_mut(|buf| {
        let n = read(buf).map_err(|e| io_error(p, "read", &e));
        let made = n.map(|n| made(&buf[..n]));
        if buf.len() > USUAL {
            *buf = vec![0; USUAL];
        }
        made
    })
}

/// A file's bytes as the trees hold them (a byte that is not UTF-8 made U+FFFD).
fn text_of(bytes: &[u8]) -> Text {
    match std::str::from_utf8(bytes) {
        Ok(text) => Text::from(text),
        Err(_) => Text::from(String::from_utf8_lossy(bytes)),
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
