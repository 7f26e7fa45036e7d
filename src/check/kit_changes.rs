//! The deploy kit's files a PR adds or changes: Argo CD does not apply them (they are the
//! Applications and the AppProject it syncs with), so the PR comment tells the reviewer
//! which to apply by hand. Compared with the files at the base commit in Git.

use crate::input::ProjectPaths;
use crate::input::config::Config;
use crate::render::deploy_kit::{FILES, folder, project_root};

/// Each kit file (by its path in the project) that differs from the base commit `base`,
/// with "added" or "changed"; none without a base or a kit.
pub(crate) fn kit_changes(
    paths: &ProjectPaths,
    config: &Config,
    base: Option<&str>,
) -> Vec<(String, &'static str)> {
    let (Some(base), Some(_)) = (base, &config.deploy) else {
        return Vec::new();
    };
    let root = project_root(paths);
    let mut out = Vec::new();
    for name in FILES {
        let rel = folder(config).join(name);
        let path = root.join(&rel);
        let Ok(now) = std::fs::read_to_string(&path) else {
            continue;
        };
        // A file Git cannot read at the base (no repository, a shallow clone) is not
        // reported: the comment says only what it knows.
        let Ok(then) = crate::rollout::git::read_file_at(&path, base) else {
            continue;
        };
        match then {
            None => out.push((rel.display().to_string(), "added")),
            Some(old) if old != now => out.push((rel.display().to_string(), "changed")),
            Some(_) => {}
        }
    }
    out
}
