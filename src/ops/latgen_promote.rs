//! `latgen promote FROM TO`: the source's overrides of the fields `--carry` names carried
//! to the target in each declaration ([`super::promote_carry`]); then the shared stages in
//! both environments, and the target's new apps placed in the groups the source gives them
//! ([`crate::plan::rebalance::promotion`]), said app by app; with `--apply`, the
//! declarations and the target's lock written, to ship with `render --base` like any
//! change.

use std::collections::BTreeSet;

use super::shell::{Exit, Ui};
use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Sources};
use crate::input::ProjectPaths;
use crate::plan::rebalance::promotion::{Promotion, promotion};

/// What `latgen promote` is asked to do.
pub(crate) struct PromoteOptions<'a> {
    /// The environment whose groups the new apps follow.
    pub from: &'a str,
    /// The environment whose new apps are placed.
    pub to: &'a str,
    /// Record the placement in the target's lock, and write the declarations carried.
    pub apply: bool,
    /// The fields whose source override is carried to the target.
    pub carry: &'a [String],
}

/// Places the target's new apps in the project at `base` (its paths without an
/// environment); with `apply`, records them.
pub(crate) fn run(args: &PromoteOptions<'_>, base: &ProjectPaths, ui: Ui) -> Exit {
    let (from, to) = match environments(args, base) {
        Ok(p) => p,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    if args.apply
        && let Err(d) = to.make_env_folders()
    {
        return ui.fail(d, &Sources::default());
    }
    // The target's lock is written: one run at a time, as `plan --apply`.
    let _run = match crate::output::begin_in(&to.root, &to.output, args.apply, true) {
        Ok(l) => l,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    let carried = match carry(args, base) {
        Ok(c) => c,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    let (Some(source), Some(target)) = (
        super::project::prepare(&from, ui),
        super::project::prepare(&to, ui),
    ) else {
        // The declarations carried are put back: a promotion is written whole or not.
        super::promote_carry::restore(base, &carried);
        eprintln!("nothing written: the declarations are as they were");
        return Exit::Error;
    };
    let locked = match locked_apps(&to) {
        Ok(l) => l,
        Err((d, sources)) => return ui.fail(d, &sources),
    };
    let p = promotion(&source, &target, &locked);
    say(args, &p, (&source.config, &target.config));
    if !args.apply || (p.placed.is_empty() && p.target_only.is_empty()) {
        if args.apply && !carried.is_empty() {
            println!(
                "next: `latgen render --env {} --base auto` writes the first safe step against the default branch",
                args.to
            );
        }
        return Exit::Success;
    }
    let mut lock = p.after.plan.lock.clone();
    lock.rollout = target.rollout;
    let text = crate::input::lock::serialize(&lock);
    if let Err(d) = crate::output::write_atomic(&to.root, &to.lock, text.as_bytes()) {
        super::promote_carry::restore(base, &carried);
        return ui.fail(d, &Sources::default());
    }
    println!(
        "recorded in {}; next: `latgen render --env {} --base auto` writes the first safe step against the default branch, and `latgen check --env all` compares the environments",
        to.lock.display(),
        args.to
    );
    Exit::Success
}

/// The overrides carried (with `--apply`, written), said; the files written, with what they
/// held.
fn carry(
    args: &PromoteOptions<'_>,
    base: &ProjectPaths,
) -> Result<Vec<super::promote_carry::Written>, Diagnostic> {
    let envs = (args.from, args.to);
    let carries = super::promote_carry::overrides_to_carry(base, envs, args.carry)?;
    for c in &carries {
        println!("{}", super::promote_carry::describe(c, envs, args.apply));
    }
    if !args.apply {
        return Ok(Vec::new());
    }
    super::promote_carry::write(base, &carries)
}

/// The two environments' paths: both must be environments of the project, and not one.
fn environments(
    args: &PromoteOptions<'_>,
    base: &ProjectPaths,
) -> Result<(ProjectPaths, ProjectPaths), Diagnostic> {
    for name in [args.from, args.to] {
        if name == "all" {
            return Err(Diagnostic::error(
                Code::UnknownEnvironment,
                "promote names two environments, not all",
            )
            .help("name two environments: `latgen promote staging production`"));
        }
        super::project::choose_envs(&base.root, Some(name))?;
    }
    if args.from == args.to {
        return Err(Diagnostic::error(
            Code::UnknownEnvironment,
            format!("`{}` is promoted into itself", args.from),
        )
        .help("name two environments: `latgen promote staging production`"));
    }
    Ok((
        base.in_env(args.from, false, false),
        base.in_env(args.to, false, false),
    ))
}

/// The apps the target's lock file places: the others are new to the target.
fn locked_apps(to: &ProjectPaths) -> Result<BTreeSet<String>, (Diagnostic, Sources)> {
    let Ok(text) = std::fs::read_to_string(&to.lock) else {
        return Ok(BTreeSet::new());
    };
    let mut diags = Diagnostics::new();
    match crate::input::lock::parse(&to.lock, &text, &mut diags) {
        Some(lock) => Ok(lock.apps.into_keys().collect()),
        None => {
            let mut sources = Sources::default();
            sources.insert(to.lock.clone(), text);
            let d = diags
                .into_iter()
                .next()
                .unwrap_or_else(|| Diagnostic::error(Code::InvalidLock, "the lock cannot be read"));
            Err((d, sources))
        }
    }
}

/// Says where each new app lands and where the environments differ.
fn say(
    args: &PromoteOptions<'_>,
    p: &Promotion,
    configs: (&crate::input::config::Config, &crate::input::config::Config),
) {
    let (from, to) = (args.from, args.to);
    let group = |n: u32| configs.1.group_name(n);
    let nothing_new = p.placed.is_empty() && p.target_only.is_empty();
    if nothing_new {
        println!("{to} has no new apps to place");
    }
    for a in &p.placed {
        if a.source == a.target {
            println!("  {}: {}, as in {from}", a.app, group(a.target));
        } else {
            println!(
                "  {}: {} ({from} has it in {}; {to}'s quotas leave no room there)",
                a.app,
                group(a.target),
                configs.0.group_name(a.source)
            );
        }
    }
    for a in &p.target_only {
        let g = p.after.plan.lock.apps.get(a).copied();
        let at = g.map_or_else(|| "a route of its own".to_string(), group);
        println!("  {a}: {at} (new to {to}, not in {from})");
    }
    for (a, s, t) in &p.differing {
        println!(
            "  {a} differs: {} in {from}, {} in {to}; left as it is (`latgen move {a} --group {s} --env {to}` aligns it, in safe steps)",
            configs.0.group_name(*s),
            group(*t)
        );
    }
    if !args.apply && !nothing_new {
        println!("`latgen promote {from} {to} --apply` records it in locks/{to}.lock");
    }
}
