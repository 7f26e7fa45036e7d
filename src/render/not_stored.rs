//! Warnings for rendered objects that leave out a field the API server defaults: the live
//! object then always differs from the manifest, and Argo CD shows the Application
//! OutOfSync right after every sync. Only a custom template can cause one; the built-in
//! templates write every such field (`tests/suite/stored.rs`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::{Rendered, Templates};
use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};

/// One warning per template and field left out, at the template, naming the field, the
/// value the API server stores and the objects it concerns.
pub(crate) fn not_stored_findings(output: &Rendered, templates: &Templates) -> Diagnostics {
    // (template, field, value) → the files that leave it out, in file order.
    let mut fields: BTreeMap<(&str, String, String), Vec<&PathBuf>> = BTreeMap::new();
    for object in &output.not_stored {
        for added in &object.added {
            let files = fields
                .entry((object.template, added.field(), added.value.to_string()))
                .or_default();
            if files.last() != Some(&&object.file) {
                files.push(&object.file);
            }
        }
    }
    let mut diags = Diagnostics::new();
    for ((template, field, value), files) in fields {
        let objects = match files.len() {
            1 => files[0].display().to_string(),
            n => format!("{n} objects ({}, …)", files[0].display()),
        };
        diags.push(
            Diagnostic::warning(
                Code::NotStoredForm,
                format!(
                    "template {template} leaves out `{field}`, which the API server sets to `{value}`: Argo CD shows {objects} OutOfSync after every sync"
                ),
            )
            .at(Span::file(templates.file_of(template)))
            .help(format!(
                "write `{field}` with the value `{value}` in the template, as the built-in one does"
            )),
        );
    }
    diags
}
