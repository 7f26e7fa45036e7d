//! Layer 4, manifest: what latgen's output files are, for every stage that makes or reads
//! them: the output layout (the two sides, the header, file names), the routing model of a
//! tree of manifests (Kong route → bridge → Lattice rule → backend), the fields the API
//! server stores, the custom resource types, and trees of files with their parsed documents.

pub(crate) mod auth;
pub(crate) mod crd;
pub(crate) mod layout;
pub(crate) mod routing;
pub(crate) mod stored;
pub(crate) mod tree;
