//! Planning properties: deterministic output, stable assignments (adding or removing an
//! app moves no other), emptied slots reused first, and quotas never exceeded.

use super::common;
use super::project;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use latgen::input::app::MatchKind;
use latgen_sim::platform::nests_under;
use pretty_assertions::assert_eq;

fn lock_of(dir: &Path) -> BTreeMap<String, u32> {
    project::built(dir).prepared.plan.lock.apps
}

/// Renders and writes the lock back, as `latgen render` does.
fn render_and_lock(dir: &Path) -> BTreeMap<String, u32> {
    let built = project::built(dir);
    std::fs::write(dir.join("latgen.lock"), built.prepared.lock_text()).unwrap();
    built.prepared.plan.lock.apps.clone()
}

/// A small deterministic generator (xorshift), so failures reproduce from the seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const ROOTS: &[&str] = &[
    "shop",
    "shopping",
    "shop-admin",
    "api",
    "cart",
    "pay",
    "payment",
    "help",
    "a",
    "ab",
    "b",
];
const SUBS: &[&str] = &["cart", "v2", "v22", "faq", "x", "items"];

/// `n` apps with unique paths drawn so that many share string prefixes and some nest.
fn random_project(dir: &Path, seed: u64, n: usize) {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut used = BTreeSet::new();
    for i in 0..n {
        let count = 1 + rng.below(3) as usize;
        let mut paths = Vec::new();
        while paths.len() < count {
            let root = ROOTS[rng.below(ROOTS.len() as u64) as usize];
            let p = match rng.below(3) {
                0 => format!("/{root}"),
                1 => format!("/{root}/{}", SUBS[rng.below(SUBS.len() as u64) as usize]),
                _ => format!("/{root}{i}"),
            };
            if used.insert(p.clone()) {
                paths.push(p);
            }
        }
        let name = format!("app-{:03}", (i * 37) % 1000);
        let extra = match rng.below(8) {
            0 => "isolate: true\n".to_string(),
            1 => format!("peakRps: {}\n", 1000 + rng.below(6000)),
            _ => String::new(),
        };
        common::app(
            dir,
            &name,
            &format!(
                "namespace: ns-{}\nservice: {{ name: {name}, port: 8080 }}\npaths: [{}]\n{extra}",
                rng.below(4),
                paths.join(", ")
            ),
        );
    }
}

fn assert_plan_invariants(dir: &Path) {
    let built = project::built(dir);
    let p = &built.prepared;
    let cap = p.config.quotas.rules_per_group() as usize;
    let mut seen = BTreeSet::new();
    for g in &p.plan.groups {
        assert!(!g.apps.is_empty(), "group {} is empty", g.number);
        assert!(
            g.rules.len() <= cap,
            "group {} has {} rules over {cap}",
            g.number,
            g.rules.len()
        );
        assert!(g.rules.len() <= 16);
        let backends: BTreeSet<_> = g.apps.iter().map(|&i| p.apps[i].backend()).collect();
        assert!(backends.len() <= p.config.quotas.target_groups_per_service as usize);
        assert!(
            g.apps.iter().filter(|&&i| p.apps[i].isolate).count() <= 1,
            "two isolated apps in group {}",
            g.number
        );
        let rps: u64 = g.apps.iter().filter_map(|&i| p.apps[i].peak_rps).sum();
        assert!(rps <= p.config.throughput.rps_per_service);
        for a in &g.rules {
            for b in &g.rules {
                if a.app != b.app && a.kind == MatchKind::Prefix && b.kind == MatchKind::Prefix {
                    assert!(
                        !nests_under(&a.path, &b.path),
                        "group {}: {} nests under {}",
                        g.number,
                        a.path,
                        b.path
                    );
                }
            }
        }
        // Rule order: longest first, Exact before PathPrefix on ties.
        for w in g.rules.windows(2) {
            assert!(
                w[0].path.len() > w[1].path.len()
                    || (w[0].path.len() == w[1].path.len()
                        && (w[0].kind, &w[0].path) <= (w[1].kind, &w[1].path))
            );
        }
        for &i in &g.apps {
            assert!(seen.insert(i), "app {} is in two groups", p.apps[i].name);
        }
    }
    let path_apps = p.apps.iter().filter(|a| a.host.is_none()).count();
    assert_eq!(
        seen.len(),
        path_apps,
        "every path-routed app is in exactly one group"
    );
}

#[test]
fn output_does_not_depend_on_the_order_files_were_created() {
    let forward = common::scratch();
    let backward = common::scratch();
    let src = common::read_tree(&common::root().join("apps"));
    for (rel, text) in &src {
        common::write_tree(
            &forward.path().join("apps"),
            &BTreeMap::from([(rel.clone(), text.clone())]),
        );
    }
    for (rel, text) in src.iter().rev() {
        common::write_tree(
            &backward.path().join("apps"),
            &BTreeMap::from([(rel.clone(), text.clone())]),
        );
    }
    let a = project::render_dir(forward.path()).unwrap();
    let b = project::render_dir(backward.path()).unwrap();
    assert_eq!(a, b);
    // And rendering twice gives the same bytes.
    assert_eq!(a, project::render_dir(forward.path()).unwrap());
}

#[test]
fn adding_an_app_moves_no_existing_app() {
    let tmp = common::copy_project(&common::root());
    let before = render_and_lock(tmp.path());
    // Sorts before every other app, and one that nests under an existing prefix.
    common::path_app(tmp.path(), "aaa-first", &["/aaa"]);
    common::path_app(tmp.path(), "shop-deals", &["/shop/deals"]);
    let after = lock_of(tmp.path());
    for (app, group) in &before {
        assert_eq!(after.get(app), Some(group), "{app} moved");
    }
    assert_eq!(after.len(), before.len() + 2);
    // The nested app avoided the group of `/shop`.
    assert_ne!(after["shop-deals"], after["shop-web"]);
}

#[test]
fn a_removed_app_frees_its_slot_for_the_next_new_app() {
    let tmp = common::scratch();
    for i in 0..25 {
        common::path_app(tmp.path(), &format!("app{i:02}"), &[&format!("/p{i:02}")]);
    }
    let before = render_and_lock(tmp.path());
    assert_eq!(
        before.values().collect::<BTreeSet<_>>().len(),
        3,
        "25 one-rule apps fill groups 1, 2 and 3"
    );
    std::fs::remove_file(tmp.path().join("apps/app04.yaml")).unwrap();
    let freed = before["app04"];
    common::path_app(tmp.path(), "zz-new", &["/new"]);
    let after = lock_of(tmp.path());
    assert_eq!(
        after["zz-new"], freed,
        "the freed slot in group {freed} is reused"
    );
    assert!(!after.contains_key("app04"));
}

#[test]
fn an_emptied_group_number_is_reused_before_a_new_one() {
    let tmp = common::scratch();
    for i in 0..30 {
        common::path_app(tmp.path(), &format!("app{i:02}"), &[&format!("/p{i:02}")]);
    }
    let before = render_and_lock(tmp.path());
    for (app, g) in &before {
        if *g == 2 {
            std::fs::remove_file(tmp.path().join(format!("apps/{app}.yaml"))).unwrap();
        }
    }
    render_and_lock(tmp.path());
    common::path_app(tmp.path(), "newcomer", &["/newcomer"]);
    let after = lock_of(tmp.path());
    assert_eq!(after["newcomer"], 2);
    let groups: BTreeSet<u32> = after.values().copied().collect();
    assert_eq!(groups, BTreeSet::from([1, 2, 3]));
}

#[test]
fn quotas_isolation_and_nesting_hold_for_many_generated_projects() {
    for seed in 1..=40 {
        let tmp = common::scratch();
        random_project(tmp.path(), seed, 20 + (seed as usize * 7) % 60);
        assert_plan_invariants(tmp.path());
    }
}

#[test]
fn stability_holds_across_a_sequence_of_adds_and_removals() {
    let tmp = common::scratch();
    random_project(tmp.path(), 7, 40);
    let mut lock = render_and_lock(tmp.path());
    let mut rng = Rng(99);
    for step in 0..15 {
        let apps: Vec<_> = common::read_tree(&tmp.path().join("apps"))
            .into_keys()
            .collect();
        if rng.below(3) == 0 && !apps.is_empty() {
            let victim = &apps[rng.below(apps.len() as u64) as usize];
            std::fs::remove_file(tmp.path().join("apps").join(victim)).unwrap();
        } else {
            common::path_app(
                tmp.path(),
                &format!("added-{step}"),
                &[&format!("/added{step}"), &format!("/added{step}/v2")],
            );
        }
        let next = render_and_lock(tmp.path());
        for (app, g) in &next {
            if let Some(old) = lock.get(app) {
                assert_eq!(old, g, "step {step}: {app} moved");
            }
        }
        assert_plan_invariants(tmp.path());
        lock = next;
    }
}

/// A path-routed app `name` on `/name` that declares a peak of `rps`.
fn peak_app(dir: &Path, name: &str, rps: u64) {
    common::app(
        dir,
        name,
        &format!(
            "namespace: team\nservice: {{ name: {name}, port: 8080 }}\npaths: [/{name}]\npeakRps: {rps}\n"
        ),
    );
}

/// The `app-over-budget` findings of `built`, as messages.
fn over_budget(built: &latgen::pipeline::Built) -> Vec<String> {
    (built.diags.iter())
        .filter(|d| d.code == latgen::diag::codes::Code::AppOverBudget)
        .map(|d| d.message.clone())
        .collect()
}

/// An app that grows past a whole Lattice service's budget is not moved out of its group:
/// no group carries it, so a move would only take the overload elsewhere (a new group at
/// 120%). The others locked there stay too, whichever side of it their names sort, and the
/// finding names the app, its peak, the budget and the apps that share its service.
#[test]
fn an_app_over_a_whole_services_budget_stays_in_its_group() {
    let tmp = common::scratch();
    for name in ["alpha", "bravo", "charlie"] {
        peak_app(tmp.path(), name, 3000);
    }
    let before = render_and_lock(tmp.path());
    assert_eq!(BTreeSet::from_iter(before.values()), BTreeSet::from([&1]));
    peak_app(tmp.path(), "bravo", 12_000);
    let built = project::built(tmp.path());
    assert_eq!(built.prepared.plan.lock.apps, before);
    assert!(built.prepared.plan.outgrown.is_empty());
    assert_eq!(
        over_budget(&built),
        [
            "app `bravo` declares peakRps 12,000, more than a Lattice service's whole budget of 10,000 rps (`throughput.rpsPerService`): no group carries it, and a move would only take the overload elsewhere, so it stays in group-01, where it overloads the Lattice service of `alpha` and `charlie` too"
        ]
    );
}

/// A new app over a whole service's budget gets a group of its own, the one first-fit
/// opens: it fits beside nothing that declares a peak, and nothing that does joins it.
#[test]
fn a_new_app_over_a_whole_services_budget_gets_a_group_of_its_own() {
    let tmp = common::scratch();
    peak_app(tmp.path(), "alpha", 3000);
    peak_app(tmp.path(), "bravo", 50_000);
    peak_app(tmp.path(), "charlie", 3000);
    let built = project::built(tmp.path());
    let lock = &built.prepared.plan.lock.apps;
    assert_eq!(
        lock.iter()
            .map(|(a, &g)| (a.as_str(), g))
            .collect::<Vec<_>>(),
        [("alpha", 1), ("bravo", 2), ("charlie", 1)]
    );
    assert_eq!(
        over_budget(&built),
        [
            "app `bravo` declares peakRps 50,000, more than a Lattice service's whole budget of 10,000 rps (`throughput.rpsPerService`): no group carries it, and it is alone in group-02"
        ]
    );
}

/// A host-routed app over the budget is named too: its own Lattice service cannot carry it.
#[test]
fn a_host_routed_app_over_a_whole_services_budget_is_named() {
    let tmp = common::scratch();
    common::app(
        tmp.path(),
        "www",
        "namespace: web\nservice: { name: www, port: 8080 }\nhost: www.example.com\npeakRps: 12000\n",
    );
    let built = project::built(tmp.path());
    assert_eq!(
        over_budget(&built),
        [
            "app `www` declares peakRps 12,000, more than a Lattice service's whole budget of 10,000 rps (`throughput.rpsPerService`): its own Lattice service (route `www`) cannot carry it"
        ]
    );
}
