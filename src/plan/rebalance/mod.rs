//! Layer 3, plan (stage 3): changing groups without downtime: `move` (one app, three
//! PR-sized steps), `plan` (the fewest moves that bring the group count down to its lower
//! bound) and `cost`.
//!
//! A move keeps the old rule alive until the new path is live: (1) the Lattice side adds
//! the app's rules to the new group while the old group keeps them, (2) the Kong side points
//! the bridge and the rewrite host at the new group, (3) the Lattice side drops the old
//! rules. The lock records the step; `render` writes the full state of the current step.

pub(crate) mod compaction;
pub(crate) mod consolidation;
pub(crate) mod monthly_cost;
pub(crate) mod moves;
pub(crate) mod promotion;
pub(crate) mod separation;
