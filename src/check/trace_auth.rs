//! The auth check of a trace ([`super::follow::Trace`]): which caller the auth policy of
//! the Lattice service a request reaches is asked about, and why that one, and what the
//! policy says, for people or as JSON.
//!
//! A request through Kong reaches Lattice as Kong: Kong does not sign what it forwards, and
//! sends it from its own VPC, so the client behind it (`--as`, `--from-vpc`, `--org`) is
//! not what the policy sees. The check is then made as the caller the settings say Kong
//! is (`auth.kong`). A request straight to a service's custom domain reaches Lattice as
//! its sender: the caller those options describe. A VPC that nobody gave is never made
//! up: the policy is asked with each VPC it names and one it does not, and the answer
//! says when they differ.

use serde_json::{Value, json};

use latgen_sim::iam::{AuthPolicy, Call, Caller, Decision, Identity, SOURCE_VPC};
use latgen_sim::routing::{Headers, LatticeRoute, Network};

/// Who a trace may ask the auth policy about.
#[derive(Debug, Clone)]
pub(crate) struct Callers {
    /// The caller `--as`, `--from-vpc` and `--org` describe, if any.
    pub given: Option<Caller>,
    /// How Kong calls Lattice (`auth.kong` of the settings), or why it is not known.
    pub kong: Result<Caller, String>,
    /// The settings file that says it, as the output names it.
    pub settings: String,
    /// The request's method (`--method`): Kong forwards the client's.
    pub method: String,
}

impl Callers {
    /// No caller given and no settings read: the routing alone.
    #[cfg(test)]
    pub fn none() -> Callers {
        Callers {
            given: None,
            kong: Err("no settings were read".to_string()),
            settings: "latgen.yaml".to_string(),
            method: "GET".to_string(),
        }
    }
}

/// What the policy says of the caller asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The service has no auth policy (auth type NONE): every caller is let in.
    Open,
    /// One decision, from every VPC the caller may send from.
    Decided(Decision),
    /// The decision differs between the VPCs the caller may send from: each with its
    /// decision, None standing for a VPC the policy does not name. `patterns`: the policy
    /// also matches VPCs by a pattern, so a VPC that matches one is not covered.
    ByVpc {
        each: Vec<(Option<String>, Decision)>,
        patterns: bool,
    },
    /// The caller is not known (Kong's, when the settings do not say): why.
    Unknown(String),
}

impl Verdict {
    /// Whether the caller is shown to be let in, from every VPC it may send from.
    pub fn lets_in(&self) -> bool {
        match self {
            Verdict::Open => true,
            Verdict::Decided(d) => d.allows(),
            Verdict::ByVpc { each, patterns } => !patterns && each.iter().all(|(_, d)| d.allows()),
            Verdict::Unknown(_) => false,
        }
    }
}

/// The auth check of one trace.
#[derive(Debug)]
pub(crate) struct AuthCheck<'a> {
    /// Made as Kong (a request through Kong), else as the caller given.
    pub as_kong: bool,
    /// The caller asked about; None when it is Kong's and not known.
    pub caller: Option<Caller>,
    pub policy: Option<&'a AuthPolicy>,
    pub verdict: Verdict,
    /// The caller given, which Lattice does not see behind Kong.
    pub unseen: Option<Caller>,
    /// The settings file Kong's caller comes from.
    pub settings: String,
    /// The Lattice service's custom domain and the path, for a direct call's trace.
    pub direct_url: String,
}

/// The auth check of a request that reached Lattice service `route` with `path` and
/// `headers` (`direct`: straight to its domain, else through Kong). None when there is
/// nothing to ask: no caller given, and (through Kong) no policy on the service.
pub(crate) fn check<'a>(
    net: &'a Network,
    (route, direct): (&LatticeRoute, bool),
    (path, headers): (&str, &Headers),
    callers: &Callers,
) -> Option<AuthCheck<'a>> {
    let policy = net.auth_policy(route);
    if callers.given.is_none() && (direct || policy.is_none()) {
        return None;
    }
    let caller = if direct {
        callers.given.clone()
    } else {
        (callers.kong.as_ref().ok()).map(|k| Caller {
            methods: vec![callers.method.clone()],
            ..k.clone()
        })
    };
    let verdict = match (policy, &caller) {
        (None, _) => Verdict::Open,
        (Some(p), Some(c)) => judge(p, c, path, headers),
        (Some(_), None) => Verdict::Unknown(callers.kong.clone().err().unwrap_or_default()),
    };
    let domain = route.domain().unwrap_or_default();
    Some(AuthCheck {
        as_kong: !direct,
        caller,
        policy,
        verdict,
        unseen: callers.given.clone().filter(|_| !direct),
        settings: callers.settings.clone(),
        direct_url: format!("http://{domain}{path}"),
    })
}

/// The identity of caller `c` sending from `vpc` (None: a VPC no policy names).
fn identity(c: &Caller, vpc: Option<&str>) -> Identity {
    let one = Caller {
        vpcs: vpc.into_iter().map(str::to_string).collect(),
        ..c.clone()
    };
    Identity::of_caller(&one).remove(0)
}

/// What `policy` says of caller `c` on `path` with `headers`, from each VPC it may send
/// from: those it names, else every VPC the policy names and one it does not.
pub(crate) fn judge(policy: &AuthPolicy, c: &Caller, path: &str, headers: &Headers) -> Verdict {
    let resource = policy.resource(path);
    let (vpcs, patterns): (Vec<Option<String>>, bool) = if c.vpcs.is_empty() {
        let (named, patterns) = policy.condition_values(SOURCE_VPC);
        (
            named.into_iter().map(Some).chain([None]).collect(),
            patterns,
        )
    } else {
        (c.vpcs.iter().cloned().map(Some).collect(), false)
    };
    let each: Vec<(Option<String>, Decision)> = vpcs
        .into_iter()
        .map(|vpc| {
            let who = identity(c, vpc.as_deref());
            let call = Call {
                who: &who,
                resource: &resource,
                headers,
            };
            (vpc, policy.decide(&call))
        })
        .collect();
    // A VPC not given is answered by the VPC the policy does not name (the last) when
    // every VPC gets in or none does: the statement that lets in from anywhere.
    let unknown = c.vpcs.is_empty();
    let agree = |a: &Decision, b: &Decision| match unknown {
        true => a.allows() == b.allows(),
        false => a == b,
    };
    match each.last() {
        Some((_, general)) if !patterns && each.iter().all(|(_, d)| agree(d, general)) => {
            Verdict::Decided(*general)
        }
        _ => Verdict::ByVpc { each, patterns },
    }
}

/// The caller a trace asks about, as a person reads it: the principal it signs with (or
/// unsigned), its organization, the VPCs it sends from, the method.
fn show(c: &Caller) -> String {
    let who = match (c.principals.first(), c.orgs.is_empty()) {
        (Some(p), _) if p.len() == 12 => format!("a principal of account {p}"),
        (Some(p), _) => p.clone(),
        (None, true) => "an unsigned caller".to_string(),
        (None, false) => "a signed caller".to_string(),
    };
    let org = c
        .orgs
        .first()
        .map(|o| format!(" of {o}"))
        .unwrap_or_default();
    let from = match c.vpcs.as_slice() {
        [] => "a VPC not given".to_string(),
        vpcs => vpcs.join(" or "),
    };
    let method = c.methods.first().map_or("GET", String::as_str);
    format!("{who}{org} from {from} ({method})")
}

/// The options that gave caller `c`, as typed.
fn options(c: &Caller) -> String {
    let flags = [
        ("--as", &c.principals),
        ("--org", &c.orgs),
        ("--from-vpc", &c.vpcs),
    ];
    (flags.iter())
        .flat_map(|(flag, values)| values.iter().map(move |v| format!("{flag} {v}")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Why the check is made as this caller.
fn why(a: &AuthCheck<'_>) -> String {
    match (a.as_kong, &a.caller) {
        (true, Some(_)) => format!(
            "a request through Kong reaches Lattice as Kong (auth.kong in {}), not as the client behind it",
            a.settings
        ),
        (true, None) => {
            "a request through Kong reaches Lattice as Kong, not as the client behind it".into()
        }
        (false, _) => {
            "a request straight to a service's domain reaches Lattice as its sender, the caller the options give".into()
        }
    }
}

fn file(policy: Option<&AuthPolicy>) -> String {
    policy.map_or(String::new(), |p| format!(" ({})", p.file.display()))
}

fn from(vpc: Option<&str>) -> String {
    vpc.map_or("from a VPC the policy does not name".to_string(), |v| {
        format!("from {v}")
    })
}

/// The lines of the check, each without its newline.
pub(crate) fn human(a: &AuthCheck<'_>) -> Vec<String> {
    let who = match (&a.caller, a.as_kong) {
        (Some(c), true) => format!("as Kong, {}", show(c)),
        (Some(c), false) => format!("as {}", show(c)),
        (None, _) => "as Kong".to_string(),
    };
    let mut lines = Vec::new();
    let answer = match &a.verdict {
        Verdict::Open => "let in: the service has no auth policy (auth type NONE)".to_string(),
        Verdict::Decided(d) => format!("{d}{}", file(a.policy)),
        Verdict::Unknown(why) => format!("not known: {why}{}", file(a.policy)),
        Verdict::ByVpc { each, patterns } => {
            for (vpc, d) in each {
                lines.push(format!("          {}: {d}", from(vpc.as_deref())));
            }
            if *patterns {
                lines.push(
                    "          from a VPC that matches a pattern of the policy: not known".into(),
                );
            }
            let ask = match a.caller.as_ref().is_some_and(|c| c.vpcs.is_empty()) {
                true => ", which --from-vpc gives",
                false => "",
            };
            format!("it depends on the VPC it sends from{ask}{}", file(a.policy))
        }
    };
    lines.insert(0, format!("auth      {who}: {answer}"));
    lines.insert(1, format!("          {}", why(a)));
    if let Some(c) = &a.unseen {
        lines.push(format!(
            "          not checked: {}, the client behind Kong, which Lattice does not see; to check it as a direct caller, trace {} with it",
            options(c),
            a.direct_url
        ));
    }
    lines
}

fn caller_json(c: &Caller) -> Value {
    json!({
        "principal": c.principals.first(),
        "org": c.orgs.first(),
        "vpc": (c.vpcs.len() == 1).then(|| &c.vpcs[0]),
        "vpcs": c.vpcs,
        "method": c.methods.first(),
    })
}

/// The check as JSON.
pub(crate) fn to_json(a: &AuthCheck<'_>) -> Value {
    let message = match &a.verdict {
        Verdict::Open => "the service has no auth policy (auth type NONE)".to_string(),
        Verdict::Decided(d) => d.to_string(),
        Verdict::Unknown(why) => format!("not known: {why}"),
        Verdict::ByVpc { .. } => "it depends on the VPC the caller sends from".to_string(),
    };
    let by_vpc: Vec<Value> = match &a.verdict {
        Verdict::ByVpc { each, .. } => (each.iter())
            .map(|(vpc, d)| json!({ "vpc": vpc, "allowed": d.allows(), "message": d.to_string() }))
            .collect(),
        _ => Vec::new(),
    };
    json!({
        "checkedAs": if a.as_kong { "kong" } else { "caller" },
        "why": why(a),
        "caller": a.caller.as_ref().map(caller_json),
        "notChecked": a.unseen.as_ref().map(caller_json),
        "policy": a.policy.map(|p| p.file.display().to_string()),
        "allowed": a.verdict.lets_in(),
        "decided": matches!(a.verdict, Verdict::Open | Verdict::Decided(_)),
        "byVpc": by_vpc,
        "message": message,
    })
}
