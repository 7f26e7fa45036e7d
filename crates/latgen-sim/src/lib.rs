//! latgen-sim: a model of the platform that latgen writes for, built from the platforms'
//! own sources and documentation, with no knowledge of latgen's inputs, plan or output
//! layout. latgen's check, rollout judge, trace and render read-back use it, and so do its
//! tests as their oracle.
//!
//! | module | what it models |
//! |---|---|
//! | [`platform`] | the facts: limits, path rules, how Gateway API, Lattice and Kong match, Lattice service names, AWS partitions |
//! | [`routing`] | a tree of manifests as a network (Kong route → bridge → Lattice rule → backend): [`routing::parse`] reads the documents, [`routing::model`] holds them, [`routing::resolve`] follows a request |
//! | [`iam`] | the part of IAM policy evaluation that Lattice auth policies use, and the search for a caller a policy wrongly lets in |
//! | [`stored`] | what the API server adds to an object before storing it |
//! | [`crd`] | the AWS Gateway API Controller's custom resources, typed from their CRDs |

pub mod crd;
pub mod iam;
mod identifiers;
pub mod platform;
mod position;
pub mod routing;
pub mod stored;

pub use position::Pos;
