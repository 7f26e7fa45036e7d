//! Files added to a project outside the output folder: `init`'s new project and `import`'s
//! declarations, with the folders made for them and the files they rewrite beside them
//! (the lock, `.gitignore`); and the man pages `latgen man --out` writes. A run that fails part-way takes back all it wrote (the new
//! files and folders removed, each rewritten file given its bytes before), so that it can
//! simply be run again; a folder made for files that were never written is not left behind.
//!
//! As everywhere latgen writes, each folder is opened from the project folder without
//! following a link (`input/beneath.rs`) and each new file is a new entry (`O_EXCL`), so a
//! link a PR committed on the way leads no write outside the project.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;
use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

use super::io_error;
use super::transaction::{parent_of, write_atomic};
use crate::diag::Diagnostic;
use crate::input::beneath::Folder;

/// What a run added to the project so far, to take back when a later step fails.
pub(crate) struct Additions {
    /// The project folder, below which nothing is written through a link.
    root: PathBuf,
    /// The folders made, outermost first.
    folders: Vec<PathBuf>,
    /// The new files, in the order written.
    files: Vec<PathBuf>,
    /// The files rewritten, each with its bytes before (None: there was none).
    replaced: Vec<(PathBuf, Option<Vec<u8>>)>,
}

impl Additions {
    /// Nothing added yet to the project at `root`.
    pub fn new(root: &Path) -> Additions {
        Additions {
            root: root.to_path_buf(),
            folders: Vec::new(),
            files: Vec::new(),
            replaced: Vec::new(),
        }
    }

    /// The folder `dir`, opened, with every folder missing on the way made (the project
    /// folder too, as given on the command line, when it is missing).
    pub fn folder(&mut self, dir: &Path) -> Result<Folder, Diagnostic> {
        // Recorded before they are made, so that a folder made before a later step on the
        // way fails is taken back too; one that was already there never is.
        let missing: Vec<PathBuf> = dir
            .ancestors()
            .filter(|a| !a.as_os_str().is_empty() && a.symlink_metadata().is_err())
            .map(Path::to_path_buf)
            .collect();
        self.folders.extend(missing.into_iter().rev());
        if !self.root.as_os_str().is_empty() && self.root.symlink_metadata().is_err() {
            fs::create_dir_all(&self.root).map_err(|e| io_error(&self.root, "create", &e))?;
        }
        Folder::open(&self.root, dir, true)
    }

    /// Writes `text` to the new file `path`, flushed to disk; a file there (or one that
    /// appeared since the caller looked) is never overwritten.
    pub fn create(&mut self, path: &Path, text: &str) -> Result<(), Diagnostic> {
        let folder = self.folder(&parent_of(path))?;
        let name = path.file_name().unwrap_or_default();
        (folder.create_new(name, text.as_bytes())).map_err(|e| io_error(path, "write", &e))?;
        self.files.push(path.to_path_buf());
        Ok(())
    }

    /// Writes each text to its new file, in parallel and not synced one by one (10,000
    /// fsyncs would take most of a large import), then flushes them to disk at once. What
    /// was at a file's name is removed first, never followed.
    pub fn create_all(&mut self, files: &[(PathBuf, String)]) -> Result<(), Diagnostic> {
        use rayon::prelude::*;
        let mut folders: BTreeMap<PathBuf, Folder> = BTreeMap::new();
        for (path, _) in files {
            if let Entry::Vacant(v) = folders.entry(parent_of(path)) {
                let folder = self.folder(v.key())?;
                v.insert(folder);
            }
        }
        let written: Vec<Result<&PathBuf, Diagnostic>> = files
            .par_iter()
            .map(|(path, text)| {
                let folder = &folders[&parent_of(path)];
                let name = path.file_name().unwrap_or_default();
                (folder.clear(name))
                    .and_then(|_| folder.create_new_unsynced(name, text.as_bytes()))
                    .map(|()| path)
                    .map_err(|e| io_error(path, "write", &e))
            })
            .collect();
        let mut failed = None;
        for w in written {
            match w {
                Ok(path) => self.files.push(path.clone()),
                Err(d) => failed = failed.or(Some(d)),
            }
        }
        match failed {
            Some(d) => Err(d),
            None => flush(&self.root, &self.files),
        }
    }

    /// Writes `bytes` over the file `path` (made when missing), atomically, keeping its
    /// bytes before for [`Additions::undo`].
    pub fn replace(&mut self, path: &Path, bytes: &[u8]) -> Result<(), Diagnostic> {
        let before = match fs::read(path) {
            Ok(bytes) => Some(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(io_error(path, "read", &e)),
        };
        write_atomic(&self.root, path, bytes)?;
        self.replaced.push((path.to_path_buf(), before));
        Ok(())
    }

    /// Takes back all that was added: the new files removed, the rewritten ones given their
    /// bytes before, the folders made removed.
    pub fn undo(mut self) {
        for path in std::mem::take(&mut self.files).iter().rev() {
            let _ = self.in_folder(path, |f, name| f.clear(name).map(drop));
        }
        for (path, before) in std::mem::take(&mut self.replaced).into_iter().rev() {
            let _ = match before {
                Some(bytes) => write_atomic(&self.root, &path, &bytes).map_err(drop),
                None => self.in_folder(&path, |f, name| f.clear(name).map(drop)),
            };
        }
        self.finish();
    }

    /// Leaves what was added, but for the folders made that nothing went into.
    pub fn finish(self) {
        for dir in self.folders.iter().rev() {
            // Only an empty folder goes.
            let _ = fs::remove_dir(dir);
        }
    }

    /// Runs `f` on the folder of `path` (opened without following a link, not made) and
    /// the file's name in it.
    fn in_folder(
        &self,
        path: &Path,
        f: impl FnOnce(&Folder, &OsStr) -> std::io::Result<()>,
    ) -> Result<(), ()> {
        let folder = Folder::open(&self.root, &parent_of(path), false).map_err(drop)?;
        f(&folder, path.file_name().unwrap_or_default()).map_err(drop)
    }
}

/// Flushes the new files to disk: one `syncfs` of the project's file system (Linux), else
/// each file.
fn flush(root: &Path, files: &[PathBuf]) -> Result<(), Diagnostic> {
    #[cfg(target_os = "linux")]
    {
        let _ = files;
        let here = Path::new(".");
        super::transaction::flush(if root.as_os_str().is_empty() {
            here
        } else {
            root
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = root;
        for f in files {
            (fs::File::open(f).and_then(|file| file.sync_all()))
                .map_err(|e| io_error(f, "flush", &e))?;
        }
        Ok(())
    }
}
