//! What a field takes, read from the JSON Schema of the input (the one `latgen schema`
//! prints and editors check with), so that latgen's messages and an editor's agree: the
//! types, ranges and descriptions have one source.

use serde_json::Value;

use super::outline::Segment;

/// The schema of one place in a document: the alternatives it allows (after `$ref`,
/// `allOf`, `anyOf` and `oneOf`).
#[derive(Debug, Clone)]
pub(crate) struct Field<'s> {
    alternatives: Vec<&'s Value>,
}

impl<'s> Field<'s> {
    /// The schema of the place at `path` in a document of `root`'s schema.
    pub fn at(root: &'s Value, path: &[Segment]) -> Option<Field<'s>> {
        let mut field = Field {
            alternatives: expand(root, root),
        };
        for segment in path {
            let next: Vec<&Value> = field
                .alternatives
                .iter()
                .filter_map(|s| match segment {
                    Segment::Field(name) => s
                        .get("properties")
                        .and_then(|p| p.get(name))
                        .or_else(|| s.get("additionalProperties").filter(|a| a.is_object())),
                    Segment::Item(_) => s.get("items"),
                })
                .flat_map(|s| expand(root, s))
                .collect();
            if next.is_empty() {
                return None;
            }
            field = Field { alternatives: next };
        }
        Some(field)
    }

    /// Whether the place takes a value of this JSON type.
    fn takes(&self, ty: &str) -> bool {
        self.alternatives.iter().any(|s| match s.get("type") {
            Some(Value::String(t)) => t == ty,
            Some(Value::Array(ts)) => ts.iter().any(|t| t == ty),
            _ => false,
        })
    }

    /// What the place takes, in words, when it is a number or a boolean and never text:
    /// "a whole number from 1 to 65535", "`true` or `false`".
    pub fn scalar_kind(&self) -> Option<String> {
        if self.takes("string") {
            return None;
        }
        let with = |ty: &str| {
            self.alternatives.iter().find(|s| {
                Field {
                    alternatives: vec![s],
                }
                .takes(ty)
            })
        };
        if let Some(s) = with("integer") {
            return Some(range("a whole number", s));
        }
        if let Some(s) = with("number") {
            return Some(range("a number", s));
        }
        with("boolean").map(|_| "`true` or `false`".to_string())
    }

    /// The field's description, on one line.
    pub fn description(&self) -> Option<String> {
        self.alternatives
            .iter()
            .find_map(|s| s.get("description")?.as_str())
            .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "))
    }
}

/// `what` with the schema's bounds: "a whole number from 1 to 65535", "…, 1 or more".
fn range(what: &str, s: &Value) -> String {
    let bound = |k: &str| s.get(k).and_then(Value::as_f64).map(|v| v.to_string());
    match (bound("minimum"), bound("maximum")) {
        (Some(min), Some(max)) => format!("{what} from {min} to {max}"),
        (Some(min), None) => format!("{what}, {min} or more"),
        (None, Some(max)) => format!("{what}, at most {max}"),
        (None, None) => what.to_string(),
    }
}

/// The alternatives a schema node stands for: `$ref` followed, `allOf`, `anyOf` and
/// `oneOf` opened (one level of each is all schemars writes).
fn expand<'s>(root: &'s Value, node: &'s Value) -> Vec<&'s Value> {
    let node = match node.get("$ref").and_then(Value::as_str) {
        Some(r) => match resolve(root, r) {
            Some(target) => target,
            None => return Vec::new(),
        },
        None => node,
    };
    let mut out = vec![node];
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(items)) = node.get(key) {
            for item in items {
                let target = match item.get("$ref").and_then(Value::as_str) {
                    Some(r) => resolve(root, r),
                    None => Some(item),
                };
                out.extend(target);
            }
        }
    }
    out
}

/// The node a local `$ref` (`#/definitions/ServiceDecl`) points at.
fn resolve<'s>(root: &'s Value, reference: &str) -> Option<&'s Value> {
    root.pointer(reference.strip_prefix('#')?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(path: &[&str]) -> Option<String> {
        let schema = crate::input::json_schemas::Kind::App.schema();
        let path: Vec<Segment> = path.iter().map(|s| Segment::Field(s.to_string())).collect();
        Field::at(&schema, &path)?.scalar_kind()
    }

    #[test]
    fn numbers_and_booleans_are_named_with_their_range() {
        assert_eq!(
            field(&["service", "port"]).as_deref(),
            Some("a whole number from 1 to 65535")
        );
        assert_eq!(
            field(&["group"]).as_deref(),
            Some("a whole number, 1 or more")
        );
        assert_eq!(field(&["isolate"]).as_deref(), Some("`true` or `false`"));
        assert_eq!(
            field(&["healthCheck", "intervalSeconds"]).as_deref(),
            Some("a whole number from 5 to 300")
        );
        assert_eq!(field(&["namespace"]), None, "text");
        assert_eq!(field(&["nope"]), None, "no such field");
    }
}
