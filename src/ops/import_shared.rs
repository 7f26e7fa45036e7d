//! `latgen import --env NAME` into a project whose declarations another environment's
//! import wrote: the declarations are shared, so an app declared already is taken as it
//! is when it is what this environment runs, and refused when it is not, with the
//! override that says this environment's value.

use super::shell::{Exit, Ui};
use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Sources};
use crate::import::{Imported, ImportedApp};
use crate::input::ProjectPaths;
use crate::input::app::App;

/// The imported apps the project declares already as this environment runs them (their
/// declarations are kept); Err when one is declared otherwise.
pub(crate) fn declared_alike(
    paths: &ProjectPaths,
    imported: &Imported,
    ui: Ui,
) -> Result<Vec<String>, Exit> {
    let run = crate::pipeline::prepare(paths);
    let Some(prepared) = run.prepared else {
        ui.report(&run.diags, &run.sources);
        return Err(Exit::Error);
    };
    let mut alike = Vec::new();
    for app in &imported.apps {
        let Some(declared) = prepared.apps.iter().find(|a| a.name == app.name) else {
            continue;
        };
        if let Some(field) = differs(declared, app) {
            let env = paths.env_name().unwrap_or_default();
            let help = match field {
                "host" | "paths" => format!(
                    "give {env}'s value as `overrides.{env}.{field}` in {}, then import again",
                    declared.file.display()
                ),
                // Not a field an environment may override.
                _ => format!(
                    "an app's {field} is the same in every environment: import {env}'s app under another name, or align the two"
                ),
            };
            let d = Diagnostic::error(
                Code::DuplicateApp,
                format!(
                    "app `{}` is declared already with another {field} than {env} runs",
                    app.name
                ),
            )
            .help(help);
            return Err(ui.fail(d, &Sources::default()));
        }
        alike.push(app.name.clone());
    }
    Ok(alike)
}

/// The first field of a declaration that is not what the live setup runs.
fn differs(declared: &App, live: &ImportedApp) -> Option<&'static str> {
    let mut paths: Vec<(crate::input::app::MatchKind, &str)> = (declared.paths.iter())
        .map(|p| (p.kind, p.value.as_str()))
        .collect();
    let mut live_paths: Vec<(crate::input::app::MatchKind, &str)> =
        (live.paths.iter()).map(|(k, v)| (*k, v.as_str())).collect();
    paths.sort();
    live_paths.sort();
    if declared.namespace != live.namespace {
        Some("namespace")
    } else if declared.service != live.service {
        Some("service")
    } else if u64::from(declared.port) != live.port {
        Some("service port")
    } else if declared.host != live.host {
        Some("host")
    } else if paths != live_paths {
        Some("paths")
    } else {
        None
    }
}
