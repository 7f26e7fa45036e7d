//! A whole project from any bytes: up to a few declarations, settings and a lock, through
//! load → validate → plan → render. Nothing may panic; a project that plans must render to
//! documents that pass the typed read-back, or report why.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

fn templates() -> &'static latgen::render::Templates {
    static T: OnceLock<latgen::render::Templates> = OnceLock::new();
    T.get_or_init(|| latgen::render::Templates::load(None).expect("built-in templates compile"))
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Sections split by a line `%%`: settings, lock, then declarations.
    let mut parts = text.split("\n%%\n");
    let config = parts.next().filter(|s| !s.trim().is_empty());
    let lock = parts.next().filter(|s| !s.trim().is_empty());
    let decls: Vec<(PathBuf, String)> =
        parts.take(8).enumerate().map(|(i, t)| (PathBuf::from(format!("apps/app{i}.yaml")), t.to_string())).collect();
    let mut diags = latgen::diag::Diagnostics::new();
    let loaded = latgen::load::from_texts(
        config.map(|c| (Path::new("latgen.yaml"), c)),
        lock.map(|l| (Path::new("latgen.lock"), l)),
        &decls,
        &mut diags,
    );
    let apps = latgen::validate::validate(&loaded, Path::new("latgen.yaml"), &mut diags);
    if diags.has_errors() {
        return;
    }
    let plan = latgen::plan::plan(&apps, &loaded.lock, Path::new("latgen.lock"), &loaded.config, &mut diags);
    if diags.has_errors() {
        return;
    }
    let _ = latgen::render::render(&plan, &apps, &loaded.config, templates());
});
