//! Inputs stay inside the project. `latgen check` runs as a PR gate, on changes from people
//! who cannot see the CI runner's secrets: a declaration, `latgen.yaml`, `latgen.lock` or a
//! template committed as a symbolic link to `/proc/self/environ`, `~/.aws/credentials` or
//! `.git/config` must not be read, or a diagnostic would quote its first line (and a PR
//! annotation or a SARIF upload would publish it).
//!
//! The rule: every file latgen reads must resolve, links followed, to a regular file inside
//! the project folder (the folder that holds the apps folder, links resolved) and outside
//! its Git folder. Anything else is refused with `input-outside-project`, which names the
//! link and where it points, never what is there. A path given on the command line is held
//! to the same rule: `--config /etc/x` is refused like a link to it. Links that stay inside
//! the project keep working.
//!
//! The output folder is the one exception: `render -o /elsewhere` writes where it is told.
//! But an output folder given inside the project that is a link out of it is refused, as
//! `check` would read it and `render` would carry its files into the new tree.

use std::fs;
use std::path::{Component, Path, PathBuf};

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Span};

impl crate::diag::QuoteGuard for Project {
    fn may_quote(&self, path: &Path) -> bool {
        self.contains(path)
    }
}

/// The project folder inputs must stay in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    /// The folder, links resolved.
    root: PathBuf,
    /// The folder as given, made absolute without resolving links.
    given: PathBuf,
}

impl Project {
    /// The project rooted at `root` (`""` is the current folder). A folder that does not
    /// exist holds nothing that could be read.
    pub fn new(root: &Path) -> Project {
        let root = if root.as_os_str().is_empty() {
            Path::new(".")
        } else {
            root
        };
        let given = lexical(root);
        let resolved = root.canonicalize().unwrap_or_else(|_| given.clone());
        Project {
            root: resolved,
            given,
        }
    }

    /// The project folder, links resolved.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether `path` resolves, links followed, to a place inside the project and outside
    /// its Git folder. The printer asks this before it quotes a file.
    pub fn contains(&self, path: &Path) -> bool {
        path.canonicalize().is_ok_and(|p| holds(&self.root, &p))
    }

    /// Where the input at `path` resolves to, when it may be read: `None` when nothing is
    /// there, an `input-outside-project` error when it leads out of the project.
    pub fn resolve(&self, path: &Path) -> Result<Option<PathBuf>, Diagnostic> {
        match path.symlink_metadata() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(cannot_read(path, &e.to_string())),
            Ok(_) => {}
        }
        let resolved = path
            .canonicalize()
            .map_err(|e| cannot_read(path, &e.to_string()))?;
        if holds(&self.root, &resolved) {
            Ok(Some(resolved))
        } else {
            Err(self.refusal(path, &resolved))
        }
    }

    /// The bytes of the input at `path`, `None` when there is no file. Only a regular file
    /// inside the project is read (a FIFO would block, a device never end).
    pub fn read(&self, path: &Path) -> Result<Option<Vec<u8>>, Diagnostic> {
        self.read_at_most(path, u64::MAX)
    }

    /// [`Project::read`] of a file that may hold at most `max` bytes: a larger one is refused
    /// (`file-too-large`) before it is read, so that a huge settings file or lock in a PR
    /// cannot make latgen read, parse and print megabytes.
    pub fn read_at_most(&self, path: &Path, max: u64) -> Result<Option<Vec<u8>>, Diagnostic> {
        let Some(resolved) = self.resolve(path)? else {
            return Ok(None);
        };
        let meta = fs::metadata(&resolved).map_err(|e| cannot_read(path, &e.to_string()))?;
        if !meta.is_file() {
            return Err(cannot_read(path, "not a regular file"));
        }
        if meta.len() > max {
            return Err(Diagnostic::error(
                Code::FileTooLarge,
                format!(
                    "file is {} KiB; latgen reads at most {} KiB here",
                    meta.len().div_ceil(1024),
                    max / 1024
                ),
            )
            .at(Span::file(path))
            .help("is this the right file? latgen writes its lock and settings far smaller"));
        }
        fs::read(&resolved)
            .map(Some)
            .map_err(|e| cannot_read(path, &e.to_string()))
    }

    /// Whether `path`, by its name (no link followed), lies in the project folder: a path
    /// outside it was named on the command line.
    pub fn holds_lexically(&self, path: &Path) -> bool {
        holds(&self.given, &lexical(path))
    }

    /// An output folder given inside the project must not lead out of it through a link.
    /// One given outside it is where the user asked the output to go.
    pub fn output_folder(&self, out: &Path) -> Option<Diagnostic> {
        if !holds(&self.given, &lexical(out)) {
            return None;
        }
        self.resolve(out).err()
    }

    /// Why `path`, which resolves to `resolved`, is not read: where the link points, not
    /// what is there.
    fn refusal(&self, path: &Path, resolved: &Path) -> Diagnostic {
        let place = if resolved.starts_with(&self.root) {
            "into the project's Git folder"
        } else {
            "outside the project"
        };
        let shown = path.display();
        let what = match fs::read_link(path) {
            Ok(target) => {
                let parent = path.parent().unwrap_or(Path::new("."));
                // Where the link says it goes is enough when that is already out of the
                // project; a link to a link inside it also says where the chain ends.
                if holds(&self.given, &lexical(&parent.join(&target))) {
                    format!(
                        "`{shown}` is a symbolic link to `{}`, which resolves to `{}`, {place}",
                        target.display(),
                        resolved.display()
                    )
                } else {
                    format!(
                        "`{shown}` is a symbolic link to `{}`, {place}",
                        target.display()
                    )
                }
            }
            Err(_) => format!("`{shown}` resolves to `{}`, {place}", resolved.display()),
        };
        Diagnostic::error(Code::InputOutsideProject, format!("{what}: latgen does not read it"))
            .at(Span::file(path))
            .help("inputs stay inside the project (the folder that holds apps/) and out of .git: commit the file itself, or link to a file inside the project")
    }
}

fn cannot_read(path: &Path, why: &str) -> Diagnostic {
    Diagnostic::error(
        Code::IoError,
        format!("cannot read {}: {why}", path.display()),
    )
    .at(Span::file(path))
}

/// Whether `path` lies under `root` and not in a Git folder below it.
fn holds(root: &Path, path: &Path) -> bool {
    path.strip_prefix(root)
        .is_ok_and(|rel| !rel.components().any(|c| c.as_os_str() == ".git"))
}

/// `path` made absolute against the current folder, `.` and `..` worked out by name (no
/// link is followed).
pub(crate) fn lexical(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for c in absolute.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn only_files_inside_the_project_are_quoted() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("project");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("a.yaml"), "inside: 1\n").unwrap();
        std::fs::write(tmp.path().join("b.yaml"), "secret: 1\n").unwrap();
        let mut sources = crate::diag::Sources::within(Project::new(&root));
        sources.insert(root.join("a.yaml"), "inside: 1\n".into());
        sources.insert(tmp.path().join("b.yaml"), "secret: 1\n".into());
        assert_eq!(sources.line(&root.join("a.yaml"), 1), Some("inside: 1"));
        assert_eq!(sources.line(&tmp.path().join("b.yaml"), 1), None);
    }

    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, Project) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("project");
        fs::create_dir_all(root.join("apps")).unwrap();
        fs::create_dir_all(root.join(".git")).unwrap();
        fs::write(root.join(".git/config"), "secret").unwrap();
        fs::write(root.join("inside.yaml"), "ok").unwrap();
        fs::write(tmp.path().join("outside.yaml"), "secret").unwrap();
        let project = Project::new(&root);
        (tmp, project)
    }

    #[test]
    fn links_inside_the_project_are_read() {
        let (tmp, project) = setup();
        let link = tmp.path().join("project/apps/a.yaml");
        symlink("../inside.yaml", &link).unwrap();
        assert_eq!(project.read(&link).unwrap(), Some(b"ok".to_vec()));
        assert!(project.contains(&link));
    }

    #[test]
    fn links_out_of_the_project_or_into_git_are_refused() {
        let (tmp, project) = setup();
        for (name, target) in [
            ("out.yaml", "../../outside.yaml"),
            ("git.yaml", "../.git/config"),
            ("env.yaml", "/proc/self/environ"),
        ] {
            let link = tmp.path().join("project/apps").join(name);
            symlink(target, &link).unwrap();
            let d = project.read(&link).unwrap_err();
            assert_eq!(d.code, Code::InputOutsideProject, "{name}");
            assert!(d.message.contains(target), "{}", d.message);
            assert!(!project.contains(&link));
        }
    }

    #[test]
    fn a_chain_of_links_names_where_it_ends() {
        let (tmp, project) = setup();
        let apps = tmp.path().join("project/apps");
        symlink("../../outside.yaml", apps.join("hop")).unwrap();
        symlink("hop", apps.join("a.yaml")).unwrap();
        let d = project.read(&apps.join("a.yaml")).unwrap_err();
        assert!(d.message.contains("which resolves to"), "{}", d.message);
        assert!(
            d.message
                .ends_with("outside.yaml`, outside the project: latgen does not read it")
        );
    }

    #[test]
    fn missing_files_and_special_files() {
        let (tmp, project) = setup();
        let root = tmp.path().join("project");
        assert_eq!(project.read(&root.join("none.yaml")).unwrap(), None);
        assert_eq!(
            project.read(&root.join("apps")).unwrap_err().code,
            Code::IoError
        );
    }

    #[test]
    fn output_folders_given_outside_are_allowed_links_out_are_not() {
        let (tmp, project) = setup();
        let root = tmp.path().join("project");
        assert!(
            project
                .output_folder(&tmp.path().join("elsewhere"))
                .is_none()
        );
        assert!(project.output_folder(&root.join("generated")).is_none());
        symlink(tmp.path(), root.join("generated")).unwrap();
        assert!(project.output_folder(&root.join("generated")).is_some());
    }
}
