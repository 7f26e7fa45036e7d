//! Writes stay inside the project, as reads do (`confine.rs`). A PR can commit a symbolic
//! link where latgen writes: `locks -> /outside`, `deploy -> /outside`, `generated -> /tmp`
//! before an environment's first render, or a pending file `.latgen.lock.latgen-tmp` linked
//! to a file elsewhere. Followed, each would make a render write outside the project.
//!
//! The rule: a folder latgen writes in is opened one name at a time from the project folder,
//! never through a link (`O_NOFOLLOW` on each step, so nothing can lead out: the same as
//! `openat2`'s `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`, on every kernel), and a file is
//! written only as a new entry of that folder (`O_CREAT | O_EXCL | O_NOFOLLOW`) after
//! whatever had its name is unlinked. A folder outside the project (`-o /elsewhere`,
//! `--lock /elsewhere/x.lock` on the command line) is where the user asked to write, and is
//! opened as given.

use std::ffi::OsStr;
use std::io::Write as _;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Span};

/// A folder opened for writing in it, without following a link below the project folder.
pub(crate) struct Folder {
    fd: OwnedFd,
    /// The folder's path as latgen names it, for messages.
    path: PathBuf,
}

/// What is at a name in a folder, the name itself (a link is a link, not what it points at).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Entry {
    File,
    Folder,
    Link,
    Other,
}

const DIR: OFlags = OFlags::DIRECTORY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC)
    .union(OFlags::RDONLY);

impl Folder {
    /// The folder `dir`, opened for writing: below the project folder `root`, one name at a
    /// time, never through a link (made where missing, when `create`). A link, or `.git`,
    /// on the way is refused with `invalid-output`, naming it.
    pub fn open(root: &Path, dir: &Path, create: bool) -> Result<Folder, Diagnostic> {
        let dot = |p: &Path| {
            if p.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                p.to_path_buf()
            }
        };
        let root = super::confine::lexical(&dot(root));
        let full = super::confine::lexical(&dot(dir));
        let Ok(rel) = full.strip_prefix(&root) else {
            return open_as_given(dir, create);
        };
        let mut fd = rustix::fs::open(&root, DIR.difference(OFlags::NOFOLLOW), Mode::empty())
            .map_err(|e| io_error(&root, "open", &e.into()))?;
        let mut at = root.clone();
        for c in rel.components() {
            let Component::Normal(name) = c else { continue };
            at.push(name);
            if name == ".git" {
                return Err(refused(dir, &at, "the project's Git folder"));
            }
            fd = step(&fd, name, create).map_err(|e| match e.raw_os_error() {
                Some(raw) if is_link_error(raw) => refused(dir, &at, "a symbolic link"),
                _ => io_error(&at, "open", &e),
            })?;
        }
        Ok(Folder {
            fd,
            path: dir.to_path_buf(),
        })
    }

    /// The folder's path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// What is at `name`, not following it; None when nothing is.
    pub fn entry(&self, name: &OsStr) -> Option<Entry> {
        let st = rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
        Some(match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => Entry::File,
            FileType::Directory => Entry::Folder,
            FileType::Symlink => Entry::Link,
            _ => Entry::Other,
        })
    }

    /// Removes whatever is at `name` without following it (a folder with all it holds,
    /// links inside it unlinked, never followed); what was there, if anything.
    pub fn clear(&self, name: &OsStr) -> std::io::Result<Option<Entry>> {
        let Some(entry) = self.entry(name) else {
            return Ok(None);
        };
        if entry == Entry::Folder {
            // The standard library removes a tree by folder handles and never follows a
            // link in it (Rust 1.58.1 and later).
            std::fs::remove_dir_all(self.path.join(name))?;
        } else {
            rustix::fs::unlinkat(&self.fd, name, AtFlags::empty())?;
        }
        Ok(Some(entry))
    }

    /// Writes `bytes` to a new file `name` (nothing may be there: see [`Folder::clear`]),
    /// flushed to disk.
    pub fn create_new(&self, name: &OsStr, bytes: &[u8]) -> std::io::Result<()> {
        self.create_new_file(name, bytes)?.sync_all()
    }

    /// [`Folder::create_new`] without the flush, for many files written at once.
    pub fn create_new_unsynced(&self, name: &OsStr, bytes: &[u8]) -> std::io::Result<()> {
        self.create_new_file(name, bytes).map(drop)
    }

    fn create_new_file(&self, name: &OsStr, bytes: &[u8]) -> std::io::Result<std::fs::File> {
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            flags | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o666),
        )?;
        let mut file = std::fs::File::from(fd);
        file.write_all(bytes)?;
        Ok(file)
    }

    /// Renames `from` to `to` in this folder (`to`, whatever it is, is replaced; neither
    /// name is followed).
    pub fn rename(&self, from: &OsStr, to: &OsStr) -> std::io::Result<()> {
        Ok(rustix::fs::renameat(&self.fd, from, &self.fd, to)?)
    }

    /// The folder `name` in this one, made (never there before: `mkdir` fails on any
    /// entry of that name) and opened.
    pub fn make(&self, name: &OsStr) -> std::io::Result<Folder> {
        rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(0o777))?;
        self.sub(name)
    }

    /// The folder `name` in this one, opened without following a link.
    pub fn sub(&self, name: &OsStr) -> std::io::Result<Folder> {
        Ok(Folder {
            fd: rustix::fs::openat(&self.fd, name, DIR, Mode::empty())?,
            path: self.path.join(name),
        })
    }

    /// Flushes the folder's entries (a rename in it) to disk; where that fails, the rename
    /// stands without it.
    pub fn sync(&self) {
        let _ = rustix::fs::fsync(&self.fd);
    }

    /// The identity of `name` in this folder (not followed), see [`Identity`].
    pub fn identity_of(&self, name: &OsStr) -> Option<Identity> {
        Identity::at(self.fd.as_fd(), name)
    }

    /// This folder's own identity.
    pub fn identity(&self) -> Option<Identity> {
        Identity::at(self.fd.as_fd(), OsStr::new(""))
    }
}

/// An entry's identity on disk: its device and inode, which a rename keeps, and, where the
/// file system records it, the nanosecond it was made (`statx` birth time). No commit can
/// set these: a checkout makes its files with identities of the machine's choosing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Identity(String);

impl Identity {
    fn at(dir: BorrowedFd<'_>, name: &OsStr) -> Option<Identity> {
        let flags = if name.is_empty() {
            AtFlags::EMPTY_PATH | AtFlags::SYMLINK_NOFOLLOW
        } else {
            AtFlags::SYMLINK_NOFOLLOW
        };
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::StatxFlags;
            let mask = StatxFlags::BASIC_STATS | StatxFlags::BTIME;
            if let Ok(st) = rustix::fs::statx(dir, name, flags, mask) {
                let born = if st.stx_mask & StatxFlags::BTIME.bits() != 0 {
                    format!(":{}.{:09}", st.stx_btime.tv_sec, st.stx_btime.tv_nsec)
                } else {
                    String::new()
                };
                return Some(Identity(format!(
                    "{}.{}:{}{born}",
                    st.stx_dev_major, st.stx_dev_minor, st.stx_ino
                )));
            }
        }
        let st = rustix::fs::statat(dir, name, flags).ok()?;
        Some(Identity(format!("{}:{}", st.st_dev, st.st_ino)))
    }

    /// The identity as the journal writes it: one word.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// An identity read back from a journal.
    pub fn parse(word: &str) -> Option<Identity> {
        (!word.is_empty() && !word.contains(char::is_whitespace)).then(|| Identity(word.into()))
    }
}

/// One step down: `name` in `fd`, not followed, made first when missing and `create`.
fn step(fd: &OwnedFd, name: &OsStr, create: bool) -> std::io::Result<OwnedFd> {
    match rustix::fs::openat(fd, name, DIR, Mode::empty()) {
        Err(rustix::io::Errno::NOENT) if create => {
            match rustix::fs::mkdirat(fd, name, Mode::from_raw_mode(0o777)) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(e.into()),
            }
            Ok(rustix::fs::openat(fd, name, DIR, Mode::empty())?)
        }
        Err(e) => Err(e.into()),
        Ok(fd) => Ok(fd),
    }
}

/// `ELOOP` (a link where `O_NOFOLLOW` forbids one) or `ENOTDIR` (a link to a file, or a
/// file, where a folder should be).
fn is_link_error(raw: i32) -> bool {
    raw == rustix::io::Errno::LOOP.raw_os_error() || raw == rustix::io::Errno::NOTDIR.raw_os_error()
}

/// A folder outside the project, named on the command line: opened as given.
fn open_as_given(dir: &Path, create: bool) -> Result<Folder, Diagnostic> {
    let shown = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    if create {
        std::fs::create_dir_all(shown).map_err(|e| io_error(shown, "create", &e))?;
    }
    let fd = rustix::fs::open(shown, DIR.difference(OFlags::NOFOLLOW), Mode::empty())
        .map_err(|e| io_error(shown, "open", &e.into()))?;
    Ok(Folder {
        fd,
        path: dir.to_path_buf(),
    })
}

fn refused(dir: &Path, at: &Path, what: &str) -> Diagnostic {
    Diagnostic::error(
        Code::InvalidOutput,
        format!(
            "latgen writes in {}, and {} on the way there is {what}: latgen does not write through it",
            dir.display(),
            at.display()
        ),
    )
    .at(Span::file(at))
    .help("latgen writes inside the project through real folders only: replace the link with a folder (or remove it), or name a folder outside the project on the command line")
}

pub(crate) fn io_error(path: &Path, what: &str, e: &std::io::Error) -> Diagnostic {
    Diagnostic::error(
        Code::IoError,
        format!("cannot {what} {}: {e}", path.display()),
    )
    .at(Span::file(path))
    .help("check that the folder exists and is writable")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A link on the way to a folder inside the project is refused, naming it; the folder
    /// outside it is left as it was.
    #[test]
    fn a_link_below_the_project_is_never_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("project");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("locks")).unwrap();
        let err = Folder::open(&root, &root.join("locks"), true)
            .err()
            .unwrap();
        assert_eq!(err.code, Code::InvalidOutput);
        assert!(err.message.contains("symbolic link"), "{}", err.message);
        let err = Folder::open(&root, &root.join("locks/deeper"), true)
            .err()
            .unwrap();
        assert_eq!(err.code, Code::InvalidOutput);
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }

    /// Inside the project, missing folders are made; a pending name's old entry (a link
    /// to a file outside) is unlinked and a new file written in its place.
    #[test]
    fn a_file_is_written_as_a_new_entry() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("project");
        std::fs::create_dir_all(&root).unwrap();
        let secret = tmp.path().join("secret");
        std::fs::write(&secret, "keep").unwrap();
        let dir = Folder::open(&root, &root.join("deploy/staging"), true).unwrap();
        let name = OsStr::new(".x.latgen-tmp");
        std::os::unix::fs::symlink(&secret, root.join("deploy/staging").join(name)).unwrap();
        assert!(dir.create_new(name, b"new").is_err(), "O_EXCL refuses it");
        assert_eq!(dir.clear(name).unwrap(), Some(Entry::Link));
        dir.create_new(name, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), "keep");
        assert_eq!(dir.entry(name), Some(Entry::File));
    }
}
