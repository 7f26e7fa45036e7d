//! One project through the stages a run takes (load → validate → plan and service names →
//! render) with the built-in templates' output read back and compared with its typed
//! model. Shared by the `pipeline` fuzz target and tests/suite/proof.rs, so that both hold the
//! built-in templates to the same assertion.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use latgen::diag::Diagnostics;
use latgen::diag::codes::Code;
use latgen::render::{Rendered, Templates};

/// A project as texts: settings, lock and declarations (by path).
#[derive(Debug, Clone, Default)]
pub struct Project {
    pub config: Option<String>,
    pub lock: Option<String>,
    pub decls: Vec<(PathBuf, String)>,
}

impl Project {
    /// The fuzz input format: sections split by a line `%%`, the settings, the lock, then
    /// up to 8 declarations; an empty section is an absent file.
    pub fn from_sections(text: &str) -> Project {
        let mut parts = text.split("\n%%\n");
        let present = |s: Option<&str>| s.filter(|s| !s.trim().is_empty()).map(str::to_string);
        let config = present(parts.next());
        let lock = present(parts.next());
        let decls = parts
            .take(8)
            .enumerate()
            .map(|(i, t)| (PathBuf::from(format!("apps/app{i}.yaml")), t.to_string()))
            .collect();
        Project {
            config,
            lock,
            decls,
        }
    }
}

/// How far a project got.
#[derive(Debug)]
pub enum Outcome {
    /// It does not validate or plan: there is nothing to render.
    Refused,
    // Looked into by tests/suite/proof.rs; the fuzz target only asserts on failures.
    #[allow(dead_code)]
    Rendered(Rendered),
    /// It planned, and the render failed with these findings.
    Failed(Diagnostics),
}

/// The built-in templates, with their output read back and compared with the model.
pub fn verifying_templates() -> &'static Templates {
    static T: OnceLock<Templates> = OnceLock::new();
    T.get_or_init(|| {
        Templates::load(None)
            .expect("built-in templates compile")
            .verifying(true)
    })
}

/// Runs `project` through the stages, rendering with `templates`.
pub fn run(project: &Project, templates: &Templates) -> Outcome {
    let (config_file, lock_file) = (Path::new("latgen.yaml"), Path::new("latgen.lock"));
    let mut diags = Diagnostics::new();
    let loaded = latgen::input::from_texts(
        project.config.as_deref().map(|c| (config_file, c)),
        project.lock.as_deref().map(|l| (lock_file, l)),
        &project.decls,
        &mut diags,
    );
    let apps = latgen::validate::validate(&loaded, config_file, &mut diags);
    if diags.has_errors() {
        return Outcome::Refused;
    }
    let config = &loaded.config;
    let mut plan = latgen::plan::plan(&apps, &loaded.lock, lock_file, config, &mut diags);
    // As a run does: the Lattice service names, which the routes' annotation carries.
    latgen::plan::services::assign(&mut plan, &apps, &loaded.lock, config, &mut diags);
    if diags.has_errors() {
        return Outcome::Refused;
    }
    match latgen::render::render(&plan, &apps, config, templates) {
        Ok(output) => Outcome::Rendered(output),
        Err(diags) => Outcome::Failed(diags),
    }
}

/// The `rendered-invalid` findings of an outcome, one message each.
pub fn rendered_invalid(outcome: &Outcome) -> Vec<String> {
    match outcome {
        Outcome::Failed(diags) => diags
            .iter()
            .filter(|d| d.code == Code::RenderedInvalid)
            .map(|d| d.message.clone())
            .collect(),
        _ => Vec::new(),
    }
}

/// The fuzz assertion: a project that plans never renders to a document that is not its
/// typed model (other render errors may be returned). Returns how the project ran.
pub fn assert_no_rendered_invalid(project: &Project) -> Outcome {
    let outcome = run(project, verifying_templates());
    let invalid = rendered_invalid(&outcome);
    assert!(
        invalid.is_empty(),
        "a built-in template rendered an object that is not its model:\n{}",
        invalid.join("\n")
    );
    outcome
}
