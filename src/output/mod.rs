//! Layer 6, output (stage 5): the one module that reads and writes the output folder. It
//! reads the tree as it is (`reading.rs`), tells latgen's files (by their header) from others and
//! manifests from other files, works out the change set to the rendered state (the lock
//! file included), and either shows it as a diff (`render --check`, `check`) or applies it,
//! all or nothing. Only files that differ are written (unchanged files keep their mtime, so
//! Git and Argo CD see no churn); generated files no longer wanted are removed; files
//! latgen did not generate (no header) are never touched. `--check` computes the same
//! changes and shows them as a unified diff instead. Every other file latgen writes goes
//! through here too: a lock or a file of the deploy kit on its own ([`write_atomic`]), and
//! the new files of `init` and `import` and the pages of `man --out` (`additions.rs`), and
//! an environment's override carried to another in a declaration (`declaration_edit.rs`).

mod additions;
pub(crate) mod declaration_edit;
mod folder;
mod journal;
pub(crate) mod previous;
mod reading;
mod transaction;

pub use folder::*;
pub use reading::read_tree;
pub(crate) use reading::{read_tree_like, read_tree_while};
// The error of a failed file operation, as every module of this folder says it.
use crate::input::beneath::io_error;
