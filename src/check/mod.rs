//! Layer 9, check: `latgen check`, the PR gate, on a project the operation built (load →
//! validate → plan → render, in memory) and the output folder as committed: what only the
//! committed tree can show: staleness against what `render` writes (`staleness.rs`), rule
//! shadowing and unresolved routes in the manifests as committed, hand edits and custom
//! templates included (`committed.rs`, `routes.rs`), and — with a base revision — whether
//! either half of the change could go live first and break routing (`rollout.rs`), each
//! finding placed where the change shows it (`judged.rs`); `gate.rs` runs them all. Also
//! following one request through the committed manifests (`follow.rs`, `trace_output.rs`),
//! with the caller its auth policy sees (`trace_auth.rs`), and who may call an app
//! (`callers.rs`).

pub(crate) mod access;
pub(crate) mod across_environments;
pub(crate) mod callers;
mod canary_routes;
mod committed;
pub(crate) mod follow;
mod gate;
mod judged;
mod kit_changes;
pub(crate) mod names;
mod plugins;
mod preview_expiry;
mod rollout;
mod route_findings;
mod staleness;
pub(crate) mod trace_auth;
pub(crate) mod trace_output;

pub(crate) use gate::{CheckOptions, CheckReport, RolloutStep, check};
pub(crate) use staleness::same_owned;
