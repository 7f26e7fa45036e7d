//! The book's reference pages against the code: every field the inputs' types define (their
//! JSON Schemas, the ones the loader reads its field rules from) and every field of the lock
//! is named on its page, in code (between backticks). One test per page.

use std::collections::BTreeSet;

use latgen::input::json_schemas::Kind;

use super::common;

/// Every property name at any depth of a JSON Schema.
fn fields(schema: &serde_json::Value, out: &mut BTreeSet<String>) {
    match schema {
        serde_json::Value::Object(map) => {
            if let Some(serde_json::Value::Object(props)) = map.get("properties") {
                out.extend(props.keys().cloned());
            }
            map.values().for_each(|v| fields(v, out));
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| fields(v, out)),
        _ => {}
    }
}

/// Asserts that each of `names` appears as a word inside some backticked span of `page`.
fn assert_named(page: &str, names: impl IntoIterator<Item = String>) {
    let text = std::fs::read_to_string(common::root().join(page)).unwrap();
    let spans: Vec<&str> = text.split('`').skip(1).step_by(2).collect();
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let named = |name: &str| {
        spans.iter().any(|s| {
            s.match_indices(name).any(|(at, _)| {
                let before = s[..at].chars().next_back();
                let after = s[at + name.len()..].chars().next();
                !before.is_some_and(is_word) && !after.is_some_and(is_word)
            })
        })
    };
    let missing: Vec<String> = names.into_iter().filter(|n| !named(n)).collect();
    assert!(missing.is_empty(), "{page} does not name {missing:?}");
}

#[test]
fn declarations_page_names_every_field_of_a_declaration() {
    let mut names = BTreeSet::new();
    fields(&Kind::App.schema(), &mut names);
    assert_named("docs/src/reference/declarations.md", names);
}

#[test]
fn settings_page_names_every_setting() {
    let mut names = BTreeSet::new();
    fields(&Kind::Config.schema(), &mut names);
    assert_named("docs/src/reference/settings.md", names);
}

#[test]
fn lock_page_names_every_field_of_the_lock() {
    let names = latgen::input::lock::LOCK_FIELDS
        .iter()
        .map(|f| f.to_string());
    assert_named("docs/src/reference/lock.md", names);
}
