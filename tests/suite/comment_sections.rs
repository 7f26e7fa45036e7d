//! The PR comment's sections beyond routing, on the example (auth, monitoring and the deploy
//! kit on): each change the reviewer must know of is said in its own section, and a
//! section with nothing to say is left out.

use super::common;
use common::{example_repo, latgen};

/// `check --base HEAD --format markdown` after `render --base HEAD` of the change made in
/// the example's work tree.
fn comment_of_first_step(dir: &std::path::Path) -> String {
    let run = latgen(dir, &["render", "--base", "HEAD"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let md = latgen(dir, &["check", "--base", "HEAD", "--format", "markdown"]);
    assert_eq!(md.code, Some(0), "{}", md.stdout);
    md.stdout
}

/// The part of the comment under `### title`, up to the next heading.
fn section<'a>(md: &'a str, title: &str) -> Option<&'a str> {
    let start = md.find(&format!("\n### {title}\n"))? + 1;
    let rest = &md[start..];
    let end = rest[4..].find("\n### ").map_or(rest.len(), |i| i + 5);
    Some(&rest[..end])
}

#[test]
fn a_caller_added_to_an_app_is_said_under_access() {
    let tmp = example_repo();
    let dir = tmp.path();
    let file = dir.join("apps/commerce/cart.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    let caller = "callers: [{ principals: [\"arn:aws:iam::111122223333:role/reports\"] }]\n";
    std::fs::write(&file, format!("{text}{caller}")).unwrap();
    let md = comment_of_first_step(dir);
    let access = section(&md, "Access").unwrap_or_else(|| panic!("no Access section:\n{md}"));
    assert!(
        access.contains("**App `cart`**: lets in `arn:aws:iam::111122223333:role/reports`"),
        "{access}"
    );
    assert!(access.contains("Auth policies rewritten"), "{access}");
    assert!(section(&md, "Deploy kit").is_none(), "{md}");
}

#[test]
fn an_app_in_a_new_namespace_lists_the_deploy_kit_to_apply() {
    let tmp = example_repo();
    let dir = tmp.path();
    common::app(
        dir,
        "ledger",
        "namespace: team-ledger\nservice: { name: ledger, port: 8080 }\npaths: [/ledger]\n",
    );
    let md = comment_of_first_step(dir);
    let kit = section(&md, "Deploy kit").unwrap_or_else(|| panic!("no Deploy kit section:\n{md}"));
    assert!(
        kit.contains("- `deploy/appproject.yaml` (changed)"),
        "{kit}"
    );
    assert!(kit.contains("kubectl apply -f"), "{kit}");
}

#[test]
fn an_app_added_to_a_group_is_said_under_monitoring() {
    let tmp = example_repo();
    let dir = tmp.path();
    common::path_app(dir, "ledger", &["/ledger"]);
    // An addition ships Lattice first: the rule that counts the app comes with one of its
    // two steps.
    let first = comment_of_first_step(dir);
    common::git(dir, &["add", "-A"]);
    common::git(dir, &["commit", "-q", "-m", "step 1"]);
    let second = comment_of_first_step(dir);
    let counted = [&first, &second]
        .iter()
        .filter_map(|md| section(md, "Monitoring"))
        .filter(|m| m.contains("now counts `ledger`"))
        .count();
    assert_eq!(counted, 1, "{first}\n{second}");
}

#[test]
fn a_change_to_routing_alone_has_no_access_kit_or_monitoring_section() {
    let tmp = example_repo();
    let dir = tmp.path();
    let file = dir.join("apps/commerce/cart.yaml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("peakRps: 1800", "peakRps: 1700")).unwrap();
    let md = comment_of_first_step(dir);
    for title in ["Access", "Deploy kit"] {
        assert!(section(&md, title).is_none(), "{title}:\n{md}");
    }
}
