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

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::ProjectPaths;
use crate::input::config::Config;
use crate::input::places::Places;
use crate::manifest::layout::Side;
use crate::plan::prepared::Prepared;
use crate::render::Rendered;
use crate::render::deploy::ObjectId;

/// What the comparison needs of one environment, read from its build.
#[derive(Debug)]
pub(crate) struct Facts {
    pub name: String,
    /// Its overlay, where findings about its settings point.
    pub overlay: PathBuf,
    places: Places,
    /// Account and Region of its Lattice side; None when not said.
    account: Option<String>,
    region: Option<String>,
    /// The Gateway: its service network's name.
    network: String,
    vpcs: Vec<String>,
    /// The Argo CD destination of each side; None without a deploy kit.
    clusters: BTreeMap<Side, Option<String>>,
    /// Lattice service name → the route that has it.
    services: BTreeMap<String, String>,
    /// Its settings (the namespaces an object without one goes to).
    config: Config,
    /// Its output folder, and the rendered files by path in it.
    out_dir: PathBuf,
    files: BTreeMap<PathBuf, String>,
}

impl Facts {
    /// The facts of one environment, from its plan and output.
    pub fn of(
        paths: &ProjectPaths,
        p: &Prepared,
        files: BTreeMap<PathBuf, String>,
    ) -> Option<Facts> {
        let (name, overlay) = paths.env.clone()?;
        let c = &p.config;
        let services = crate::plan::services::routes(&p.plan, &p.apps, c)
            .into_iter()
            .map(|r| {
                let s = crate::plan::services::effective(&p.plan, &r.route, &r.namespace);
                (s.name, r.route)
            })
            .collect();
        let place = &c.lattice.placement;
        let clusters = [
            (
                Side::Lattice,
                c.deploy.as_ref().map(|d| d.lattice_cluster.clone()),
            ),
            (
                Side::Kong,
                c.deploy.as_ref().map(|d| d.kong_cluster.clone()),
            ),
        ];
        Some(Facts {
            name,
            places: Places::read(&overlay, c.overlay.as_ref().map(|(_, t)| t.as_str())),
            overlay,
            account: place.account.clone().or_else(|| c.auth.account.clone()),
            region: place.region.clone().or_else(|| c.auth.region.clone()),
            network: c.lattice.gateway.name.clone(),
            vpcs: place.vpcs.clone(),
            clusters: clusters.into_iter().collect(),
            services,
            config: c.clone(),
            out_dir: paths.output.clone(),
            files,
        })
    }

    /// Where a setting of this environment is written: in its overlay when it is there,
    /// else the overlay itself (latgen.yaml gives it to every environment).
    fn at(&self, path: &[&str]) -> Span {
        self.places.of(path)
    }

    fn place(&self) -> String {
        let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(not set)".into());
        format!(
            "account {}, Region {}",
            show(&self.account),
            show(&self.region)
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
                |x: &Option<String>, y: &Option<String>| x.is_none() || y.is_none() || x == y;
            let same_region = may_match(&a.region, &b.region);
            if same_region && may_match(&a.account, &b.account) {
                service_names(a, b, &mut diags);
            }
            if same_region {
                networks(a, b, &mut diags);
            }
            objects(a, b, &mut diags);
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
    if a.network == b.network {
        return;
    }
    let shared: Vec<&String> = a.vpcs.iter().filter(|v| b.vpcs.contains(v)).collect();
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
                a.network,
                b.network,
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
        let (Some(ca), Some(cb)) = (&a.clusters[&side], &b.clusters[&side]) else {
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
            .at(Span::file(b.overlay.clone()))
            .related(Span::file(a.out_dir.join(file)), format!("environment `{}`", a.name))
            .help(format!("give the environments their own clusters (deploy.{}Cluster) or namespaces ({setting}, and the apps' own) in their overlays", side.dir())),
        );
    }
}

/// The objects both environments write on one side. A file's name is made from its
/// object's kind and name (`httproute-group-01.yaml`), so only files of one name can be
/// one object: those alone are read, for their namespace, and compared.
fn shared_objects(a: &Facts, b: &Facts, side: Side) -> Vec<(ObjectId, PathBuf)> {
    let same_name = |f: &Facts| -> Rendered {
        let files = (f.files.iter())
            .filter(|(p, _)| crate::manifest::layout::side_of(p) == side)
            .filter(|(p, _)| a.files.contains_key(*p) && b.files.contains_key(*p))
            .map(|(p, t)| (p.clone(), t.clone()))
            .collect();
        Rendered {
            files,
            ..Rendered::default()
        }
    };
    let ids = |f: &Facts, config: &Config| crate::render::deploy::objects(config, &same_name(f));
    let (theirs, ours) = (ids(a, &a.config), ids(b, &b.config));
    theirs
        .into_iter()
        .filter(|(id, _)| ours.contains_key(id))
        .collect()
}
