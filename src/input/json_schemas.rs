//! JSON Schemas of the inputs, derived from the types that read them, so that editors
//! (yaml-language-server) complete and check `apps/*.yaml` and `latgen.yaml` as latgen does.
//! Draft-07, the newest draft yaml-language-server reads.

use crate::input::app::AppDecl;
use crate::input::config::Config;

/// Which input a schema describes. (Plain comments on the values: a described value would
/// make clap print `schema --help` in its long layout; `schema`'s help says what they are.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub(crate) enum Kind {
    // An app declaration, `apps/**/<name>.yaml`.
    App,
    // The project settings, `latgen.yaml`.
    Config,
    // A preview, `previews/<file>.yaml`.
    Preview,
}

impl Kind {
    #[cfg(test)]
    pub const ALL: [Kind; 3] = [Kind::App, Kind::Config, Kind::Preview];

    /// Where a project keeps the schema, relative to its root.
    pub fn file(self) -> &'static str {
        match self {
            Kind::App => "schemas/app.schema.json",
            Kind::Config => "schemas/latgen.schema.json",
            Kind::Preview => "schemas/preview.schema.json",
        }
    }

    pub fn schema(self) -> serde_json::Value {
        // The same schema the loader reads its field rules from.
        match self {
            Kind::App => crate::input::yaml::schema_of::<AppDecl>(),
            Kind::Config => crate::input::yaml::schema_of::<Config>(),
            Kind::Preview => crate::input::yaml::schema_of::<crate::input::previews::PreviewDecl>(),
        }
    }

    /// The schema as written to disk: pretty JSON and a final newline, so that the
    /// committed files diff line by line.
    pub fn text(self) -> String {
        let mut text =
            serde_json::to_string_pretty(&self.schema()).expect("a JSON value serializes");
        text.push('\n');
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_are_draft_07() {
        for kind in Kind::ALL {
            let schema = kind.schema();
            assert_eq!(
                schema["$schema"], "http://json-schema.org/draft-07/schema#",
                "{kind:?}"
            );
            assert!(schema.get("$defs").is_none(), "draft-07 uses definitions");
        }
    }

    #[test]
    fn unknown_fields_are_refused() {
        assert_eq!(Kind::App.schema()["additionalProperties"], false);
        assert_eq!(Kind::Config.schema()["additionalProperties"], false);
        assert_eq!(Kind::Preview.schema()["additionalProperties"], false);
    }
}
