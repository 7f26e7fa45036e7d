//! `latgen plan --observed FILE` on the example, with files in the Prometheus HTTP API's
//! own response format (`tests/observed/`): an instant vector where two apps run above
//! their declarations and push a group over its budget, a range matrix where every group
//! has room, and an error response. The report of each is a committed snapshot.

use super::common;

/// Runs `plan --observed tests/observed/<file>` in the example, so that the report names
/// the file as a user in the project would.
fn plan_observed(file: &str) -> common::Run {
    let path = format!("tests/observed/{file}");
    common::latgen(&common::root(), &["plan", "--observed", &path])
}

/// Cart and checkout run above their declared peaks: group-02 is over its budget, both
/// declarations are stale, and `render` would move the app the planner picks to another
/// group once they say what the apps do. A series of no app is named, a NaN one ignored.
#[test]
fn observed_peaks_over_a_groups_budget_name_the_stale_declarations_and_the_move() {
    let run = plan_observed("example.json");
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let out = &run.stdout;
    assert!(out.contains("1 of 8 shared groups over the budget of 10,000 rps; 2 apps above their declared peakRps"), "{out}");
    assert!(
        out.contains("group-02  ████████████████████████▶   11,000 / 10,000 rps  110%  over\n"),
        "{out}"
    );
    assert!(out.contains("hottest: cart 6,200, checkout 3,900"), "{out}");
    assert!(
        out.contains("  apps/commerce/cart.yaml: peakRps 1800 -> 6201 (cart)\n"),
        "{out}"
    );
    assert!(out.contains("  checkout: group-02 -> group-04\n"), "{out}");
    assert!(
        out.contains("no app of this project is named retired-app"),
        "{out}"
    );
    assert!(!out.contains("search"), "a NaN series says nothing: {out}");
    common::assert_snapshot(&common::root().join("tests/observed/example.stdout"), out);
}

/// A range query's matrix: each app's highest sample is its peak, and no group is over.
#[test]
fn a_range_querys_peaks_within_budget_exit_0() {
    let run = plan_observed("within.json");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout.contains("0 of 8 shared groups over"),
        "{}",
        run.stdout
    );
    // cart's 1750.5 (its highest sample) is within its declared 1,800.
    assert!(
        run.stdout
            .contains("group-02  █████████░░░░░░░░░░░░░░░    3,751 / 10,000 rps   38%\n"),
        "{}",
        run.stdout
    );
    common::assert_snapshot(
        &common::root().join("tests/observed/within.stdout"),
        &run.stdout,
    );
}

/// Prometheus's own error (a query that did not parse) is reported as such, exit 2.
#[test]
fn a_prometheus_error_response_is_reported_with_its_message() {
    let run = plan_observed("error.json");
    assert_eq!(run.code, Some(2));
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.contains(
            "error[invalid-observed]: the query failed in Prometheus: invalid parameter \"query\""
        ),
        "{}",
        run.stderr
    );
    common::assert_snapshot(
        &common::root().join("tests/observed/error.stderr"),
        &run.stderr,
    );
}

/// `--observed` judges; `--apply` records moves: not both.
#[test]
fn observed_and_apply_do_not_go_together() {
    let run = common::latgen(
        &common::root(),
        &[
            "plan",
            "--apply",
            "--observed",
            "tests/observed/example.json",
        ],
    );
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("cannot be used with"), "{}", run.stderr);
}

/// Writes `body` (the `result` of a vector response) to a file beside the example's
/// settings' folder and runs `plan --observed` on it in the example.
fn plan_observed_text(series: &str) -> common::Run {
    let tmp = common::scratch();
    let file = tmp.path().join("observed.json");
    let text =
        format!(r#"{{"status":"success","data":{{"resultType":"vector","result":[{series}]}}}}"#);
    std::fs::write(&file, text).unwrap();
    common::latgen(
        &common::root(),
        &["plan", "--observed", file.to_str().unwrap()],
    )
}

/// A rate of 2^32 requests per second or more is a broken query, not an app: refused with
/// the series named, never summed into "inf%" nor offered as `peakRps 18446744073709551615`.
#[test]
fn a_rate_beyond_any_app_is_refused() {
    for value in ["4294967296", "1e20", "1e308"] {
        let run = plan_observed_text(&format!(
            r#"{{"metric":{{"app":"cart"}},"value":[1,"{value}"]}},{{"metric":{{"app":"checkout"}},"value":[1,"1e308"]}}"#
        ));
        assert_eq!(run.code, Some(2), "{value}: {}{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains(&format!(
                "`{value}` (app `cart`) is over 4,294,967,295 requests per second"
            )),
            "{}",
            run.stderr
        );
        assert!(!run.stdout.contains("inf"), "{}", run.stdout);
        assert!(
            !run.stdout.contains("18446744073709551615"),
            "{}",
            run.stdout
        );
    }
}

/// A million series of apps the project does not have (a query summed by pod, say) are
/// counted, not listed: the report names ten and says how many more, in a line of its
/// own. (Memory: see the threat model.)
#[test]
fn a_million_unknown_series_are_summarised() {
    let series: Vec<String> = (0..1_000_000)
        .map(|i| format!(r#"{{"metric":{{"app":"ghost-{i:07}"}},"value":[1,"1"]}}"#))
        .collect();
    let run = plan_observed_text(&series.join(","));
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let line = (run.stdout.lines())
        .find(|l| l.starts_with("no app of this project is named"))
        .unwrap_or_else(|| panic!("{}", run.stdout));
    assert_eq!(
        line,
        "no app of this project is named ghost-0000000, ghost-0000001, ghost-0000002, \
         ghost-0000003, ghost-0000004, ghost-0000005, ghost-0000006, ghost-0000007, \
         ghost-0000008, ghost-0000009 and 999,990 more (series left out)"
    );
    assert!(run.stdout.contains("(1000000 series)"), "{}", run.stdout);
}

/// An app that ran above a Lattice service's whole budget fits no group however the plan
/// changes: reported, and not moved (a group of its own would be over the budget too).
#[test]
fn an_app_above_the_whole_budget_is_reported_and_not_moved() {
    let run = plan_observed_text(r#"{"metric":{"app":"cart"},"value":[1,"50000"]}"#);
    assert_eq!(run.code, Some(1), "{}{}", run.stdout, run.stderr);
    assert!(
        run.stderr.contains(
            "warning[app-over-budget]: app `cart` ran at 50,000 rps, more than a Lattice service's whole budget of 10,000 rps"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stdout.contains(
            "then `latgen render` moves nothing: an app over a whole service's budget stays where it is"
        ),
        "{}",
        run.stdout
    );
}
