//! `latgen schema`: the JSON Schema of an input, for editors.

use crate::ops::shell::{Exit, to_stdout};

#[derive(Debug, clap::Args)]
pub(crate) struct SchemaArgs {
    /// The input the schema describes: app (a declaration, apps/**/<name>.yaml), config
    /// (the project settings, latgen.yaml) or preview (previews/<file>.yaml).
    #[arg(value_enum, default_value_t = crate::input::json_schemas::Kind::App, hide_possible_values = true)]
    pub kind: crate::input::json_schemas::Kind,
}

pub(crate) fn run(args: &SchemaArgs) -> Exit {
    to_stdout(args.kind.text().as_bytes())
}
