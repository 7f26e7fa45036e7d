//! `latgen trace`: the output stage's reading of the committed manifests, then one request
//! followed through them ([`crate::check::follow`]). Exit 0 when the request reaches a backend, 1
//! when it does not, 2 on a usage or input error.

use std::path::{Path, PathBuf};

use super::shell::{Exit, Ui};
use crate::check::follow::{parse_request, read_network, trace};
use crate::check::trace_output::{human, to_json};
use crate::diag::Sources;

/// What `latgen trace` is asked: the request, who sends it, and where to follow it.
pub(crate) struct TraceOptions<'a> {
    /// A URL or a path.
    pub url: &'a str,
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
    let request = match parse_request(args.url, args.host) {
        Ok(r) => r,
        Err(message) => {
            eprintln!("error: {message}");
            return Exit::Error;
        }
    };
    let who = match caller(args) {
        Ok(who) => who,
        Err(message) => {
            eprintln!("error: {message}");
            return Exit::Error;
        }
    };
    let folder = match traced_folder(args) {
        Ok(f) => f,
        Err(d) => {
            let mut diags = crate::diag::Diagnostics::new();
            diags.push(d);
            ui.report(&diags, &Sources::default());
            return Exit::Error;
        }
    };
    let net = match read_network(&folder) {
        Ok(n) => n,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    let t = trace(&net, request, who);
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

/// The caller `--as`, `--from-vpc`, `--org` and `--method` describe; None when none of the
/// first three is given.
fn caller(args: &TraceOptions<'_>) -> Result<Option<latgen_sim::iam::Identity>, String> {
    if args.principal.is_none() && args.from_vpc.is_none() && args.org.is_none() {
        return Ok(None);
    }
    let c = crate::input::auth::Caller {
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
    Ok(latgen_sim::iam::Identity::of_caller(&c).into_iter().next())
}

/// The output folder followed: `-o` as given, or its environment's folder in it. The
/// project is the output folder's parent, as `render` places the output beside it.
fn traced_folder(args: &TraceOptions<'_>) -> Result<PathBuf, crate::diag::Diagnostic> {
    let root = match args.output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    match super::project::choose_envs(root, args.env)? {
        None => Ok(args.output.to_path_buf()),
        Some(chosen) => Ok(args.output.join(super::project::only_one(chosen)?)),
    }
}
