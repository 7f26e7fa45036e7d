//! Rendering as jobs: each object is a template, a context made on the thread that renders
//! it, and what the result must turn out to be; jobs run in parallel, a batch at a time,
//! and each result is checked (and, from a custom template, read back).

use std::path::{Path, PathBuf};

use super::objects::Object;
use super::readback::{CheckedFile, ReadOptions, checked_file, with_header};
pub(super) use super::readback::{Expect, Kind, file_name};
use super::templates::{Templates, template_error};
use crate::diag::{Diagnostic, Diagnostics};
use crate::manifest::layout::Side;
use crate::manifest::tree::Text;
use latgen_sim::routing::Doc;

/// How to make an object's context; made on the thread that renders it.
pub(super) type MakeObject<'a> = Box<dyn FnOnce() -> Object<'a> + Send + 'a>;

/// One object to render: the template, its context and what it must turn out to be.
pub(super) struct Job<'a> {
    pub(super) side: Side,
    pub(super) file: String,
    pub(super) template: &'static str,
    pub(super) object: MakeObject<'a>,
    pub(super) expect: Expect,
}

/// Collects the objects of a tree and renders them in parallel, a batch at a time (making
/// the contexts and rendering, and the typed read-back where there is one, are the work,
/// and independent per object; batches keep the jobs waiting in memory few).
pub(super) struct Renderer<'a> {
    templates: &'a Templates,
    jobs: Vec<Job<'a>>,
    done: Vec<RenderedObject>,
    diags: Diagnostics,
    keep_docs: bool,
    /// A tree read beside the render (the committed output folder), whose texts a rendered
    /// file takes when it is the same.
    like: Option<Like<'a>>,
}

/// The texts of a tree read beside the render, by path. Hashed: looking each rendered file
/// up in the tree's ordered map compared paths component by component, a twentieth of a
/// check's work at 10,000 apps.
type Like<'a> = std::collections::HashMap<&'a Path, &'a Text, latgen_sim::routing::Hasher>;

/// Objects rendered per parallel batch.
const BATCH: usize = 4096;

/// A rendered, checked object.
pub(super) struct RenderedObject {
    pub(super) side: Side,
    pub(super) file: String,
    pub(super) template: &'static str,
    /// Shared from here on: a check and a rollout hold it in several trees.
    pub(super) body: Text,
    /// The routing model of the object, when asked for.
    pub(super) doc: Option<Doc>,
    /// Fields the API server would add to it.
    pub(super) added: Vec<latgen_sim::stored::Added>,
}

/// The routing model of each rendered object, by path relative to the output folder in
/// order: from the typed model of a built-in template's object, from the typed read-back of
/// a custom one's; a check, and a rollout, need not parse them again.
pub(crate) type Docs = crate::manifest::tree::Docs;

impl<'a> Renderer<'a> {
    /// A renderer of no objects yet; `keep_docs` keeps each object's routing model, and a
    /// rendered text that `like` holds at the same path is `like`'s (see [`render_job`]).
    pub(super) fn new(
        templates: &'a Templates,
        keep_docs: bool,
        like: Option<&'a crate::manifest::tree::Tree>,
    ) -> Self {
        Renderer {
            templates,
            jobs: Vec::new(),
            done: Vec::new(),
            diags: Diagnostics::new(),
            keep_docs,
            like: like.map(|tree| tree.iter().map(|(p, t)| (p.as_path(), t)).collect()),
        }
    }

    pub(super) fn emit(
        &mut self,
        side: Side,
        template: &'static str,
        object: impl FnOnce() -> Object<'a> + Send + 'a,
        expect: Expect,
    ) {
        let file = file_name(expect.kind, &expect.name);
        self.emit_as(side, file, template, object, expect);
    }

    pub(super) fn emit_as(
        &mut self,
        side: Side,
        file: String,
        template: &'static str,
        object: impl FnOnce() -> Object<'a> + Send + 'a,
        expect: Expect,
    ) {
        self.jobs.push(Job {
            side,
            file,
            template,
            object: Box::new(object),
            expect,
        });
        if self.jobs.len() >= BATCH {
            self.flush();
        }
    }

    fn flush(&mut self) {
        use rayon::prelude::*;
        let templates = self.templates;
        let (keep, like) = (self.keep_docs, self.like.as_ref());
        let results: Vec<Result<RenderedObject, Diagnostic>> = std::mem::take(&mut self.jobs)
            .into_par_iter()
            .with_max_len(crate::diag::PIECE)
            .map(|job| {
                let done = render_job(templates, job, (keep, like));
                crate::diag::progress::advance(1);
                done
            })
            .collect();
        for r in results {
            match r {
                Ok(x) => self.done.push(x),
                Err(d) => self.diags.push(d),
            }
        }
    }

    pub(super) fn run(mut self) -> (Vec<RenderedObject>, Diagnostics) {
        self.flush();
        (self.done, self.diags)
    }
}

/// Renders one object. A custom template's output is read back into its typed object,
/// always; a built-in template's only with `--verify` (then it must equal the typed
/// model), since tests/suite/proof.rs and the `pipeline` fuzz target prove that it does for any
/// valid input. The routing model, when asked for, comes from a built-in template's object
/// (see [`Object::doc`]) and from the read-back of a custom one's.
///
/// A text that `like` holds at the same path is kept as `like`'s: a check holds the
/// committed folder beside the render, and most of its files are what the render makes,
/// so the two then hold one copy of each (at 100,000 apps, a quarter of a gigabyte less
/// at the check's peak) and later comparisons of them are by address.
pub(super) fn render_job(
    templates: &Templates,
    job: Job,
    (keep_doc, like): (bool, Option<&Like>),
) -> Result<RenderedObject, Diagnostic> {
    let object = (job.object)();
    let custom = templates.is_custom(job.template);
    let written = (!custom && !templates.interpret)
        .then(|| super::builtin::write(&object))
        .flatten();
    let text = match written {
        Some(text) => text,
        None => templates
            .render(job.template, object.context())
            .map_err(|e| template_error(job.template, None, &e))?,
    };
    if custom {
        templates.count_custom_output(job.template, text.len())?;
    }
    let model = (!custom && templates.verify).then(|| object.model());
    // Where the file goes under the output folder: the routing model names it by that, and
    // the tree read beside the render holds it there.
    let at = (keep_doc || like.is_some()).then(|| PathBuf::from(job.side.dir()).join(&job.file));
    let path = at.as_deref().filter(|_| keep_doc);
    let checked = if custom || templates.verify {
        let read = ReadOptions {
            keep_doc: path.filter(|_| custom),
            stored_form: custom,
            model: model.as_ref(),
        };
        checked_file(job.template, &text, &job.expect, read)?
    } else {
        CheckedFile {
            body: with_header(&text).0,
            doc: None,
            added: Vec::new(),
        }
    };
    let body = match (like, at.as_deref()) {
        (Some(like), Some(at)) => shared(like, at, checked.body),
        _ => checked.body.into(),
    };
    let doc = match (&model, path) {
        _ if custom => checked.doc,
        (Some(model), Some(p)) => model.doc(p),
        (None, Some(p)) => object.doc(p),
        (_, None) => None,
    };
    Ok(RenderedObject {
        side: job.side,
        file: job.file,
        template: job.template,
        body,
        doc,
        added: checked.added,
    })
}

/// `body` as `like`'s text at `path` when that is the same text; else as a text of its own.
fn shared(like: &Like, path: &Path, body: String) -> Text {
    match like.get(path) {
        Some(text) if ***text == *body => std::sync::Arc::clone(text),
        _ => body.into(),
    }
}
