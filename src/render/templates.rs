//! The templates: the embedded set, a `--templates` folder that overrides it file by file
//! (each file read inside the project only), the environment they render in (strict
//! undefined values, bounded work), and the `yaml` filter that keeps a value from adding
//! lines or keys.

use std::path::{Path, PathBuf};

use minijinja::{AutoEscape, Environment, UndefinedBehavior, Value as Ctx};

use super::budget;
use crate::diag::Diagnostic;
use crate::diag::Span;
use crate::diag::codes::Code;
use crate::input::confine::Project;

/// The embedded templates, by name.
pub const TEMPLATES: &[(&str, &str)] = &[
    (
        "lattice/group-route.yaml.j2",
        include_str!("../../templates/lattice/group-route.yaml.j2"),
    ),
    (
        "lattice/host-route.yaml.j2",
        include_str!("../../templates/lattice/host-route.yaml.j2"),
    ),
    (
        "lattice/target-group-policy.yaml.j2",
        include_str!("../../templates/lattice/target-group-policy.yaml.j2"),
    ),
    (
        "lattice/iam-auth-policy.yaml.j2",
        include_str!("../../templates/lattice/iam-auth-policy.yaml.j2"),
    ),
    (
        "lattice/reference-grant.yaml.j2",
        include_str!("../../templates/lattice/reference-grant.yaml.j2"),
    ),
    (
        "kong/bridge-service.yaml.j2",
        include_str!("../../templates/kong/bridge-service.yaml.j2"),
    ),
    (
        "kong/route.yaml.j2",
        include_str!("../../templates/kong/route.yaml.j2"),
    ),
    (
        "kong/prometheus-rule.yaml.j2",
        include_str!("../../templates/kong/prometheus-rule.yaml.j2"),
    ),
    (
        "kong/prometheus-plugin.yaml.j2",
        include_str!("../../templates/kong/prometheus-plugin.yaml.j2"),
    ),
    (
        "lattice/access-log-policy.yaml.j2",
        include_str!("../../templates/lattice/access-log-policy.yaml.j2"),
    ),
    (
        "kustomization.yaml.j2",
        include_str!("../../templates/kustomization.yaml.j2"),
    ),
];

/// A compiled template set, built once per run.
pub struct Templates {
    env: Environment<'static>,
    /// The folder given with `--templates`, and the names of the templates found there.
    custom: Option<(PathBuf, Vec<&'static str>)>,
    /// Whether the built-in templates' output is read back too (`--verify`).
    pub(super) verify: bool,
    /// Whether every built-in template goes through the template engine, none through
    /// its writer in `builtin.rs` (the tests that hold the two to the same text).
    pub(super) interpret: bool,
    /// What the custom templates have rendered so far in this run, in bytes (see
    /// [`budget::CUSTOM_OUTPUT`]).
    custom_output: std::sync::atomic::AtomicUsize,
}

impl Templates {
    /// The embedded templates, with those found in `dir` (same relative names) instead. A
    /// template in `dir` must resolve inside the project it comes with (see
    /// [`crate::input::confine`]): one that leads out of it is refused, never read.
    pub fn load(dir: Option<(&Path, &Project)>) -> Result<Templates, Diagnostic> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_auto_escape_callback(|_| AutoEscape::None);
        env.set_syntax(
            minijinja::syntax::SyntaxConfig::builder()
                .trim_blocks(true)
                .lstrip_blocks(true)
                .build()
                .expect("static syntax config"),
        );
        // Untrusted templates must end: bound the work and the recursion of one render.
        env.set_fuel(Some(5_000_000));
        env.set_recursion_limit(64);
        env.add_filter("yaml", yaml_scalar);
        if let Some((d, _)) = dir {
            missing_templates_folder(d)?;
        }
        let mut custom = Vec::new();
        for (name, embedded) in TEMPLATES {
            let given = dir
                .map(|(d, project)| (d.join(name), project))
                .filter(|(p, _)| p.is_symlink() || p.is_file());
            let source = match given {
                Some((path, project)) => {
                    custom.push(*name);
                    let bytes = project.read(&path)?.unwrap_or_default();
                    String::from_utf8(bytes).map_err(|_| {
                        Diagnostic::error(Code::IoError, "cannot read template: not UTF-8 text")
                            .at(Span::file(&path))
                    })?
                }
                None => embedded.to_string(),
            };
            env.add_template_owned(name.to_string(), source)
                .map_err(|e| template_error(name, dir.map(|(d, _)| d), &e))?;
        }
        Ok(Templates {
            env,
            custom: dir.map(|(d, _)| (d.to_path_buf(), custom)),
            verify: false,
            interpret: false,
            custom_output: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// With `on`, the built-in templates' output is parsed back too and must equal the
    /// typed model of each object (`--verify`); custom templates' always is.
    pub fn verifying(mut self, on: bool) -> Templates {
        self.verify = on;
        self
    }

    /// With `on`, the built-in templates are all rendered by the template engine, none
    /// written straight from their contexts; the text is the same (tests/suite/proof.rs).
    pub fn interpreting(mut self, on: bool) -> Templates {
        self.interpret = on;
        self
    }

    /// Whether template `name` comes from the `--templates` folder: only those can leave
    /// out a field the API server defaults (tests/suite/stored.rs proves the built-in ones).
    pub fn is_custom(&self, name: &str) -> bool {
        self.custom
            .as_ref()
            .is_some_and(|(_, names)| names.contains(&name))
    }

    /// Where template `name` comes from: its file in the `--templates` folder, or the
    /// built-in one (named as in latgen's source tree).
    pub fn file_of(&self, name: &str) -> PathBuf {
        match &self.custom {
            Some((dir, names)) if names.contains(&name) => dir.join(name),
            _ => PathBuf::from("templates").join(name),
        }
    }

    /// Counts `bytes` a custom template rendered for one object against the caps on one
    /// object and on the run: its output is parsed back afterwards, which takes far more
    /// memory than the text.
    pub(super) fn count_custom_output(&self, name: &str, bytes: usize) -> Result<(), Diagnostic> {
        use std::sync::atomic::Ordering;
        let total = self.custom_output.fetch_add(bytes, Ordering::Relaxed) + bytes;
        let (what, cap) = if bytes > budget::OBJECT_OUTPUT {
            ("one object", budget::OBJECT_OUTPUT)
        } else if total > budget::CUSTOM_OUTPUT {
            ("the run's objects in all", budget::CUSTOM_OUTPUT)
        } else {
            return Ok(());
        };
        Err(Diagnostic::error(
            Code::TemplateError,
            format!(
                "template {name} rendered more than {} MiB for {what}",
                cap / (1024 * 1024)
            ),
        )
        .at(Span::file(self.file_of(name)))
        .help("a template renders one Kubernetes object, which the API server stores only up to about 1.5 MiB: look for text repeated or joined with itself"))
    }

    pub(super) fn render(&self, name: &str, ctx: Ctx) -> Result<String, minijinja::Error> {
        let template = self.env.get_template(name)?;
        match TEMPLATES.iter().find(|(n, _)| *n == name) {
            Some((name, _)) => budget::within(name, || template.render(ctx)),
            None => template.render(ctx),
        }
    }
}

pub(super) fn template_error(name: &str, dir: Option<&Path>, e: &minijinja::Error) -> Diagnostic {
    let file = dir
        .map(|d| d.join(name))
        .unwrap_or_else(|| PathBuf::from("templates").join(name));
    let line = e.line().unwrap_or(0) as u32;
    Diagnostic::error(
        Code::TemplateError,
        format!("template {name}: {}", e.detail().unwrap_or(&e.to_string())),
    )
    .at(Span::new(file, line, 0))
    .help("fix the template; `latgen render` without --templates uses the built-in ones")
}

/// Formats a string as a YAML scalar that reads back as exactly that string: plain when it
/// is unambiguous, otherwise a JSON string (valid YAML), so no value can add lines or keys.
/// The characters JSON leaves as they are but YAML does not are escaped too.
pub(crate) fn yaml_scalar(value: String) -> String {
    if plain_safe(&value) {
        return value;
    }
    quoted(&value)
}

/// `value` as a JSON string that YAML reads back as exactly `value`.
fn quoted(value: &str) -> String {
    let json = serde_json::to_string(value).expect("strings always serialize");
    if !json.contains(json_raw_but_not_yaml) {
        return json;
    }
    // A raw character is never part of one of JSON's escapes, so each can be replaced alone.
    json.chars()
        .map(|c| {
            if json_raw_but_not_yaml(c) {
                format!("\\u{:04x}", u32::from(c))
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Appends [`yaml_scalar`] of `value` to `out`, copying `value` only when it needs quoting.
pub(super) fn push_yaml(out: &mut String, value: &str) {
    if plain_safe(value) {
        out.push_str(value);
    } else {
        out.push_str(&quoted(value));
    }
}

/// Whether `value` reads back as itself written plain: a letter or `/` first, only
/// letters, digits and `/._-`, and not one of YAML 1.1's words for a boolean or null.
fn plain_safe(value: &str) -> bool {
    value
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'/')
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-".contains(&b))
        && !["y", "n", "yes", "no", "on", "off", "true", "false", "null"]
            .iter()
            .any(|word| value.eq_ignore_ascii_case(word))
}

/// Characters that JSON writes as they are but that YAML does not read back as themselves:
/// not printable (DEL, the C1 controls, U+FFFE, U+FFFF, and to Kubernetes' parser, go-yaml,
/// the byte order mark: refused), or a line break to go-yaml (NEL, U+2028, U+2029: folded
/// to a space in a quoted scalar).
fn json_raw_but_not_yaml(c: char) -> bool {
    matches!(
        c,
        '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
    )
}

/// A `--templates` folder that is not there is an error, not the built-in templates: a typo
/// in a CI command would otherwise change what is rendered and checked without a word.
fn missing_templates_folder(dir: &Path) -> Result<(), Diagnostic> {
    if dir.is_dir() {
        return Ok(());
    }
    let why = if dir.exists() {
        "is not a folder"
    } else {
        "does not exist"
    };
    Err(Diagnostic::error(
        Code::IoError,
        format!("the templates folder {} {why}", dir.display()),
    )
    .at(Span::file(dir))
    .help("give --templates the folder that holds your templates (the built-in ones are in the templates/ folder of latgen's source, same file names), or leave it out to use those"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_cannot_inject_yaml() {
        assert_eq!(yaml_scalar("shop-web".into()), "shop-web");
        assert_eq!(yaml_scalar("/shop/cart".into()), "/shop/cart");
        assert_eq!(yaml_scalar("yes".into()), "\"yes\"");
        assert_eq!(yaml_scalar("80".into()), "\"80\"");
        let evil = "x\nkind: Secret".to_string();
        let quoted = yaml_scalar(evil.clone());
        let back: String = serde_saphyr::from_str(&quoted).unwrap();
        assert_eq!(back, evil);
        let evil = "a: b".to_string();
        let back: String = serde_saphyr::from_str(&yaml_scalar(evil.clone())).unwrap();
        assert_eq!(back, evil);
    }

    /// Found by tests/suite/proof.rs: a gateway namespace with U+009F rendered a route that does
    /// not parse, since JSON leaves the character as it is and YAML cannot print it.
    #[test]
    fn scalars_escape_what_yaml_cannot_print_or_reads_as_a_line_break() {
        for c in [
            '\u{7f}', '\u{85}', '\u{9f}', '\u{2028}', '\u{2029}', '\u{feff}', '\u{fffe}',
            '\u{ffff}',
        ] {
            let value = format!("a{c}b");
            let scalar = yaml_scalar(value.clone());
            assert!(!scalar.contains(c), "{c:?} is left raw in {scalar}");
            let back: String = serde_saphyr::from_str(&scalar).unwrap();
            assert_eq!(back, value);
        }
        // Characters YAML prints are left as they are.
        assert_eq!(yaml_scalar("é\u{1f600}".into()), "\"é\u{1f600}\"");
    }
}
