//! Layer 8, rollout: what a PR does, for people reviewing it: apps added, removed and moved,
//! files changed per side, Lattice services and their monthly cost before and after, and
//! where the PR stands in its rollout; who gains or loses access, and
//! what monitoring and the deploy kit change. Worked out from the output trees alone (the base's
//! and the PR's), so it describes what Argo CD will apply, hand edits included.

pub(crate) mod access_change;
pub(crate) mod apps;
mod describe;
pub(crate) mod monitoring_change;

pub(crate) use describe::*;
