//! The command line: the clap definition, dispatch to the subcommands in
//! [`crate::commands`], color, and the exit code. Exit codes follow ripgrep's spirit:
//! 0 success, 1 "found something" (stale output, findings), 2 a usage, input or I/O error.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::commands::{self, args::ColorChoice};
use crate::ops::shell::{Exit, Ui};

#[derive(Debug, Parser)]
#[command(
    name = "latgen",
    version,
    about = "Pack web apps into shared VPC Lattice services and write the Lattice and Kong manifests"
)]
pub struct Cli {
    /// When to color diagnostics [default: auto: on a terminal, unless NO_COLOR is set].
    // Given before or after the subcommand. Each subcommand's help lists it after the
    // command's own options, which clap numbers from 0, and before `--help`, unnumbered
    // (999).
    #[arg(long, value_enum, global = true, display_order = 998)]
    pub color: Option<ColorChoice>,
    #[command(subcommand)]
    pub command: Command,
}

/// The commands that print no diagnostics: their help does not show `--color`, and they
/// refuse it, as the top level's help does not show it either.
const WITHOUT_COLOR: [&str; 4] = ["schema", "explain", "completions", "man"];

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Plan the groups and write generated/ and latgen.lock (and deploy/, when there is one).
    Render(commands::render::RenderArgs),
    /// The PR gate: quotas, prefix shadowing, conflicts, names, staleness, rollout safety.
    Check(commands::check::CheckArgs),
    /// Move one app to another group in three safe steps (one PR each).
    Move(commands::move_app::MoveArgs),
    /// The rollouts in flight: moves in the lock, and (with --base) the steps left.
    Status(commands::status::StatusArgs),
    /// Write declarations and a lock for a live setup's routes, each app kept on the route
    /// it has (nothing changes live), ready to consolidate.
    Import(commands::import::ImportArgs),
    /// Propose the fewest moves that bring the number of groups down.
    Plan(commands::plan::PlanArgs),
    /// Place one environment's new apps in the groups another environment gives them,
    /// where its quotas allow, and say where the two differ.
    Promote(commands::promote::PromoteArgs),
    /// What the Lattice services cost per month, against one service per app.
    Cost(commands::cost::CostArgs),
    /// Follow one request through the generated manifests: Kong route, bridge, Lattice rule,
    /// backend.
    Trace(commands::trace::TraceArgs),
    /// Print one side's manifests, built in memory, as a YAML stream (for an Argo CD plugin).
    Manifests(commands::manifests::ManifestsArgs),
    /// Print the JSON Schema of an app declaration or of latgen.yaml.
    Schema(commands::schema::SchemaArgs),
    /// Start a project: latgen.yaml, an example app, the schemas, a CI workflow and the
    /// deploy kit.
    Init(commands::init::InitArgs),
    /// Write the deploy kit (deploy/): the two Argo CD Applications and their AppProject.
    Deploy(commands::deploy::DeployArgs),
    /// Say what a finding code means, with an example.
    Explain(commands::explain::ExplainArgs),
    /// Print a shell completion script.
    Completions(commands::completions::CompletionsArgs),
    /// Print the man page, or write every command's page to a folder.
    Man(commands::man::ManArgs),
}

/// The command-line definition with what only completion needs: the app names of the
/// project the shell is in, offered after `latgen move` (see [`commands::completions`]).
pub fn command() -> clap::Command {
    let mut cli = Cli::command();
    // In place (`mut_arg` would move the positional `app` after `APPS`, `mut_subcommand`
    // the command after the others).
    for sub in cli.get_subcommands_mut().filter(|s| s.get_name() == "move") {
        *sub = std::mem::take(sub).mut_args(|a| match a.get_id().as_str() {
            "app" => a.add(clap_complete::engine::ArgValueCandidates::new(
                commands::completions::app_names,
            )),
            _ => a,
        });
    }
    built(cli)
}

/// `cli` built, with `--color` hidden where it is no option: clap gives a global option to
/// every subcommand when it builds the command, so it is hidden after that, in place.
fn built(mut cli: clap::Command) -> clap::Command {
    cli.build();
    let hide = |a: clap::Arg| {
        if a.get_id() == "color" {
            a.hide(true)
        } else {
            a
        }
    };
    for sub in cli.get_subcommands_mut() {
        if WITHOUT_COLOR.contains(&sub.get_name()) {
            *sub = std::mem::take(sub).mut_args(hide);
        }
    }
    cli.mut_args(hide)
}

/// The command line parsed, or the process ended with clap's message (help, version, a
/// usage error).
pub fn parse() -> Cli {
    let mut cli = command();
    let matches = cli.get_matches_mut();
    if let Some((name, _)) = matches.subcommand()
        && WITHOUT_COLOR.contains(&name)
        && matches.value_source("color") == Some(ValueSource::CommandLine)
        && let Some(sub) = cli.find_subcommand_mut(name)
    {
        unexpected_color(sub).exit();
    }
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.format(&mut cli).exit())
}

/// clap's own error for an argument `sub` does not take: `--color`.
fn unexpected_color(sub: &mut clap::Command) -> clap::Error {
    let mut e = clap::Error::new(ErrorKind::UnknownArgument).with_cmd(sub);
    e.insert(
        ContextKind::InvalidArg,
        ContextValue::String("--color".into()),
    );
    e.insert(
        ContextKind::Usage,
        ContextValue::StyledStr(sub.render_usage()),
    );
    if sub.get_positionals().next().is_some() {
        let tip = "to pass '--color' as a value, use '-- --color'";
        e.insert(
            ContextKind::Suggested,
            ContextValue::StyledStrs(vec![tip.into()]),
        );
    }
    e
}

/// The command-line definition the man pages document: without clap's `help` command,
/// which has no page.
fn for_man() -> clap::Command {
    built(Cli::command().disable_help_subcommand(true))
}

pub fn run(cli: Cli) -> ExitCode {
    let choice = cli.color.unwrap_or(ColorChoice::Auto);
    let color = match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
        }
    };
    let ui = Ui { color };
    // The two commands that walk a whole tree can take seconds on a large one.
    if matches!(cli.command, Command::Render(_) | Command::Check(_))
        && crate::diag::progress::wanted()
    {
        crate::diag::progress::enable();
    }
    let outcome: Exit = match cli.command {
        Command::Render(args) => commands::render::run(&args, ui),
        Command::Check(args) => commands::check::run(&args, ui),
        Command::Move(args) => commands::move_app::run(&args, ui),
        Command::Status(args) => commands::status::run(&args, ui),
        Command::Plan(args) => commands::plan::run(&args, ui),
        Command::Promote(args) => commands::promote::run(&args, ui),
        Command::Import(args) => commands::import::run(&args, ui),
        Command::Cost(args) => commands::cost::run(&args, ui),
        Command::Trace(args) => commands::trace::run(&args, ui),
        Command::Manifests(args) => commands::manifests::run(&args, ui),
        Command::Schema(args) => commands::schema::run(&args),
        Command::Init(args) => commands::init::run(&args, ui),
        Command::Deploy(args) => commands::deploy::run(&args, ui),
        Command::Explain(args) => commands::explain::run(&args),
        Command::Completions(args) => commands::completions::run(&args),
        Command::Man(args) => commands::man::run(&args, for_man()),
    };
    crate::diag::progress::clear();
    ExitCode::from(outcome.exit_code())
}
