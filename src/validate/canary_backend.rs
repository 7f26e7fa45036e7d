//! `canary:` in a declaration: a Service name and port Lattice can target, and not the
//! app's own backend (a rule with the same backend twice splits nothing).

use std::path::Path;

use serde_saphyr::Spanned;

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::app::{Pos, ServiceDecl};
use crate::input::canary::{Canary, CanaryDecl};
use latgen_sim::platform;

fn at<T>(file: &Path, s: &Spanned<T>) -> Span {
    Span::new(file, Pos::of(s).line, Pos::of(s).column)
}

/// The validated canary, or None (with findings) when `canary:` is unusable.
pub(crate) fn validate_canary(
    file: &Path,
    stable: &ServiceDecl,
    decl: Option<&CanaryDecl>,
    diags: &mut Diagnostics,
) -> Option<Canary> {
    let decl = decl?;
    let before = diags.len();
    let name = &decl.service.value;
    if let Some(p) = platform::dns1123_label_problem(name) {
        diags.push(
            Diagnostic::error(
                Code::InvalidService,
                format!("canary service name `{name}` {p}"),
            )
            .at(at(file, &decl.service))
            .help("give the name of the Rollout's canaryService, a Service in the app's namespace"),
        );
    }
    let port = decl.port.as_ref().map_or(stable.port.value, |p| p.value);
    if let Some(p) = &decl.port
        && !(1..=65535).contains(&p.value)
    {
        diags.push(
            Diagnostic::error(
                Code::InvalidPort,
                format!("port {} is out of range", p.value),
            )
            .at(at(file, p))
            .help("give the canary Service's port, 1 to 65535"),
        );
    }
    if *name == stable.name.value && port == stable.port.value {
        diags.push(
            Diagnostic::error(
                Code::InvalidValue,
                format!("the canary service `{name}` port {port} is the app's own service"),
            )
            .at(at(file, &decl.service))
            .help(
                "name the Rollout's canaryService, a second Service beside the app's stableService",
            ),
        );
    }
    (diags.len() == before).then(|| Canary {
        service: name.clone(),
        port: port as u16,
        readiness_gate: decl.readiness_gate.as_ref().map(|g| g.value),
    })
}
