//! The declaration half of `latgen promote FROM TO`: the overrides `FROM` has of the fields
//! `--carry` names, carried to `TO` in each declaration (see
//! [`crate::output::declaration_edit`]), said per app, written with `--apply`.

use std::path::{Path, PathBuf};

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics};
use crate::input::ProjectPaths;
use crate::input::confine::Project;
use crate::input::overrides::OVERRIDE_FIELDS;
use crate::output::declaration_edit::{Carried, carry};

/// One declaration's field carried, or not, and the declaration's text after it.
pub(crate) struct Carry {
    pub file: PathBuf,
    pub app: String,
    pub field: &'static str,
    /// Whether `--carry` names the field: only those are written.
    pub chosen: bool,
    pub outcome: Result<Carried, String>,
}

/// Every declaration's override of a field in `from` that `to` does not have alike, read
/// from the apps folder of `base`; `chosen` are the fields `--carry` names.
pub(crate) fn overrides_to_carry(
    base: &ProjectPaths,
    (from, to): (&str, &str),
    chosen: &[String],
) -> Result<Vec<Carry>, Diagnostic> {
    let project = Project::new(&base.root);
    let mut diags = Diagnostics::new();
    let files = crate::input::find_declarations(&base.apps_dir, &project, &mut diags);
    let envs = crate::input::environments::names(&base.root)?;
    let mut out = Vec::new();
    for file in files {
        let Some(text) = crate::input::read_declaration(&file, &mut diags) else {
            continue;
        };
        // A declaration that does not parse is the render's finding; nothing is carried.
        let Some(decl) = crate::input::parse_declaration(&file, &text, &mut diags) else {
            continue;
        };
        let running: Vec<String> = match &decl.environments {
            Some(listed) => listed.value.iter().map(|e| e.value.clone()).collect(),
            None => envs.clone(),
        };
        if !running.iter().any(|e| e == to) {
            continue;
        }
        let app = decl
            .name
            .as_ref()
            .map_or_else(|| stem(&file), |n| n.value.clone());
        // Each field carried on the text the ones before it left.
        let mut now = text.clone();
        for field in OVERRIDE_FIELDS {
            let is_chosen = chosen.iter().any(|c| c == field);
            let outcome = match carry(&now, field, (from, to), &running) {
                Ok(None) => continue,
                Ok(Some(c)) => Ok(c),
                Err(e) => Err(e),
            };
            // What stops one field stops them all (the file's overrides are on one line):
            // said once.
            let stop = outcome.is_err();
            if let (true, Ok(c)) = (is_chosen, &outcome) {
                now = c.text.clone();
            }
            out.push(Carry {
                file: file.clone(),
                app: app.clone(),
                field,
                chosen: is_chosen,
                outcome,
            });
            if stop {
                break;
            }
        }
    }
    Ok(out)
}

fn stem(file: &Path) -> String {
    (file.file_stem()).map_or_else(String::new, |s| s.to_string_lossy().into_owned())
}

/// What promote says of one field.
pub(crate) fn describe(c: &Carry, (from, to): (&str, &str), apply: bool) -> String {
    let (app, field, file) = (&c.app, c.field, c.file.display());
    match (&c.outcome, c.chosen, apply) {
        (Err(why), _, _) => format!("  {app}: nothing carried from {from}: {why} ({file})"),
        (Ok(_), false, _) => format!(
            "  {app}: {from} overrides {field}, kept to {from} (`--carry {field}` carries it) ({file})"
        ),
        (Ok(c), true, false) if c.folded => format!(
            "  {app}: {field} as in {from}, the declaration's own once carried: `--apply` carries it ({file})"
        ),
        (Ok(_), true, false) => format!(
            "  {app}: {field} as in {from}, as overrides.{to}.{field}: `--apply` carries it ({file})"
        ),
        (Ok(c), true, true) if c.folded => format!(
            "  {app}: {field} carried from {from}: now the declaration's own, overridden nowhere ({file})"
        ),
        (Ok(_), true, true) => {
            format!("  {app}: {field} carried from {from} as overrides.{to}.{field} ({file})")
        }
    }
}

/// A declaration written, with the text it had: put back if the promotion fails after.
pub(crate) type Written = (PathBuf, String);

/// Writes the declarations the chosen fields changed, each checked to parse first; what
/// they held before. Nothing is written when a declaration could not be carried.
pub(crate) fn write(base: &ProjectPaths, carries: &[Carry]) -> Result<Vec<Written>, Diagnostic> {
    if let Some(c) = carries.iter().find(|c| c.outcome.is_err()) {
        return Err(Diagnostic::error(
            Code::InvalidValue,
            format!(
                "{} cannot be carried line by line, so no declaration was changed",
                c.file.display()
            ),
        )
        .help("write its `overrides:` as a block (a key a line), or carry it by hand"));
    }
    // The last text of each file holds every field carried into it.
    let mut last: Vec<(&PathBuf, &str)> = Vec::new();
    for c in carries.iter().filter(|c| c.chosen) {
        let Ok(carried) = &c.outcome else { continue };
        match last.iter_mut().find(|(f, _)| *f == &c.file) {
            Some(entry) => entry.1 = &carried.text,
            None => last.push((&c.file, &carried.text)),
        }
    }
    for (file, text) in &last {
        let mut diags = Diagnostics::new();
        if crate::input::parse_declaration(file, text, &mut diags).is_none() {
            return Err(Diagnostic::error(
                Code::InvalidValue,
                format!(
                    "carrying the override into {} would leave it unreadable",
                    file.display()
                ),
            )
            .help("carry it by hand: move the override's lines in the file"));
        }
    }
    let mut written = Vec::new();
    for (file, text) in &last {
        let before = std::fs::read_to_string(file).unwrap_or_default();
        if let Err(d) = crate::output::write_atomic(&base.root, file, text.as_bytes()) {
            restore(base, &written);
            return Err(d);
        }
        written.push((file.to_path_buf(), before));
    }
    Ok(written)
}

/// Puts back what [`write`] changed.
pub(crate) fn restore(base: &ProjectPaths, written: &[Written]) {
    for (file, before) in written {
        // Best effort: the error that led here is the one reported.
        let _ = crate::output::write_atomic(&base.root, file, before.as_bytes());
    }
}
