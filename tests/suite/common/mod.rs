//! Helpers every test shares (the suite and the harness suites): trees of files, scratch
//! projects and repositories, running the binary, and committed snapshots.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures").join(name)
}

/// A scratch folder for one test, deleted when dropped.
///
/// The suite makes and deletes a few hundred thousand files (Git's loose objects, rendered
/// trees). On ext4, where the system's temp folder often lives, making a file among many
/// just deleted is slow (the kernel's inode search steps over recently freed inodes): on 2
/// cores the library's suite ran in 56 s on disk and in 30 s in memory. So on Linux the
/// folders go to `/dev/shm` when it has 2 GiB free (a container's default of 64 MiB is too
/// small), else to the system's temp folder; `LATGEN_TEST_TMPDIR` names another place.
pub fn scratch() -> tempfile::TempDir {
    static BASE: OnceLock<PathBuf> = OnceLock::new();
    let base = BASE.get_or_init(scratch_base);
    tempfile::Builder::new()
        .prefix("latgen-test-")
        .tempdir_in(base)
        .unwrap_or_else(|e| panic!("a scratch folder in {}: {e}", base.display()))
}

fn scratch_base() -> PathBuf {
    if let Some(dir) = std::env::var_os("LATGEN_TEST_TMPDIR") {
        return PathBuf::from(dir);
    }
    let shm = Path::new("/dev/shm");
    let roomy = cfg!(target_os = "linux")
        && rustix::fs::statvfs(shm).is_ok_and(|fs| {
            fs.f_bavail.saturating_mul(fs.f_frsize) >= 2 << 30
                && rustix::fs::access(shm, rustix::fs::Access::WRITE_OK).is_ok()
        });
    if roomy {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}

/// Every file under `dir`, by path relative to it.
pub fn read_tree(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    if !dir.exists() {
        return out;
    }
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            let rel = entry.path().strip_prefix(dir).unwrap().to_path_buf();
            out.insert(rel, std::fs::read_to_string(entry.path()).unwrap());
        }
    }
    out
}

/// Writes a tree of files under `dir`.
pub fn write_tree(dir: &Path, files: &BTreeMap<PathBuf, String>) {
    for (rel, text) in files {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

/// Copies a fixture's inputs (apps/, latgen.yaml, latgen.lock, and kong-plugins/ where
/// its latgen.yaml names it) into a fresh temp folder.
pub fn copy_project(from: &Path) -> tempfile::TempDir {
    let tmp = scratch();
    let mut files = BTreeMap::new();
    for folder in ["apps", "kong-plugins", "previews", "environments"] {
        if from.join(folder).is_dir() {
            for (rel, text) in read_tree(&from.join(folder)) {
                files.insert(Path::new(folder).join(rel), text);
            }
        }
    }
    for name in ["latgen.yaml", "latgen.lock"] {
        if let Ok(text) = std::fs::read_to_string(from.join(name)) {
            files.insert(PathBuf::from(name), text);
        }
    }
    write_tree(tmp.path(), &files);
    tmp
}

/// The example, rendered and committed in a throwaway repository (its deploy kit too, so
/// that `check` has nothing else to say).
pub fn example_repo() -> tempfile::TempDir {
    let tmp = copy_project(&root());
    let dir = tmp.path();
    for sub in ["generated", "deploy"] {
        write_tree(&dir.join(sub), &read_tree(&root().join(sub)));
    }
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "base"]);
    tmp
}

/// Writes one app declaration.
pub fn app(dir: &Path, name: &str, body: &str) {
    let p = dir.join("apps").join(format!("{name}.yaml"));
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, body).unwrap();
}

pub fn path_app(dir: &Path, name: &str, paths: &[&str]) {
    app(
        dir,
        name,
        &format!(
            "namespace: team\nservice: {{ name: {name}, port: 8080 }}\npaths: [{}]\n",
            paths.join(", ")
        ),
    );
}

/// Runs git in `dir` with a fixed identity; panics with git's message on failure.
pub fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=latgen",
            "-c",
            "user.email=latgen@example.com",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What one run of the binary printed and returned.
#[derive(Debug)]
pub struct Run {
    /// None when the process died from a signal.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `latgen ARGS --color never` in `dir` (without `--color` for the commands that print
/// no diagnostics and do not take it). Paths in diagnostics are printed as given, so running
/// in the project with relative arguments keeps the expected output short and stable.
pub fn latgen(dir: &Path, args: &[&str]) -> Run {
    let color: &[&str] = if takes_color(args.first().copied()) {
        &["--color", "never"]
    } else {
        &[]
    };
    let out = std::process::Command::new(bin())
        .args(args)
        .args(color)
        .current_dir(dir)
        .output()
        .expect("the latgen binary runs");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The latgen binary: Cargo names it to the harness suites at build time; the suite, built
/// into the library's test binary, finds it beside that binary's folder (`cargo test`
/// builds it first, since the harness suites need it).
pub fn bin() -> PathBuf {
    if let Some(path) = option_env!("CARGO_BIN_EXE_latgen") {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("the test binary has a path");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/");
    let bin = dir.join(format!("latgen{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.is_file(),
        "{} is not built: run the tests with `cargo test` (which builds it), or `cargo build` first",
        bin.display()
    );
    bin
}

/// Whether the subcommand `sub` takes `--color` (the global option, shown in its help).
pub fn takes_color(sub: Option<&str>) -> bool {
    let cli = latgen::cli::command();
    sub.and_then(|s| cli.find_subcommand(s)).is_some_and(|c| {
        c.get_arguments()
            .any(|a| a.get_id() == "color" && !a.is_hide_set())
    })
}

/// Whether this run writes the snapshots instead of comparing with them: `LATGEN_BLESS=1`.
pub fn bless() -> bool {
    std::env::var_os("LATGEN_BLESS").is_some()
}

/// Compares `actual` with the committed snapshot at `path`, exactly. A missing snapshot is a
/// failure, not an empty one; with `LATGEN_BLESS=1` the snapshot is written instead, to be
/// reviewed and committed.
pub fn assert_snapshot(path: &Path, actual: &str) {
    if bless() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "no snapshot {} ({e}): run the test with LATGEN_BLESS=1, review the file and commit it",
            path.display()
        )
    });
    pretty_assertions::assert_eq!(
        expected,
        actual,
        "{} differs (LATGEN_BLESS=1 rewrites it)",
        path.display()
    );
}

/// Compares the files `actual` (by path under `dir`) with the committed tree at `dir`,
/// exactly: the same files, each with the same text. A missing tree is a failure; with
/// `LATGEN_BLESS=1` the tree is written instead (files no longer wanted are removed).
pub fn assert_tree_snapshot(dir: &Path, actual: &BTreeMap<PathBuf, String>) {
    if bless() {
        if dir.exists() {
            std::fs::remove_dir_all(dir).unwrap();
        }
        write_tree(dir, actual);
        return;
    }
    assert!(
        dir.is_dir(),
        "no snapshot tree {}: run the test with LATGEN_BLESS=1, review it and commit it",
        dir.display()
    );
    let what = format!("{} (LATGEN_BLESS=1 rewrites it)", dir.display());
    assert_tree_eq(&read_tree(dir), actual, &what);
}

/// Compares two trees file by file, so that a failure names the file and shows a readable
/// diff.
pub fn assert_tree_eq(
    expected: &BTreeMap<PathBuf, String>,
    actual: &BTreeMap<PathBuf, String>,
    what: &str,
) {
    let names = |t: &BTreeMap<PathBuf, String>| t.keys().cloned().collect::<Vec<_>>();
    pretty_assertions::assert_eq!(
        names(expected),
        names(actual),
        "{what}: the set of files differs"
    );
    for (path, text) in actual {
        pretty_assertions::assert_eq!(&expected[path], text, "{what}: {} differs", path.display());
    }
}

/// A CRD's schema made strict for the object at its top (see `strict`).
pub fn strict_schema(schema: &mut serde_json::Value) {
    strict(schema, true);
}

/// Refuses unknown fields, as `kubectl apply --validate=strict` does: every object schema
/// with properties (and no preserve-unknown-fields) gets `additionalProperties: false`;
/// metadata is left to the API server.
fn strict(schema: &mut serde_json::Value, top: bool) {
    if let Some(obj) = schema.as_object_mut() {
        let open = obj.contains_key("x-kubernetes-preserve-unknown-fields");
        if obj.contains_key("properties") && !obj.contains_key("additionalProperties") && !open {
            obj.insert(
                "additionalProperties".into(),
                serde_json::Value::Bool(false),
            );
        }
        for (key, child) in obj.iter_mut() {
            if top && key == "properties" {
                for (name, p) in child.as_object_mut().into_iter().flatten() {
                    if name != "metadata" {
                        strict(p, false);
                    }
                }
                continue;
            }
            strict(child, false);
        }
    } else if let Some(arr) = schema.as_array_mut() {
        for child in arr {
            strict(child, false);
        }
    }
}

/// A copy of the example with `dispatch: header`.
pub fn header_copy_of_example() -> tempfile::TempDir {
    let tmp = copy_project(&root());
    let yaml = tmp.path().join("latgen.yaml");
    let text = std::fs::read_to_string(&yaml).unwrap();
    std::fs::write(
        &yaml,
        text.replace("lattice:\n", "lattice:\n  dispatch: header\n"),
    )
    .unwrap();
    tmp
}
