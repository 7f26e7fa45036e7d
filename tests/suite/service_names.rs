//! Lattice service names (`lattice.serviceNamePrefix`): a new project's routes all carry
//! a valid, unique `service-name-override`; an upgraded project's existing routes keep the
//! controller's names; `check --also-lock` finds two projects that share a name.

use super::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::{latgen, read_tree};
use latgen::render::annotation_in;
use latgen_sim::platform::OVERRIDE_ANNOTATION;
use latgen_sim::platform::lattice_service_name_problem;

const PREFIX_SETTING: &str = "lattice:\n  serviceNamePrefix: shop-prod\n";

/// The example's apps (79: 8 groups and 6 dedicated routes), with `settings` as
/// latgen.yaml and, when `with_lock`, the example's committed lock (written before
/// service names were recorded).
fn example_project(settings: &str, with_lock: bool) -> tempfile::TempDir {
    let tmp = common::scratch();
    for (rel, text) in read_tree(&common::root().join("apps")) {
        let p = tmp.path().join("apps").join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    std::fs::write(tmp.path().join("latgen.yaml"), settings).unwrap();
    if with_lock {
        let lock = std::fs::read_to_string(common::root().join("latgen.lock")).unwrap();
        assert!(
            !lock.contains("services:"),
            "the example's lock predates names"
        );
        std::fs::write(tmp.path().join("latgen.lock"), lock).unwrap();
    }
    tmp
}

/// The Lattice-side routes of a rendered tree, by file name, with their override.
fn lattice_routes(dir: &Path) -> BTreeMap<String, Option<String>> {
    read_tree(&dir.join("generated/lattice"))
        .into_iter()
        .filter(|(p, _)| p.to_string_lossy().starts_with("httproute-"))
        .map(|(p, text)| (p.to_string_lossy().into_owned(), annotation_in(&text)))
        .collect()
}

fn render(dir: &Path) {
    let run = latgen(dir, &["render", "apps/", "-o", "generated/"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

#[test]
fn a_new_projects_group_and_dedicated_routes_all_carry_a_valid_unique_override() {
    let tmp = example_project(PREFIX_SETTING, false);
    render(tmp.path());
    let routes = lattice_routes(tmp.path());
    assert_eq!(
        routes.len(),
        14,
        "8 groups and 6 dedicated routes: {routes:?}"
    );
    let mut names = BTreeSet::new();
    for (file, name) in &routes {
        let name = name
            .as_ref()
            .unwrap_or_else(|| panic!("{file} carries no {OVERRIDE_ANNOTATION}"));
        assert_eq!(lattice_service_name_problem(name), None, "{file}: {name}");
        assert!(name.starts_with("shop-prod-"), "{file}: {name}");
        assert!(names.insert(name.clone()), "{name} is given twice");
    }
    assert_eq!(
        routes["httproute-group-01.yaml"].as_deref(),
        Some("shop-prod-g01")
    );
    let lock = std::fs::read_to_string(tmp.path().join("latgen.lock")).unwrap();
    assert!(
        lock.contains("  group-01: {name: shop-prod-g01, set: latgen}\n"),
        "{lock}"
    );
    assert_eq!(lock.matches("set: latgen}").count(), 14, "{lock}");
}

#[test]
fn an_upgraded_projects_existing_routes_keep_their_names_and_only_new_groups_get_one() {
    let tmp = example_project(PREFIX_SETTING, true);
    // Ten paths fill a group on their own: the app opens group 9.
    let paths: Vec<String> = (0..10).map(|i| format!("/bulk-{i}")).collect();
    let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
    common::path_app(tmp.path(), "bulk-import", &refs);
    render(tmp.path());
    let routes = lattice_routes(tmp.path());
    let before = read_tree(&common::root().join("generated/lattice"));
    for (file, name) in &routes {
        if file == "httproute-group-09.yaml" {
            assert_eq!(name.as_deref(), Some("shop-prod-g09"));
            continue;
        }
        assert_eq!(
            name, &None,
            "{file} existed: adding the override does nothing"
        );
        let unchanged = file == "httproute-group-01.yaml" || file.contains("developer-portal");
        if unchanged {
            assert_eq!(
                std::fs::read_to_string(tmp.path().join("generated/lattice").join(file)).unwrap(),
                before[&PathBuf::from(file)],
                "{file} is rendered as before"
            );
        }
    }
    let lock = std::fs::read_to_string(tmp.path().join("latgen.lock")).unwrap();
    assert!(
        lock.contains("  group-01: {name: group-01-lattice-groups, set: controller}\n"),
        "{lock}"
    );
    assert!(
        lock.contains("  group-09: {name: shop-prod-g09, set: latgen}\n"),
        "{lock}"
    );
    assert_eq!(lock.matches("set: controller}").count(), 14, "{lock}");
    // The names are recorded: rendering again changes nothing.
    let again = latgen(
        tmp.path(),
        &["render", "apps/", "-o", "generated/", "--check"],
    );
    assert_eq!(again.code, Some(0), "{}{}", again.stdout, again.stderr);
}

#[test]
fn also_lock_finds_a_collision_between_two_projects_and_none_with_distinct_prefixes() {
    let prod = example_project(PREFIX_SETTING, false);
    render(prod.path());
    let staging = example_project(PREFIX_SETTING, false);
    render(staging.path());
    // The other project checked out into a folder of this one, as CI would.
    let copy = |from: &Path, name: &str| {
        let to = prod.path().join("other").join(name);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(from.join("latgen.lock"), &to).unwrap();
        format!("other/{name}")
    };
    let other = &copy(staging.path(), "staging.lock");
    let run = latgen(prod.path(), &["check", "--also-lock", other]);
    assert_eq!(
        run.code,
        Some(0),
        "a collision is a warning: {}",
        run.stdout
    );
    assert!(
        run.stdout.contains("warning[service-name-collision]")
            && run.stdout.contains("`shop-prod-g01`"),
        "{}",
        run.stdout
    );
    let denied = latgen(
        prod.path(),
        &["check", "--deny-warnings", "--also-lock", other],
    );
    assert_eq!(denied.code, Some(1));

    let distinct = example_project("lattice:\n  serviceNamePrefix: shop-stg\n", false);
    render(distinct.path());
    let other = copy(distinct.path(), "distinct.lock");
    let run = latgen(prod.path(), &["check", "--also-lock", &other]);
    assert!(
        !run.stdout.contains("service-name-collision"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_too_long_service_name_is_refused_with_what_to_do() {
    // 36 characters: valid alone, but not with an app name after it.
    let prefix = "a-prefix-of-thirty-six-characters-ok";
    assert_eq!(prefix.len(), 36);
    let tmp = example_project(&format!("lattice:\n  serviceNamePrefix: {prefix}\n"), false);
    let run = latgen(tmp.path(), &["render", "apps/", "-o", "generated/"]);
    assert_eq!(
        run.code,
        Some(2),
        "render stops on an input error: {}",
        run.stderr
    );
    assert!(
        !tmp.path().join("latgen.lock").exists(),
        "nothing is written"
    );
    assert!(
        run.stderr.contains("error[invalid-lattice-name]")
            && run.stderr.contains("Lattice takes 3 to 40")
            && run.stderr.contains("shorten lattice.serviceNamePrefix"),
        "{}",
        run.stderr
    );
}

/// A lock outside the project is refused like every input there, before it is read: a CI
/// command line with `--also-lock /etc/shadow` (or a typo's worth of it) quotes nothing.
#[test]
fn an_also_lock_outside_the_project_is_refused_unread() {
    let prod = example_project(PREFIX_SETTING, false);
    render(prod.path());
    let outside = common::scratch();
    let secret = outside.path().join("secret.lock");
    std::fs::write(&secret, "root:SECRET-HASH:19000:0:99999:7:::\n").unwrap();
    let run = latgen(
        prod.path(),
        &["check", "--also-lock", secret.to_str().unwrap()],
    );
    let all = format!("{}{}", run.stdout, run.stderr);
    assert!(all.contains("input-outside-project"), "{all}");
    assert!(!all.contains("SECRET-HASH"), "it quoted the file:\n{all}");
    assert_ne!(run.code, Some(0));
}

#[cfg(unix)]
#[test]
fn an_also_lock_inside_the_project_may_not_link_out_of_it() {
    let prod = example_project(PREFIX_SETTING, false);
    render(prod.path());
    let staging = example_project(PREFIX_SETTING, false);
    render(staging.path());
    // The PR's content could hold such a link; the lock it points at would collide.
    std::os::unix::fs::symlink(
        staging.path().join("latgen.lock"),
        prod.path().join("also.lock"),
    )
    .unwrap();
    let run = latgen(prod.path(), &["check", "--also-lock", "also.lock"]);
    assert!(
        run.stdout.contains("input-outside-project")
            || run.stderr.contains("input-outside-project"),
        "{}{}",
        run.stdout,
        run.stderr
    );
    assert!(
        !run.stdout.contains("service-name-collision"),
        "{}",
        run.stdout
    );
}

#[test]
fn two_routes_of_one_project_with_one_name_are_a_warning_and_trace_and_cost_show_names() {
    let tmp = example_project(PREFIX_SETTING, false);
    // A host-routed app named like group 1's suffix would be `shop-prod-g01` twice: refused.
    let g01 =
        "namespace: team\nservice: { name: g01, port: 8080 }\nhost: g01.example.com\npaths: [/]\n";
    common::app(tmp.path(), "g01", g01);
    let run = latgen(tmp.path(), &["render", "apps/", "-o", "generated/"]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("error[reserved-name]: host-routed app `g01` would get the Lattice service name `shop-prod-g01`, which is group 1's"),
        "{}",
        run.stderr
    );
    std::fs::remove_file(tmp.path().join("apps/g01.yaml")).unwrap();
    let run = latgen(tmp.path(), &["render", "apps/", "-o", "generated/"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // A name the lock records for a new route that group 1 has already: a warning.
    common::app(tmp.path(), "spare", &g01.replace("g01", "spare"));
    let lock = std::fs::read_to_string(tmp.path().join("latgen.lock")).unwrap();
    let lock = lock.replacen(
        "services:\n",
        "services:\n  spare: {name: shop-prod-g01, set: latgen}\n",
        1,
    );
    std::fs::write(tmp.path().join("latgen.lock"), lock).unwrap();
    let run = latgen(tmp.path(), &["render", "apps/", "-o", "generated/"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr.contains("warning[service-name-collision]")
            && run.stderr.contains("routes `group-01` and `spare`"),
        "{}",
        run.stderr
    );
    let cost = latgen(tmp.path(), &["cost"]);
    assert!(
        cost.stdout.contains("  group-01: shop-prod-g01 (latgen)\n"),
        "{}",
        cost.stdout
    );
    let trace = latgen(tmp.path(), &["trace", "/shop/cart/x"]);
    assert!(
        trace
            .stdout
            .contains("lattice   service shop-prod-g02 (route lattice-groups/group-02)"),
        "{}",
        trace.stdout
    );
}

/// The placeholder prefix `init` writes: render warns when it writes a route new to the
/// output folder (which would keep the controller's name once created), naming the route;
/// rendering the same routes again does not repeat it.
#[test]
fn render_warns_when_it_writes_a_new_route_while_the_prefix_is_the_placeholder() {
    let tmp = common::scratch();
    let settings = format!(
        "lattice:\n  serviceNamePrefix: {}\n",
        latgen::input::config::PLACEHOLDER
    );
    std::fs::write(tmp.path().join("latgen.yaml"), settings).unwrap();
    common::path_app(tmp.path(), "shop", &["/shop"]);
    let render = |dir: &Path| {
        let run = latgen(dir, &["render"]);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        run.stderr
    };
    let first = render(tmp.path());
    assert!(
        first.contains("warning[placeholder-setting]: lattice.serviceNamePrefix is still the placeholder `CHANGE-ME`, and render writes a new route, lattice/httproute-group-01.yaml, with no Lattice service name"),
        "{first}"
    );
    assert!(first.contains("  --> latgen.yaml:2:22\n"), "{first}");
    let again = render(tmp.path());
    assert!(!again.contains("placeholder-setting"), "{again}");
}
