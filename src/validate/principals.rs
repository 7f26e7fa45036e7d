//! The values of `callers:` and of latgen.yaml's `auth:` section: each lands in an IAM auth
//! policy, where a malformed principal makes the controller's PutAuthPolicy fail and a
//! malformed condition value silently matches nothing.

use std::path::Path;

use serde_saphyr::Spanned;

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::app::{PathMatch, Pos};
use crate::input::auth::Caller;
use crate::input::config::Config;
use latgen_sim::platform::{self, partition};

/// The HTTP methods `vpc-lattice-svcs:RequestMethod` takes.
const METHODS: &[&str] = &[
    "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE",
];

fn is_account(s: &str) -> bool {
    s.len() == 12 && s.bytes().all(|b| b.is_ascii_digit())
}

/// The partitions an ARN may name, as [`partition`] gives them.
const PARTITIONS: &[&str] = &[
    "aws",
    "aws-cn",
    "aws-us-gov",
    "aws-iso",
    "aws-iso-b",
    "aws-iso-e",
    "aws-iso-f",
    "aws-eusc",
];

/// A character of an IAM role's or user's name: the IAM API reference's pattern
/// `[\w+=,.@-]+` of `RoleName` (CreateRole) and `UserName` (CreateUser).
fn iam_name_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_+=,.@-".contains(&b)
}

/// The problem of the `<path>/<name>` of a role or user ARN (`role/team/reports` gives
/// `team/reports`). IAM's rules (API reference, CreateRole and CreateUser): a name of 1 to 64
/// characters of [`iam_name_char`]; a path of at most 512 characters that starts and ends
/// with `/`. IAM's path pattern takes any printable character between the slashes; latgen
/// takes a name's characters only, and refuses an empty, `.` or `..` folder and a name
/// without a letter or digit (`role//`, `role/../x`, `user/@`), which are typing slips, not
/// roles anyone made.
fn iam_name_problem(rest: &str) -> Option<&'static str> {
    let (path, name) = rest.rsplit_once('/').unwrap_or(("", rest));
    if name.is_empty() {
        return Some("names no role or user after the last `/`");
    }
    if name.len() > 64 || !name.bytes().all(iam_name_char) {
        return Some(
            "names a role or user whose name is not 1 to 64 letters, digits and `_+=,.@-` (IAM's rule)",
        );
    }
    if !name.bytes().any(|b| b.is_ascii_alphanumeric()) {
        return Some("names a role or user whose name has no letter or digit");
    }
    if path.is_empty() {
        return None;
    }
    if path.len() + 2 > 512 {
        return Some("has an IAM path longer than 512 characters (IAM's limit)");
    }
    if path
        .split('/')
        .any(|folder| matches!(folder, "" | "." | ".."))
    {
        return Some("has an empty, `.` or `..` folder in its IAM path");
    }
    if !path.bytes().all(|b| b == b'/' || iam_name_char(b)) {
        return Some("has characters other than letters, digits and `_+=,.@-/` in its IAM path");
    }
    None
}

/// An IAM role or user ARN, an account's root ARN, or an account id.
fn principal_problem(p: &str) -> Option<&'static str> {
    if is_account(p) {
        return None;
    }
    let Some(rest) =
        (PARTITIONS.iter()).find_map(|partition| p.strip_prefix(&format!("arn:{partition}:iam::")))
    else {
        return Some(
            "is neither a 12-digit account id nor an IAM ARN (`arn:aws:iam::<account>:role/<name>`)",
        );
    };
    let (account, resource) = rest.split_once(':').unwrap_or((rest, ""));
    if !is_account(account) {
        return Some("has no 12-digit account id after `arn:aws:iam::`");
    }
    if resource == "root" {
        return None;
    }
    match resource.split_once('/') {
        Some(("role" | "user", rest)) => iam_name_problem(rest),
        _ => Some("names no role or user (`…:role/<name>`, `…:user/<name>`, or `…:root`)"),
    }
}

/// A principal ARN of another partition than Region `region`'s: IAM never lets it in.
fn partition_problem(p: &str, region: &str) -> Option<String> {
    let named = p.strip_prefix("arn:")?.split(':').next()?;
    let want = partition(region);
    (named != want).then(|| {
        format!(
            "is in partition `{named}`, but Region `{region}` is in partition `{want}`, where IAM never lets a principal of `{named}` in"
        )
    })
}

fn org_problem(o: &str) -> Option<&'static str> {
    let body = o.strip_prefix("o-").unwrap_or("");
    let ok = (10..=32).contains(&body.len())
        && body
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    (!ok)
        .then_some("is not an AWS Organizations id (`o-` and 10 to 32 lowercase letters or digits)")
}

fn vpc_problem(v: &str) -> Option<&'static str> {
    let body = v.strip_prefix("vpc-").unwrap_or("");
    let ok = matches!(body.len(), 8 | 17)
        && body.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    (!ok).then_some("is not a VPC id (`vpc-` and 8 or 17 lowercase hex digits)")
}

fn method_problem(m: &str) -> Option<&'static str> {
    (!METHODS.contains(&m)).then_some("is not an HTTP method in upper case (GET, POST, …)")
}

/// Every problem of one caller, as (message, help). `region` is `auth.region`, whose
/// partition every principal ARN must name.
pub(crate) fn caller_problems(c: &Caller, region: Option<&str>) -> Vec<(String, &'static str)> {
    let mut out = Vec::new();
    type Problem = fn(&str) -> Option<&'static str>;
    let lists: [(&str, &[String], Problem, &'static str); 4] = [
        (
            "principals",
            &c.principals,
            principal_problem,
            "give an IAM role or user ARN (`arn:aws:iam::111122223333:role/reports`) or a 12-digit account id",
        ),
        (
            "orgs",
            &c.orgs,
            org_problem,
            "give the organization's id, as `aws organizations describe-organization` prints it",
        ),
        (
            "vpcs",
            &c.vpcs,
            vpc_problem,
            "give the VPC's id, as `aws ec2 describe-vpcs` prints it",
        ),
        (
            "methods",
            &c.methods,
            method_problem,
            "use GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS, CONNECT or TRACE",
        ),
    ];
    for (field, values, problem, help) in lists {
        for v in values {
            if let Some(p) = problem(v) {
                out.push((format!("{field}: `{}` {p}", v.escape_debug()), help));
            }
        }
    }
    let region = region.filter(|r| is_region(r));
    for p in c
        .principals
        .iter()
        .filter(|p| principal_problem(p).is_none())
    {
        if let Some(why) = region.and_then(|r| partition_problem(p, r)) {
            out.push((
                format!("principals: `{}` {why}", p.escape_debug()),
                "give the principal's ARN in the partition of auth.region (`arn:aws:iam::…` outside China and GovCloud), or its 12-digit account id",
            ));
        }
    }
    if c.principals.is_empty() && c.orgs.is_empty() && c.vpcs.is_empty() {
        out.push((
            "a caller with none of `principals`, `orgs` and `vpcs` would let anyone in".into(),
            "say who: the VPC the calls come from (`vpcs`), or the IAM principals that sign them (`principals`)",
        ));
    }
    out
}

/// An app's `callers:`, validated.
pub(super) fn validate_callers(
    file: &Path,
    callers: Option<&Vec<Spanned<Caller>>>,
    config: &Config,
    diags: &mut Diagnostics,
) -> Vec<Caller> {
    let mut out = Vec::new();
    for c in callers.into_iter().flatten() {
        let problems = caller_problems(&c.value, config.auth.region.as_deref());
        for (message, help) in &problems {
            diags.push(
                Diagnostic::error(Code::InvalidCaller, format!("caller {message}"))
                    .at(Span::new(file, Pos::of(c).line, Pos::of(c).column))
                    .help(*help),
            );
        }
        if problems.is_empty() {
            out.push(c.value.clone());
        }
    }
    out
}

/// A path an auth policy cannot name: `*` and `?` are wildcards in a policy's resource,
/// and a percent-encoded byte that Kong decodes makes the path Kong matches differ from the
/// one the policy's resource names.
pub(super) fn check_paths(
    file: &Path,
    paths: &[PathMatch],
    config: &Config,
    diags: &mut Diagnostics,
) {
    if !config.auth.is_on() {
        return;
    }
    for p in paths.iter().filter(|p| p.value.contains(['*', '?'])) {
        diags.push(
            Diagnostic::error(
                Code::InvalidPath,
                format!(
                    "path `{}` holds `*`, which an auth policy's resource reads as a wildcard: the app's callers would be let in on other paths too",
                    p.value
                ),
            )
            .at(Span::new(file, p.pos.line, p.pos.column))
            .help("drop the `*` from the path, or set `auth.mode: none`"),
        );
    }
    for p in paths {
        let escapes = platform::kong_decoded_escapes(&p.value);
        let Some(first) = escapes.first() else {
            continue;
        };
        diags.push(
            Diagnostic::error(
                Code::InvalidPath,
                format!(
                    "path `{}` has the percent-encoded `{first}`, which Kong decodes before it routes while Lattice and the auth policy compare the path as written: one request would be two paths, and callers could be let in where the policy does not mean to",
                    p.value
                ),
            )
            .at(Span::new(file, p.pos.line, p.pos.column))
            .help("write the path plainly (`/admin`, not `/%61dmin`; no encoded dots), or set `auth.mode: none`"),
        );
    }
}

/// The `auth:` section of latgen.yaml.
pub(super) fn validate_auth_config(
    config: &Config,
    file: &Path,
    text: Option<&str>,
    diags: &mut Diagnostics,
) {
    let auth = &config.auth;
    let places = crate::input::places::Places::settings(config, file, text);
    let mut bad = |path: &[&str], what: String, help: &str| {
        diags.push(
            Diagnostic::error(Code::InvalidConfig, what)
                .at(places.of(path))
                .help(help.to_string()),
        );
    };
    if let Some(a) = auth.account.as_deref().filter(|a| !is_account(a)) {
        bad(
            &["auth", "account"],
            format!(
                "auth.account `{}` is not a 12-digit AWS account id",
                a.escape_debug()
            ),
            "quote it, as in `account: \"111122223333\"`",
        );
    }
    if let Some(r) = auth.region.as_deref().filter(|r| !is_region(r)) {
        bad(
            &["auth", "region"],
            format!(
                "auth.region `{}` is not an AWS Region name",
                r.escape_debug()
            ),
            "give the Region of the Lattice services, e.g. `ap-northeast-2`",
        );
    }
    if auth.is_on() {
        for (key, missing) in [
            ("account", auth.account.is_none()),
            ("region", auth.region.is_none()),
            ("kong", auth.kong.is_none()),
        ] {
            if missing {
                bad(
                    &["auth", "mode"],
                    format!("auth.mode is `iam` and auth.{key} is not set"),
                    match key {
                        "kong" => {
                            "say how Kong calls Lattice, e.g. `kong: { vpcs: [<the gateway cluster's VPC id>] }`: every app's Kong route needs it"
                        }
                        _ => {
                            "set auth.account and auth.region to where the Lattice services are: the policies name their resources in full"
                        }
                    },
                );
            }
        }
    }
    let named = auth
        .kong
        .iter()
        .map(|c| ("auth.kong".to_string(), vec!["auth", "kong"], c));
    let listed = auth
        .callers
        .iter()
        .enumerate()
        .map(|(i, c)| (format!("auth.callers[{i}]"), vec!["auth", "callers"], c));
    for (name, path, c) in named.chain(listed) {
        for (message, help) in caller_problems(c, auth.region.as_deref()) {
            bad(&path, format!("{name}: {message}"), help);
        }
    }
    if auth.is_on() {
        check_placement(config, &places, diags);
    }
}

/// `lattice.placement` says where the Lattice services are, and the auth policies name
/// their resources in `auth.account` and `auth.region`: the two must agree. An overlay that
/// moves an environment's services to another account but keeps `auth.account` from
/// latgen.yaml would write policies that name the other environment's account, whose
/// resources no request to these services has: every caller would be kept out.
fn check_placement(
    config: &Config,
    places: &crate::input::places::Places,
    diags: &mut Diagnostics,
) {
    let (auth, placement) = (&config.auth, &config.lattice.placement);
    for (key, at, policies) in [
        ("account", &placement.account, &auth.account),
        ("region", &placement.region, &auth.region),
    ] {
        let (Some(at), Some(policies)) = (at, policies) else {
            continue;
        };
        if at == policies {
            continue;
        }
        diags.push(
            Diagnostic::error(
                Code::InvalidConfig,
                format!(
                    "lattice.placement.{key} `{}` (where the Lattice services are) is not auth.{key} `{}`: the auth policies would name the services of {key} `{}`, match no request to these services and keep every caller out",
                    at.escape_debug(),
                    policies.escape_debug(),
                    policies.escape_debug()
                ),
            )
            .at(places.of(&["lattice", "placement", key]))
            .related(
                places.of(&["auth", key]),
                format!("the auth.{key} the policies name"),
            )
            .help(format!(
                "set auth.{key} to `{}` beside lattice.placement.{key} (in the environment's overlay), or leave lattice.placement.{key} out: it defaults to auth.{key}",
                at.escape_debug()
            )),
        );
    }
}

fn is_region(r: &str) -> bool {
    let parts: Vec<&str> = r.split('-').collect();
    parts.len() >= 3
        && parts[0].len() == 2
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
        && parts
            .last()
            .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn principals_are_accounts_roles_users_or_roots() {
        for ok in [
            "111122223333",
            "arn:aws:iam::111122223333:role/reports",
            "arn:aws:iam::111122223333:role/team/reports",
            "arn:aws:iam::111122223333:user/ci",
            "arn:aws:iam::111122223333:root",
        ] {
            assert_eq!(principal_problem(ok), None, "{ok}");
        }
        for bad in [
            "1111",
            "arn:aws:iam::1:role/x",
            "arn:aws:iam::111122223333:group/x",
            "arn:aws:s3:::bucket",
            "*",
            "arn:aws:iam::111122223333:role//",
            "arn:aws:iam::111122223333:role/../x",
            "arn:aws:iam::111122223333:role/a//x",
            "arn:aws:iam::111122223333:role/./x",
            "arn:aws:iam::111122223333:user/@",
            "arn:aws:iam::111122223333:user/a*",
            "arn:aws:iam::111122223333:role/team/",
        ] {
            assert!(principal_problem(bad).is_some(), "{bad}");
        }
        let long = format!("arn:aws:iam::111122223333:role/{}", "a".repeat(64));
        assert_eq!(principal_problem(&long), None);
        assert!(principal_problem(&format!("{long}a")).is_some());
        assert_eq!(
            principal_problem("arn:aws:iam::111122223333:user/ci@example.com"),
            None
        );
    }

    #[test]
    fn a_principal_names_its_regions_partition() {
        assert_eq!(partition("ap-northeast-2"), "aws");
        assert_eq!(partition("cn-north-1"), "aws-cn");
        assert_eq!(partition("us-gov-west-1"), "aws-us-gov");
        assert_eq!(partition("us-isob-east-1"), "aws-iso-b");
        assert_eq!(partition("us-iso-east-1"), "aws-iso");
        let china = "arn:aws-cn:iam::111122223333:role/reports";
        assert_eq!(principal_problem(china), None);
        assert!(partition_problem(china, "ap-northeast-2").is_some());
        assert_eq!(partition_problem(china, "cn-northwest-1"), None);
        assert_eq!(partition_problem("111122223333", "cn-north-1"), None);
        let c = Caller {
            principals: vec![china.into()],
            ..Caller::default()
        };
        assert_eq!(caller_problems(&c, Some("ap-northeast-2")).len(), 1);
        assert!(caller_problems(&c, Some("cn-north-1")).is_empty());
    }

    #[test]
    fn vpcs_orgs_methods_and_regions() {
        assert_eq!(vpc_problem("vpc-0a1b2c3d4e5f67890"), None);
        assert_eq!(vpc_problem("vpc-0a1b2c3d"), None);
        assert!(vpc_problem("vpc-0A1B2C3D").is_some());
        assert!(vpc_problem("subnet-0a1b2c3d").is_some());
        assert_eq!(org_problem("o-a1b2c3d4e5"), None);
        assert!(org_problem("o-short").is_some());
        assert_eq!(method_problem("GET"), None);
        assert!(method_problem("get").is_some());
        assert!(is_region("ap-northeast-2"));
        assert!(is_region("us-gov-west-1"));
        assert!(!is_region("seoul"));
    }

    #[test]
    fn a_caller_must_say_who() {
        let open = Caller {
            methods: vec!["GET".into()],
            ..Caller::default()
        };
        assert_eq!(caller_problems(&open, None).len(), 1);
    }
}
