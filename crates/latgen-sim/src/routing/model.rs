//! The routing model: what a tree of manifests holds for routing (Kong routes, bridge
//! Services, Lattice routes and their rules, auth policies) and the network they make.
//! [`super::parse`] reads it from the documents; [`super::resolve`] follows requests in it.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use crate::Pos;
use crate::iam::AuthPolicy;
use crate::platform::{MatchKind, segment_prefix_matches, string_prefix_matches};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRule {
    pub kind: MatchKind,
    pub path: String,
    pub pos: Pos,
    /// Header conditions of the match, all of which must hold: (name in lower case, Exact
    /// value). A header match of another type never matches (Lattice takes Exact only).
    pub headers: Vec<(String, Option<String>)>,
}

/// The label that names the app a route serves.
pub const APP_LABEL: &str = "app.kubernetes.io/name";
/// The label of a preview's Kong route: the preview's name (its app is `APP_LABEL`).
pub const PREVIEW_LABEL: &str = "latgen.dev/preview";
/// The annotation that names a Kong route's KongPlugins.
pub const PLUGINS_ANNOTATION: &str = "konghq.com/plugins";

/// Request headers as one hop sees them: name in lower case → value.
pub type Headers = BTreeMap<String, String>;

/// What a Kong route's RequestHeaderModifier does to the request's headers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeaderChanges {
    pub set: Vec<(String, String)>,
    pub add: Vec<(String, String)>,
    pub remove: Vec<String>,
}

impl HeaderChanges {
    /// The headers Lattice receives for a client's `headers`: Kong's request-transformer
    /// removes, then replaces (`set`, which also adds a missing header), then appends
    /// (`add`, joined to a client's value with a comma); Lattice then strips its own
    /// reserved headers.
    pub fn apply(&self, headers: &Headers) -> Headers {
        let mut out = headers.clone();
        for name in &self.remove {
            out.remove(&name.to_ascii_lowercase());
        }
        for (name, value) in &self.set {
            out.insert(name.to_ascii_lowercase(), value.clone());
        }
        for (name, value) in &self.add {
            out.entry(name.to_ascii_lowercase())
                .and_modify(|v| {
                    v.push(',');
                    v.push_str(value);
                })
                .or_insert_with(|| value.clone());
        }
        out.retain(|name, _| !name.starts_with(crate::platform::LATTICE_RESERVED_HEADER_PREFIX));
        out
    }

    /// The value the route sets `name` to, whatever the client sent.
    pub fn sets(&self, name: &str) -> Option<&str> {
        self.set
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

impl PathRule {
    pub fn gateway_api_match(&self, path: &str) -> bool {
        match self.kind {
            MatchKind::Exact => self.path == path,
            MatchKind::Prefix => segment_prefix_matches(&self.path, path),
        }
    }

    /// Lattice's answer for a request with this path and these headers: the path compared
    /// as a string, header values compared ignoring case.
    pub fn lattice_match(&self, path: &str, headers: &Headers) -> bool {
        let path_matches = match self.kind {
            MatchKind::Exact => self.path == path,
            MatchKind::Prefix => string_prefix_matches(&self.path, path),
        };
        path_matches && self.headers_match(headers)
    }

    pub fn headers_match(&self, headers: &Headers) -> bool {
        self.headers.iter().all(|(name, want)| {
            matches!((want, headers.get(name)), (Some(w), Some(v)) if w.eq_ignore_ascii_case(v))
        })
    }

    /// Whether any request that meets this match's header conditions meets `other`'s:
    /// each of `other`'s conditions is one of these.
    pub fn headers_imply(&self, other: &PathRule) -> bool {
        other.headers.iter().all(|(name, want)| {
            self.headers.iter().any(|(n, w)| {
                n == name && matches!((w, want), (Some(a), Some(b)) if a.eq_ignore_ascii_case(b))
            })
        })
    }

    /// Whether this match, earlier in a Lattice route, takes every request of `later`: its
    /// prefix starts `later`'s path (or both are the same Exact path), and every request
    /// that meets `later`'s header conditions meets this one's (`rule-shadowed`).
    pub fn takes_all_of(&self, later: &PathRule) -> bool {
        let path = match self.kind {
            MatchKind::Prefix => later.path.starts_with(&self.path),
            MatchKind::Exact => later.kind == MatchKind::Exact && self.path == later.path,
        };
        path && later.headers_imply(self)
    }

    /// Whether this prefix, earlier in a Lattice route, lies segment-wise under the prefix
    /// `later` and is not written segment-safely (ending in `/`): Lattice gives it
    /// `later`'s `…x` requests in the written order (`nested-prefix`).
    pub fn nests_inside(&self, later: &PathRule) -> bool {
        self.kind == MatchKind::Prefix
            && later.kind == MatchKind::Prefix
            && !self.path.ends_with('/')
            && crate::platform::nests_under(&self.path, &later.path)
    }

    /// Whether no request meets both matches' header conditions: one header must have two
    /// different values.
    pub fn headers_exclusive(&self, other: &PathRule) -> bool {
        self.headers.iter().any(|(name, w)| {
            other.headers.iter().any(|(n, v)| {
                n == name && matches!((w, v), (Some(a), Some(b)) if !a.eq_ignore_ascii_case(b))
            })
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BackendRef {
    pub namespace: String,
    pub name: String,
    pub port: Option<i32>,
}

impl BackendRef {}

impl std::fmt::Display for BackendRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)?;
        if let Some(p) = self.port {
            write!(f, ":{p}")?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone)]
pub struct KongRoute {
    pub file: PathBuf,
    pub namespace: String,
    pub name: String,
    /// `app.kubernetes.io/name`: the app the route serves.
    pub app: Option<String>,
    /// `latgen.dev/preview`: the preview of that app the route serves, if it is a
    /// preview's route.
    pub preview: Option<String>,
    pub hostnames: Vec<String>,
    pub matches: Vec<PathRule>,
    pub rewrite_host: Option<String>,
    /// The route's RequestHeaderModifier.
    pub header_changes: HeaderChanges,
    /// The KongPlugins the route names (`konghq.com/plugins`), if any.
    pub plugins: Option<String>,
    /// Where the route's name is written.
    pub name_pos: Pos,
    pub backend: Option<BackendRef>,
}

/// How strongly a Kong route claims a request, compared field by field (higher wins): how
/// specifically a hostname matched (its length; 0 when the route takes any host), whether
/// the best path match is Exact, and that path's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct KongRank {
    pub host: usize,
    pub exact: bool,
    pub length: usize,
}

/// A Kong route that matches a request, and the path that makes it match.
#[derive(Debug, Clone, Copy)]
pub struct KongClaim<'a> {
    pub route: &'a KongRoute,
    pub rank: KongRank,
    pub rule: &'a PathRule,
}

/// Orders two matching routes: the greater one wins. On equal rank the route first by
/// namespace/name wins.
pub(crate) fn kong_precedence(
    a: (KongRank, &KongRoute),
    b: (KongRank, &KongRoute),
) -> std::cmp::Ordering {
    a.0.cmp(&b.0)
        .then_with(|| (&b.1.namespace, &b.1.name).cmp(&(&a.1.namespace, &a.1.name)))
}

impl KongRoute {
    /// The app the route serves: its label, else its name (latgen names it after the app).
    pub fn app_name(&self) -> &str {
        self.app.as_deref().unwrap_or(&self.name)
    }

    /// The route's claim on a request: its rank and best matching path, or None when it
    /// does not match the host or the path.
    pub fn claim(&self, host: &str, path: &str) -> Option<(KongRank, &PathRule)> {
        let host_rank = if self.hostnames.is_empty() {
            Some(0)
        } else {
            self.hostnames
                .iter()
                .filter(|h| h.as_str() == host)
                .map(|h| h.len())
                .max()
        }?;
        let best = self
            .matches
            .iter()
            .filter(|m| m.gateway_api_match(path))
            .max_by_key(|m| (m.kind == MatchKind::Exact, m.path.len()))?;
        let rank = KongRank {
            host: host_rank,
            exact: best.kind == MatchKind::Exact,
            length: best.path.len(),
        };
        Some((rank, best))
    }
}

#[derive(Debug, Clone)]
pub struct LatticeRule {
    pub matches: Vec<PathRule>,
    /// The rule's first backendRef: where a request goes at the weights latgen commits
    /// (a canary's stable Service comes first, at weight 100).
    pub backend: Option<BackendRef>,
    /// Every backendRef with its weight (1 when unset, as Gateway API defaults it).
    pub weighted: Vec<(BackendRef, i32)>,
}

#[derive(Debug, Clone)]
pub struct LatticeRoute {
    pub file: PathBuf,
    pub namespace: String,
    pub name: String,
    pub name_pos: Pos,
    /// The Lattice service's name: the override annotation's, else the controller's.
    pub service_name: String,
    pub hostnames: Vec<String>,
    /// The domain Lattice assigned the service, as the controller recorded it on the route
    /// ([`crate::platform::ASSIGNED_DOMAIN_ANNOTATION`]): where a route without a custom
    /// domain is reached.
    pub assigned_domain: Option<String>,
    pub rules: Vec<LatticeRule>,
}

impl LatticeRoute {
    /// The domains the route's service is reached at: its custom domain (the controller
    /// takes the first hostname), and the one Lattice assigned when the route records it.
    pub fn domains(&self) -> impl Iterator<Item = &str> {
        (self.hostnames.first().into_iter())
            .chain(self.assigned_domain.as_ref())
            .map(String::as_str)
    }

    /// The domain a direct caller reaches the service at: its custom domain, else the one
    /// Lattice assigned it.
    pub fn domain(&self) -> Option<&str> {
        self.domains().next()
    }

    /// The domain and what it is, for people: "custom domain D" or "assigned domain D".
    pub fn domain_shown(&self) -> String {
        match (self.hostnames.first(), &self.assigned_domain) {
            (Some(h), _) => format!("custom domain {h}"),
            (None, Some(a)) => format!("assigned domain {a}"),
            (None, None) => "no domain".to_string(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Bridge {
    pub file: PathBuf,
    pub target: String,
}

/// Both halves of the request path, as parsed from manifests.
#[derive(Default, Clone)]
pub struct Network {
    // Routes are shared with the documents they come from (and so between the networks
    // of two versions of a tree): a network adds only its indexes.
    pub kong: Vec<Arc<KongRoute>>,
    /// Namespace → name → bridge: looked up by borrowed names, hashed since every
    /// request followed looks one up (an ordered map compared a dozen names).
    pub(crate) bridges: Bridges,
    pub lattice: Vec<Arc<LatticeRoute>>,
    /// First hostname → index in `lattice` (the first route to claim it), so that finding
    /// the Lattice service of a request is a look-up, not a scan.
    pub(crate) by_domain: HashMap<String, usize, Hasher>,
    /// Hostname ("" for a route that takes any host) → match path (a prefix without its
    /// trailing `/`) → Kong routes that declare it, so that finding the routes a request
    /// could match is a few look-ups, not a scan of them all (nor of every route for `/`).
    /// Made when first asked: a check of one tree follows each Kong route from itself.
    pub(crate) by_match: std::sync::OnceLock<ByMatch>,
    /// Auth policies by the (namespace, name) of the route they target.
    pub(crate) auth: BTreeMap<(String, String), Arc<AuthPolicy>>,
}

pub(crate) type Bridges = HashMap<String, HashMap<String, Arc<Bridge>, Hasher>, Hasher>;

pub(crate) type ByMatch = HashMap<String, HashMap<String, Vec<usize>, Hasher>, Hasher>;

/// The indexes' hasher, and latgen's for the maps it makes only to look up in: a rollout
/// looks up every probe's host and path keys in several states of a change, hundreds of
/// thousands of short keys, where the standard library's SipHash took a twentieth of a
/// dispatch switch's judging. foldhash is seeded at random per process (its own "minimal"
/// resistance to keys picked to collide), and latgen's runs are short: no one can learn the
/// seed from one.
pub type Hasher = foldhash::fast::RandomState;

// The indexes are made from the routes, and a hash map prints in no fixed order: a
// network shows its routes.
impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Network")
            .field("kong", &self.kong)
            .field("bridges", &self.bridges_in_order())
            .field("lattice", &self.lattice)
            .finish_non_exhaustive()
    }
}

impl Network {
    /// The bridges by namespace and name, in that order (the index is hashed).
    pub(crate) fn bridges_in_order(&self) -> BTreeMap<&str, BTreeMap<&str, &Bridge>> {
        (self.bridges.iter())
            .map(|(ns, by_name)| {
                let by_name = by_name.iter().map(|(n, b)| (n.as_str(), &**b)).collect();
                (ns.as_str(), by_name)
            })
            .collect()
    }
}
