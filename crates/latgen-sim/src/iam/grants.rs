//! What each allowing statement of a policy grants, as a reviewer reads it: who (the
//! principals and the conditions on the caller) may call what (the request paths, and the
//! header a dispatched request carries). The PR comment compares these before and after a
//! change to say who gained or lost access to which app.

use super::{AuthPolicy, Caller, Op, PRINCIPAL_ORG, Principals, REQUEST_METHOD, SOURCE_VPC};

/// The condition key prefix of a request header.
const REQUEST_HEADER: &str = "vpc-lattice-svcs:requestheader/";

/// One allowing statement, read for people.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Grant {
    /// Who: `arn:aws:iam::111122223333:role/checkout`, `any principal of o-abc`,
    /// `unsigned or any principal from vpc-…`, with ` (GET)` when methods are limited.
    pub who: String,
    /// The request paths the statement's resources name (`/cart`, `/cart/*`, `/*`), after
    /// the service part of the ARN.
    pub paths: Vec<String>,
    /// A request header the statement requires, lower-cased name and value (header
    /// dispatch: the app's name in the dispatch header).
    pub header: Option<(String, String)>,
}

impl AuthPolicy {
    /// Every allowing statement's grant, in statement order; none for an unreadable policy.
    pub fn grants(&self) -> Vec<Grant> {
        let Ok(statements) = self.statements() else {
            return Vec::new();
        };
        (statements.iter().filter(|s| s.allow))
            .map(|s| {
                let values = |key: &str| -> Vec<String> {
                    (s.conditions.iter())
                        .filter(|c| c.key.eq_ignore_ascii_case(key) && is_positive(c.op))
                        .flat_map(|c| c.values.clone())
                        .collect()
                };
                let header = (s.conditions.iter()).find_map(|c| {
                    let name = c.key.to_ascii_lowercase();
                    let name = name.strip_prefix(REQUEST_HEADER)?.to_string();
                    Some((name, c.values.first()?.to_ascii_lowercase()))
                });
                let principals = match &s.principal {
                    Principals::Anyone => Vec::new(),
                    Principals::Aws(p) => p.clone(),
                };
                let who = who(
                    &principals,
                    &values(PRINCIPAL_ORG),
                    &values(SOURCE_VPC),
                    &values(REQUEST_METHOD),
                );
                let paths = (s.resources.iter())
                    .map(|r| match r.split_once(":service/") {
                        Some((_, rest)) => rest.find('/').map_or("/*", |i| &rest[i..]),
                        None => r.as_str(),
                    })
                    .map(str::to_string)
                    .collect();
                Grant { who, paths, header }
            })
            .collect()
    }
}

fn is_positive(op: Op) -> bool {
    matches!(op, Op::Equals | Op::EqualsIgnoreCase | Op::Like)
}

/// The caller a statement names, in one phrase.
fn who(principals: &[String], orgs: &[String], vpcs: &[String], methods: &[String]) -> String {
    let anyone = principals.is_empty() && orgs.is_empty();
    let mut out = match principals {
        [] if anyone => "any caller, signed or not".to_string(),
        [] => "any principal".to_string(),
        named => named.join(" or "),
    };
    if !orgs.is_empty() {
        out.push_str(&format!(" of {}", orgs.join(" or ")));
    }
    if !vpcs.is_empty() {
        // After "signed or not" a comma keeps the VPC from reading as part of it.
        let sep = if anyone { ", from" } else { " from" };
        out.push_str(&format!("{sep} {}", vpcs.join(" or ")));
    }
    if !methods.is_empty() {
        out.push_str(&format!(" ({})", methods.join(", ")));
    }
    out
}

impl Caller {
    /// Its fields by their names in a declaration, in the order a declaration lists them.
    pub fn fields(&self) -> [(&'static str, &[String]); 4] {
        [
            ("principals", &self.principals),
            ("orgs", &self.orgs),
            ("vpcs", &self.vpcs),
            ("methods", &self.methods),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(text: &str) -> AuthPolicy {
        AuthPolicy::read("p".into(), "ns".into(), "r".into(), text)
    }

    #[test]
    fn a_role_on_an_apps_paths_is_read_as_that_role_on_those_paths() {
        let p = policy(
            r#"{"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:role/checkout"},"Action":"vpc-lattice-svcs:Invoke","Resource":["arn:aws:vpc-lattice:ap-northeast-2:111122223333:service/svc-?????????????????/cart","arn:aws:vpc-lattice:ap-northeast-2:111122223333:service/svc-?????????????????/cart/*"]}]}"#,
        );
        assert_eq!(
            p.grants(),
            vec![Grant {
                who: "arn:aws:iam::111122223333:role/checkout".into(),
                paths: vec!["/cart".into(), "/cart/*".into()],
                header: None,
            }]
        );
    }

    #[test]
    fn an_unsigned_caller_from_a_vpc_with_a_dispatch_header_is_read_with_both() {
        let p = policy(
            r#"{"Statement":[{"Effect":"Allow","Principal":"*","Action":"vpc-lattice-svcs:Invoke","Resource":"arn:aws:vpc-lattice:us-east-1:111122223333:service/svc-?????????????????/*","Condition":{"StringEquals":{"vpc-lattice-svcs:SourceVpc":"vpc-0a1b2c3d4e5f67890","vpc-lattice-svcs:RequestMethod":"GET"},"StringEqualsIgnoreCase":{"vpc-lattice-svcs:RequestHeader/x-app":"Cart"}}}]}"#,
        );
        let g = &p.grants()[0];
        assert_eq!(
            g.who,
            "any caller, signed or not, from vpc-0a1b2c3d4e5f67890 (GET)"
        );
        assert_eq!(g.paths, vec!["/*".to_string()]);
        assert_eq!(g.header, Some(("x-app".into(), "cart".into())));
    }

    #[test]
    fn a_deny_statement_grants_nothing() {
        let p = policy(
            r#"{"Statement":[{"Effect":"Deny","Principal":"*","Action":"vpc-lattice-svcs:Invoke","Resource":"*"}]}"#,
        );
        assert!(p.grants().is_empty());
    }
}
