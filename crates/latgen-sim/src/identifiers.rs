//! Names the platform accepts and the names it makes: Kubernetes' DNS-1123 labels,
//! hostnames, and the Lattice service name the AWS Gateway API Controller gives a route.

/// DNS-1123 label (Kubernetes object names used here: Service, namespace, app).
pub const DNS1123_LABEL_MAX: usize = 63;

/// The Lattice service name the AWS Gateway API Controller gives a route:
/// `Truncate(name, 20) + "-" + Truncate(namespace, 18)`, where Truncate cuts to length and
/// trims `-` from both ends (`pkg/utils/common.go`, `LatticeServiceName`).
pub fn lattice_service_name(route: &str, namespace: &str) -> String {
    fn truncate(s: &str, n: usize) -> &str {
        let cut = if s.len() > n { &s[..n] } else { s };
        cut.trim_matches('-')
    }
    format!("{}-{}", truncate(route, 20), truncate(namespace, 18))
}

/// Lattice service names: 3–40 characters of `[a-z0-9-]`, no leading, trailing or double
/// `-`, and not starting with `svc-` (Lattice CreateService API).
pub fn lattice_service_name_problem(name: &str) -> Option<String> {
    if !(3..=40).contains(&name.len()) {
        return Some(format!(
            "is {} characters; Lattice takes 3 to 40",
            name.len()
        ));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return Some("has characters other than a-z, 0-9 and -".into());
    }
    if name.starts_with('-') || name.ends_with('-') || name.contains("--") {
        return Some("has a leading, trailing or double `-`".into());
    }
    if name.starts_with("svc-") {
        return Some("starts with `svc-`, which Lattice reserves".into());
    }
    None
}

/// A DNS-1123 label: lowercase letters, digits and `-`, starting and ending alphanumeric,
/// at most 63 characters.
pub fn dns1123_label_problem(s: &str) -> Option<String> {
    if s.is_empty() {
        return Some("is empty".into());
    }
    if s.len() > DNS1123_LABEL_MAX {
        return Some(format!(
            "is {} characters; at most {DNS1123_LABEL_MAX}",
            s.len()
        ));
    }
    if !s
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return Some("may hold only lowercase letters, digits and `-`".into());
    }
    if !s.as_bytes()[0].is_ascii_alphanumeric()
        || !s.as_bytes()[s.len() - 1].is_ascii_alphanumeric()
    {
        return Some("must start and end with a letter or digit".into());
    }
    None
}

/// The host name alone in what may be written as a URL or with a port
/// (`https://docs.example.com/` → `docs.example.com`), when that differs from `host`.
pub fn bare_host(host: &str) -> Option<&str> {
    let rest = host.split_once("://").map_or(host, |(_, rest)| rest);
    let end = rest.find(['/', ':', '?', '#']).unwrap_or(rest.len());
    let bare = &rest[..end];
    (bare != host && !bare.is_empty()).then_some(bare)
}

/// A hostname as HTTPRoute `spec.hostnames` and a Lattice custom domain take it:
/// lowercase RFC 1123, not an IP address, no port, no wildcard.
pub fn hostname_problem(host: &str) -> Option<String> {
    if host.is_empty() || host.len() > 253 {
        return Some("must be 1 to 253 characters".into());
    }
    if let Some((scheme, rest)) = host.split_once("://") {
        let after = match rest.find('/').map(|i| &rest[i..]) {
            Some("/") => " and a trailing `/`".to_string(),
            Some(path) => format!(" and a path `{path}`"),
            None => String::new(),
        };
        return Some(format!(
            "is a URL, with the scheme `{scheme}://`{after}: a host is the name alone"
        ));
    }
    if let Some(i) = host.find('/') {
        return Some(format!(
            "has a path `{}`; a host is the name alone",
            &host[i..]
        ));
    }
    if host.contains(':') {
        return Some("carries a port; give the bare host name".into());
    }
    if host.starts_with('*') {
        return Some("is a wildcard; a Lattice custom domain must be a single name".into());
    }
    if host.bytes().any(|b| b.is_ascii_uppercase()) {
        return Some("has uppercase letters; host names are lowercase".into());
    }
    if host
        .split('.')
        .all(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()))
    {
        return Some("is an IP address; give a DNS name".into());
    }
    if !host.contains('.') {
        return Some("is not a fully qualified name (no `.`)".into());
    }
    for label in host.split('.') {
        if let Some(p) = dns1123_label_problem(label) {
            return Some(format!("has a label `{label}` that {p}"));
        }
    }
    None
}
