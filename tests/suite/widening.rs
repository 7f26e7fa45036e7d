//! The auth check against widened policies: one random statement (a principal, VPCs,
//! organizations, methods, headers and a resource, under IAM's string operators) added to
//! one rendered auth policy, as a custom template or a hand edit would. Whenever the policy
//! then lets in a request that the declarations do not, `check` reports `auth-mismatch` on
//! that policy; when it lets in nothing more, `check` reports nothing; and the other
//! policies, as the built-in template renders them, are never reported. The requests
//! asked here are every combination of a fixed set of principals, organizations, VPCs and
//! methods (those the declarations and the statements name, and strangers) with every path
//! and header the route and the statement name.

use std::collections::BTreeSet;
use std::path::PathBuf;

use latgen::input::app::{App, MatchKind};
use latgen::input::config::Config;
use latgen_sim::iam::{AuthPolicy, Call, Identity, request_resource};
use latgen_sim::platform::segment_prefix_matches;
use latgen_sim::routing::{Headers, LatticeRoute};
use proptest::prelude::*;

use super::project;
use super::properties::{Spec, auth_config, caller, own_backend_apps, spec};

/// Any service of the project's account and Region, as the built-in template names it.
const SERVICE: &str =
    "arn:aws:vpc-lattice:ap-northeast-2:111122223333:service/svc-?????????????????";

const ROLE: &str = "arn:aws:iam::111122223333:role/team-0/a-service-role-with-a-long-name";

/// The principals a widening statement names: anyone, a declared role, an account, a role
/// nobody declares, another account's root.
const PRINCIPALS: &[&str] = &[
    r#""*""#,
    r#"{"AWS":"*"}"#,
    r#"{"AWS":"arn:aws:iam::111122223333:role/team-0/a-service-role-with-a-long-name"}"#,
    r#"{"AWS":"222233334444"}"#,
    r#"{"AWS":"arn:aws:iam::999988887777:role/intruder"}"#,
    r#"{"AWS":"arn:aws:iam::111122223333:root"}"#,
];

/// The resources: paths of the generator's apps and others, wildcards, another account's.
const RESOURCES: &[&str] = &[
    "/admin/*",
    "/*",
    "/shop*",
    "/shop/*",
    "/shop",
    "/api",
    "/a/*",
    "*",
    "*/admin/*",
    "arn:aws:vpc-lattice:ap-northeast-2:999988887777:service/*",
];

/// Condition keys and the values a statement may give them.
const CONDITIONS: &[(&str, &[&str])] = &[
    (
        "vpc-lattice-svcs:SourceVpc",
        &[
            "vpc-0123456789abcdef0",
            "vpc-0a1b2c3d4e5f67890",
            "vpc-0badbadbadbadbad0",
            "vpc-*",
        ],
    ),
    (
        "aws:PrincipalOrgID",
        &["o-a1b2c3d4e5", "o-*", "o-zzzzzzzzzz"],
    ),
    (
        "vpc-lattice-svcs:RequestMethod",
        &["GET", "POST", "PATCH", "*"],
    ),
    ("vpc-lattice-svcs:RequestHeader/x-backdoor", &["open"]),
    (
        "vpc-lattice-svcs:RequestHeader/x-latgen-app",
        &["app-000", "app-001", "*"],
    ),
    ("aws:PrincipalAccount", &["111122223333", "222233334444"]),
];

const OPERATORS: &[&str] = &[
    "StringEquals",
    "StringLike",
    "StringNotEquals",
    "StringEqualsIgnoreCase",
];

/// A statement that allows, as JSON.
fn statement() -> impl Strategy<Value = String> {
    let condition = (0..OPERATORS.len(), 0..CONDITIONS.len(), 0usize..4);
    (
        prop::sample::select(PRINCIPALS),
        prop::sample::select(RESOURCES),
        prop::collection::vec(condition, 0..3),
    )
        .prop_map(|(principal, resource, conditions)| {
            let resource = match resource.starts_with('/') {
                true => format!("{SERVICE}{resource}"),
                false => resource.to_string(),
            };
            let mut by_op = serde_json::Map::new();
            for (op, key, value) in conditions {
                let (key, values) = CONDITIONS[key];
                let entry = by_op.entry(OPERATORS[op]).or_insert_with(|| serde_json::json!({}));
                entry[key] = values[value % values.len()].into();
            }
            let mut s = format!(
                r#"{{"Effect":"Allow","Principal":{principal},"Action":"vpc-lattice-svcs:Invoke","Resource":"{resource}""#
            );
            if !by_op.is_empty() {
                s += &format!(r#","Condition":{}"#, serde_json::Value::Object(by_op));
            }
            s + "}"
        })
}

/// The identities asked: no principal or one of each kind the declarations and the
/// statements name, with a stranger of each; each organization, VPC and method, and none.
fn identities() -> Vec<Identity> {
    let principals: &[(&str, &str)] = &[
        (ROLE, "111122223333"),
        (
            "arn:aws:iam::111122223333:role/team-1/a-service-role-with-a-long-name",
            "111122223333",
        ),
        ("arn:aws:iam::111122223333:role/other", "111122223333"),
        ("arn:aws:iam::222233334444:role/x", "222233334444"),
        ("arn:aws:iam::999988887777:role/intruder", "999988887777"),
        ("arn:aws:iam::000000000000:role/x", "000000000000"),
    ];
    let signed = principals
        .iter()
        .map(|(p, a)| (Some(p.to_string()), Some(a.to_string())));
    let orgs = [
        None,
        Some("o-a1b2c3d4e5"),
        Some("o-zzzzzzzzzz"),
        Some("o-0000000000"),
    ];
    let vpcs = [
        "vpc-0123456789abcdef0",
        "vpc-0fedcba987654321f",
        "vpc-0a1b2c3d4e5f67890",
        "vpc-0badbadbadbadbad0",
    ];
    let mut out = Vec::new();
    for (principal, account) in std::iter::once((None, None)).chain(signed) {
        for org in orgs.iter().filter(|o| principal.is_some() || o.is_none()) {
            for vpc in vpcs {
                for method in ["GET", "POST", "PATCH", "DELETE"] {
                    out.push(Identity {
                        principal: principal.clone(),
                        account: account.clone(),
                        org: org.map(String::from),
                        vpc: vpc.into(),
                        method: method.into(),
                    });
                }
            }
        }
    }
    out
}

/// The requests asked of a route: each match's path, one under it, one sharing its string,
/// and the statements' paths; with no header, each dispatch value the route and the
/// statements name, a forged one, and the backdoor header.
fn requests(route: &LatticeRoute) -> Vec<(String, Headers)> {
    let mut paths: BTreeSet<String> = [
        "/", "/x", "/admin/", "/admin/x", "/shop", "/shopx", "/shop/x", "/api", "/apix", "/a/x",
    ]
    .iter()
    .map(|p| p.to_string())
    .collect();
    let mut dispatch: BTreeSet<Option<String>> = [
        None,
        Some("nobody".into()),
        Some("app-000".into()),
        Some("app-001".into()),
        Some("*".into()),
    ]
    .into();
    for m in route.rules.iter().flat_map(|r| &r.matches) {
        let stem = m.path.trim_end_matches('/');
        paths.extend([m.path.clone(), format!("{stem}/x"), format!("{stem}x")]);
        dispatch.extend(m.headers.iter().map(|(_, v)| v.clone()));
    }
    let mut out = Vec::new();
    for path in &paths {
        for value in &dispatch {
            for backdoor in [false, true] {
                let mut h = Headers::new();
                if let Some(v) = value {
                    h.insert("x-latgen-app".into(), v.clone());
                }
                if backdoor {
                    h.insert("x-backdoor".into(), "open".into());
                }
                out.push((path.clone(), h));
            }
        }
    }
    out
}

/// Whether the declarations let `who` send `path` with `headers` through `route`: the rule
/// that takes it is of an app whose own paths hold it (or whose dispatch header it carries),
/// and a caller of that app names `who`.
fn declared(
    route: &LatticeRoute,
    apps: &[App],
    config: &Config,
    (who, path, headers): (&Identity, &str, &Headers),
) -> bool {
    let Some((rule, m)) = route.rules.iter().find_map(|r| {
        Some((
            r,
            r.matches.iter().find(|m| m.lattice_match(path, headers))?,
        ))
    }) else {
        return false;
    };
    let Some(b) = &rule.backend else { return false };
    let owners: Vec<&App> = apps.iter().filter(|a| a.is_backend(b)).collect();
    let Some(app) = owners
        .iter()
        .copied()
        .find(|a| rule.matches.iter().any(|m| a.writes(m)))
        .or(owners.first().copied())
    else {
        return false;
    };
    let owned = !m.headers.is_empty()
        || app.paths.iter().any(|p| match p.kind {
            MatchKind::Exact => p.value == path,
            MatchKind::Prefix => segment_prefix_matches(&p.value, path),
        });
    owned
        && project::auth::declared(app, config)
            .iter()
            .any(|c| who.declared_by(c))
}

/// The first request `policy` lets in through `route` that the declarations do not.
fn hole(
    route: &LatticeRoute,
    policy: &AuthPolicy,
    apps: &[App],
    config: &Config,
) -> Option<String> {
    let ids = identities();
    for (path, headers) in requests(route) {
        let resource = request_resource("ap-northeast-2", "111122223333", &path);
        for who in &ids {
            let call = Call {
                who,
                resource: &resource,
                headers: &headers,
            };
            if policy.decide(&call).allows()
                && !declared(route, apps, config, (who, &path, &headers))
            {
                return Some(format!("{} to {path} {headers:?}", who.show()));
            }
        }
    }
    None
}

fn widened_policy_is_reported(
    specs: &[Spec],
    callers: Vec<Vec<latgen::input::auth::Caller>>,
    header: bool,
    extra: &str,
    pick: usize,
) -> Result<(), TestCaseError> {
    let mut apps = own_backend_apps(specs);
    for (app, c) in apps.iter_mut().zip(callers) {
        app.callers = c;
    }
    let config = auth_config(header);
    let (_, mut files) = project::plan_and_render(&apps, &config);
    let policies: Vec<PathBuf> = (files.keys())
        .filter(|p| p.to_string_lossy().contains("iamauthpolicy-"))
        .cloned()
        .collect();
    let file = policies[pick % policies.len()].clone();
    let text = &files[&file];
    let widened = text.replacen("\n    ]}", &format!(",\n    {extra}\n    ]}}"), 1);
    prop_assert_ne!(&widened, text);
    files.insert(file.clone(), widened);
    let net = project::network(&files);
    let found = latgen::check::access::auth_findings(&net, (&apps, &config), &BTreeSet::new());
    let (on_file, elsewhere): (Vec<_>, Vec<_>) =
        (found.iter()).partition(|d| d.span.as_ref().is_some_and(|s| s.file == file));
    // A statement can also push the policy over the 10,000 bytes Lattice takes: another
    // finding, about its size.
    let on_file: Vec<_> = (on_file.into_iter())
        .filter(|d| d.code == latgen::diag::codes::Code::AuthMismatch)
        .collect();
    prop_assert!(
        elsewhere.is_empty(),
        "a policy as rendered is reported: {elsewhere:?}"
    );
    let route = (net.lattice.iter())
        .find(|r| net.auth_policy(r).is_some_and(|p| p.file == file))
        .unwrap();
    match hole(route, net.auth_policy(route).unwrap(), &apps, &config) {
        Some(h) => prop_assert!(!on_file.is_empty(), "not reported: {h} is let in"),
        None => prop_assert!(
            on_file.is_empty(),
            "reported, though nothing more is let in: {on_file:?}"
        ),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// For random apps and callers in both dispatch modes, one random statement added to
    /// one rendered policy is reported exactly when it lets in a request the declarations
    /// do not.
    #[test]
    fn a_statement_that_lets_in_more_than_the_declarations_is_reported(
        specs in prop::collection::vec(spec(), 1..16),
        callers in prop::collection::vec(prop::collection::vec(caller(), 0..3), 16),
        header in any::<bool>(),
        extra in statement(),
        pick in any::<usize>(),
    ) {
        widened_policy_is_reported(&specs, callers, header, &extra, pick)?;
    }
}

/// The findings of the auth check on the check fixture `auth-mismatch`'s project rendered
/// with the built-in templates, with `statement` added to the policy of group 1 (apps
/// `cart` on `/cart`, declaring a checkout role from one VPC, and `shop` on `/shop`).
fn with_statement(statement: &str) -> Vec<String> {
    let dir = super::common::root().join("tests/check/auth-mismatch");
    let built = project::built(&dir);
    let mut files = built.output.files.clone();
    let file = PathBuf::from("lattice/iamauthpolicy-group-01.yaml");
    let text = files[&file].clone();
    let widened = text.replacen("\n    ]}", &format!(",\n    {statement}\n    ]}}"), 1);
    assert_ne!(widened, &*text);
    files.insert(file, widened.into());
    let net = project::network(&files);
    let (apps, config) = (&built.prepared.apps, &built.prepared.config);
    latgen::check::access::auth_findings(&net, (apps, config), &BTreeSet::new())
        .iter()
        .map(|d| format!("{}: {}", d.code.as_str(), d.message))
        .collect()
}

/// A statement that allows with `principal`, on the resource `path` of any service of the
/// project, under `condition` (JSON, or empty).
fn allow(principal: &str, path: &str, condition: &str) -> String {
    let condition = match condition {
        "" => String::new(),
        c => format!(r#","Condition":{c}"#),
    };
    format!(
        r#"{{"Effect":"Allow","Principal":{principal},"Action":"vpc-lattice-svcs:Invoke","Resource":"{SERVICE}{path}"{condition}}}"#
    )
}

const CHECKOUT: &str = r#"{"AWS":"arn:aws:iam::111122223333:role/checkout"}"#;
const CHECKOUT_VPC: &str =
    r#"{"StringEquals":{"vpc-lattice-svcs:SourceVpc":"vpc-0f1e2d3c4b5a69788"}}"#;

#[test]
fn a_statement_for_admin_from_another_vpc_is_reported() {
    let vpc = r#"{"StringEquals":{"vpc-lattice-svcs:SourceVpc":"vpc-0badbadbadbadbad0"}}"#;
    let found = with_statement(&allow(r#""*""#, "/admin/*", vpc));
    assert_eq!(
        found,
        [
            "auth-mismatch: statement 4 of the auth policy of `lattice-groups/group-01` lets an unsigned caller from vpc-0badbadbadbadbad0 (GET) send /admin/, which no rule of the route takes and no declaration asks for"
        ]
    );
}

#[test]
fn a_statement_for_another_method_is_reported() {
    let patch = r#"{"StringEquals":{"vpc-lattice-svcs:SourceVpc":"vpc-0f1e2d3c4b5a69788","vpc-lattice-svcs:RequestMethod":"PATCH"}}"#;
    // The checkout role declares no method: PATCH from its VPC is its own. Kong's VPC
    // with PATCH for an unsigned caller is not.
    assert!(with_statement(&allow(CHECKOUT, "/cart/*", patch)).is_empty());
    let kong_patch = r#"{"StringEquals":{"vpc-lattice-svcs:RequestMethod":"PATCH"}}"#;
    let found = with_statement(&allow(r#""*""#, "/cart/*", kong_patch));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("an unsigned caller from vpc-00000000000000000 (PATCH) call app `cart`"),
        "{found:?}"
    );
}

#[test]
fn a_statement_for_a_backdoor_header_is_reported() {
    let header = r#"{"StringEquals":{"vpc-lattice-svcs:RequestHeader/x-backdoor":"open"}}"#;
    let found = with_statement(&allow(r#""*""#, "/*", header));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("with `x-backdoor: open`"), "{found:?}");
}

#[test]
fn a_statement_for_another_account_is_reported() {
    let found = with_statement(&allow(r#"{"AWS":"444455556666"}"#, "/cart", CHECKOUT_VPC));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("arn:aws:iam::444455556666:role/latgen-probe"),
        "{found:?}"
    );
    // The declared role, from its declared VPC, is no widening.
    assert!(with_statement(&allow(CHECKOUT, "/cart", CHECKOUT_VPC)).is_empty());
}

#[test]
fn a_statement_for_any_organization_is_reported() {
    let orgs = r#"{"StringLike":{"aws:PrincipalOrgID":"o-*"}}"#;
    let found = with_statement(&allow(r#""*""#, "/shop/*", orgs));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("call app `shop`"), "{found:?}");
}
