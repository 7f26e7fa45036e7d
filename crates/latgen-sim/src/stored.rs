//! The stored form of an object: what the API server adds to a manifest before it stores
//! it. A manifest that leaves out a field the server defaults never equals the live object,
//! so Argo CD (server-side diff) shows its Application OutOfSync after every sync. latgen
//! writes every such field; [`missing_defaults`] finds those a (custom) template left out.
//!
//! - Custom resources get their CRD's structural defaults: for every property with a
//!   `default` that an object leaves out, the default, recursively and only where the parent
//!   exists (apiextensions-apiserver `structuraldefaulting.Default`). The HTTPRoute CRD's
//!   defaults are kept in `stored/httproute.defaults.json`, the CRD's v1 `openAPIV3Schema`
//!   (Gateway API v1.6.1) cut down to the branches that hold a default; `tests/suite/stored.rs`
//!   checks it against the CRD. The ReferenceGrant and TargetGroupPolicy CRDs default
//!   nothing outside `status`, which manifests do not set (it is a subresource, and Argo CD
//!   leaves it out of its diff).
//! - A Service gets what `SetDefaults_Service` sets (Kubernetes 1.33, the version latgen's
//!   k8s-openapi types are built for: `pkg/apis/core/v1/defaults.go`), see
//!   [`default_service`].

use std::sync::LazyLock;

use serde_json::{Map, Value};

/// A field the API server would add, with the value it would store.
#[derive(Debug, Clone, PartialEq)]
pub struct Added {
    /// Where, from the object's root: `spec.parentRefs[0].group`.
    pub path: String,
    pub value: Value,
}

impl Added {
    /// The path without list indices, `spec.parentRefs[].group`: the same field of every
    /// item of a list.
    pub fn field(&self) -> String {
        let mut out = String::with_capacity(self.path.len());
        let mut in_index = false;
        for c in self.path.chars() {
            match c {
                '[' => {
                    in_index = true;
                    out.push('[');
                }
                ']' => {
                    in_index = false;
                    out.push(']');
                }
                _ if in_index => {}
                _ => out.push(c),
            }
        }
        out
    }
}

/// The kinds of object whose stored form latgen knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoredKind {
    HttpRoute,
    Service,
    /// ReferenceGrant and TargetGroupPolicy: their CRDs default nothing a manifest sets.
    NoDefaults,
}

/// The HTTPRoute CRD's structural defaults (see the module documentation).
pub const HTTPROUTE_DEFAULTS: &str = include_str!("stored/httproute.defaults.json");

static HTTPROUTE: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_str(HTTPROUTE_DEFAULTS).expect("the embedded defaults are JSON")
});

/// Applies the API server's defaults to `object` (a whole manifest as JSON) and returns
/// what they added, in the order the server adds them.
pub fn missing_defaults(kind: StoredKind, object: &mut Value) -> Vec<Added> {
    let mut added = Vec::new();
    match kind {
        StoredKind::HttpRoute => structural_default(&HTTPROUTE, object, "", &mut added),
        StoredKind::Service => default_service(object, &mut added),
        StoredKind::NoDefaults => {}
    }
    added
}

/// A child's path: `spec` under the root, `spec.rules` under `spec`.
fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

/// Structural defaulting as the API server does it for custom resources: for each
/// property of the schema that has a default and is absent from the object (or null where
/// the schema does not allow null), the default; then the same inside every property the
/// object has, defaults just set included, and inside every item of a list.
pub fn structural_default(schema: &Value, x: &mut Value, at: &str, added: &mut Vec<Added>) {
    match x {
        Value::Object(obj) => {
            let Some(props) = schema.get("properties").and_then(Value::as_object) else {
                return;
            };
            for (key, prop) in props {
                let Some(default) = prop.get("default") else {
                    continue;
                };
                let nullable = prop.get("nullable") == Some(&Value::Bool(true));
                let absent = match obj.get(key) {
                    None => true,
                    Some(Value::Null) => !nullable,
                    Some(_) => false,
                };
                if absent {
                    obj.insert(key.clone(), default.clone());
                    added.push(Added {
                        path: join(at, key),
                        value: default.clone(),
                    });
                }
            }
            for (key, value) in obj.iter_mut() {
                if let Some(prop) = props.get(key) {
                    structural_default(prop, value, &join(at, key), added);
                }
            }
        }
        Value::Array(items) => {
            let Some(item_schema) = schema.get("items") else {
                return;
            };
            for (i, item) in items.iter_mut().enumerate() {
                structural_default(item_schema, item, &format!("{at}[{i}]"), added);
            }
        }
        _ => {}
    }
}

/// The schema cut down to what defaulting reads: `properties` and `items` on the way to
/// every `default` (and `nullable` beside it), nothing else; None when it holds no default.
/// `skip` names top-level properties to leave out (`status`).
pub fn prune_to_defaults(schema: &Value, skip: &[&str]) -> Option<Value> {
    let mut out = Map::new();
    if let Some(default) = schema.get("default") {
        out.insert("default".into(), default.clone());
        if let Some(n) = schema.get("nullable") {
            out.insert("nullable".into(), n.clone());
        }
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        let kept: Map<String, Value> = props
            .iter()
            .filter(|(k, _)| !skip.contains(&k.as_str()))
            .filter_map(|(k, v)| prune_to_defaults(v, &[]).map(|p| (k.clone(), p)))
            .collect();
        if !kept.is_empty() {
            out.insert("properties".into(), Value::Object(kept));
        }
    }
    if let Some(items) = schema.get("items").and_then(|i| prune_to_defaults(i, &[])) {
        out.insert("items".into(), items);
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

/// `SetDefaults_Service` of Kubernetes 1.33 (`pkg/apis/core/v1/defaults.go`), on a
/// Service as JSON. For the ExternalName bridges latgen writes this is `sessionAffinity:
/// None`, `ports[].protocol: TCP` and `ports[].targetPort` = the port; the traffic
/// policies are defaulted only for the types that proxy traffic (ClusterIP, NodePort,
/// LoadBalancer), and ExternalName Services get no IP family fields or cluster IPs (the
/// registry skips them: `pkg/registry/core/service/storage/alloc.go`).
pub fn default_service(svc: &mut Value, added: &mut Vec<Added>) {
    let Some(obj) = svc.as_object_mut() else {
        return;
    };
    let spec = obj
        .entry("spec")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(spec) = spec.as_object_mut() else {
        return;
    };
    let mut set = |spec: &mut Map<String, Value>, key: &str, value: Value| {
        let empty = match spec.get(key) {
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => s.is_empty(),
            Some(_) => false,
        };
        if empty {
            spec.insert(key.to_string(), value.clone());
            added.push(Added {
                path: join("spec", key),
                value,
            });
        }
    };
    set(spec, "sessionAffinity", "None".into());
    set(spec, "type", "ClusterIP".into());
    let kind = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let external_ips = spec
        .get("externalIPs")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    let externally_accessible = matches!(kind.as_str(), "LoadBalancer" | "NodePort")
        || (kind == "ClusterIP" && external_ips);
    if externally_accessible {
        set(spec, "externalTrafficPolicy", "Cluster".into());
    }
    if matches!(kind.as_str(), "ClusterIP" | "NodePort" | "LoadBalancer") {
        set(spec, "internalTrafficPolicy", "Cluster".into());
    }
    if kind == "LoadBalancer" {
        set(spec, "allocateLoadBalancerNodePorts", Value::Bool(true));
    }
    default_service_ports(spec, added);
}

/// Each port's protocol (TCP) and target port (the port itself).
fn default_service_ports(spec: &mut Map<String, Value>, added: &mut Vec<Added>) {
    let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) else {
        return;
    };
    for (i, port) in ports.iter_mut().enumerate() {
        let Some(port) = port.as_object_mut() else {
            continue;
        };
        if port.get("protocol").is_none_or(|p| p.is_null() || p == "") {
            port.insert("protocol".into(), "TCP".into());
            added.push(Added {
                path: format!("spec.ports[{i}].protocol"),
                value: "TCP".into(),
            });
        }
        let unset = match port.get("targetPort") {
            None | Some(Value::Null) => true,
            Some(Value::Number(n)) => n.as_i64() == Some(0),
            Some(Value::String(s)) => s.is_empty(),
            Some(_) => false,
        };
        if unset && let Some(number) = port.get("port").cloned() {
            port.insert("targetPort".into(), number.clone());
            added.push(Added {
                path: format!("spec.ports[{i}].targetPort"),
                value: number,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_fill_what_is_absent_only_under_a_parent_that_exists() {
        let schema = json!({"properties": {
            "spec": {"properties": {
                "refs": {"items": {"properties": {
                    "group": {"default": "g"},
                    "kind": {"default": "K"}
                }}},
                "opt": {"properties": {"x": {"default": 1}}}
            }}
        }});
        let mut x = json!({"spec": {"refs": [{"name": "a", "kind": "Other"}, {"group": ""}]}});
        let mut added = Vec::new();
        structural_default(&schema, &mut x, "", &mut added);
        assert_eq!(
            x,
            json!({"spec": {"refs": [{"name": "a", "kind": "Other", "group": "g"}, {"group": "", "kind": "K"}]}})
        );
        let paths: Vec<&str> = added.iter().map(|a| a.path.as_str()).collect();
        assert_eq!(paths, ["spec.refs[0].group", "spec.refs[1].kind"]);
        assert_eq!(added[0].field(), "spec.refs[].group");
    }

    #[test]
    fn a_default_set_is_defaulted_inside_too() {
        let schema = json!({"properties": {"path": {
            "default": {"type": "PathPrefix"},
            "properties": {"value": {"default": "/"}, "type": {"default": "PathPrefix"}}
        }}});
        let mut x = json!({});
        let mut added = Vec::new();
        structural_default(&schema, &mut x, "", &mut added);
        assert_eq!(x, json!({"path": {"type": "PathPrefix", "value": "/"}}));
        assert_eq!(added.len(), 2);
    }

    #[test]
    fn pruning_keeps_only_the_way_to_defaults() {
        let schema = json!({"type": "object", "properties": {
            "spec": {"type": "object", "description": "d", "properties": {
                "a": {"type": "string"},
                "b": {"type": "array", "items": {"properties": {"c": {"default": 5, "maximum": 9}}}}
            }},
            "status": {"properties": {"d": {"default": []}}}
        }});
        assert_eq!(
            prune_to_defaults(&schema, &["status"]),
            Some(
                json!({"properties": {"spec": {"properties": {"b": {"items": {"properties": {"c": {"default": 5}}}}}}}})
            )
        );
        assert_eq!(
            prune_to_defaults(&json!({"properties": {"a": {}}}), &[]),
            None
        );
    }

    #[test]
    fn an_external_name_service_gets_session_affinity_and_target_ports() {
        let mut svc = json!({"spec": {"type": "ExternalName", "externalName": "x.y",
            "ports": [{"name": "http", "port": 80, "protocol": "TCP"}]}});
        let added = missing_defaults(StoredKind::Service, &mut svc);
        let fields: Vec<(String, Value)> = added.into_iter().map(|a| (a.path, a.value)).collect();
        assert_eq!(
            fields,
            [
                ("spec.sessionAffinity".to_string(), json!("None")),
                ("spec.ports[0].targetPort".to_string(), json!(80)),
            ]
        );
    }

    #[test]
    fn a_cluster_ip_service_gets_its_traffic_policy_and_type() {
        let mut svc = json!({"spec": {"ports": [{"port": 80, "targetPort": "http"}]}});
        let added = missing_defaults(StoredKind::Service, &mut svc);
        let paths: Vec<&str> = added.iter().map(|a| a.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "spec.sessionAffinity",
                "spec.type",
                "spec.internalTrafficPolicy",
                "spec.ports[0].protocol"
            ]
        );
    }

    #[test]
    fn the_embedded_route_defaults_cover_parent_and_backend_refs() {
        let mut route = json!({"spec": {
            "parentRefs": [{"name": "gw"}],
            "rules": [{"matches": [{"path": {"type": "Exact", "value": "/a"}}],
                       "backendRefs": [{"name": "s", "port": 80}]}]
        }});
        let fields: Vec<String> = missing_defaults(StoredKind::HttpRoute, &mut route)
            .iter()
            .map(Added::field)
            .collect();
        for f in [
            "spec.parentRefs[].group",
            "spec.parentRefs[].kind",
            "spec.rules[].backendRefs[].group",
            "spec.rules[].backendRefs[].kind",
            "spec.rules[].backendRefs[].weight",
        ] {
            assert!(fields.iter().any(|x| x == f), "{f} in {fields:?}");
        }
        assert_eq!(fields.len(), 5);
    }
}
