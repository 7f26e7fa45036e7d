//! A model of what Argo CD does with the Lattice Application's routes on a sync, and of what
//! Argo Rollouts' Gateway API plugin does to a route during a canary, written from their
//! source so the deploy kit can be tested against both. Modelled, and the same in both for
//! an HTTPRoute:
//!
//! - Argo CD v3.5.1, the newest release, and master at 37ee009 (August 2026). Master's fix
//!   #28220 (`controller/sync.go`) builds the copy of ignored fields below as a strategic
//!   merge patch from the CRD's OpenAPI schema; apimachinery v0.36.1 reads only
//!   `x-kubernetes-patch-strategy` and `x-kubernetes-patch-merge-key` from a schema
//!   (`pkg/util/strategicpatch/types.go`), which the HTTPRoute CRD (v1.6.1) does not set:
//!   `spec.rules` is `x-kubernetes-list-type: atomic`, so the list is replaced whole
//!   (`handleSliceDiff` in `patch.go`), as the JSON merge patch of v3.5.1 does.
//! - Argo CD's default diff and apply: client-side, with the last-applied-configuration
//!   annotation (no `ServerSideApply`, no server-side diff, neither of which the kit sets).
//! - The plugin v0.15.0 (argoproj-labs/rollouts-plugin-trafficrouter-gatewayapi).
//!
//! The model's steps, each citing where it comes from:
//!
//! 1. Normalize: `del(EXPR)` for each jq path expression of the route's `ignoreDifferences`
//!    (`util/argo/normalizers/diff_normalizer.go`), run by a real jq, as gojq runs it there.
//! 2. Synced or not: the three-way diff for a kind without a Go type (gitops-engine
//!    `pkg/diff/diff.go`, `ThreeWayDiff`): last-applied, target and live normalized; live
//!    trimmed to the fields last-applied has (`pkg/utils/json/json.go`,
//!    `RemoveMapFields`); a three-way JSON merge patch; Synced when it changes nothing.
//! 3. Whether a sync starts: the automated sync the kit sets starts one only when the
//!    Application is OutOfSync (`controller/appcontroller.go`, `autoSync`).
//! 4. What a sync applies: every object, or with `ApplyOutOfSyncOnly=true` only those not
//!    Synced (gitops-engine `pkg/sync/sync_context.go`, `filterOutOfSyncTasks`); each as
//!    in Git, or with `RespectIgnoreDifferences=true` as `normalizeTargetResources` makes it
//!    (`controller/sync.go`): a JSON merge patch (RFC 7386) from normalized live to live,
//!    applied to the normalized target, then `restoreNonIgnoredFields`, which puts back a
//!    target's field only where the normalizer left it unchanged.
//! 5. The apply: `kubectl apply` of a custom resource is a three-way JSON merge patch of
//!    last-applied, the applied object and live (apimachinery `jsonmergepatch`,
//!    `CreateThreeWayJSONMergePatch`); the applied object becomes last-applied.
//!
//! The plugin (`pkg/plugin/httproute.go`, `labels.go`): it sets the weight of every
//! backendRef named as the canary Service and the rest on the one named as the stable
//! Service, in every rule, and labels the route `rollouts.argoproj.io/gatewayapi-canary=
//! in-progress` while the canary's weight is not 0, removing the label when it is 0.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};

use serde_json::{Map, Value, json};

/// The label the plugin puts on each route it changes while a canary runs
/// (`internal/defaults/defaults.go`).
pub const IN_PROGRESS: &str = "rollouts.argoproj.io/gatewayapi-canary";

/// Runs jq `program` on `input` and parses its one output.
pub fn jq(program: &str, input: &Value) -> Value {
    let mut child = Command::new("jq")
        .args(["-c", program])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("jq is installed (.ci/run installs it)");
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "jq {program}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("jq prints JSON")
}

/// What Argo CD compares of `object`: the object with every expression's paths deleted.
pub fn normalized(object: &Value, exprs: &[String]) -> Value {
    if exprs.is_empty() {
        return object.clone();
    }
    let program: Vec<String> = exprs.iter().map(|e| format!("del({e})")).collect();
    jq(&program.join(" | "), object)
}

/// The Lattice Application as Argo CD reads it: the jq expressions of its
/// `ignoreDifferences` by route name, and its sync options.
#[derive(Debug, Clone)]
pub struct Kit {
    pub ignores: BTreeMap<String, Vec<String>>,
    pub options: Vec<String>,
}

impl Kit {
    /// Reads the kit's `application-lattice.yaml`.
    pub fn read(text: &str) -> Kit {
        let app: Value = serde_saphyr::from_str(text).expect("the Application parses");
        let mut ignores: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for e in app["spec"]["ignoreDifferences"]
            .as_array()
            .into_iter()
            .flatten()
        {
            assert_eq!(e["kind"], "HTTPRoute", "the model knows routes only");
            let exprs = e["jqPathExpressions"].as_array().expect("jq expressions");
            let route = e["name"].as_str().expect("a route name").to_string();
            let list = ignores.entry(route).or_default();
            list.extend(exprs.iter().map(|x| x.as_str().unwrap().to_string()));
        }
        let options = app["spec"]["syncPolicy"]["syncOptions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|o| o.as_str().unwrap().to_string())
            .collect();
        Kit { ignores, options }
    }

    fn has(&self, option: &str) -> bool {
        self.options.iter().any(|o| o == option)
    }

    fn exprs(&self, route: &str) -> &[String] {
        self.ignores.get(route).map_or(&[], Vec::as_slice)
    }
}

/// One route in the cluster: the live object, and the last-applied-configuration
/// annotation `kubectl apply` keeps on it (held apart here, as the diff reads it apart).
#[derive(Debug, Clone)]
pub struct Live {
    pub object: Value,
    pub last_applied: Value,
}

/// The Lattice routes in the workload cluster, by name.
#[derive(Debug, Clone, Default)]
pub struct Cluster {
    pub routes: BTreeMap<String, Live>,
}

/// What one sync did: the routes it applied, by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Synced {
    pub applied: Vec<String>,
}

impl Cluster {
    /// Whether Argo CD shows the route as Synced with `target` (step 2).
    pub fn is_synced(&self, kit: &Kit, target: &Value) -> bool {
        let name = target["metadata"]["name"].as_str().unwrap();
        let Some(live) = self.routes.get(name) else {
            return false;
        };
        let exprs = kit.exprs(name);
        let (orig, config) = (
            normalized(&live.last_applied, exprs),
            normalized(target, exprs),
        );
        let live = normalized(&live.object, exprs);
        let trimmed = remove_fields(&orig, &live);
        let patch = three_way_patch(&orig, &config, &trimmed);
        merge_apply(&live, &patch) == live
    }

    /// Whether every route of `targets` is Synced.
    pub fn all_synced(&self, kit: &Kit, targets: &[Value]) -> bool {
        targets.iter().all(|t| self.is_synced(kit, t))
    }

    /// What the kit's automated sync does when Git holds `targets`: nothing while every
    /// route is Synced (`autoSync` in `controller/appcontroller.go` syncs only an
    /// OutOfSync Application), else a sync.
    pub fn sync(&mut self, kit: &Kit, targets: &[Value]) -> Synced {
        self.sync_racing(kit, targets, |_| {})
    }

    /// [`Cluster::sync`], during which `meanwhile` changes the cluster after Argo CD read it and before
    /// it applies (Argo Rollouts taking a step): the objects to apply are made from what was
    /// read, and each apply patches the cluster as it is then.
    pub fn sync_racing(
        &mut self,
        kit: &Kit,
        targets: &[Value],
        meanwhile: impl FnOnce(&mut Cluster),
    ) -> Synced {
        if self.all_synced(kit, targets) {
            return Synced { applied: vec![] };
        }
        let mut to_apply = Vec::new();
        for target in targets {
            let name = target["metadata"]["name"].as_str().unwrap().to_string();
            if kit.has("ApplyOutOfSyncOnly=true") && self.is_synced(kit, target) {
                continue;
            }
            let object = match self.routes.get(&name) {
                Some(live) if kit.has("RespectIgnoreDifferences=true") => {
                    normalize_target(target, &live.object, kit.exprs(&name))
                }
                _ => target.clone(),
            };
            to_apply.push((name, object));
        }
        meanwhile(self);
        let applied = to_apply.iter().map(|(n, _)| n.clone()).collect();
        for (name, object) in to_apply {
            self.apply(&name, object);
        }
        Synced { applied }
    }

    /// `kubectl apply` of `object` (step 5).
    fn apply(&mut self, name: &str, object: Value) {
        let live = match self.routes.remove(name) {
            None => object.clone(),
            Some(live) => {
                let patch = three_way_patch(&live.last_applied, &object, &live.object);
                merge_apply(&live.object, &patch)
            }
        };
        let last_applied = object;
        self.routes.insert(
            name.to_string(),
            Live {
                object: live,
                last_applied,
            },
        );
    }

    /// The plugin's `SetWeight` on route `name` for a Rollout with these stable and canary
    /// Services: `weight` to the canary, the rest to the stable Service, in every rule; the
    /// in-progress label while the canary's weight is not 0. A full update of the object:
    /// last-applied stays as it was.
    pub fn set_weight(&mut self, name: &str, (stable, canary): (&str, &str), weight: i64) {
        let live = &mut self.routes.get_mut(name).expect("the route is live").object;
        let (mut stable_found, mut canary_found) = (false, false);
        for rule in live["spec"]["rules"].as_array_mut().unwrap() {
            for b in rule["backendRefs"].as_array_mut().into_iter().flatten() {
                if b["name"] == canary {
                    b["weight"] = weight.into();
                    canary_found = true;
                } else if b["name"] == stable {
                    b["weight"] = (100 - weight).into();
                    stable_found = true;
                }
            }
        }
        // The plugin refuses a route without both backends (BackendRefWasNotFoundInHTTPRouteError).
        assert!(
            stable_found && canary_found,
            "{name} has no {stable}/{canary}"
        );
        let labels = &mut live["metadata"]["labels"];
        if labels.is_null() {
            *labels = json!({});
        }
        let labels = labels.as_object_mut().unwrap();
        if weight == 0 {
            labels.remove(IN_PROGRESS);
        } else {
            labels.insert(IN_PROGRESS.to_string(), "in-progress".into());
        }
    }

    /// The live route `name`.
    pub fn route(&self, name: &str) -> &Value {
        &self.routes[name].object
    }
}

/// The object a sync with `RespectIgnoreDifferences=true` applies (step 4): the live values
/// of the ignored fields copied into the target by a merge patch, then the target's fields
/// the normalizer left alone restored.
fn normalize_target(target: &Value, live: &Value, exprs: &[String]) -> Value {
    let without_status = |v: &Value| {
        let mut v = v.clone();
        if let Some(o) = v.as_object_mut() {
            o.remove("status");
        }
        v
    };
    let normalized_live = normalized(live, exprs);
    let normalized_target = normalized(target, exprs);
    let live_patch = merge_diff(&without_status(&normalized_live), &without_status(live));
    let mut patched = merge_apply(&normalized_target, &live_patch);
    restore_non_ignored(&mut patched, target, &normalized_target, &normalized_live);
    patched
}

/// `restoreNonIgnoredFields`: walks the maps of the patched target, the target as in Git,
/// the normalized target and the normalized live object together; a field that is not a
/// map in all three is given back its Git value only where the normalized target equals
/// the target (the normalizer did not touch it). A key the target lacks and normalized live
/// has is dropped.
fn restore_non_ignored(patched: &mut Value, original: &Value, normalized: &Value, live: &Value) {
    let (Some(p), Some(o)) = (patched.as_object_mut(), original.as_object()) else {
        return;
    };
    let n = normalized.as_object();
    for (key, ov) in o {
        let nv = n.and_then(|n| n.get(key));
        let all_maps = p.get(key).is_some_and(Value::is_object)
            && ov.is_object()
            && nv.is_some_and(Value::is_object);
        if all_maps {
            let lv = live.get(key).cloned().unwrap_or(Value::Null);
            restore_non_ignored(p.get_mut(key).unwrap(), ov, nv.unwrap(), &lv);
            continue;
        }
        if nv == Some(ov) && p.get(key) != Some(ov) {
            p.insert(key.clone(), ov.clone());
        }
    }
    let live_keys = live.as_object();
    p.retain(|k, _| o.contains_key(k) || !live_keys.is_some_and(|l| l.contains_key(k)));
}

/// The JSON merge patch (RFC 7386) that turns `from` into `to`. Arrays are values: one that
/// differs is replaced whole.
pub fn merge_diff(from: &Value, to: &Value) -> Value {
    let (Some(a), Some(b)) = (from.as_object(), to.as_object()) else {
        return to.clone();
    };
    let mut patch = Map::new();
    for (k, bv) in b {
        match a.get(k) {
            Some(av) if av == bv => {}
            Some(av) if av.is_object() && bv.is_object() => {
                patch.insert(k.clone(), merge_diff(av, bv));
            }
            _ => {
                patch.insert(k.clone(), bv.clone());
            }
        }
    }
    for k in a.keys().filter(|k| !b.contains_key(*k)) {
        patch.insert(k.clone(), Value::Null);
    }
    Value::Object(patch)
}

/// Applies a JSON merge patch (RFC 7386): null deletes, an object merges, anything else
/// replaces.
pub fn merge_apply(target: &Value, patch: &Value) -> Value {
    let Some(p) = patch.as_object() else {
        return patch.clone();
    };
    let mut out = target.as_object().cloned().unwrap_or_default();
    for (k, pv) in p {
        if pv.is_null() {
            out.remove(k);
        } else {
            let merged = merge_apply(out.get(k).unwrap_or(&Value::Null), pv);
            out.insert(k.clone(), merged);
        }
    }
    Value::Object(out)
}

/// A three-way JSON merge patch: the additions and changes from `current` to `modified`,
/// and the deletions from `original` (last-applied) to `modified`, so a field another
/// writer added and last-applied never had stays.
fn three_way_patch(original: &Value, modified: &Value, current: &Value) -> Value {
    let changes = filter_nulls(&merge_diff(current, modified), false);
    let deletions = filter_nulls(&merge_diff(original, modified), true);
    merge_apply(&deletions, &changes)
}

/// The part of a merge patch that deletes (`keep_nulls`) or the part that sets. A nested
/// object that ends up empty is no change; an empty object that is set stays one.
fn filter_nulls(patch: &Value, keep_nulls: bool) -> Value {
    let Some(p) = patch.as_object() else {
        return patch.clone();
    };
    let mut out = Map::new();
    for (k, v) in p {
        match v {
            Value::Null if keep_nulls => {
                out.insert(k.clone(), Value::Null);
            }
            Value::Null => {}
            Value::Object(o) if !o.is_empty() => {
                let sub = filter_nulls(v, keep_nulls);
                if sub.as_object().is_some_and(|s| !s.is_empty()) {
                    out.insert(k.clone(), sub);
                }
            }
            _ if !keep_nulls => {
                out.insert(k.clone(), v.clone());
            }
            _ => {}
        }
    }
    Value::Object(out)
}

/// `live` with only the fields `config` has (an array's items by position; items past the
/// end of `config`'s kept whole), as the diff trims what other writers added.
fn remove_fields(config: &Value, live: &Value) -> Value {
    match (config, live) {
        (Value::Object(c), Value::Object(l)) => Value::Object(
            c.iter()
                .filter_map(|(k, cv)| {
                    let lv = l.get(k)?;
                    let v = if lv.is_null() {
                        Value::Null
                    } else {
                        remove_fields(cv, lv)
                    };
                    Some((k.clone(), v))
                })
                .collect(),
        ),
        (Value::Array(c), Value::Array(l)) => Value::Array(
            l.iter()
                .enumerate()
                .map(|(i, lv)| match c.get(i) {
                    Some(cv) if !lv.is_null() => remove_fields(cv, lv),
                    _ => lv.clone(),
                })
                .collect(),
        ),
        _ => live.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 7386's appendix examples that bear on the model: a member set, removed, an
    /// object merged, an array replaced whole.
    #[test]
    fn merge_patches_follow_rfc_7386() {
        let cases = [
            (json!({"a": "b"}), json!({"a": "c"}), json!({"a": "c"})),
            (json!({"a": "b"}), json!({"a": null}), json!({})),
            (
                json!({"a": {"b": "c"}}),
                json!({"a": {"b": "d", "c": null}}),
                json!({"a": {"b": "d"}}),
            ),
            (
                json!({"a": [{"b": "c"}]}),
                json!({"a": [1]}),
                json!({"a": [1]}),
            ),
        ];
        for (target, patch, want) in cases {
            assert_eq!(merge_apply(&target, &patch), want, "{target} + {patch}");
        }
        let (from, to) = (
            json!({"a": [1, 2], "b": 1, "c": {"d": 1}}),
            json!({"a": [1], "c": {"d": 2}}),
        );
        assert_eq!(
            merge_diff(&from, &to),
            json!({"a": [1], "b": null, "c": {"d": 2}})
        );
        assert_eq!(merge_apply(&from, &merge_diff(&from, &to)), to);
    }

    /// kubectl apply keeps what another writer added and last-applied never had, and
    /// deletes what last-applied had and the applied object drops.
    #[test]
    fn an_apply_keeps_others_fields_and_drops_its_own() {
        let last = json!({"metadata": {"labels": {"a": "1", "b": "1"}}});
        let live = json!({"metadata": {"labels": {"a": "1", "b": "1", "other": "x"}}});
        let object = json!({"metadata": {"labels": {"a": "2"}}});
        let patch = three_way_patch(&last, &object, &live);
        assert_eq!(
            merge_apply(&live, &patch),
            json!({"metadata": {"labels": {"a": "2", "other": "x"}}})
        );
    }
}
