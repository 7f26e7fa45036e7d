//! Layer 0, diag (under every stage): every problem latgen finds is a [`Diagnostic`] with a
//! stable code, a severity, a place (file, 1-based line and column) and a one-line help.
//! Stages collect them instead of stopping at the first, so one run reports everything.

pub mod codes;
mod diagnostic;
mod memory;
mod parallel;
pub(crate) mod progress;

pub use diagnostic::*;
pub(crate) use memory::free_later;
pub(crate) use parallel::PIECE;
