//! Adopted apps leave their routes like any other app moves: `latgen move` takes one into a
//! group, and under header dispatch `plan --apply` takes the host-routed ones too, each
//! shipped by `render --base` in safe steps, every state routing every probe and letting
//! each caller in as before or after.

use super::common;
use super::import_assigned::{imported_assigned, imported_assigned_after};
use super::project;
use super::rollout::{assert_states_route_as_before_or_after, commit, ship_releasing, tree_at};

use std::path::Path;

use common::{git, latgen};

/// The imported project rendered and committed, as it runs; the apps as imported.
fn adopted_and_committed(dir: &Path) -> Vec<latgen::input::app::App> {
    git(dir, &["init", "-q"]);
    assert_eq!(latgen(dir, &["render"]).code, Some(0));
    commit(dir, "adopted as it runs");
    project::built(dir).prepared.apps
}

/// `latgen move cart --group 1` on the assigned-domain export: the lock no longer keeps
/// cart's route, and three steps put its rules in the new group, switch Kong to it, and
/// remove the old route and its live auth policy (`cart-auth`), each accepted by `check
/// --base`; cart's callers and every other app are served throughout.
#[test]
fn move_takes_an_adopted_app_off_its_route_in_safe_steps() {
    let tmp = imported_assigned();
    let dir = tmp.path();
    let imported = adopted_and_committed(dir);
    let run = latgen(dir, &["move", "cart", "--group", "1"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout.contains(
            "moving cart off the route it was adopted with (team-commerce/cart) into group-01"
        ),
        "{}",
        run.stdout
    );
    let lock = std::fs::read_to_string(dir.join("latgen.lock")).unwrap();
    assert!(!lock.contains("\n  cart:\n    route:"), "{lock}");
    let steps = ship_releasing(dir, (None, &["cart"]), &[], |_| {});
    assert_eq!(steps, 3);
    let last = tree_at(dir, "HEAD");
    let lattice = |name: &str| Path::new("lattice").join(name);
    assert!(!last.contains_key(&lattice("httproute-cart.yaml")));
    assert!(!last.contains_key(&lattice("iamauthpolicy-cart-auth.yaml")));
    assert!(last[&lattice("httproute-group-01.yaml")].contains("value: /shop/cart"));
    assert_states_route_as_before_or_after(dir, steps, Some(&imported));
}

/// A move of an adopted app into a group that is neither in use nor the next new one is
/// refused, as any move is, and changes nothing.
#[test]
fn move_of_an_adopted_app_into_a_group_that_is_not_there_is_refused() {
    let tmp = imported_assigned();
    let dir = tmp.path();
    let lock = std::fs::read_to_string(dir.join("latgen.lock")).unwrap();
    let run = latgen(dir, &["move", "cart", "--group", "9"]);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("group-09 does not exist, and a new group would be group-01"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("latgen.lock")).unwrap(),
        lock
    );
}

/// The export under header dispatch, with the host-routed `storefront-www` on a route of
/// another name (`storefront`), so adopted: `plan --apply` takes it into a group with the
/// path-routed apps, and the rollout ends with no route of its own, in the fewest groups.
#[test]
fn under_header_dispatch_an_adopted_host_routed_app_leaves_its_route_in_safe_steps() {
    let tmp = imported_assigned_after(|dir| {
        let file = dir.join("workload/commerce/storefront-www.yaml");
        let text = std::fs::read_to_string(&file).unwrap();
        let text = text
            // The first object is the Lattice route.
            .replacen("  name: storefront-www\n", "  name: storefront\n", 1)
            .replace(
                "    kind: HTTPRoute\n    name: storefront-www\n",
                "    kind: HTTPRoute\n    name: storefront\n",
            );
        std::fs::write(&file, text).unwrap();
        let settings = dir.join("latgen.yaml");
        let text = std::fs::read_to_string(&settings).unwrap();
        std::fs::write(
            &settings,
            text.replacen("lattice:\n", "lattice:\n  dispatch: header\n", 1),
        )
        .unwrap();
    });
    let dir = tmp.path();
    let lock = std::fs::read_to_string(dir.join("latgen.lock")).unwrap();
    assert!(
        lock.contains("  storefront-www:\n    route: storefront\n"),
        "{lock}"
    );
    let imported = adopted_and_committed(dir);
    let plan = latgen(dir, &["plan", "--apply"]);
    assert_eq!(plan.code, Some(0), "{}", plan.stderr);
    assert!(
        plan.stdout.contains("74 apps still on the route"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout.contains("Lattice services 75 -> 8"),
        "{}",
        plan.stdout
    );
    let release = [
        "audit-log",
        "orders",
        "payments",
        "cart",
        "tickets",
        "storefront-www",
    ];
    let steps = ship_releasing(dir, (None, &release), &[], |_| {});
    let last = tree_at(dir, "HEAD");
    assert!(
        !last
            .keys()
            .any(|p| p.ends_with("httproute-storefront.yaml"))
    );
    let routes = (last.keys())
        .filter(|p| p.to_string_lossy().starts_with("lattice/httproute-"))
        .count();
    assert_eq!(routes, 8);
    assert_states_route_as_before_or_after(dir, steps, Some(&imported));
}
