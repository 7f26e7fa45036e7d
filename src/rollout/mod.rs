//! Layer 8, rollout: what lies between two outputs (a base revision's and this one): the
//! rollout judge that says whether a state is safe whichever side goes live first (its states
//! kept as a base and edits, `overlay`; the units it leaves for a later step unjudged,
//! `deferred`), the safe steps `render --base` writes, the quota and priority warnings of a
//! change, what a PR does (the summary), and reading a base revision from Git (and the lock a
//! switch in flight started from, `origin`); a step's monitoring, which follows its Kong side
//! (`follow_kong`).

pub(crate) mod addresses;
pub(crate) mod auth_safety;
mod deferred;
pub(crate) mod follow_kong;
pub(crate) mod git;
pub(crate) mod held;
pub(crate) mod judge;
pub(crate) mod origin;
mod overlay;
pub(crate) mod scope;
pub(crate) mod steps;
pub(crate) mod summary;
pub(crate) mod warnings;
