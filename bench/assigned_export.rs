//! The benchmark's apps as a team exports its live setup when no Lattice route has a custom
//! domain (the style of `tests/fixtures/assigned-domain/`): each path-routed app's Lattice
//! route reached at the domain Lattice assigned its service (the controller's annotation),
//! with what `kubectl get -o yaml` adds; every 50th route kept apart in `lattice-routes`
//! with a ReferenceGrant in the app's namespace; every 20th service with a live
//! IAMAuthPolicy; each team's objects in one file per side, every third team's as one
//! `kind: List`. `examples/bench.rs` times `latgen import` of it.

use std::fmt::Write as _;
use std::path::Path;

use super::generate::GenApp;

const ASSIGNED_ANNOTATION: &str = "application-networking.k8s.aws/lattice-assigned-domain-name";
const ROUTES_NS: &str = "lattice-routes";
/// Kong's VPC: every live policy lets it in, as the project's `auth.kong` says.
pub const KONG_VPC: &str = "vpc-0a1b2c3d4e5f67890";

/// A hex digest of `text` (FNV-1a, 64 bits), for made-up ids that stay the same every run.
fn digest(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// The domain Lattice assigns the service of route `name` in `namespace`.
fn assigned(name: &str, namespace: &str) -> String {
    let d = digest(&format!("{namespace}/{name}"));
    format!(
        "{name}-{namespace}-0{d}.{}.vpc-lattice-svcs.ap-northeast-2.on.aws",
        &d[..7]
    )
}

/// The fields the API server adds to an object's metadata, and where they go.
fn metadata(name: &str, namespace: &str, extra: &str) -> String {
    let uid = digest(&format!("{namespace}/{name}/{extra}"));
    format!(
        "metadata:\n  name: {name}\n  namespace: {namespace}\n  uid: {}-{}-4{}-8{}-{}{}\n  resourceVersion: \"{}\"\n  generation: 1\n  creationTimestamp: \"2026-03-02T09:00:00Z\"\n  managedFields:\n  - manager: argocd-controller\n    operation: Apply\n    apiVersion: v1\n{extra}",
        &uid[..8],
        &uid[8..12],
        &uid[12..15],
        &uid[13..16],
        &uid[..4],
        &uid[4..12],
        u64::from_str_radix(&uid[..6], 16).unwrap_or_default()
    )
}

/// Its Lattice route, its grant and its auth policy (the workload side); its Kong route and
/// bridge (the gateway side).
fn objects(i: usize, a: &GenApp) -> (Vec<String>, Vec<String>) {
    let apart = a.host.is_none() && i % 50 == 7;
    let route_ns = if apart {
        ROUTES_NS
    } else {
        a.namespace.as_str()
    };
    let domain = match &a.host {
        Some(h) => h.clone(),
        None => assigned(&a.name, route_ns),
    };
    let mut rules = String::new();
    let backend_ns = if apart {
        format!("      namespace: {}\n", a.namespace)
    } else {
        String::new()
    };
    for p in &a.paths {
        let _ = write!(
            rules,
            "  - matches:\n    - path:\n        type: PathPrefix\n        value: {p}\n    backendRefs:\n    - name: {}\n{backend_ns}      port: {}\n",
            a.name, a.port
        );
    }
    let (annotations, hostnames) = match &a.host {
        Some(h) => (String::new(), format!("  hostnames:\n  - {h}\n")),
        None => (
            format!("  annotations:\n    {ASSIGNED_ANNOTATION}: {domain}\n"),
            String::new(),
        ),
    };
    let mut workload = vec![format!(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n{}spec:\n  parentRefs:\n  - name: lattice-gateway\n    namespace: aws-application-networking-system\n    sectionName: http\n{hostnames}  rules:\n{rules}status:\n  parents: []\n",
        metadata(&a.name, route_ns, &annotations)
    )];
    if apart {
        workload.push(format!(
            "apiVersion: gateway.networking.k8s.io/v1beta1\nkind: ReferenceGrant\n{}spec:\n  from:\n  - group: gateway.networking.k8s.io\n    kind: HTTPRoute\n    namespace: {ROUTES_NS}\n  to:\n  - group: \"\"\n    kind: Service\n    name: {}\n",
            metadata(&format!("{}-from-routes", a.name), &a.namespace, ""),
            a.name
        ));
    }
    if i % 20 == 3 {
        workload.push(auth_policy(a, route_ns));
    }
    (workload, kong_side(a, &domain))
}

/// A live IAMAuthPolicy: Kong from its VPC, and a reporting role reading.
fn auth_policy(a: &GenApp, route_ns: &str) -> String {
    let policy = format!(
        "{{\"Version\":\"2012-10-17\",\"Statement\":[{{\"Effect\":\"Allow\",\"Principal\":\"*\",\"Action\":\"vpc-lattice-svcs:Invoke\",\"Resource\":\"*\",\"Condition\":{{\"StringEquals\":{{\"vpc-lattice-svcs:SourceVpc\":\"{KONG_VPC}\"}}}}}},{{\"Effect\":\"Allow\",\"Principal\":{{\"AWS\":\"arn:aws:iam::111122223333:role/reports\"}},\"Action\":\"vpc-lattice-svcs:Invoke\",\"Resource\":\"*\",\"Condition\":{{\"StringEquals\":{{\"vpc-lattice-svcs:RequestMethod\":\"GET\"}}}}}}]}}"
    );
    format!(
        "apiVersion: application-networking.k8s.aws/v1alpha1\nkind: IAMAuthPolicy\n{}spec:\n  targetRef:\n    group: gateway.networking.k8s.io\n    kind: HTTPRoute\n    name: {}\n  policy: '{policy}'\n",
        metadata(&format!("{}-auth", a.name), route_ns, ""),
        a.name
    )
}

/// The Kong route (rewriting Host to `domain`) and its ExternalName bridge.
fn kong_side(a: &GenApp, domain: &str) -> Vec<String> {
    let bridge = format!("{}-lattice", a.name);
    let hostnames = match &a.host {
        Some(h) => format!("  hostnames:\n  - {h}\n"),
        None => String::new(),
    };
    let mut rules = String::new();
    for p in &a.paths {
        let _ = write!(
            rules,
            "  - matches:\n    - path:\n        type: PathPrefix\n        value: {p}\n    filters:\n    - type: URLRewrite\n      urlRewrite:\n        hostname: {domain}\n    backendRefs:\n    - name: {bridge}\n      port: 80\n"
        );
    }
    vec![
        format!(
            "apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n{}spec:\n  parentRefs:\n  - name: kong\n    namespace: kong\n{hostnames}  rules:\n{rules}",
            metadata(&a.name, "kong-routes", "")
        ),
        format!(
            "apiVersion: v1\nkind: Service\n{}spec:\n  type: ExternalName\n  externalName: {domain}\n  ports:\n  - name: http\n    port: 80\n",
            metadata(&bridge, "kong-routes", "")
        ),
    ]
}

/// One file of `docs`: YAML documents, or (`list`) one `kind: List` of them.
fn file(docs: &[String], list: bool) -> String {
    if !list {
        return docs.iter().map(|d| format!("---\n{d}")).collect();
    }
    let mut out = String::from("apiVersion: v1\nkind: List\nitems:\n");
    for d in docs {
        for (n, line) in d.lines().enumerate() {
            out.push_str(if n == 0 { "- " } else { "  " });
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// Writes the export of `apps` under `dir`: `workload/<team>.yaml` and `gateway/<team>.yaml`.
pub fn write_export(dir: &Path, apps: &[GenApp]) {
    let mut teams: std::collections::BTreeMap<&str, (Vec<String>, Vec<String>)> =
        std::collections::BTreeMap::new();
    for (i, a) in apps.iter().enumerate() {
        let (workload, gateway) = objects(i, a);
        let team = teams.entry(a.namespace.as_str()).or_default();
        team.0.extend(workload);
        team.1.extend(gateway);
    }
    for side in ["workload", "gateway"] {
        std::fs::create_dir_all(dir.join(side)).unwrap();
    }
    for (t, (team, (workload, gateway))) in teams.iter().enumerate() {
        let list = t % 3 == 2;
        let name = format!("{team}.yaml");
        std::fs::write(dir.join("workload").join(&name), file(workload, list)).unwrap();
        std::fs::write(dir.join("gateway").join(&name), file(gateway, list)).unwrap();
    }
}
