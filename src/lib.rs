//! latgen packs path-routed web apps into a few shared Amazon VPC Lattice services and
//! writes the Gateway API manifests for both halves of the request path: the Lattice side
//! (workload cluster) and the Kong side (gateway cluster).
//!
//! The crate is layered in pipeline order; a module imports only from modules listed above
//! it (CONTRIBUTING.md shows how to check):
//!
//! | layer | module | job |
//! |---|---|---|
//! | 0 | [`diag`] | findings: codes, places, the human form; the progress line |
//! | 1 | [`input`] | stage 1, load: declarations, `latgen.yaml`, the lock, confined to the project |
//! | 2 | [`validate`] | stage 2: declarations become apps; settings that cannot work together |
//! | 3 | [`plan`] | stage 3: groups, rule order, service names; moves, compaction, cost |
//! | 4 | [`manifest`] | what the output files are: the layout and header, trees of files and their documents |
//! | 5 | [`render`] | stage 4: the plan becomes manifests (and the deploy kit), in memory |
//! | 6 | [`output`] | stage 5: the one module that writes files: the output folder, the lock, the kit, new files |
//! | 7 | [`pipeline`] | stages 1 to 4 in one call ([`pipeline::prepare`], [`pipeline::build`]), called from `ops` only |
//! | 8 | [`rollout`] | between two outputs: the rollout judge, safe steps, what a PR does |
//! | 9 | [`check`] | the PR gate on a built project, and following one request |
//! | 10 | [`report`] | findings and summaries as JSON, GitHub, SARIF and Markdown |
//! | 11 | `import` | a live setup's manifests become declarations and lock entries (`latgen import`) |
//! | 12 | `ops` | one module per operation: builds, compares, writes (feature `cli`) |
//! | 13 | `commands`, `cli` | one module per subcommand: its arguments; the binary's definition (feature `cli`) |

// The public surface is what the binary, the tests and the benchmarks call; a type reached
// only through a field or a signature of it stays crate-private, so that `pub` marks each
// layer's surface rather than everything a caller can hold.
#![allow(private_interfaces, private_bounds)]

pub mod check;
#[cfg(feature = "cli")]
pub mod cli;
pub mod rollout;

/// The test suite (`tests/suite/`) is built into the library's own test binary, so that a
/// change in `src/` builds one test program for it, and the tests reach the items of every
/// layer without their being public. It names the crate `latgen`, as the binary's users do.
#[cfg(test)]
extern crate self as latgen;
#[cfg(feature = "cli")]
pub mod commands;
pub mod diag;
pub(crate) mod import;
pub mod input;
pub mod manifest;
#[cfg(feature = "cli")]
pub(crate) mod ops;
pub mod output;
pub mod pipeline;
pub mod plan;
pub mod render;
pub mod report;
#[cfg(test)]
#[path = "../tests/suite/mod.rs"]
mod suite;
pub mod validate;
