//! Changing groups without downtime: `move` (one app, three PR-sized steps), `plan` (the
//! fewest moves that bring the group count down to its lower bound) and `cost`.
//!
//! A move keeps the old rule alive until the new path is live: (1) the Lattice side adds
//! the app's rules to the new group while the old group keeps them, (2) the Kong side points
//! the bridge and the rewrite host at the new group, (3) the Lattice side drops the old
//! rules. The lock records the step; `render` writes the full state of the current step.

mod compaction;
mod cost;
mod moves;
mod separation;

pub use compaction::{Compaction, compaction};
pub use cost::{Cost, HOURS_PER_MONTH, cost, dollars};
pub use moves::{MoveResult, move_app};
pub use separation::{OrderDependentPair, separation};

use crate::codes::Code;
use crate::diag::Diagnostic;

/// A request `move` or `plan` turns down.
fn refuse(message: String, help: impl Into<String>) -> Diagnostic {
    Diagnostic::error(Code::MoveRefused, message).help(help)
}
