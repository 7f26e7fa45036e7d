//! The GitHub Action (`action.yml`): its shell steps run here as the runner runs them,
//! against a local release (an archive of this build's binary and its checksum in a
//! releases folder, as the release workflow publishes them) and the example in a throwaway
//! repository. GitHub's side (the `uses:` steps, the runner) is not here: actionlint, zizmor
//! and the action metadata schema check that in `.ci/run`, and the release workflow runs
//! the action on each release.

use super::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const VERSION: &str = "v9.9.9";
const TARGET: &str = "x86_64-unknown-linux-musl";

/// A releases folder with `VERSION`'s Linux x86_64 archive of `binary` and its
/// `sha256sum` checksum file; `tamper` changes the archive after the checksum is taken.
fn releases_of(binary: &Path, tamper: bool) -> tempfile::TempDir {
    let tmp = common::scratch();
    fill_releases(tmp.path(), binary, tamper);
    tmp
}

fn fill_releases(dir: &Path, binary: &Path, tamper: bool) {
    let stage = dir.join("stage");
    std::fs::create_dir_all(&stage).unwrap();
    std::fs::copy(binary, stage.join("latgen")).unwrap();
    let folder = dir.join(VERSION);
    std::fs::create_dir_all(&folder).unwrap();
    let archive = format!("latgen-{TARGET}.tar.gz");
    let run = |cmd: &mut Command| assert!(cmd.status().unwrap().success(), "{cmd:?}");
    // The fastest gzip level: this build's binary is a debug one, tens of MB.
    run(Command::new("tar")
        .args(["-I", "gzip -1", "-cf"])
        .arg(folder.join(&archive))
        .arg("-C")
        .arg(&stage)
        .arg("latgen"));
    std::fs::remove_dir_all(&stage).unwrap();
    let sum = Command::new("sha256sum")
        .arg(&archive)
        .current_dir(&folder)
        .output()
        .unwrap();
    std::fs::write(folder.join(format!("{archive}.sha256")), sum.stdout).unwrap();
    if tamper {
        let mut bytes = std::fs::read(folder.join(&archive)).unwrap();
        bytes.extend_from_slice(b"tampered");
        std::fs::write(folder.join(&archive), bytes).unwrap();
    }
}

/// A release of this build, made once for the tests that run what they install. It lives
/// next to the binary and is made anew by each run: a static is never dropped, so a
/// scratch folder would be left behind, tens of MB each run.
fn release() -> &'static Path {
    static RELEASE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    RELEASE.get_or_init(|| {
        let bin = common::bin();
        let dir = bin.with_file_name("action-test-release");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        fill_releases(&dir, &bin, false);
        dir
    })
}

/// A release of a stand-in binary, for the tests of the install step alone.
fn stand_in_release(tamper: bool) -> (tempfile::TempDir, tempfile::TempDir) {
    let bin = common::scratch();
    let script = bin.path().join("latgen");
    std::fs::write(&script, "#!/bin/sh\necho \"latgen 9.9.9\"\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let releases = releases_of(&script, tamper);
    (bin, releases)
}

/// The runner's environment for one step: its temp folder and command files.
struct Runner {
    temp: tempfile::TempDir,
}

impl Runner {
    fn new() -> Runner {
        let temp = common::scratch();
        for file in ["path", "output", "step-summary"] {
            std::fs::write(temp.path().join(file), "").unwrap();
        }
        Runner { temp }
    }

    fn file(&self, name: &str) -> PathBuf {
        self.temp.path().join(name)
    }

    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.file(name)).unwrap()
    }

    /// Runs `script` (under action/) with bash in `dir`, with `env` and the runner's.
    fn run(&self, script: &str, dir: &Path, env: &[(&str, &str)]) -> Output {
        let mut cmd = Command::new("bash");
        cmd.arg(common::root().join("action").join(script))
            .current_dir(dir)
            .env("RUNNER_OS", "Linux")
            .env("RUNNER_ARCH", "X64")
            .env("RUNNER_TEMP", self.temp.path())
            .env("GITHUB_PATH", self.file("path"))
            .env("GITHUB_OUTPUT", self.file("output"))
            .env("GITHUB_STEP_SUMMARY", self.file("step-summary"))
            .env("NO_COLOR", "1");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.output().unwrap()
    }

    /// The step outputs written so far, by name.
    fn outputs(&self) -> BTreeMap<String, String> {
        (self.read("output").lines())
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// Installs `VERSION` from `releases`, as the action's first step does.
    fn install(&self, releases: &Path, version: &str) -> Output {
        let url = format!("file://{}", releases.display());
        let env = [
            ("LATGEN_VERSION", version),
            ("LATGEN_REPO", "latgen/latgen"),
            ("LATGEN_RELEASES_URL", url.as_str()),
        ];
        self.run("install.sh", self.temp.path(), &env)
    }
}

fn text(out: &[u8]) -> String {
    String::from_utf8_lossy(out).into_owned()
}

#[test]
fn the_action_installs_the_release_binary_checked_against_its_checksum() {
    let (_bin, releases) = stand_in_release(false);
    let runner = Runner::new();
    let out = runner.install(releases.path(), VERSION);
    assert!(out.status.success(), "{}", text(&out.stdout));
    // The binary's folder goes on PATH for the next steps, and it runs.
    let dir = runner.read("path");
    let dir = Path::new(dir.trim_end());
    assert_eq!(dir, runner.file(&format!("latgen-{VERSION}")));
    let version = Command::new(dir.join("latgen"))
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(text(&version.stdout), "latgen 9.9.9\n");
    // The download is not left behind.
    assert!(!dir.join("download").exists());
}

#[test]
fn the_action_refuses_an_archive_that_does_not_match_its_checksum() {
    let (_bin, releases) = stand_in_release(true);
    let runner = Runner::new();
    let out = runner.install(releases.path(), VERSION);
    assert_eq!(out.status.code(), Some(2));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("::error title=latgen::latgen-x86_64-unknown-linux-musl.tar.gz does not match its published checksum"),
        "{stdout}"
    );
    assert_eq!(runner.read("path"), "", "nothing goes on PATH");
    assert!(!runner.file(&format!("latgen-{VERSION}/latgen")).exists());
}

#[test]
fn the_action_takes_only_a_release_tag_as_its_version() {
    let (_bin, releases) = stand_in_release(false);
    let runner = Runner::new();
    let out = runner.install(releases.path(), "v1.0.0/../../x");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stdout).contains("is not a release tag such as v0.1.0"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(runner.read("path"), "");
}

/// A small project (the settings fixture, Kong settings included), rendered and committed
/// in a throwaway repository: the action's checks run three times each, so not the
/// 79-app example.
fn project_repo() -> tempfile::TempDir {
    let tmp = common::copy_project(&common::fixture("settings"));
    let run = common::latgen(tmp.path(), &["render"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    common::git(tmp.path(), &["init", "-q"]);
    common::git(tmp.path(), &["add", "-A"]);
    common::git(tmp.path(), &["commit", "-q", "-m", "base"]);
    tmp
}

/// The install step, then the check step with what it installed, on a project against
/// its own commit: annotations, SARIF and the summary, exit code 0 in the outputs.
#[test]
fn the_action_installs_latgen_and_checks_a_project_keeping_its_reports() {
    let runner = Runner::new();
    let out = runner.install(release(), VERSION);
    assert!(out.status.success(), "{}", text(&out.stdout));
    let repo = project_repo();
    let out = check(&runner, repo.path(), ".");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let outputs = runner.outputs();
    assert_eq!(outputs["exit-code"], "0");
    let sarif_file = runner.file("latgen.sarif");
    assert_eq!(outputs["sarif"], sarif_file.to_str().unwrap());
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sarif_file).unwrap()).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    // Nothing is written into the checkout.
    assert!(!repo.path().join("latgen.sarif").exists());
    let summary = std::fs::read_to_string(runner.file("latgen-comment.md")).unwrap();
    assert!(summary.starts_with("<!-- latgen -->"), "{summary}");
    // The run's summary page shows the same.
    assert_eq!(runner.read("step-summary"), summary);
}

/// Findings do not stop the step: it records exit code 1 and keeps both reports, so that
/// the SARIF upload and the comment still happen; the action's last step fails the job.
#[test]
fn the_action_records_findings_and_still_writes_its_reports() {
    let runner = Runner::new();
    // latgen as installed: this build's folder on PATH.
    let dir = common::bin().parent().unwrap().display().to_string();
    std::fs::write(runner.file("path"), format!("{dir}\n")).unwrap();
    let repo = project_repo();
    // An app declared and not rendered: the committed output is stale.
    common::path_app(repo.path(), "brand-new", &["/brand-new"]);
    let out = check(&runner, repo.path(), ".");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("::error"), "{stdout}");
    assert_eq!(runner.outputs()["exit-code"], "1");
    let summary = std::fs::read_to_string(runner.file("latgen-comment.md")).unwrap();
    assert!(summary.contains("stale-output"), "{summary}");
    assert!(runner.file("latgen.sarif").exists());
}

/// A project in a folder of the repository (`working-directory`): the annotations and
/// the SARIF name files from the repository's root, where GitHub looks for them.
#[test]
fn the_action_reports_paths_from_the_repositorys_root() {
    let runner = Runner::new();
    let dir = common::bin().parent().unwrap().display().to_string();
    std::fs::write(runner.file("path"), format!("{dir}\n")).unwrap();
    let repo = common::scratch();
    let project = project_repo();
    std::fs::rename(project.path(), repo.path().join("routes")).unwrap();
    // A finding, so that there is a path to look at.
    common::path_app(&repo.path().join("routes"), "brand-new", &["/brand-new"]);
    let out = check(&runner, repo.path(), "routes/");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("file=routes/"), "{stdout}");
    let sarif = std::fs::read_to_string(runner.file("latgen.sarif")).unwrap();
    assert!(sarif.contains("\"uri\": \"routes/"), "{sarif}");
}

/// A `working-directory` starting with `-` (a folder a PR can create: `--templates=x`)
/// would reach latgen as an option, not as the project: the step refuses it before latgen
/// runs.
#[test]
fn the_action_refuses_a_working_directory_that_reads_as_an_option() {
    let runner = Runner::new();
    let dir = common::bin().parent().unwrap().display().to_string();
    std::fs::write(runner.file("path"), format!("{dir}\n")).unwrap();
    let repo = common::scratch();
    let project = project_repo();
    std::fs::rename(project.path(), repo.path().join("--templates=x")).unwrap();
    let out = check(&runner, repo.path(), "--templates=x");
    assert_eq!(out.status.code(), Some(2));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("starts with '-'"), "{stdout}");
    assert!(!runner.outputs().contains_key("exit-code"), "latgen ran");
}

/// A report file that is a symbolic link (a PR cannot plant one in the runner's temp
/// folder, but the step does not trust it either) is refused, not written through.
#[test]
fn the_action_does_not_write_a_report_through_a_symbolic_link() {
    let runner = Runner::new();
    let dir = common::bin().parent().unwrap().display().to_string();
    std::fs::write(runner.file("path"), format!("{dir}\n")).unwrap();
    let target = runner.file("secret");
    std::fs::write(&target, "keep me").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&target, runner.file("latgen.sarif")).unwrap();
    let repo = project_repo();
    let out = check(&runner, repo.path(), ".");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stdout).contains("is a symbolic link"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
}

/// A pinned hash (the sha256 input) that the archive does not have stops the install,
/// even though the published checksum matches.
#[test]
fn the_action_refuses_an_archive_that_is_not_the_pinned_one() {
    let (_bin, releases) = stand_in_release(false);
    let runner = Runner::new();
    let url = format!("file://{}", releases.path().display());
    let pinned = "0".repeat(64);
    let env = [
        ("LATGEN_VERSION", VERSION),
        ("LATGEN_REPO", "latgen/latgen"),
        ("LATGEN_RELEASES_URL", url.as_str()),
        ("LATGEN_SHA256", pinned.as_str()),
    ];
    let out = runner.run("install.sh", runner.temp.path(), &env);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stdout).contains("is not the one pinned by the sha256 input"));
    assert_eq!(runner.read("path"), "");
}

/// Runs the check step in `repo` (the repository's root) on the project in `project`,
/// with latgen as installed and the reports in the runner's temp folder, as action.yml
/// passes them.
fn check(runner: &Runner, repo: &Path, project: &str) -> Output {
    let installed = runner.read("path");
    let path = format!(
        "{}:{}",
        installed.trim_end(),
        std::env::var("PATH").unwrap_or_default()
    );
    let (sarif, summary) = (
        runner.file("latgen.sarif"),
        runner.file("latgen-comment.md"),
    );
    let env = [
        ("PATH", path.as_str()),
        ("LATGEN_PROJECT", project),
        ("LATGEN_BASE", "HEAD"),
        ("LATGEN_SARIF", sarif.to_str().unwrap()),
        ("LATGEN_SUMMARY", summary.to_str().unwrap()),
    ];
    runner.run("check.sh", repo, &env)
}

/// A `gh` that answers the comment listing with `$FAKE_ID` and logs every other call.
fn fake_gh(dir: &Path) {
    let script = "#!/usr/bin/env bash\n\
        case \"$*\" in *--paginate*) echo \"$FAKE_ID\" ;; *) echo \"$*\" >> \"$GH_LOG\" ;; esac\n";
    let gh = dir.join("gh");
    std::fs::write(&gh, script).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// Posts with `existing` as the id of the PR's latgen comment; returns gh's calls.
fn comment(existing: &str, author: &str) -> (Output, String) {
    let runner = Runner::new();
    fake_gh(runner.temp.path());
    let summary = runner.file("latgen-comment.md");
    std::fs::write(&summary, "<!-- latgen -->\n## latgen\n").unwrap();
    let path = format!(
        "{}:{}",
        runner.temp.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let log = runner.file("gh.log");
    let env = [
        ("PATH", path.as_str()),
        ("FAKE_ID", existing),
        ("GH_LOG", log.to_str().unwrap()),
        ("LATGEN_SUMMARY", summary.to_str().unwrap()),
        ("LATGEN_AUTHOR", author),
        ("PR", "7"),
        ("REPO", "acme/routes"),
    ];
    let out = runner.run("comment.sh", runner.temp.path(), &env);
    let calls = std::fs::read_to_string(log).unwrap_or_default();
    (out, calls)
}

#[test]
fn the_comment_step_updates_the_prs_latgen_comment_or_posts_one() {
    let (out, calls) = comment("42", "github-actions[bot]");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        calls.starts_with("api -X PATCH repos/acme/routes/issues/comments/42 -F body=@"),
        "{calls}"
    );
    let (out, calls) = comment("", "github-actions[bot]");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        calls.starts_with("api -X POST repos/acme/routes/issues/7/comments -F body=@"),
        "{calls}"
    );
}

/// The author goes into the jq filter that finds the comment: only a login is taken.
#[test]
fn the_comment_step_refuses_an_author_that_is_not_a_login() {
    let (out, calls) = comment("42", "x\") or (true");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stdout).contains("is not a GitHub login"));
    assert_eq!(calls, "");
}
