//! A project through the first three stages: its settings, its apps and their plan, with
//! what the lock says of the rollout in flight. Every command after the plan starts from it.

use crate::input::app::App;
use crate::input::config::Config;
use crate::input::lock;
use crate::plan::Plan;

/// A project loaded, validated and planned.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub config: Config,
    pub apps: Vec<App>,
    pub plan: Plan,
    /// Moves the lock had in flight that this plan carries to their end (only with
    /// [`crate::pipeline::build_final`]): app, the group it is leaving, and the move.
    pub finished_moves: Vec<(String, u32, lock::Move)>,
    /// The rollout the lock file records: the output is that step of a change shipped in
    /// several PRs.
    pub rollout: Option<lock::Rollout>,
}

impl Prepared {
    /// The lock file this plan needs.
    pub fn lock_text(&self) -> String {
        lock::serialize(&self.plan.lock)
    }
}
