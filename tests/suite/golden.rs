//! Golden trees: each fixture's apps/ must render to exactly its expected/ tree, and the
//! example's committed generated/ and latgen.lock must be what `render` writes.
//! Refresh with `LATGEN_BLESS=1 cargo test suite::golden::` and review the diff.

use super::common;
use super::project;

use std::path::PathBuf;

use pretty_assertions::assert_eq;

fn check_fixture(name: &str) {
    let dir = common::fixture(name);
    let actual =
        project::render_dir(&dir).unwrap_or_else(|e| panic!("{name} failed to render:\n{e}"));
    common::assert_tree_snapshot(&dir.join("expected"), &actual);
}

#[test]
fn traps_fixture_matches_its_golden_tree() {
    check_fixture("traps");
}

#[test]
fn settings_fixture_matches_its_golden_tree() {
    check_fixture("settings");
}

/// Header dispatch: one header rule per app, nested prefixes and a host-routed app in
/// shared groups, and every Kong route setting the header to its app.
#[test]
fn header_fixture_matches_its_golden_tree() {
    check_fixture("header");
}

/// Previews in preview groups of their own, with their Kong routes and bridges.
#[test]
fn previews_fixture_matches_its_golden_tree() {
    check_fixture("previews");
}

/// The example in the repository root is what the README renders: a stale generated/ or
/// lock fails here, before it fails a user.
#[test]
fn committed_example_output_is_up_to_date() {
    let root = common::root();
    let actual = project::render_dir(&root).expect("the example renders");
    let mut committed = common::read_tree(&root.join("generated"));
    committed.insert(
        PathBuf::from("latgen.lock"),
        std::fs::read_to_string(root.join("latgen.lock")).expect("the example's latgen.lock"),
    );
    if common::bless() {
        return;
    }
    common::assert_tree_eq(
        &committed,
        &actual,
        "example (run `cargo run --release -- render apps/ -o generated/`)",
    );
}

/// The field report's shape: 79 apps, 73 path-routed and 6 on their own hosts, come out as
/// 8 shared groups and 6 dedicated services, 14 in all.
#[test]
fn example_renders_fourteen_lattice_services() {
    let built = project::built(&common::root());
    let apps = &built.prepared.apps;
    assert_eq!(apps.len(), 79);
    assert_eq!(apps.iter().filter(|a| a.host.is_some()).count(), 6);
    let plan = &built.prepared.plan;
    assert_eq!(plan.groups.len(), 8);
    assert_eq!(plan.dedicated.len(), 6);
    assert_eq!(plan.service_count(), 14);
    let lattice_routes = built
        .output
        .files
        .keys()
        .filter(|p| {
            p.starts_with("lattice")
                && p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("httproute-")
        })
        .count();
    assert_eq!(
        lattice_routes, 14,
        "one Lattice-side HTTPRoute per Lattice service"
    );
}

#[test]
fn every_generated_file_starts_with_the_header_and_has_no_timestamp_or_version() {
    let built = project::built(&common::root());
    for (path, text) in &built.output.files {
        assert!(
            text.starts_with(latgen::manifest::layout::HEADER),
            "{}",
            path.display()
        );
        assert!(
            !text.contains(env!("CARGO_PKG_VERSION")),
            "{} names the version",
            path.display()
        );
        assert!(
            !text.contains("2026-") && !text.contains("timestamp"),
            "{}",
            path.display()
        );
    }
}
