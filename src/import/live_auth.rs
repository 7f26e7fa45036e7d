//! Live IAMAuthPolicies read into the callers of the apps their routes serve. A statement
//! becomes a caller when it is one latgen would write: `Allow` of `vpc-lattice-svcs:Invoke`,
//! by principals (or anyone), limited by `StringEquals` on the organization, the source VPC
//! or the method, on the app's requests (all of its service's, for a route of one app).
//! The project's callers (`auth.kong`, `auth.callers`) are every app's and are not written
//! again; a policy that does not let one of them in is refused, since the first render
//! would. Anything else is refused with the statement, so that the first render never
//! lets in more or fewer callers than the live policy does.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::ImportedApp;
use super::read::Object;
use super::routes::Refusal;
use crate::input::auth::Caller;
use crate::input::config::Config;
use crate::plan::policies::{INVOKE, path_resources};
use latgen_sim::iam::{
    PRINCIPAL_ORG, REQUEST_METHOD, SOURCE_VPC, STATEMENT_KEYS, statement_values, strings,
};

/// A statement read: who it lets in, and the request paths its resources name after the
/// service (`None`: every request to the service).
struct Read {
    caller: Caller,
    paths: Option<BTreeSet<String>>,
}

/// A caller as a set, for comparing callers whatever the order of their values.
fn key(c: &Caller) -> [BTreeSet<&str>; 4] {
    c.fields()
        .map(|(_, values)| values.iter().map(String::as_str).collect())
}

/// What the live policies make of the imported apps.
pub(super) struct Policies<'o> {
    /// By app, the name of its route's live policy where it is not its route's.
    pub named: BTreeMap<String, String>,
    /// The policies refused, each with why.
    pub refused: Vec<(&'o Object, Refusal)>,
    /// The apps on a route whose policy is refused: imported without it, they would let in
    /// other callers than they do.
    pub unguarded: BTreeSet<String>,
}

/// Reads each policy on an imported app's route into that app's callers.
pub(super) fn read_policies<'o>(
    policies: &'o [Object],
    apps: &mut [ImportedApp],
    config: &Config,
) -> Policies<'o> {
    let mut by_route: BTreeMap<(&str, &str), Vec<usize>> = BTreeMap::new();
    for (i, app) in apps.iter().enumerate() {
        let (ns, route) = &app.lattice_route;
        by_route.entry((ns, route)).or_default().push(i);
    }
    let mut named = BTreeMap::new();
    let mut refused = Vec::new();
    let mut unguarded = BTreeSet::new();
    let mut seen = BTreeSet::new();
    let mut assigned: Vec<(usize, Vec<Caller>)> = Vec::new();
    for p in policies {
        let spec = p.spec();
        let target = &spec["targetRef"];
        // A policy on the Gateway is the service network's, not an app's.
        if target["kind"].as_str() != Some("HTTPRoute") {
            continue;
        }
        let ns = (target["namespace"].as_str())
            .or(p.namespace.as_deref())
            .unwrap_or_default();
        let route = target["name"].as_str().unwrap_or_default();
        let members = by_route.get(&(ns, route)).map_or(&[][..], Vec::as_slice);
        let outcome = match members {
            [] => Err(no_app(ns, route)),
            _ if !seen.insert((ns.to_string(), route.to_string())) => Err(second(ns, route)),
            _ => callers_of(p, members, apps, config),
        };
        match outcome {
            Ok(callers) => {
                if let [one] = members
                    && p.name != *route
                {
                    named.insert(apps[*one].name.clone(), p.name.clone());
                }
                assigned.extend(callers);
            }
            Err(r) => {
                unguarded.extend(members.iter().map(|&i| apps[i].name.clone()));
                refused.push((p, r));
            }
        }
    }
    for (i, callers) in assigned {
        apps[i].callers = callers;
    }
    Policies {
        named,
        refused,
        unguarded,
    }
}

fn no_app(ns: &str, route: &str) -> Refusal {
    (
        format!("it targets route {ns}/{route}, which is no imported app's"),
        "import the app whose route it guards with it, or leave the policy out".into(),
    )
}

fn second(ns: &str, route: &str) -> Refusal {
    (
        format!("a second auth policy on route {ns}/{route}: a Lattice service has one"),
        "delete the one the controller does not apply (its status says Conflicted), then import"
            .into(),
    )
}

/// The callers policy `p` lets into each of `members` (apps on its route), beyond the
/// project's.
fn callers_of(
    p: &Object,
    members: &[usize],
    apps: &[ImportedApp],
    config: &Config,
) -> Result<Vec<(usize, Vec<Caller>)>, Refusal> {
    if !config.auth.is_on() {
        return Err((
            "a live auth policy, but latgen.yaml's auth.mode is not iam: the render would write none, and the service would be open to every caller once this one is pruned".into(),
            "set auth.mode: iam in latgen.yaml (with account, region and kong), then import".into(),
        ));
    }
    let statements = statements(p)?;
    let mut out: Vec<(usize, Vec<Caller>)> = members.iter().map(|&i| (i, Vec::new())).collect();
    for (n, s) in statements.iter().enumerate() {
        let read = statement(s, config).map_err(|why| unexpressed(n, s, &why))?;
        let whose: Vec<usize> = (0..members.len())
            .filter(|&m| covers(&read, &apps[members[m]], members.len()))
            .collect();
        let &[m] = &whose[..] else {
            let why = "its resources are not the requests of one app of the route (all of a route's requests for a route of one app, an app's own paths in a group)";
            return Err(unexpressed(n, s, why));
        };
        out[m].1.push(read.caller);
    }
    let shared: Vec<&Caller> = config
        .auth
        .kong
        .iter()
        .chain(&config.auth.callers)
        .collect();
    for (i, callers) in &mut out {
        for c in &shared {
            if !callers.iter().any(|x| key(x) == key(c)) {
                return Err(lacks(&apps[*i].name, c));
            }
        }
        callers.retain(|x| !shared.iter().any(|c| key(c) == key(x)));
        let mut seen = BTreeSet::new();
        callers.retain(|c| seen.insert(format!("{:?}", key(c))));
    }
    Ok(out)
}

fn lacks(app: &str, c: &Caller) -> Refusal {
    (
        format!(
            "it does not let in {}, which latgen.yaml's auth lets call every app: the first render would let it call `{app}`",
            shown(c)
        ),
        "make auth.kong and auth.callers in latgen.yaml the callers every live policy lets in, then import".into(),
    )
}

/// A caller as latgen.yaml writes it, on one line.
fn shown(c: &Caller) -> String {
    let mut parts = Vec::new();
    for (field, values) in c.fields() {
        if !values.is_empty() {
            parts.push(format!("{field}: [{}]", values.join(", ")));
        }
    }
    format!("{{{}}}", parts.join(", "))
}

fn unexpressed(n: usize, s: &Value, why: &str) -> Refusal {
    (
        format!("statement {} of its policy, `{s}`, {why}", n + 1),
        "latgen writes Allow statements of vpc-lattice-svcs:Invoke for principals, organizations, VPCs and methods: change the live policy to that form (or leave the route out of the import)".into(),
    )
}

/// The policy's statements, as JSON values.
fn statements(p: &Object) -> Result<Vec<Value>, Refusal> {
    let spec = p.spec();
    let text = spec["policy"].as_str().unwrap_or_default();
    statement_values(text).map_err(|e| (e, "export the policy as the cluster has it".into()))
}

/// A statement as a caller and the paths it names; why not, when latgen cannot write it.
fn statement(s: &Value, config: &Config) -> Result<Read, String> {
    let Some(fields) = s.as_object() else {
        return Err("is not an object".into());
    };
    if let Some(k) = (fields.keys()).find(|k| !STATEMENT_KEYS.contains(&k.as_str())) {
        return Err(format!("has `{k}`"));
    }
    if s["Effect"].as_str() != Some("Allow") {
        return Err("is not an Allow".into());
    }
    let actions = strings(&s["Action"], "its Action")?;
    let invoke = |a: &String| {
        ["*", "vpc-lattice-svcs:*", INVOKE]
            .iter()
            .any(|x| a.eq_ignore_ascii_case(x))
    };
    if !actions.iter().all(invoke) {
        return Err("allows another action than vpc-lattice-svcs:Invoke".into());
    }
    let mut caller = Caller {
        principals: principals(&s["Principal"])?,
        ..Caller::default()
    };
    conditions(&s["Condition"], &mut caller)?;
    if let Some((problem, _)) =
        crate::validate::principals::caller_problems(&caller, config.auth.region.as_deref()).first()
    {
        return Err(format!(
            "lets in a caller latgen cannot declare ({problem})"
        ));
    }
    let resources = strings(&s["Resource"], "its Resource")?;
    Ok(Read {
        caller,
        paths: paths(&resources, config)?,
    })
}

fn principals(p: &Value) -> Result<Vec<String>, String> {
    if p.as_str() == Some("*") {
        return Ok(Vec::new());
    }
    let aws = p.as_object().filter(|o| o.len() == 1).map(|o| &o["AWS"]);
    let values = aws
        .and_then(|v| strings(v, "").ok())
        .ok_or("names principals other than AWS ones")?;
    if values.iter().any(|v| v.contains('*')) {
        return Err("names principals by a wildcard".into());
    }
    Ok(values)
}

fn conditions(c: &Value, caller: &mut Caller) -> Result<(), String> {
    let Some(ops) = c.as_object() else {
        return if c.is_null() {
            Ok(())
        } else {
            Err("has a Condition latgen cannot read".into())
        };
    };
    for (op, keys) in ops {
        if op != "StringEquals" {
            return Err(format!("has a `{op}` condition"));
        }
        for (k, v) in keys.as_object().into_iter().flatten() {
            let values = strings(v, &format!("its condition on `{k}`"))?;
            let field = match k.to_ascii_lowercase() {
                x if x == PRINCIPAL_ORG.to_ascii_lowercase() => &mut caller.orgs,
                x if x == SOURCE_VPC.to_ascii_lowercase() => &mut caller.vpcs,
                x if x == REQUEST_METHOD.to_ascii_lowercase() => &mut caller.methods,
                _ => return Err(format!("has a condition on `{k}`")),
            };
            field.extend(values);
        }
    }
    Ok(())
}

/// The paths a statement's resources name after the service, or None when they name every
/// request of the service. Resources must be in the project's account and Region.
fn paths(resources: &[String], config: &Config) -> Result<Option<BTreeSet<String>>, String> {
    let (region, account) = (
        config.auth.region.as_deref().unwrap_or_default(),
        config.auth.account.as_deref().unwrap_or_default(),
    );
    let mut out = BTreeSet::new();
    for r in resources {
        if r == "*" {
            return Ok(None);
        }
        let Some((head, rest)) = r.split_once(":service/") else {
            return Err(format!("has resource `{r}`, not a Lattice service's"));
        };
        let parts: Vec<&str> = head.split(':').collect();
        if parts.len() != 5
            || parts[2] != "vpc-lattice"
            || parts[3] != region
            || parts[4] != account
        {
            return Err(format!(
                "has resource `{r}`, not of auth.account and auth.region"
            ));
        }
        if rest == "*" || rest.strip_suffix("/*").is_some_and(|id| !id.contains('/')) {
            return Ok(None);
        }
        let Some(i) = rest.find('/') else {
            return Err(format!("has resource `{r}`, the service without a path"));
        };
        out.insert(rest[i..].to_string());
    }
    Ok(Some(out))
}

/// Whether a statement read scopes app `app`'s requests: all of the service's on a route
/// of one app, or exactly the app's paths.
fn covers(read: &Read, app: &ImportedApp, apps_on_route: usize) -> bool {
    match &read.paths {
        None => apps_on_route == 1,
        Some(paths) => {
            let own = path_resources(app.paths.iter().map(|(k, v)| (*k, v.as_str())));
            *paths == own.into_iter().collect::<BTreeSet<_>>()
        }
    }
}
