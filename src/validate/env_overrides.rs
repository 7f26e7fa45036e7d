//! `overrides:` of a declaration: the environments it names must be the project's, and
//! ones the app runs in; the fields the environment being read overrides take the place of
//! the declaration's own, and are then validated as the declaration's are, so each is
//! judged in the environment it is for (`check --env all` judges every one).

use serde_saphyr::Spanned;

use super::paths::span;
use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics};
use crate::input::app::{AppDecl, PathDecl, Pos};
use crate::input::auth::Caller;
use crate::input::canary::CanaryDecl;
use crate::input::kong::KongDecl;
use crate::input::overrides::{self, AppOverride};
use crate::input::{Loaded, LoadedDecl};

/// The fields of a declaration in the environment being read: its own, or its override's.
pub(super) struct Effective<'a> {
    pub host: Option<&'a Spanned<String>>,
    pub paths: Option<&'a Spanned<Vec<Spanned<PathDecl>>>>,
    pub kong: Option<&'a KongDecl>,
    pub callers: Option<&'a Vec<Spanned<Caller>>>,
    pub canary: Option<&'a CanaryDecl>,
}

impl<'a> Effective<'a> {
    /// `decl` as environment `env` has it (None: a project without environments).
    pub fn of(decl: &'a AppDecl, env: Option<&str>) -> Effective<'a> {
        let all = decl.overrides.as_ref().map(|o| &o.value);
        let o: Option<&AppOverride> = env.and_then(|e| overrides::for_env(all, e));
        Effective {
            host: o.and_then(|o| o.host.as_ref()).or(decl.host.as_ref()),
            paths: o.and_then(|o| o.paths.as_ref()).or(decl.paths.as_ref()),
            kong: o.and_then(|o| o.kong.as_ref()).or(decl.kong.as_ref()),
            callers: o.and_then(|o| o.callers.as_ref()).or(decl.callers.as_ref()),
            canary: o.and_then(|o| o.canary.as_ref()).or(decl.canary.as_ref()),
        }
    }
}

/// Problems with the environments `overrides:` names: none in a project without
/// environments, each one the project's, and one the app runs in (`environments:`).
pub(super) fn check_names(d: &LoadedDecl, loaded: &Loaded, diags: &mut Diagnostics) {
    let Some(over) = &d.decl.overrides else {
        return;
    };
    let known = &loaded.environments;
    if known.is_empty() {
        diags.push(
            Diagnostic::error(
                Code::InvalidValue,
                "`overrides` changes the app per environment, and this project has none",
            )
            .at(span(&d.file, Pos::of(over)))
            .help("remove it, or add the environments as environments/<name>.yaml overlays of latgen.yaml"),
        );
        return;
    }
    let runs_in = |env: &str| {
        (d.decl.environments.as_ref()).is_none_or(|l| l.value.iter().any(|e| e.value == env))
    };
    for name in overrides::names(&over.value) {
        let at = span(&d.file, Pos::of(name));
        if !known.contains(&name.value) {
            let hint = crate::diag::did_you_mean(&name.value, known.iter().map(String::as_str))
                .map_or(String::new(), |s| format!("did you mean `{s}`? "));
            diags.push(
                Diagnostic::error(
                    Code::InvalidValue,
                    format!(
                        "`overrides.{}`: `{}` is not an environment of this project",
                        name.value, name.value
                    ),
                )
                .at(at)
                .help(format!("{hint}the environments are {}", known.join(", "))),
            );
        } else if !runs_in(&name.value) {
            diags.push(
                Diagnostic::error(
                    Code::InvalidValue,
                    format!(
                        "`overrides.{}` changes the app in {}, where it does not run: `environments` leaves it out",
                        name.value, name.value
                    ),
                )
                .at(at)
                .help(format!(
                    "add {} to the app's `environments`, or remove the override",
                    name.value
                )),
            );
        }
    }
}
