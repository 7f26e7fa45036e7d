//! Loading a project: finding its files (`ProjectPaths`), reading `apps/`, `latgen.yaml` and the lock into their declared types, in sorted order, confined to the project.

use super::{beneath, environments};
use std::path::{Path, PathBuf};

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Sources, Span};
use crate::input::app::{APP_FIELDS, AppDecl};
use crate::input::config::Config;
use crate::input::confine::Project;
use crate::input::lock::Lock;

/// Declarations larger than this are refused: an app declaration is a dozen lines.
pub(crate) const MAX_DECLARATION_BYTES: u64 = 1024 * 1024;
/// `latgen.yaml` larger than this is refused: the example's is 5 KiB.
pub(crate) const MAX_SETTINGS_BYTES: u64 = 1024 * 1024;
/// `latgen.lock` larger than this is refused: 100,000 apps lock in about 3 MiB.
pub(crate) const MAX_LOCK_BYTES: u64 = 16 * 1024 * 1024;

/// Where a project's inputs are.
#[derive(Debug, Clone)]
pub struct ProjectPaths {
    /// The project folder (the apps folder's parent): every input must resolve inside it.
    pub root: PathBuf,
    pub apps_dir: PathBuf,
    /// `latgen.yaml`; a missing file means all defaults.
    pub config: PathBuf,
    /// Whether `config` was named on the command line (`--config`): then it must exist, or a
    /// typo would check the project against the defaults without a word.
    pub config_given: bool,
    /// `latgen.lock`; a missing file means no app has a group yet.
    pub lock: PathBuf,
    /// The output folder as last rendered: the planner reads a group's route there to tell
    /// which of its apps grew when they no longer fit it.
    pub output: PathBuf,
    /// The environment (`--env`), whose overlay is `environments/<name>.yaml`. None for a
    /// project without environments.
    pub env: Option<String>,
    /// Read the project's `latgen.lock` as this environment's lock, recording where its live
    /// output was (`render --env ENV --adopt-lock ENV`): the first render of an
    /// environment that takes over a live project's placement.
    pub adopt_lock: bool,
}

impl ProjectPaths {
    /// The layout of a project rooted at `root`: `apps/`, `latgen.yaml`, `latgen.lock`.
    pub fn at_root(root: &Path) -> Self {
        ProjectPaths {
            root: root.to_path_buf(),
            apps_dir: root.join("apps"),
            config: root.join("latgen.yaml"),
            config_given: false,
            lock: root.join("latgen.lock"),
            output: root.join(DEFAULT_OUTPUT),
            env: None,
            adopt_lock: false,
        }
    }

    /// These paths in environment `name`: its lock and output, unless given (`--lock`,
    /// `-o`).
    pub fn in_env(&self, name: &str, lock_given: bool, output_given: bool) -> Self {
        let mut paths = self.clone();
        if !lock_given {
            paths.lock = environments::lock_path(&self.root, name);
        }
        paths.output = if output_given {
            self.output.join(name)
        } else {
            self.root.join(DEFAULT_OUTPUT).join(name)
        };
        paths.env = Some(name.to_string());
        paths
    }

    /// Makes the folders an environment's first write needs: the output's parent
    /// (`generated/`) and the lock's (`locks/`). Nothing to do without environments.
    pub fn make_env_folders(&self) -> Result<(), Diagnostic> {
        if self.env.is_none() {
            return Ok(());
        }
        for dir in [self.output.parent(), self.lock.parent()]
            .into_iter()
            .flatten()
        {
            if dir.as_os_str().is_empty() {
                continue;
            }
            // Made one name at a time from the project folder, never through a link.
            beneath::Folder::open(&self.root, dir, true)?;
        }
        Ok(())
    }

    /// ` --env NAME` for the commands a message suggests, or nothing without environments.
    pub fn env_flag(&self) -> String {
        crate::input::environments::env_flag(self.env_name())
    }

    /// The environment's name, if any.
    pub fn env_name(&self) -> Option<&str> {
        self.env.as_deref()
    }
}

/// The output folder's name in the project folder.
pub(crate) const DEFAULT_OUTPUT: &str = "generated";

#[derive(Debug)]
pub(crate) struct LoadedDecl {
    pub file: PathBuf,
    /// The file name without extension: the app's name unless `name:` says otherwise.
    pub stem: String,
    pub decl: AppDecl,
}

#[derive(Debug, Default)]
pub struct Loaded {
    pub config: Config,
    pub decls: Vec<LoadedDecl>,
    /// The previews under `previews/`.
    pub previews: Vec<crate::input::previews::LoadedPreview>,
    pub lock: Lock,
    pub sources: Sources,
    /// The project's environments (`environments/*.yaml`), empty without them.
    pub environments: Vec<String>,
}

/// Reads everything; problems are collected in `diags` and the broken pieces left out.
pub fn load(paths: &ProjectPaths, diags: &mut Diagnostics) -> Loaded {
    let project = Project::new(&paths.root);
    // The settings and the lock (thousands of lines in a large project) are parsed while
    // the declarations are found and parsed.
    let ((config, lock, mut texts, found), (decls, decl_texts, decl_found)) = rayon::join(
        || read_settings(paths, &project),
        || read_declarations(paths, &project),
    );
    diags.extend(found);
    diags.extend(decl_found);
    let (previews, preview_texts, preview_found) =
        crate::input::previews::read_previews(&paths.root, &project);
    diags.extend(preview_found);
    texts.extend(preview_texts);
    // The texts go into the sources in one go (a tree built from them, then merged), not
    // inserted one by one.
    texts.extend(decl_texts);
    let mut sources = Sources::within(project);
    sources.extend(texts);
    Loaded {
        config: config.unwrap_or_default(),
        decls,
        previews,
        lock: lock.unwrap_or_default(),
        sources,
        // A bad name is the command's finding, where the environments are chosen.
        environments: environments::names(&paths.root).unwrap_or_default(),
    }
}

/// The project's `latgen.lock` read as the lock of the environment that adopts it, which
/// must not have one of its own: its placement is then the live project's, and the lock
/// records where the live output was.
fn adopted_lock(
    paths: &ProjectPaths,
    read: &mut impl FnMut(&Path, u64, &mut Diagnostics) -> Option<String>,
    diags: &mut Diagnostics,
) -> Option<Lock> {
    let env = paths.env.as_deref().unwrap_or_default();
    let live = paths.root.join("latgen.lock");
    let problem = if paths.lock.symlink_metadata().is_ok() {
        Some((
            format!(
                "environment {env} already has its own lock, {}: adopting latgen.lock would replace its placement",
                paths.lock.display()
            ),
            "leave out --adopt-lock: the environment keeps its placement",
        ))
    } else if live.symlink_metadata().is_err() {
        Some((
            format!("there is no {} to adopt", live.display()),
            "--adopt-lock takes over the placement of a project rendered before it had environments; without one, leave it out",
        ))
    } else {
        None
    };
    if let Some((what, help)) = problem {
        diags.push(Diagnostic::error(Code::InvalidLock, what).help(help));
        return None;
    }
    let text = read(&live, MAX_LOCK_BYTES, diags)?;
    let mut lock = crate::input::lock::parse(&live, &text, diags)?;
    lock.adopted_from = Some(DEFAULT_OUTPUT.to_string());
    Some(lock)
}

/// `latgen.yaml` and `latgen.lock`, each when it is there and parses, with their texts.
#[allow(clippy::type_complexity)]
fn read_settings(
    paths: &ProjectPaths,
    project: &Project,
) -> (
    Option<Config>,
    Option<Lock>,
    Vec<(PathBuf, String)>,
    Diagnostics,
) {
    let mut diags = Diagnostics::new();
    let mut texts = Vec::new();
    let mut read = |path: &Path, max: u64, diags: &mut Diagnostics| {
        let text = read_optional(path, max, project, diags)?;
        texts.push((path.to_path_buf(), text.clone()));
        Some(text)
    };
    let config = read_config(paths, &mut read, &mut diags);
    let lock = if paths.adopt_lock {
        adopted_lock(paths, &mut read, &mut diags)
    } else {
        read(&paths.lock, MAX_LOCK_BYTES, &mut diags)
            .and_then(|text| crate::input::lock::parse(&paths.lock, &text, &mut diags))
    };
    (config, lock, texts, diags)
}

/// The settings alone (`latgen.yaml`, with the environment's overlay), for a command that
/// reads the output rather than the apps: the defaults without latgen.yaml, None when
/// they cannot be read (the problems in `diags`).
pub fn settings(paths: &ProjectPaths, diags: &mut Diagnostics) -> Option<Config> {
    let project = Project::new(&paths.root);
    let mut read =
        |path: &Path, max: u64, diags: &mut Diagnostics| read_optional(path, max, &project, diags);
    let mut found = Diagnostics::new();
    let config = read_config(paths, &mut read, &mut found);
    let failed = found.has_errors();
    diags.extend(found);
    (!failed).then(|| config.unwrap_or_default())
}

/// `latgen.yaml` and the environment's overlay, read with `read`, merged.
fn read_config(
    paths: &ProjectPaths,
    read: &mut impl FnMut(&Path, u64, &mut Diagnostics) -> Option<String>,
    diags: &mut Diagnostics,
) -> Option<Config> {
    if paths.config_given && paths.config.symlink_metadata().is_err() {
        diags.push(
            Diagnostic::error(
                Code::IoError,
                format!("the settings file {} does not exist", paths.config.display()),
            )
            .at(Span::file(&paths.config))
            .help("give --config the project's settings file, or leave it out for latgen.yaml beside the apps folder"),
        );
    }
    let base = read(&paths.config, MAX_SETTINGS_BYTES, diags);
    let config = base
        .as_deref()
        .and_then(|text| crate::input::config::parse(&paths.config, text, diags));
    match &paths.env {
        Some(name) => {
            let overlay = environments::overlay_path(&paths.root, name);
            read_overlay(read, (base.as_deref(), config), (name, &overlay), diags)
        }
        None => config,
    }
}

/// The settings of one environment: latgen.yaml's (`base`, with its text) with the
/// overlay's merged in. Nothing when latgen.yaml has a problem of its own.
fn read_overlay(
    read: &mut impl FnMut(&Path, u64, &mut Diagnostics) -> Option<String>,
    base: (Option<&str>, Option<Config>),
    (name, overlay): (&str, &Path),
    diags: &mut Diagnostics,
) -> Option<Config> {
    let (base_text, base_config) = base;
    if base_text.is_some() && base_config.is_none() {
        return None;
    }
    let Some(text) = read(overlay, MAX_SETTINGS_BYTES, diags) else {
        diags.push(
            Diagnostic::error(
                Code::IoError,
                format!(
                    "the environment's settings {} do not exist",
                    overlay.display()
                ),
            )
            .at(Span::file(overlay))
            .help("give --env one of the environments in environments/, or all"),
        );
        return None;
    };
    environments::merged(name, base_text, overlay, &text, diags)
}

/// The declarations under the apps folder, in file order, with their texts.
fn read_declarations(
    paths: &ProjectPaths,
    project: &Project,
) -> (Vec<LoadedDecl>, Vec<(PathBuf, String)>, Diagnostics) {
    // Reading and parsing are independent per file: do them in parallel, then merge in
    // the sorted file order so that the result never depends on scheduling.
    use rayon::prelude::*;
    let mut diags = Diagnostics::new();
    let files = find_declarations(&paths.apps_dir, project, &mut diags);
    crate::diag::progress::stage("reading declarations", Some(files.len()));
    let mut parsed: Vec<(PathBuf, Option<String>, Option<AppDecl>, Diagnostics)> = files
        .into_par_iter()
        .with_max_len(crate::diag::PIECE)
        .map(|file| {
            let mut d = Diagnostics::new();
            let text = read_declaration(&file, &mut d);
            let decl = text
                .as_deref()
                .and_then(|t| parse_declaration(&file, t, &mut d));
            crate::diag::progress::advance(1);
            (file, text, decl, d)
        })
        .collect();
    let mut texts = Vec::with_capacity(parsed.len());
    for (file, text, _, d) in &mut parsed {
        diags.extend(std::mem::take(d));
        if let Some(text) = text.take() {
            texts.push((file.clone(), text));
        }
    }
    // Collected in place: a parsed declaration is about 1.4 KB (two source locations on
    // every field), and a second list of them was a copy of 14 MB into fresh memory at
    // 10,000 apps.
    let decls = (parsed.into_iter())
        .filter_map(|(file, _, decl, _)| {
            let stem = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            Some(LoadedDecl {
                file,
                stem,
                decl: decl?,
            })
        })
        .collect();
    (decls, texts, diags)
}

/// A project from texts instead of files (for tools and fuzzing): the settings, the lock,
/// and the declarations by path. Problems go to `diags` exactly as with [`load`].
pub fn from_texts(
    config: Option<(&Path, &str)>,
    lock: Option<(&Path, &str)>,
    decls: &[(PathBuf, String)],
    diags: &mut Diagnostics,
) -> Loaded {
    let mut loaded = Loaded::default();
    if let Some((path, text)) = config {
        loaded.sources.insert(path.to_path_buf(), text.to_string());
        if let Some(c) = crate::input::config::parse(path, text, diags) {
            loaded.config = c;
        }
    }
    if let Some((path, text)) = lock {
        loaded.sources.insert(path.to_path_buf(), text.to_string());
        if let Some(l) = crate::input::lock::parse(path, text, diags) {
            loaded.lock = l;
        }
    }
    let mut sorted: Vec<&(PathBuf, String)> = decls.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    for (file, text) in sorted {
        loaded.sources.insert(file.clone(), text.clone());
        if let Some(decl) = parse_declaration(file, text, diags) {
            let stem = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            loaded.decls.push(LoadedDecl {
                file: file.clone(),
                stem,
                decl,
            });
        }
    }
    loaded
}

/// The `*.yaml`/`*.yml` files under `dir`, sorted by path so that the result never depends
/// on the file system's order. Hidden files and folders are skipped. Links are followed
/// while they stay inside `project`: a link to a declaration or a folder outside it is
/// refused, and nothing behind it is listed or read.
pub(crate) fn find_declarations(
    dir: &Path,
    project: &Project,
    diags: &mut Diagnostics,
) -> Vec<PathBuf> {
    if !dir.is_dir() {
        diags.push(
            Diagnostic::error(Code::IoError, format!("{} is not a folder", dir.display())).help(
                "give the folder that holds the app declarations, e.g. `latgen render apps/`",
            ),
        );
        return Vec::new();
    }
    let mut files = Vec::new();
    let mut refused = Vec::new();
    let walker = walkdir::WalkDir::new(dir)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let visible = e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.');
            visible && admit_link(e, project, &mut refused)
        });
    for entry in walker {
        match entry {
            Ok(e) => {
                if e.file_type().is_file() && is_yaml(e.path()) {
                    files.push(e.path().to_path_buf());
                }
            }
            Err(err) => {
                let place = err
                    .path()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| dir.display().to_string());
                let (code, what) = if err.loop_ancestor().is_some() {
                    (
                        Code::SymlinkLoop,
                        "a symbolic link loops back to a folder above it".to_string(),
                    )
                } else {
                    (Code::IoError, err.to_string())
                };
                diags.push(
                    Diagnostic::error(code, format!("cannot read {place}: {what}"))
                        .at(Span::file(err.path().unwrap_or(dir)))
                        .help("remove the link or make the folder readable"),
                );
            }
        }
    }
    for d in refused {
        diags.push(d);
    }
    files.sort();
    files
}

fn is_yaml(p: &Path) -> bool {
    matches!(
        p.extension().and_then(|x| x.to_str()),
        Some("yaml") | Some("yml")
    )
}

/// Whether the walk may go on through the entry: anything but a link to a folder or a
/// declaration that leads out of the project (refused into `refused`).
fn admit_link(e: &walkdir::DirEntry, project: &Project, refused: &mut Vec<Diagnostic>) -> bool {
    if !e.path_is_symlink() || !(e.file_type().is_dir() || is_yaml(e.path())) {
        return true;
    }
    project
        .resolve(e.path())
        .map_err(|d| refused.push(d))
        .is_ok()
}

fn read_optional(
    path: &Path,
    max: u64,
    project: &Project,
    diags: &mut Diagnostics,
) -> Option<String> {
    match project.read_at_most(path, max) {
        Ok(Some(bytes)) => decode(path, bytes, diags),
        Ok(None) => None,
        Err(d) => {
            diags.push(d);
            None
        }
    }
}

pub(crate) fn read_declaration(path: &Path, diags: &mut Diagnostics) -> Option<String> {
    let bytes = match read_at_most(path, MAX_DECLARATION_BYTES) {
        Ok(bytes) => bytes,
        Err(e) => {
            diags.push(
                Diagnostic::error(Code::IoError, format!("cannot read file: {e}"))
                    .at(Span::file(path))
                    .help("check the file's permissions"),
            );
            return None;
        }
    };
    if bytes.len() as u64 > MAX_DECLARATION_BYTES {
        diags.push(
            Diagnostic::error(
                Code::FileTooLarge,
                format!(
                    "declaration is larger than {} KiB",
                    MAX_DECLARATION_BYTES / 1024
                ),
            )
            .at(Span::file(path))
            .help("an app declaration is a few lines; is this the right file?"),
        );
        return None;
    }
    decode(path, bytes, diags)
}

/// The bytes of the file at `path`, or `limit` and one more when it holds more than
/// `limit`: opened once (its size read from the open file, no second look-up of the path:
/// a project has thousands of declarations), and never read past the limit however it
/// grows meanwhile.
fn read_at_most(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let size = file.metadata().map_or(0, |m| m.len()).min(limit + 1);
    // Room for the whole file and the read that finds its end.
    let mut bytes = Vec::with_capacity(size as usize + 1);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn decode(path: &Path, bytes: Vec<u8>, diags: &mut Diagnostics) -> Option<String> {
    match String::from_utf8(bytes) {
        Ok(s) => Some(s),
        Err(e) => {
            let offset = e.utf8_error().valid_up_to();
            let prefix = &e.as_bytes()[..offset];
            let line = prefix.iter().filter(|b| **b == b'\n').count() as u32 + 1;
            diags.push(
                Diagnostic::error(Code::NotUtf8, "file is not UTF-8 text")
                    .at(Span::new(path, line, 0))
                    .help("save the file as UTF-8"),
            );
            None
        }
    }
}

/// Parses the text of one declaration file (what `load` does for each file it reads).
pub(crate) fn parse_declaration(
    file: &Path,
    text: &str,
    diags: &mut Diagnostics,
) -> Option<AppDecl> {
    let content_lines: Vec<(usize, &str)> = text
        .trim_start_matches('\u{feff}')
        .lines()
        .enumerate()
        .filter(|(_, l)| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with('#')
        })
        .collect();
    let only_markers = content_lines
        .iter()
        .all(|(_, l)| matches!(l.trim(), "---" | "..."));
    if content_lines.is_empty() || only_markers {
        diags.push(
            Diagnostic::error(Code::EmptyFile, "file declares no app")
                .at(Span::file(file))
                .help("add `namespace`, `service` and `paths` (or `host`), or delete the file"),
        );
        return None;
    }
    // A document marker at column 0 after content starts a second document (YAML forbids
    // `---` at column 0 inside scalars, so a line scan is exact).
    let mut seen_content = false;
    for (i, line) in &content_lines {
        let is_marker =
            line.starts_with("---") && line[3..].chars().next().is_none_or(|c| c.is_whitespace());
        if is_marker && seen_content {
            diags.push(
                Diagnostic::error(
                    Code::MultipleDocuments,
                    "file holds more than one YAML document",
                )
                .at(Span::new(file, *i as u32 + 1, 1))
                .help("latgen reads one app per file: move each document to its own file"),
            );
            return None;
        }
        if !is_marker {
            seen_content = true;
        }
    }
    crate::input::yaml::parse_yaml::<AppDecl>(file, text, APP_FIELDS, diags)
}
