//! Reading existing manifests: files or folders, several documents a file, `kind: List`
//! expanded, YAML or JSON (as `kubectl get -o yaml` or a GitOps repository holds them).
//! Each object keeps the file and line it came from, for findings.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};

/// A manifest larger than this is refused (an export of 10,000 apps is a few MiB a file).
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// One object of a manifest, as read.
#[derive(Debug, Clone)]
pub(crate) struct Object {
    pub kind: String,
    pub name: String,
    /// None when the manifest leaves it out (Argo CD or kustomize set it on apply).
    pub namespace: Option<String>,
    pub annotations: BTreeMap<String, String>,
    /// The spec as compact JSON, read back on each use: a JSON value holds every mapping
    /// in a B-tree node of its own, so that 30,000 specs held as values took some 130 MB
    /// of an import's peak, and as text they take a tenth of that.
    spec_json: Box<str>,
    /// The file, and the folder under the argument it was found in (`identity` for
    /// `gateway/identity/login.yaml` read as part of `gateway/`).
    pub file: PathBuf,
    pub folder: PathBuf,
    pub line: u32,
}

impl Object {
    /// The object's spec (null when it has none).
    pub fn spec(&self) -> serde_json::Value {
        // Written by `serde_json` itself: read back unless nested deeper than its limit,
        // which leaves the spec empty and the object refused for what it lacks.
        serde_json::from_str(&self.spec_json).unwrap_or_default()
    }

    pub fn span(&self) -> Span {
        Span::new(&self.file, self.line, 1)
    }

    /// `Kind namespace/name`, as a person reads it.
    pub fn label(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{} {ns}/{}", self.kind, self.name),
            None => format!("{} {}", self.kind, self.name),
        }
    }
}

#[derive(Deserialize)]
struct Doc {
    kind: Option<String>,
    metadata: Option<Meta>,
    spec: Option<serde_json::Value>,
    #[serde(default)]
    items: Vec<Doc>,
}

#[derive(Deserialize)]
struct Meta {
    name: Spanned<String>,
    namespace: Option<String>,
    #[serde(default)]
    annotations: BTreeMap<String, String>,
}

/// Every object under `inputs` (files, or folders walked in name order), or the reasons a
/// file cannot be read.
pub(crate) fn read(inputs: &[PathBuf], diags: &mut Diagnostics) -> Vec<Object> {
    use rayon::prelude::*;
    // (file, its folder under the argument), in argument order, then name order.
    let mut files = Vec::new();
    for input in inputs {
        if input.is_dir() {
            for file in crate::manifest::tree::manifest_files(input) {
                let folder = (file.parent().and_then(|p| p.strip_prefix(input).ok()))
                    .map(Path::to_path_buf)
                    .unwrap_or_default();
                files.push((file, folder));
            }
        } else if input.is_file() {
            files.push((input.clone(), PathBuf::new()));
        } else {
            diags.push(
                Diagnostic::error(
                    Code::IoError,
                    format!("{} does not exist", input.display()),
                )
                .help("name manifest files or folders, as `kubectl get -o yaml` or your GitOps repository holds them"),
            );
        }
    }
    // Parsed in parallel (an export of 10,000 apps is 20,000 files), merged in order.
    let parsed: Vec<(Vec<Object>, Diagnostics)> = (files.par_iter())
        .map(|(file, folder)| {
            let (mut objects, mut found) = (Vec::new(), Diagnostics::new());
            read_file(file, folder, &mut objects, &mut found);
            (objects, found)
        })
        .collect();
    let mut objects = Vec::new();
    for (o, found) in parsed {
        objects.extend(o);
        diags.extend(found);
    }
    objects
}

fn read_file(file: &Path, folder: &Path, out: &mut Vec<Object>, diags: &mut Diagnostics) {
    let text = match read_capped(file) {
        Ok(Some(bytes)) => match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(_) => {
                return diags.push(
                    Diagnostic::error(Code::NotUtf8, format!("{} is not UTF-8", file.display()))
                        .at(Span::file(file))
                        .help("export the manifests as UTF-8 YAML or JSON"),
                );
            }
        },
        Ok(None) => {
            return diags.push(
                Diagnostic::error(
                    Code::FileTooLarge,
                    format!("{} is over 64 MiB", file.display()),
                )
                .at(Span::file(file))
                .help("split the export into several files"),
            );
        }
        Err(e) => {
            return diags.push(
                Diagnostic::error(
                    Code::IoError,
                    format!("cannot read {}: {e}", file.display()),
                )
                .at(Span::file(file))
                .help("check the file's permissions"),
            );
        }
    };
    match serde_saphyr::from_multiple_with_options::<Option<Doc>>(&text, options()) {
        Ok(docs) => {
            for doc in docs.into_iter().flatten() {
                add(file, folder, doc, out);
            }
        }
        Err(e) => diags.push(
            Diagnostic::error(Code::YamlSyntax, e.without_snippet().to_string())
                .at(Span::file(file))
                .help("import reads Kubernetes manifests, YAML or JSON"),
        ),
    }
}

/// The file's bytes, or None when it holds more than [`MAX_FILE_BYTES`]: never more than
/// that and one byte is read, whatever the file's size says (it may grow, or be a device
/// or a FIFO that says nothing).
fn read_capped(file: &Path) -> std::io::Result<Option<Vec<u8>>> {
    use std::io::Read;
    let f = std::fs::File::open(file)?;
    if f.metadata()?.len() > MAX_FILE_BYTES {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    f.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= MAX_FILE_BYTES).then_some(bytes))
}

/// The parser's limits for an export: its defaults (which keep alias bombs and deep nesting
/// out) with room for the nodes of one `kind: List` of many apps, as `kubectl get -o yaml`
/// writes it. An app's Kong route, bridge and Lattice route are about 150 nodes, so the
/// default 250,000 stopped a List at about 1,650 apps; 4 million take about 26,000 (some
/// 45 MB of YAML), and a 64 MiB file holds not many more.
fn options() -> serde_saphyr::Options {
    let mut options = serde_saphyr::Options::default();
    let budget = options
        .budget
        .get_or_insert_with(serde_saphyr::Budget::default);
    budget.max_nodes = 4_000_000;
    budget.max_events = 16_000_000;
    options
}

fn add(file: &Path, folder: &Path, doc: Doc, out: &mut Vec<Object>) {
    if doc.kind.as_deref() == Some("List")
        || doc.kind.as_deref().is_some_and(|k| k.ends_with("List"))
    {
        for item in doc.items {
            add(file, folder, item, out);
        }
        return;
    }
    let (Some(kind), Some(meta)) = (doc.kind, doc.metadata) else {
        return;
    };
    out.push(Object {
        kind,
        line: meta.name.referenced.line() as u32,
        name: meta.name.value,
        namespace: meta.namespace,
        annotations: meta.annotations,
        spec_json: serde_json::to_string(&doc.spec.unwrap_or_default())
            .unwrap_or_default()
            .into(),
        file: file.to_path_buf(),
        folder: folder.to_path_buf(),
    });
}
