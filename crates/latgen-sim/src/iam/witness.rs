//! What a policy lets in beyond the declarations: for each statement that allows, a search
//! for one request it lets in that no declaration asks for (a witness). The requests come
//! from what the declarations and the policy name, each kind with a stranger: every
//! principal and account, organization, VPC, method, header value and path that a caller
//! or any statement names, and one that none names. A custom template or a hand edit that
//! adds a statement for `/admin/*` from another VPC, for PATCH, for requests with an
//! `x-backdoor` header, for another account or for `o-*` therefore meets a probe it lets in.
//!
//! The search is exact over those values, and kept small: of the values of one kind of
//! identity (principal, organization, VPC, method) that the statement admits, only those
//! are tried that no other value beats. A value beats another when every caller that
//! declares it declares the other too, and every Deny statement that matches it matches the
//! other too: where the other value gives a witness, it gives one as well. The paths and
//! headers, which decide which app a request reaches, are all tried.

use std::collections::{BTreeMap, BTreeSet};

use super::{
    AuthPolicy, Call, Caller, Condition, Identity, NOBODY_ACCOUNT, NOBODY_VPC, Principals,
    Statement, condition_holds, glob, principal_matches, request_resource, statement_applies,
};
use crate::routing::Headers;

/// A request a witness search tries: who sends it, to which path, with which headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    pub who: Identity,
    pub path: String,
    pub headers: Headers,
}

/// What a search probes besides the policy's own values: the requests of the route the
/// policy guards (paths with their headers), the callers that may reach it, and the account
/// and Region that the route's service's ARN names.
pub struct Space<'a> {
    pub requests: &'a [(String, Headers)],
    pub callers: &'a [&'a Caller],
    pub region: &'a str,
    pub account: &'a str,
}

/// A value that no caller and no statement names, for each kind: an organization, a
/// header value and a path segment.
const NOBODY_ORG: &str = "o-0latgenprobe0";
const NOBODY_VALUE: &str = "latgen-probe";

/// The HTTP methods a request may have (`vpc-lattice-svcs:RequestMethod`).
const METHODS: &[&str] = &[
    "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE",
];

/// The kinds of value a condition key reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dim {
    Principal,
    Org,
    Vpc,
    Method,
    /// A request header (its name, lower case, follows the key's prefix).
    Header,
    /// A key no request of the model has: its conditions hold for every request or none.
    Fixed,
}

fn dim_of(key: &str) -> Dim {
    match key {
        "aws:principalarn" | "aws:principalaccount" => Dim::Principal,
        "aws:principalorgid" => Dim::Org,
        "vpc-lattice-svcs:sourcevpc" => Dim::Vpc,
        "vpc-lattice-svcs:requestmethod" => Dim::Method,
        k if k.starts_with(HEADER_KEY) => Dim::Header,
        _ => Dim::Fixed,
    }
}

const HEADER_KEY: &str = "vpc-lattice-svcs:requestheader/";

/// `value` and, when it holds wildcards, what they stand for: nothing, a run of characters
/// nobody names, one character.
fn instances(value: &str) -> Vec<String> {
    let mut out = vec![value.to_string()];
    if value.contains(['*', '?']) {
        out.push(value.replace('*', "").replace('?', "x"));
        out.push(value.replace('*', NOBODY_VALUE).replace('?', "x"));
    }
    out
}

/// The signed identity a principal of a policy or a declaration stands for, and another
/// principal of its account: `(ARN, account)`.
fn principals_of(p: &str) -> Vec<(String, String)> {
    if p == "*" {
        return Vec::new();
    }
    let probe = |partition: &str, account: &str| {
        (
            format!("arn:{partition}:iam::{account}:role/{NOBODY_VALUE}"),
            account.to_string(),
        )
    };
    if !p.starts_with("arn:") {
        return vec![probe("aws", p)];
    }
    let fields: Vec<&str> = p.splitn(6, ':').collect();
    let (partition, account) = (fields[1], fields.get(4).copied().unwrap_or_default());
    let mut out = vec![probe(partition, account)];
    if !p.ends_with(":root") {
        out.push((p.to_string(), account.to_string()));
    }
    out
}

/// The values a condition key of the policy names, instances included. A value with
/// wildcards stands for itself only where a request may carry it (a header's); no VPC,
/// organization or principal is named `vpc-*`.
fn named_by_policy(statements: &[Statement], dim: Dim) -> impl Iterator<Item = (&str, String)> {
    let literal = move |v: &String| dim == Dim::Header || !v.contains(['*', '?']);
    statements
        .iter()
        .flat_map(|s| &s.conditions)
        .filter(move |c| dim_of(&c.key) == dim)
        .flat_map(move |c| {
            (c.values.iter().flat_map(|v| instances(v)))
                .filter(literal)
                .map(|v| (c.key.as_str(), v))
        })
}

/// The candidate values of each kind of identity, strangers first.
struct Values {
    principals: Vec<(Option<String>, Option<String>)>,
    orgs: Vec<Option<String>>,
    vpcs: Vec<String>,
    methods: Vec<String>,
}

impl Values {
    fn of(statements: &[Statement], callers: &[&Caller]) -> Values {
        let mut principals: BTreeSet<(String, String)> = BTreeSet::new();
        let mut add = |p: &str| principals.extend(principals_of(p));
        for c in callers {
            c.principals.iter().for_each(|p| add(p));
        }
        for s in statements {
            if let Principals::Aws(list) = &s.principal {
                (list.iter().flat_map(|p| instances(p)))
                    .filter(|p| !p.contains(['*', '?']))
                    .for_each(|p| add(&p));
            }
        }
        named_by_policy(statements, Dim::Principal).for_each(|(_, v)| add(&v));
        let stranger = principals_of(NOBODY_ACCOUNT).remove(0);
        let principals = [(None, None), (Some(stranger.0), Some(stranger.1))]
            .into_iter()
            .chain(principals.into_iter().map(|(p, a)| (Some(p), Some(a))))
            .collect();
        let from = |own: &dyn Fn(&Caller) -> &Vec<String>, dim: Dim| -> BTreeSet<String> {
            let mut out: BTreeSet<String> = callers.iter().flat_map(|c| own(c).clone()).collect();
            out.extend(named_by_policy(statements, dim).map(|(_, v)| v));
            out
        };
        let orgs = [None, Some(NOBODY_ORG.to_string())]
            .into_iter()
            .chain(from(&|c| &c.orgs, Dim::Org).into_iter().map(Some))
            .collect();
        let vpcs = std::iter::once(NOBODY_VPC.to_string())
            .chain(from(&|c| &c.vpcs, Dim::Vpc))
            .collect();
        // Every method, as there are few: a pattern such as `P*` stands for several.
        let methods = METHODS.iter().map(|m| m.to_string()).collect();
        Values {
            principals,
            orgs,
            vpcs,
            methods,
        }
    }
}

/// An identity whose value of kind `dim` is the `i`th candidate, the rest a stranger's.
fn identity(values: &Values, dim: Dim, i: usize) -> Identity {
    let mut who = Identity::stranger();
    match dim {
        Dim::Principal => (who.principal, who.account) = values.principals[i].clone(),
        Dim::Org => who.org = values.orgs[i].clone(),
        Dim::Vpc => who.vpc = values.vpcs[i].clone(),
        Dim::Method => who.method = values.methods[i].clone(),
        Dim::Header | Dim::Fixed => {}
    }
    who
}

/// Whether the part of statement `s` that reads values of kind `dim` holds for `who`.
fn admits(s: &Statement, dim: Dim, who: &Identity) -> bool {
    let headers = Headers::new();
    let call = Call {
        who,
        resource: "",
        headers: &headers,
    };
    let principal = dim != Dim::Principal
        || match &s.principal {
            Principals::Anyone => true,
            Principals::Aws(list) => list.iter().any(|p| p == "*" || principal_matches(p, who)),
        };
    principal && conditions_hold(&s.conditions, dim, &call)
}

fn conditions_hold(conditions: &[Condition], dim: Dim, call: &Call) -> bool {
    (conditions.iter())
        .filter(|c| dim_of(&c.key) == dim)
        .all(|c| condition_holds(c, call))
}

/// Whether caller `c` declares the value of kind `dim` of `who`.
fn declares(c: &Caller, dim: Dim, who: &Identity) -> bool {
    let of = |list: &[String], v: Option<&String>| {
        list.is_empty() || v.is_some_and(|v| list.contains(v))
    };
    match dim {
        Dim::Principal => {
            c.principals.is_empty() || c.principals.iter().any(|p| principal_matches(p, who))
        }
        Dim::Org => of(&c.orgs, who.org.as_ref()),
        Dim::Vpc => of(&c.vpcs, Some(&who.vpc)),
        Dim::Method => of(&c.methods, Some(&who.method)),
        Dim::Header | Dim::Fixed => true,
    }
}

/// The candidates of kind `dim` that statement `s` admits and no other candidate beats
/// (see the module's doc); the unsigned caller is always kept, as it has no organization.
fn unbeaten(
    values: &Values,
    dim: Dim,
    s: &Statement,
    (statements, callers): (&[Statement], &[&Caller]),
) -> Vec<usize> {
    let count = match dim {
        Dim::Principal => values.principals.len(),
        Dim::Org => values.orgs.len(),
        Dim::Vpc => values.vpcs.len(),
        Dim::Method => values.methods.len(),
        Dim::Header | Dim::Fixed => 0,
    };
    let admitted: Vec<(usize, Vec<bool>)> = (0..count)
        .map(|i| (i, identity(values, dim, i)))
        .filter(|(_, who)| admits(s, dim, who))
        .map(|(i, who)| {
            let mut sig: Vec<bool> = callers.iter().map(|c| declares(c, dim, &who)).collect();
            let denies = statements.iter().filter(|d| !d.allow);
            sig.extend(denies.map(|d| admits(d, dim, &who)));
            (i, sig)
        })
        .collect();
    let beats = |a: &[bool], b: &[bool]| a.iter().zip(b).all(|(x, y)| !x || *y);
    let unsigned = |i: usize| dim == Dim::Principal && values.principals[i].0.is_none();
    // Usually one value (a stranger) beats every other: found in one pass, as the pairwise
    // comparison below grows with the square of a policy's principals.
    let signed = || admitted.iter().filter(|(i, _)| !unsigned(*i));
    let least = signed().min_by_key(|(_, sig)| sig.iter().filter(|x| **x).count());
    if let Some((best, sig)) = least
        && signed().all(|(_, other)| beats(sig, other))
    {
        let kept = admitted.iter().map(|(i, _)| *i);
        return kept.filter(|i| i == best || unsigned(*i)).collect();
    }
    (admitted.iter().enumerate())
        .filter(|(k, (i, sig))| {
            unsigned(*i)
                || !admitted.iter().enumerate().any(|(j, (other, o))| {
                    !unsigned(*other) && j != *k && beats(o, sig) && (j < *k || !beats(sig, o))
                })
        })
        .map(|(_, (i, _))| *i)
        .collect()
}

/// The paths of a resource pattern: what follows the service's id (or, in a pattern that
/// names no service, the first `/`), its wildcards instantiated.
fn resource_paths(resource: &str) -> Vec<String> {
    let rest = resource
        .split_once(":service/")
        .map_or(resource, |(_, r)| r);
    let tail = match rest.find('/') {
        Some(i) => &rest[i..],
        None if rest.ends_with('*') => "/*",
        None => return Vec::new(),
    };
    (instances(tail).into_iter())
        .filter(|p| !p.contains(['*', '?']))
        .collect()
}

/// The paths a search tries: each request's (first, so that a witness reaches an app
/// where one can), each the policy's resources name, and one nobody names.
fn paths(statements: &[Statement], requests: &[(String, Headers)]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let named = statements
        .iter()
        .flat_map(|s| &s.resources)
        .flat_map(|r| resource_paths(r));
    (requests.iter().map(|(p, _)| p.clone()))
        .chain(named)
        .chain([format!("/{NOBODY_VALUE}")])
        .filter(|p| seen.insert(p.clone()))
        .collect()
}

/// The header sets a search tries: for each header a request or a condition names, each
/// value named for it, a value nobody names, or none.
fn header_sets(statements: &[Statement], requests: &[(String, Headers)]) -> Vec<Headers> {
    let mut named: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (name, value) in requests.iter().flat_map(|(_, h)| h) {
        named.entry(name.clone()).or_default().insert(value.clone());
    }
    for (key, value) in named_by_policy(statements, Dim::Header) {
        let name = key.strip_prefix(HEADER_KEY).unwrap_or(key).to_string();
        named.entry(name).or_default().insert(value);
    }
    let mut out = vec![Headers::new()];
    for (name, values) in named {
        let values: Vec<Option<String>> = [None, Some(NOBODY_VALUE.to_string())]
            .into_iter()
            .chain(values.into_iter().map(Some))
            .collect();
        out = (out.iter())
            .flat_map(|h| {
                values.iter().map(|v| {
                    let mut h = h.clone();
                    if let Some(v) = v {
                        h.insert(name.clone(), v.clone());
                    }
                    h
                })
            })
            .collect();
    }
    out
}

/// The identities that probe statement `s`: each unbeaten combination of its values.
fn identities(
    values: &Values,
    s: &Statement,
    (statements, callers): (&[Statement], &[&Caller]),
) -> Vec<Identity> {
    let of = |dim| unbeaten(values, dim, s, (statements, callers));
    let (principals, orgs, vpcs, methods) = (
        of(Dim::Principal),
        of(Dim::Org),
        of(Dim::Vpc),
        of(Dim::Method),
    );
    let no_org = Identity {
        org: None,
        ..Identity::stranger()
    };
    let unsigned_orgs: Vec<Option<String>> = admits(s, Dim::Org, &no_org)
        .then_some(None)
        .into_iter()
        .collect();
    let signed_orgs: Vec<Option<String>> = orgs.iter().map(|&i| values.orgs[i].clone()).collect();
    let mut out = Vec::new();
    for &p in &principals {
        let (principal, account) = values.principals[p].clone();
        let orgs = if principal.is_none() {
            &unsigned_orgs
        } else {
            &signed_orgs
        };
        for org in orgs {
            for &v in &vpcs {
                for &m in &methods {
                    out.push(Identity {
                        principal: principal.clone(),
                        account: account.clone(),
                        org: org.clone(),
                        vpc: values.vpcs[v].clone(),
                        method: values.methods[m].clone(),
                    });
                }
            }
        }
    }
    out
}

impl AuthPolicy {
    /// For each statement that allows, the first request it lets in (the policy as a whole
    /// allowing it) that `declared` says no declaration asks for; none for an unreadable
    /// policy. `space` is what the route and the declarations name.
    pub fn witnesses(
        &self,
        space: &Space,
        declared: &dyn Fn(&Probe) -> bool,
    ) -> Vec<(usize, Probe)> {
        let Ok(statements) = self.statements() else {
            return Vec::new();
        };
        let values = Values::of(statements, space.callers);
        let paths = paths(statements, space.requests);
        let header_sets = header_sets(statements, space.requests);
        let resources: Vec<(String, String)> = (paths.iter())
            .map(|p| (p.clone(), request_resource(space.region, space.account, p)))
            .collect();
        let mut out = Vec::new();
        for (i, s) in statements.iter().enumerate().filter(|(_, s)| s.allow) {
            let stranger = Identity::stranger();
            let none = Headers::new();
            let any_call = Call {
                who: &stranger,
                resource: "",
                headers: &none,
            };
            let invokes = s.actions.iter().any(|a| glob(a, super::INVOKE_LOWER));
            if !invokes || !conditions_hold(&s.conditions, Dim::Fixed, &any_call) {
                continue;
            }
            let ids = identities(&values, s, (statements, space.callers));
            let found = resources
                .iter()
                .filter(|(_, r)| s.resources.iter().any(|pattern| glob(pattern, r)))
                .flat_map(|(path, r)| header_sets.iter().map(move |h| (path, r, h)))
                .filter(|(_, _, h)| {
                    let call = Call {
                        headers: h,
                        ..any_call
                    };
                    conditions_hold(&s.conditions, Dim::Header, &call)
                })
                .find_map(|(path, resource, headers)| {
                    ids.iter().find_map(|who| {
                        let call = Call {
                            who,
                            resource,
                            headers,
                        };
                        let probe = || Probe {
                            who: who.clone(),
                            path: path.clone(),
                            headers: headers.clone(),
                        };
                        (statement_applies(s, &call)
                            && self.decide(&call).allows()
                            && !declared(&probe()))
                        .then(probe)
                    })
                });
            out.extend(found.map(|p| (i, p)));
        }
        out
    }
}
