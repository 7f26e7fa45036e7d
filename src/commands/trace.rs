//! `latgen trace`: its arguments, run by [`crate::ops::latgen_trace`].

use std::path::PathBuf;

use super::args::EnvArg;
use crate::ops::latgen_trace::{TraceFormat, TraceOptions, run as trace};
use crate::ops::shell::{Exit, Ui};

#[derive(Debug, clap::Args)]
#[command(mut_arg("env", |a| a
    .help("The environment whose output is followed: `<output>/<NAME>` (generated/NAME)")
    .value_name("NAME")))]
pub(crate) struct TraceArgs {
    /// The request: a URL (`https://www.example.com/shop/cart`) or a path (`/shop/cart`).
    #[arg(value_name = "URL", required_unless_present = "callers")]
    pub url: Option<String>,
    /// The Host of a request given as a path [default: none, so only routes that take any
    /// host match].
    #[arg(long)]
    pub host: Option<String>,
    /// The output folder whose manifests are followed.
    #[arg(short, long, default_value = "generated")]
    pub output: PathBuf,
    #[command(flatten)]
    pub env: EnvArg,
    /// Say whether this caller is let in by the auth policy of the Lattice service the
    /// request reaches, when it calls the service's domain straight: an IAM role or user
    /// ARN, or an account id. Through Kong, a request reaches Lattice as Kong (`auth.kong`)
    /// and is checked as Kong.
    #[arg(long = "as", value_name = "PRINCIPAL")]
    pub principal: Option<String>,
    /// The VPC the caller sends from (with `--as`, or alone for an unsigned caller). Left
    /// out, the policy is asked for every VPC it names and one it does not.
    #[arg(long, value_name = "VPC")]
    pub from_vpc: Option<String>,
    /// The caller's organization (`aws:PrincipalOrgID`).
    #[arg(long, value_name = "ORG")]
    pub org: Option<String>,
    /// The request's method, as the policy sees it.
    #[arg(long, default_value = "GET")]
    pub method: String,
    /// Instead of following a request, list who may call app APP (repeatable): Kong and
    /// every declared caller, each with what the committed auth policy of every Lattice
    /// service that holds the app's rules says of it.
    #[arg(long, value_name = "APP", conflicts_with_all = ["url", "host", "principal", "from_vpc", "org", "method"])]
    pub callers: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TraceFormat::Human)]
    pub format: TraceFormat,
}

pub(crate) fn run(args: &TraceArgs, ui: Ui) -> Exit {
    let opts = TraceOptions {
        url: args.url.as_deref(),
        callers: &args.callers,
        host: args.host.as_deref(),
        output: &args.output,
        env: args.env.env.as_deref(),
        principal: args.principal.as_deref(),
        from_vpc: args.from_vpc.as_deref(),
        org: args.org.as_deref(),
        method: &args.method,
        format: args.format,
    };
    trace(&opts, ui)
}
