//! Layer 1, input (stage 1 of the pipeline, load): read `apps/` (recursively, in sorted
//! order), `latgen.yaml` and `latgen.lock` into their declared types, keeping positions for
//! diagnostics. Nothing here judges the values; that is `validate`'s job.

pub(crate) mod app;
pub(crate) mod auth;
pub(crate) mod beneath;
pub(crate) mod canary;
pub(crate) mod config;
pub(crate) mod confine;
pub(crate) mod environments;
pub(crate) mod json_schemas;
pub(crate) mod kong;
mod load;
pub mod lock;
pub(crate) mod observability;
pub(crate) mod overrides;
pub(crate) mod places;
pub(crate) mod previews;
pub(crate) mod quotas;
pub(crate) mod yaml;

pub use load::*;
