//! `overrides:` in an app declaration: what one environment changes of it. An app that is
//! the same everywhere but for its host in staging, or a path change tried in staging
//! first, says so in its own file, beside what it overrides, rather than in a second
//! declaration that would have to be kept alike by hand.

use std::collections::HashMap;

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::input::app::PathDecl;
use crate::input::canary::CanaryDecl;
use crate::input::kong::KongDecl;

/// The fields an environment may override, each replacing the declaration's own whole (a
/// list or a map is not merged: what an environment gets is what its override says).
pub(crate) const OVERRIDE_FIELDS: &[&str] = &["host", "paths", "kong", "callers", "canary"];

/// `overrides.<environment>` as written.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct AppOverride {
    /// The app's host in this environment (a host-routed app's staging domain).
    #[schemars(with = "Option<String>")]
    pub host: Option<Spanned<String>>,
    /// The app's paths in this environment, in place of `paths`.
    #[schemars(with = "Option<Vec<PathDecl>>")]
    pub paths: Option<Spanned<Vec<Spanned<PathDecl>>>>,
    /// The app's Kong settings in this environment, in place of `kong`.
    pub kong: Option<KongDecl>,
    /// Who may call the app in this environment, in place of `callers`.
    #[schemars(with = "Option<Vec<crate::input::auth::Caller>>")]
    pub callers: Option<Vec<Spanned<crate::input::auth::Caller>>>,
    /// The app's canary in this environment, in place of `canary`.
    pub canary: Option<CanaryDecl>,
}

/// `overrides:` as written: environment name → what it changes. Looked up by name and
/// reported in the file's order, never iterated in the map's.
pub(crate) type Overrides = HashMap<Spanned<String>, AppOverride>;

/// The override `overrides` holds for environment `env`, if any.
pub(crate) fn for_env<'a>(overrides: Option<&'a Overrides>, env: &str) -> Option<&'a AppOverride> {
    overrides?
        .iter()
        .find(|(name, _)| name.value == env)
        .map(|(_, o)| o)
}

/// The environment names `overrides` holds, in the order the file gives them.
pub(crate) fn names(overrides: &Overrides) -> Vec<&Spanned<String>> {
    let mut names: Vec<&Spanned<String>> = overrides.keys().collect();
    names.sort_by_key(|n| (n.referenced.line(), n.referenced.column()));
    names
}
