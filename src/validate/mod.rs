//! Layer 2, validate (stage 2): turn declarations into [`App`]s, checking every value
//! against what Kubernetes, Gateway API, Lattice and Kong accept, and the apps against each
//! other (unique names, no path claimed twice). All problems are collected.
//!
//! `declarations` checks each declaration and makes the apps; `paths` its routing values;
//! `claims` the apps against each other; `env_overrides` what an environment changes of a declaration; `settings` `latgen.yaml` on its own; [`auth`],
//! `canary`, `kong` and [`previews`] their parts; [`compat`] settings that cannot work
//! together.
//!
//! [`App`]: crate::input::app::App

mod canary_backend;
mod claims;
pub(crate) mod compat;
mod declarations;
mod env_overrides;
mod kong_settings;
mod paths;
pub(crate) mod preview_files;
pub(crate) mod principals;
mod settings;

pub use declarations::validate;
