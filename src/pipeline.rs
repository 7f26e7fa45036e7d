//! Layer 7, pipeline: the stages 1 to 4 joined, as every command runs them.
//! [`prepare`] loads, validates and plans; [`build`] also renders, in memory. Only the
//! operations (`ops`) start them, and add their own last step (writing, or handing what
//! was built to the layers that check it or judge a change).

use crate::diag::{Diagnostic, Diagnostics, Sources};
use crate::input::ProjectPaths;
use crate::input::lock::Lock;
use crate::output;
use crate::plan;
use crate::plan::prepared::Prepared;
use crate::render;
use crate::validate;

/// The outcome of the shared stages: the prepared project when no error was found, every
/// finding, and the input texts for quoting them.
#[derive(Debug)]
pub(crate) struct Run {
    pub prepared: Option<Prepared>,
    pub diags: Diagnostics,
    pub sources: Sources,
}

/// Load → validate → plan.
pub(crate) fn prepare(paths: &ProjectPaths) -> Run {
    prepare_with(paths, false).0
}

/// Load → validate → plan, with every move in the lock finished when `finish_moves`.
/// Also the lock as read, when moves are finished and it was planned for the other
/// dispatch mode (see [`Built::switched_from`]).
fn prepare_with(paths: &ProjectPaths, finish_moves: bool) -> (Run, Option<Lock>) {
    let mut diags = Diagnostics::new();
    let mut loaded = crate::input::load(paths, &mut diags);
    // Kept before any move is finished: the output it stands for is the one committed. Only
    // a rollout's target (moves finished) renders it again.
    let switched_from = (finish_moves && plan::switching(&loaded.lock, &loaded.config))
        .then(|| loaded.lock.clone());
    let mut finished_moves = Vec::new();
    if finish_moves {
        for (app, (m, _)) in std::mem::take(&mut loaded.lock.moves) {
            if let Some((group, _)) = loaded.lock.apps.get_mut(&app) {
                finished_moves.push((app, *group, m));
                *group = m.to;
            }
        }
    }
    let apps = validate::validate(&loaded, &paths.config, &mut diags);
    let previews =
        validate::preview_files::validate_previews(&loaded, &apps, &paths.config, &mut diags);
    let config_text = loaded.sources.text(&paths.config);
    validate::compat::check(
        &loaded.config,
        &apps,
        &paths.config,
        config_text,
        &mut diags,
    );
    let prepared = if diags.has_errors() {
        None
    } else {
        let rendered = output::previous::PreviousOutput::new(
            &paths.root,
            paths.output.clone(),
            &loaded.config,
        );
        let (lock, config) = (&loaded.lock, &loaded.config);
        let mut plan = placed(&apps, (lock, &paths.lock), config, &rendered, &mut diags);
        plan.previews = plan::preview_groups::place(previews, &apps, lock, config);
        plan.lock.previews = plan.previews.lock_entries();
        (!diags.has_errors()).then_some(Prepared {
            config: loaded.config,
            apps,
            plan,
            finished_moves,
            rollout: loaded.lock.rollout,
        })
    };
    diags.sort();
    let run = Run {
        prepared,
        diags,
        sources: loaded.sources,
    };
    (run, switched_from)
}

/// A project rendered in memory: the plan and the files to write.
#[derive(Debug)]
pub(crate) struct Built {
    pub prepared: Prepared,
    pub output: render::Rendered,
    /// The routing model of the output, when asked for ([`build_final`] asks: a rollout
    /// judges states of it).
    pub docs: render::Docs,
    /// Warnings found on the way (errors end the run instead).
    pub diags: Diagnostics,
    pub sources: Sources,
    /// The lock as read, when it was planned for the other dispatch mode (only with
    /// [`build_final`]): it stands for the output of a switch's base, which can then be
    /// rendered again from it ([`render_as_locked`]) rather than parsed. A later step of
    /// the switch sets it to the lock the switch started from, found in the lock's history
    /// ([`crate::rollout::origin`]): its base still holds that lock's files in part.
    pub switched_from: Option<Lock>,
    /// The output `switched_from` stands for, with its routing model, when it was known
    /// while the project was built: rendered then ([`render_as_locked`]), beside the
    /// project's own render. [`crate::rollout::steps::next_step`] sets `switched_from` to a
    /// later step's origin only where it is None, never replacing it: this render is of the
    /// lock read here.
    pub locked: Option<(crate::manifest::tree::Tree, render::Docs)>,
}

impl Built {
    /// Whether this is also the project as built without finishing moves (as `check`
    /// builds it): no move was in flight.
    pub fn no_move_finished(&self) -> bool {
        self.prepared.finished_moves.is_empty()
    }
}

/// Why a run stopped: every finding, and the input texts to quote them.
#[derive(Debug)]
pub(crate) struct Failure {
    pub diags: Diagnostics,
    pub sources: Sources,
}

/// Load → validate → plan → render, in memory. Nothing is written.
pub(crate) fn build(paths: &ProjectPaths, templates: &render::Templates) -> Result<Built, Failure> {
    build_with(paths, templates, false, None)
}

/// The output `lock` was planned for, rendered again from it in the dispatch mode it
/// records, with the project's apps and other settings: the base of a switch of dispatch
/// mode is that output, whose every routing file differs from the target's. A rollout
/// takes the documents of each base file whose text this render made too rather than
/// parsing the base: at 10,000 apps its 23 MB took about 0.9 s on two cores. The texts that
/// `like` (the base, or the output folder as read) holds are `like`'s, so that one copy is
/// kept and compared by address; without it they are compared byte by byte. None when the
/// plan or the render finds a problem: the base is then parsed, as any file this render
/// did not make.
pub(crate) fn render_as_locked(
    prepared: &Prepared,
    lock: &Lock,
    templates: &render::Templates,
    like: Option<&crate::manifest::tree::Tree>,
) -> Option<(crate::manifest::tree::Tree, render::Docs)> {
    let mut config = prepared.config.clone();
    config.lattice.dispatch = lock.dispatch;
    // The findings are not this run's: only the output is used, and only where it is the
    // base's byte for byte (the lock's path only places them).
    let mut diags = Diagnostics::new();
    let apps = &prepared.apps;
    let lock_file = std::path::Path::new("latgen.lock");
    let plan = placed(
        apps,
        (lock, lock_file),
        &config,
        &plan::NoPrevious,
        &mut diags,
    );
    if diags.has_errors() {
        return None;
    }
    let (output, docs) = render::render_with_docs(&plan, apps, &config, templates, like).ok()?;
    Some((output.files, docs))
}

/// The plan of `apps`: each path-routed app in its group, each Lattice service named.
fn placed(
    apps: &[crate::input::app::App],
    (lock, lock_file): (&Lock, &std::path::Path),
    config: &crate::input::config::Config,
    previous: &dyn plan::Previous,
    diags: &mut Diagnostics,
) -> plan::Plan {
    let mut plan = plan::plan_with(apps, lock, lock_file, config, previous, diags);
    plan::services::assign(&mut plan, apps, lock, config, diags);
    plan
}

/// A tree read beside a build (the committed output folder), once it has been read: the
/// render takes the texts it holds too, so that the two hold one copy of each.
pub(crate) type Beside = std::sync::OnceLock<Result<crate::manifest::tree::Tree, Diagnostic>>;

/// [`build`] with every move in the lock finished: the target `render --base` steps toward.
/// A text the render makes that `beside` holds (read by the time the render starts) is
/// `beside`'s.
pub(crate) fn build_final(
    paths: &ProjectPaths,
    templates: &render::Templates,
    beside: Option<&Beside>,
) -> Result<Built, Failure> {
    build_with(paths, templates, true, beside)
}

fn build_with(
    paths: &ProjectPaths,
    templates: &render::Templates,
    finish_moves: bool,
    beside: Option<&Beside>,
) -> Result<Built, Failure> {
    let (run, switched_from) = prepare_with(paths, finish_moves);
    let Some(prepared) = run.prepared else {
        return Err(Failure {
            diags: run.diags,
            sources: run.sources,
        });
    };
    let (plan, apps, config) = (&prepared.plan, &prepared.apps, &prepared.config);
    let mut locked = None;
    let rendered = if finish_moves {
        let like = beside.and_then(|b| b.get()?.as_ref().ok());
        // A switch's base is rendered again beside the target (see `render_as_locked`):
        // its plan takes one core, which the target's render leaves idle in parts.
        let (rendered, base) = rayon::join(
            || render::render_with_docs(plan, apps, config, templates, like),
            || {
                (switched_from.as_ref())
                    .and_then(|l| render_as_locked(&prepared, l, templates, like))
            },
        );
        locked = base;
        rendered
    } else {
        render::render(plan, apps, config, templates).map(|o| (o, render::Docs::default()))
    };
    match rendered {
        Ok((output, docs)) => {
            let mut diags = run.diags;
            diags.extend(render::not_stored::not_stored_findings(&output, templates));
            diags.sort();
            Ok(Built {
                prepared,
                output,
                docs,
                diags,
                sources: run.sources,
                switched_from,
                locked,
            })
        }
        Err(mut diags) => {
            diags.extend(run.diags);
            diags.sort();
            Err(Failure {
                diags,
                sources: run.sources,
            })
        }
    }
}

/// A project built as far as it goes, as the PR gate judges it: the shared stages'
/// outcome and, for a project that could be planned, its render with the routing model,
/// or the render's errors (the plan's own findings still count then).
#[derive(Debug)]
pub(crate) struct Partial {
    pub run: Run,
    pub rendered: Option<Result<(render::Rendered, render::Docs), Diagnostics>>,
}

/// The render, with the routing model, of what [`prepare`] made, in memory, keeping the plan
/// when the render fails (see [`Partial`]). A text the render makes that `like` holds is
/// `like`'s.
pub(crate) fn render_partial(
    mut run: Run,
    templates: &render::Templates,
    like: Option<&crate::manifest::tree::Tree>,
) -> Partial {
    let rendered = (run.prepared.as_ref())
        .map(|p| render::render_with_docs(&p.plan, &p.apps, &p.config, templates, like));
    if let Some(Ok((out, _))) = &rendered {
        run.diags
            .extend(render::not_stored::not_stored_findings(out, templates));
    }
    Partial { run, rendered }
}

impl From<Built> for Partial {
    fn from(b: Built) -> Partial {
        Partial {
            run: Run {
                prepared: Some(b.prepared),
                diags: b.diags,
                sources: b.sources,
            },
            rendered: Some(Ok((b.output, b.docs))),
        }
    }
}
