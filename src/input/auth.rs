//! Who may call an app: the `auth:` section of `latgen.yaml` and the `callers:` of an app
//! declaration. Under `auth.mode: iam`, each Lattice service gets an IAM auth policy that
//! allows each app's callers on exactly that app's requests (see [`crate::plan::policies`]).

use serde::{Deserialize, Serialize};

/// Whether latgen writes Lattice auth policies.
#[derive(
    Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub(crate) enum AuthMode {
    /// No auth policy: the Lattice services keep auth type `NONE` (or what was set by hand).
    #[default]
    None,
    /// An `IAMAuthPolicy` on every Lattice route latgen writes (auth type `AWS_IAM`).
    Iam,
}

pub(crate) use latgen_sim::iam::Caller;

/// The `auth:` section of `latgen.yaml`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub(crate) struct AuthConfig {
    /// `none` (the default): no auth policies. `iam`: an IAMAuthPolicy on every Lattice
    /// route, allowing each app's callers on its own paths only.
    pub mode: AuthMode,
    /// The AWS account id (12 digits) of the Lattice services. The policies name their
    /// resources in full (`arn:aws:vpc-lattice:<region>:<account>:service/svc-…/<path>`):
    /// a resource that starts with `*` would also match a longer path that ends like it
    /// (`*/cart` matches `/admin/cart`), which reaches another app of the group.
    pub account: Option<String>,
    /// The AWS Region of the Lattice services, e.g. `ap-northeast-2`.
    pub region: Option<String>,
    /// How Kong calls Lattice: the caller every app allows, since every app has a Kong
    /// route. Usually `{ vpcs: [<the gateway cluster's VPC>] }` for Kong's unsigned
    /// requests.
    pub kong: Option<Caller>,
    /// More callers every app allows (a monitoring role, the organization).
    pub callers: Vec<Caller>,
    /// The service network has an auth policy of its own (auth type `AWS_IAM`) that admits
    /// only your callers. A Lattice service starts with auth type `NONE` until the
    /// controller has attached its policy, and goes back to `NONE` when the policy is
    /// deleted: with this policy behind it, such a service is never open to everyone.
    pub service_network_policy: bool,
}

impl AuthConfig {
    pub fn is_on(&self) -> bool {
        self.mode == AuthMode::Iam
    }

    /// What probing the project's auth policies needs (how Kong calls Lattice, the
    /// account and Region in the services' ARNs); None when auth is off or incomplete.
    pub fn probe(&self) -> Option<latgen_sim::iam::AuthProbe> {
        if !self.is_on() {
            return None;
        }
        let (kong, region, account) = (
            self.kong.as_ref()?,
            self.region.as_ref()?,
            self.account.as_ref()?,
        );
        Some(latgen_sim::iam::AuthProbe::new(kong, region, account))
    }
}
