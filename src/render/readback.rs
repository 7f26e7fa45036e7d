//! The typed read-back: a rendered document parsed back into its typed object, which must
//! say exactly what was meant — one document, the expected kind, name and namespace, no
//! field the type does not know and, for a built-in template, the typed model itself. Run
//! for every custom template (`--templates`), and for the built-in ones with `--verify`;
//! tests/suite/proof.rs proves the built-in ones without it.

use serde::Serialize;

use super::typed::{Kustomization, Model, Typed};
use crate::diag::Diagnostic;
use crate::diag::codes::Code;
use crate::manifest::layout::is_kong_file;
use crate::manifest::layout::{HEADER_COMMENT, HEADER_LINES};
use crate::plan::lattice_service::OVERRIDE_ANNOTATION;
use latgen_sim::routing::Doc;
use std::collections::BTreeMap;

/// A rendered object as it is written, and what its read-back found.
pub(super) struct CheckedFile {
    pub body: String,
    /// The routing model of a route or Service, when asked for.
    pub doc: Option<Doc>,
    /// Fields the API server would add to the object.
    pub added: Vec<latgen_sim::stored::Added>,
}

/// What the read-back of a rendered object finds besides checking it.
#[derive(Clone, Copy, Default)]
pub(super) struct ReadOptions<'m> {
    /// The routing model of a route or Service, written to this path under the output
    /// folder.
    pub keep_doc: Option<&'m std::path::Path>,
    /// The fields the API server would add to it.
    pub stored_form: bool,
    /// The typed model the document must equal (a built-in template's).
    pub model: Option<&'m Model>,
}

/// The file a rendered object is written as (the header, then the text), checked: what is
/// read back is exactly what is written after the header lines; with `read`, also what
/// else the read-back should find.
pub(super) fn checked_file(
    template: &str,
    text: &str,
    expect: &Expect,
    read: ReadOptions,
) -> Result<CheckedFile, Diagnostic> {
    let (body, head) = with_header(text);
    match typed_check(&body[head..], expect, read) {
        Ok(read) => Ok(CheckedFile {
            body,
            doc: read.doc,
            added: read.added,
        }),
        Err(why) => {
            let (_, kind) = expect.kind.api();
            let what = match expect.name.as_str() {
                "" => kind.to_string(),
                name => format!("{kind} `{name}`"),
            };
            Err(Diagnostic::error(
                Code::RenderedInvalid,
                format!("template {template} rendered an invalid {what}: {why}"),
            )
            .help("fix the template; every rendered object must parse back as the object latgen meant"))
        }
    }
}

/// What the read-back of a rendered object found.
#[derive(Debug)]
pub(super) struct ReadBack {
    /// The routing model of a route or Service, when asked for.
    pub doc: Option<Doc>,
    /// Fields the API server would add to the object.
    pub added: Vec<latgen_sim::stored::Added>,
}

/// The fields the API server would add to a typed object; `spec` alone for a custom
/// resource, where the CRD's defaults apply under `spec`.
fn added_by_server<T: Serialize>(
    kind: latgen_sim::stored::StoredKind,
    spec: &T,
) -> Vec<latgen_sim::stored::Added> {
    use latgen_sim::stored::{StoredKind, missing_defaults};
    if kind == StoredKind::NoDefaults {
        return Vec::new();
    }
    let Ok(value) = serde_json::to_value(spec) else {
        return Vec::new();
    };
    let mut object = match kind {
        StoredKind::HttpRoute => serde_json::json!({ "spec": value }),
        _ => value,
    };
    missing_defaults(kind, &mut object)
}

/// The file a rendered text is written as: the header, then the text; and where the text
/// starts in it.
pub(super) fn with_header(text: &str) -> (String, usize) {
    let head = if starts_document(text) {
        HEADER_COMMENT
    } else {
        HEADER_LINES
    };
    // With room for the closing line break, which minijinja leaves off: a string grown by
    // one byte doubles.
    let mut body = String::with_capacity(head.len() + text.len() + 1);
    body.push_str(head);
    body.push_str(text.trim_end());
    body.push('\n');
    (body, head.len())
}

/// Whether `text` has its own document start (`---`) before any content, as a custom
/// template may: the header then adds none, which would leave an empty document first.
fn starts_document(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| l == "---" || l.starts_with("--- "))
}

/// Parses `text` as one YAML document of the expected kind and checks that its typed form
/// says the same as the text (no unknown or mistyped fields) and names the expected object.
/// Finds what `read` asks for besides.
pub(super) fn typed_check(
    text: &str,
    expect: &Expect,
    read: ReadOptions,
) -> Result<ReadBack, String> {
    use gateway_api::apis::standard::{
        httproutes::HttpRouteSpec, referencegrants::ReferenceGrantSpec,
    };
    use k8s_openapi::api::core::v1::Service;
    use latgen_sim::crd::targetgrouppolicy::TargetGroupPolicySpec;
    use latgen_sim::stored::StoredKind;
    let keep = read.keep_doc;
    let stored = |kind| {
        if read.stored_form {
            kind
        } else {
            StoredKind::NoDefaults
        }
    };
    let (api_version, kind) = expect.kind.api();
    let (doc_api, doc_kind, meta, doc, added) = match expect.kind {
        Kind::HttpRoute => {
            let d: Typed<HttpRouteSpec> = parse_typed(text)?;
            same_as_model(&d, read.model)?;
            let doc = keep.map(|f| Doc::from_route(f, &d.metadata, &d.spec, is_kong_file(f)));
            let added = added_by_server(stored(StoredKind::HttpRoute), &d.spec);
            (d.api_version, d.kind, d.metadata, doc, added)
        }
        Kind::ReferenceGrant => {
            let d: Typed<ReferenceGrantSpec> = parse_typed(text)?;
            same_as_model(&d, read.model)?;
            (d.api_version, d.kind, d.metadata, None, Vec::new())
        }
        Kind::TargetGroupPolicy => {
            let d: Typed<TargetGroupPolicySpec> = parse_typed(text)?;
            same_as_model(&d, read.model)?;
            (d.api_version, d.kind, d.metadata, None, Vec::new())
        }
        Kind::IamAuthPolicy => auth_policy_read(text, &read)?,
        Kind::PrometheusRule | Kind::AccessLogPolicy | Kind::KongPlugin => {
            observability_read(text, expect.kind, &read)?
        }
        // k8s-openapi checks apiVersion and kind itself.
        Kind::Service => {
            let svc: Service = parse_typed(text)?;
            same_as_model(&svc, read.model)?;
            let doc = keep.map(|file| {
                let external = svc.spec.as_ref().and_then(|s| s.external_name.as_deref());
                Doc::from_service(file, &svc.metadata, external)
            });
            let added = added_by_server(stored(StoredKind::Service), &svc);
            (
                api_version.to_string(),
                kind.to_string(),
                svc.metadata,
                doc,
                added,
            )
        }
        Kind::Kustomization => {
            let k: Kustomization = parse_typed(text)?;
            same_as_model(&k, read.model)?;
            return if (k.api_version.as_str(), k.kind.as_str()) == (api_version, kind) {
                Ok(ReadBack {
                    doc: None,
                    added: Vec::new(),
                })
            } else {
                Err(format!("expected apiVersion {api_version} and kind {kind}"))
            };
        }
    };
    if (doc_api.as_str(), doc_kind.as_str()) != (api_version, kind) {
        return Err(format!("expected apiVersion {api_version} and kind {kind}"));
    }
    if meta.name.as_deref() != Some(expect.name.as_str()) {
        return Err(format!("metadata.name is not `{}`", expect.name));
    }
    if meta.namespace != expect.namespace {
        return Err(format!(
            "metadata.namespace is not `{}`",
            expect.namespace.as_deref().unwrap_or("")
        ));
    }
    check_override(&meta, expect)?;
    Ok(ReadBack { doc, added })
}

/// The override annotation of a route manifest, if it has one (`None` too when the text is
/// not a manifest).
pub(crate) fn annotation_in(text: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Object {
        metadata: Meta,
    }
    #[derive(serde::Deserialize)]
    struct Meta {
        #[serde(default)]
        annotations: BTreeMap<String, String>,
    }
    let object: Object = serde_saphyr::from_str(text).ok()?;
    object
        .metadata
        .annotations
        .get(OVERRIDE_ANNOTATION)
        .cloned()
}

/// A route latgen names the Lattice service of must carry the name in the override
/// annotation (a custom template could leave it out).
fn check_override(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    expect: &Expect,
) -> Result<(), String> {
    if let Some(want) = &expect.service_name {
        let have = meta
            .annotations
            .as_ref()
            .and_then(|a| a.get(OVERRIDE_ANNOTATION));
        if have != Some(want) {
            return Err(format!(
                "metadata.annotations must hold `{}: {want}` (the Lattice service name latgen.lock records; the template is given it as `service_name`)",
                OVERRIDE_ANNOTATION
            ));
        }
    }
    Ok(())
}

/// Parses one YAML document into `T` in a single pass; a field `T` does not define (at any
/// depth) is an error rather than silently dropped. A second document is an error too.
pub(super) fn parse_typed<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
    let mut ignored = Vec::new();
    // Error snippets are not needed to judge a document; skipping them is measurably
    // faster on the tens of thousands of documents of a large tree. (Comments are not
    // even scanned: serde-saphyr is built without its `comments` feature.)
    let mut options = serde_saphyr::Options::default();
    options.with_snippet = false;
    // A string written plain that reads as a number or a boolean (`1.5e3`, `yes`) is not
    // a string to Kubernetes' parser, whatever the target type says here: refused.
    options.no_schema = true;
    let value = serde_saphyr::with_deserializer_from_str_with_options(text, options, |de| {
        serde_ignored::deserialize(de, |path| ignored.push(path.to_string()))
    })
    .map_err(|e| {
        let msg = e.without_snippet().to_string();
        if msg.contains("from_str_multiple") || msg.contains("multiple documents") {
            "expected one YAML document, found more".to_string()
        } else {
            msg
        }
    })?;
    if ignored.is_empty() {
        Ok(value)
    } else {
        Err(format!(
            "it has fields its type does not define: {}",
            ignored.join(", ")
        ))
    }
}

/// A parsed document against the typed model it must equal, when there is one: the first
/// field where they differ, by its path in the document.
fn same_as_model<T: Serialize>(parsed: &T, model: Option<&Model>) -> Result<(), String> {
    let Some(model) = model else {
        return Ok(());
    };
    let have = serde_json::to_value(parsed).map_err(|e| e.to_string())?;
    match first_difference(&have, &model.json(), String::new()) {
        None => Ok(()),
        Some((path, have, want)) => Err(format!(
            "it reads back with `{path}` {have}, where latgen's model of it has {want}"
        )),
    }
}

/// The first place, in document order, where two JSON values differ: its path, and what
/// each has there (`absent` for a missing field or item).
fn first_difference(
    have: &serde_json::Value,
    want: &serde_json::Value,
    path: String,
) -> Option<(String, String, String)> {
    use serde_json::Value;
    let shown = |v: Option<&Value>| v.map_or_else(|| "absent".to_string(), Value::to_string);
    match (have, want) {
        (Value::Object(h), Value::Object(w)) => {
            let keys: std::collections::BTreeSet<&String> = h.keys().chain(w.keys()).collect();
            keys.into_iter().find_map(|k| {
                let at = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match (h.get(k), w.get(k)) {
                    (Some(a), Some(b)) => first_difference(a, b, at),
                    (a, b) => Some((at, shown(a), shown(b))),
                }
            })
        }
        (Value::Array(h), Value::Array(w)) => (0..h.len().max(w.len())).find_map(|i| {
            let at = format!("{path}[{i}]");
            match (h.get(i), w.get(i)) {
                (Some(a), Some(b)) => first_difference(a, b, at),
                (a, b) => Some((at, shown(a), shown(b))),
            }
        }),
        _ if have == want => None,
        _ => Some((path, have.to_string(), want.to_string())),
    }
}

/// The read-back of an object `observability:` adds: its identity.
fn observability_read(text: &str, kind: Kind, read: &ReadOptions) -> Result<ReadParts, String> {
    use super::monitoring::{AccessLogPolicySpec, KongPluginObject, PrometheusRuleSpec};
    match kind {
        Kind::PrometheusRule => {
            let d: Typed<PrometheusRuleSpec> = parse_typed(text)?;
            same_as_model(&d, read.model)?;
            Ok((d.api_version, d.kind, d.metadata, None, Vec::new()))
        }
        Kind::AccessLogPolicy => {
            let d: Typed<AccessLogPolicySpec> = parse_typed(text)?;
            same_as_model(&d, read.model)?;
            Ok((d.api_version, d.kind, d.metadata, None, Vec::new()))
        }
        _ => {
            let d: KongPluginObject = parse_typed(text)?;
            same_as_model(&d, read.model)?;
            Ok((d.api_version, d.kind, d.metadata, None, Vec::new()))
        }
    }
}

/// The read-back of an IAMAuthPolicy: its identity, and its auth model when asked for.
type ReadParts = (
    String,
    String,
    k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    Option<Doc>,
    Vec<latgen_sim::stored::Added>,
);

fn auth_policy_read(text: &str, read: &ReadOptions) -> Result<ReadParts, String> {
    use latgen_sim::crd::iamauthpolicy::IamAuthPolicySpec;
    let d: Typed<IamAuthPolicySpec> = parse_typed(text)?;
    same_as_model(&d, read.model)?;
    let doc = (read.keep_doc).map(|file| super::typed::auth_doc(file, &d.metadata, &d.spec));
    Ok((d.api_version, d.kind, d.metadata, doc, Vec::new()))
}

/// What a rendered document must be.
pub(super) struct Expect {
    pub(super) kind: Kind,
    pub(super) name: String,
    pub(super) namespace: Option<String>,
    /// The Lattice service name the route must carry in the override annotation.
    pub(super) service_name: Option<String>,
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Kind {
    HttpRoute,
    Service,
    ReferenceGrant,
    TargetGroupPolicy,
    IamAuthPolicy,
    Kustomization,
    PrometheusRule,
    KongPlugin,
    AccessLogPolicy,
}

impl Kind {
    pub(super) fn api(self) -> (&'static str, &'static str) {
        match self {
            Kind::HttpRoute => ("gateway.networking.k8s.io/v1", "HTTPRoute"),
            Kind::Service => ("v1", "Service"),
            Kind::ReferenceGrant => ("gateway.networking.k8s.io/v1", "ReferenceGrant"),
            Kind::TargetGroupPolicy => (
                "application-networking.k8s.aws/v1alpha1",
                "TargetGroupPolicy",
            ),
            Kind::IamAuthPolicy => ("application-networking.k8s.aws/v1alpha1", "IAMAuthPolicy"),
            Kind::Kustomization => ("kustomize.config.k8s.io/v1beta1", "Kustomization"),
            Kind::PrometheusRule => ("monitoring.coreos.com/v1", "PrometheusRule"),
            Kind::KongPlugin => ("configuration.konghq.com/v1", "KongPlugin"),
            Kind::AccessLogPolicy => ("application-networking.k8s.aws/v1alpha1", "AccessLogPolicy"),
        }
    }
}

/// File name of an object: `<kind>-<name>.yaml`, lowercase, predictable from the plan.
pub(super) fn file_name(kind: Kind, name: &str) -> String {
    // Pushed rather than formatted: one name per object, made on the thread that emits them.
    let kind = kind.api().1;
    let mut file = String::with_capacity(kind.len() + name.len() + 6);
    file.extend(kind.chars().map(|c| c.to_ascii_lowercase()));
    file.push('-');
    file.push_str(name);
    file.push_str(".yaml");
    file
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_check_refuses_unknown_fields_and_second_documents() {
        let ok = "apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  namespace: b\nspec:\n  type: ExternalName\n  externalName: x.y\n";
        let expect = Expect {
            kind: Kind::Service,
            name: "a".into(),
            namespace: Some("b".into()),
            service_name: None,
        };
        assert!(
            typed_check(ok, &expect, ReadOptions::default()).is_ok_and(|read| read.doc.is_none())
        );
        let typo = ok.replace("externalName", "externalNmae");
        assert!(typed_check(&typo, &expect, ReadOptions::default()).is_err());
        let two = format!("{ok}---\n{ok}");
        assert!(
            typed_check(&two, &expect, ReadOptions::default())
                .unwrap_err()
                .contains("one YAML document")
        );
        let renamed = ok.replace("name: a", "name: z");
        assert!(typed_check(&renamed, &expect, ReadOptions::default()).is_err());
    }

    /// A template that leaves out the `yaml` filter writes `1.5e3` (a valid host) plain:
    /// Kubernetes reads a number there, so the read-back must not take it as a string.
    #[test]
    fn typed_check_refuses_plain_strings_yaml_reads_as_numbers_or_booleans() {
        let expect = Expect {
            kind: Kind::Service,
            name: "a".into(),
            namespace: Some("b".into()),
            service_name: None,
        };
        for value in ["1.5e3", "yes", "08"] {
            let doc = |v: &str| {
                format!(
                    "apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  namespace: b\nspec:\n  type: ExternalName\n  externalName: {v}\n"
                )
            };
            let plain = typed_check(&doc(value), &expect, ReadOptions::default());
            assert!(plain.is_err(), "plain `{value}` read as a string");
            let quoted = doc(&format!("\"{value}\""));
            assert!(typed_check(&quoted, &expect, ReadOptions::default()).is_ok());
        }
    }
}
