//! `latgen schema`: the JSON Schema of an input, for editors.

use super::{Outcome, to_stdout};

#[derive(Debug, clap::Args)]
pub struct SchemaArgs {
    /// The input the schema describes: app (a declaration, apps/**/<name>.yaml) or config
    /// (the project settings, latgen.yaml).
    #[arg(value_enum, default_value_t = crate::schema::Kind::App, hide_possible_values = true)]
    pub kind: crate::schema::Kind,
}

pub fn run(args: &SchemaArgs) -> Outcome {
    to_stdout(args.kind.text().as_bytes())
}
