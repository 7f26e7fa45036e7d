//! `latgen move`: one app to another group, one step (one PR) at a time.

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, did_you_mean};
use crate::input::app::AppId;
use crate::input::config::Config;
use crate::input::environments::env_flag;
use crate::input::lock::{LockState, Move, MoveStep};
use crate::plan::Occupancy;
use crate::plan::prepared::Prepared;

/// The lock after a step of a move.
pub(crate) struct MoveResult {
    pub lock: LockState,
    /// What was done and what comes next, for a person.
    pub message: String,
}

/// Starts a move of `app` to `group`, or advances the move in flight one step.
pub(crate) fn move_app(
    prepared: &Prepared,
    app: &str,
    group: Option<u32>,
    advance: bool,
) -> Result<MoveResult, Diagnostic> {
    if let Some(id) = adopted(prepared, app) {
        return adopt_into(prepared, app, id, group);
    }
    let (id, home) = movable(prepared, app)?;
    // The output has not changed: it is still the step of a rollout the lock records.
    let mut lock = prepared.plan.lock.clone();
    lock.rollout = prepared.rollout;
    if let Some(o) = prepared.plan.outgrown.iter().find(|o| o.app == id) {
        return redirect_outgrown(prepared, lock, app, o, group);
    }
    if let Some(m) = lock.moves.get(app).copied() {
        let config = &prepared.config;
        if group.is_some_and(|g| g != m.to) {
            return Err(moving_elsewhere(config, app, home, m));
        }
        return if advance {
            continue_move(config, lock, app, home, m)
        } else {
            repeated(config, lock, app, home, m)
        };
    }
    if advance {
        return Err(refuse(
            format!("app `{app}` is not moving"),
            format!(
                "start a move with `latgen move {app} --group N{}`",
                env_flag(prepared.config.env_name())
            ),
        ));
    }
    let Some(to) = group else {
        return Err(refuse(
            "give the group to move to".into(),
            format!(
                "`latgen move {app} --group N{}`",
                env_flag(prepared.config.env_name())
            ),
        ));
    };
    start_move(prepared, lock, app, id, home, to)
}

/// The id of path-routed app `app` and the group it is in.
fn movable(prepared: &Prepared, app: &str) -> Result<(AppId, u32), Diagnostic> {
    let Some(id) =
        AppId::enumerate(&prepared.apps).find_map(|(id, a)| (a.name == app).then_some(id))
    else {
        let names = prepared.apps.iter().map(|a| a.name.as_str());
        let help = match did_you_mean(app, names) {
            Some(s) => format!("did you mean `{s}`?"),
            None => "give the name of an app in apps/".to_string(),
        };
        return Err(refuse(format!("there is no app `{app}`"), help));
    };
    // Under header dispatch a host-routed app is in a group like any other.
    if !crate::plan::in_groups(&prepared.apps[id], &prepared.config) {
        return Err(refuse(
            format!(
                "app `{app}` is on its own host: it has a dedicated Lattice service, not a group"
            ),
            "only path-routed apps move between groups",
        ));
    }
    let Some(&home) = prepared.plan.lock.apps.get(app) else {
        return Err(refuse(
            format!("app `{app}` has no group yet"),
            format!(
                "run `latgen render{}` first",
                env_flag(prepared.config.env_name())
            ),
        ));
    };
    Ok((id, home))
}

/// App `app`, when it still runs on the route it was adopted with and would be in a group
/// once it leaves it (path-routed, or any app under header dispatch).
fn adopted(prepared: &Prepared, app: &str) -> Option<AppId> {
    let (id, a) = AppId::enumerate(&prepared.apps).find(|(_, a)| a.name == app)?;
    (a.adopted.is_some() && crate::plan::in_groups_once_placed(a, &prepared.config)).then_some(id)
}

/// Moves adopted app `app` (`id`) off its route into group `to`: the lock no longer keeps
/// the route, and places the app in `to`. `render --base` ships it as it ships a
/// consolidation: `to` gains the app's rules, Kong switches to it, the old route goes last.
fn adopt_into(
    prepared: &Prepared,
    app: &str,
    id: AppId,
    group: Option<u32>,
) -> Result<MoveResult, Diagnostic> {
    let config = &prepared.config;
    let env = env_flag(config.env_name());
    let Some(to) = group else {
        return Err(refuse(
            format!(
                "app `{app}` still runs on the route it was adopted with ({} `adopted:`): give the group to move it to",
                lock_name(config)
            ),
            format!(
                "`latgen move {app} --group N{env}`; or `latgen plan{env} --apply` moves every adopted app into groups"
            ),
        ));
    };
    destination(prepared, id, to, |occupancy, next| {
        elsewhere(config, occupancy.first_with_room(id), next)
    })?;
    let mut lock = prepared.plan.lock.clone();
    lock.rollout = prepared.rollout;
    let (route, namespace, _) = prepared.apps[id].own_route();
    let message = format!(
        "moving {app} off the route it was adopted with ({namespace}/{route}) into {}: recorded in {}; it ships in safe steps ({} gains {app}'s rules, Kong switches to it, the old route goes last)\n{}",
        config.group_name(to),
        lock_name(config),
        config.group_name(to),
        next_step(config)
    );
    lock.adopted.remove(app);
    lock.apps.insert(app.to_string(), to);
    Ok(MoveResult { lock, message })
}

/// A move of `app` asked for while it moves elsewhere: refused until that one is done.
fn moving_elsewhere(config: &Config, app: &str, home: u32, m: Move) -> Diagnostic {
    refuse(
        format!(
            "app `{app}` is moving from {} to {} (step {} of 3)",
            config.group_name(home),
            config.group_name(m.to),
            m.step.number()
        ),
        format!(
            "finish that move first: `latgen render{} --base auto` writes its next step",
            env_flag(config.env_name())
        ),
    )
}

/// `latgen move APP --group N` while APP is already moving there: the same command again,
/// so the lock stays as it is (only `--continue` advances, and only past a shipped step).
fn repeated(
    config: &Config,
    lock: LockState,
    app: &str,
    home: u32,
    m: Move,
) -> Result<MoveResult, Diagnostic> {
    let name = |n: u32| config.group_name(n);
    let (from, to, step) = (name(home), name(m.to), m.step.number());
    let message = format!(
        "{app} is already moving from {from} to {to} (step {step} of 3 in {}); nothing changed\n{}",
        lock_name(config),
        next_step(config)
    );
    Ok(MoveResult { lock, message })
}

/// Advances move `m` of `app` from `home` one step.
fn continue_move(
    config: &Config,
    mut lock: LockState,
    app: &str,
    home: u32,
    m: Move,
) -> Result<MoveResult, Diagnostic> {
    let name = |n: u32| config.group_name(n);
    let message = match m.step {
        MoveStep::AddRules => {
            lock.moves.insert(
                app.to_string(),
                Move {
                    to: m.to,
                    step: MoveStep::SwitchKong,
                },
            );
            format!(
                "moving {app} from {} to {}: step 2 of 3 recorded in {} (the Kong side points {app}'s bridge and rewrite host at {}; both groups keep its rules)\n{}",
                name(home),
                name(m.to),
                lock_name(config),
                name(m.to),
                next_step(config)
            )
        }
        MoveStep::SwitchKong => {
            lock.moves.remove(app);
            lock.apps.insert(app.to_string(), m.to);
            format!(
                "moving {app} from {} to {}: step 3 of 3 recorded in {} (the Lattice side drops {app}'s rules from {})\n{}",
                name(home),
                name(m.to),
                lock_name(config),
                name(home),
                next_step(config)
            )
        }
    };
    Ok(MoveResult { lock, message })
}

/// App `app` no longer fits the group it is live in (`o.from`), so the plan already moves it
/// (to `o.to`, not yet shipped): `--group` picks another destination. The move is shipped
/// as the plan's is, by `render --base`; the app is not in flight in the lock, since it
/// cannot stay in a group it no longer fits.
fn redirect_outgrown(
    prepared: &Prepared,
    mut lock: LockState,
    app: &str,
    o: &crate::plan::Outgrown,
    group: Option<u32>,
) -> Result<MoveResult, Diagnostic> {
    let config = &prepared.config;
    let name = |n: u32| config.group_name(n);
    let to = group.unwrap_or(o.to);
    // The plan's own choice has room by construction.
    if to != o.to {
        destination(prepared, o.app, to, |_, next| {
            format!(
                "{} has room (the plan's choice); or a new group, {}",
                name(o.to),
                name(next)
            )
        })?;
    }
    lock.apps.insert(app.to_string(), to);
    let message = format!(
        "moving {app} from {} to {}: it no longer fits {}, so it moves in any case; recorded in {}
{}",
        name(o.from),
        name(to),
        name(o.from),
        lock_name(config),
        next_step(config)
    );
    Ok(MoveResult { lock, message })
}

/// Refuses group `to` for app `id` unless it is a group in use with room for it or the next
/// new one; `help` says where else to go, given the groups and the next new number.
fn destination(
    prepared: &Prepared,
    id: AppId,
    to: u32,
    help: impl FnOnce(&Occupancy, u32) -> String,
) -> Result<(), Diagnostic> {
    let config = &prepared.config;
    let occupancy = Occupancy::of(&prepared.plan, &prepared.apps, config, |_| true);
    let next = occupancy.next_new_group();
    if !occupancy.in_use(to) && to != next {
        let (message, help) = crate::plan::no_such_group(config, to, next);
        return Err(refuse(message, help));
    }
    match occupancy.no_room(id, to) {
        Some(why) => {
            let message = why.message(&prepared.apps, id, &config.group_name(to));
            Err(refuse(message, help(&occupancy, next)))
        }
        None => Ok(()),
    }
}

/// Where a refused move can go instead: group `room` with room for the app, or the next
/// new group.
fn elsewhere(config: &Config, room: Option<u32>, next: u32) -> String {
    let name = |n: u32| config.group_name(n);
    match room {
        Some(g) => format!(
            "{} has room; or move it to a new group, {}",
            name(g),
            name(next)
        ),
        None => format!("move it to a new group, {}", name(next)),
    }
}

/// What a person runs after `latgen move`: the one way a change ships, in the environment
/// the move was recorded for.
fn next_step(config: &Config) -> String {
    let env = env_flag(config.env_name());
    format!(
        "next: `latgen render{env} --base auto` writes the next safe step (one PR); once it is merged and live, run it again, until it says the change is complete (`latgen status{env}` tells where it stands)"
    )
}

/// The lock the move is recorded in, as the messages name it.
fn lock_name(config: &Config) -> String {
    crate::input::environments::lock_shown(config.env_name())
}

/// Starts moving app `app` (`id`) from `home` to `to`: step 1, when `to` is a group
/// in use with room for it or the next new group.
fn start_move(
    prepared: &Prepared,
    mut lock: LockState,
    app: &str,
    id: AppId,
    home: u32,
    to: u32,
) -> Result<MoveResult, Diagnostic> {
    let config = &prepared.config;
    let name = |n: u32| config.group_name(n);
    if to == home {
        return Err(refuse(
            format!("app `{app}` is already in {}", name(to)),
            "pick another group",
        ));
    }
    destination(prepared, id, to, |occupancy, next| {
        elsewhere(
            config,
            occupancy.first_with_room(id).filter(|&g| g != home),
            next,
        )
    })?;
    lock.moves.insert(
        app.to_string(),
        Move {
            to,
            step: MoveStep::AddRules,
        },
    );
    let message = format!(
        "moving {app} from {} to {}: recorded in {}; it ships in 3 steps ({} gains {app}'s rules, Kong switches to it, {} drops them)\n{}",
        name(home),
        name(to),
        lock_name(config),
        name(to),
        name(home),
        next_step(config)
    );
    Ok(MoveResult { lock, message })
}

/// A request `move` or `plan` turns down.
pub(super) fn refuse(message: String, help: impl Into<String>) -> Diagnostic {
    Diagnostic::error(Code::MoveRefused, message).help(help)
}
