//! A step's monitoring follows its Kong side. The PrometheusRule of a Lattice route counts
//! the apps whose requests reach it, and the Kong side decides that: while a move's new
//! rules are live and Kong still sends the app to its old group, the old group's rules
//! count it; the step that switches Kong switches them too. These files are on the Kong
//! side, so a step that changes only the Lattice side leaves every Kong file as it was.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::manifest::layout::is_kustomization;
use crate::manifest::tree::{Docs, Text, Tree, Versions, changed_files, state};
use crate::render::{service_rule_file, service_rule_route};
use latgen_sim::routing::Network;

/// Whether file `rel` is a Lattice route's monitoring, which a step writes from its Kong
/// side ([`follow`]) rather than as an edit of its own.
pub(crate) fn follows_kong(rel: &Path) -> bool {
    service_rule_route(rel).is_some()
}

/// The apps (by name) the Kong side of `net` sends to each Lattice route (by name);
/// previews' routes aside, which no PrometheusRule counts.
pub(crate) fn served(net: &Network) -> BTreeMap<&str, BTreeSet<&str>> {
    let mut out: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for kong in net.kong.iter().filter(|k| k.preview.is_none()) {
        let to = (kong.backend.as_ref())
            .and_then(|b| net.bridge(&b.namespace, &b.name))
            .and_then(|bridge| net.lattice_service(&bridge.target));
        if let Some(route) = to {
            out.entry(route.name.as_str())
                .or_default()
                .insert(kong.app_name());
        }
    }
    out
}

/// A step from `at` toward `target` (trees, their routing states; the target's documents)
/// with its monitoring made to follow its Kong side, and its documents and routing state.
/// A route's PrometheusRule is the target's where its Kong side sends the route the apps
/// the target's does, else `at`'s where it sends the apps `at`'s does, else made for the
/// apps it sends (kept as in `at` when it cannot be made).
pub(crate) fn follow(
    step: Tree,
    (at, at_docs, at_net): (&Tree, &Docs, &Network),
    (target, target_docs, target_net): (&Tree, &Docs, &Network),
    versions: &dyn Versions,
) -> (Tree, Docs, Network) {
    let docs = Docs::read_like_either(&step, (target, target_docs), Some((at, at_docs)));
    let net = state(&docs, &docs);
    let changed = changed_files(at, target);
    let moved: Vec<&str> = (changed.iter())
        .filter_map(|rel| service_rule_route(rel))
        .collect();
    // No route's monitoring differs between the two: each app is sent to the same route in
    // both, and so in the step.
    if moved.is_empty() {
        return (step, docs, net);
    }
    let (now, before, after) = (served(&net), served(at_net), served(target_net));
    let none = BTreeSet::new();
    let mut edits: Vec<(PathBuf, Option<Text>)> = Vec::new();
    for route in moved {
        let file = service_rule_file(route);
        let apps = now.get(route).unwrap_or(&none);
        let text = if apps == after.get(route).unwrap_or(&none) {
            target.get(&file).cloned()
        } else if apps == before.get(route).unwrap_or(&none) {
            at.get(&file).cloned()
        } else if apps.is_empty() {
            None
        } else {
            let names: Vec<&str> = apps.iter().copied().collect();
            (versions.monitoring(route, &names).map(Text::from)).or_else(|| at.get(&file).cloned())
        };
        if step.get(&file) != text.as_ref() {
            edits.push((file, text));
        }
    }
    if edits.is_empty() {
        return (step, docs, net);
    }
    let mut files: Tree = (step.into_iter())
        .filter(|(rel, _)| !is_kustomization(rel))
        .collect();
    for (file, text) in edits {
        match text {
            Some(t) => files.insert(file, t),
            None => files.remove(&file),
        };
    }
    let files = crate::rollout::judge::with_kustomizations(files, versions);
    // The files edited route nothing: the routing state stays the step's.
    let docs = Docs::read_like_either(&files, (target, target_docs), Some((at, at_docs)));
    (files, docs, net)
}
