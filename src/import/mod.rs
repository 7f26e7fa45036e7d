//! Layer 11, import: `latgen import`, the declarations and the lock of a live setup, read from its manifests
//! (Lattice HTTPRoutes, Kong HTTPRoutes, their ExternalName bridges, TargetGroupPolicies, IAMAuthPolicies).
//! Each app keeps the Lattice route it has, under its name (which is its Lattice service's
//! name): the lock's `adopted:` says so, and render writes that route as it is until the
//! app is consolidated into a group. A route that already is one of the project's groups
//! (its name, namespace and domain) puts its apps in that group. What cannot be expressed
//! is refused object by object, at its file and line.

mod adopt;
mod live_auth;
mod read;
mod routes;
pub(crate) mod write;

pub(crate) use adopt::*;
