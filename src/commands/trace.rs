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
    let net = match read_network(&args.output) {
        Ok(n) => n,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    let t = trace(&net, request);
    match args.format {
        TraceFormat::Human => print!("{}", human(&t)),
        TraceFormat::Json => println!("{}", to_json(&t)),
    }
    if t.reached() {
        Exit::Success
    } else {
        Exit::Found
    }
}
