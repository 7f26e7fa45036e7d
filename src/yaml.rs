//! YAML shared by every input (declarations, `latgen.yaml`, `latgen.lock`): one document
//! read into its declared type, and a parser error turned into a finding with latgen's code,
//! place and help.

use std::path::Path;

use serde::de::DeserializeOwned;

use crate::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span, did_you_mean};

/// Parses one YAML document into `T`, turning a parser error into a diagnostic.
pub fn parse_yaml<T: DeserializeOwned>(
    file: &Path,
    text: &str,
    fields: &[&str],
    diags: &mut Diagnostics,
) -> Option<T> {
    match serde_saphyr::from_str::<T>(text) {
        Ok(v) => Some(v),
        Err(e) => {
            diags.push(yaml_error(file, text, &e, fields));
            None
        }
    }
}

fn yaml_error(file: &Path, text: &str, e: &serde_saphyr::Error, top_fields: &[&str]) -> Diagnostic {
    let mut message = e.without_snippet().to_string();
    if let Some(i) = message.rfind(" at line ") {
        message.truncate(i);
    }
    let mut span = match e.location() {
        Some(loc) => Span::at(file, &loc),
        None => Span::file(file),
    };
    let (code, help) = if let Some(field) = between(&message, "unknown field `", "`") {
        (
            Code::UnknownField,
            unknown_field_help(&message, field, top_fields),
        )
    } else if let Some(field) = between(&message, "missing field `", "`") {
        // The parser points at the mapping's last key; a missing top-level field belongs to
        // the whole document, so point at its first line instead.
        if top_fields.contains(&field)
            && let Some(line) = first_content_line(text)
        {
            span = Span::new(file, line, 1);
        }
        (Code::MissingField, format!("add `{field}`"))
    } else if message.starts_with("duplicate mapping key") {
        let key = message
            .trim_start_matches("duplicate mapping key: ")
            .split(',')
            .next()
            .unwrap_or("")
            .to_string();
        message = format!("`{key}` is given twice");
        (Code::DuplicateKey, "keep one of them".to_string())
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
    let see_shapes = || "see the README for the shape of each field".to_string();
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
            "see the README for the allowed values".to_string(),
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
