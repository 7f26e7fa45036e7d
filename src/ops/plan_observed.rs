//! `latgen plan --observed FILE`: the plan against the apps' observed peak rates (see
//! [`crate::plan::observed`]), as bars a person reads at a glance.

use std::path::Path;

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Sources};
use crate::plan::observed::{GroupLoad, Observation};
use crate::plan::prepared::Prepared;
use crate::plan::rebalance::monthly_cost::grouped;
use crate::report::{bar, plural};

use super::shell::{Exit, Ui};

/// Cells of a group's load bar.
const BAR: usize = 24;

pub(super) fn run(file: &Path, prepared: &Prepared, ui: Ui) -> Exit {
    let text = match read(file) {
        Ok(t) => t,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    let peaks = match crate::plan::observed::parse(file, &text) {
        Ok(p) => p,
        Err(d) => return ui.fail(d, &Sources::default()),
    };
    let o = crate::plan::observed::observe(prepared, &peaks);
    print!("{}", report(file, prepared, &o, peaks.len()));
    if !o.problems.is_empty() {
        ui.report(&o.problems, &Sources::default());
    }
    let over = o.groups.iter().any(GroupLoad::over);
    if over || !o.stale.is_empty() {
        Exit::Found
    } else {
        Exit::Success
    }
}

fn read(file: &Path) -> Result<String, Diagnostic> {
    let cap = crate::plan::observed::MAX_OBSERVED_BYTES;
    let too_big = std::fs::metadata(file).is_ok_and(|m| m.len() > cap);
    if too_big {
        return Err(Diagnostic::error(
            Code::FileTooLarge,
            format!("{} is larger than {} MiB", file.display(), cap >> 20),
        )
        .help("query per app (`sum by (app)`), not per route or pod"));
    }
    std::fs::read_to_string(file).map_err(|e| {
        Diagnostic::error(
            Code::IoError,
            format!("cannot read {}: {e}", file.display()),
        )
        .help("give the file the Prometheus query's result was saved to")
    })
}

/// The report: a line per shared group with its load bar, then the stale declarations
/// and the moves that follow from fixing them.
fn report(file: &Path, prepared: &Prepared, o: &Observation, series: usize) -> String {
    let apps = &prepared.apps;
    let config = &prepared.config;
    let over = o.groups.iter().filter(|g| g.over()).count();
    let budget = grouped(config.throughput.rps_per_service);
    let mut out = format!(
        "{} ({series} series): {} of {} over the budget of {budget} rps; {} above {} declared peakRps\n\n",
        file.display(),
        over,
        plural(o.groups.len(), "shared group"),
        plural(o.stale.len(), "app"),
        if o.stale.len() == 1 { "its" } else { "their" },
    );
    let width = (o.groups.iter())
        .map(|g| config.group_name(g.number).len())
        .max()
        .unwrap_or(0);
    for g in &o.groups {
        let share = 100.0 * g.load / g.budget.max(1) as f64;
        out += &format!(
            "{:<width$}  {}  {:>7} / {budget} rps {:>4.0}%{}\n",
            config.group_name(g.number),
            bar(g.load, g.budget as f64, BAR),
            grouped(g.load.round() as u64),
            share,
            if g.over() { "  over" } else { "" },
        );
        if g.over() {
            let hottest: Vec<String> = (g.apps.iter().take(3))
                .map(|(id, r)| format!("{} {}", apps[*id].name, grouped(r.round() as u64)))
                .collect();
            out += &format!("{:<width$}  hottest: {}\n", "", hottest.join(", "));
        }
    }
    out += &fixes(prepared, o);
    if !o.unknown.is_empty() {
        let more = o.unknown_count - o.unknown.len();
        let rest = if more > 0 {
            format!(" and {} more", grouped(more as u64))
        } else {
            String::new()
        };
        out += &format!(
            "\nno app of this project is named {}{rest} (series left out)\n",
            o.unknown.join(", ")
        );
    }
    out
}

/// The declarations to fix, and what `render` then moves.
fn fixes(prepared: &Prepared, o: &Observation) -> String {
    let apps = &prepared.apps;
    let mut out = String::new();
    if o.stale.is_empty() {
        return out;
    }
    out += "\napps above their declared peakRps: declare what they do\n";
    for s in &o.stale {
        let app = &apps[s.app.index()];
        let declared = s.declared.map_or("none".to_string(), |d| d.to_string());
        out += &format!(
            "  {}: peakRps {declared} -> {} ({})\n",
            app.file.display(),
            s.observed.ceil() as u64,
            app.name
        );
    }
    let name = |n: u32| prepared.config.group_name(n);
    let budget = prepared.config.throughput.rps_per_service as f64;
    if o.moves.is_empty() && o.stale.iter().any(|s| s.observed > budget) {
        out += "then `latgen render` moves nothing: an app over a whole service's budget stays where it is (no group carries it), and the others still fit their groups\n";
    } else if o.moves.is_empty() {
        out += "then `latgen render` moves nothing: every group still has room\n";
    } else {
        out += "then `latgen render` moves (and `render --base` ships in safe steps):\n";
        for (id, from, to) in &o.moves {
            out += &format!(
                "  {}: {} -> {}\n",
                apps[id.index()].name,
                name(*from),
                name(*to)
            );
        }
    }
    out
}
