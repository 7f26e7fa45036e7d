//! `latgen trace`: the output stage's reading of the committed manifests, then one request
//! followed through them ([`crate::check::follow`]), with the caller its auth policy sees
//! from the project's settings (Kong's, `auth.kong`); or, with `--callers`, who may call
//! an app ([`crate::check::callers`]). Exit 0 when the request reaches a backend and is let
//! in (every declared caller let in, with `--callers`), 1 when not, 2 on a usage or input
//! error.

use std::path::{Path, PathBuf};

use super::shell::{Exit, Ui};
use crate::check::follow::{parse_request, read_network, trace};
use crate::check::trace_auth::Callers;
use crate::check::trace_output::{human, to_json};
use crate::diag::{Diagnostic, Sources};
use crate::input::ProjectPaths;
use crate::input::auth::Caller;
use latgen_sim::routing::Network;

/// What `latgen trace` is asked: the request, who sends it, and where to follow it; or
/// the apps whose callers it lists.
pub(crate) struct TraceOptions<'a> {
    /// A URL or a path; None with `callers`.
    pub url: Option<&'a str>,
    /// The apps whose callers are listed instead of a request followed.
    pub callers: &'a [String],
    /// The Host of a request given as a path.
    pub host: Option<&'a str>,
    /// The output folder whose manifests are followed, and the environment in it.
    pub output: &'a Path,
    pub env: Option<&'a str>,
    /// The caller, for the auth policy: a principal, its VPC and organization, the method.
    pub principal: Option<&'a str>,
    pub from_vpc: Option<&'a str>,
    pub org: Option<&'a str>,
    pub method: &'a str,
    pub format: TraceFormat,
}

/// A value of `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum TraceFormat {
    Human,
    Json,
}

/// Follows the request and says where it goes.
pub(crate) fn run(args: &TraceOptions<'_>, ui: Ui) -> Exit {
    if !args.callers.is_empty() {
        return run_callers(args, ui);
    }
    let request = match parse_request(args.url.unwrap_or_default(), args.host) {
        Ok(r) => r,
        Err(message) => {
            eprintln!("error: {message}");
            return Exit::Error;
        }
    };
    let given = match caller(args) {
        Ok(who) => who,
        Err(message) => {
            eprintln!("error: {message}");
            return Exit::Error;
        }
    };
    let (net, paths) = match network(args) {
        Ok(n) => n,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    let callers = Callers {
        given,
        kong: kong_caller(&paths),
        settings: settings_name(&paths),
        method: args.method.to_string(),
    };
    let t = trace(&net, request, &callers);
    match args.format {
        TraceFormat::Human => print!("{}", human(&t)),
        TraceFormat::Json => println!("{}", to_json(&t)),
    }
    if t.let_in() {
        Exit::Success
    } else {
        Exit::Found
    }
}

/// `--callers`: who may call each app named, by the project's declarations and the
/// committed policies.
fn run_callers(args: &TraceOptions<'_>, ui: Ui) -> Exit {
    let (net, paths) = match network(args) {
        Ok(n) => n,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    // The project's warnings are check's to report: only what stops the listing is shown.
    let run = crate::pipeline::prepare(&paths);
    let Some(prepared) = run.prepared else {
        ui.report(&run.diags, &run.sources);
        return Exit::Error;
    };
    let mut names: Vec<&str> = args.callers.iter().map(String::as_str).collect();
    names.sort_unstable();
    names.dedup();
    let mut apps = Vec::new();
    for name in names {
        let Some(app) = prepared.apps.iter().find(|a| a.name == name) else {
            let known = prepared.apps.iter().map(|a| a.name.as_str());
            let near = crate::diag::did_you_mean(name, known)
                .map_or(String::new(), |s| format!("; did you mean `{s}`?"));
            let apps = paths.apps_dir.display();
            eprintln!("error: --callers: there is no app `{name}` in {apps}{near}");
            return Exit::Error;
        };
        apps.push(crate::check::callers::of_app(&net, app, &prepared.config));
    }
    match args.format {
        TraceFormat::Human => {
            let each: Vec<String> = apps.iter().map(crate::check::callers::human).collect();
            print!("{}", each.join("\n"));
        }
        TraceFormat::Json => println!("{}", crate::check::callers::to_json(&apps)),
    }
    if apps.iter().all(|a| a.all_let_in()) {
        Exit::Success
    } else {
        Exit::Found
    }
}

/// How Kong calls Lattice, by the project's settings; or why that is not known.
fn kong_caller(paths: &ProjectPaths) -> Result<Caller, String> {
    let name = settings_name(paths);
    let mut diags = crate::diag::Diagnostics::new();
    match crate::input::settings(paths, &mut diags) {
        Some(config) => (config.auth.kong)
            .ok_or_else(|| format!("{name} does not say how Kong calls Lattice (auth.kong)")),
        None => Err(format!(
            "{name} cannot be read, so how Kong calls Lattice is not known: run `latgen check`"
        )),
    }
}

/// The settings file, as messages name it.
fn settings_name(paths: &ProjectPaths) -> String {
    match paths.env_name() {
        Some(env) => format!("environments/{env}.yaml over latgen.yaml"),
        None => "latgen.yaml".to_string(),
    }
}

/// The caller `--as`, `--from-vpc`, `--org` and `--method` describe; None when none of the
/// first three is given.
fn caller(args: &TraceOptions<'_>) -> Result<Option<Caller>, String> {
    if args.principal.is_none() && args.from_vpc.is_none() && args.org.is_none() {
        return Ok(None);
    }
    let c = Caller {
        principals: args.principal.iter().map(|s| s.to_string()).collect(),
        orgs: args.org.iter().map(|s| s.to_string()).collect(),
        vpcs: args.from_vpc.iter().map(|s| s.to_string()).collect(),
        methods: vec![args.method.to_string()],
    };
    if let Some((problem, _)) = crate::validate::principals::caller_problems(&c, None)
        .into_iter()
        .next()
    {
        return Err(format!("the caller's {problem}"));
    }
    Ok(Some(c))
}

/// The manifests of the output folder followed, and the project's paths.
fn network(args: &TraceOptions<'_>) -> Result<(Network, ProjectPaths), Diagnostic> {
    let (folder, paths) = traced_folder(args)?;
    Ok((read_network(&folder)?, paths))
}

/// The output folder followed: `-o` as given, or its environment's folder in it; and the
/// project's paths, for its settings and declarations. The project is the output folder's
/// parent, as `render` places the output beside it.
fn traced_folder(args: &TraceOptions<'_>) -> Result<(PathBuf, ProjectPaths), Diagnostic> {
    // As the other commands name the project's files: `apps/…` for the current folder.
    let root = args.output.parent().unwrap_or(Path::new(""));
    let paths = ProjectPaths::at_root(root);
    let here = match root.as_os_str().is_empty() {
        true => Path::new("."),
        false => root,
    };
    let (folder, mut paths) = match super::project::choose_envs(here, args.env)? {
        None => (args.output.to_path_buf(), paths),
        Some(chosen) => {
            let env = super::project::only_one(chosen)?;
            (args.output.join(&env), paths.in_env(&env, false, true))
        }
    };
    paths.output = folder.clone();
    Ok((folder, paths))
}
