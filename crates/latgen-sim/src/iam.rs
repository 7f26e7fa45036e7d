//! Who a Lattice service lets in, computed from its `IAMAuthPolicy` as written (hand edits
//! included): the part of IAM policy evaluation that auth policies use. A request is
//! allowed when a statement allows it and none denies it (an explicit Deny wins); a
//! statement applies when its principal, action, resource and every condition match. A
//! Lattice service with no policy has auth type `NONE`: everyone is let in.
//!
//! What it does not see: the service network's own policy (which must allow too) and the
//! caller's identity-based policies. Anything in a policy it cannot evaluate (NotPrincipal,
//! NotAction, NotResource, an operator it does not know) makes the policy unreadable
//! rather than guessed at.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::platform::MatchKind;
use crate::routing::Headers;

/// The condition key of the VPC a request comes from.
pub const SOURCE_VPC: &str = "vpc-lattice-svcs:SourceVpc";
/// The condition key of a request's HTTP method.
pub const REQUEST_METHOD: &str = "vpc-lattice-svcs:RequestMethod";
/// The condition key of the AWS Organization of the signing principal.
pub const PRINCIPAL_ORG: &str = "aws:PrincipalOrgID";

/// One kind of caller: every listed condition must hold (a principal of `principals`, in
/// an organization of `orgs`, from a VPC of `vpcs`, with a method of `methods`); a field
/// left out does not restrict. At least one of `principals`, `orgs` and `vpcs` is given.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Caller {
    /// IAM principals that sign their requests (SigV4): role or user ARNs
    /// (`arn:aws:iam::111122223333:role/reports`) or 12-digit account ids (any principal of
    /// that account). Unset = any caller, signed or not (`Principal: "*"`), so that unsigned
    /// traffic such as Kong's is let in by `vpcs`.
    #[serde(default)]
    pub principals: Vec<String>,
    /// AWS Organizations ids (`o-…`) the signing principal must belong to
    /// (`aws:PrincipalOrgID`).
    #[serde(default)]
    pub orgs: Vec<String>,
    /// VPC ids (`vpc-…`) the request must come from (`vpc-lattice-svcs:SourceVpc`).
    #[serde(default)]
    pub vpcs: Vec<String>,
    /// HTTP methods allowed (`vpc-lattice-svcs:RequestMethod`), upper case; unset = any.
    #[serde(default)]
    pub methods: Vec<String>,
}

mod grants;
mod witness;
pub use grants::Grant;
pub use witness::{Probe, Space};

/// Who sends a request, as a policy sees it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Identity {
    /// The signing principal's ARN (a role's, for an assumed role); None = unsigned.
    pub principal: Option<String>,
    /// The signing principal's account.
    pub account: Option<String>,
    /// The signing principal's organization.
    pub org: Option<String>,
    /// The VPC the request comes from.
    pub vpc: String,
    pub method: String,
}

/// A VPC and an account no caller names, for the identity nobody declared.
const NOBODY_VPC: &str = "vpc-00000000000000000";
const NOBODY_ACCOUNT: &str = "000000000000";

impl Identity {
    /// An unsigned request from a VPC nobody declared: what every policy must keep out.
    pub fn stranger() -> Identity {
        Identity {
            principal: None,
            account: None,
            org: None,
            vpc: NOBODY_VPC.into(),
            method: "GET".into(),
        }
    }

    /// The identities a caller declaration stands for: one for each of its principals (or
    /// an unsigned one, or one signed by an unknown account when only orgs are given), with
    /// its first org, VPC and method; and one for each further org, VPC and method.
    pub fn of_caller(c: &Caller) -> Vec<Identity> {
        let signed = |p: &str| {
            let account = if p.len() == 12 {
                p.to_string()
            } else {
                p.split(':').nth(4).unwrap_or_default().to_string()
            };
            let arn = if p.len() == 12 || p.ends_with(":root") {
                format!("arn:aws:iam::{account}:role/latgen-probe")
            } else {
                p.to_string()
            };
            (Some(arn), Some(account))
        };
        let mut principals: Vec<(Option<String>, Option<String>)> =
            c.principals.iter().map(|p| signed(p)).collect();
        if principals.is_empty() {
            principals.push(if c.orgs.is_empty() {
                (None, None)
            } else {
                signed(&format!("arn:aws:iam::{NOBODY_ACCOUNT}:role/latgen-probe"))
            });
        }
        let first = |v: &[String], or: &str| v.first().cloned().unwrap_or_else(|| or.to_string());
        let base = Identity {
            principal: principals[0].0.clone(),
            account: principals[0].1.clone(),
            org: c.orgs.first().cloned(),
            vpc: first(&c.vpcs, NOBODY_VPC),
            method: first(&c.methods, "GET"),
        };
        let mut out = vec![base.clone()];
        out.extend(
            principals
                .into_iter()
                .skip(1)
                .map(|(principal, account)| Identity {
                    principal,
                    account,
                    ..base.clone()
                }),
        );
        out.extend(c.orgs.iter().skip(1).map(|org| Identity {
            org: Some(org.clone()),
            ..base.clone()
        }));
        out.extend(c.vpcs.iter().skip(1).map(|vpc| Identity {
            vpc: vpc.clone(),
            ..base.clone()
        }));
        out.extend(c.methods.iter().skip(1).map(|m| Identity {
            method: m.clone(),
            ..base.clone()
        }));
        // Near misses, which only another declaration may let in: the caller unsigned,
        // signed by another account, from another VPC.
        if base.principal.is_some() {
            out.push(Identity {
                principal: None,
                account: None,
                org: None,
                ..base.clone()
            });
            out.push(Identity {
                principal: Some(format!("arn:aws:iam::{NOBODY_ACCOUNT}:role/latgen-probe")),
                account: Some(NOBODY_ACCOUNT.into()),
                ..base.clone()
            });
        }
        if !c.vpcs.is_empty() {
            out.push(Identity {
                vpc: NOBODY_VPC.into(),
                ..base.clone()
            });
        }
        // The same caller with a method it does not declare must be kept out.
        if !c.methods.is_empty() && !c.methods.iter().any(|m| m == "DELETE") {
            out.push(Identity {
                method: "DELETE".into(),
                ..base.clone()
            });
        }
        out
    }

    /// Whether caller declaration `c` admits this identity: what the declarations mean,
    /// independent of any policy.
    pub fn declared_by(&self, c: &Caller) -> bool {
        let principal_ok =
            c.principals.is_empty() || c.principals.iter().any(|p| principal_matches(p, self));
        let org_ok = c.orgs.is_empty() || self.org.as_ref().is_some_and(|o| c.orgs.contains(o));
        let vpc_ok = c.vpcs.is_empty() || c.vpcs.contains(&self.vpc);
        let method_ok = c.methods.is_empty() || c.methods.contains(&self.method);
        principal_ok && org_ok && vpc_ok && method_ok
    }

    /// As a finding shows it.
    pub fn show(&self) -> String {
        let who = match &self.principal {
            Some(p) => p.clone(),
            None => "an unsigned caller".into(),
        };
        let org = self
            .org
            .as_ref()
            .map(|o| format!(" of {o}"))
            .unwrap_or_default();
        format!("{who}{org} from {} ({})", self.vpc, self.method)
    }
}

/// Whether a policy's or a declaration's principal `p` (an account id, an account's root, a
/// role or user ARN) names identity `id`.
fn principal_matches(p: &str, id: &Identity) -> bool {
    let Some(arn) = &id.principal else {
        return false;
    };
    let root_account = p.strip_suffix(":root").and_then(|r| r.split(':').nth(4));
    if p.len() == 12 && p.bytes().all(|b| b.is_ascii_digit()) {
        id.account.as_deref() == Some(p)
    } else if let Some(a) = root_account {
        id.account.as_deref() == Some(a)
    } else {
        p == arn
    }
}

/// What probing a network's auth needs besides the network: how Kong calls Lattice, and
/// the account and Region the services' ARNs name.
#[derive(Debug, Clone)]
pub struct AuthProbe {
    pub kong: Identity,
    pub region: String,
    pub account: String,
}

impl AuthProbe {
    /// The probe of a project whose auth is on, where Kong calls as `kong` into services
    /// of `account` in `region`.
    pub fn new(kong: &Caller, region: &str, account: &str) -> AuthProbe {
        AuthProbe {
            kong: Identity::of_caller(kong).remove(0),
            region: region.to_string(),
            account: account.to_string(),
        }
    }

    /// The resource of a request to `path` of some service.
    pub fn resource(&self, path: &str) -> String {
        request_resource(&self.region, &self.account, path)
    }
}

/// A request to a Lattice service, as its policy evaluates it.
pub struct Call<'a> {
    pub who: &'a Identity,
    /// The request's resource: the service's ARN, then the path.
    pub resource: &'a str,
    pub headers: &'a Headers,
}

/// The resource of a request to the path `path` of a service, in the account and Region
/// of the project. The service id is made up: the policies latgen writes name any id.
pub fn request_resource(region: &str, account: &str, path: &str) -> String {
    let partition = crate::platform::partition(region);
    format!("arn:{partition}:vpc-lattice:{region}:{account}:service/svc-0latgenprobe00000{path}")
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Principals {
    Anyone,
    Aws(Vec<String>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Equals,
    NotEquals,
    EqualsIgnoreCase,
    NotEqualsIgnoreCase,
    Like,
    NotLike,
}

#[derive(Debug, Clone)]
struct Condition {
    op: Op,
    key: String,
    values: Vec<String>,
}

#[derive(Debug, Clone)]
struct Statement {
    allow: bool,
    principal: Principals,
    actions: Vec<String>,
    resources: Vec<String>,
    conditions: Vec<Condition>,
}

/// How a policy decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// Allowed by this statement (0-based).
    Allowed(usize),
    /// Denied by this statement's explicit Deny.
    Denied(usize),
    /// No statement allows it.
    NotAllowed,
}

impl Decision {
    pub fn allows(self) -> bool {
        matches!(self, Decision::Allowed(_))
    }
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Decision::Allowed(i) => write!(f, "allowed by statement {}", i + 1),
            Decision::Denied(i) => write!(f, "denied by statement {} (an explicit Deny)", i + 1),
            Decision::NotAllowed => write!(f, "denied (no statement allows it)"),
        }
    }
}

/// An `IAMAuthPolicy` as the model reads it.
#[derive(Debug, Clone)]
pub struct AuthPolicy {
    pub file: PathBuf,
    pub namespace: String,
    /// The route it targets (in its own namespace).
    pub target: String,
    /// The policy's length in bytes.
    pub bytes: usize,
    /// The policy's text, read into statements when first asked: a check reads every
    /// policy of the tree and evaluates few.
    text: std::sync::Arc<str>,
    statements: std::sync::OnceLock<Result<Vec<Statement>, String>>,
}

impl AuthPolicy {
    /// Reads policy text `policy` of the policy in `file` that targets route `target`.
    pub fn read(file: PathBuf, namespace: String, target: String, policy: &str) -> AuthPolicy {
        AuthPolicy {
            file,
            namespace,
            target,
            bytes: policy.len(),
            text: policy.into(),
            statements: std::sync::OnceLock::new(),
        }
    }

    /// The resource of a request to `path` of the service, in the account and Region its
    /// statements name (any, when they name none).
    pub fn resource(&self, path: &str) -> String {
        let named = (self.statements().iter().flatten())
            .flat_map(|s| &s.resources)
            .find_map(|r| Some(r.split(":service/").next()?.split(':').collect::<Vec<_>>()))
            .filter(|parts| parts.len() == 5 && parts[0] == "arn");
        match named {
            Some(parts) => request_resource(parts[3], parts[4], path),
            None => request_resource("us-east-1", NOBODY_ACCOUNT, path),
        }
    }

    fn statements(&self) -> &Result<Vec<Statement>, String> {
        self.statements.get_or_init(|| parse(&self.text))
    }

    /// Why the model cannot evaluate the policy, if it cannot.
    pub fn unreadable(&self) -> Option<&str> {
        self.statements().as_ref().err().map(String::as_str)
    }

    /// The policy's decision on `call`; an unreadable policy allows nothing.
    pub fn decide(&self, call: &Call) -> Decision {
        let Ok(statements) = self.statements() else {
            return Decision::NotAllowed;
        };
        let applies = |s: &Statement| statement_applies(s, call);
        if let Some(i) = statements.iter().position(|s| !s.allow && applies(s)) {
            return Decision::Denied(i);
        }
        match statements.iter().position(|s| s.allow && applies(s)) {
            Some(i) => Decision::Allowed(i),
            None => Decision::NotAllowed,
        }
    }

    /// Every value a condition of the policy compares key `key` with, sorted, each once;
    /// and whether it also names a pattern (`*` or `?` under `StringLike`), left out of the
    /// values since it stands for values it does not name. A caller whose value is not
    /// known is judged with each value, and with one the policy does not name.
    pub fn condition_values(&self, key: &str) -> (Vec<String>, bool) {
        let key = key.to_ascii_lowercase();
        let conditions = (self.statements().iter().flatten())
            .flat_map(|s| &s.conditions)
            .filter(|c| c.key == key);
        let mut values = std::collections::BTreeSet::new();
        let mut patterns = false;
        for c in conditions {
            let like = matches!(c.op, Op::Like | Op::NotLike);
            for v in &c.values {
                if like && v.contains(['*', '?']) {
                    patterns = true;
                } else {
                    values.insert(v.clone());
                }
            }
        }
        (values.into_iter().collect(), patterns)
    }

    /// The identities the policy's statements name: one that satisfies each allowing
    /// statement (its first principal and first value of each condition), for probing.
    pub fn identities(&self) -> Vec<Identity> {
        let Ok(statements) = self.statements() else {
            return Vec::new();
        };
        statements
            .iter()
            .filter(|s| s.allow)
            .map(|s| {
                let cond = |key: &str| {
                    s.conditions
                        .iter()
                        .find(|c| {
                            c.key.eq_ignore_ascii_case(key)
                                && matches!(c.op, Op::Equals | Op::EqualsIgnoreCase | Op::Like)
                        })
                        .and_then(|c| c.values.first().cloned())
                };
                let principals = match &s.principal {
                    Principals::Anyone => Vec::new(),
                    Principals::Aws(p) => p.clone(),
                };
                let caller = Caller {
                    principals: principals.into_iter().take(1).collect(),
                    orgs: cond(PRINCIPAL_ORG).into_iter().collect(),
                    vpcs: cond(SOURCE_VPC).into_iter().collect(),
                    methods: cond(REQUEST_METHOD).into_iter().collect(),
                };
                Identity::of_caller(&caller).remove(0)
            })
            .collect()
    }
}

fn statement_applies(s: &Statement, call: &Call) -> bool {
    let principal = match &s.principal {
        Principals::Anyone => true,
        Principals::Aws(list) => list
            .iter()
            .any(|p| p == "*" || principal_matches(p, call.who)),
    };
    // The cheap tests first: most statements name another caller, and the resources are
    // the longest strings to compare.
    principal
        && s.conditions.iter().all(|c| condition_holds(c, call))
        && s.actions.iter().any(|a| glob(a, INVOKE_LOWER))
        && s.resources.iter().any(|r| glob(r, call.resource))
}

/// The action, as the (lower-cased) actions of a statement are compared with it.
const INVOKE_LOWER: &str = "vpc-lattice-svcs:invoke";

/// The value of condition key `key` (lower case) for `call`; None when the request has none.
fn key_value<'c>(key: &str, call: &'c Call) -> Option<&'c str> {
    let who = call.who;
    if let Some(header) = key.strip_prefix("vpc-lattice-svcs:requestheader/") {
        return call.headers.get(header).map(String::as_str);
    }
    match key {
        "vpc-lattice-svcs:sourcevpc" => Some(&who.vpc),
        "vpc-lattice-svcs:requestmethod" => Some(&who.method),
        "aws:principalorgid" => who.org.as_deref(),
        "aws:principalaccount" => who.account.as_deref(),
        "aws:principalarn" => who.principal.as_deref(),
        _ => None,
    }
}

fn condition_holds(c: &Condition, call: &Call) -> bool {
    let value = key_value(&c.key, call);
    let Some(v) = value else {
        // A negated operator holds when the key is absent; the others do not.
        return matches!(c.op, Op::NotEquals | Op::NotEqualsIgnoreCase | Op::NotLike);
    };
    let any = |f: &dyn Fn(&str) -> bool| c.values.iter().any(|x| f(x));
    match c.op {
        Op::Equals => any(&|x| x == v),
        Op::NotEquals => !any(&|x| x == v),
        Op::EqualsIgnoreCase => any(&|x| x.eq_ignore_ascii_case(v)),
        Op::NotEqualsIgnoreCase => !any(&|x| x.eq_ignore_ascii_case(v)),
        Op::Like => any(&|x| glob(x, v)),
        Op::NotLike => !any(&|x| glob(x, v)),
    }
}

/// IAM's wildcard match: `*` any run of characters (`/` included), `?` any one. Compared
/// byte by byte (what a policy and a request name is ASCII), with no allocation: a check
/// makes millions of these.
pub fn glob(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == b'?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// A string or an array of strings, as a policy writes one value or several; `what` names
/// the field in the error.
pub fn strings(v: &Value, what: &str) -> Result<Vec<String>, String> {
    match v {
        Value::String(s) => Ok(vec![s.clone()]),
        Value::Array(a) => a
            .iter()
            .map(|x| {
                x.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("{what} holds a value that is not a string"))
            })
            .collect(),
        _ => Err(format!("{what} is neither a string nor a list of strings")),
    }
}

fn parse(text: &str) -> Result<Vec<Statement>, String> {
    statement_values(text)?
        .iter()
        .map(parse_statement)
        .collect()
}

/// The keys a statement may have for the model to evaluate it (and for `latgen import` to
/// read it into callers).
#[rustfmt::skip]
pub const STATEMENT_KEYS: [&str; 6] =
    ["Sid", "Effect", "Principal", "Action", "Resource", "Condition"];

/// A policy's statements as JSON values (its `Statement`, one object or a list).
pub fn statement_values(text: &str) -> Result<Vec<Value>, String> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| format!("the policy is not JSON: {e}"))?;
    match &v["Statement"] {
        Value::Array(a) => Ok(a.clone()),
        s @ Value::Object(_) => Ok(vec![s.clone()]),
        _ => Err("the policy has no `Statement`".into()),
    }
}

fn parse_statement(s: &Value) -> Result<Statement, String> {
    let Value::Object(map) = s else {
        return Err("a statement is not an object".into());
    };
    for key in map.keys() {
        if !STATEMENT_KEYS.contains(&key.as_str()) {
            return Err(format!(
                "a statement uses `{key}`, which this check does not evaluate"
            ));
        }
    }
    let allow = match map.get("Effect").and_then(Value::as_str) {
        Some("Allow") => true,
        Some("Deny") => false,
        _ => return Err("a statement's `Effect` is neither `Allow` nor `Deny`".into()),
    };
    let principal = match map.get("Principal") {
        Some(Value::String(s)) if s == "*" => Principals::Anyone,
        Some(Value::Object(p)) if p.len() == 1 && p.contains_key("AWS") => {
            Principals::Aws(strings(&p["AWS"], "Principal.AWS")?)
        }
        _ => return Err("a statement's `Principal` is neither `*` nor `{\"AWS\": …}`".into()),
    };
    let need = |key: &str| {
        map.get(key)
            .ok_or_else(|| format!("a statement has no `{key}`"))
    };
    // Actions are compared ignoring case.
    let actions = strings(need("Action")?, "Action")?
        .iter()
        .map(|a| a.to_ascii_lowercase())
        .collect();
    let resources = strings(need("Resource")?, "Resource")?;
    let mut conditions = Vec::new();
    if let Some(c) = map.get("Condition") {
        let Value::Object(ops) = c else {
            return Err("a statement's `Condition` is not an object".into());
        };
        for (op, keys) in ops {
            let op = match op.as_str() {
                "StringEquals" => Op::Equals,
                "StringNotEquals" => Op::NotEquals,
                "StringEqualsIgnoreCase" => Op::EqualsIgnoreCase,
                "StringNotEqualsIgnoreCase" => Op::NotEqualsIgnoreCase,
                "StringLike" => Op::Like,
                "StringNotLike" => Op::NotLike,
                other => {
                    return Err(format!(
                        "a condition uses `{other}`, which this check does not evaluate"
                    ));
                }
            };
            let Value::Object(keys) = keys else {
                return Err("a condition operator does not map keys to values".into());
            };
            for (key, values) in keys {
                // Condition keys are compared ignoring case.
                conditions.push(Condition {
                    op,
                    key: key.to_ascii_lowercase(),
                    values: strings(values, key)?,
                });
            }
        }
    }
    Ok(Statement {
        allow,
        principal,
        actions,
        resources,
        conditions,
    })
}

/// The requests that probe a match: the path itself and one under it.
pub fn probe_paths(kind: MatchKind, path: &str) -> Vec<String> {
    match kind {
        MatchKind::Exact => vec![path.to_string()],
        MatchKind::Prefix => {
            let stem = path.trim_end_matches('/');
            let mut out = vec![format!("{stem}/latgen-probe")];
            if !stem.is_empty() {
                out.insert(0, stem.to_string());
            }
            out
        }
    }
}

/// The headers of a probe: the dispatch header set to `value`, or none.
pub fn probe_headers(header: Option<(&str, &str)>) -> Headers {
    header
        .map(|(n, v)| BTreeMap::from([(n.to_ascii_lowercase(), v.to_string())]))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wildcards_are_iams() {
        assert!(glob("*/shop", "arn:x/svc-1/admin/shop"), "`*` crosses `/`");
        assert!(glob("a?c", "abc"));
        assert!(!glob("a?c", "ac"));
        assert!(glob("svc-???/x/*", "svc-abc/x/"));
        assert!(!glob("svc-???/x", "svc-abcd/x"));
        assert!(glob("*", ""));
    }

    #[test]
    fn an_explicit_deny_wins_and_nothing_allowed_is_denied() {
        let p = AuthPolicy::read(
            "p".into(),
            "ns".into(),
            "r".into(),
            r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"vpc-lattice-svcs:Invoke","Resource":"*"},{"Effect":"Deny","Principal":"*","Action":"*","Resource":"*/admin*"}]}"#,
        );
        let who = Identity::stranger();
        let headers = Headers::new();
        let call = |r: &'static str| Call {
            who: &who,
            resource: r,
            headers: &headers,
        };
        assert_eq!(p.decide(&call("svc/shop")), Decision::Allowed(0));
        assert_eq!(p.decide(&call("svc/admin/x")), Decision::Denied(1));
        let none = AuthPolicy::read("p".into(), "ns".into(), "r".into(), r#"{"Statement":[]}"#);
        assert_eq!(none.decide(&call("svc/shop")), Decision::NotAllowed);
    }

    #[test]
    fn what_the_model_cannot_evaluate_makes_the_policy_unreadable() {
        let p = AuthPolicy::read(
            "p".into(),
            "ns".into(),
            "r".into(),
            r#"{"Statement":[{"Effect":"Allow","NotPrincipal":"*"}]}"#,
        );
        assert!(p.unreadable().is_some());
    }
}
