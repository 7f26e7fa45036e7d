//! What a change can reroute: the match keys of the Kong routes whose requests a change to
//! some files can send elsewhere, and whether a request could be claimed under one of them.
//! A rollout asks this of every probe of a large tree, for a change of a few files.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::resolve::{any_request_key, match_key};
use super::{Hasher, KongRoute, Network};

/// Match keys of Kong routes by hostname ("" for any host); see [`Network::reroutable`].
// Hashed: a change of a few routes has few keys, but a switch of dispatch mode has every
// route's, and each probe of the tree is looked up under several of its keys.
#[derive(Debug, Default)]
pub struct Reroutable {
    keys: HashMap<String, HashSet<String, Hasher>, Hasher>,
    /// The first segment of every key (`/shop` of `/shop/cart`), and whether a key is `/`:
    /// every other key of a request shares the request's first segment, so most of the
    /// probes of a large tree are turned down by one look-up.
    firsts: HashSet<String, Hasher>,
    root: bool,
}

/// A path's first segment: up to its second `/` (all of a path without one).
fn first_segment(path: &str) -> &str {
    let end = (path.get(1..).and_then(|rest| rest.find('/'))).map_or(path.len(), |i| i + 1);
    &path[..end]
}

impl Reroutable {
    /// Adds the keys of `other`.
    pub fn extend(&mut self, other: Reroutable) {
        for (host, keys) in other.keys {
            for key in keys {
                self.insert(&host, key);
            }
        }
    }

    fn insert(&mut self, host: &str, key: String) {
        self.root |= key == "/";
        if !self.firsts.contains(first_segment(&key)) {
            self.firsts.insert(first_segment(&key).to_string());
        }
        let by_host = match self.keys.get_mut(host) {
            Some(k) => k,
            None => self.keys.entry(host.to_string()).or_default(),
        };
        by_host.insert(key);
    }

    /// Whether a route with one of these keys could claim the request.
    pub fn could_claim(&self, host: &str, path: &str) -> bool {
        if !self.root && !self.firsts.contains(first_segment(path)) {
            return false;
        }
        // Asked of every probe of a large tree: the keys are not collected.
        let (named, any) = (self.keys.get(host), self.keys.get(""));
        (named.is_some() || any.is_some())
            && any_request_key(path, |k| {
                named.is_some_and(|s| s.contains(k)) || any.is_some_and(|s| s.contains(k))
            })
    }
}

impl Network {
    /// The match keys, by hostname ("" for any host), of the Kong routes whose requests a
    /// change to the `changed` files can reroute: the routes in those files, those whose
    /// bridge is in them, and those that send requests to a Lattice service one of them
    /// serves. A request no such key could claim goes the same way whatever those files say.
    pub fn reroutable(&self, changed: &BTreeSet<PathBuf>) -> Reroutable {
        // A change is a few files and a tree has thousands of routes: each route's files
        // are looked up by hash, and its bridge only when a bridge changed.
        let changed: HashSet<&Path, Hasher> = changed.iter().map(PathBuf::as_path).collect();
        let hosts: HashSet<&str, Hasher> = self
            .lattice
            .iter()
            .filter(|l| changed.contains(l.file.as_path()))
            .flat_map(|l| {
                l.hostnames
                    .iter()
                    .map(String::as_str)
                    .chain(l.assigned_domain.as_deref())
            })
            .collect();
        let bridges: HashSet<(&str, &str), Hasher> = (self.bridges.iter())
            .flat_map(|(ns, by_name)| by_name.iter().map(move |(name, b)| (ns, name, b)))
            .filter(|(_, _, b)| changed.contains(b.file.as_path()))
            .map(|(ns, name, _)| (ns.as_str(), name.as_str()))
            .collect();
        let touched = |r: &KongRoute| {
            let sends_to = match (&r.rewrite_host, r.hostnames.is_empty()) {
                (Some(h), _) => hosts.contains(h.as_str()),
                // The request's own host: any, for a route that takes any host.
                (None, true) => !hosts.is_empty(),
                (None, false) => r.hostnames.iter().any(|h| hosts.contains(h.as_str())),
            };
            changed.contains(r.file.as_path())
                || (r.backend.as_ref())
                    .is_some_and(|b| bridges.contains(&(b.namespace.as_str(), b.name.as_str())))
                || sends_to
        };
        let mut keys = Reroutable::default();
        for r in self.kong.iter().filter(|r| touched(r)) {
            let on: Vec<&str> = if r.hostnames.is_empty() {
                vec![""]
            } else {
                r.hostnames.iter().map(String::as_str).collect()
            };
            for host in on {
                for m in &r.matches {
                    keys.insert(host, match_key(m).to_string());
                }
            }
        }
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(host: &str, keys: &[&str]) -> Reroutable {
        let mut r = Reroutable::default();
        for k in keys {
            r.insert(host, k.to_string());
        }
        r
    }

    #[test]
    fn a_first_segment_ends_at_the_second_slash() {
        let cases = [
            ("/shop/cart", "/shop"),
            ("/shop", "/shop"),
            ("/shop/", "/shop"),
            ("/", "/"),
            ("//x", "/"),
            ("", ""),
            ("shop/cart", "shop"),
        ];
        for (path, first) in cases {
            assert_eq!(first_segment(path), first, "{path}");
        }
    }

    /// The look-up that turns most probes down agrees with the keys themselves: a request
    /// is claimable exactly when one of its own keys is among them.
    #[test]
    fn the_first_segment_turns_down_only_what_no_key_could_claim() {
        let r = keys("", &["/shop/cart", "/api", "//x", "shop"]);
        let claimable = [
            "/shop/cart",
            "/shop/cart/",
            "/shop/cart/x",
            "/api",
            "/api/v1",
            "//x",
            "//x/y",
            "shop",
            "shop/x",
        ];
        let not = [
            "/shop",
            "/shopx",
            "/shop/car",
            "/apix",
            "/",
            "/x",
            "",
            "shopx",
        ];
        for path in claimable {
            assert!(r.could_claim("any.example", path), "{path}");
        }
        for path in not {
            assert!(!r.could_claim("any.example", path), "{path}");
        }
    }

    #[test]
    fn a_key_of_slash_lets_every_request_be_claimed() {
        let r = keys("shop.example", &["/"]);
        for path in ["/", "/x", "/shop/cart", ""] {
            assert!(r.could_claim("shop.example", path), "{path}");
        }
        assert!(!r.could_claim("other.example", "/x"));
    }

    #[test]
    fn keys_added_from_another_set_are_found_by_their_first_segment() {
        let mut r = keys("a.example", &["/one"]);
        r.extend(keys("b.example", &["/two/x"]));
        assert!(r.could_claim("b.example", "/two/x/y"));
        assert!(!r.could_claim("a.example", "/two/x/y"));
        assert!(r.could_claim("a.example", "/one/y"));
    }
}
