//! `latgen status`: the rollouts in flight, offline: the moves the lock records, each app's
//! address for the callers that call it straight at Lattice, and (with `--base`) where the
//! output stands between that revision and what the inputs say, with the command that
//! takes each one step further; for people, or as JSON (`--format json`).

use serde_json::{Value, json};

use super::shell::{Exit, Ui};
use crate::check::same_owned;
use crate::diag::{Diagnostic, Sources};
use crate::input::ProjectPaths;
use crate::input::app::AppId;
use crate::input::environments::lock_shown;
use crate::manifest::tree::Tree;
use crate::plan::prepared::Prepared;
use crate::render::Templates;
use crate::rollout::addresses::{Address, Release};
use crate::rollout::steps::NextStep;

/// A value of `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum StatusFormat {
    Human,
    Json,
}

/// Says the rollouts in flight in each environment `envs` holds; with `base`, also how far
/// each stands from that Git revision.
pub(crate) fn run(
    (base, format): (Option<&str>, StatusFormat),
    envs: Result<Vec<ProjectPaths>, Diagnostic>,
    ui: Ui,
) -> Exit {
    // JSON names each environment in its own line: no heading then.
    let heading = match format {
        StatusFormat::Human => super::project::Heading::Stdout,
        StatusFormat::Json => super::project::Heading::Stderr,
    };
    super::project::per_env(envs, (ui, heading), |paths| {
        status_env((base, format), &paths, ui)
    })
}

/// A move the lock records or the plan decides: app, the groups it leaves and goes to, and
/// the step it is at (None: not started, the app outgrew its group).
type Moving = (String, u32, u32, Option<u32>);

/// An app's address for its direct callers, and the one it is moving to.
struct AppAddress {
    app: String,
    callers: usize,
    now: Option<Address>,
    moving_to: Option<Address>,
}

/// Where the output stands between a base revision and the target.
enum FromBase {
    /// The base holds the target.
    Done,
    /// Steps shipped, the rollout's length, and the addresses a step holds.
    Steps(u32, u32, Vec<Release>),
    /// The next step (its number, the rollout's length, whether it ends the change) is
    /// written in the output folder and the lock, not yet merged; and the addresses a later
    /// step holds.
    Written(u32, u32, bool, Vec<Release>),
    /// The change cannot go further in safe steps.
    Stuck,
}

/// One environment's rollouts (the project's, without environments).
fn status_env((base, format): (Option<&str>, StatusFormat), paths: &ProjectPaths, ui: Ui) -> Exit {
    let Some(built) = super::project::build(paths, None, false, ui) else {
        return Exit::Error;
    };
    ui.report(&built.diags, &built.sources);
    let here = match crate::output::read_tree(&paths.output) {
        Ok(t) => crate::output::manifests(&t).into_owned(),
        Err(d) => return ui.fail(d, &built.sources),
    };
    // A rollout the lock records is a step `render --base` wrote; else the output folder
    // holds a change (a move `move` or `plan --apply` recorded, a new app) once it is what
    // `latgen render` writes from the inputs and the lock as they are.
    let rendered = built.prepared.rollout.is_some() || same_owned(&here, &built.output.files);
    // Only the plan is kept: the rendered output is dropped before the target is built.
    let prepared = {
        let built = built;
        built.prepared
    };
    let moves = moving(&prepared);
    let addresses: Vec<AppAddress> = AppId::enumerate(&prepared.apps)
        .map(|(id, app)| {
            let (now, moving_to) = crate::rollout::addresses::planned(&prepared, id);
            AppAddress {
                app: app.name.clone(),
                callers: app.callers.len(),
                now,
                moving_to,
            }
        })
        .collect();
    let from_base = match base {
        Some(rev) => match rollout(paths, rev, &here, ui) {
            Ok(b) => b,
            Err(exit) => return exit,
        },
        None => None,
    };
    let exit = match from_base {
        Some(FromBase::Stuck) => Exit::Found,
        _ => Exit::Success,
    };
    let (env, rev) = (paths.env_flag(), base.unwrap_or_default());
    match format {
        StatusFormat::Human => {
            let recorded = prepared.rollout;
            print!(
                "{}",
                human((paths, &prepared), (&moves, rendered), &addresses)
            );
            let pending = recorded.is_some() || !moves.is_empty() || !rendered;
            match (&from_base, base) {
                (Some(b), _) => print!("{}", human_base(b, rev, paths)),
                (None, None) => print!("{}", next_without_base(recorded, pending, &env)),
                // The base has no output folder: nothing to count from.
                (None, Some(_)) => {}
            }
        }
        StatusFormat::Json => {
            let mut doc = to_json(&prepared, &moves, &addresses);
            if let Some(b) = &from_base {
                doc["base"] = base_json(b, rev);
            }
            doc["rendered"] = json!(rendered);
            if let Some(env) = prepared.config.env_name() {
                doc["environment"] = json!(env);
            }
            println!("{doc}");
        }
    }
    exit
}

/// The moves in flight (in the lock) and those the plan decides (apps that outgrew their
/// group), in name order.
fn moving(prepared: &Prepared) -> Vec<Moving> {
    let lock = &prepared.plan.lock;
    let mut out: Vec<Moving> = (lock.moves.iter())
        .map(|(app, m)| {
            let from = lock.apps.get(app).copied().unwrap_or(0);
            (app.clone(), from, m.to, Some(m.step.number()))
        })
        .collect();
    out.extend(
        prepared
            .plan
            .outgrown
            .iter()
            .map(|o| (prepared.apps[o.app].name.clone(), o.from, o.to, None)),
    );
    out
}

/// The rollout the lock records, the moves, and the address of each app that declares
/// callers of its own.
fn human(
    (paths, prepared): (&ProjectPaths, &Prepared),
    (moves, rendered): (&[Moving], bool),
    addresses: &[AppAddress],
) -> String {
    let recorded = prepared.rollout;
    let group = |n: u32| prepared.config.group_name(n);
    let (lock, folder) = (lock_shown(paths.env_name()), paths.output.display());
    let mut out = String::new();
    if moves.is_empty() && recorded.is_none() {
        out.push_str(&match rendered {
            true => "rollout: none in flight\n".to_string(),
            false => format!(
                "rollout: a change the inputs and {lock} hold is not rendered yet: {folder} does not hold it\n"
            ),
        });
    }
    if let Some(r) = recorded {
        out.push_str(&format!(
            "rollout: step {} of {} is what {folder} and {lock} hold\n",
            r.step, r.of,
        ));
    }
    for (app, from, to, step) in moves {
        let (from, to) = (group(*from), group(*to));
        out.push_str(&match step {
            Some(n) if rendered => format!("move: {app} from {from} to {to}, step {n} of 3\n"),
            Some(n) => format!(
                "move: {app} from {from} to {to}, recorded in {lock}; step {n} of 3 is not rendered yet\n"
            ),
            None => {
                format!("move: {app} from {from} to {to}, not started: it no longer fits {from}\n")
            }
        });
    }
    for a in addresses.iter().filter(|a| a.callers > 0) {
        let Some(now) = &a.now else { continue };
        out.push_str(&format!(
            "address: {} (callers of its own call it here): {}",
            a.app,
            now.show()
        ));
        if let Some(to) = &a.moving_to {
            out.push_str(&format!(" until its move ends, then {}", to.show()));
        }
        out.push('\n');
    }
    out
}

/// What to run next when no base is given.
fn next_without_base(
    recorded: Option<crate::input::lock::Rollout>,
    in_flight: bool,
    env: &str,
) -> String {
    match recorded {
        Some(r) => format!(
            "next: once step {} is merged and live, `latgen render{env} --base auto` writes step {}; `latgen status{env} --base auto` counts the steps left\n",
            r.step,
            r.step + 1
        ),
        None if in_flight => format!(
            "next: `latgen render{env} --base auto` writes the first step (one PR); `latgen status{env} --base auto` counts the steps\n"
        ),
        None => String::new(),
    }
}

/// Where the output stands between `rev` and the target, and what to run next.
fn human_base(b: &FromBase, rev: &str, paths: &ProjectPaths) -> String {
    let env = paths.env_flag();
    let shown = if rev == "auto" {
        "the default branch"
    } else {
        rev
    };
    match b {
        FromBase::Done => format!("rollout: none; {shown} holds what `latgen render` writes\n"),
        FromBase::Written(n, of, completes, held) => {
            let then = if *completes {
                "the change is complete".to_string()
            } else {
                format!("`latgen render{env} --base {rev}` writes step {}", n + 1)
            };
            let mut out = format!(
                "rollout: step {n} of {of} is written in {} and {}, not yet in {shown}; next: merge its PR; once it is live, {then}\n",
                paths.output.display(),
                lock_shown(paths.env_name())
            );
            out.push_str(&held_lines(held, (&env, rev), *of, false));
            out
        }
        FromBase::Stuck => format!(
            "rollout: the change from {shown} cannot go further in safe steps; `latgen render{env} --base {rev}` says why\n"
        ),
        FromBase::Steps(shipped, of, held) => {
            let held_now = shipped + 1 == *of && !held.is_empty();
            let mut out = if held_now {
                format!(
                    "rollout: {shipped} of {of} steps shipped in {shown}; step {of} is held: it takes addresses away from callers that call their apps straight\n"
                )
            } else {
                format!(
                    "rollout: {shipped} of {of} steps shipped in {shown}; next: `latgen render{env} --base {rev}` writes step {}\n",
                    shipped + 1
                )
            };
            out.push_str(&held_lines(held, (&env, rev), *of, held_now));
            out
        }
    }
}

/// The addresses a step holds, and the command that releases them; `now` when the held
/// step is the next one.
fn held_lines(held: &[Release], (env, rev): (&str, &str), of: u32, now: bool) -> String {
    let mut out = String::new();
    for r in held {
        out.push_str(&format!("held: {}\n", r.show()));
    }
    if !held.is_empty() {
        let release: String = (held.iter())
            .map(|r| format!(" --release-old-address {}", r.app))
            .collect();
        out.push_str(&format!(
            "{}: once those callers call the new address, `latgen render{env} --base {rev}{release}` writes step {of}\n",
            if now { "next" } else { "then" }
        ));
    }
    out
}

/// Where the output stands between `rev` and the target; None when `rev` has no output.
/// `here` is the output folder's manifests, which may be the next step already written.
fn rollout(paths: &ProjectPaths, rev: &str, here: &Tree, ui: Ui) -> Result<Option<FromBase>, Exit> {
    let templates = Templates::load(None).map_err(|d| ui.fail(d, &Sources::default()))?;
    let (resolved, base) = match crate::rollout::git::base_tree_of(paths, Some(rev), here) {
        Ok(Some(b)) => b,
        Ok(None) => return Ok(None),
        Err(d) => return Err(ui.fail(d, &Sources::default())),
    };
    let base = crate::output::manifests(&base).into_owned();
    let shipped = crate::rollout::steps::shipped(&paths.lock, &resolved);
    let built = crate::pipeline::build_final(paths, &templates, None).map_err(|f| {
        ui.report(&f.diags, &f.sources);
        Exit::Error
    })?;
    // A step the output folder holds that takes addresses away was written on purpose,
    // with `--release-old-address`: those apps are released, as `check --base` finds.
    let mut released: Vec<String> =
        (crate::rollout::addresses::released(&base, here, &built.prepared.apps).into_iter())
            .map(|r| r.app)
            .collect();
    released.dedup();
    Ok(Some(
        match crate::rollout::steps::next_step(
            built,
            &templates,
            &base,
            (&(shipped, None), &released),
        ) {
            Ok(step) if step.remaining == 0 => FromBase::Done,
            Ok(step) if !step.held_now() && written(paths, here, &step) => {
                let (n, of) = (step.progress.step, step.progress.of);
                FromBase::Written(n, of, step.completes(), step.held.clone())
            }
            Ok(step) => FromBase::Steps(step.progress.step - 1, step.progress.of, step.held),
            Err(crate::rollout::steps::Stuck { .. }) => FromBase::Stuck,
        },
    ))
}

/// Whether the output folder (`here`) and the lock on disk are `step` already: the step
/// `render --base` writes from the base, written and not yet merged.
fn written(paths: &ProjectPaths, here: &Tree, step: &NextStep) -> bool {
    let lock = std::fs::read_to_string(&paths.lock).ok();
    same_owned(here, &step.files) && lock.as_deref() == Some(step.lock_text.as_str())
}

/// The status as one JSON object.
fn to_json(prepared: &Prepared, moves: &[Moving], addresses: &[AppAddress]) -> Value {
    let group = |n: u32| prepared.config.group_name(n);
    json!({
        "rollout": prepared.rollout.map(|r| json!({ "step": r.step, "of": r.of })),
        "moves": moves.iter().map(|(app, from, to, step)| json!({
            "app": app, "from": group(*from), "to": group(*to), "step": step,
        })).collect::<Vec<_>>(),
        "apps": addresses.iter().map(|a| json!({
            "app": a.app,
            "callers": a.callers,
            "address": a.now.as_ref().map(Address::to_json),
            "movingTo": a.moving_to.as_ref().map(Address::to_json),
        })).collect::<Vec<_>>(),
    })
}

/// Where the output stands from the base, as JSON.
fn base_json(b: &FromBase, rev: &str) -> Value {
    match b {
        FromBase::Done => json!({ "rev": rev, "shipped": 0, "of": 0, "held": [], "stuck": false }),
        FromBase::Stuck => json!({ "rev": rev, "stuck": true }),
        FromBase::Written(step, of, _, held) => json!({
            "rev": rev,
            "shipped": step - 1,
            "of": of,
            "written": step,
            "held": held.iter().map(Release::to_json).collect::<Vec<_>>(),
            "stuck": false,
        }),
        FromBase::Steps(shipped, of, held) => json!({
            "rev": rev,
            "shipped": shipped,
            "of": of,
            "held": held.iter().map(Release::to_json).collect::<Vec<_>>(),
            "stuck": false,
        }),
    }
}
