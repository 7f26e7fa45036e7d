//! The test suite: every ordinary test file is a module of this one binary, so a change in
//! `src/` builds and links one test program, not two dozen. The data-driven suites with a
//! harness of their own (`check`, `corpus`, `help`, `untrusted`) stay separate binaries.
//! Run one module with a filter: `cargo test suite::golden::`.

mod action;
/// The benchmark's apps as a live setup on the domains Lattice assigned, for the import test.
#[path = "../../bench/assigned_export.rs"]
mod assigned_export;
mod canary;
mod cli;
mod codes;
mod comment;
mod comment_sections;
mod common;
mod crd;
mod deploy;
mod ecosystem;
mod env_overrides;
mod environments;
mod everyday;
mod explain;
mod formats;
/// The benchmark's input generator, for the tests of large projects.
#[path = "../../bench/generate.rs"]
mod generate;
mod golden;
mod house;
mod import;
mod import_assigned;
mod interrupt;
mod kubernetes;
mod layers;
mod observed;
mod placement;
mod planning;
mod previews;
mod project;
mod prometheus;
mod proof;
mod properties;
mod rebalance;
mod reference;
mod rollout;
mod rollout_adopted;
mod rollout_callers;
mod routing;
mod schema;
mod schema_files;
mod service_names;
mod stored;
mod switch_origin;
mod templates;
mod trace_auth;
mod trees;
mod widening;
mod write;
mod yamllint;
