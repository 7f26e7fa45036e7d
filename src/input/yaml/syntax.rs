//! Findings about how a document is laid out: a syntax error, said where the mistake is
//! (the bracket left open, the key indented out of line) rather than where the parser gave
//! up; and a key that parses but sits outside the mapping it was meant for.

use std::path::Path;

use serde_json::Value;

use super::fields::Field;
use super::outline::{Outline, Segment, Shape, SyntaxError};
use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Span};

/// The finding for a syntax error.
pub(crate) fn syntax(file: &Path, text: &str, outline: &Outline, err: &SyntaxError) -> Diagnostic {
    unclosed_bracket(file, outline, err)
        .or_else(|| misindented_key(file, text, outline, err))
        .unwrap_or_else(|| {
            Diagnostic::error(Code::YamlSyntax, err.what.clone())
                .at(Span::new(file, err.line, err.column))
                .help("fix the YAML syntax at this place")
        })
}

/// A `{` or `[` still open on a later line: the mistake is the missing bracket, not what
/// the parser met after it.
fn unclosed_bracket(file: &Path, outline: &Outline, err: &SyntaxError) -> Option<Diagnostic> {
    let &inner = err.open.last()?;
    let node = &outline.nodes[inner];
    let (what, close) = match node.shape {
        Shape::Mapping { block: false } => ("mapping `{`", '}'),
        Shape::Sequence { block: false } => ("list `[`", ']'),
        _ => return None,
    };
    if node.line >= err.line {
        return None;
    }
    Some(
        Diagnostic::error(Code::YamlSyntax, format!("this {what} is not closed"))
            .at(Span::new(file, node.line, node.column))
            .related(
                Span::new(file, err.line, err.column),
                format!("the YAML parser stops here: {}", err.what),
            )
            .help(format!("close it with `{close}`")),
    )
}

/// A key on the line the parser stopped at, indented like no mapping around it.
fn misindented_key(
    file: &Path,
    text: &str,
    outline: &Outline,
    err: &SyntaxError,
) -> Option<Diagnostic> {
    let line = text
        .trim_start_matches('\u{feff}')
        .lines()
        .nth(err.line as usize - 1)?;
    let indent = line.len() - line.trim_start_matches(' ').len();
    let key = block_key(&line[indent..])?;
    let above = outline
        .nodes
        .iter()
        .rposition(|n| n.is_key && n.line < err.line && in_block_mapping(outline, n.parent))?;
    let above_indent = outline.nodes[above].column - 1;
    if indent as u32 == above_indent {
        return None;
    }
    let above_key = outline.text(above)?;
    Some(
        Diagnostic::error(
            Code::YamlSyntax,
            format!(
                "`{key}` is indented {}; `{above_key}` above is indented {above_indent}",
                spaces(indent as u32)
            ),
        )
        .at(Span::new(file, err.line, indent as u32 + 1))
        .help(indent_help(outline, above)),
    )
}

/// "indent it 2 spaces to put it in `service` (like `name`), or 0 to make it a top-level
/// field": one choice per block mapping from the key above outwards.
fn indent_help(outline: &Outline, above: usize) -> String {
    let mut choices = Vec::new();
    let mut map = outline.nodes[above].parent;
    while let Some(m) = map.filter(|&m| in_block_mapping(outline, Some(m))) {
        let first = outline.keys(m).next().map(|(i, _)| i);
        let column = first.map_or(0, |k| outline.nodes[k].column - 1);
        let like = first
            .and_then(|k| outline.text(k))
            .map(|k| format!(" (like `{k}`)"))
            .unwrap_or_default();
        choices.push(match owner(outline, m) {
            Some(owner) => format!("{} to put it in `{owner}`{like}", spaces(column)),
            None => format!("{} to make it a top-level field{like}", spaces(column)),
        });
        map = outline.nodes[m].parent;
    }
    format!("indent it {}", choices.join(", or "))
}

/// The key a mapping is the value of (`service`); None at the top level.
fn owner<'o>(outline: &'o Outline, map: usize) -> Option<&'o str> {
    outline.nodes[map].key.as_deref()
}

fn in_block_mapping(outline: &Outline, parent: Option<usize>) -> bool {
    parent.is_some_and(|p| outline.nodes[p].shape == Shape::Mapping { block: true })
}

/// The key of a line that reads `key: …` or `key:`.
fn block_key(rest: &str) -> Option<&str> {
    if rest.starts_with(['-', '#', '{', '[']) {
        return None;
    }
    let (key, after) = rest.split_once(':')?;
    (after.is_empty() || after.starts_with([' ', '\t'])).then_some(key.trim())
}

fn spaces(n: u32) -> String {
    if n == 1 {
        "1 space".to_string()
    } else {
        format!("{n} spaces")
    }
}

/// A key that is missing from a mapping (`field`, as the typed reader said, at the
/// mapping's key at `at`) because it was written right after the mapping, indented less:
/// it then belongs to the mapping around it.
pub(crate) fn dedented_missing(
    file: &Path,
    outline: &Outline,
    at: &Span,
    field: &str,
) -> Option<Diagnostic> {
    let key = outline.key_at(at.line, at.column)?;
    let map = outline.nodes[key].parent?;
    let (stray, last) = dedented_after(outline, map, |k| k == field)?;
    let owner = owner(outline, map)?;
    let last_key = outline.text(last)?;
    let want = outline.nodes[last].column - 1;
    let stray = &outline.nodes[stray];
    Some(
        Diagnostic::error(
            Code::MissingField,
            format!(
                "`{owner}` has no `{field}`: this `{field}` is indented {}, not {want} like `{last_key}` above, so it is not part of `{owner}`",
                spaces(stray.column - 1)
            ),
        )
        .at(Span::new(file, stray.line, stray.column))
        .help(format!("indent `{field}` {want} spaces, like `{last_key}`")),
    )
}

/// A key latgen does not take where it is (the typed reader said so, at `at`) that the
/// mapping just above it takes: it was meant to be indented into it.
pub(crate) fn dedented_unknown(
    file: &Path,
    outline: &Outline,
    schema: &Value,
    at: &Span,
) -> Option<Diagnostic> {
    let key = outline.key_at(at.line, at.column)?;
    let name = outline.text(key)?;
    let parent = outline.nodes[key].parent?;
    // The mapping that is the value of the key before this one.
    let map = outline
        .nodes
        .iter()
        .enumerate()
        .take(key)
        .rev()
        .find(|(_, n)| n.parent == Some(parent) && !n.is_key)
        .map(|(i, _)| i)
        .filter(|&m| outline.nodes[m].shape == Shape::Mapping { block: true })?;
    let (stray, last) = dedented_after(outline, map, |k| k == name)?;
    if stray != key {
        return None;
    }
    let mut path = outline.path(map)?;
    path.push(Segment::Field(name.to_string()));
    Field::at(schema, &path)?;
    let owner = owner(outline, map)?;
    let last_key = outline.text(last)?;
    let want = outline.nodes[last].column - 1;
    Some(
        Diagnostic::error(
            Code::UnknownField,
            format!(
                "`{name}` is indented {}, not {want} like `{last_key}` above, so it is not part of `{owner}`, and latgen does not take it where it is",
                spaces(outline.nodes[key].column - 1)
            ),
        )
        .at(Span::new(file, at.line, at.column))
        .help(format!("indent `{name}` {want} spaces, like `{last_key}`")),
    )
}

/// The first key after the block mapping `map` in the mapping around it, when `wanted`
/// and indented less than `map`'s keys; with `map`'s last key.
fn dedented_after(
    outline: &Outline,
    map: usize,
    wanted: impl Fn(&str) -> bool,
) -> Option<(usize, usize)> {
    if outline.nodes[map].shape != (Shape::Mapping { block: true }) {
        return None;
    }
    let last = outline.keys(map).last()?.0;
    let parent = outline.nodes[map].parent?;
    let next = outline
        .keys(parent)
        .find(|(i, _)| *i > map)
        .map(|(i, _)| i)?;
    let indent = outline.nodes[last].column;
    (outline.nodes[next].column < indent && wanted(outline.text(next)?)).then_some((next, last))
}
