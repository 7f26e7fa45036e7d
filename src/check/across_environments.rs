//! What only shows between environments (`check --env all`): each environment is right on
//! its own, and together they break each other.
//!
//! - A Lattice service name is unique in its account and Region: two environments there
//!   that name a service alike share one service, their controllers overwrite each other's
//!   listeners and rules, and deleting one route deletes the service of both (the AWS
//!   controller's issues #453 and #252).
//! - Two environments that write one object (kind, namespace, name) into one cluster take
//!   it from each other on every sync.
//! - A VPC is associated with one service network at most: a second environment's
//!   network reaches that VPC only through a service-network endpoint (the controller's
//!   `docs/guides/service-network-endpoint.md`).
//! - Two deploy kits that name their Argo CD AppProject and Applications alike in one
//!   Argo CD namespace are one set of objects in one Argo CD: the kit applied last wins.

use crate::manifest::tree::Tree;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::config::Config;
use crate::input::places::Places;
use crate::manifest::layout::Side;
use crate::plan::prepared::Prepared;
use crate::render::deploy_kit::ObjectId;

/// What the comparison needs of one environment, read from its check.
#[derive(Debug)]
pub(crate) struct Facts {
    pub name: String,
    /// Its settings, with its overlay (where findings about its settings point).
    config: Config,
    places: Places,
    /// Lattice service name → the route that has it.
    services: BTreeMap<String, String>,
    /// Its output folder, and the rendered files by path in it.
    out_dir: PathBuf,
    files: Tree,
}

impl Facts {
    /// The facts of one environment, from its plan and output; None for a project without
    /// environments.
    pub fn of(out_dir: &Path, p: &Prepared, files: Tree) -> Option<Facts> {
        let env = p.config.environment.as_ref()?;
        // Preview groups are Lattice services too, created and deleted with previews.
        let services = (p.plan.service_names().into_iter())
            .map(|(route, name)| (name.name.clone(), route))
            .collect();
        Some(Facts {
            name: env.name.clone(),
            places: Places::read(&env.overlay, Some(&env.text)),
            config: p.config.clone(),
            services,
            out_dir: out_dir.to_path_buf(),
            files,
        })
    }

    /// The overlay: its file and text.
    pub fn overlay(&self) -> (&Path, &str) {
        let env = self.config.environment.as_ref();
        env.map_or((Path::new(""), ""), |e| (&e.overlay, &e.text))
    }

    /// Account and Region of its Lattice side (`lattice.placement`, else `auth`); None
    /// when not said.
    fn account(&self) -> Option<&String> {
        let c = &self.config;
        c.lattice
            .placement
            .account
            .as_ref()
            .or(c.auth.account.as_ref())
    }

    fn region(&self) -> Option<&String> {
        let c = &self.config;
        c.lattice
            .placement
            .region
            .as_ref()
            .or(c.auth.region.as_ref())
    }

    /// The Gateway: its service network's name.
    fn network(&self) -> &str {
        &self.config.lattice.gateway.name
    }

    fn vpcs(&self) -> &[String] {
        &self.config.lattice.placement.vpcs
    }

    /// The Argo CD destination of a side; None without a deploy kit.
    fn cluster(&self, side: Side) -> Option<&String> {
        let d = self.config.deploy.as_ref()?;
        Some(match side {
            Side::Lattice => &d.lattice_cluster,
            Side::Kong => &d.kong_cluster,
        })
    }

    /// Where a setting of this environment is written: in its overlay when it is there,
    /// else the overlay itself (latgen.yaml gives it to every environment).
    fn at(&self, path: &[&str]) -> Span {
        self.places.of(path)
    }

    fn place(&self) -> String {
        let show = |v: Option<&String>| v.cloned().unwrap_or_else(|| "(not set)".into());
        format!(
            "account {}, Region {}",
            show(self.account()),
            show(self.region())
        )
    }
}

/// Every finding between two of `envs`. An account or Region left unset (in
/// `lattice.placement` and `auth`) may be any: such environments are compared.
pub(crate) fn between(envs: &[&Facts]) -> Diagnostics {
    let mut diags = Diagnostics::new();
    for (i, a) in envs.iter().enumerate() {
        for b in &envs[i + 1..] {
            // Unsaid is no proof of apart: an account or Region one of them leaves unset
            // may be the other's. A VPC is regional, and may be shared across accounts.
            let may_match =
                |x: Option<&String>, y: Option<&String>| x.is_none() || y.is_none() || x == y;
            let same_region = may_match(a.region(), b.region());
            if same_region && may_match(a.account(), b.account()) {
                service_names(a, b, &mut diags);
            }
            if same_region {
                networks(a, b, &mut diags);
            }
            objects(a, b, &mut diags);
            argocd_names(a, b, &mut diags);
        }
    }
    diags
}

/// How many of a clash's names a finding lists.
const SHOWN: usize = 3;

fn listed(names: &[&String]) -> String {
    let mut s = names
        .iter()
        .take(SHOWN)
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        s.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    s
}

fn service_names(a: &Facts, b: &Facts, diags: &mut Diagnostics) {
    let shared: Vec<&String> = a
        .services
        .keys()
        .filter(|n| b.services.contains_key(*n))
        .collect();
    if shared.is_empty() {
        return;
    }
    diags.push(
        Diagnostic::error(
            Code::EnvServiceNameClash,
            format!(
                "environments `{}` and `{}` are in one account and Region ({}) and would both create the Lattice {} {}: the two controllers would overwrite each other's rules, and deleting one route deletes the service of both",
                a.name,
                b.name,
                a.place(),
                if shared.len() == 1 { "service" } else { "services" },
                listed(&shared)
            ),
        )
        .at(b.at(&["lattice", "serviceNamePrefix"]))
        .related(a.at(&["lattice", "serviceNamePrefix"]), format!("environment `{}`", a.name))
        .help("give each environment its own lattice.serviceNamePrefix in its overlay (names already created stay: recreate a route to rename its service), or say where each one is with lattice.placement.account and region"),
    );
}

fn networks(a: &Facts, b: &Facts, diags: &mut Diagnostics) {
    if a.network() == b.network() {
        return;
    }
    let shared: Vec<&String> = a.vpcs().iter().filter(|v| b.vpcs().contains(v)).collect();
    if shared.is_empty() {
        return;
    }
    diags.push(
        Diagnostic::error(
            Code::EnvNetworkClash,
            format!(
                "environments `{}` and `{}` associate their service networks `{}` and `{}` with the VPC {}: a VPC takes one service network, so the second association fails",
                a.name,
                b.name,
                a.network(),
                b.network(),
                listed(&shared)
            ),
        )
        .at(b.at(&["lattice", "placement", "vpcs"]))
        .related(a.at(&["lattice", "placement", "vpcs"]), format!("environment `{}`", a.name))
        .help("give each environment VPCs of its own, share one Gateway (service network) between them, or reach the second network through a service-network endpoint in that VPC (the AWS controller's guide `service-network-endpoint.md`)"),
    );
}

fn objects(a: &Facts, b: &Facts, diags: &mut Diagnostics) {
    for side in [Side::Lattice, Side::Kong] {
        let (Some(ca), Some(cb)) = (a.cluster(side), b.cluster(side)) else {
            // Without a deploy kit the clusters are not known: the output may go anywhere.
            continue;
        };
        if ca != cb {
            continue;
        }
        let shared = shared_objects(a, b, side);
        let Some(((_, _, kind, ns, name), file)) = shared.first() else {
            continue;
        };
        let setting = match side {
            Side::Lattice => "lattice.namespace",
            Side::Kong => "kong.namespace",
        };
        diags.push(
            Diagnostic::error(
                Code::EnvObjectClash,
                format!(
                    "environments `{}` and `{}` both write {} into cluster `{ca}` (the {} side), such as {kind} `{ns}/{name}`: each sync takes the {} from the other",
                    a.name,
                    b.name,
                    if shared.len() == 1 { "1 object".to_string() } else { format!("{} objects", shared.len()) },
                    side.dir(),
                    if shared.len() == 1 { "object" } else { "objects" }
                ),
            )
            .at(Span::file(b.overlay().0))
            .related(Span::file(a.out_dir.join(file)), format!("environment `{}`", a.name))
            .help(format!("give the environments their own clusters (deploy.{}Cluster) or namespaces ({setting}, and the apps' own) in their overlays", side.dir())),
        );
    }
}

/// A warning, not an error: environments with an Argo CD each may keep one name, and
/// latgen cannot see which Argo CD a kit is applied to.
fn argocd_names(a: &Facts, b: &Facts, diags: &mut Diagnostics) {
    let (Some(da), Some(db)) = (a.config.deploy.as_ref(), b.config.deploy.as_ref()) else {
        return;
    };
    if da.project != db.project || da.argocd_namespace != db.argocd_namespace {
        return;
    }
    let (p, ns) = (&db.project, &db.argocd_namespace);
    diags.push(
        Diagnostic::warning(
            Code::EnvArgoCdClash,
            format!(
                "environments `{}` and `{}` both name their Argo CD AppProject `{p}` and Applications `{p}-lattice` and `{p}-kong` in namespace `{ns}`: applied to one Argo CD, the second kit overwrites the first, and its Applications then sync only the second environment's output",
                a.name, b.name
            ),
        )
        .at(b.at(&["deploy", "project"]))
        .related(a.at(&["deploy", "project"]), format!("environment `{}`", a.name))
        .help("leave deploy.project out of the overlays (each environment's kit is then named `<project>-<env>`), or give each overlay its own; environments with an Argo CD each may keep one name"),
    );
}

/// The objects both environments write on one side. A file's name is made from its
/// object's kind and name (`httproute-group-01.yaml`), so only files of one name can be
/// one object: those alone are read, for their namespace, and compared.
fn shared_objects(a: &Facts, b: &Facts, side: Side) -> Vec<(ObjectId, PathBuf)> {
    let named_alike: Vec<&PathBuf> = (a.files.keys())
        .filter(|p| crate::manifest::layout::side_of(p) == side && b.files.contains_key(*p))
        .collect();
    let ids = |f: &Facts| {
        let files: Vec<(&PathBuf, &crate::manifest::tree::Text)> =
            named_alike.iter().map(|p| (*p, &f.files[*p])).collect();
        crate::render::deploy_kit::objects(&f.config, &files)
            .into_iter()
            .map(|(id, p)| (id, p.clone()))
            .collect::<BTreeMap<_, _>>()
    };
    let (theirs, ours) = (ids(a), ids(b));
    theirs
        .into_iter()
        .filter(|(id, _)| ours.contains_key(id))
        .collect()
}
