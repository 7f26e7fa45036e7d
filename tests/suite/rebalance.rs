//! Rebalancing: `latgen move` through its three steps, adds and removals in two halves, each
//! step routed through the generated manifests and accepted by `check --base`; refused moves
//! change nothing; compaction reaches the lower bound with the fewest moves; `plan --apply`
//! separates order-dependent pairs in safe steps; cost figures.

use super::common;
use super::project;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{Run, latgen};
use latgen_sim::routing::Outcome;
use pretty_assertions::assert_eq;

/// A project with ten one-path apps in two groups (quota 6), rendered and committed.
fn project() -> tempfile::TempDir {
    let tmp = common::scratch();
    std::fs::write(
        tmp.path().join("latgen.yaml"),
        "quotas:\n  rulesPerService: 6\n",
    )
    .unwrap();
    for (name, path) in [
        ("shop", "/shop"),
        ("shopping", "/shopping"),
        ("cart", "/shop/cart"),
        ("api", "/api"),
        ("api-v2", "/api/v2"),
        ("help", "/help"),
        ("blog", "/blog"),
        ("docs", "/docs"),
        ("pay", "/pay"),
        ("payments", "/payments"),
    ] {
        common::path_app(tmp.path(), name, &[path]);
    }
    common::git(tmp.path(), &["init", "-q"]);
    assert_eq!(latgen(tmp.path(), &["render"]).code, Some(0));
    commit(tmp.path(), "initial");
    tmp
}

fn commit(dir: &Path, msg: &str) {
    common::git(dir, &["add", "-A"]);
    common::git(dir, &["commit", "-q", "--allow-empty", "-m", msg]);
}

fn lock(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("latgen.lock")).unwrap()
}

fn tree(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut t = common::read_tree(&dir.join("generated"));
    t.insert("latgen.lock".into(), lock(dir));
    t
}

/// Every declared path of every app in apps/ (and one segment deeper) reaches that app's
/// Service through the manifests on disk.
fn assert_routes(dir: &Path) {
    let files = common::read_tree(&dir.join("generated"));
    let net = project::network(&files);
    for (rel, text) in common::read_tree(&dir.join("apps")) {
        let name = rel.file_stem().unwrap().to_string_lossy().to_string();
        let decl: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
        for p in decl["paths"].as_array().unwrap() {
            let p = p.as_str().unwrap();
            for probe in [p.to_string(), format!("{p}/deeper")] {
                let got = net.route("www.example.com", &probe);
                match got {
                    Outcome::Backend { backend, .. } => assert_eq!(backend.name, name, "{probe}"),
                    other => panic!("{probe} of {name}: {other}"),
                }
            }
        }
    }
}

fn check_base(dir: &Path) -> Run {
    latgen(dir, &["check", "--base", "HEAD"])
}

#[test]
fn a_move_goes_through_three_steps_with_routing_intact_at_each() {
    let tmp = project();
    let dir = tmp.path();
    let from = lock(dir)
        .lines()
        .find(|l| l.trim_start().starts_with("blog:"))
        .unwrap()
        .split(':')
        .nth(1)
        .unwrap()
        .trim()
        .parse::<u32>()
        .unwrap();
    let to = if from == 1 { 2 } else { 1 };
    let o = latgen(dir, &["move", "blog", "--group", &to.to_string()]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(o.stdout.contains("it ships in 3 steps"), "{}", o.stdout);
    assert!(
        lock(dir).contains(&format!("  blog: {{to: {to}, step: 1}}")),
        "{}",
        lock(dir)
    );

    let mut sides_changed = Vec::new();
    for step in 1..=3 {
        let before = tree(dir);
        assert_eq!(latgen(dir, &["render"]).code, Some(0));
        let after = tree(dir);
        let changed: Vec<String> = after
            .keys()
            .chain(before.keys())
            .filter(|k| before.get(*k) != after.get(*k) && !k.starts_with("latgen.lock"))
            .map(|k| {
                k.components()
                    .next()
                    .unwrap()
                    .as_os_str()
                    .to_string_lossy()
                    .to_string()
            })
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        sides_changed.push(changed);
        assert_routes(dir);
        let c = check_base(dir);
        assert_eq!(
            c.code,
            Some(0),
            "step {step}: check --base refuses it:\n{}",
            c.stdout
        );
        commit(dir, &format!("step {step}"));
        if step < 3 {
            let o = latgen(dir, &["move", "blog", "--continue"]);
            assert_eq!(o.code, Some(0), "{}", o.stderr);
            assert!(
                o.stdout.contains(&format!("step {} of 3", step + 1)),
                "{}",
                o.stdout
            );
        }
    }
    assert_eq!(
        sides_changed,
        vec![vec!["lattice"], vec!["kong"], vec!["lattice"]],
        "one side per step"
    );
    assert!(lock(dir).contains(&format!("  blog: {to}\n")));
    assert!(!lock(dir).contains("moves:"));
    // During the move the app's rules were in both groups; now only in the new one.
    let group = std::fs::read_to_string(
        dir.join(format!("generated/lattice/httproute-group-0{from}.yaml")),
    )
    .unwrap();
    assert!(!group.contains("/blog"));
}

/// The same `move APP --group N` twice is one command: the second changes nothing (before,
/// it advanced the move to step 2 without the gate `--continue` has, so the next render
/// changed both sides in one PR).
#[test]
fn a_repeated_move_is_the_same_command_not_the_next_step() {
    let tmp = project();
    let dir = tmp.path();
    let from = lock(dir)
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("blog:"))
        .unwrap()
        .trim()
        .parse::<u32>()
        .unwrap();
    let to = (if from == 1 { 2 } else { 1 }).to_string();
    assert_eq!(latgen(dir, &["move", "blog", "--group", &to]).code, Some(0));
    let recorded = lock(dir);
    let again = latgen(dir, &["move", "blog", "--group", &to]);
    assert_eq!(again.code, Some(0), "{}", again.stderr);
    assert!(
        again.stdout.contains("already moving") && again.stdout.contains("nothing changed"),
        "{}",
        again.stdout
    );
    assert_eq!(lock(dir), recorded, "the repeat changed the lock");
    assert!(recorded.contains(&format!("  blog: {{to: {to}, step: 1}}")));
    let c = latgen(dir, &["render"]);
    assert_eq!(c.code, Some(0), "{}", c.stderr);
    assert_eq!(check_base(dir).code, Some(0), "step 1 is one side");
}

#[test]
fn a_move_into_a_full_group_is_refused_and_changes_nothing() {
    let tmp = project();
    let dir = tmp.path();
    let before = tree(dir);
    // Ten apps with a quota of 6: group 1 is full, group 2 holds the other four.
    let groups: BTreeMap<String, u32> = lock(dir)
        .lines()
        .filter_map(|l| {
            l.strip_prefix("  ")?
                .split_once(": ")
                .map(|(a, g)| (a.to_string(), g.parse().unwrap()))
        })
        .collect();
    assert_eq!(groups.values().filter(|g| **g == 1).count(), 6);
    let mover = groups.iter().find(|(_, g)| **g == 2).unwrap().0.clone();
    let o = latgen(dir, &["move", &mover, "--group", "1"]);
    assert_eq!(o.code, Some(1));
    assert!(
        o.stderr.contains(&format!(
            "error[move-refused]: group-01 has 6/6 rules; app `{mover}` needs 1"
        )),
        "{}",
        o.stderr
    );
    assert_eq!(tree(dir), before);
}

#[test]
fn an_unknown_app_is_refused_with_the_closest_name() {
    let tmp = project();
    let before = tree(tmp.path());
    let o = latgen(tmp.path(), &["move", "shoping", "--group", "2"]);
    assert_eq!(o.code, Some(1));
    assert!(
        o.stderr.contains("there is no app `shoping`"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains("did you mean `shopping`?"),
        "{}",
        o.stderr
    );
    assert_eq!(tree(tmp.path()), before);
}

#[test]
fn a_move_to_a_new_group_opens_the_next_number_only() {
    let tmp = project();
    let dir = tmp.path();
    let before = tree(dir);
    let o = latgen(dir, &["move", "docs", "--group", "7"]);
    assert_eq!(o.code, Some(1));
    assert!(o.stderr.contains("group-07 does not exist"), "{}", o.stderr);
    assert_eq!(tree(dir), before);
    let o = latgen(dir, &["move", "docs", "--group", "3"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(latgen(dir, &["render"]).code, Some(0));
    assert!(
        dir.join("generated/lattice/httproute-group-03.yaml")
            .exists()
    );
    assert_routes(dir);
}

/// The finding's headline (without its code) and help line.
fn headline_and_help(stderr: &str) -> (String, String) {
    let headline = stderr.lines().next().unwrap_or("");
    let headline = headline.split_once("]: ").map_or(headline, |(_, m)| m);
    let help = stderr
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("= help: "))
        .unwrap_or("");
    (headline.to_string(), help.to_string())
}

/// A `group:` pin and `move --group` follow one rule: a group in use or the next new one,
/// said in the same words.
#[test]
fn a_pin_to_a_group_that_does_not_exist_is_refused_as_a_move_there_is() {
    let tmp = project();
    let dir = tmp.path();
    let moved = latgen(dir, &["move", "docs", "--group", "9"]);
    assert_eq!(moved.code, Some(1));
    common::app(
        dir,
        "news",
        "namespace: web\nservice: { name: news, port: 80 }\npaths: [/news]\ngroup: 9\n",
    );
    let pinned = latgen(dir, &["render"]);
    assert_eq!(pinned.code, Some(2), "{}", pinned.stderr);
    assert!(
        pinned.stderr.starts_with("error[invalid-group]: "),
        "{}",
        pinned.stderr
    );
    let (headline, help) = headline_and_help(&pinned.stderr);
    assert_eq!(
        headline,
        "group-09 does not exist, and a new group would be group-03"
    );
    assert_eq!(help, "name a group in use, or group-03 to open a new one");
    assert_eq!(headline_and_help(&moved.stderr), (headline, help));
    // The next new group is taken.
    common::app(
        dir,
        "news",
        "namespace: web\nservice: { name: news, port: 80 }\npaths: [/news]\ngroup: 3\n",
    );
    assert_eq!(latgen(dir, &["render"]).code, Some(0));
}

#[test]
fn an_add_ships_lattice_first_and_a_removal_kong_first() {
    let tmp = project();
    let dir = tmp.path();
    // Add: the combined change is refused; the Lattice half, then the rest, pass.
    common::path_app(dir, "checkout", &["/checkout"]);
    assert_eq!(latgen(dir, &["render"]).code, Some(0));
    let c = check_base(dir);
    assert_eq!(c.code, Some(1), "{}", c.stdout);
    assert!(
        c.stdout.contains("ship the Lattice side first"),
        "{}",
        c.stdout
    );
    common::git(dir, &["checkout", "-q", "--", "generated", "latgen.lock"]);
    common::git(dir, &["clean", "-fdq", "--", "generated"]);
    assert_eq!(latgen(dir, &["render", "--only", "lattice"]).code, Some(0));
    assert_eq!(check_base(dir).code, Some(0));
    commit(dir, "add checkout: lattice");
    assert_eq!(latgen(dir, &["render"]).code, Some(0));
    assert_routes(dir);
    assert_eq!(check_base(dir).code, Some(0));
    commit(dir, "add checkout: kong");

    // Removal: the combined change is refused; the Kong half, then the rest, pass.
    std::fs::remove_file(dir.join("apps/checkout.yaml")).unwrap();
    assert_eq!(latgen(dir, &["render"]).code, Some(0));
    let c = check_base(dir);
    assert_eq!(c.code, Some(1), "{}", c.stdout);
    assert!(
        c.stdout.contains("ship the Kong side first"),
        "{}",
        c.stdout
    );
    common::git(dir, &["checkout", "-q", "--", "generated", "latgen.lock"]);
    common::git(dir, &["clean", "-fdq", "--", "generated"]);
    assert_eq!(latgen(dir, &["render", "--only", "kong"]).code, Some(0));
    assert_eq!(check_base(dir).code, Some(0));
    assert_routes(dir);
    commit(dir, "remove checkout: kong");
    assert_eq!(latgen(dir, &["render"]).code, Some(0));
    assert_eq!(check_base(dir).code, Some(0));
    assert_routes(dir);
}

#[test]
fn compaction_reaches_the_lower_bound_with_the_fewest_moves() {
    // Five groups holding 5, 3, 3, 2 and 1 one-rule apps: 14 rules fit in 2 groups of 10.
    // Keeping the two fullest groups moves the fewest apps: 3 + 2 + 1 = 6.
    let tmp = common::scratch();
    let dir = tmp.path();
    let sizes = [5, 3, 3, 2, 1];
    let mut lock = String::from("version: 1\napps:\n");
    let mut n = 0;
    for (g, size) in sizes.iter().enumerate() {
        for _ in 0..*size {
            common::path_app(dir, &format!("app{n:02}"), &[&format!("/p{n:02}")]);
            lock.push_str(&format!("  app{n:02}: {}\n", g + 1));
            n += 1;
        }
    }
    std::fs::write(dir.join("latgen.lock"), lock).unwrap();
    let built = project::built(dir);
    let c = latgen::plan::rebalance::compaction::compaction(&built.prepared).unwrap();
    assert_eq!((c.groups_now, c.lower_bound, c.groups_after), (5, 2, 2));
    assert_eq!(c.moves.len(), 6, "{:?}", c.moves);
    assert!(
        c.moves
            .iter()
            .all(|(_, from, to)| *from != 1 && [1, 2, 3].contains(to))
    );
    let o = latgen(dir, &["plan"]);
    assert_eq!(o.code, Some(0));
    assert!(o.stdout.contains("6 moves bring it to 2"), "{}", o.stdout);
    assert_eq!(o.stdout.matches("latgen move ").count(), 6);
}

#[test]
fn compaction_respects_isolation() {
    let tmp = common::scratch();
    let dir = tmp.path();
    for (i, g) in [1, 2, 3].iter().enumerate() {
        common::app(
            dir,
            &format!("event{i}"),
            &format!(
                "namespace: ev\nservice: {{ name: e{i}, port: 80 }}\npaths: [/e{i}]\nisolate: true\ngroup: {g}\n"
            ),
        );
    }
    let c = latgen::plan::rebalance::compaction::compaction(&project::built(dir).prepared).unwrap();
    assert_eq!((c.lower_bound, c.groups_after), (3, 3));
    assert!(c.moves.is_empty());
}

/// Apps whose prefixes nest never share a group, so they count towards the bound, and a
/// host-routed app has a service of its own: `plan` says so rather than a bound no move
/// can reach.
#[test]
fn the_lower_bound_counts_apps_whose_prefixes_nest() {
    let tmp = common::scratch();
    let dir = tmp.path();
    common::path_app(dir, "shop", &["/shop"]);
    common::path_app(dir, "cart", &["/shop/cart"]);
    common::path_app(dir, "cart-v2", &["/shop/cart/v2"]);
    common::path_app(dir, "blog", &["/blog"]);
    common::app(
        dir,
        "www",
        "namespace: web\nservice: { name: www, port: 80 }\nhost: www.example.com\n",
    );
    let c = latgen::plan::rebalance::compaction::compaction(&project::built(dir).prepared).unwrap();
    assert_eq!((c.groups_now, c.lower_bound, c.dedicated), (3, 3, 1));
    let o = latgen(dir, &["plan"]);
    assert_eq!(o.code, Some(0));
    assert_eq!(
        o.stdout,
        "3 shared groups now; the path-routed apps fit in no fewer than 3 (lower bound: one request can match each of `/shop`, `/shop/cart` and `/shop/cart/v2` (Lattice compares paths as strings), and apps whose paths one request can match both never share a group)\n\
         1 host-routed app has a Lattice service of its own, which no move changes\n\
         no move brings the count down\n"
    );
}

/// Lattice compares paths as strings: `/pay`, `/payment` and `/payments` (and an Exact path
/// that starts with them) can all match one request, so their apps need a group each, and
/// the bound counts the chain.
#[test]
fn the_lower_bound_counts_apps_whose_paths_share_their_start() {
    let tmp = common::scratch();
    let dir = tmp.path();
    common::path_app(dir, "pay", &["/pay"]);
    common::path_app(dir, "payment", &["/payment"]);
    common::app(
        dir,
        "payments",
        "namespace: web\nservice: { name: payments, port: 80 }\npaths: [{ exact: /payments }]\n",
    );
    common::path_app(dir, "blog", &["/blog"]);
    let c = latgen::plan::rebalance::compaction::compaction(&project::built(dir).prepared).unwrap();
    assert_eq!((c.groups_now, c.lower_bound), (3, 3));
    assert!(
        c.bound_by
            .starts_with("one request can match each of `/pay`, `/payment` and `/payments`"),
        "{}",
        c.bound_by
    );
}

/// Each group reaches at most `targetGroupsPerService` Services.
#[test]
fn the_lower_bound_counts_services_over_the_target_group_quota() {
    let tmp = common::scratch();
    let dir = tmp.path();
    std::fs::write(
        dir.join("latgen.yaml"),
        "quotas:\n  targetGroupsPerService: 2\n",
    )
    .unwrap();
    for name in ["a", "b", "c", "d", "e"] {
        common::path_app(dir, name, &[&format!("/{name}")]);
    }
    let c = latgen::plan::rebalance::compaction::compaction(&project::built(dir).prepared).unwrap();
    assert_eq!((c.groups_now, c.lower_bound), (3, 3));
    assert_eq!(c.bound_by, "5 Services, 2 target groups a group");
}

/// Under header dispatch a host-routed app is in a group like any other, so it moves like
/// one.
#[test]
fn a_host_routed_app_moves_between_groups_under_header_dispatch() {
    let tmp = common::copy_project(&common::fixture("header"));
    let dir = tmp.path();
    let run = latgen(dir, &["render"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let run = latgen(dir, &["move", "www", "--group", "4"]);
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    let lock = std::fs::read_to_string(dir.join("latgen.lock")).unwrap();
    assert!(lock.contains("  www: {to: 4, step: 1}\n"), "{lock}");
}

/// Under header dispatch the example's 79 apps take 8 shared groups and no dedicated
/// service: $189.80 a month; each mode's `cost` prints what the other would cost.
#[test]
fn cost_under_header_dispatch_is_eight_services() {
    let tmp = common::header_copy_of_example();
    let c = latgen::plan::rebalance::monthly_cost::cost(&project::built(tmp.path()).prepared);
    assert_eq!((c.services, c.groups, c.dedicated, c.apps), (8, 8, 0, 79));
    assert_eq!(
        latgen::plan::rebalance::monthly_cost::dollars(c.monthly),
        "$189.80"
    );
    let o = latgen(tmp.path(), &["cost"]);
    assert!(
        o.stdout.contains("$189.80/month")
            && o.stdout
                .contains("with dispatch: path: 14 services, $332.15/month"),
        "{}",
        o.stdout
    );
    let o = latgen(tmp.path(), &["plan"]);
    assert!(
        o.stdout.starts_with(
            "8 shared groups now; the apps fit in no fewer than 8 (lower bound: 79 rules, 10 a group)\n"
        ),
        "{}",
        o.stdout
    );
    let o = latgen(&common::root(), &["cost"]);
    assert!(
        o.stdout
            .contains("with dispatch: header: 8 services, $189.80/month"),
        "{}",
        o.stdout
    );
}

#[test]
fn cost_reproduces_the_field_report() {
    let c = latgen::plan::rebalance::monthly_cost::cost(&project::built(&common::root()).prepared);
    assert_eq!((c.services, c.groups, c.dedicated, c.apps), (14, 8, 6, 79));
    assert_eq!(
        latgen::plan::rebalance::monthly_cost::dollars(c.monthly),
        "$332.15"
    );
    assert_eq!(
        latgen::plan::rebalance::monthly_cost::dollars(c.monthly_one_per_app),
        "$1,874.28"
    );
    assert_eq!((c.saving_ratio * 100.0).round(), 82.0);
    let o = latgen(&common::root(), &["cost"]);
    assert_eq!(o.code, Some(0));
    assert!(
        o.stdout.contains("$332.15/month")
            && o.stdout.contains("$1,874.28/month")
            && o.stdout.contains("(-82%)"),
        "{}",
        o.stdout
    );
}

/// A group planned before apps whose paths one request can match both were kept apart
/// (here: a lock that puts `/shop`, `/shopping` and `/shop-admin` in one group): `check`
/// warns, `plan --apply` records the moves that separate them, and `render --base` ships
/// them in three steps, each accepted by `check --base` with every path routed; at the end
/// no pair is left and `check` finds nothing.
#[test]
fn plan_apply_separates_committed_order_dependent_pairs_in_safe_steps() {
    let tmp = common::scratch();
    let dir = tmp.path();
    for (name, path) in [
        ("shop", "/shop"),
        ("shopping", "/shopping"),
        ("shop-admin", "/shop-admin"),
        ("blog", "/blog"),
    ] {
        common::path_app(dir, name, &[path]);
    }
    std::fs::write(
        dir.join("latgen.lock"),
        "version: 1\napps:\n  blog: 1\n  shop: 1\n  shop-admin: 1\n  shopping: 1\n",
    )
    .unwrap();
    common::git(dir, &["init", "-q"]);
    assert_eq!(latgen(dir, &["render"]).code, Some(0));
    commit(dir, "a group planned before the overlap rule");
    let warned = latgen(dir, &["check", "--format", "json"]);
    assert_eq!(warned.code, Some(0), "{}", warned.stdout);
    assert_eq!(warned.stdout.matches("order-dependent-group").count(), 2);
    let applied = latgen(dir, &["plan", "--apply"]);
    assert_eq!(applied.code, Some(0), "{}", applied.stderr);
    assert!(
        applied.stdout.contains("  shop: group-01 -> group-02"),
        "{}",
        applied.stdout
    );
    for step in 1..=3 {
        let r = latgen(dir, &["render", "--base", "HEAD"]);
        assert_eq!(r.code, Some(0), "step {step}: {}", r.stderr);
        assert!(
            r.stderr.starts_with(&format!("step {step} of 3")),
            "{}",
            r.stderr
        );
        let c = check_base(dir);
        assert_eq!(c.code, Some(0), "step {step}: {}", c.stdout);
        assert_routes(dir);
        commit(dir, &format!("step {step}"));
    }
    let clean = latgen(dir, &["check"]);
    assert_eq!(clean.code, Some(0), "{}", clean.stdout);
    assert!(
        !clean.stdout.contains("order-dependent-group"),
        "{}",
        clean.stdout
    );
    assert!(lock(dir).contains("  shop: 2\n"), "{}", lock(dir));
}
