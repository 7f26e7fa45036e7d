//! The command line: argument parsing (clap derive) and the end of each command's pipeline.
//! Exit codes follow ripgrep's spirit: 0 success, 1 "found something" (stale output,
//! findings), 2 a usage, input or I/O error.

use std::borrow::Cow;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};

use crate::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Severity, Sources, render_human};
use crate::load::ProjectPaths;
use crate::render::{Side, Templates};
use crate::write::{self, ChangeKind};

#[derive(Debug, Parser)]
#[command(
    name = "latgen",
    version,
    about = "Pack web apps into shared VPC Lattice services and write the Lattice and Kong manifests"
)]
pub struct Cli {
    /// When to color diagnostics.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, global = true)]
    pub color: ColorChoice,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Plan the groups and write generated/ and latgen.lock.
    Render(RenderArgs),
    /// The PR gate: quotas, prefix shadowing, conflicts, names, staleness, rollout safety.
    Check(CheckArgs),
    /// Move one app to another group in three safe steps (one PR each).
    Move(MoveArgs),
    /// Propose the fewest moves that bring the number of groups down.
    Plan(PlanArgs),
    /// What the Lattice services cost per month, against one service per app.
    Cost(CostArgs),
    /// Follow one request through the generated manifests: Kong route, bridge, Lattice rule,
    /// backend.
    Trace(TraceArgs),
    /// Print one side's manifests, built in memory, as a YAML stream (for an Argo CD plugin).
    Manifests(ManifestsArgs),
    /// Print the JSON Schema of an app declaration or of latgen.yaml.
    Schema(SchemaArgs),
    /// Start a project: latgen.yaml, an example app, the schemas and a CI workflow.
    Init(InitArgs),
    /// Print a shell completion script.
    Completions(CompletionsArgs),
    /// Print the man page.
    Man,
}

#[derive(Debug, clap::Args)]
pub struct TraceArgs {
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
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum TraceFormat {
    Human,
    Json,
}

#[derive(Debug, clap::Args)]
pub struct ManifestsArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Folder of templates to use instead of the built-in ones (same file names).
    #[arg(long)]
    pub templates: Option<PathBuf>,
    /// The side to print.
    #[arg(long, value_enum)]
    pub side: OnlySide,
}

#[derive(Debug, clap::Args)]
pub struct SchemaArgs {
    /// The input the schema describes.
    #[arg(value_enum, default_value_t = crate::schema::Kind::App)]
    pub kind: crate::schema::Kind,
}

#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// The project folder (created when missing).
    #[arg(default_value = ".")]
    pub dir: PathBuf,
}

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, clap::Args)]
pub struct MoveArgs {
    /// The app to move.
    pub app: String,
    /// The group to move it to (a group in use, or the next new one).
    #[arg(long, conflicts_with = "continue_")]
    pub group: Option<u32>,
    /// Advance the move in flight by one step.
    #[arg(long = "continue")]
    pub continue_: bool,
    /// Folder of app declarations.
    #[arg(long, default_value = "apps")]
    pub apps: PathBuf,
    /// Project settings [default: latgen.yaml beside the apps folder].
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Group assignments [default: latgen.lock beside the apps folder].
    #[arg(long)]
    pub lock: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub input: InputArgs,
}

#[derive(Debug, clap::Args)]
pub struct CostArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CostFormat::Table)]
    pub format: CostFormat,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum CostFormat {
    Table,
    Json,
}

/// One half of the output, one per Argo CD Application.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum OnlySide {
    Lattice,
    Kong,
}

impl OnlySide {
    pub fn side(self) -> Side {
        match self {
            OnlySide::Lattice => Side::Lattice,
            OnlySide::Kong => Side::Kong,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Format {
    /// Findings with the source line, for people.
    Human,
    /// One JSON object per finding and line.
    Json,
    /// GitHub Actions annotations (`::error file=…::…`).
    Github,
    /// SARIF 2.1.0, for code scanning.
    Sarif,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Deny {
    /// Warnings fail the check too.
    Warnings,
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// The committed output folder.
    #[arg(short, long, default_value = "generated")]
    pub output: PathBuf,
    /// Folder of templates `render` is run with.
    #[arg(long)]
    pub templates: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// Exit 1 on warnings as well.
    #[arg(long, value_enum)]
    pub deny: Option<Deny>,
    /// Compare with this Git revision: accept a PR that leaves one side as it was when the
    /// other side can safely go live first, and refuse a change either side of which could
    /// break routing by going live first.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct InputArgs {
    /// Folder of app declarations (one YAML file per app, walked recursively).
    #[arg(default_value = "apps")]
    pub apps: PathBuf,
    /// Project settings [default: latgen.yaml beside the apps folder].
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Group assignments [default: latgen.lock beside the apps folder].
    #[arg(long)]
    pub lock: Option<PathBuf>,
}

impl InputArgs {
    pub fn paths(&self) -> ProjectPaths {
        let root = self.apps.parent().unwrap_or(Path::new(""));
        let mut paths = ProjectPaths::at_root(root);
        paths.apps_dir = self.apps.clone();
        if let Some(c) = &self.config {
            paths.config = c.clone();
        }
        if let Some(l) = &self.lock {
            paths.lock = l.clone();
        }
        paths
    }
}

#[derive(Debug, clap::Args)]
pub struct RenderArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Output folder.
    #[arg(short, long, default_value = "generated")]
    pub output: PathBuf,
    /// Folder of templates to use instead of the built-in ones (same file names).
    #[arg(long)]
    pub templates: Option<PathBuf>,
    /// Write nothing; exit 1 with a unified diff when the output or the lock is stale.
    #[arg(long)]
    pub check: bool,
    /// Write only one side (and the lock), to ship a change as two PRs.
    #[arg(long, value_enum)]
    pub only: Option<OnlySide>,
}

pub fn run(cli: Cli) -> ExitCode {
    let color = match cli.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
        }
    };
    // The two commands that walk a whole tree can take seconds on a large one.
    if matches!(cli.command, Command::Render(_) | Command::Check(_)) && crate::progress::wanted() {
        crate::progress::enable();
    }
    let code = match cli.command {
        Command::Render(args) => render(&args, color),
        Command::Check(args) => check(&args, color),
        Command::Move(args) => move_app(&args, color),
        Command::Plan(args) => plan(&args, color),
        Command::Cost(args) => cost(&args, color),
        Command::Trace(args) => crate::trace::run(&args, color),
        Command::Manifests(args) => manifests(&args, color),
        Command::Schema(args) => to_stdout(args.kind.text().as_bytes()),
        Command::Init(args) => init(&args, color),
        Command::Completions(args) => {
            let mut script = Vec::new();
            clap_complete::generate(args.shell, &mut Cli::command(), "latgen", &mut script);
            to_stdout(&script)
        }
        Command::Man => man(),
    };
    crate::progress::clear();
    ExitCode::from(code)
}

fn report(diags: &Diagnostics, sources: &Sources, color: bool) {
    if !diags.is_empty() {
        crate::progress::suspend(|| eprint!("{}", render_human(diags, sources, color)));
    }
}

fn fail(d: Diagnostic, sources: &Sources, color: bool) -> u8 {
    let mut diags = Diagnostics::new();
    diags.push(d);
    report(&diags, sources, color);
    2
}

fn render(args: &RenderArgs, color: bool) -> u8 {
    let paths = args.input.paths();
    if let Some(d) = output_problem(&args.output, &paths.apps_dir) {
        return fail(d, &Sources::default(), color);
    }
    let Some(built) = build_reporting(&paths, args.templates.as_deref(), color) else {
        return 2;
    };
    // One run at a time per output folder, from reading it to swapping the new tree in.
    let _run = match write::lock_output(&args.output) {
        Ok(l) => l,
        Err(d) => return fail(d, &built.sources, color),
    };
    // The output folder as it is: read once, for the warnings about the change and for
    // deciding which files to write.
    let existing = match write::read_tree(&args.output) {
        Ok(t) => t,
        Err(d) => return fail(d, &built.sources, color),
    };
    let mut notes = built.diags.clone();
    let quota = built.prepared.config.quotas.rules_per_service as usize;
    notes.extend(crate::check::change_warnings(
        &existing,
        &built.output.files,
        quota,
        &args.output,
    ));
    notes.sort();
    report(&notes, &built.sources, color);
    let crate::Built {
        prepared,
        output: mut all,
        sources,
        ..
    } = built;
    let only = args.only.map(OnlySide::side);
    all.files
        .retain(|p, _| only.is_none_or(|s| p.starts_with(s.dir())));
    let rendered_files = all.files.len();
    let extra = [(paths.lock.clone(), prepared.lock_text())];
    let mut changes = match write::changes(&args.output, &existing, Cow::Owned(all), &extra) {
        Ok(c) => c,
        Err(d) => return fail(d, &sources, color),
    };
    if let Some(side) = only {
        // The other side stays exactly as it is.
        let keep = args.output.join(side.dir());
        changes.retain(|c| c.path == paths.lock || c.path.starts_with(&keep));
    }
    let plan = &prepared.plan;
    let summary = format!(
        "{} in {} ({}, {} dedicated)",
        plural(prepared.apps.len(), "app"),
        plural(plan.service_count(), "Lattice service"),
        plural(plan.groups.len(), "shared group"),
        plan.dedicated.len()
    );
    if args.check {
        crate::progress::clear();
        if changes.is_empty() {
            eprintln!("up to date: {summary}");
            return 0;
        }
        print!("{}", write::unified_diff(&changes));
        let lock_stale = changes.iter().any(|c| c.path == paths.lock);
        let outputs = changes.len() - usize::from(lock_stale);
        let what = match (outputs, lock_stale) {
            (0, _) => paths.lock.display().to_string(),
            (n, false) => format!("{} ({})", args.output.display(), plural(n, "file")),
            (n, true) => format!(
                "{} ({}) and {}",
                args.output.display(),
                plural(n, "file"),
                paths.lock.display()
            ),
        };
        eprintln!(
            "error: {what} differ from what `latgen render` writes; run it and commit the result"
        );
        return 1;
    }
    let applied = write::apply(&args.output, &existing, &changes);
    crate::progress::clear();
    if let Err(d) = applied {
        return fail(d, &sources, color);
    }
    let count = |k: ChangeKind| changes.iter().filter(|c| c.kind == k).count();
    eprintln!(
        "rendered {summary}: {} added, {} changed, {} removed, {} unchanged",
        count(ChangeKind::Added),
        count(ChangeKind::Changed),
        count(ChangeKind::Removed),
        rendered_files + 1 - count(ChangeKind::Added) - count(ChangeKind::Changed)
    );
    crate::free_later((existing, changes, prepared, sources));
    0
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

fn check(args: &CheckArgs, color: bool) -> u8 {
    let paths = args.input.paths();
    if let Some(d) = output_problem(&args.output, &paths.apps_dir) {
        return fail(d, &Sources::default(), color);
    }
    let templates = match Templates::load(args.templates.as_deref()) {
        Ok(t) => t,
        Err(d) => return fail(d, &Sources::default(), color),
    };
    let base = match &args.base {
        Some(rev) => match crate::git::read_folder_at(&args.output, rev) {
            Ok(files) => Some(files),
            Err(d) => return fail(d, &Sources::default(), color),
        },
        None => None,
    };
    let opts = crate::check::CheckOptions {
        paths,
        out_dir: args.output.clone(),
        templates: &templates,
        base,
    };
    let report = match crate::check::check(&opts) {
        Ok(r) => r,
        Err(d) => return fail(d, &Sources::default(), color),
    };
    let diags = &report.diags;
    let text = match args.format {
        Format::Human => {
            let mut t = render_human(
                diags,
                &report.sources,
                color && std::io::stdout().is_terminal(),
            );
            if diags.is_empty() {
                t.push_str("no findings\n");
            }
            if !report.diff.is_empty() {
                t.push('\n');
                t.push_str(&report.diff);
            }
            t
        }
        Format::Json => crate::report::json_lines(diags),
        Format::Github => crate::report::github(diags),
        Format::Sarif => crate::report::sarif(diags),
    };
    crate::progress::clear();
    print!("{text}");
    if diags.iter().any(|d| d.code.is_operational()) {
        return 2;
    }
    let failing = diags
        .iter()
        .any(|d| d.severity == Severity::Error || args.deny.is_some());
    u8::from(failing)
}

/// Load → validate → plan → render in memory, reporting problems; None when it fails.
fn build_reporting(
    paths: &ProjectPaths,
    templates: Option<&Path>,
    color: bool,
) -> Option<crate::Built> {
    let templates = match Templates::load(templates) {
        Ok(t) => t,
        Err(d) => {
            fail(d, &Sources::default(), color);
            return None;
        }
    };
    match crate::build(paths, &templates) {
        Ok(b) => Some(b),
        Err(failure) => {
            report(&failure.diags, &failure.sources, color);
            None
        }
    }
}

/// Load → validate → plan, reporting problems; None when the project cannot be planned.
fn prepared(paths: &ProjectPaths, color: bool) -> Option<crate::Prepared> {
    let run = crate::prepare(paths);
    report(&run.diags, &run.sources, color);
    run.prepared
}

fn move_app(args: &MoveArgs, color: bool) -> u8 {
    let input = InputArgs {
        apps: args.apps.clone(),
        config: args.config.clone(),
        lock: args.lock.clone(),
    };
    let paths = input.paths();
    let Some(prepared) = prepared(&paths, color) else {
        return 2;
    };
    match crate::rebalance::move_app(&prepared, &args.app, args.group, args.continue_) {
        Ok(result) => {
            let text = crate::lock::serialize(&result.lock);
            if let Err(d) = write::write_atomic(&paths.lock, text.as_bytes()) {
                return fail(d, &Sources::default(), color);
            }
            println!("{}", result.message);
            0
        }
        Err(d) => {
            let mut diags = Diagnostics::new();
            diags.push(d);
            report(&diags, &Sources::default(), color);
            1
        }
    }
}

fn plan(args: &PlanArgs, color: bool) -> u8 {
    let Some(prepared) = prepared(&args.input.paths(), color) else {
        return 2;
    };
    let c = match crate::rebalance::compaction(&prepared) {
        Ok(c) => c,
        Err(d) => return fail(d, &Sources::default(), color),
    };
    let price = prepared.config.pricing.service_hour_usd * crate::rebalance::HOURS_PER_MONTH;
    println!(
        "{} now; the apps fit in no fewer than {} (lower bound)",
        plural(c.groups_now, "shared group"),
        c.lower_bound
    );
    if c.moves.is_empty() {
        println!("no move brings the count down");
        return 0;
    }
    println!(
        "{} bring it to {}, saving {}/month; each move is three PRs, and nothing is applied until you run them:",
        plural(c.moves.len(), "move"),
        c.groups_after,
        crate::rebalance::dollars((c.groups_now - c.groups_after) as f64 * price)
    );
    for (app, _, to) in &c.moves {
        println!("  latgen move {app} --group {to}");
    }
    0
}

fn cost(args: &CostArgs, color: bool) -> u8 {
    let Some(prepared) = prepared(&args.input.paths(), color) else {
        return 2;
    };
    let c = crate::rebalance::cost(&prepared);
    match args.format {
        CostFormat::Table => print!("{}", crate::rebalance::cost_table(&c)),
        CostFormat::Json => println!(
            "{}",
            serde_json::json!({
                "services": c.services, "groups": c.groups, "dedicated": c.dedicated, "apps": c.apps,
                "monthlyUsd": (c.monthly * 100.0).round() / 100.0,
                "monthlyOnePerAppUsd": (c.monthly_one_per_app * 100.0).round() / 100.0,
                "savingUsd": (c.saving * 100.0).round() / 100.0,
                "savingRatio": (c.saving_ratio * 1000.0).round() / 1000.0,
            })
        ),
    }
    0
}

/// Builds in memory and prints one side's documents as a YAML stream. An Argo CD plugin
/// runs this on every sync, so any error fails the sync (exit 2) rather than printing less:
/// an empty or partial stream would make Argo CD prune the objects it no longer sees.
fn manifests(args: &ManifestsArgs, color: bool) -> u8 {
    let paths = args.input.paths();
    let Some(built) = build_reporting(&paths, args.templates.as_deref(), color) else {
        return 2;
    };
    report(&built.diags, &built.sources, color);
    let side = args.side.side();
    // kustomization.yaml lists the files for kustomize; it is not an object to apply.
    let docs: Vec<&str> = built
        .output
        .files
        .iter()
        .filter(|(p, _)| {
            p.starts_with(side.dir()) && p.file_name() != Some("kustomization.yaml".as_ref())
        })
        .map(|(_, text)| text.as_str())
        .collect();
    if docs.is_empty() {
        eprintln!(
            "error: the {} side has no manifest; refusing to print an empty stream, which would make Argo CD prune every object of the Application",
            side.dir()
        );
        return 2;
    }
    let mut out = String::new();
    for (i, doc) in docs.iter().enumerate() {
        if i > 0 {
            out.push_str("---\n");
        }
        out.push_str(doc);
        if !doc.ends_with('\n') {
            out.push('\n');
        }
    }
    to_stdout(out.as_bytes())
}

/// Writes a command's whole output; a closed or failing stdout is an error (exit 2), so
/// that a consumer such as Argo CD never takes a cut stream for the full one.
fn to_stdout(bytes: &[u8]) -> u8 {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => 0,
        // The reader went away (`latgen man | head`): nothing to report.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 2,
        Err(e) => {
            eprintln!("error: cannot write to stdout: {e}");
            2
        }
    }
}

/// What `latgen init` writes, by path relative to the project folder.
fn init_files() -> Vec<(&'static str, String)> {
    vec![
        (
            "latgen.yaml",
            include_str!("../scaffold/latgen.yaml").to_string(),
        ),
        (
            "apps/example.yaml",
            include_str!("../scaffold/apps/example.yaml").to_string(),
        ),
        (
            crate::schema::Kind::App.file(),
            crate::schema::Kind::App.text(),
        ),
        (
            crate::schema::Kind::Config.file(),
            crate::schema::Kind::Config.text(),
        ),
        (
            ".github/workflows/latgen.yml",
            include_str!("../examples/github-actions.yml").to_string(),
        ),
    ]
}

fn init(args: &InitArgs, color: bool) -> u8 {
    let files = init_files();
    // Refuse before writing anything, so that a refused init changes nothing.
    let existing: Vec<String> = files
        .iter()
        .map(|(rel, _)| args.dir.join(rel))
        .filter(|p| p.symlink_metadata().is_ok())
        .map(|p| p.display().to_string())
        .collect();
    if !existing.is_empty() {
        eprintln!(
            "error: {} already exist{}; latgen init writes only new files and changed nothing",
            existing.join(", "),
            if existing.len() == 1 { "s" } else { "" }
        );
        return 2;
    }
    for (rel, text) in &files {
        let path = args.dir.join(rel);
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| {
                // create_new: a file that appeared since the check above is still not
                // overwritten.
                let mut f = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&path)?;
                std::io::Write::write_all(&mut f, text.as_bytes())
            });
        if let Err(e) = written {
            let d = Diagnostic::error(
                Code::IoError,
                format!("cannot write {}: {e}", path.display()),
            );
            return fail(d, &Sources::default(), color);
        }
        eprintln!("created {}", path.display());
    }
    eprintln!(
        "next: describe your apps in apps/ (one file each), run `latgen render`, and commit apps/, latgen.yaml, latgen.lock and generated/"
    );
    0
}

fn man() -> u8 {
    let mut page = Vec::new();
    if let Err(e) = clap_mangen::Man::new(Cli::command()).render(&mut page) {
        eprintln!("error: cannot render the man page: {e}");
        return 2;
    }
    to_stdout(&page)
}

/// The output folder must not be a file nor lie inside the apps folder (its YAML would be
/// read back as app declarations).
fn output_problem(out: &Path, apps: &Path) -> Option<Diagnostic> {
    if out.is_file() {
        return Some(
            Diagnostic::error(
                Code::InvalidOutput,
                format!("output {} is a file", out.display()),
            )
            .help("give a folder for -o, e.g. `-o generated/`"),
        );
    }
    let abs = |p: &Path| -> Option<PathBuf> {
        // The output may not exist yet: resolve its nearest existing ancestor.
        let mut existing = p.to_path_buf();
        let mut rest = Vec::new();
        while !existing.exists() {
            rest.push(existing.file_name()?.to_owned());
            existing = existing
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| PathBuf::from("."));
            if existing.as_os_str().is_empty() {
                existing = PathBuf::from(".");
            }
        }
        let mut full = existing.canonicalize().ok()?;
        full.extend(rest.into_iter().rev());
        Some(full)
    };
    let (o, a) = (abs(out)?, abs(apps)?);
    if o.starts_with(&a) || a.starts_with(&o) {
        return Some(
            Diagnostic::error(
                Code::InvalidOutput,
                format!(
                    "output {} overlaps the apps folder {}",
                    out.display(),
                    apps.display()
                ),
            )
            .help("write the manifests to a folder beside apps/, e.g. `-o generated/`"),
        );
    }
    None
}
