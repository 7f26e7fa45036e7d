//! Every finding code is triggered by a test: some committed snapshot under tests/ shows it.
//! The snapshots are the `expected.*` files (the check fixtures' and the untrusted-input
//! cases') and the `*.stderr` files (the corpus, render on untrusted inputs); the tests that
//! own them compare them exactly and fail on one that belongs to no case, so a code found
//! here is a code a test makes latgen report.

use super::common;

use std::path::Path;

/// The id of every registered code, as printed (`error[<id>]`, `"code":"<id>"`).
fn code_ids() -> Vec<String> {
    latgen::diag::codes::Code::ALL
        .iter()
        .map(|c| c.as_str().to_string())
        .collect()
}

/// Whether a file under tests/ is the expected output of a test.
fn is_snapshot(path: &Path) -> bool {
    let name = path.file_name().unwrap().to_string_lossy();
    name.starts_with("expected.") || path.extension().is_some_and(|e| e == "stderr")
}

#[test]
fn every_code_is_triggered() {
    let snapshots: Vec<String> = common::read_tree(&common::root().join("tests"))
        .into_iter()
        .filter(|(path, _)| is_snapshot(path))
        .map(|(_, text)| text)
        .collect();
    assert!(snapshots.len() > 50, "the snapshots are found");
    let untriggered: Vec<String> = code_ids()
        .into_iter()
        .filter(|id| {
            let human = format!("[{id}]");
            let json = format!("\"code\":\"{id}\"");
            !snapshots
                .iter()
                .any(|s| s.contains(&human) || s.contains(&json))
        })
        .collect();
    assert!(
        untriggered.is_empty(),
        "no snapshot under tests/ shows these codes, so no test triggers them: {untriggered:?}\n\
         add a check fixture (tests/check/<code>/) or a corpus case (tests/corpus.rs)"
    );
}
