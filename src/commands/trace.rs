//! `latgen trace`: the output stage's reading of the committed manifests, then one request
//! followed through them ([`crate::check::trace`]). Exit 0 when the request reaches a backend, 1
//! when it does not, 2 on a usage or input error.

use std::path::PathBuf;

use clap::ValueEnum;

use super::{Exit, Ui};
use crate::check::trace::{human, parse_request, read_network, to_json, trace};
use crate::diag::Sources;

#[derive(Debug, clap::Args)]
pub(crate) struct TraceArgs {
    /// The request: a URL (`https://www.example.com/shop/cart`) or a path (`/shop/cart`).
    #[arg(value_name = "URL")]
    pub url: String,
    /// The Host of a request given as a path [default: none, so only routes that take any
    /// host match].
    #[arg(long)]
    pub host: Option<String>,
    /// The output folder whose manifests are followed.
    #[arg(short, long, default_value = "generated")]
    pub output: PathBuf,
    /// The environment whose output is followed: `<output>/<NAME>` (generated/NAME).
    #[arg(long, value_name = "NAME")]
    pub env: Option<String>,
    /// Say whether this caller is let in by the auth policy of the Lattice service the
    /// request reaches: an IAM role or user ARN, or an account id.
    #[arg(long = "as", value_name = "PRINCIPAL")]
    pub principal: Option<String>,
    /// The VPC the caller sends from (with or without `--as`; without, an unsigned caller).
    #[arg(long, value_name = "VPC")]
    pub from_vpc: Option<String>,
    /// The caller's organization (`aws:PrincipalOrgID`).
    #[arg(long, value_name = "ORG")]
    pub org: Option<String>,
    /// The request's method, as the policy sees it.
    #[arg(long, default_value = "GET")]
    pub method: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TraceFormat::Human)]
    pub format: TraceFormat,
    #[command(flatten)]
    pub color: super::args::ColorArg,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub(crate) enum TraceFormat {
    Human,
    Json,
}

pub(crate) fn run(args: &TraceArgs, ui: Ui) -> Exit {
    let request = match parse_request(&args.url, args.host.as_deref()) {
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
fn caller(args: &TraceArgs) -> Result<Option<latgen_sim::iam::Identity>, String> {
    if args.principal.is_none() && args.from_vpc.is_none() && args.org.is_none() {
        return Ok(None);
    }
    let c = crate::input::auth::Caller {
        principals: args.principal.iter().cloned().collect(),
        orgs: args.org.iter().cloned().collect(),
        vpcs: args.from_vpc.iter().cloned().collect(),
        methods: vec![args.method.clone()],
    };
    if let Some((problem, _)) = crate::validate::auth::caller_problems(&c, None)
        .into_iter()
        .next()
    {
        return Err(format!("the caller's {problem}"));
    }
    Ok(latgen_sim::iam::Identity::of_caller(&c).into_iter().next())
}

/// The output folder followed: `-o` as given, or its environment's folder in it. The
/// project is the output folder's parent, as `render` places the output beside it.
fn traced_folder(args: &TraceArgs) -> Result<PathBuf, crate::diag::Diagnostic> {
    let root = match args.output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    match super::args::choose_envs(root, args.env.as_deref())? {
        None => Ok(args.output.clone()),
        Some(chosen) => Ok(args.output.join(super::args::only_one(chosen)?)),
    }
}
