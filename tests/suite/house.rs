//! The house as its own documents describe it, held against the files: the layer tables of
//! `src/lib.rs` and CONTRIBUTING.md against the layers test, the paths that Cargo.toml,
//! CONTRIBUTING.md and ARCHITECTURE.md name, the stages the pipeline joins, the size and
//! names of the source files, and the workspace's one-way dependency on the platform model.
//! One test per drift, so that a failure names what drifted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::common;
use super::layers::LAYERS;

/// The longest a source file may be: a person should be able to hold one.
const MAX_LINES: usize = 700;

/// The Rust sources of both members, by path from the repository root.
fn rust_sources() -> BTreeMap<PathBuf, String> {
    let root = common::root();
    let mut out = BTreeMap::new();
    for dir in ["src", "crates/latgen-sim/src"] {
        for (rel, text) in common::read_tree(&root.join(dir)) {
            if rel.extension().is_some_and(|e| e == "rs") {
                out.insert(Path::new(dir).join(rel), text);
            }
        }
    }
    out
}

/// The rooms a layer table names, row by row: (layer number, rooms of the row). A room is
/// what the table's first backticked cell names, as `LAYERS` spells it: `src/diag/` and
/// [`diag`] are `diag`; `src/main.rs`, the binary's entry, is no room.
fn table_rows(text: &str, line_prefix: &str) -> Vec<(usize, Vec<String>)> {
    let mut rows = Vec::new();
    for line in text.lines() {
        let Some(row) = line.strip_prefix(line_prefix) else {
            continue;
        };
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (Some(number), Some(rooms)) = (cells.get(1), cells.get(2)) else {
            continue;
        };
        let Ok(number) = number.parse::<usize>() else {
            continue;
        };
        let names = rooms
            .split(',')
            .map(|c| {
                let c = c.trim().trim_matches(|ch| "[]`".contains(ch));
                let c = c.strip_prefix("src/").unwrap_or(c);
                c.trim_end_matches('/').trim_end_matches(".rs").to_string()
            })
            .filter(|c| c != "main")
            .collect();
        rows.push((number, names));
    }
    rows
}

fn assert_table_matches_layers(file: &str, line_prefix: &str) {
    let text = std::fs::read_to_string(common::root().join(file)).unwrap();
    let rows = table_rows(&text, line_prefix);
    let named: Vec<String> = rows.iter().flat_map(|(_, r)| r.clone()).collect();
    assert_eq!(
        named, LAYERS,
        "{file}: its layer table names the rooms in another order than tests/suite/layers.rs"
    );
    for (i, (number, _)) in rows.iter().enumerate() {
        assert_eq!(
            *number, i,
            "{file}: layer rows are numbered 0, 1, 2, … in order"
        );
    }
}

#[test]
fn contributing_layer_table_matches_the_layers_test() {
    assert_table_matches_layers("CONTRIBUTING.md", "");
}

#[test]
fn lib_layer_table_matches_the_layers_test() {
    assert_table_matches_layers("src/lib.rs", "//! ");
}

/// The stages a text says the pipeline joins: the `N` of "stages 1 to N".
fn stages_joined(text: &str) -> Vec<String> {
    text.match_indices("stages 1 to ")
        .map(|(at, m)| text[at + m.len()..].chars().take(1).collect())
        .collect()
}

#[test]
fn lib_and_pipeline_agree_on_the_stages_the_pipeline_joins() {
    let root = common::root();
    let pipeline = std::fs::read_to_string(root.join("src/pipeline.rs")).unwrap();
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).unwrap();
    let own = stages_joined(&pipeline);
    assert!(
        !own.is_empty(),
        "src/pipeline.rs says which stages it joins"
    );
    for said in stages_joined(&lib) {
        assert_eq!(
            said, own[0],
            "src/lib.rs says the pipeline is stages 1 to {said}; src/pipeline.rs says 1 to {}",
            own[0]
        );
    }
}

/// Every repository path a text names in backticks or plainly (`src/…`, `crates/…`,
/// `tests/…`, `docs/…`), without a glob or a placeholder.
fn named_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.split(|c: char| c.is_whitespace() || "`()[],;|".contains(c)) {
        let word = word.trim_end_matches(['.', ':']);
        let is_path = ["src/", "crates/", "tests/", "docs/"]
            .iter()
            .any(|p| word.starts_with(p));
        if is_path && !word.contains(['*', '<', '{', '…']) {
            out.push(word.to_string());
        }
    }
    out
}

fn assert_named_paths_exist(file: &str) {
    let root = common::root();
    let text = std::fs::read_to_string(root.join(file)).unwrap();
    let missing: Vec<String> = named_paths(&text)
        .into_iter()
        .filter(|p| !root.join(p).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "{file} names paths that do not exist: {missing:?}"
    );
}

#[test]
fn cargo_toml_names_only_paths_that_exist() {
    assert_named_paths_exist("Cargo.toml");
}

#[test]
fn contributing_names_only_paths_that_exist() {
    assert_named_paths_exist("CONTRIBUTING.md");
}

#[test]
fn architecture_names_only_paths_that_exist() {
    assert_named_paths_exist("ARCHITECTURE.md");
}

/// The concerns that cut across the stages, each with its row in ARCHITECTURE.md's map.
const CONCERNS: &[&str] = &[
    "quota",
    "order-independence",
    "auth",
    "previews",
    "canaries",
    "environments",
    "observability",
    "lock",
    "rollout",
];

#[test]
fn architecture_maps_every_concern_to_its_files() {
    let text = std::fs::read_to_string(common::root().join("ARCHITECTURE.md")).unwrap();
    for concern in CONCERNS {
        let row = text
            .lines()
            .find(|l| l.starts_with(&format!("| {concern} |")))
            .unwrap_or_else(|| panic!("ARCHITECTURE.md has no row for `{concern}`"));
        assert!(
            !named_paths(row).is_empty() || row.contains(".rs`"),
            "ARCHITECTURE.md: the `{concern}` row names no file"
        );
    }
}

#[test]
fn no_source_file_is_longer_than_a_person_can_hold() {
    let long: Vec<String> = rust_sources()
        .into_iter()
        .filter(|(_, text)| text.lines().count() > MAX_LINES)
        .map(|(p, text)| format!("{} ({} lines)", p.display(), text.lines().count()))
        .collect();
    assert!(long.is_empty(), "over {MAX_LINES} lines: {long:?}");
}

#[test]
fn no_two_source_files_share_a_name_outside_mod_rs() {
    let mut by_name: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for path in rust_sources().keys() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !["mod.rs", "lib.rs"].contains(&name.as_str()) {
            by_name
                .entry(name)
                .or_default()
                .push(path.display().to_string());
        }
    }
    let shared: Vec<_> = by_name.into_iter().filter(|(_, v)| v.len() > 1).collect();
    assert!(shared.is_empty(), "file names used twice: {shared:?}");
}

/// The platform model is a crate that knows nothing of latgen: no member is its dependency,
/// and its code names no latgen module.
#[test]
fn the_simulator_depends_on_no_other_member() {
    let root = common::root().join("crates/latgen-sim");
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(
        !manifest.contains("path ="),
        "crates/latgen-sim/Cargo.toml depends on another member"
    );
    for (rel, text) in common::read_tree(&root.join("src")) {
        assert!(
            !text.contains("latgen::") && !text.contains("latgen_"),
            "crates/latgen-sim/src/{} names latgen",
            rel.display()
        );
    }
}

/// Every `mod.rs` is a table of contents: module declarations, re-exports and an overview,
/// with no function of its own.
#[test]
fn every_mod_rs_is_a_table_of_contents() {
    let with_code: Vec<String> = rust_sources()
        .into_iter()
        .filter(|(p, _)| p.file_name().is_some_and(|n| n == "mod.rs"))
        .filter(|(_, text)| {
            text.lines()
                .map(str::trim_start)
                .any(|l| l.starts_with("fn ") || l.starts_with("pub fn ") || l.contains(" fn "))
        })
        .map(|(p, _)| p.display().to_string())
        .collect();
    assert!(
        with_code.is_empty(),
        "mod.rs files that hold code: {with_code:?}"
    );
}
