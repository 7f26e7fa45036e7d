//! Layer 1, input (stage 1, load): YAML shared by every input (declarations, `latgen.yaml`,
//! `latgen.lock`): one document read into its declared type, and a parser error turned into
//! a finding with latgen's code, place and help. What a field takes comes from the type's
//! JSON Schema, the one editors check with, so that latgen and an editor refuse the same
//! documents.

mod document;
mod fields;
mod outline;
mod syntax;

pub(crate) use document::*;
