//! Where a request goes, computed from the manifests themselves: Kong picks a route with
//! Gateway API semantics (host, then Exact over the longest segment-wise prefix), the route
//! rewrites the Host and sends the request to its bridge Service, whose ExternalName names
//! a Lattice service; Lattice takes that service's first rule whose path matches as a
//! string. This is the model behind the routing tests and the consistency checks.

use std::collections::BTreeMap;

use gateway_api::apis::standard::httproutes::{HttpRoute, HttpRouteRulesMatchesPathType};
use k8s_openapi::api::core::v1::Service;

use crate::model::MatchKind;
use crate::platform::{segment_prefix_matches, string_prefix_matches};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRule {
    pub kind: MatchKind,
    pub path: String,
}

impl PathRule {
    fn gateway_api_match(&self, path: &str) -> bool {
        match self.kind {
            MatchKind::Exact => self.path == path,
            MatchKind::Prefix => segment_prefix_matches(&self.path, path),
        }
    }

    fn lattice_match(&self, path: &str) -> bool {
        match self.kind {
            MatchKind::Exact => self.path == path,
            MatchKind::Prefix => string_prefix_matches(&self.path, path),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct BackendRef {
    pub namespace: String,
    pub name: String,
    pub port: Option<i32>,
}

#[derive(Debug, Clone)]
pub struct KongRoute {
    pub namespace: String,
    pub name: String,
    pub hostnames: Vec<String>,
    pub matches: Vec<PathRule>,
    pub rewrite_host: Option<String>,
    pub backend: Option<BackendRef>,
}

#[derive(Debug, Clone)]
pub struct LatticeRule {
    pub matches: Vec<PathRule>,
    pub backend: Option<BackendRef>,
}

#[derive(Debug, Clone)]
pub struct LatticeRoute {
    pub namespace: String,
    pub name: String,
    pub hostnames: Vec<String>,
    pub rules: Vec<LatticeRule>,
}

/// Both halves of the request path, as parsed from manifests.
#[derive(Debug, Default, Clone)]
pub struct Network {
    pub kong: Vec<KongRoute>,
    /// (namespace, name) → externalName.
    pub bridges: BTreeMap<(String, String), String>,
    pub lattice: Vec<LatticeRoute>,
}

/// Where a request ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Delivered to this Service, through these routes (Lattice rule index is 0-based).
    Backend {
        backend: BackendRef,
        kong_route: String,
        lattice_route: String,
        rule: usize,
    },
    /// No Kong route matches: Kong answers 404.
    NoKongRoute,
    /// The Kong route's backend is not a known bridge Service.
    NoBridge(String),
    /// The bridge resolves to a name other than the Host the route rewrites to.
    HostMismatch {
        bridge_target: String,
        rewrite_host: String,
    },
    /// No Lattice service has this custom domain.
    NoLatticeService(String),
    /// The Lattice service has no rule for the path: Lattice answers 404.
    NoLatticeRule { lattice_route: String },
}

fn path_rules(
    matches: Option<&Vec<gateway_api::apis::standard::httproutes::HttpRouteRulesMatches>>,
) -> Vec<PathRule> {
    matches
        .into_iter()
        .flatten()
        .filter_map(|m| {
            let p = m.path.as_ref()?;
            let kind = match p.r#type {
                Some(HttpRouteRulesMatchesPathType::Exact) => MatchKind::Exact,
                Some(HttpRouteRulesMatchesPathType::PathPrefix) | None => MatchKind::Prefix,
                Some(HttpRouteRulesMatchesPathType::RegularExpression) => return None,
            };
            Some(PathRule {
                kind,
                path: p.value.clone().unwrap_or_else(|| "/".into()),
            })
        })
        .collect()
}

impl Network {
    /// Adds a parsed manifest; `is_kong` says which half it belongs to.
    pub fn add_route(&mut self, route: &HttpRoute, is_kong: bool) {
        let namespace = route.metadata.namespace.clone().unwrap_or_default();
        let name = route.metadata.name.clone().unwrap_or_default();
        let hostnames = route.spec.hostnames.clone().unwrap_or_default();
        let backend_of = |refs: Option<
            &Vec<gateway_api::apis::standard::httproutes::HttpRouteRulesBackendRefs>,
        >| {
            refs.and_then(|r| r.first()).map(|b| BackendRef {
                namespace: b.namespace.clone().unwrap_or_else(|| namespace.clone()),
                name: b.name.clone(),
                port: b.port,
            })
        };
        for rule in route.spec.rules.iter().flatten() {
            if is_kong {
                let rewrite_host = rule
                    .filters
                    .iter()
                    .flatten()
                    .find_map(|f| f.url_rewrite.as_ref()?.hostname.clone());
                self.kong.push(KongRoute {
                    namespace: namespace.clone(),
                    name: name.clone(),
                    hostnames: hostnames.clone(),
                    matches: path_rules(rule.matches.as_ref()),
                    rewrite_host,
                    backend: backend_of(rule.backend_refs.as_ref()),
                });
            }
        }
        if !is_kong {
            self.lattice.push(LatticeRoute {
                namespace: namespace.clone(),
                name,
                hostnames,
                rules: route
                    .spec
                    .rules
                    .iter()
                    .flatten()
                    .map(|r| LatticeRule {
                        matches: path_rules(r.matches.as_ref()),
                        backend: backend_of(r.backend_refs.as_ref()),
                    })
                    .collect(),
            });
        }
    }

    pub fn add_service(&mut self, svc: &Service) {
        if let Some(target) = svc.spec.as_ref().and_then(|s| s.external_name.clone()) {
            self.bridges.insert(
                (
                    svc.metadata.namespace.clone().unwrap_or_default(),
                    svc.metadata.name.clone().unwrap_or_default(),
                ),
                target,
            );
        }
    }

    /// Builds the network from rendered files: `lattice/…` and `kong/…` paths with YAML text.
    pub fn from_files<'a>(
        files: impl IntoIterator<Item = (&'a std::path::Path, &'a str)>,
    ) -> Result<Network, String> {
        let mut net = Network::default();
        for (path, text) in files {
            let is_kong = path.starts_with("kong");
            // Read straight into the typed objects: an untyped read would take YAML 1.1
            // scalars such as `n` or `on` for booleans.
            #[derive(serde::Deserialize)]
            struct Head {
                kind: Option<String>,
            }
            let err =
                |e: serde_saphyr::Error| format!("{}: {}", path.display(), e.without_snippet());
            let head: Head = serde_saphyr::from_str(text).map_err(err)?;
            match head.kind.as_deref() {
                Some("HTTPRoute") => net.add_route(
                    &serde_saphyr::from_str::<HttpRoute>(text).map_err(err)?,
                    is_kong,
                ),
                Some("Service") => {
                    net.add_service(&serde_saphyr::from_str::<Service>(text).map_err(err)?)
                }
                _ => {}
            }
        }
        Ok(net)
    }

    /// Follows one request for `host` and `path` through Kong, the bridge and Lattice.
    pub fn route(&self, host: &str, path: &str) -> Outcome {
        let Some(kong) = self.kong_route(host, path) else {
            return Outcome::NoKongRoute;
        };
        let Some(backend) = &kong.backend else {
            return Outcome::NoBridge(String::new());
        };
        let Some(target) = self
            .bridges
            .get(&(backend.namespace.clone(), backend.name.clone()))
        else {
            return Outcome::NoBridge(backend.name.clone());
        };
        let lattice_host = kong
            .rewrite_host
            .clone()
            .unwrap_or_else(|| host.to_string());
        if *target != lattice_host {
            return Outcome::HostMismatch {
                bridge_target: target.clone(),
                rewrite_host: lattice_host,
            };
        }
        // The controller takes a route's first hostname as the service's custom domain.
        let Some(service) = self
            .lattice
            .iter()
            .find(|r| r.hostnames.first() == Some(&lattice_host))
        else {
            return Outcome::NoLatticeService(lattice_host);
        };
        for (i, rule) in service.rules.iter().enumerate() {
            if rule.matches.iter().any(|m| m.lattice_match(path)) {
                if let Some(b) = &rule.backend {
                    return Outcome::Backend {
                        backend: b.clone(),
                        kong_route: format!("{}/{}", kong.namespace, kong.name),
                        lattice_route: format!("{}/{}", service.namespace, service.name),
                        rule: i,
                    };
                }
            }
        }
        Outcome::NoLatticeRule {
            lattice_route: format!("{}/{}", service.namespace, service.name),
        }
    }

    /// Gateway API precedence: the most specific matching hostname, then an Exact match,
    /// then the longest prefix; ties go to the route first by namespace/name.
    fn kong_route(&self, host: &str, path: &str) -> Option<&KongRoute> {
        self.kong
            .iter()
            .filter_map(|r| {
                let host_rank = if r.hostnames.is_empty() {
                    Some(0)
                } else {
                    r.hostnames
                        .iter()
                        .filter(|h| h.as_str() == host)
                        .map(|h| h.len())
                        .max()
                }?;
                let best = r
                    .matches
                    .iter()
                    .filter(|m| m.gateway_api_match(path))
                    .map(|m| (m.kind == MatchKind::Exact, m.path.len()))
                    .max()?;
                Some(((host_rank, best.0, best.1), r))
            })
            .max_by(|(ka, ra), (kb, rb)| {
                ka.cmp(kb)
                    .then_with(|| (&rb.namespace, &rb.name).cmp(&(&ra.namespace, &ra.name)))
            })
            .map(|(_, r)| r)
    }
}
