//! A canary in an app declaration (`canary:`): a second Service beside the app's own, which
//! an Argo Rollouts canary shifts weight to. latgen writes both as backends of each of the
//! app's Lattice rules, the stable one at weight 100 and the canary at 0, and the deploy
//! kit's Lattice Application ignores exactly those weights, so a rollout in progress is not
//! reverted by the next sync.

use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;

/// `canary:` as written.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct CanaryDecl {
    /// The canary Service, in the app's namespace: the Rollout's `canaryService`. The app's
    /// own `service` is its `stableService`.
    #[schemars(with = "String")]
    pub service: Spanned<String>,
    /// The canary Service's port; defaults to the app's service port.
    #[schemars(with = "Option<u32>", range(min = 1, max = 65535))]
    pub port: Option<Spanned<u32>>,
    /// `none` acknowledges that new canary pods get no Lattice readiness gate. The AWS
    /// controller injects the gate only into a pod created while a Service of a Lattice route
    /// already selects it, which a canary Service never does for its new pods; and the gate
    /// cannot be put in the Rollout's pod template instead: Argo Rollouts points the canary
    /// Service at the new pods only once one is available, which the gate would hold off
    /// until Lattice sees the pod, which it cannot before the Service selects it. Without
    /// this, `check` warns (`canary-readiness-gate`).
    #[schemars(with = "Option<ReadinessGate>")]
    pub readiness_gate: Option<Spanned<ReadinessGate>>,
}

/// What a canary's new pods have for the Lattice readiness gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) enum ReadinessGate {
    /// No gate, knowingly: the Rollout pauses before its first `setWeight` for as long as
    /// Lattice takes to find a new target healthy, or the team accepts errors meanwhile.
    None,
}

/// A validated canary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Canary {
    pub service: String,
    pub port: u16,
    /// None when the declaration says nothing (a warning in `check`).
    pub readiness_gate: Option<ReadinessGate>,
}

/// The Lattice weight of the stable backend of a rule with a canary, as committed.
pub(crate) const STABLE_WEIGHT: u32 = 100;
/// The Lattice weight of the canary backend, as committed.
pub(crate) const CANARY_WEIGHT: u32 = 0;
