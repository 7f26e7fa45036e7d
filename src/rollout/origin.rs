//! Where a switch of dispatch mode in flight started: the lock it was planned from, found
//! in the lock's own history. A later step's base still holds the old mode's files (at
//! 10,000 apps the Kong side and the old groups, 22,000 files whose parsing was half of
//! step 2); rendered again from that lock, they are taken from the render rather than
//! parsed, as a switch's first step takes its base from the working tree's lock. The render
//! is used only where its text is the base's byte for byte: a lock found wrongly, or a
//! history that no longer holds it, costs time and never a wrong document.

use std::path::Path;

use crate::diag::Diagnostics;
use crate::input::config::Dispatch;
use crate::input::lock::Lock;

/// How many versions of the lock, up to the base's, are looked through: a switch's first
/// step changes it, and an app added between two steps changes it again.
const VERSIONS_LOOKED_AT: usize = 4;

/// The lock the switch in flight at `rev` started from, `text` being `rev`'s lock and
/// `now` the dispatch mode it records: of the lock's last versions up to `rev`, the newest
/// planned for the other mode. None when none is (a move's rollout).
pub(crate) fn switch_origin(lock: &Path, rev: &str, (text, now): (&str, Dispatch)) -> Option<Lock> {
    // Only a header-mode lock has a top-level `dispatch:` line: a version is parsed only
    // where that differs from `rev`'s (in a move's rollout, none is), and then judged by
    // what it parses to.
    let marked = |t: &str| t.lines().any(|l| l.starts_with("dispatch:"));
    let other_mode = !marked(text);
    // A version larger than a lock may be is refused as the working tree's would be.
    let limits = (VERSIONS_LOOKED_AT, crate::input::MAX_LOCK_BYTES);
    crate::rollout::git::find_version(lock, rev, limits, |version| {
        if marked(&version) != other_mode {
            return None;
        }
        let mut diags = Diagnostics::new();
        let old = crate::input::lock::parse(lock, &version, &mut diags)?;
        (!diags.has_errors() && old.dispatch != now).then_some(old)
    })
}
