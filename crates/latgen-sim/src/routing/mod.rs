//! Where a request goes, computed from the manifests themselves: Kong picks a route with
//! Gateway API semantics (host, then Exact over the longest segment-wise prefix), the route
//! rewrites the Host and sends the request to its bridge Service, whose ExternalName names
//! a Lattice service; Lattice takes that service's first rule whose path matches as a
//! string. This model is behind the routing tests, `check`'s consistency and shadowing
//! findings, and the safety of a change across the two Argo CD Applications.
//!
//! Manifests are read into a light model that keeps the line of every path, so findings can
//! point into the committed files (hand edits included); fields it does not need are ignored.
//!
//! - [`parse`]: manifests become the model, positions kept;
//! - [`model`]: the routes, bridges, auth policies and the network they make;
//! - [`resolve`]: where a request goes, and what a route's rule order decides;
//! - [`probes`]: the requests worth following through a network;
//! - [`reroutable`]: which requests a change of a few files can reroute.

mod model;
mod parse;
mod probes;
mod reroutable;
mod resolve;

pub use model::*;
pub use parse::*;
pub use reroutable::*;
pub use resolve::*;
