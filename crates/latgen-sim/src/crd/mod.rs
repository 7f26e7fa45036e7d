//! Layer 4, manifest: typed custom resources of the controllers latgen writes for,
//! generated from each controller's own CRD (kept under `tests/data/`) the kube-rs way: a
//! `kube::CustomResource` derive, schema derived, no client.
//!
//! The modules below (the AWS Gateway API Controller's TargetGroupPolicy and IAMAuthPolicy)
//! are generated, not written: to follow a new CRD, replace the file under `tests/data/`,
//! regenerate from the repository root and format, e.g.
//!
//! ```sh
//! kopium --schema=derived --docs \
//!     -f tests/data/aws/application-networking.k8s.aws_targetgrouppolicies.yaml \
//!     > crates/latgen-sim/src/crd/targetgrouppolicy.rs && cargo fmt
//! kopium --schema=derived --docs \
//!     -f tests/data/aws/application-networking.k8s.aws_iamauthpolicies.yaml \
//!     > crates/latgen-sim/src/crd/iamauthpolicy.rs && cargo fmt
//! ```
//!
//! `tests/suite/crd.rs` fails when a type and its CRD disagree. The types do not refuse unknown
//! fields themselves: latgen's read-back of what it renders does, at any depth.

/// The AWS Gateway API Controller's TargetGroupPolicy
/// (`application-networking.k8s.aws/v1alpha1`), from its v2.1.3 CRD.
// Generated whole: latgen reads the spec, not the status the controller writes.
#[allow(dead_code)]
pub mod targetgrouppolicy;

/// The AWS Gateway API Controller's IAMAuthPolicy
/// (`application-networking.k8s.aws/v1alpha1`), from its v2.1.3 CRD; kopium names its root
/// type `IamAuthPolicy`.
// Generated whole: latgen reads the spec, not the status the controller writes.
#[allow(dead_code)]
pub mod iamauthpolicy;
