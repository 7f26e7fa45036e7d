//! Layer 13, commands: the subcommands, one module each: its clap arguments and a short
//! `run` that turns them into the options of its operation in [`crate::ops`] and calls it.
//! The arguments several commands take are in `args.rs`, flattened into each; `--color`
//! is the binary's one global option (`cli.rs`). `explain`, `completions`, `man` and
//! `schema` are about the command line itself and need no operation.

pub(crate) mod args;
pub(crate) mod check;
pub mod completions;
pub(crate) mod cost;
pub(crate) mod deploy;
pub(crate) mod explain;
pub(crate) mod import;
pub(crate) mod init;
pub(crate) mod man;
pub(crate) mod manifests;
pub(crate) mod move_app;
pub(crate) mod plan;
pub(crate) mod promote;
pub(crate) mod render;
pub(crate) mod schema;
pub(crate) mod status;
pub(crate) mod trace;
