//! The crate's layers (see `src/lib.rs` and CONTRIBUTING.md): each folder under `src/` is a
//! room, and a room imports only from rooms below it. One test per room, so a failure names
//! the room that reaches up and the line that does.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use super::common;

/// The rooms, lowest first.
pub(super) const LAYERS: &[&str] = &[
    "diag", "input", "validate", "plan", "manifest", "render", "output", "pipeline", "rollout",
    "check", "report", "import", "ops", "commands", "cli",
];

/// The room of a source file: its folder under `src/`, or its name for a file there.
fn room_of(rel: &std::path::Path) -> String {
    let first = rel.iter().next().unwrap().to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// The files under `src/`, read once for all the tests of this module.
fn sources() -> &'static BTreeMap<PathBuf, String> {
    static SOURCES: OnceLock<BTreeMap<PathBuf, String>> = OnceLock::new();
    SOURCES.get_or_init(|| common::read_tree(&common::root().join("src")))
}

/// Every `crate::<room>` a room's code names (comments aside), with the file and line.
fn imports_of(room: &str) -> Vec<(String, String, usize)> {
    let mut found = Vec::new();
    for (rel, text) in sources() {
        if room_of(rel) != room || rel.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for (at, _) in code.match_indices("crate::") {
                let rest = &code[at + "crate::".len()..];
                let target: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                found.push((target, rel.display().to_string(), i + 1));
            }
        }
    }
    found
}

fn assert_imports_only_below(room: &str) {
    let level = LAYERS.iter().position(|r| *r == room).unwrap();
    for (target, file, line) in imports_of(room) {
        let Some(to) = LAYERS.iter().position(|r| *r == target) else {
            panic!("src/{file}:{line}: `crate::{target}` is not a room of LAYERS");
        };
        assert!(
            to <= level,
            "src/{file}:{line}: `{room}` (layer {level}) imports `{target}` (layer {to}), a layer above it"
        );
    }
}

/// Every folder and file under `src/` is a room of [`LAYERS`] (or the crate's root).
#[test]
fn every_room_has_a_layer() {
    for rel in sources().keys() {
        let room = room_of(rel);
        assert!(
            LAYERS.contains(&room.as_str()) || room == "lib" || room == "main",
            "src/{}: room `{room}` is not in LAYERS",
            rel.display()
        );
    }
}

macro_rules! layer_tests {
    ($($room:ident),*) => {
        $(
            #[test]
            fn $room() {
                assert_imports_only_below(stringify!($room));
            }
        )*
    };
}

layer_tests!(
    diag, input, validate, plan, manifest, render, output, pipeline, rollout, check, report,
    import, ops, commands, cli
);

/// Every folder of `src/` (and `pipeline.rs`, a room of one file) opens with the layer it
/// is, as `src/lib.rs` lists them: `//! Layer N, room …`.
#[test]
fn every_folder_names_its_layer() {
    for (rel, text) in sources() {
        let is_folder_doc = rel.file_name().is_some_and(|n| n == "mod.rs");
        if !is_folder_doc && rel != std::path::Path::new("pipeline.rs") {
            continue;
        }
        let room = room_of(rel);
        let level = LAYERS.iter().position(|r| *r == room).unwrap();
        let want = format!("//! Layer {level}, {room}");
        assert!(
            text.starts_with(&want),
            "src/{}: its doc does not open with `{want}`",
            rel.display()
        );
    }
}
