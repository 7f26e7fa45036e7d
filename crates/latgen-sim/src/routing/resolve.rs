//! Following a request through the network: Kong picks a route with Gateway API semantics
//! (host, then Exact over the longest segment-wise prefix), the route rewrites the Host and
//! sends the request to its bridge Service, whose ExternalName names a Lattice service;
//! Lattice takes that service's first rule whose path matches as a string. Also the
//! questions asked of one route's order.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::*;
use crate::iam::{AuthPolicy, AuthProbe, Call, Identity};
use crate::platform::MatchKind;

/// Whether `found` holds for one of the index keys a request's path could be claimed
/// under, tried in this order: the path itself, without its trailing `/`, and each of its
/// segment-wise ancestors (`/` included).
pub(super) fn any_request_key<'p>(path: &'p str, mut found: impl FnMut(&'p str) -> bool) -> bool {
    if found(path) {
        return true;
    }
    let mut rest = path.trim_end_matches('/');
    if rest.is_empty() {
        rest = "/";
    }
    if found(rest) {
        return true;
    }
    while let Some(i) = rest.rfind('/') {
        rest = if i == 0 { "/" } else { &rest[..i] };
        if found(rest) {
            return true;
        }
        if i == 0 {
            break;
        }
    }
    false
}

/// The index key of a Kong match: segment matching ignores a prefix's trailing `/`.
pub(super) fn match_key(m: &PathRule) -> &str {
    match m.kind {
        MatchKind::Prefix if m.path.len() > 1 => m.path.trim_end_matches('/'),
        _ => &m.path,
    }
}

/// Where a request ended.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
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

/// A request that reached a Service: the Service, the Lattice route that sent it there,
/// and the 0-based index of that route's rule.
#[derive(Debug, Clone, Copy)]
pub struct Reached<'a> {
    pub backend: &'a BackendRef,
    pub service: &'a LatticeRoute,
    pub rule: usize,
}

impl Reached<'_> {
    /// The Lattice route as `namespace/name`.
    pub fn lattice_route(&self) -> String {
        format!("{}/{}", self.service.namespace, self.service.name)
    }

    /// The outcome of the request, sent through `kong`, that reached this Service.
    pub fn outcome(&self, kong: &KongRoute) -> Outcome {
        Outcome::Backend {
            backend: self.backend.clone(),
            kong_route: format!("{}/{}", kong.namespace, kong.name),
            lattice_route: self.lattice_route(),
            rule: self.rule,
        }
    }
}

/// The host a request to a Kong route that matches every host is followed with. It stands
/// for any host: [`show_request`] never shows it.
pub const ANY_HOST: &str = "latgen.probe";

/// A request as a finding shows it: `www.example.com/shop`, or `/shop (any host)`.
pub fn show_request(host: &str, path: &str) -> String {
    if host == ANY_HOST {
        format!("{path} (any host)")
    } else {
        format!("{host}{path}")
    }
}

/// Where a request lands, as a rollout tells outcomes apart: at a Service, at Kong's 404,
/// or broken on the way. Unlike an [`Outcome`] it names no route, and none is made for
/// it: a rollout's judge follows tens of thousands of requests in every state it tries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Landing<'a> {
    Backend(&'a BackendRef),
    NoKongRoute,
    Broken,
}

impl Outcome {
    /// Where the request landed (see [`Landing`]).
    pub fn landing(&self) -> Landing<'_> {
        match self {
            Outcome::Backend { backend, .. } => Landing::Backend(backend),
            Outcome::NoKongRoute => Landing::NoKongRoute,
            _ => Landing::Broken,
        }
    }

    /// The Service the request reached, if any.
    pub fn backend(&self) -> Option<&BackendRef> {
        match self {
            Outcome::Backend { backend, .. } => Some(backend),
            _ => None,
        }
    }

    /// A request that Kong accepted but that goes nowhere: a broken request path.
    pub fn is_broken(&self) -> bool {
        !matches!(self, Outcome::Backend { .. } | Outcome::NoKongRoute)
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Backend {
                backend,
                lattice_route,
                rule,
                ..
            } => {
                write!(f, "{backend} (rule {} of {lattice_route})", rule + 1)
            }
            Outcome::NoKongRoute => write!(f, "404 from Kong (no route)"),
            // Each reads on its own and after "goes to": what, then why in brackets.
            Outcome::NoBridge(b) => write!(f, "no bridge (Service `{b}` does not exist)"),
            Outcome::HostMismatch {
                bridge_target,
                rewrite_host,
            } => {
                write!(
                    f,
                    "a Host mismatch (the bridge points at {bridge_target} but the Host is rewritten to {rewrite_host})"
                )
            }
            Outcome::NoLatticeService(h) => {
                write!(f, "no Lattice service (none answers on {h})")
            }
            Outcome::NoLatticeRule { lattice_route } => {
                write!(f, "404 from Lattice ({lattice_route} has no matching rule)")
            }
        }
    }
}

/// Two rules of one Lattice route, to different backends, that one request can match both:
/// the route sends it where its rule order says, and the controller does not keep that order.
#[derive(Debug, Clone, Copy)]
pub struct OrderDependence<'a> {
    /// The rule that comes first in the route as written (the one that matches first).
    pub first: (&'a PathRule, Option<&'a BackendRef>),
    pub then: (&'a PathRule, Option<&'a BackendRef>),
}

impl OrderDependence<'_> {
    /// The key of the pair, whatever the order of its rules: the two (path type, path,
    /// backend) triples, sorted.
    pub fn key(&self) -> [(MatchKind, String, Option<BackendRef>); 2] {
        let side = |(m, b): (&PathRule, Option<&BackendRef>)| (m.kind, m.path.clone(), b.cloned());
        let mut key = [side(self.first), side(self.then)];
        key.sort();
        key
    }
}

impl LatticeRoute {
    /// Pairs of rules to different backends that one request can match both, whose
    /// matches' headers do not exclude each other, and that the route as written orders
    /// right (the later path is not one the earlier matches whole): they route right only
    /// while the rules keep this order. Pairs ordered wrong, and prefixes that nest
    /// segment-wise, misroute in any order and are other findings.
    pub fn order_dependent(&self) -> Vec<OrderDependence<'_>> {
        let rules: Vec<(&PathRule, Option<&BackendRef>)> = self
            .rules
            .iter()
            .flat_map(|r| r.matches.iter().map(move |m| (m, r.backend.as_ref())))
            .collect();
        let mut pairs = Vec::new();
        for (i, &(a, a_backend)) in rules.iter().enumerate() {
            for &(b, b_backend) in &rules[i + 1..] {
                let overlap =
                    crate::platform::lattice_matches_overlap((a.kind, &a.path), (b.kind, &b.path));
                if a_backend == b_backend || !overlap || a.headers_exclusive(b) {
                    continue;
                }
                // Misrouted in the written order already: check's shadowing findings.
                if !a.takes_all_of(b) && !a.nests_inside(b) {
                    pairs.push(OrderDependence {
                        first: (a, a_backend),
                        then: (b, b_backend),
                    });
                }
            }
        }
        pairs
    }

    /// The Lattice route a manifest (on the Lattice side) holds, if it holds one.
    pub fn parse(file: &Path, text: &str) -> Option<LatticeRoute> {
        match Entry::of(file, &parse_doc(file, text).ok()?, false) {
            Entry::Lattice(route) => Some(Arc::unwrap_or_clone(route)),
            _ => None,
        }
    }
}

impl Network {
    /// Adds what one manifest holds, and indexes it.
    fn add_entry(&mut self, entry: Entry) {
        match entry {
            Entry::Kong(routes) => {
                for route in routes {
                    self.add_kong(route);
                }
            }
            Entry::Lattice(route) => {
                for domain in route.domains() {
                    if !self.by_domain.contains_key(domain) {
                        self.by_domain
                            .insert(domain.to_string(), self.lattice.len());
                    }
                }
                self.lattice.push(route);
            }
            Entry::Bridge((namespace, name), bridge) => {
                self.bridges
                    .entry(namespace)
                    .or_default()
                    .insert(name, bridge);
            }
            Entry::Auth(policy) => {
                // The controller lets the first policy of a target win; the others are
                // Conflicted.
                let key = (policy.namespace.clone(), policy.target.clone());
                self.auth.entry(key).or_insert(policy);
            }
            Entry::Nothing => {}
        }
    }

    /// The auth policy of a Lattice route, if it has one.
    pub fn auth_policy(&self, route: &LatticeRoute) -> Option<&AuthPolicy> {
        (self
            .auth
            .get(&(route.namespace.clone(), route.name.clone())))
        .map(|p| &**p)
    }

    /// The files that go with `files` for auth: the policy of each route among them, and
    /// the route of each policy among them.
    pub fn auth_companions(&self, files: &BTreeSet<PathBuf>) -> Vec<PathBuf> {
        let mut out = Vec::new();
        // Without policies there is nothing to look up for each of thousands of routes.
        if self.auth.is_empty() {
            return out;
        }
        for route in &self.lattice {
            if let Some(policy) = self.auth_policy(route)
                && (files.contains(&route.file) || files.contains(&policy.file))
            {
                out.extend([route.file.clone(), policy.file.clone()]);
            }
        }
        out
    }

    fn add_kong(&mut self, route: Arc<KongRoute>) {
        self.kong.push(route);
        self.by_match.take();
    }

    fn by_match(&self) -> &ByMatch {
        self.by_match.get_or_init(|| {
            let mut by_match = ByMatch::default();
            let any_host = [String::new()];
            for (index, route) in self.kong.iter().enumerate() {
                let hosts = match route.hostnames.as_slice() {
                    [] => &any_host[..],
                    named => named,
                };
                for host in hosts {
                    let by_path = by_match.entry(host.clone()).or_default();
                    for m in &route.matches {
                        let routes = by_path.entry(match_key(m).to_string()).or_default();
                        if routes.last() != Some(&index) {
                            routes.push(index);
                        }
                    }
                }
            }
            by_match
        })
    }

    /// Reads many manifests (path, text, which half) in parallel, keeping their order;
    /// returns the network and the files that could not be read, with why.
    pub fn from_files_par(files: &[(PathBuf, &str, bool)]) -> (Network, Vec<(PathBuf, String)>) {
        let sources: Vec<(PathBuf, Source<'_>, bool)> = files
            .iter()
            .map(|(p, t, k)| (p.clone(), Source::Text(t), *k))
            .collect();
        Network::from_sources(&sources)
    }

    /// Like [`Network::from_files_par`], but a manifest may come already read.
    pub fn from_sources<P: AsRef<Path> + Sync>(
        files: &[(P, Source<'_>, bool)],
    ) -> (Network, Vec<(PathBuf, String)>) {
        use rayon::prelude::*;
        // Parsing and making the routes of each manifest are independent: done in parallel;
        // only indexing them is done in order.
        // Pieces of at most 32 manifests: a large piece already running is not cut for an
        // idle thread, which would then wait for it.
        let entries: Vec<Result<Entry, String>> = files
            .par_iter()
            .with_max_len(32)
            .map(|(p, source, is_kong)| match source {
                Source::Text(t) => Ok(Entry::of(p.as_ref(), &parse_doc(p.as_ref(), t)?, *is_kong)),
                Source::Read(doc) => Ok((*doc.0).clone()),
            })
            .collect();
        let mut net = Network::default();
        let mut errors = Vec::new();
        for ((path, _, _), entry) in files.iter().zip(entries) {
            match entry {
                Ok(entry) => net.add_entry(entry),
                Err(e) => errors.push((path.as_ref().to_path_buf(), e)),
            }
        }
        (net, errors)
    }

    /// The Lattice route that owns a domain: the controller takes a route's first hostname
    /// as its service's custom domain; a route records the domain Lattice assigned it.
    pub fn lattice_service(&self, host: &str) -> Option<&LatticeRoute> {
        self.by_domain.get(host).map(|&i| &*self.lattice[i])
    }

    /// Follows one request for `host` and `path` through Kong, the bridge and Lattice.
    pub fn route(&self, host: &str, path: &str) -> Outcome {
        self.route_with(host, path, &Headers::new())
    }

    /// Where [`Network::route`]'s request lands, without its outcome's names.
    pub fn lands(&self, host: &str, path: &str) -> Landing<'_> {
        let Some(kong) = self.kong_route(host, path) else {
            return Landing::NoKongRoute;
        };
        match self.follow(kong, host, path, &Headers::new()) {
            Ok(reached) => Landing::Backend(reached.backend),
            Err(_) => Landing::Broken,
        }
    }

    /// Like [`Network::route`], for a client that sends `headers` (forged ones included).
    pub fn route_with(&self, host: &str, path: &str, headers: &Headers) -> Outcome {
        match self.kong_route(host, path) {
            Some(kong) => self.through_with(kong, host, path, headers),
            None => Outcome::NoKongRoute,
        }
    }

    /// Follows a request that Kong matched to `kong` onward, through the bridge and Lattice.
    pub fn through(&self, kong: &KongRoute, host: &str, path: &str) -> Outcome {
        self.through_with(kong, host, path, &Headers::new())
    }

    /// Like [`Network::through`], for a client that sends `headers`.
    pub fn through_with(
        &self,
        kong: &KongRoute,
        host: &str,
        path: &str,
        headers: &Headers,
    ) -> Outcome {
        match self.follow(kong, host, path, headers) {
            Ok(reached) => reached.outcome(kong),
            Err(outcome) => outcome,
        }
    }

    /// Where a request through `kong` ends, by reference: the Service it reaches, or the
    /// outcome that says why it reaches none. A check follows tens of thousands of
    /// requests, most of which arrive: their outcome is not built.
    pub fn follow<'a>(
        &'a self,
        kong: &'a KongRoute,
        host: &str,
        path: &str,
        headers: &Headers,
    ) -> Result<Reached<'a>, Outcome> {
        let Some(backend) = &kong.backend else {
            return Err(Outcome::NoBridge(String::new()));
        };
        let Some(bridge) = self.bridge(&backend.namespace, &backend.name) else {
            return Err(Outcome::NoBridge(backend.name.clone()));
        };
        let lattice_host = kong.rewrite_host.as_deref().unwrap_or(host);
        if bridge.target != lattice_host {
            return Err(Outcome::HostMismatch {
                bridge_target: bridge.target.clone(),
                rewrite_host: lattice_host.to_string(),
            });
        }
        let Some(service) = self.lattice_service(lattice_host) else {
            return Err(Outcome::NoLatticeService(lattice_host.to_string()));
        };
        let headers = kong.header_changes.apply(headers);
        for (rule, r) in service.rules.iter().enumerate() {
            if r.matches.iter().any(|m| m.lattice_match(path, &headers))
                && let Some(backend) = &r.backend
            {
                return Ok(Reached {
                    backend,
                    service,
                    rule,
                });
            }
        }
        Err(Outcome::NoLatticeRule {
            lattice_route: format!("{}/{}", service.namespace, service.name),
        })
    }

    /// Whether Kong's request for `host` and `path` reaches a Service and is let in by the
    /// auth policy of the Lattice service that serves it (one with no policy lets all in).
    pub fn kong_access(&self, host: &str, path: &str, probe: &AuthProbe) -> bool {
        let Some(kong) = self.kong_route(host, path) else {
            return false;
        };
        let Ok(reached) = self.follow(kong, host, path, &Headers::new()) else {
            return false;
        };
        let headers = kong.header_changes.apply(&Headers::new());
        self.allows(reached.service, &probe.kong, path, &headers, probe)
    }

    /// Whether a request of `who` straight to the Lattice service of domain `domain`
    /// reaches a Service and is let in.
    pub fn direct_access(
        &self,
        (domain, path, headers): (&str, &str, &Headers),
        who: &Identity,
        probe: &AuthProbe,
    ) -> bool {
        let Some(service) = self.lattice_service(domain) else {
            return false;
        };
        let reaches = (service.rules.iter())
            .find(|r| r.matches.iter().any(|m| m.lattice_match(path, headers)))
            .is_some_and(|r| r.backend.is_some());
        reaches && self.allows(service, who, path, headers, probe)
    }

    fn allows(
        &self,
        service: &LatticeRoute,
        who: &Identity,
        path: &str,
        headers: &Headers,
        probe: &AuthProbe,
    ) -> bool {
        let Some(policy) = self.auth_policy(service) else {
            return true;
        };
        let resource = probe.resource(path);
        policy
            .decide(&Call {
                who,
                resource: &resource,
                headers,
            })
            .allows()
    }

    /// The bridge Service `namespace/name`.
    pub fn bridge(&self, namespace: &str, name: &str) -> Option<&Arc<Bridge>> {
        self.bridges.get(namespace)?.get(name)
    }

    /// Gateway API precedence: the most specific matching hostname, then an Exact match,
    /// then the longest prefix; ties go to the route first by namespace/name, and within
    /// one HTTPRoute to its first matching rule (the HTTPRoute CRD's `matches` text, v1.6.1:
    /// "the FIRST matching rule (in list order)").
    pub fn kong_route(&self, host: &str, path: &str) -> Option<&KongRoute> {
        // The candidates are weighed as they are found, with no list of them made: a
        // rollout asks this of every probe in every state it judges. A route's rules are
        // in the list in their order, so of two equally strong rules the earlier wins (a
        // route found twice is the same route).
        let mut best: Option<(KongRank, usize)> = None;
        self.each_kong_route_for(host, path, |i| {
            let Some((rank, _)) = self.kong[i].claim(host, path) else {
                return;
            };
            let wins = best.is_none_or(|(best_rank, at)| {
                let (now, was) = ((rank, &*self.kong[i]), (best_rank, &*self.kong[at]));
                kong_precedence(now, was).then(at.cmp(&i)).is_ge()
            });
            if wins {
                best = Some((rank, i));
            }
        });
        best.map(|(_, i)| &*self.kong[i])
    }

    /// The Kong routes for `host` (or for any host) with a match that could apply to
    /// `path`: an Exact match on it, or a prefix that is `path` or one of its segment-wise
    /// ancestors (`/` included). In order, each once.
    fn kong_routes_for(&self, host: &str, path: &str) -> Vec<usize> {
        let mut routes: Vec<usize> = Vec::new();
        self.each_kong_route_for(host, path, |i| routes.push(i));
        routes.sort_unstable();
        routes.dedup();
        routes
    }

    /// Calls `found` with each of [`Network::kong_routes_for`], in no set order and
    /// perhaps more than once.
    fn each_kong_route_for(&self, host: &str, path: &str, mut found: impl FnMut(usize)) {
        // The keys are looked up as they are made: no list of them is kept.
        for by_path in [host, ""].iter().filter_map(|h| self.by_match().get(*h)) {
            any_request_key(path, |k| {
                by_path.get(k).into_iter().flatten().for_each(|&i| found(i));
                false
            });
        }
    }

    /// The files a request's way through this network depends on: every Kong route that
    /// claims it, their bridges, and the Lattice route serving each host they send it to.
    pub fn files_on_the_way(&self, host: &str, path: &str) -> Vec<&Path> {
        let mut out = Vec::new();
        for route in self
            .kong_routes_for(host, path)
            .into_iter()
            .map(|i| &self.kong[i])
        {
            if route.claim(host, path).is_none() {
                continue;
            }
            out.push(route.file.as_path());
            if let Some(b) = &route.backend
                && let Some(bridge) = self.bridge(&b.namespace, &b.name)
            {
                out.push(bridge.file.as_path());
            }
            let lattice_host = route.rewrite_host.as_deref().unwrap_or(host);
            if let Some(service) = self.lattice_service(lattice_host) {
                out.push(service.file.as_path());
            }
        }
        out
    }

    /// Every file [`Network::files_on_the_way`] can name, whatever the request: the Kong
    /// routes, the bridges and the Lattice routes. In no set order, and a file with several
    /// routes perhaps more than once.
    pub fn files_any_way_can_take(&self) -> impl Iterator<Item = &Path> {
        self.way_files(self.lattice.iter())
    }

    /// The files of [`Network::files_any_way_can_take`] some request may reach in this
    /// network (a superset of those it can). A Lattice route is on a way only where a Kong
    /// route sends the request to one of its domains: by rewriting the Host to it, or by
    /// leaving the Host as the request had it (counted as reaching every domain). A switch's
    /// step makes new Lattice services that no Kong route of the step reaches yet.
    pub fn files_a_way_can_reach(&self) -> impl Iterator<Item = &Path> {
        // The domains Kong sends requests to are gathered only once the Lattice routes are
        // reached: a caller that stops at an unchanged Kong route never needs them.
        let lattice = std::iter::once(()).flat_map(move |()| {
            let rewritten: Option<HashSet<&str, Hasher>> = (self.kong.iter())
                .map(|r| r.rewrite_host.as_deref())
                .collect();
            (self.lattice.iter()).filter(move |l| {
                (rewritten.as_ref()).is_none_or(|to| l.domains().any(|d| to.contains(d)))
            })
        });
        self.way_files(lattice)
    }

    /// The files of the Kong routes, the bridges and `lattice`, the Lattice routes a way
    /// may take.
    fn way_files<'a>(
        &'a self,
        lattice: impl Iterator<Item = &'a Arc<LatticeRoute>>,
    ) -> impl Iterator<Item = &'a Path> {
        let bridges = self.bridges.values().flat_map(|by_name| by_name.values());
        (self.kong.iter().map(|r| r.file.as_path()))
            .chain(bridges.map(|b| b.file.as_path()))
            .chain(lattice.map(|l| l.file.as_path()))
    }

    /// Every Kong route that matches a request, with its rank and best path, in precedence
    /// order: the first is [`Network::kong_route`]'s answer, the others lost to it (the
    /// sort is stable: of equal claims the earlier rule stays first).
    pub fn kong_candidates(&self, host: &str, path: &str) -> Vec<KongClaim<'_>> {
        let mut out: Vec<KongClaim<'_>> = self
            .kong
            .iter()
            .filter_map(|route| {
                let (rank, rule) = route.claim(host, path)?;
                Some(KongClaim { route, rank, rule })
            })
            .collect();
        out.sort_by(|a, b| kong_precedence((b.rank, b.route), (a.rank, a.route)));
        out
    }
}
