//! One YAML document read into its declared type against its JSON Schema, and a parser's error turned into a finding with latgen's code, place and help.

use super::{fields, outline, syntax};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span, did_you_mean};
use fields::Field;
use outline::{Outline, Shape, show_path};

/// Parses one YAML document into `T`, turning a parser error into a diagnostic.
pub(crate) fn parse_yaml<T: DeserializeOwned + JsonSchema>(
    file: &Path,
    text: &str,
    fields: &[&str],
    diags: &mut Diagnostics,
) -> Option<T> {
    let typed = serde_saphyr::from_str::<T>(text);
    // Only a text with a quote can hold a quoted number. Read without the quotes, the
    // number is taken (then the quoted text looks like one) or refused; a quoted path is
    // neither, and paths are what declarations most often quote.
    if text.contains(['"', '\'']) && (typed.is_err() || may_quote_a_number(text)) {
        let quoted = quoted_scalars(file, &Outline::of(text), &schema_cached::<T>());
        if !quoted.is_empty() {
            diags.extend(quoted.into_iter().collect());
            return None;
        }
    }
    match typed {
        Ok(v) => Some(v),
        Err(e) => {
            diags.push(yaml_error::<T>(file, text, &e, fields));
            None
        }
    }
}

/// Whether some text between two quotes of `text` (of either kind: the pairs a quote in a
/// comment or in a scalar of the other kind shifts are all tried) could be a number or a
/// boolean: empty, or a word of letters, digits and `+-._` (hex, octal, `.inf`, `yes`), or
/// with an escape that could spell one. A quoted scalar with no quote inside is one of
/// these texts; one with a quote inside is no number.
fn may_quote_a_number(text: &str) -> bool {
    let pieces: Vec<&str> = text.split(['"', '\'']).collect();
    let between = pieces
        .get(1..pieces.len().saturating_sub(1))
        .unwrap_or_default();
    between.iter().any(|piece| {
        let word = piece.trim();
        piece.contains('\\')
            || word.is_empty()
            || (word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-._".contains(c))
                && word.chars().any(|c| c.is_ascii_alphanumeric()))
    })
}

/// The JSON Schema (draft-07) of an input type: what `latgen schema` prints.
pub(crate) fn schema_of<T: JsonSchema>() -> Value {
    schemars::generate::SchemaSettings::draft07()
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// [`schema_of`], made once per type.
fn schema_cached<T: JsonSchema>() -> Arc<Value> {
    static SCHEMAS: Mutex<BTreeMap<String, Arc<Value>>> = Mutex::new(BTreeMap::new());
    let mut schemas = SCHEMAS.lock().unwrap_or_else(|e| e.into_inner());
    schemas
        .entry(T::schema_id().into_owned())
        .or_insert_with(|| Arc::new(schema_of::<T>()))
        .clone()
}

/// Quoted values where the schema takes a number or a boolean. YAML reads `"8080"` as
/// text, and so does an editor checking the schema; the typed reader would turn it into a
/// number, so latgen refuses it too.
fn quoted_scalars(file: &Path, outline: &Outline, schema: &Value) -> Vec<Diagnostic> {
    if outline.error.is_some() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, node) in outline.nodes.iter().enumerate() {
        let Shape::Scalar { text, quoted: true } = &node.shape else {
            continue;
        };
        let Some(path) = outline.path(i).filter(|_| !node.is_key) else {
            continue;
        };
        let Some(kind) = Field::at(schema, &path).and_then(|f| f.scalar_kind()) else {
            continue;
        };
        let field = show_path(&path);
        let key = node.key.as_deref().unwrap_or(&field);
        out.push(
            Diagnostic::error(
                Code::InvalidType,
                format!("`{field}` is quoted, so it is text (\"{text}\"); it takes {kind}"),
            )
            .at(Span::new(file, node.line, node.column))
            .help(format!("remove the quotes: `{key}: {text}`")),
        );
    }
    out
}

fn yaml_error<T: JsonSchema>(
    file: &Path,
    text: &str,
    e: &serde_saphyr::Error,
    top_fields: &[&str],
) -> Diagnostic {
    let outline = Outline::of(text);
    if let Some(err) = &outline.error {
        return syntax::syntax(file, text, &outline, err);
    }
    let mut message = e.without_snippet().to_string();
    if let Some(i) = message.rfind(" at line ") {
        message.truncate(i);
    }
    let mut span = match e.location() {
        Some(loc) => Span::at(file, &loc),
        None => Span::file(file),
    };
    let (code, help) = if let Some(field) = between(&message, "unknown field `", "`") {
        if let Some(d) = syntax::dedented_unknown(file, &outline, &schema_cached::<T>(), &span) {
            return d;
        }
        (
            Code::UnknownField,
            unknown_field_help(&message, field, top_fields),
        )
    } else if let Some(field) = between(&message, "missing field `", "`") {
        if let Some(d) = syntax::dedented_missing(file, &outline, &span, field) {
            return d;
        }
        // The parser points at the mapping's last key; a missing top-level field belongs to
        // the whole document, so point at its first line instead.
        if top_fields.contains(&field)
            && let Some(line) = first_content_line(text)
        {
            span = Span::new(file, line, 1);
        }
        (Code::MissingField, format!("add `{field}`"))
    } else if let Some(value) = between(&message, "unknown variant `", "`") {
        // An enum's value that is none of its variants: serde lists them.
        let allowed = message
            .split_once("expected one of ")
            .or_else(|| message.split_once("expected "))
            .map_or(String::new(), |(_, a)| a.to_string());
        message = format!("`{value}` is not one of the values this field takes ({allowed})");
        (Code::InvalidValue, format!("use one of: {allowed}"))
    } else if message.starts_with("duplicate mapping key") {
        let key = message
            .trim_start_matches("duplicate mapping key: ")
            .split(',')
            .next()
            .unwrap_or("")
            .to_string();
        message = format!("`{key}` is given twice");
        (Code::DuplicateKey, "keep one of them".to_string())
    } else if let Some(d) = scalar_error(file, &outline, &schema_cached::<T>(), &span) {
        return d;
    } else {
        let at_start = span.line <= first_content_line(text).unwrap_or(1);
        let (code, reworded, help) = value_error(&message, at_start, top_fields);
        if let Some(m) = reworded {
            message = m;
        }
        (code, help)
    };
    Diagnostic::error(code, message).at(span).help(help)
}

/// A number or a boolean the typed reader could not read (`port: http`, `peakRps: -5`):
/// the field, and what it takes in the schema's words.
fn scalar_error(file: &Path, outline: &Outline, schema: &Value, at: &Span) -> Option<Diagnostic> {
    let node = outline.at(at.line, at.column)?;
    let value = outline.text(node)?;
    let path = outline.path(node)?;
    let field = Field::at(schema, &path)?;
    let kind = field.scalar_kind()?;
    Some(
        Diagnostic::error(
            Code::InvalidValue,
            format!("`{}` takes {kind}, not `{value}`", show_path(&path)),
        )
        .at(Span::new(file, at.line, at.column))
        .help(
            field
                .description()
                .unwrap_or_else(|| format!("write {kind}")),
        ),
    )
}

/// The help for an unknown field: a near name from the mapping the field is in (the parser
/// lists its fields; else `top_fields`), or the list.
fn unknown_field_help(message: &str, field: &str, top_fields: &[&str]) -> String {
    let listed: Vec<&str> = message
        .split_once("expected one of ")
        .or_else(|| message.split_once("expected "))
        .map(|(_, list)| list.split(", ").map(|f| f.trim_matches('`')).collect())
        .unwrap_or_default();
    let candidates = if listed.is_empty() {
        top_fields.to_vec()
    } else {
        listed
    };
    match did_you_mean(field, candidates.iter().copied()) {
        Some(s) => format!("did you mean `{s}`?"),
        None => format!("remove it; this place takes {}", candidates.join(", ")),
    }
}

/// A parser error about a value (its type or shape, or the YAML itself): the code, a
/// clearer message when there is one, and the help. `at_start`: the error is at the
/// document's first line.
fn value_error(
    message: &str,
    at_start: bool,
    top_fields: &[&str],
) -> (Code, Option<String>, String) {
    let see_shapes = || {
        "`latgen schema app` (or `config`) gives the shape of each field; the book's reference describes them".to_string()
    };
    if message.contains("expected mapping") && at_start {
        (
            Code::NotAMapping,
            Some("the file is not a mapping of fields".to_string()),
            format!(
                "write the declaration as `field: value` lines ({})",
                top_fields.join(", ")
            ),
        )
    } else if let Some(shape) = ["sequence", "string", "mapping"]
        .into_iter()
        .find(|s| message.starts_with(&format!("expected {s}")))
    {
        let reworded = match shape {
            "sequence" => "expected a list here, e.g. `[/shop, /cart]`",
            "string" => "expected a single value here, not a list or a mapping",
            _ => "expected a mapping of fields here, e.g. `{ name: shop, port: 8080 }`",
        };
        (Code::InvalidType, Some(reworded.to_string()), see_shapes())
    } else if message.contains("expected mapping") || message.contains("invalid type") {
        (Code::InvalidType, None, see_shapes())
    } else if message.starts_with("invalid ") {
        (
            Code::InvalidValue,
            None,
            "`latgen schema app` (or `config`) gives the allowed values; the book's reference describes them".to_string(),
        )
    } else {
        (
            Code::YamlSyntax,
            None,
            "fix the YAML syntax at this place".to_string(),
        )
    }
}

/// The 1-based line of the first line that is neither blank, a comment nor a document marker.
fn first_content_line(text: &str) -> Option<u32> {
    text.trim_start_matches('\u{feff}')
        .lines()
        .position(|l| {
            let t = l.trim();
            !t.is_empty() && !t.starts_with('#') && t != "---"
        })
        .map(|i| i as u32 + 1)
}

fn between<'a>(s: &'a str, start: &str, end: &str) -> Option<&'a str> {
    let rest = &s[s.find(start)? + start.len()..];
    Some(&rest[..rest.find(end)?])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::app::AppDecl;

    /// Declarations that quote paths, names, comments' apostrophes, and numbers or booleans
    /// in every way YAML spells them.
    const TEXTS: &[&str] = &[
        "namespace: a\nservice: { name: a, port: 80 }\npaths: [\"/a\", '/b']\n",
        "namespace: a\nservice: { name: a, port: 80 }\npaths:\n  - \"/a/x\"\n  - \"/b\"\n",
        "# it's ours\nnamespace: a\nservice: { name: a, port: 80 }\npaths: [\"/a\"]\n",
        "namespace: \"a\"\nservice: { name: a, port: 80 }\npaths: [/a]\n",
        "namespace: a\nservice: { name: \"it's\", port: '80' }\npaths: [/a]\n",
        "namespace: a\nservice: { name: a, port: \"8080\" }\npaths: [\"/a\"]\n",
        "namespace: a\nservice: { name: a, port: \" 80 \" }\npaths: [/a]\n",
        "namespace: a\nservice: { name: a, port: \"+80\" }\npaths: [/a]\n",
        "namespace: a\nservice: { name: a, port: \"0x50\" }\npaths: [/a]\n",
        "namespace: a\nservice: { name: a, port: \"\\x38\\x30\" }\npaths: [/a]\n",
        "namespace: a\nservice: { name: a, port: 80 }\npaths: [/a]\nisolate: \"yes\"\n",
        "namespace: a\nservice: { name: a, port: 80 }\npaths: [/a]\nisolate: 'true'\n",
        "namespace: a\nservice: { name: a, port: 80 }\npaths: [/a]\npeakRps: \"\"\n",
        "namespace: a\nservice:\n  name: a\n  port:\n    \"80\"\npaths: [\"/a\"]\n",
    ];

    /// Where a typed read takes the text and no text between quotes could be a number,
    /// the full look for quoted numbers finds none: skipping it changes no finding.
    #[test]
    fn a_text_that_quotes_no_number_has_no_quoted_number_to_find() {
        let schema = schema_cached::<AppDecl>();
        let mut skipped = 0;
        for text in TEXTS {
            let typed = serde_saphyr::from_str::<AppDecl>(text);
            if typed.is_err() || may_quote_a_number(text) {
                continue;
            }
            skipped += 1;
            let found = quoted_scalars(Path::new("a.yaml"), &Outline::of(text), &schema);
            assert!(found.is_empty(), "a quoted number in\n{text}");
        }
        assert_eq!(
            skipped, 3,
            "the texts that quote only paths and a comment are skipped"
        );
    }

    /// Every quoted number or boolean in [`TEXTS`] is found, skipped or not.
    #[test]
    fn a_quoted_number_is_still_refused() {
        let quoted = |text: &str| {
            let mut diags = Diagnostics::new();
            let parsed = parse_yaml::<AppDecl>(Path::new("a.yaml"), text, &[], &mut diags);
            parsed.is_none() && diags.iter().any(|d| d.message.contains("is quoted"))
        };
        for text in &TEXTS[4..] {
            assert!(quoted(text), "not refused:\n{text}");
        }
        for text in &TEXTS[..4] {
            assert!(!quoted(text), "refused:\n{text}");
        }
    }

    #[test]
    fn quoted_paths_could_be_no_number() {
        assert!(!may_quote_a_number("paths:\n  - \"/a/events\"\n  - '/b'\n"));
        assert!(!may_quote_a_number("# don't\npaths: [\"/a\"]\n"));
        assert!(may_quote_a_number("port: \"8080\"\n"));
        assert!(may_quote_a_number("isolate: 'no'\n"));
        assert!(may_quote_a_number("peakRps: \"\"\n"));
        assert!(may_quote_a_number("port: \"\\x38\"\n"));
    }
}
