//! The tree operations a rollout leans on give the same answer whichever way they take:
//! walking two sorted lists side by side where most files are asked for, looking each up
//! where few are. A change of every app (a switch of dispatch mode) takes the walks.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use crate::manifest::tree::{Docs, Text, Tree, changes, subtree};
use latgen_sim::routing::Doc;

/// A tree of `n` bridges (Services with an external name), each named by its number.
fn bridges(n: usize, target: &str) -> Tree {
    (0..n)
        .map(|i| {
            let rel = PathBuf::from(format!("kong/team-{}/service-app-{i}-lattice.yaml", i % 3));
            let text = format!(
                "apiVersion: v1\nkind: Service\nmetadata:\n  name: app-{i}-lattice\n  namespace: team-{}\nspec:\n  type: ExternalName\n  externalName: app-{i}.{target}\n",
                i % 3
            );
            (rel, Text::from(text))
        })
        .collect()
}

fn docs(tree: &Tree) -> Docs {
    Docs::read(tree)
}

/// Each document's path and the domain it sends requests to.
fn listed(docs: &Docs) -> Vec<(PathBuf, Vec<String>)> {
    (docs.iter())
        .map(|(rel, d)| {
            let domains = d.lattice_domains().into_iter().map(str::to_string);
            (rel.to_path_buf(), domains.collect())
        })
        .collect()
}

fn every_other(tree: &Tree, step: usize) -> BTreeSet<PathBuf> {
    tree.keys().step_by(step).cloned().collect()
}

#[test]
fn most_of_a_tree_kept_is_what_each_file_looked_up_keeps() {
    let tree = bridges(40, "lattice.local");
    // Half the files (walked) and one in twenty (looked up), each checked file by file.
    for keep in [every_other(&tree, 2), every_other(&tree, 20)] {
        let kept = subtree(&tree, &keep);
        let expected: Tree = (keep.iter())
            .map(|rel| (rel.clone(), Arc::clone(&tree[rel])))
            .collect();
        assert_eq!(kept, expected);
        let only = docs(&tree).only(&keep);
        assert_eq!(listed(&only), listed(&docs(&kept)));
    }
}

#[test]
fn a_kept_file_no_tree_holds_is_left_out() {
    let tree = bridges(4, "lattice.local");
    let mut keep: BTreeSet<PathBuf> = tree.keys().cloned().collect();
    keep.insert(PathBuf::from("kong/team-0/service-zzz-lattice.yaml"));
    keep.insert(PathBuf::from("a/first.yaml"));
    assert_eq!(subtree(&tree, &keep), tree);
    assert_eq!(docs(&tree).only(&keep).iter().count(), 4);
}

#[test]
fn every_document_changed_is_every_document_replaced() {
    let (old, new) = (bridges(30, "old.local"), bridges(30, "new.local"));
    let base = docs(&old);
    // Every file changes; one goes away and one comes in between the others.
    let mut changed: Vec<(PathBuf, Option<Arc<Doc>>)> = (docs(&new).iter())
        .map(|(rel, _)| rel.to_path_buf())
        .zip(docs_arcs(&new))
        .map(|(rel, doc)| (rel, Some(doc)))
        .collect();
    changed[7].1 = None;
    let added = PathBuf::from("kong/team-1/service-app-10a-lattice.yaml");
    let added_doc = docs_arcs(&bridges(1, "added.local")).remove(0);
    changed.push((added.clone(), Some(added_doc)));
    let after = base.with_changes(changed.clone());
    let mut expected: Tree = new.clone();
    expected.remove(&changed[7].0);
    let mut with_added = bridges(1, "added.local");
    expected.insert(added, with_added.pop_first().unwrap().1);
    let by_path: Vec<PathBuf> = after.iter().map(|(rel, _)| rel.to_path_buf()).collect();
    assert_eq!(by_path, expected.keys().cloned().collect::<Vec<_>>());
    let domains = |d: &Docs| {
        listed(d)
            .into_iter()
            .flat_map(|(_, h)| h)
            .collect::<Vec<_>>()
    };
    assert!(domains(&after).iter().all(|h| !h.ends_with("old.local")));
    assert_eq!(domains(&after).len(), 30);
}

fn docs_arcs(tree: &Tree) -> Vec<Arc<Doc>> {
    (tree.iter())
        .map(|(rel, text)| Arc::new(Doc::parse(rel, text, true).expect("a bridge parses")))
        .collect()
}

#[test]
fn a_change_of_every_file_says_so_and_one_file_kept_does_not() {
    let (old, new) = (bridges(10, "old.local"), bridges(10, "new.local"));
    let (changed, every) = changes(&old, &new);
    assert_eq!((changed.len(), every), (10, true));
    let mut one_kept = new.clone();
    let first = old.keys().next().unwrap().clone();
    one_kept.insert(first.clone(), Arc::clone(&old[&first]));
    let (changed, every) = changes(&old, &one_kept);
    assert_eq!((changed.len(), every), (9, false));
    // A file only one tree holds is a change too.
    let mut more = new.clone();
    more.insert(
        PathBuf::from("kong/extra.yaml"),
        Text::from("kind: ConfigMap\n"),
    );
    assert_eq!(changes(&old, &more), (changed_all(&old, &more), true));
}

fn changed_all(a: &Tree, b: &Tree) -> BTreeSet<PathBuf> {
    a.keys().chain(b.keys()).cloned().collect()
}

/// The example's output, with path dispatch and with header dispatch, as trees.
fn example_both_ways() -> (Tree, Tree) {
    let tmp = crate::suite::common::copy_project(&crate::suite::common::root());
    let dir = tmp.path();
    let tree = |dir: &std::path::Path| -> Tree {
        let mut files = crate::suite::project::render_dir(dir).expect("the example renders");
        files.remove(std::path::Path::new("latgen.lock"));
        files
            .into_iter()
            .map(|(rel, t)| (rel, Text::from(t)))
            .collect()
    };
    let path = tree(dir);
    let yaml = dir.join("latgen.yaml");
    let text = std::fs::read_to_string(&yaml).unwrap();
    assert!(
        text.contains("lattice:\n"),
        "the example sets lattice options"
    );
    std::fs::write(
        &yaml,
        text.replace("lattice:\n", "lattice:\n  dispatch: header\n"),
    )
    .unwrap();
    (path, tree(dir))
}

#[test]
fn a_change_of_every_file_is_scoped_as_if_each_file_on_the_way_were_looked_for() {
    use crate::rollout::scope::Scope;
    let (path, header) = example_both_ways();
    // The files the switch changes, alone: every file of both trees is then changed.
    let (changed, _) = changes(&path, &header);
    let (before, after) = (subtree(&path, &changed), subtree(&header, &changed));
    let (changed, every) = changes(&before, &after);
    assert!(every && changed.len() > 20, "{} files", changed.len());
    let nets = [
        crate::suite::project::network(&before),
        crate::suite::project::network(&after),
    ];
    let nets = [&nets[0], &nets[1]];
    let (taken, looked_for) = (
        Scope::of(&nets, (&changed, true)),
        Scope::of(&nets, (&changed, false)),
    );
    assert!(!taken.probes.is_empty());
    assert_eq!(taken.probes, looked_for.probes);
    assert_eq!(taken.files, looked_for.files);
}

/// The scope of a change between two networks as taken, and with every request followed.
fn taken_and_followed(
    nets: &[latgen_sim::routing::Network; 2],
    changed: (&BTreeSet<PathBuf>, bool),
) -> (crate::rollout::scope::Scope, crate::rollout::scope::Scope) {
    use crate::rollout::scope::Scope;
    let nets = [&nets[0], &nets[1]];
    (Scope::of(&nets, changed), Scope::followed(&nets, changed))
}

/// A switch of dispatch mode changes every route, bridge and Lattice service: the scope then
/// takes the changed files without following a request, and must be what following each
/// would find.
#[test]
fn a_change_of_every_route_is_scoped_as_if_each_request_were_followed() {
    let (path, header) = example_both_ways();
    let (changed, every) = changes(&path, &header);
    assert!(!every, "the switch leaves some files as they were");
    let nets = [
        crate::suite::project::network(&path),
        crate::suite::project::network(&header),
    ];
    let unchanged: Vec<&std::path::Path> = (nets.iter())
        .flat_map(|n| n.files_any_way_can_take())
        .filter(|f| !changed.contains(*f))
        .collect();
    assert!(unchanged.is_empty(), "ways through unchanged {unchanged:?}");
    let (taken, followed) = taken_and_followed(&nets, (&changed, every));
    assert!(!taken.probes.is_empty());
    assert_eq!(taken.probes, followed.probes);
    assert_eq!(taken.files, followed.files);
}

/// The same switch with one bridge left out of the changed files: the requests are followed,
/// and the bridge, on their way, is in the scope.
#[test]
fn a_change_that_leaves_a_bridge_out_follows_the_requests_to_it() {
    let (path, header) = example_both_ways();
    let (mut changed, every) = changes(&path, &header);
    let bridge = (changed.iter())
        .find(|f| f.to_string_lossy().ends_with("-lattice.yaml"))
        .expect("the switch changes a bridge")
        .clone();
    changed.remove(&bridge);
    let nets = [
        crate::suite::project::network(&path),
        crate::suite::project::network(&header),
    ];
    let (taken, followed) = taken_and_followed(&nets, (&changed, every));
    assert!(
        taken.files.contains(&bridge),
        "{} is on a way",
        bridge.display()
    );
    assert_eq!(taken.probes, followed.probes);
    assert_eq!(taken.files, followed.files);
}

/// A change of one Kong route: its requests are followed, and the scope takes the unchanged
/// files on their way, not every file a way can take.
#[test]
fn a_change_of_one_route_follows_its_requests() {
    use crate::manifest::layout::is_kong_file;
    let (path, _) = example_both_ways();
    let route = (path.keys())
        .find(|f| f.to_string_lossy().contains("httproute-") && is_kong_file(f))
        .expect("the example has a Kong route")
        .clone();
    let mut without = path.clone();
    without.remove(&route);
    let (changed, every) = changes(&path, &without);
    assert_eq!(changed, BTreeSet::from([route.clone()]));
    let nets = [
        crate::suite::project::network(&path),
        crate::suite::project::network(&without),
    ];
    let (taken, followed) = taken_and_followed(&nets, (&changed, every));
    let could: BTreeSet<&std::path::Path> = (nets.iter())
        .flat_map(|n| n.files_any_way_can_take())
        .collect();
    assert!(!taken.probes.is_empty());
    assert!(
        could.iter().any(|f| !taken.files.contains(*f)),
        "every file a way can take is in the scope"
    );
    assert!(
        taken.files.len() > changed.len(),
        "no file on the way was found"
    );
    assert_eq!(taken.probes, followed.probes);
    assert_eq!(taken.files, followed.files);
}

/// The files a request's way depends on are among those the network says a way can reach,
/// and those among the files any way can take, for every request the example's networks
/// probe, in both dispatch modes.
#[test]
fn every_file_on_a_requests_way_is_one_a_way_can_reach() {
    let (path, header) = example_both_ways();
    for tree in [&path, &header] {
        let net = crate::suite::project::network(tree);
        let any: std::collections::HashSet<&std::path::Path> =
            net.files_any_way_can_take().collect();
        let reach: std::collections::HashSet<&std::path::Path> =
            net.files_a_way_can_reach().collect();
        assert!(reach.is_subset(&any));
        let probes = net.probes();
        let followed: Vec<&std::path::Path> = (probes.iter())
            .flat_map(|(h, p)| net.files_on_the_way(h, p))
            .collect();
        assert!(followed.len() > probes.len(), "ways take files");
        for f in followed {
            assert!(reach.contains(f), "{} is on a way", f.display());
        }
    }
}

/// The first step of a switch from `path` to `header`: the switch's new Lattice services
/// added, Kong as it was; and those services' files.
fn first_step_of_switch(path: &Tree, header: &Tree) -> (Tree, Vec<PathBuf>) {
    let mut step = path.clone();
    let new: Vec<PathBuf> = (header.keys())
        .filter(|f| !path.contains_key(*f) && !crate::manifest::layout::is_kong_file(f))
        .cloned()
        .collect();
    for f in &new {
        step.insert(f.clone(), header[f].clone());
    }
    (step, new)
}

/// A Kong route that leaves the Host as the request had it can send a request to any Lattice
/// service: every Lattice route is then one a way can reach, even those no Kong route rewrites
/// the Host to (a switch's new services, at its first step).
#[test]
fn a_kong_route_that_keeps_the_host_can_reach_every_lattice_route() {
    use crate::manifest::layout::is_kong_file;
    let (path, header) = example_both_ways();
    let (mut step, new) = first_step_of_switch(&path, &header);
    let reach = |tree: &Tree| -> BTreeSet<PathBuf> {
        let net = crate::suite::project::network(tree);
        let out = net
            .files_a_way_can_reach()
            .map(std::path::Path::to_path_buf);
        out.collect()
    };
    // The new services' routes (the step makes their policies too).
    let net = crate::suite::project::network(&step);
    let any: BTreeSet<&std::path::Path> = net.files_any_way_can_take().collect();
    let new: Vec<&PathBuf> = new.iter().filter(|f| any.contains(f.as_path())).collect();
    assert!(!new.is_empty());
    assert!(new.iter().all(|f| !reach(&step).contains(*f)));
    let (rel, text) = (step.iter())
        .find(|(rel, text)| is_kong_file(rel) && text.contains("type: URLRewrite"))
        .map(|(rel, text)| (rel.clone(), text.to_string()))
        .expect("the example's Kong routes rewrite the Host");
    // The rule's one filter taken out: `filters:`, its type, `urlRewrite:` and `hostname:`.
    let lines: Vec<&str> = text.lines().collect();
    let at = (lines.iter())
        .position(|l| l.trim() == "- type: URLRewrite")
        .expect("a rewrite");
    assert_eq!(lines[at - 1].trim(), "filters:");
    assert!(lines[at + 2].trim().starts_with("hostname:"));
    assert!(!lines[at + 3].trim().starts_with("- type:"), "one filter");
    let kept: Vec<&str> = [&lines[..at - 1], &lines[at + 3..]].concat();
    let kept = kept.join("\n") + "\n";
    step.insert(rel, Text::from(kept));
    let reach = reach(&step);
    assert!(new.iter().all(|f| reach.contains(*f)));
}

/// A switch's second round: from its first step (the new Lattice services made, Kong as it
/// was) to the switch. No Kong route of the step reaches the new services, so the step's
/// network adds nothing to follow; the scope is what following each request finds.
#[test]
fn a_switchs_second_round_is_scoped_as_if_each_request_were_followed() {
    let (path, header) = example_both_ways();
    let (step, new) = first_step_of_switch(&path, &header);
    let (changed, every) = changes(&step, &header);
    let nets = [
        crate::suite::project::network(&step),
        crate::suite::project::network(&header),
    ];
    let unchanged = |files: Vec<&std::path::Path>| -> Vec<PathBuf> {
        let out = files.into_iter().filter(|f| !changed.contains(*f));
        out.map(std::path::Path::to_path_buf).collect()
    };
    let can_take = unchanged(nets[0].files_any_way_can_take().collect());
    assert!(
        !can_take.is_empty(),
        "the step's new services are unchanged"
    );
    assert!(can_take.iter().all(|f| new.contains(f)), "{can_take:?}");
    let can_reach = unchanged(nets[0].files_a_way_can_reach().collect());
    assert!(can_reach.is_empty(), "{can_reach:?}");
    let (taken, followed) = taken_and_followed(&nets, (&changed, every));
    assert!(!taken.probes.is_empty());
    assert!(
        new.iter().any(|f| taken.files.contains(f)),
        "the target reaches them"
    );
    assert_eq!(taken.probes, followed.probes);
    assert_eq!(taken.files, followed.files);
}

#[test]
fn each_item_is_paired_with_the_other_item_at_its_path_only() {
    let paths: Vec<PathBuf> = ["a/x.yaml", "a/y.yaml", "a-b/z.yaml", "b.yaml"]
        .into_iter()
        .map(PathBuf::from)
        .collect();
    let mut sorted = paths.clone();
    sorted.sort();
    // `a/…` sorts before `a-b/…` as paths, not as strings: the walk follows path order.
    assert_eq!(sorted, paths);
    let items = [&paths[0], &paths[1], &paths[3]].map(|p| (p, p.display().to_string()));
    let other = [&paths[1], &paths[2], &paths[3]].map(|p| (p, p.as_os_str().len()));
    let paired: Vec<(&PathBuf, String, Option<usize>)> =
        crate::manifest::tree::beside(items.into_iter(), other.into_iter()).collect();
    let at = |i: usize| (&paths[i], paths[i].display().to_string());
    assert_eq!(
        paired,
        [
            (at(0).0, at(0).1, None),
            (at(1).0, at(1).1, Some(8)),
            (at(3).0, at(3).1, Some(6)),
        ]
    );
}

#[test]
fn a_half_is_the_same_while_each_of_its_files_keeps_its_very_document() {
    use crate::manifest::layout::Side;
    let mut tree = bridges(6, "lattice.local");
    // One file on the Lattice side (`lattice/…`), read like the others.
    let lattice = PathBuf::from("lattice/team-0/service-app-0-lattice.yaml");
    tree.insert(lattice.clone(), Arc::clone(tree.values().next().unwrap()));
    let base = docs(&tree);
    assert_eq!(base.iter().count(), 7);
    assert!(base.same_half(&base.clone(), Side::Kong));
    assert!(base.same_half(&base.clone(), Side::Lattice));
    // Read again, the documents are equal but not the same ones: not taken for the same.
    assert!(!base.same_half(&docs(&tree), Side::Kong));
    // One Kong file changed, or gone: the Kong half differs, the Lattice half does not.
    let kong = tree
        .keys()
        .find(|rel| rel.starts_with("kong"))
        .unwrap()
        .clone();
    let other = docs_arcs(&bridges(1, "other.local")).remove(0);
    for edit in [Some(other), None] {
        let changed = base.with_changes(vec![(kong.clone(), edit.clone())]);
        assert!(!changed.same_half(&base, Side::Kong));
        assert!(changed.same_half(&base, Side::Lattice));
        // And the other way round, for the Lattice file.
        let changed = base.with_changes(vec![(lattice.clone(), edit)]);
        assert!(changed.same_half(&base, Side::Kong));
        assert!(!changed.same_half(&base, Side::Lattice));
    }
}

/// `lattice`'s Lattice side and `kong`'s Kong side, as one tree.
fn sides_of(lattice: &Tree, kong: &Tree) -> Tree {
    use crate::manifest::layout::{Side, side_of};
    let half = |tree: &Tree, side| {
        (tree.iter())
            .filter(move |(rel, _)| side_of(rel) == side)
            .map(|(rel, text)| (rel.clone(), Arc::clone(text)))
            .collect::<Vec<_>>()
    };
    (half(lattice, Side::Lattice).into_iter())
        .chain(half(kong, Side::Kong))
        .collect()
}

#[test]
fn a_state_that_leaves_one_side_as_the_base_is_judged_as_in_three_networks() {
    states_of_one_side_are_judged_as_in_three_networks(None);
}

/// The same with the example's auth on: the base is then judged by who it lets in, not by
/// where requests land.
#[test]
fn with_auth_a_state_that_leaves_one_side_as_the_base_is_judged_as_in_three_networks() {
    let root = crate::suite::common::root();
    let text = std::fs::read_to_string(root.join("latgen.yaml")).unwrap();
    let mut diags = crate::diag::Diagnostics::new();
    let config =
        crate::input::config::parse(std::path::Path::new("latgen.yaml"), &text, &mut diags)
            .expect("the example's settings parse");
    let probe = config.auth.probe().expect("the example has auth on");
    states_of_one_side_are_judged_as_in_three_networks(Some(probe));
}

fn states_of_one_side_are_judged_as_in_three_networks(auth: Option<latgen_sim::iam::AuthProbe>) {
    use crate::rollout::judge::{Gate, Judge};
    let (path, header) = example_both_ways();
    // Each way round, with a quota the union of a group's two versions passes and one it
    // does not: every state below is judged, safe or not, as on all three networks.
    for (base, target) in [(&path, &header), (&header, &path)] {
        for limit in [100, 5] {
            let gate = Gate {
                auth: auth.clone(),
                ..Gate::rules(limit)
            };
            let judge = Judge::with_gate(base, target, &gate);
            let states = [
                ("the base", base.clone()),
                ("the target", target.clone()),
                ("the Lattice side first", sides_of(target, base)),
                ("the Kong side first", sides_of(base, target)),
            ];
            for (what, state) in states {
                let docs = judge.docs(&state);
                let three = judge.safe_in_three_networks(&docs);
                assert_eq!(judge.safe(&docs), three, "{what} (limit {limit})");
            }
        }
    }
}
