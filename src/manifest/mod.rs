//! Layer 4, manifest: what latgen's output files are, for every stage that makes or reads
//! them: the output layout (the two sides, the header, file names) and trees of files with
//! their parsed documents. What the documents mean to the platform (routing, auth, the
//! stored form) is the `latgen_sim` crate's.

pub(crate) mod layout;
pub(crate) mod tree;
