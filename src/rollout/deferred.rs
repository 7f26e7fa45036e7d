//! The units of a step's phase that are left for a later step without being judged: those
//! that no order of the two Argo CD Applications can make safe in the step at hand (Kong sent
//! to a Lattice service the step creates, a Lattice service deleted that Kong still sends to,
//! a ReferenceGrant deleted that a route still needs). A switch of dispatch mode has one such
//! unit per app, and judging each would read every file.

use std::collections::BTreeSet;

use crate::manifest::layout::{Side, side_of};
use crate::manifest::tree::{Docs, TwoTrees, Which};
use crate::rollout::overlay::{Overlay, Unit};
use latgen_sim::routing::Doc;

/// Domains of Lattice services, only ever looked up: hashed, since a switch's step gathers
/// every app's (sorting them into an ordered set was a fifth of what a switch's step did on
/// its main thread itself, at 10,000 apps).
pub(super) type Domains<'d> = std::collections::HashSet<&'d str, latgen_sim::routing::Hasher>;

/// The domains of the Lattice services the state creates (routes the base does not have).
pub(super) fn created_domains<'j>(known: &'j TwoTrees, state: &Overlay) -> Domains<'j> {
    (state.edits.iter())
        .filter(|(rel, text)| text.is_some() && !state.base_holds(rel))
        .filter_map(|(rel, _)| known.doc_in(rel, Which::Target))
        .flat_map(|doc| doc.lattice_hostnames())
        .collect()
}

/// Whether a unit's Kong side sends requests to one of `created`: never safe in the step
/// that creates that service, since Kong may go live before it exists. Such a unit is left
/// for a later step without judging it: a switch of dispatch mode has one per app, and a
/// judgement per app reads every file, which grew with the square of the apps.
pub(super) fn points_at(known: &TwoTrees, unit: &Unit, created: &Domains<'_>) -> bool {
    !created.is_empty()
        && unit.iter().any(|(rel, text)| {
            text.is_some()
                && (known.doc_in(rel, Which::Target))
                    .is_some_and(|d| d.lattice_domains().iter().any(|h| created.contains(h)))
        })
}

/// The domains of the Lattice services the Kong side sends requests to, in the state or in
/// the base (either may be live while the Lattice side of the state is).
/// `state` is the state's documents of the files in scope (its Kong side is the base's or
/// the target's, never in between), walked rather than looked up file by file.
pub(super) fn kong_domains<'d>(base: &'d Docs, state: &'d Docs) -> Domains<'d> {
    let kong = |docs: &'d Docs| (docs.iter()).filter(|(rel, _)| side_of(rel) == Side::Kong);
    (kong(state).chain(kong(base)))
        .flat_map(|(_, d)| d.lattice_domains())
        .collect()
}

/// Whether a unit deletes a ReferenceGrant that a Lattice route of the state still needs
/// (a route in its `from` namespace with a backend in its namespace): the controller stops
/// resolving that route's backends once the grant is gone, whichever side is live. The
/// routing model does not follow grants, so this is judged here. Left for a later step,
/// like [`points_at`].
pub(super) fn removes_needed_grant(known: &TwoTrees, unit: &Unit, state: &Overlay) -> bool {
    let grants: Vec<(String, Vec<String>)> = (unit.iter())
        .filter(|(rel, text)| text.is_none() && side_of(rel) == Side::Lattice)
        .filter_map(|(rel, _)| grant_of(&known.side(rel, Which::Base).ok()??.0))
        .collect();
    if grants.is_empty() {
        return false;
    }
    // Only a route in a namespace a grant lets in can need it: its text names it.
    let froms: Vec<String> = (grants.iter())
        .flat_map(|(_, from)| from.iter().map(|f| format!("namespace: {f}\n")))
        .collect();
    // A route between two versions (its old and new rules) is read here; the others were.
    let docs: Vec<Doc> = (state.base.keys().chain(state.edits.keys()))
        .filter(|rel| side_of(rel) == Side::Lattice)
        .filter_map(|rel| {
            let text = state.get(rel)?;
            if !froms.iter().any(|f| text.contains(f.as_str())) {
                return None;
            }
            (known.doc(rel, text).map(|d| Doc::clone(d)))
                .or_else(|| Doc::parse(rel, text, false).ok())
        })
        .collect();
    let needed: Vec<(&str, BTreeSet<&str>)> = (docs.iter())
        .filter_map(|doc| doc.lattice_backend_namespaces())
        .collect();
    grants.iter().any(|(ns, from)| {
        (needed.iter()).any(|(at, to)| from.iter().any(|f| f == at) && to.contains(ns.as_str()))
    })
}

/// A ReferenceGrant's namespace and the namespaces it lets routes come from; None for any
/// other manifest.
fn grant_of(text: &str) -> Option<(String, Vec<String>)> {
    #[derive(serde::Deserialize)]
    struct Grant {
        kind: String,
        metadata: Meta,
        spec: Spec,
    }
    #[derive(serde::Deserialize)]
    struct Meta {
        namespace: String,
    }
    #[derive(serde::Deserialize)]
    struct Spec {
        from: Vec<From>,
    }
    #[derive(serde::Deserialize)]
    struct From {
        namespace: String,
    }
    if !text.contains("kind: ReferenceGrant") {
        return None;
    }
    let g: Grant = serde_saphyr::from_str(text).ok()?;
    (g.kind == "ReferenceGrant").then(|| {
        (
            g.metadata.namespace,
            g.spec.from.into_iter().map(|f| f.namespace).collect(),
        )
    })
}

/// Whether a unit deletes a Lattice service that the Kong side, the state's or the base's,
/// sends requests to (`in_use`): never safe, since the Lattice side may go live first. Left for
/// a later step without judging it, like [`points_at`].
pub(super) fn removes_in_use(known: &TwoTrees, unit: &Unit, in_use: &Domains<'_>) -> bool {
    unit.iter().any(|(rel, text)| {
        text.is_none()
            && (known.doc_in(rel, Which::Base)).is_some_and(|d| {
                d.lattice_hostnames()
                    .into_iter()
                    .any(|h| in_use.contains(h))
            })
    })
}
