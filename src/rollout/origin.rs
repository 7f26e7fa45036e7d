//! Where a switch of dispatch mode in flight started: the lock it was planned from, found
//! in the lock's own history. A later step's base still holds the old mode's files (at
//! 10,000 apps the Kong side and the old groups, 22,000 files whose parsing was half of
//! step 2); rendered again from that lock, they are taken from the render rather than
//! parsed, as a switch's first step takes its base from the working tree's lock. The render
//! is used only where its text is the base's byte for byte: a lock found wrongly, or a
//! history that no longer holds it, costs time and never a wrong document.

use std::ops::ControlFlow;
use std::path::Path;

use crate::diag::Diagnostics;
use crate::input::config::Dispatch;
use crate::input::lock::Lock;

/// How many commits back from the base, along the first parents, the lock's versions are
/// looked through: a rollout's steps are a few merges apart.
const COMMITS_LOOKED_AT: usize = 64;

/// The lock the rollout in flight at `rev` started from, when it is a switch of dispatch
/// mode: `now` is the mode `rev`'s lock records. Going back through the lock's versions,
/// those recording a rollout are its steps; the first that records none is where it
/// started, and is the origin when it is of the other mode. None for any other rollout
/// (a move's), and when the history does not reach that far.
pub(crate) fn switch_origin(lock: &Path, rev: &str, now: Dispatch) -> Option<Lock> {
    // A version larger than a lock may be is refused, as the working tree's would be.
    let limits = (COMMITS_LOOKED_AT, crate::input::MAX_LOCK_BYTES);
    crate::rollout::git::search_versions(lock, rev, limits, |version| {
        if super::steps::recorded(&version).is_some() {
            return ControlFlow::Continue(());
        }
        let mut diags = Diagnostics::new();
        let old = crate::input::lock::parse(lock, &version, &mut diags);
        let old = old.filter(|old| !diags.has_errors() && old.dispatch != now);
        ControlFlow::Break(old)
    })
}
