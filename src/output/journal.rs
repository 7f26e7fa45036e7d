//! The transaction's journal and the recovery that reads it (see `transaction.rs` for the
//! order of a run).
//!
//! A PR can commit anything where the transaction keeps its state: a staging folder, its
//! `old` or `tree` as a link to `.git`, a journal naming files anywhere, a pending file
//! linked out of the project. Recovery therefore acts only on a journal it can tell it
//! wrote: the journal names the staging folder it lies in by that folder's identity on
//! disk (device, inode and, where the file system records it, the nanosecond it was made),
//! which a checkout gives each folder anew and no commit can choose; and every entry it
//! finishes or undoes (the old tree, the new tree, each pending file) is matched by its
//! identity too. Anything else in a staging or pending place is reported, then removed:
//! unlinked, never renamed, never followed.

use std::ffi::{OsStr, OsString};
use std::io::Read as _;
use std::path::{Path, PathBuf};

use super::transaction::Place;
use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Span};
use crate::input::beneath::{Entry, Folder, Identity};

/// The journal's name in the staging folder.
pub(super) const JOURNAL: &str = "journal";
/// The first line of a journal: a journal of another form is not this tool's.
const MAGIC: &str = "latgen journal 2";
/// A journal names the lock and the deploy kit's files: far less than this.
const MAX_JOURNAL_BYTES: u64 = 1024 * 1024;

/// One file outside the output folder that a transaction changes.
pub(super) struct Outside {
    /// Where it is, absolute (a run from another folder finds it).
    pub path: PathBuf,
    /// The pending file's identity: rename it into place. None: remove the file.
    pub pending: Option<Identity>,
}

/// What a transaction changes and which entries are its own.
pub(super) struct Journal {
    /// The staging folder the journal lies in.
    pub staging: Identity,
    /// The new tree, which the exchange makes the output folder.
    pub tree: Identity,
    /// The output folder before the run (the old tree), if there was one.
    pub old: Option<Identity>,
    pub files: Vec<Outside>,
}

impl Journal {
    pub fn text(&self) -> String {
        let mut text = format!("{MAGIC}\nstaging\t{}\n", self.staging.as_str());
        text.push_str(&format!("tree\t{}\n", self.tree.as_str()));
        if let Some(old) = &self.old {
            text.push_str(&format!("old\t{}\n", old.as_str()));
        }
        for f in &self.files {
            match &f.pending {
                Some(id) => text.push_str(&format!("put\t{}\t", id.as_str())),
                None => text.push_str("remove\t-\t"),
            }
            text.push_str(&f.path.to_string_lossy());
            text.push('\n');
        }
        text
    }

    /// The journal in `staging`, when this tool wrote it there: None for a missing one, one
    /// of another form, or one that names another staging folder (committed, or copied).
    pub fn read(staging: &Folder) -> Option<Journal> {
        if staging.entry(OsStr::new(JOURNAL)) != Some(Entry::File) {
            return None;
        }
        let fd = rustix::fs::openat(
            staging.fd(),
            JOURNAL,
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .ok()?;
        let mut text = String::new();
        std::fs::File::from(fd)
            .take(MAX_JOURNAL_BYTES)
            .read_to_string(&mut text)
            .ok()?;
        let journal = Journal::parse(&text)?;
        (Some(&journal.staging) == staging.identity().as_ref()).then_some(journal)
    }

    fn parse(text: &str) -> Option<Journal> {
        let mut lines = text.lines();
        if lines.next()? != MAGIC {
            return None;
        }
        let mut field = |key: &str| {
            let (k, v) = lines.next()?.split_once('\t')?;
            (k == key).then(|| Identity::parse(v)).flatten()
        };
        let (staging, tree) = (field("staging")?, field("tree")?);
        let mut journal = Journal {
            staging,
            tree,
            old: None,
            files: Vec::new(),
        };
        for line in lines {
            let mut parts = line.splitn(3, '\t');
            let (op, id, path) = (parts.next()?, parts.next()?, parts.next());
            match (op, path) {
                ("old", None) => journal.old = Some(Identity::parse(id)?),
                ("put" | "remove", Some(path)) if Path::new(path).is_absolute() => {
                    journal.files.push(Outside {
                        path: PathBuf::from(path),
                        pending: if op == "put" {
                            Some(Identity::parse(id)?)
                        } else {
                            None
                        },
                    });
                }
                _ => return None,
            }
        }
        Some(journal)
    }

    /// Whether the output folder is this journal's new tree: the exchange happened.
    fn swapped(&self, place: &Place) -> bool {
        place.parent.identity_of(&place.out_name).as_ref() == Some(&self.tree)
    }
}

/// The pending name of `path`'s new text: `.<name>.latgen-tmp` beside it.
pub(super) fn pending_name(path: &Path) -> OsString {
    tagged_name(path, "")
}

/// `.<name><tag>.latgen-tmp`: the pattern `init` has Git ignore.
pub(super) fn tagged_name(path: &Path, tag: &str) -> OsString {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    OsString::from(format!(".{name}{tag}.latgen-tmp"))
}

/// Clears what a killed run left beside the output folder at `place`: finishes or undoes
/// its transaction when its journal is this tool's, and removes the staging folder.
pub(super) fn recover(root: &Path, place: &Place) -> Result<(), Diagnostic> {
    let name = place.staging_name.as_os_str();
    let staging_path = place.parent.path().join(name);
    match place.parent.entry(name) {
        None => return Ok(()),
        Some(Entry::Folder) => {}
        Some(_) => {
            report_removed(&staging_path, "is not a folder (a link, or a file)");
            return (place.parent.clear(name).map(drop))
                .map_err(|e| super::io_error(&staging_path, "remove", &e));
        }
    }
    let staging =
        (place.parent.sub(name)).map_err(|e| super::io_error(&staging_path, "open", &e))?;
    match Journal::read(&staging) {
        Some(journal) => finish(root, place, &staging, &journal)?,
        None => report_foreign(&staging),
    }
    super::transaction::remove_dir(&staging_path)
}

/// Finishes (the exchange happened) or undoes (it did not) a journal's transaction.
fn finish(
    root: &Path,
    place: &Place,
    staging: &Folder,
    journal: &Journal,
) -> Result<(), Diagnostic> {
    // Between the two renames of a swap without an atomic exchange: the old tree is put
    // back, when it is the journal's and the output folder is missing.
    let old = OsStr::new("old");
    if journal.old.is_some()
        && staging.identity_of(old) == journal.old
        && staging.entry(old) == Some(Entry::Folder)
        && place.parent.entry(&place.out_name).is_none()
    {
        rustix::fs::renameat(staging.fd(), old, place.parent.fd(), &place.out_name)
            .map_err(|e| super::io_error(&place.out_dir, "restore", &e.into()))?;
    }
    let forward = journal.swapped(place);
    for f in &journal.files {
        let Some(parent) = f.path.parent() else {
            continue;
        };
        let Ok(folder) = Folder::open(root, parent, false) else {
            continue; // the folder is gone or is a link now: nothing of the run's is there
        };
        let name = f.path.file_name().unwrap_or_default();
        let pending = pending_name(&f.path);
        let ours = f.pending.is_some() && folder.identity_of(&pending) == f.pending;
        let done = match (forward, &f.pending) {
            (true, Some(_)) if ours => folder.rename(&pending, name),
            (true, None) => folder.clear(name).map(drop),
            (false, Some(_)) if ours => folder.clear(&pending).map(drop),
            _ => Ok(()),
        };
        done.map_err(|e| super::io_error(&f.path, "finish writing", &e))?;
        folder.sync();
    }
    Ok(())
}

/// A staging folder without this tool's journal: a run killed while it built the new tree
/// leaves `.gitignore` and `tree/` (nothing to finish); anything else in it was put there
/// by someone else. Either way nothing in it is acted on; what is not latgen's is reported.
fn report_foreign(staging: &Folder) {
    let Ok(entries) = std::fs::read_dir(staging.path()) else {
        return;
    };
    let mut names: Vec<OsString> = entries.flatten().map(|e| e.file_name()).collect();
    names.sort();
    for name in names {
        let entry = staging.entry(&name);
        let ours = (name == ".gitignore" && entry == Some(Entry::File))
            || (name == "tree" && entry == Some(Entry::Folder));
        if !ours {
            report_removed(
                &staging.path().join(&name),
                "is no part of a transaction latgen can tell it began",
            );
        }
    }
}

/// Tells the user that a planted (or foreign) entry in a transaction's place is removed.
pub(super) fn report_removed(path: &Path, why: &str) {
    let d = planted(path, why);
    crate::diag::progress::suspend(|| {
        eprintln!(
            "warning[{}]: {}; latgen removes it unread\n  --> {}\n",
            d.code,
            d.message,
            path.display()
        );
    });
}

/// The finding for an entry in a transaction's place that latgen did not leave.
pub(crate) fn planted(path: &Path, why: &str) -> Diagnostic {
    Diagnostic::error(
        Code::CommittedTransactionFile,
        format!("{} {why}", path.display()),
    )
    .at(Span::file(path))
    .help("remove it from the repository (`git rm -r --cached`, then delete it): latgen's staging folders, journals and pending files are never committed, and a render removes what it finds there without acting on it")
}

/// A finding when an interrupted run left its staging folder beside the output folder at
/// `place`: a warning for what a killed run leaves, an error for what it never leaves (a
/// link, an entry no journal of its accounts for).
pub(super) fn staging_finding(place: &Place) -> Option<Diagnostic> {
    let name = place.staging_name.as_os_str();
    let left = place.parent.path().join(name);
    let shown = left.strip_prefix(".").unwrap_or(&left).to_path_buf();
    if place.parent.entry(name)? != Entry::Folder {
        return Some(planted(&shown, "is not a folder (a link, or a file)"));
    }
    let staging = place.parent.sub(name).ok()?;
    let journal = Journal::read(&staging);
    let half = journal.as_ref().filter(|j| j.swapped(place));
    let (message, help) = match half {
        Some(j) => (
            format!(
                "a render of {} was interrupted after it replaced the folder and before it wrote {}",
                place.out_dir.display(),
                (j.files.iter())
                    .map(|f| f.path.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "run `latgen render`: it puts the files the render had written aside in place; do not commit before",
        ),
        None if journal.is_none() && has_foreign(&staging) => {
            return Some(planted(
                &shown,
                "holds entries no run of latgen left there (a journal of another folder, a link)",
            ));
        }
        None => (
            format!(
                "a render of {} was interrupted and left {} beside it",
                place.out_dir.display(),
                shown.display()
            ),
            "run `latgen render` (it removes the folder) or delete the folder; do not commit it",
        ),
    };
    Some(
        Diagnostic::warning(Code::InterruptedRender, message)
            .at(Span::file(&shown))
            .help(help),
    )
}

/// Whether a staging folder without this tool's journal holds more than a killed build's
/// `.gitignore` and `tree/`.
fn has_foreign(staging: &Folder) -> bool {
    let Ok(entries) = std::fs::read_dir(staging.path()) else {
        return false;
    };
    entries.flatten().any(|e| {
        let name = e.file_name();
        let entry = staging.entry(&name);
        !((name == ".gitignore" && entry == Some(Entry::File))
            || (name == "tree" && entry == Some(Entry::Folder)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A journal reads back as written; one of another form is none of this tool's.
    #[test]
    fn a_journal_reads_back_and_a_foreign_one_does_not() {
        let id = |s: &str| Identity::parse(s).unwrap();
        let journal = Journal {
            staging: id("8.1:12:1700000000.000000001"),
            tree: id("8.1:13:1700000000.000000002"),
            old: Some(id("8.1:11")),
            files: vec![
                Outside {
                    path: "/p/latgen.lock".into(),
                    pending: Some(id("8.1:14")),
                },
                Outside {
                    path: "/p/deploy/old file.yaml".into(),
                    pending: None,
                },
            ],
        };
        let back = Journal::parse(&journal.text()).unwrap();
        assert_eq!(back.text(), journal.text());
        // The form of the journals before identities were written: not this tool's now.
        assert!(Journal::parse("1:2\nput\t/etc/notes\n").is_none());
        assert!(Journal::parse(&journal.text().replace("/p/", "p/")).is_none());
    }
}
