//! Layer 12, ops: one module per operation the binary runs, each owning it from the
//! project's paths to what it prints and writes, as cargo's `ops` do: it starts the shared
//! stages ([`crate::pipeline`], called from here only), hands what they built to the
//! layers that judge it ([`crate::check`], [`crate::rollout`]), compares with what is on
//! disk and writes through [`crate::output`]. `commands` turns the command line into these
//! calls. `shell` (the terminal and the exit) and `project` (the paths, the shared stages
//! with their problems reported) are what every operation shares.

pub(crate) mod check_output;
pub(crate) mod import_membership;
pub(crate) mod import_shared;
pub(crate) mod latgen_check;
pub(crate) mod latgen_cost;
pub(crate) mod latgen_deploy;
pub(crate) mod latgen_import;
pub(crate) mod latgen_init;
pub(crate) mod latgen_manifests;
pub(crate) mod latgen_move;
pub(crate) mod latgen_plan;
pub(crate) mod latgen_promote;
pub(crate) mod latgen_render;
pub(crate) mod latgen_render_base;
pub(crate) mod latgen_status;
pub(crate) mod latgen_trace;
pub(crate) mod plan_observed;
pub(crate) mod project;
pub(crate) mod promote_carry;
pub(crate) mod shell;
