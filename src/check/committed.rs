//! What the committed manifests show on their own, through the routing model: shadowed
//! rules, routes that resolve nowhere, routes over their quotas, plugins, canaries,
//! previews and auth. The manifests exactly as rendered are modelled from the render's
//! typed model instead of being parsed again.

use crate::manifest::tree::Tree;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::route_findings::{
    order_dependence, resolution, route_quotas, shadowing, unnamed_header_rules,
};
use super::{access, canary_routes, plugins, preview_expiry};
use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::manifest::layout::is_kong_file;
use crate::plan::prepared::Prepared;
use crate::render::Rendered;
use latgen_sim::routing::{Doc, Network, Source};

/// What the committed manifests are judged against: the project as built (when it could
/// be) and the plugins `kong.pluginFiles` defines (when it names any).
pub(super) type Project<'a> = (Option<&'a Prepared>, Option<&'a plugins::Catalog>);

/// The findings of the committed manifests' routing model (see [`network_findings`]), which
/// is `known` when it was read already.
pub(super) fn committed_findings(
    manifests: &[Manifest<'_>],
    (project, known, built_in): (Project<'_>, Option<&Network>, bool),
    out_dir: &Path,
) -> Diagnostics {
    // The Lattice routes and auth policies exactly as the built-in templates render them:
    // their auth is proven for any declarations (tests/suite/properties.rs), not probed.
    let proven: BTreeSet<&Path> = (manifests.iter())
        .filter(|m| built_in && m.read.is_some() && !m.is_kong)
        .map(|m| m.path)
        .collect();
    let mut diags = Diagnostics::new();
    // The rollout step's state leaves out a file it cannot parse; the model built here
    // reports it instead. Only the files not modelled by the render are parsed.
    let known = known.filter(|_| {
        (manifests.iter())
            .filter(|m| m.read.is_none())
            .all(|m| latgen_sim::routing::Doc::parse(m.path, m.text, is_kong_file(m.path)).is_ok())
    });
    let mut read = None;
    let net = match known {
        Some(net) => net,
        None => match network(manifests, &BTreeSet::new(), out_dir, &mut diags) {
            Some(net) => &*read.insert(net),
            None => return diags,
        },
    };
    let mut found = network_findings(net, project, &proven);
    // The findings about manifests modelled without line numbers are found again with
    // those manifests parsed, so that they point at the right lines. Findings are few,
    // so this reads a few files at most.
    let unplaced: BTreeSet<&Path> = found
        .iter()
        .flat_map(|d| d.span.iter().chain(d.related.iter().map(|l| &l.span)))
        .map(|s| s.file.as_path())
        .collect();
    let modelled_unplaced = manifests
        .iter()
        .any(|m| m.read.is_some() && unplaced.contains(m.path));
    if modelled_unplaced {
        // Parsing a file can fail where its typed read-back did not (a custom template's
        // quirk); then the file is unreadable to the model, as when it is parsed first.
        let mut unreadable = Diagnostics::new();
        found = match network(manifests, &unplaced, out_dir, &mut unreadable) {
            Some(net) => network_findings(&net, project, &proven),
            None => unreadable,
        };
    }
    diags.extend(placed(found, manifests, out_dir));
    crate::diag::free_later(read);
    diags
}

/// `found` pointing into the output folder: the routing model names the manifests by
/// their path in it.
fn placed(found: Diagnostics, manifests: &[Manifest<'_>], out_dir: &Path) -> Diagnostics {
    let place = |span: &mut Span| {
        if manifests
            .binary_search_by(|m| m.path.cmp(&span.file))
            .is_ok()
        {
            span.file = out_dir.join(&span.file);
        }
    };
    let mut diags = Diagnostics::new();
    for mut d in found {
        d.span.iter_mut().for_each(place);
        d.related.iter_mut().for_each(|l| place(&mut l.span));
        diags.push(d);
    }
    diags
}

/// What the committed manifests show on their own: shadowed rules, routes that resolve
/// nowhere, and routes over their quotas.
fn network_findings(
    net: &Network,
    (prepared, catalog): Project<'_>,
    proven: &BTreeSet<&Path>,
) -> Diagnostics {
    let mut diags = Diagnostics::new();
    let shadows = shadowing(net);
    // A route whose rules shadow each other misroutes; that finding says why, so the
    // misroutes it causes are not reported again.
    let flagged: BTreeSet<String> = net
        .lattice
        .iter()
        .filter(|r| {
            shadows
                .iter()
                .any(|d| d.span.as_ref().is_some_and(|s| s.file == r.file))
        })
        .map(|r| format!("{}/{}", r.namespace, r.name))
        .collect();
    diags.extend(shadows);
    // Following every Kong route's requests is most of the work: the rest is found beside it.
    let (resolved, rest) = rayon::join(
        || resolution(net, prepared, &flagged),
        || {
            let mut diags = unnamed_header_rules(net);
            let header = prepared.map_or("", |p| &p.config.lattice.dispatch_header);
            diags.extend(plugins::kong_plugins(net, catalog, header));
            diags.extend(order_dependence(
                net,
                (
                    prepared.map_or(&[], |p| &p.apps),
                    prepared.and_then(|p| p.config.env_name()),
                ),
            ));
            if let Some(prepared) = prepared {
                diags.extend(route_quotas(net, prepared));
                diags.extend(canary_routes::canary_findings(net, prepared));
                diags.extend(preview_expiry::preview_findings(prepared));
                let (apps, config) = (&prepared.apps, &prepared.config);
                diags.extend(access::auth_findings(net, (apps, config), proven));
            }
            diags
        },
    );
    diags.extend(rest);
    diags.extend(resolved);
    diags
}

/// A committed manifest for the routing model: its path in the output folder, its text, the
/// render's model of it when the file is exactly what was rendered, and which half it
/// belongs to.
pub(super) struct Manifest<'a> {
    path: &'a Path,
    text: &'a str,
    read: Option<&'a Doc>,
    is_kong: bool,
}

/// The committed manifests for the routing model, each with the render's model of it when
/// it is exactly what was rendered: modelled from the render's typed model instead of being
/// parsed (half of check's time on a large tree). Such a model has no line numbers; see
/// `network_findings`.
pub(super) fn to_model<'a>(
    committed: &'a Tree,
    rendered: Option<&'a Result<(Rendered, crate::manifest::tree::Docs), Diagnostics>>,
) -> Vec<Manifest<'a>> {
    let manifest = |(rel, text, read): (
        &'a PathBuf,
        &'a crate::manifest::tree::Text,
        Option<&'a Doc>,
    )| Manifest {
        path: rel,
        text,
        read,
        is_kong: is_kong_file(rel),
    };
    match rendered {
        Some(Ok((out, docs))) => {
            crate::manifest::tree::with_known_docs(committed, (&out.files, docs))
                .map(manifest)
                .collect()
        }
        _ => (committed.iter())
            .filter(|(rel, _)| !crate::manifest::layout::is_kustomization(rel))
            .map(|(rel, text)| manifest((rel, text, None)))
            .collect(),
    }
}

/// The routing model of the committed manifests; those in `parse` are parsed even when
/// the render modelled them already (for their line numbers).
fn network(
    manifests: &[Manifest<'_>],
    parse: &BTreeSet<&Path>,
    out_dir: &Path,
    diags: &mut Diagnostics,
) -> Option<Network> {
    let list: Vec<(&Path, Source<'_>, bool)> = manifests
        .iter()
        .map(|m| {
            let source = match m.read {
                Some(doc) if !parse.contains(m.path) => Source::Read(doc),
                _ => Source::Text(m.text),
            };
            (m.path, source, m.is_kong)
        })
        .collect();
    let (net, errors) = Network::from_sources(&list);
    for (path, e) in &errors {
        // The model names the file by its path in the output folder; a finding names it by
        // where it is.
        let why = e
            .strip_prefix(&format!("{}: ", path.display()))
            .unwrap_or(e);
        let path = out_dir.join(path);
        diags.push(
            Diagnostic::error(
                Code::YamlSyntax,
                format!(
                    "a committed manifest cannot be read: {}: {why}",
                    path.display()
                ),
            )
            .at(Span::file(path))
            .help("run `latgen render` to write it anew"),
        );
    }
    errors.is_empty().then_some(net)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rollout step's state of the committed tree leaves out a file it cannot parse;
    /// taken as the committed model, it would hide that file and misroute its requests.
    #[test]
    fn a_known_state_does_not_hide_a_committed_file_that_cannot_be_parsed() {
        let manifests = [Manifest {
            path: Path::new("kong/httproute-a.yaml"),
            text: "kind: [unclosed\n",
            read: None,
            is_kong: true,
        }];
        let known = Network::default();
        let project = (None, None);
        let found = committed_findings(&manifests, (project, Some(&known), true), Path::new("out"));
        let at = Path::new("out/kong/httproute-a.yaml");
        assert!(
            found.iter().any(
                |d| d.code == Code::YamlSyntax && d.span.as_ref().is_some_and(|s| s.file == at)
            ),
            "{found:?}"
        );
    }
}
