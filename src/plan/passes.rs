//! The planning passes: which shared group each path-routed app is in.
//!
//! Apps keep the group the lock gives them, and an app in the middle of a move is in both its
//! groups until the move ends; a `group:` pin places a new app; other new apps go, as one
//! batch in the order that needs the fewest groups (`placement`), each to the lowest-numbered
//! group with room (an emptied group's number counts as a group with room, so it is reused
//! first). Room means: rules within the quota,
//! distinct backends within the target-group quota, no second isolated app, the declared rps
//! within the per-service budget, and no path of another app that one request could match
//! together with one of this app's (Lattice compares paths as strings: `/shop` and
//! `/shopping`, `/shop` and `/shop/cart`), so that every group routes right whatever order
//! the controller leaves its rules in. A locked placement is kept even where it breaks that
//! last rule (it was valid when it was written); `check` reports such a pair.

use std::collections::BTreeMap;
use std::path::Path;

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::app::{App, AppId, Pos};
use crate::input::config::Config;
use crate::input::lock::{Lock, Move, MoveStep};
use crate::input::quotas::Quotas;
use crate::plan::no_room::Origin;
use crate::plan::planner::{Placing, Planner};
use crate::plan::rules::{header_rule, rules_of, sort_rules};
use crate::plan::{
    Dedicated, Group, NoPrevious, NoRoom, Outgrown, Plan, Previous, Rule, in_groups,
    lattice_service, over_budget, placement, policies, rules_needed,
};

/// The message and help for group `number`, which is not in use and is not `next`, the
/// number a new group gets. One rule for a `group:` pin and for `latgen move --group`: a
/// group is one in use or the next new one, so that numbers leave no gaps.
pub(crate) fn no_such_group(config: &Config, number: u32, next: u32) -> (String, String) {
    let name = |n| config.group_name(n);
    (
        format!(
            "{} does not exist, and a new group would be {}",
            name(number),
            name(next)
        ),
        format!("name a group in use, or {} to open a new one", name(next)),
    )
}

pub fn plan(
    apps: &[App],
    lock: &Lock,
    lock_file: &Path,
    config: &Config,
    diags: &mut Diagnostics,
) -> Plan {
    plan_with(apps, lock, lock_file, config, &NoPrevious, diags)
}

/// [`plan`], asking `rendered` which app of a group that no longer fits grew.
pub(crate) fn plan_with(
    apps: &[App],
    lock: &Lock,
    lock_file: &Path,
    config: &Config,
    rendered: &dyn Previous,
    diags: &mut Diagnostics,
) -> Plan {
    let mut planner = Planner::new(apps, config);
    let placeable = placeable_in_name_order(apps, config, &planner.auth_bytes, diags);
    // A lock planned for the other dispatch mode holds groups whose rules are of the other
    // kind: every app is placed anew, in groups numbered after the lock's, so that the old
    // groups serve until Kong has moved off them (the rollout drops them after).
    let fresh = Lock::default();
    let switching = switching(lock, config);
    let lock = if switching {
        planner.highest = highest_group(lock);
        &fresh
    } else {
        lock
    };
    // The lock first (those placements were valid when written), then the second group of
    // each move in flight, then pins of new apps (a new pin is the change, so a conflict is
    // reported at the pin), then locked apps that no longer fit their group, then other
    // new apps; each pass in name order.
    let passes = Passes {
        apps,
        lock,
        lock_file,
        config,
        rendered,
    };
    let left = passes.place_locked(&mut planner, &placeable);
    let moves = passes.place_moves(&mut planner, &placeable, &left, diags);
    if !switching {
        passes.place_pinned(&mut planner, &placeable, &moves, diags);
    }
    let outgrown = passes.place_outgrown(&mut planner, left, diags);
    passes.place_new(&mut planner, &placeable, switching);
    let statements = std::sync::Arc::clone(&planner.statements);
    let mut plan = passes.assemble(planner, moves);
    plan.outgrown = outgrown;
    plan.lock.dispatch = config.lattice.dispatch;
    plan.lock.adopted_from = lock.adopted_from.clone();
    lattice_service::record(&mut plan, apps, config, &statements);
    diags.extend(over_budget::findings(&plan, apps, config));
    plan
}

/// Whether `lock` places apps for the other dispatch mode than `config` asks for: the plan
/// then places every app anew (a switch), and the lock stands for the output of the mode
/// it records.
pub(crate) fn switching(lock: &Lock, config: &Config) -> bool {
    lock.dispatch != config.lattice.dispatch && !lock.apps.is_empty()
}

/// The highest group number a lock uses, moves included.
fn highest_group(lock: &Lock) -> u32 {
    let homes = lock.apps.values().map(|g| g.0);
    let targets = lock.moves.values().map(|m| m.0.to);
    homes.chain(targets).max().unwrap_or(0)
}

/// The path-routed apps that fit a group at all, in name order whatever order the apps
/// come in; each of the others is reported. `auth_bytes` is what each app's statements
/// take in a group (the planner's, empty when auth is off).
fn placeable_in_name_order(
    apps: &[App],
    config: &Config,
    auth_bytes: &[usize],
    diags: &mut Diagnostics,
) -> Vec<AppId> {
    let (source, raisable) = config.quotas.rules_per_group_source();
    let help = if raisable {
        "merge paths under a common prefix, or give the app its own `host`; or have AWS raise the \"rules per listener\" quota (Service Quotas, VPC Lattice) and set `quotas.rulesPerService` to the new value"
    } else {
        "merge paths under a common prefix, or give the app its own `host`"
    };
    let mut path_apps: Vec<AppId> = AppId::enumerate(apps)
        .filter(|(_, app)| in_groups(app, config))
        .map(|(id, _)| id)
        .collect();
    path_apps.sort_by(|&a, &b| apps[a].name.cmp(&apps[b].name));
    for app in apps.iter().filter(|app| !in_groups(app, config)) {
        let bytes = || policies::app_bytes(app, config, None);
        check_own_policy(app, config, bytes, diags);
    }
    // The planner has each app's statements measured as a group holds them, in parallel:
    // they are not made again here, one app after another.
    path_apps.retain(|&id| {
        let bytes = || auth_bytes.get(id.index()).copied().unwrap_or(0);
        check_own_policy(&apps[id], config, bytes, diags)
    });
    path_apps.retain(|&id| {
        let app = &apps[id];
        if config.quotas.rules_fit(0, rules_needed(app, config)) {
            return true;
        }
        diags.push(
            Diagnostic::error(
                Code::AppTooBig,
                format!(
                    "app `{}` has {} paths; a shared group holds at most {} rules: {source}",
                    app.name,
                    app.rule_count(),
                    config.quotas.rules_per_group(),
                ),
            )
            .at(Span::new(
                &app.file,
                app.paths[0].pos.line,
                app.paths[0].pos.column,
            ))
            .help(help),
        );
        false
    });
    path_apps
}

/// Whether app `app`'s auth statements, which take `statement_bytes`, fit a policy of their
/// own; reported when not.
fn check_own_policy(
    app: &App,
    config: &Config,
    statement_bytes: impl FnOnce() -> usize,
    diags: &mut Diagnostics,
) -> bool {
    if !config.auth.is_on() {
        return true;
    }
    let bytes = policies::policy_bytes(statement_bytes());
    if Quotas::policy_fits(bytes) {
        return true;
    }
    diags.push(
        Diagnostic::error(
            Code::AuthPolicyTooLarge,
            format!(
                "the auth policy that lets app `{}`'s callers in takes {bytes} bytes on its own; a Lattice auth policy takes at most {}",
                app.name,
                policies::POLICY_MAX_BYTES
            ),
        )
        .at(Span::new(&app.file, app.name_pos.line, app.name_pos.column))
        .help("list fewer callers or paths: name an account or an organization rather than each role, or merge paths under a common prefix"),
    );
    false
}

/// What the planning passes read.
struct Passes<'a> {
    apps: &'a [App],
    lock: &'a Lock,
    lock_file: &'a Path,
    config: &'a Config,
    rendered: &'a dyn Previous,
}

impl Passes<'_> {
    fn in_lock(&self, id: AppId) -> bool {
        self.lock.apps.contains_key(&self.apps[id].name)
    }

    fn at_app(&self, id: AppId) -> Span {
        let app = &self.apps[id];
        Span::new(&app.file, app.name_pos.line, app.name_pos.column)
    }

    fn at_lock(&self, pos: Pos) -> Span {
        Span::new(self.lock_file, pos.line, pos.column)
    }

    /// Pass 1: every locked app into the group the lock gives it; those that no longer fit
    /// it come back, with the group and why.
    fn place_locked(&self, planner: &mut Planner, order: &[AppId]) -> Vec<(AppId, u32, NoRoom)> {
        let mut left = Vec::new();
        for id in self.locked_order(order) {
            let (number, _) = self.lock.apps[&self.apps[id].name];
            match planner.fits_keeping(number, id, Placing::Locked) {
                Ok(()) => planner.place(number, id),
                Err(why) => left.push((id, number, why)),
            }
        }
        left
    }

    /// The locked apps in name order, except that in a group whose locked apps need more
    /// rules than it holds, those that need more than the output last rendered gave them
    /// come last: the app whose declaration grew is the one that leaves.
    fn locked_order(&self, order: &[AppId]) -> Vec<AppId> {
        let home = |id: AppId| self.lock.apps[&self.apps[id].name].0;
        let need = |id: AppId| rules_needed(&self.apps[id], self.config);
        let locked: Vec<AppId> = order
            .iter()
            .copied()
            .filter(|&id| self.in_lock(id))
            .collect();
        let mut demand: BTreeMap<u32, u32> = BTreeMap::new();
        for &id in &locked {
            *demand.entry(home(id)).or_default() += need(id);
        }
        let quotas = &self.config.quotas;
        let mut keyed: Vec<(bool, AppId)> = locked
            .into_iter()
            .map(|id| {
                let grew = !quotas.rules_fit(demand[&home(id)], 0)
                    && (self.rendered.rules(home(id), &self.apps[id]))
                        .is_some_and(|had| need(id) > had);
                (grew, id)
            })
            .collect();
        // Stable: name order within each kind.
        keyed.sort_by_key(|&(grew, _)| grew);
        keyed.into_iter().map(|(_, id)| id).collect()
    }

    /// Pass 2: each app in the middle of a move into the group it is moving to as well.
    /// An app that no longer fits the group it is leaving (`left`) is placed later, as
    /// one that outgrew its group: its move is not in flight any more but decided anew.
    fn place_moves(
        &self,
        planner: &mut Planner,
        order: &[AppId],
        left: &[(AppId, u32, NoRoom)],
        diags: &mut Diagnostics,
    ) -> BTreeMap<AppId, Move> {
        let mut moves = BTreeMap::new();
        let placed = |id: AppId| self.in_lock(id) && !left.iter().any(|l| l.0 == id);
        for &id in order.iter().filter(|&&id| placed(id)) {
            let Some(&(m, pos)) = self.lock.moves.get(&self.apps[id].name) else {
                continue;
            };
            match planner.fits_keeping(m.to, id, Placing::Locked) {
                Ok(()) => {
                    planner.place(m.to, id);
                    moves.insert(id, m);
                }
                Err(why) => diags.push(
                    self.no_room(id, m.to, &why, self.at_lock(pos), Origin::Lock)
                        .related(self.at_app(id), "the app being moved"),
                ),
            }
        }
        moves
    }

    /// Pass 3: each new app with a `group:` pin into that group. The pin of an app already
    /// placed must agree with the lock.
    fn place_pinned(
        &self,
        planner: &mut Planner,
        order: &[AppId],
        moves: &BTreeMap<AppId, Move>,
        diags: &mut Diagnostics,
    ) {
        let apps = self.apps;
        let mut pinned: Vec<(u32, Pos, AppId)> = order
            .iter()
            .filter_map(|&id| apps[id].pin.map(|(number, pos)| (number, pos, id)))
            .collect();
        // In group order (name order within a group), so that pins to the next two new
        // groups open both whatever the apps' names.
        pinned.sort_by_key(|&(number, ..)| number);
        for (number, pos, id) in pinned {
            if number == 0 {
                continue;
            }
            let at_pin = Span::new(&apps[id].file, pos.line, pos.column);
            if let Some(&(home, _)) = self.lock.apps.get(&apps[id].name) {
                let target = moves.get(&id).map(|m| m.to);
                if number != home && Some(number) != target {
                    diags.push(self.pin_conflict(id, home, number, at_pin));
                }
                continue;
            }
            if !planner.groups.contains_key(&number) && number != planner.next_new() {
                let (message, help) = no_such_group(self.config, number, planner.next_new());
                diags.push(
                    Diagnostic::error(Code::InvalidGroup, message)
                        .at(at_pin)
                        .help(help),
                );
                continue;
            }
            match planner.fits(number, id) {
                Ok(()) => planner.place(number, id),
                Err(why) => diags.push(self.no_room(id, number, &why, at_pin, Origin::Pin)),
            }
        }
    }

    fn pin_conflict(&self, id: AppId, home: u32, number: u32, at_pin: Span) -> Diagnostic {
        let name = &self.apps[id].name;
        let group = |n| self.config.group_name(n);
        let (lock, env) = self.lock_and_flag();
        Diagnostic::error(
            Code::PinConflict,
            format!("app `{name}` is in {} ({lock}) but pinned to {}", group(home), group(number)),
        )
        .at(at_pin)
        .help(format!("move it with `latgen move {name} --group {number}{env}`: that keeps it reachable at every step"))
    }

    /// The lock as messages name it, and the `--env` of the commands they suggest.
    fn lock_and_flag(&self) -> (String, String) {
        let env = self.config.env_name();
        (
            crate::input::environments::lock_shown(env),
            crate::input::environments::env_flag(env),
        )
    }

    /// Pass 4: each locked app that no longer fits its group into the group its move in
    /// flight goes to when it fits there, else the lowest-numbered group with room. A
    /// placement decision like any other, told as a warning: the lock is never the way out.
    fn place_outgrown(
        &self,
        planner: &mut Planner,
        left: Vec<(AppId, u32, NoRoom)>,
        diags: &mut Diagnostics,
    ) -> Vec<Outgrown> {
        let mut outgrown = Vec::new();
        for (id, from, why) in left {
            let name = &self.apps[id].name;
            let target = (self.lock.moves.get(name).map(|(m, _)| m.to))
                .filter(|&to| planner.fits(to, id).is_ok());
            let to = target.unwrap_or_else(|| planner.first_fit(id));
            planner.place(to, id);
            let o = Outgrown {
                app: id,
                from,
                to,
                why,
            };
            diags.push(self.outgrown_finding(&o, target.is_some()));
            outgrown.push(o);
        }
        outgrown
    }

    fn outgrown_finding(&self, o: &Outgrown, was_moving: bool) -> Diagnostic {
        let app = &self.apps[o.app];
        let group = |n| self.config.group_name(n);
        let (from, to, name) = (group(o.from), group(o.to), &app.name);
        let (lock, env) = self.lock_and_flag();
        let whither = if was_moving {
            "the group its move goes to"
        } else {
            "the lowest-numbered group with room"
        };
        let mut d = Diagnostic::warning(
            Code::OutgrownGroup,
            format!(
                "app `{name}` no longer fits {from} ({}): it moves to {to}, {whither}",
                o.why.message(self.apps, o.app, &from)
            ),
        )
        .at(Span::new(&app.file, app.paths[0].pos.line, app.paths[0].pos.column))
        .help(format!(
            "nothing to edit: `latgen render{env} --base auto` ships the move in safe steps ({to} gains its rules, Kong switches, {from} drops them); to pick the group, `latgen move {name} --group N{env}`"
        ));
        if let Some((_, pos)) = self.lock.apps.get(name) {
            d = d.related(self.at_lock(*pos), format!("its group in {lock}"));
        }
        d
    }

    /// Pass 5: the new apps without a pin (everything placed so far was locked or pinned),
    /// as one batch (`placement`): each into the lowest-numbered group with room, in the
    /// order that needs the fewest groups; in a switch of dispatch mode, every app, pinned
    /// or not (a pin names a group of the old mode).
    fn place_new(&self, planner: &mut Planner, order: &[AppId], switching: bool) {
        let batch: Vec<AppId> = (order.iter().copied())
            .filter(|&id| (self.apps[id].pin.is_none() || switching) && !self.in_lock(id))
            .collect();
        let open = placement::NewGroups::Open;
        // Open groups always have room: a new one if none else.
        let _ = planner.place_batch(&batch, open, &mut placement::Budget::new());
    }

    /// The plan of the placed apps: each group's members and rules, the dedicated routes,
    /// and the lock to write.
    fn assemble(&self, planner: Planner, moves: BTreeMap<AppId, Move>) -> Plan {
        let apps = self.apps;
        let mut plan = Plan::default();
        for (number, state) in planner.groups {
            let mut members = state.apps;
            members.sort_by(|&a, &b| apps[a].name.cmp(&apps[b].name));
            let rules: Vec<Rule> = if self.config.header_dispatch() {
                // One rule per app, in name order: no two rules match one request.
                members.iter().map(|&id| header_rule(id)).collect()
            } else {
                let mut rules: Vec<Rule> =
                    members.iter().flat_map(|&id| rules_of(apps, id)).collect();
                sort_rules(&mut rules);
                rules
            };
            for &id in &members {
                self.record_member(&mut plan, id, number, moves.get(&id));
            }
            plan.groups.push(Group {
                number,
                apps: members.iter().map(|id| id.index()).collect(),
                rules,
            });
        }
        for (id, app) in AppId::enumerate(apps).filter(|(_, a)| !in_groups(a, self.config)) {
            if let Some(a) = &app.adopted {
                plan.lock.adopted.insert(app.name.clone(), a.clone());
            }
            plan.dedicated.push(Dedicated { app: id });
        }
        for (id, m) in moves {
            plan.lock.moves.insert(apps[id].name.clone(), m);
        }
        plan
    }

    /// Records app `id`, a member of group `number`, in the lock and the Kong side's
    /// targets; an app in two groups (moving) is recorded at home, in the one the lock names.
    fn record_member(&self, plan: &mut Plan, id: AppId, number: u32, moving: Option<&Move>) {
        let name = &self.apps[id].name;
        let home = self
            .lock
            .apps
            .get(name)
            .map(|h| h.0)
            .filter(|_| moving.is_some());
        if home.is_none_or(|h| h == number) {
            plan.lock.apps.insert(name.clone(), number);
            let serving = match moving {
                Some(m) if m.step == MoveStep::SwitchKong => m.to,
                _ => number,
            };
            plan.kong_group.insert(id, serving);
        }
    }

    /// The finding for app `id`, which does not fit group `number`, reported at `at`.
    fn no_room(
        &self,
        id: AppId,
        number: u32,
        why: &NoRoom,
        at: Span,
        origin: Origin,
    ) -> Diagnostic {
        let how = match origin {
            Origin::Lock => {
                "change the app so that it fits, or make room in the group with `latgen move` of another app"
            }
            Origin::Pin => {
                "pin another group, or remove `group` so that latgen picks one with room"
            }
        };
        let message = why.message(self.apps, id, &self.config.group_name(number));
        let mut d = Diagnostic::error(why.code(origin, self.config), message)
            .at(at)
            .help(how);
        if let Some((other, what)) = why.other_app() {
            d = d.related(self.at_app(other), what);
        }
        d
    }
}
