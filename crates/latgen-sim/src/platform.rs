//! Platform facts: what Gateway API, VPC Lattice, the AWS Gateway API Controller and Kong
//! accept and how they match. Each is cited where it comes from and pinned by a test.

pub use crate::identifiers::*;

/// Gateway API HTTPRoute CRD (v1.6.1): `maxItems: 16` on `spec.rules`.
pub const CRD_MAX_RULES: usize = 16;
/// Gateway API HTTPRoute CRD: `maxItems: 16` on `spec.hostnames`.
pub const CRD_MAX_HOSTNAMES: usize = 16;
/// Lattice rule path pattern length (CloudFormation `AWS::VpcLattice::Rule` PathMatch).
pub const LATTICE_MAX_PATH_LEN: usize = 128;
/// Lattice rule priorities run 1..=100; the controller gives rule i priority i + 1.
pub const LATTICE_MAX_PRIORITY: usize = 100;
/// Lattice header match name length (CloudFormation `AWS::VpcLattice::Rule` HeaderMatch).
pub const LATTICE_MAX_HEADER_NAME: usize = 40;
/// Lattice strips incoming headers with this prefix (Lattice user guide, "HTTP headers").
pub const LATTICE_RESERVED_HEADER_PREFIX: &str = "x-amzn-lattice-";
/// Request headers that a header dispatched on must not be, each with who sets or strips it
/// on the way from Kong to Lattice. Kong sets the dispatch header (KIC makes the route's
/// RequestHeaderModifier a request-transformer plugin, which runs in the access phase); on
/// any header below something later replaces, drops or derives it from the client's
/// request, so the value Lattice matches would not be the app's name, or a client could
/// pick the app.
/// - Kong 3.x `kong/templates/nginx_kong.lua`: `proxy_set_header` of `TE`, `Via`, `Host`,
///   `Upgrade`, `Connection`, `X-Forwarded-For`, `-Proto`, `-Host`, `-Port`, `-Path`,
///   `-Prefix`, `X-Real-IP` and `X-Kong-Request-Id` in every proxy location, after the
///   plugins ran (`X-Forwarded-Host` from the client's own `Host` unless it comes from a
///   trusted IP: `kong/runloop/handler.lua`, the access phase's `before`).
/// - `kong/runloop/handler.lua`, the access phase's `after`: clears `Proxy` and
///   `Proxy-Connection` (httpoxy), and every header the client's `Connection` names.
/// - nginx `ngx_http_proxy_module.c`, `ngx_http_proxy_headers`: `Content-Length`,
///   `Transfer-Encoding`, `Keep-Alive` and `Expect` are replaced or dropped.
/// - Hop-by-hop headers (RFC 9110 §7.6.1, RFC 2616 §13.5.1): `Connection`, `Keep-Alive`,
///   `Proxy-Authenticate`, `Proxy-Authorization`, `TE`, `Trailer`, `Transfer-Encoding`,
///   `Upgrade`; a proxy does not forward them.
/// - Credentials: `Authorization` carries the caller's SigV4 signature when Lattice auth is
///   on, and Kong's auth plugins strip it (`hide_credentials`); `Cookie` is the client's.
/// - Lattice (user guide, "HTTP targets in VPC Lattice"): adds `x-forwarded-for`,
///   `x-forwarded-for-port` and `x-forwarded-for-proto`, and strips the caller identity
///   headers under [`LATTICE_RESERVED_HEADER_PREFIX`].
pub const DISPATCH_REFUSED_HEADERS: &[(&str, &str)] = &[
    (
        "host",
        "Kong sets it to the upstream's host (nginx_kong.lua)",
    ),
    (
        "connection",
        "a hop-by-hop header, which Kong sets itself (nginx_kong.lua)",
    ),
    (
        "upgrade",
        "a hop-by-hop header, which Kong sets itself (nginx_kong.lua)",
    ),
    (
        "te",
        "a hop-by-hop header, which Kong sets itself (nginx_kong.lua)",
    ),
    ("via", "Kong sets it (nginx_kong.lua)"),
    (
        "x-forwarded-for",
        "Kong sets it from the client's address (nginx_kong.lua)",
    ),
    (
        "x-forwarded-proto",
        "Kong sets it from the client's request (nginx_kong.lua)",
    ),
    (
        "x-forwarded-host",
        "Kong sets it from the client's Host header (nginx_kong.lua)",
    ),
    (
        "x-forwarded-port",
        "Kong sets it from the client's request (nginx_kong.lua)",
    ),
    (
        "x-forwarded-path",
        "Kong sets it from the client's path (nginx_kong.lua)",
    ),
    (
        "x-forwarded-prefix",
        "Kong sets it from the client's request (nginx_kong.lua)",
    ),
    (
        "x-real-ip",
        "Kong sets it to the client's address (nginx_kong.lua)",
    ),
    (
        "x-kong-request-id",
        "Kong sets it to the request's id (nginx_kong.lua)",
    ),
    ("proxy", "Kong strips it (kong/runloop/handler.lua)"),
    (
        "proxy-connection",
        "a hop-by-hop header, which Kong strips (kong/runloop/handler.lua)",
    ),
    ("keep-alive", "a hop-by-hop header, which nginx drops"),
    (
        "transfer-encoding",
        "a hop-by-hop header, which nginx sets itself",
    ),
    ("content-length", "nginx sets it from the request's body"),
    ("expect", "nginx drops it"),
    ("trailer", "a hop-by-hop header"),
    ("proxy-authenticate", "a hop-by-hop header"),
    ("proxy-authorization", "a hop-by-hop header"),
    (
        "authorization",
        "it carries the caller's credentials, which Kong's auth plugins strip and Lattice's auth reads",
    ),
    ("cookie", "it carries the client's cookies"),
    (
        "x-forwarded-for-port",
        "Lattice sets it to the port the request came to",
    ),
    (
        "x-forwarded-for-proto",
        "Lattice sets it to the request's protocol",
    ),
];

/// Why a header name cannot be the dispatch header, when it is one Kong, nginx or Lattice
/// sets or strips ([`DISPATCH_REFUSED_HEADERS`]).
pub fn dispatch_header_refusal(name: &str) -> Option<&'static str> {
    let name = name.to_ascii_lowercase();
    DISPATCH_REFUSED_HEADERS
        .iter()
        .find(|(h, _)| *h == name)
        .map(|(_, why)| *why)
}

/// Which of the rules below refuses a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathFault {
    /// Not a path the CRD's CEL rules, Lattice's pattern or Kong's matching accept.
    Invalid,
    /// Longer than Lattice's 128 characters.
    TooLong,
    /// A prefix ending in `/`, which never matches the bare path under Lattice.
    TrailingSlash,
}

/// Why a path is refused: which rule, a message and a help line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathProblem {
    pub fault: PathFault,
    pub message: String,
    pub help: String,
}

fn problem(fault: PathFault, message: impl Into<String>, help: impl Into<String>) -> PathProblem {
    PathProblem {
        fault,
        message: message.into(),
        help: help.into(),
    }
}

/// Checks a path value against the HTTPRoute CEL rules for `Exact`/`PathPrefix`, the Lattice
/// rule path pattern `^/[a-zA-Z0-9@:%_+.~#?&/=-]*$` (≤ 128 characters) and Kong's behaviour
/// with a trailing slash. Returns every problem, most basic first.
pub fn path_problems(path: &str) -> Vec<PathProblem> {
    let mut out = Vec::new();
    if !path.starts_with('/') {
        out.push(problem(
            PathFault::Invalid,
            format!("path `{path}` does not start with `/`"),
            format!("write `/{}`", path.trim_start_matches('/')),
        ));
        return out;
    }
    for (needle, what) in [
        ("//", "`//`"),
        ("/./", "a `/./` segment"),
        ("/../", "a `/../` segment"),
        ("%2f", "`%2f` (an encoded slash)"),
        ("%2F", "`%2F` (an encoded slash)"),
        ("#", "`#`"),
    ] {
        if path.contains(needle) {
            out.push(problem(
                PathFault::Invalid,
                format!("path `{path}` contains {what}, which Gateway API refuses"),
                "write the path in its plain, normalized form",
            ));
        }
    }
    if path.ends_with("/.") || path.ends_with("/..") {
        out.push(problem(
            PathFault::Invalid,
            format!("path `{path}` ends with a dot segment, which Gateway API refuses"),
            "write the path in its plain, normalized form",
        ));
    }
    out.extend(query_and_percent_problems(path));
    let bad: Vec<char> = path
        .chars()
        .filter(|c| !(c.is_ascii_alphanumeric() || "@:%_+.~#?&/=-".contains(*c)))
        .collect();
    if !bad.is_empty() {
        let shown: String = bad
            .iter()
            .map(|c| format!("{c:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        out.push(problem(
            PathFault::Invalid,
            format!("path `{path}` has characters a Lattice rule refuses: {shown}"),
            "Lattice paths take only letters, digits and @:%_+.~#?&/=-",
        ));
    }
    if path.len() > LATTICE_MAX_PATH_LEN {
        out.push(problem(
            PathFault::TooLong,
            format!(
                "path is {} characters; a Lattice rule takes at most {LATTICE_MAX_PATH_LEN}",
                path.len()
            ),
            "shorten the path",
        ));
    }
    if path.len() > 1 && path.ends_with('/') {
        out.push(problem(
            PathFault::TrailingSlash,
            format!("path `{path}` ends with `/`"),
            format!(
                "write `{}`: a prefix with a trailing slash does not match the bare path on Kong or Lattice",
                path.trim_end_matches('/')
            ),
        ));
    }
    out
}

/// What the CRD's CEL character rule refuses and Lattice's pattern takes: `?` (a query
/// string has no place in a path match) and a `%` that is not a percent-encoded byte.
fn query_and_percent_problems(path: &str) -> Vec<PathProblem> {
    let mut out = Vec::new();
    if path.contains('?') {
        out.push(problem(
            PathFault::Invalid,
            format!("path `{path}` has `?`, which Gateway API refuses in a path"),
            "a path match has no query string: write the path without `?` and what follows",
        ));
    }
    if let Some(at) = bad_percent(path) {
        out.push(problem(
            PathFault::Invalid,
            format!(
                "path `{path}` has `{at}`, which is not a percent-encoded byte (`%` and two hex digits); Gateway API refuses it"
            ),
            "write `%25` for a literal `%`, or the byte as `%` and two hex digits",
        ));
    }
    out
}

/// The first `%` of `path` that does not start a percent-encoded byte, with what follows it
/// (at most two characters): the HTTPRoute CRD's CEL rule takes `%` only as `%XX`.
fn bad_percent(path: &str) -> Option<&str> {
    let b = path.as_bytes();
    let i = (0..b.len()).find(|&i| {
        b[i] == b'%'
            && !(b.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
    })?;
    let end = path[i..]
        .char_indices()
        .nth(3)
        .map_or(path.len(), |(n, _)| i + n);
    Some(&path[i..end])
}

/// RFC 3986's reserved characters, which Kong's router keeps percent-encoded when it
/// normalizes a request's path (Kong 3.x `kong/tools/uri.lua`, `RESERVED_CHARS`).
const KONG_KEPT_ENCODED: &str = "!*'();:@&=+$,/?%#[]";

/// The percent-encoded bytes of `path` that Kong's router decodes before it matches
/// (`normalize()` in Kong 3.x `kong/tools/uri.lua`, called by `kong/router/utils.lua`):
/// every one but a reserved character's, so `/%61dmin` is `/admin` to Kong and `/%2e%2e/`
/// a dot segment it then removes. Lattice rules and auth policy resources compare the
/// path as written, so such a path means one thing to Kong and another to Lattice.
pub fn kong_decoded_escapes(path: &str) -> Vec<&str> {
    let b = path.as_bytes();
    let mut out = Vec::new();
    for i in 0..b.len().saturating_sub(2) {
        let hex = path.get(i + 1..i + 3);
        let byte = hex.and_then(|h| u8::from_str_radix(h, 16).ok());
        if b[i] == b'%'
            && let Some(byte) = byte
            && !KONG_KEPT_ENCODED.as_bytes().contains(&byte)
        {
            out.push(&path[i..i + 3]);
        }
    }
    out
}

/// Characters that Kong's router reads as regex syntax in a PathPrefix: KIC turns
/// `PathPrefix /a` into `~/a$` and `/a/` without escaping the value.
pub fn kong_regex_metachars(path: &str) -> Vec<char> {
    let mut found: Vec<char> = path
        .chars()
        .filter(|c| ".+*?()[]{}$^|\\".contains(*c))
        .collect();
    found.dedup();
    found
}

/// Gateway API `PathPrefix` semantics: `prefix` matches `path` element-wise, so `/shop`
/// matches `/shop` and `/shop/cart` but not `/shopping`.
pub fn segment_prefix_matches(prefix: &str, path: &str) -> bool {
    let prefix = if prefix.len() > 1 {
        prefix.trim_end_matches('/')
    } else {
        prefix
    };
    if prefix == "/" {
        return path.starts_with('/');
    }
    path.starts_with(prefix) && matches!(path.as_bytes().get(prefix.len()), None | Some(b'/'))
}

/// Lattice `prefix` path matching compares strings: `/shop` matches `/shopping`.
pub fn string_prefix_matches(prefix: &str, path: &str) -> bool {
    path.starts_with(prefix)
}

/// Whether one request can match both of two Lattice path matches, compared as Lattice
/// compares them (as strings, case-sensitively): a prefix and any path or prefix that starts
/// with it (`/shop` and `/shopping`, `/shop` and Exact `/shop/cart`), or two equal paths.
/// Two rules of different apps that can both match depend on their order, and the
/// controller does not keep the order latgen writes (a rule new to a listener is created
/// after every other one, and the reorder of more than 5 rules fails: see DESIGN §7).
pub fn lattice_matches_overlap(a: (MatchKind, &str), b: (MatchKind, &str)) -> bool {
    use MatchKind::{Exact, Prefix};
    let covers = |(kind, path): (MatchKind, &str), other: &str| match kind {
        Prefix => other.starts_with(path),
        Exact => other == path,
    };
    covers(a, b.1) || covers(b, a.1)
}

/// Whether prefix `inner` lies strictly under prefix `outer` segment-wise (`/shop/cart` under
/// `/shop`, everything under `/`). Two such prefixes of different backends in one Lattice
/// route misroute: `/shop/cartx` belongs to `/shop` but string-matches `/shop/cart` first.
pub fn nests_under(inner: &str, outer: &str) -> bool {
    inner != outer && inner.len() > outer.len() && segment_prefix_matches(outer, inner)
}

/// How a path matches: Gateway API's `Exact` or `PathPrefix`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MatchKind {
    /// Listed first so that, on equal length, Exact sorts before PathPrefix.
    Exact,
    Prefix,
}

impl MatchKind {
    /// The Gateway API `path.type` value.
    pub fn gateway_api_type(self) -> &'static str {
        match self {
            MatchKind::Exact => "Exact",
            MatchKind::Prefix => "PathPrefix",
        }
    }
}

/// The controller's annotation that names a route's Lattice service (controller ≥ 2.0).
pub const OVERRIDE_ANNOTATION: &str = "application-networking.k8s.aws/service-name-override";

/// The annotation in which the controller records the domain Lattice assigned a route's
/// service (`<name>-<hex>.<hex>.vpc-lattice-svcs.<region>.on.aws`), once the service
/// exists (`pkg/controllers/route_controller.go`, v2.1.3). A route without a custom
/// domain is reached at this domain; it never changes for the service's life.
pub const ASSIGNED_DOMAIN_ANNOTATION: &str =
    "application-networking.k8s.aws/lattice-assigned-domain-name";

/// The partition of Region `region`: the `regionRegex` of each partition in the AWS SDKs'
/// endpoint data (AWS SDK for JavaScript v3, `packages/util-endpoints/src/lib/aws/
/// partitions.json`): `cn-…` is `aws-cn`, `us-gov-…` `aws-us-gov`, `us-iso-…` `aws-iso`,
/// `us-isob-…` `aws-iso-b`, `us-isof-…` `aws-iso-f`, `eu-isoe-…` `aws-iso-e`, `eusc-…`
/// `aws-eusc`, the rest `aws`. An ARN's second field is its partition, and IAM never lets a
/// principal of one partition into another's resources.
pub fn partition(region: &str) -> &'static str {
    const PREFIXES: &[(&str, &str)] = &[
        ("cn-", "aws-cn"),
        ("us-gov-", "aws-us-gov"),
        ("us-isob-", "aws-iso-b"),
        ("us-isof-", "aws-iso-f"),
        ("us-iso-", "aws-iso"),
        ("eu-isoe-", "aws-iso-e"),
        ("eusc-", "aws-eusc"),
    ];
    (PREFIXES.iter())
        .find(|(prefix, _)| region.starts_with(prefix))
        .map_or("aws", |(_, partition)| partition)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gateway_api_prefix_matching_is_segment_wise() {
        assert!(segment_prefix_matches("/shop", "/shop"));
        assert!(segment_prefix_matches("/shop", "/shop/cart"));
        assert!(!segment_prefix_matches("/shop", "/shopping"));
        assert!(segment_prefix_matches("/", "/anything"));
        assert!(segment_prefix_matches("/shop/", "/shop"));
    }

    #[test]
    fn lattice_matches_overlap_when_one_request_can_match_both() {
        use MatchKind::{Exact, Prefix};
        let overlap = |a, b| lattice_matches_overlap(a, b) && lattice_matches_overlap(b, a);
        // String-sharing siblings and segment-wise nesting: `/shopping` matches both.
        assert!(overlap((Prefix, "/shop"), (Prefix, "/shopping")));
        assert!(overlap((Prefix, "/shop"), (Prefix, "/shop/cart")));
        assert!(overlap((Prefix, "/"), (Prefix, "/a")));
        // An Exact path under a prefix, and two equal Exact paths.
        assert!(overlap((Prefix, "/shop"), (Exact, "/shop-admin")));
        assert!(overlap((Exact, "/healthz"), (Exact, "/healthz")));
        // No request matches both: siblings that share no prefix, an Exact path shorter
        // than the prefix, two different Exact paths, and case (Lattice is case-sensitive).
        assert!(!overlap((Prefix, "/shop"), (Prefix, "/blog")));
        assert!(!overlap((Prefix, "/shopping"), (Exact, "/shop")));
        assert!(!overlap((Exact, "/a"), (Exact, "/ab")));
        assert!(!overlap((Prefix, "/Shop"), (Prefix, "/shopping")));
    }

    #[test]
    fn lattice_prefix_matching_is_string_wise() {
        assert!(string_prefix_matches("/shop", "/shopping"));
        assert!(string_prefix_matches("/shop/cart", "/shop/cartx"));
        assert!(!string_prefix_matches("/shop/", "/shop"));
    }

    #[test]
    fn nesting_is_segment_wise_and_strict() {
        assert!(nests_under("/shop/cart", "/shop"));
        assert!(nests_under("/a", "/"));
        assert!(!nests_under("/shopping", "/shop"));
        assert!(!nests_under("/shop", "/shop"));
        assert!(!nests_under("/shop", "/shop/cart"));
    }

    #[test]
    fn cel_and_lattice_path_rules() {
        let codes = |p: &str| {
            path_problems(p)
                .into_iter()
                .map(|x| x.fault)
                .collect::<Vec<_>>()
        };
        assert!(codes("/shop").is_empty());
        assert!(codes("/").is_empty());
        assert_eq!(codes("shop"), [PathFault::Invalid]);
        for bad in [
            "/a//b", "/a/./b", "/a/../b", "/a%2fb", "/a%2Fb", "/a#b", "/a/.", "/a/..",
        ] {
            assert!(codes(bad).contains(&PathFault::Invalid), "{bad}");
        }
        assert_eq!(codes("/a b"), [PathFault::Invalid]);
        // A query string and a stray `%` pass Lattice's pattern but not the CRD's CEL rule,
        // which would refuse the whole group route the path sits in.
        assert_eq!(codes("/a?x=1"), [PathFault::Invalid]);
        assert_eq!(codes("/a%zz"), [PathFault::Invalid]);
        assert_eq!(codes("/a%4"), [PathFault::Invalid]);
        assert_eq!(codes("/a%"), [PathFault::Invalid]);
        assert!(codes("/a%41").is_empty());
        assert_eq!(bad_percent("/a%zzz"), Some("%zz"));
        assert_eq!(
            codes(&format!("/{}", "a".repeat(128))),
            [PathFault::TooLong]
        );
        assert!(codes(&format!("/{}", "a".repeat(127))).is_empty());
        assert_eq!(codes("/shop/"), [PathFault::TrailingSlash]);
    }

    #[test]
    fn kong_decodes_every_escape_but_a_reserved_characters() {
        assert_eq!(kong_decoded_escapes("/%61dmin"), ["%61"]);
        assert_eq!(kong_decoded_escapes("/x/%2e%2E/admin"), ["%2e", "%2E"]);
        assert_eq!(
            kong_decoded_escapes("/a%7Eb%20c%C3%A9"),
            ["%7E", "%20", "%C3", "%A9"]
        );
        // Reserved: Kong keeps them encoded, as Lattice does.
        assert!(kong_decoded_escapes("/a%2Fb%3a%25%40%5B").is_empty());
        assert!(kong_decoded_escapes("/plain/path%").is_empty());
        assert!(kong_decoded_escapes("/%zz%4").is_empty());
    }

    #[test]
    fn kong_reads_these_as_regex() {
        assert_eq!(kong_regex_metachars("/v1.2"), ['.']);
        assert!(kong_regex_metachars("/shop-admin").is_empty());
    }

    #[test]
    fn controller_service_name_truncates_and_trims() {
        assert_eq!(
            lattice_service_name("group-01", "lattice-groups"),
            "group-01-lattice-groups"
        );
        // 20 characters of the route, dashes trimmed after the cut; 18 of the namespace.
        assert_eq!(
            lattice_service_name("a-very-long-route-na-me", "namespace-that-is-long"),
            "a-very-long-route-na-namespace-that-is"
        );
        assert_eq!(
            lattice_service_name("abcdefghijklmnopqrs-tuv", "ns"),
            "abcdefghijklmnopqrs-ns"
        );
    }

    #[test]
    fn lattice_service_name_rules() {
        assert!(lattice_service_name_problem("group-01-lattice-groups").is_none());
        assert!(lattice_service_name_problem("ab").is_some());
        assert!(lattice_service_name_problem("svc-shop").is_some());
        assert!(lattice_service_name_problem("a--b").is_some());
        assert!(lattice_service_name_problem(&"a".repeat(41)).is_some());
    }

    /// Checked against Kong 3.10's `kong/templates/nginx_kong.lua` (the `proxy_set_header`
    /// lines of its `location /` and the `@grpc`/`@unbuffered*` locations) and
    /// `kong/runloop/handler.lua` (the access phase's `after`, which clears `Proxy`,
    /// `Proxy-Connection` and what `Connection` names), nginx's `ngx_http_proxy_headers`,
    /// and the hop-by-hop list of RFC 2616 §13.5.1 (RFC 9110 §7.6.1).
    #[test]
    fn the_dispatch_header_is_none_kong_or_nginx_sets_or_strips() {
        let kong_sets = [
            "TE",
            "Via",
            "Host",
            "Upgrade",
            "Connection",
            "X-Forwarded-For",
            "X-Forwarded-Proto",
            "X-Forwarded-Host",
            "X-Forwarded-Port",
            "X-Forwarded-Path",
            "X-Forwarded-Prefix",
            "X-Real-IP",
            "X-Kong-Request-Id",
        ];
        let kong_strips = ["Proxy", "Proxy-Connection"];
        let nginx = [
            "Content-Length",
            "Transfer-Encoding",
            "Keep-Alive",
            "Expect",
        ];
        let hop_by_hop = [
            "Connection",
            "Keep-Alive",
            "Proxy-Authenticate",
            "Proxy-Authorization",
            "TE",
            "Trailer",
            "Transfer-Encoding",
            "Upgrade",
        ];
        for h in kong_sets
            .iter()
            .chain(&kong_strips)
            .chain(&nginx)
            .chain(&hop_by_hop)
        {
            assert!(dispatch_header_refusal(h).is_some(), "{h} is taken");
        }
        for h in [
            "authorization",
            "Cookie",
            "x-forwarded-for-port",
            "x-forwarded-for-proto",
        ] {
            assert!(dispatch_header_refusal(h).is_some(), "{h} is taken");
        }
        for h in ["x-latgen-app", "x-app", "x-forwarded-app", "x-tenant"] {
            assert_eq!(dispatch_header_refusal(h), None, "{h} is free");
        }
    }

    #[test]
    fn hostnames() {
        assert!(hostname_problem("shop.example.com").is_none());
        assert!(hostname_problem("Shop.example.com").is_some());
        assert!(hostname_problem("10.0.0.1").is_some());
        assert!(hostname_problem("shop.example.com:8443").is_some());
        assert!(
            hostname_problem("https://docs.example.com/")
                .unwrap()
                .contains("scheme `https://` and a trailing `/`")
        );
        assert_eq!(
            bare_host("https://docs.example.com/"),
            Some("docs.example.com")
        );
        assert_eq!(bare_host("shop.example.com:8443"), Some("shop.example.com"));
        assert_eq!(bare_host("shop.example.com"), None);
        assert!(hostname_problem("*.example.com").is_some());
        assert!(hostname_problem("localhost").is_some());
    }
}
