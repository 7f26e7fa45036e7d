//! Layer 5, render (stage 4): the plan becomes Kubernetes manifests through the minijinja
//! templates in `templates/` (embedded; a folder given with `--templates` overrides them
//! file by file), filled from what the plan records and nothing worked out again. Every
//! rendered document is parsed back into its typed object and must say exactly what was
//! meant: one document, the expected kind, name and namespace, and no field the type does
//! not know. Templates cannot inject objects or keys through a value.
//!
//! - `assembly`: the whole tree, and its kustomizations; `jobs`: an object as a job;
//!   `templates`: the template set, and `builtin` the text of its most used templates
//!   written without the engine (`policy_writers` and `rule_writer` the policies and
//!   PrometheusRules of it); `lattice_side`, `kong_side`, `previews`, `monitoring`:
//!   the objects of each;
//! - `objects`: what each template is given; `typed`: the typed object a built-in template
//!   must turn it into; `readback`: a rendered document parsed back and held to it;
//! - [`between`]: objects between two versions (`render --base`); [`deploy`]: the Argo CD
//!   deploy kit; [`budget`]: the bounds on a custom template's work; [`not_stored`]: fields
//!   a custom template leaves out.

mod assembly;
pub(crate) mod between;
pub mod budget;
mod builtin;
pub(crate) mod deploy_kit;
mod jobs;
mod kong_side;
mod lattice_side;
mod monitoring;
/// The name of the recording rule a PR's summary reads to tell which apps a service counts.
pub(crate) use monitoring::APP_RATE_BY_ROUTE;
pub(crate) mod not_stored;
mod objects;
mod policy_writers;
mod preview_objects;
mod readback;
mod rule_writer;
mod templates;
mod typed;

pub(crate) use assembly::render_with_docs;
pub use assembly::{Rendered, render};
pub(crate) use jobs::Docs;
pub(crate) use monitoring::{service_rule_file, service_rule_route};
pub(crate) use readback::annotation_in;
pub(crate) use templates::yaml_scalar;
pub use templates::{TEMPLATES, Templates};
