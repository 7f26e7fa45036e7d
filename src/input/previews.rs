//! Previews (`previews/*.yaml`): a PR's build of one app, reached on a host of its own.
//! Each file names the app, the preview's name, the Service that runs the build and when
//! the preview ends. Previews live in preview groups of their own, never in a production
//! group, so creating or deleting one never touches production routes.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::diag::Diagnostics;
use crate::input::confine::Project;

/// The previews folder, beside latgen.yaml.
pub(crate) const FOLDER: &str = "previews";

/// Field names of a preview, for "did you mean" hints.
pub(crate) const PREVIEW_FIELDS: &[&str] = &["app", "name", "service", "port", "expires"];

/// `latgen.yaml`'s `previews:`: where previews are reached.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PreviewsConfig {
    /// The host of each preview's Kong route: a DNS name in which `{name}` and `{app}`
    /// stand for the preview's name and its app's, e.g. `{name}.{app}.preview.example.com`.
    pub host: String,
}

/// A preview as written in `previews/<file>.yaml`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(title = "latgen preview")]
pub(crate) struct PreviewDecl {
    /// The app previewed: the name of a declaration under apps/.
    #[schemars(with = "String")]
    pub app: Spanned<String>,
    /// The preview's name, unique for its app (a DNS label, e.g. `pr-123`).
    #[schemars(with = "String")]
    pub name: Spanned<String>,
    /// The Service running the preview's build, in the app's namespace.
    #[schemars(with = "String")]
    pub service: Spanned<String>,
    /// The Service's port; defaults to the app's.
    #[schemars(with = "Option<u32>", range(min = 1, max = 65535))]
    pub port: Option<Spanned<u32>>,
    /// The last day the preview is wanted (`YYYY-MM-DD`, UTC); after it `check` warns
    /// (`preview-expired`).
    #[schemars(with = "String", regex(pattern = r"^\d{4}-\d{2}-\d{2}$"))]
    pub expires: Spanned<String>,
}

/// A preview file as read.
#[derive(Debug)]
pub(crate) struct LoadedPreview {
    pub file: PathBuf,
    pub decl: PreviewDecl,
}

/// The previews under `root/previews/`, in file order, with their texts; none when there is
/// no such folder.
pub(crate) fn read_previews(
    root: &Path,
    project: &Project,
) -> (Vec<LoadedPreview>, Vec<(PathBuf, String)>, Diagnostics) {
    let mut diags = Diagnostics::new();
    let dir = root.join(FOLDER);
    let (mut previews, mut texts) = (Vec::new(), Vec::new());
    if !dir.is_dir() {
        return (previews, texts, diags);
    }
    for file in crate::input::find_declarations(&dir, project, &mut diags) {
        let Some(text) = crate::input::read_declaration(&file, &mut diags) else {
            continue;
        };
        let decl =
            crate::input::yaml::parse_yaml::<PreviewDecl>(&file, &text, PREVIEW_FIELDS, &mut diags);
        texts.push((file.clone(), text));
        if let Some(decl) = decl {
            previews.push(LoadedPreview { file, decl });
        }
    }
    (previews, texts, diags)
}

/// A validated preview.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preview {
    /// The app previewed, by its place in the validated app list.
    pub app: crate::input::app::AppId,
    pub app_name: String,
    pub name: String,
    /// The app's namespace, where the preview's Service runs.
    pub namespace: String,
    pub service: String,
    pub port: u16,
    /// The last day the preview is wanted, UTC.
    pub expires: jiff::civil::Date,
    /// The host its Kong route answers on.
    pub host: String,
    pub file: PathBuf,
    pub name_pos: crate::input::app::Pos,
}

impl Preview {
    /// The lock's key for the preview: `<app>/<name>`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.app_name, self.name)
    }

    /// What Kong sets the dispatch header to and the preview group's rule matches:
    /// `<name>.<app>`. No app's name has a dot, so no preview's value is an app's.
    pub fn header_value(&self) -> String {
        format!("{}.{}", self.name, self.app_name)
    }

    /// The name of the preview's Kong route and of its bridge Service.
    pub fn route_name(&self) -> String {
        route_name(&self.name, &self.app_name)
    }

    /// The preview's Lattice target.
    pub fn backend(&self) -> crate::input::app::Backend {
        crate::input::app::Backend {
            namespace: self.namespace.clone(),
            service: self.service.clone(),
            port: self.port,
        }
    }
}

/// The name of a preview's Kong route and bridge: `preview-<name>-<app>`.
pub(crate) fn route_name(name: &str, app: &str) -> String {
    format!("preview-{name}-{app}")
}

/// The host of a preview from the `previews.host` pattern.
pub(crate) fn host_of(pattern: &str, name: &str, app: &str) -> String {
    pattern.replace("{name}", name).replace("{app}", app)
}
