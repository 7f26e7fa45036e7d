//! The IAM auth policy of a Lattice service (`auth.mode: iam`): one statement per caller of
//! each app the service routes to, scoped to exactly that app's requests. The planner sizes
//! groups by these statements (a policy is at most [`POLICY_MAX_BYTES`]), and the render
//! writes them: one function makes both, so they cannot disagree.
//!
//! Scope, per app:
//! - paths: a PathPrefix `/shop` is the resources `…/shop` and `…/shop/*`, an Exact path
//!   itself, `/` everything (`…/*`). The resource names the service by a wildcard of a
//!   service id's exact length (`svc-` and 17 `?`) after the full region and account, so
//!   that no `*` can stretch over a path: `*/shop` would also let the caller reach
//!   `/admin/shop`, which is another app's;
//! - header dispatch: every path, with the dispatch header equal to the app's name (ignoring
//!   case, as the group's rule matches it).
//!
//! A policy is written in one canonical form, whatever made it (the plan's groups, or a
//! rollout step's union of two versions): each statement's keys in [`Statement`]'s order,
//! and the statements ordered by what they scope, then by text ([`in_canonical_order`]). A
//! policy whose statements are the same is then the same bytes in every step, and a diff
//! shows only the callers that changed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::input::app::{App, MatchKind};
use crate::input::auth::Caller;
use crate::input::config::Config;
use latgen_sim::iam::{PRINCIPAL_ORG, REQUEST_METHOD, SOURCE_VPC};

/// The largest auth policy, in bytes (see [`crate::input::quotas`]).
pub(crate) use crate::input::quotas::POLICY_MAX_BYTES;

/// A service id in a resource: `svc-` and 17 lowercase letters or digits (the API's
/// `ServiceId` pattern `svc-[0-9a-z]{17}`), matched one character each.
pub(crate) const ANY_SERVICE_ID: &str = "svc-?????????????????";

/// The action of every statement.
pub(crate) const INVOKE: &str = "vpc-lattice-svcs:Invoke";

/// The condition key of a request header: this, then the header's name.
pub(crate) const REQUEST_HEADER: &str = "vpc-lattice-svcs:RequestHeader/";

/// What every policy is wrapped in, before and after its statements, and what goes between
/// two statements. Compact JSON with a statement a line, so that a change to one app's
/// callers is a change of its lines in a diff.
const OPEN: &str = "{\"Version\":\"2012-10-17\",\"Statement\":[\n";
const SEP: &str = ",\n";
const CLOSE: &str = "\n]}";

/// `arn:aws:vpc-lattice:<region>:<account>:service/svc-?????????????????`: any service of the
/// project's account and Region, up to where the request path starts.
pub(crate) fn service_resource(config: &Config) -> String {
    let auth = &config.auth;
    let partition = latgen_sim::platform::partition(auth.region.as_deref().unwrap_or_default());
    format!(
        "arn:{partition}:vpc-lattice:{}:{}:service/{ANY_SERVICE_ID}",
        auth.region.as_deref().unwrap_or_default(),
        auth.account.as_deref().unwrap_or_default()
    )
}

/// The resources of app `app`'s requests, under `base` ([`service_resource`]).
fn resources(app: &App, base: &str, header: bool) -> Vec<String> {
    if header {
        return vec![format!("{base}/*")];
    }
    let paths = app.paths.iter().map(|p| (p.kind, p.value.as_str()));
    (path_resources(paths).into_iter())
        .map(|suffix| format!("{base}{suffix}"))
        .collect()
}

/// What the resources of requests to `paths` name after the service: a PathPrefix `/shop`
/// is `/shop` and `/shop/*`, an Exact path itself, `/` everything (`/*`).
pub(crate) fn path_resources<'p>(paths: impl Iterator<Item = (MatchKind, &'p str)>) -> Vec<String> {
    let mut out = Vec::new();
    for (kind, value) in paths {
        match kind {
            MatchKind::Exact => out.push(value.to_string()),
            MatchKind::Prefix => {
                let stem = value.trim_end_matches('/');
                if !stem.is_empty() {
                    out.push(stem.to_string());
                }
                out.push(format!("{stem}/*"));
            }
        }
    }
    out
}

/// A statement as latgen writes it, its keys in this order, and as a step between two
/// versions reads it back.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
struct Statement {
    effect: String,
    principal: Value,
    action: String,
    resource: Value,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    condition: BTreeMap<String, BTreeMap<String, Value>>,
}

/// A statement read from a policy, written in latgen's form (compact JSON, its keys in
/// [`Statement`]'s order); None when it is not a statement latgen writes.
pub(crate) fn canonical_statement(value: &Value) -> Option<String> {
    let s: Statement = serde_json::from_value(value.clone()).ok()?;
    serde_json::to_string(&s).ok()
}

/// Puts a policy's statements (latgen's compact JSON) in the one order every policy lists
/// them in, each once: by the requests they scope (the resources, then the dispatch header
/// under header dispatch), so that an app's callers stand together, then by text.
pub(crate) fn in_canonical_order(statements: &mut Vec<String>) {
    // By each statement's resources and dispatch header as the JSON text they are in it
    // (latgen's statements are compact JSON, so that text is the value's own), then by text.
    let mut order: Vec<usize> = (0..statements.len()).collect();
    {
        let keys: Vec<(&str, &str)> = statements.iter().map(|t| scope_of(t)).collect();
        let key = |i: usize| (keys[i], &statements[i]);
        order.sort_unstable_by(|&a, &b| key(a).cmp(&key(b)));
    }
    let mut sorted: Vec<String> = (order.into_iter())
        .map(|i| std::mem::take(&mut statements[i]))
        .collect();
    sorted.dedup();
    *statements = sorted;
}

/// What statement `text` scopes, for [`in_canonical_order`]: its `Resource` and its
/// `StringEqualsIgnoreCase` condition as JSON text, `null` where it has none. Only these
/// are read: the principals, effect and action are skipped rather than built as values.
fn scope_of<'a>(text: &'a str) -> (&'a str, &'a str) {
    use serde_json::value::RawValue;
    #[derive(Deserialize)]
    struct Scope<'a> {
        #[serde(rename = "Resource", borrow, default)]
        resource: Option<&'a RawValue>,
        #[serde(rename = "Condition", borrow, default)]
        condition: Option<Condition<'a>>,
    }
    #[derive(Deserialize)]
    struct Condition<'a> {
        #[serde(rename = "StringEqualsIgnoreCase", borrow, default)]
        header: Option<&'a RawValue>,
    }
    let Ok(scope) = serde_json::from_str::<Scope<'_>>(text) else {
        return ("null", "null");
    };
    let header = scope.condition.and_then(|c| c.header);
    let raw = |v: Option<&'a RawValue>| v.map_or("null", RawValue::get);
    (raw(scope.resource), raw(header))
}

/// One value as a string, several as an array.
fn one_or_many(values: &[String]) -> Value {
    match values {
        [one] => Value::String(one.clone()),
        _ => values.iter().cloned().map(Value::String).collect(),
    }
}

/// The callers of an app: Kong, those of every app, its own.
pub(crate) fn callers_of<'c>(app: &'c App, config: &'c Config) -> impl Iterator<Item = &'c Caller> {
    let auth = &config.auth;
    auth.kong.iter().chain(&auth.callers).chain(&app.callers)
}

/// The statements that let app `app`'s callers in, each as compact JSON. `header` is the
/// dispatch header when the app is in a group that dispatches on it.
pub(crate) fn app_statements(app: &App, config: &Config, header: Option<&str>) -> Vec<String> {
    statements(app, config, header.map(|h| (h, app.name.as_str())))
}

/// The statements that let app `app`'s callers in, where a group dispatches on header
/// `header.0` set to `header.1` (the app's name, or a preview's `<name>.<app>`).
pub(crate) fn statements(app: &App, config: &Config, header: Option<(&str, &str)>) -> Vec<String> {
    let base = service_resource(config);
    let resource = one_or_many(&resources(app, &base, header.is_some()));
    callers_of(app, config)
        .map(|c| {
            let mut equals = BTreeMap::new();
            for (key, values) in [
                (PRINCIPAL_ORG, &c.orgs),
                (REQUEST_METHOD, &c.methods),
                (SOURCE_VPC, &c.vpcs),
            ] {
                if !values.is_empty() {
                    equals.insert(key.to_string(), one_or_many(values));
                }
            }
            let mut condition = BTreeMap::new();
            if !equals.is_empty() {
                condition.insert("StringEquals".to_string(), equals);
            }
            if let Some((h, value)) = header {
                let key = format!("{REQUEST_HEADER}{h}");
                condition.insert(
                    "StringEqualsIgnoreCase".to_string(),
                    BTreeMap::from([(key, Value::String(value.to_string()))]),
                );
            }
            let principal = if c.principals.is_empty() {
                Value::String("*".into())
            } else {
                serde_json::json!({ "AWS": one_or_many(&c.principals) })
            };
            let s = Statement {
                effect: "Allow".to_string(),
                principal,
                action: INVOKE.to_string(),
                resource: resource.clone(),
                condition,
            };
            serde_json::to_string(&s).expect("a statement serializes")
        })
        .collect()
}

/// The bytes statements add to a policy, with what goes between them.
pub(crate) fn statements_bytes(statements: &[String]) -> usize {
    statements.iter().map(|s| s.len() + SEP.len()).sum()
}

/// The bytes app `app`'s statements add to a policy.
pub(crate) fn app_bytes(app: &App, config: &Config, header: Option<&str>) -> usize {
    statements_bytes(&app_statements(app, config, header))
}

/// The size of a policy whose statements take `statement_bytes` ([`statements_bytes`]).
pub(crate) fn policy_bytes(statement_bytes: usize) -> usize {
    OPEN.len() + statement_bytes.saturating_sub(SEP.len()) + CLOSE.len()
}

/// The most bytes statements may take ([`statements_bytes`]) in one policy.
pub(crate) fn statements_budget() -> usize {
    POLICY_MAX_BYTES + SEP.len() - OPEN.len() - CLOSE.len()
}

/// The policy of statements `statements`.
pub(crate) fn policy(statements: &[String]) -> String {
    let mut out = String::with_capacity(policy_bytes(statements_bytes(statements)));
    out.push_str(OPEN);
    out.push_str(&statements.join(SEP));
    out.push_str(CLOSE);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::auth::{AuthConfig, AuthMode};

    fn config() -> Config {
        Config {
            auth: AuthConfig {
                mode: AuthMode::Iam,
                account: Some("111122223333".into()),
                region: Some("ap-northeast-2".into()),
                kong: Some(Caller {
                    vpcs: vec!["vpc-0a1b2c3d4e5f67890".into()],
                    ..Caller::default()
                }),
                ..AuthConfig::default()
            },
            ..Config::default()
        }
    }

    fn app(paths: &[(MatchKind, &str)]) -> App {
        App::sample("cart", paths)
    }

    #[test]
    fn a_prefix_is_itself_and_what_lies_under_it_an_exact_path_itself() {
        let base = service_resource(&config());
        assert_eq!(
            base,
            "arn:aws:vpc-lattice:ap-northeast-2:111122223333:service/svc-?????????????????"
        );
        let a = app(&[
            (MatchKind::Prefix, "/shop/cart"),
            (MatchKind::Exact, "/cart"),
            (MatchKind::Prefix, "/"),
        ]);
        let r = resources(&a, "B", false);
        assert_eq!(r, ["B/shop/cart", "B/shop/cart/*", "B/cart", "B/*"]);
        assert_eq!(resources(&a, "B", true), ["B/*"]);
    }

    #[test]
    fn kong_is_let_in_unsigned_from_its_vpc() {
        let s = app_statements(&app(&[(MatchKind::Prefix, "/cart")]), &config(), None);
        assert_eq!(
            s,
            [
                r#"{"Effect":"Allow","Principal":"*","Action":"vpc-lattice-svcs:Invoke","Resource":["arn:aws:vpc-lattice:ap-northeast-2:111122223333:service/svc-?????????????????/cart","arn:aws:vpc-lattice:ap-northeast-2:111122223333:service/svc-?????????????????/cart/*"],"Condition":{"StringEquals":{"vpc-lattice-svcs:SourceVpc":"vpc-0a1b2c3d4e5f67890"}}}"#
            ]
        );
        let p = policy(&s);
        assert_eq!(
            p.len(),
            policy_bytes(app_bytes(
                &app(&[(MatchKind::Prefix, "/cart")]),
                &config(),
                None
            ))
        );
        let v: Value = serde_json::from_str(&p).unwrap();
        assert_eq!(v["Version"], "2012-10-17");
    }

    #[test]
    fn a_policy_lists_its_statements_in_one_order_whatever_made_it() {
        let mut config = config();
        config.auth.callers = vec![Caller {
            orgs: vec!["o-a1b2c3d4e5".into()],
            ..Caller::default()
        }];
        let cart = app_statements(&app(&[(MatchKind::Prefix, "/cart")]), &config, None);
        let shop = app_statements(
            &App::sample("shop", &[(MatchKind::Prefix, "/shop")]),
            &config,
            None,
        );
        let (mut one, mut other) = (cart.clone(), shop.clone());
        one.extend(shop.iter().cloned());
        other.extend(cart.iter().rev().cloned());
        other.push(shop[0].clone());
        in_canonical_order(&mut one);
        in_canonical_order(&mut other);
        assert_eq!(one, other);
        assert_eq!(one.len(), 4);
        // An app's callers stand together.
        assert!(one[..2].iter().all(|s| s.contains("/cart")), "{one:?}");
    }

    #[test]
    fn a_statement_read_back_is_written_with_its_keys_in_latgens_order() {
        let s = &app_statements(
            &app(&[(MatchKind::Exact, "/cart")]),
            &config(),
            Some("x-app"),
        )[0];
        // serde_json's own map sorts keys: Action first.
        let read: Value = serde_json::from_str(s).unwrap();
        assert!(
            serde_json::to_string(&read)
                .unwrap()
                .starts_with("{\"Action\"")
        );
        assert_eq!(canonical_statement(&read).as_ref(), Some(s));
        let unknown = serde_json::json!({"Effect": "Deny", "Sid": "x"});
        assert_eq!(canonical_statement(&unknown), None);
    }
}
