//! A progress line on stderr for runs long enough to wonder about (large trees take a few
//! seconds). It is drawn only on a terminal, never in CI (`CI` set) or on a dumb terminal,
//! and only once a run has gone on for about a second, so quick runs and logs stay clean.
//!
//! The stages report to one process-wide sink that the CLI switches on; until then every
//! call is a no-op, so the library and its tests run without it.

use std::io::IsTerminal as _;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a run goes on before progress is drawn.
const DELAY: Duration = Duration::from_secs(1);

struct Sink {
    bar: ProgressBar,
    start: Instant,
    shown: AtomicBool,
    done: AtomicBool,
}

static SINK: OnceLock<Sink> = OnceLock::new();

/// Whether progress may be drawn here: stderr is a terminal, not a dumb one, and the run
/// is not in CI.
pub(crate) fn wanted() -> bool {
    std::io::stderr().is_terminal()
        && std::env::var_os("CI").is_none()
        && std::env::var("TERM").map_or(true, |t| t != "dumb")
}

/// Switches progress on for this process (once; later calls do nothing).
pub(crate) fn enable() {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
    let _ = SINK.set(Sink {
        bar,
        start: Instant::now(),
        shown: AtomicBool::new(false),
        done: AtomicBool::new(false),
    });
}

fn sink() -> Option<&'static Sink> {
    let s = SINK.get().filter(|s| !s.done.load(Ordering::Relaxed))?;
    if !s.shown.load(Ordering::Relaxed) && s.start.elapsed() >= DELAY {
        s.shown.store(true, Ordering::Relaxed);
        s.bar.set_draw_target(ProgressDrawTarget::stderr());
    }
    Some(s)
}

/// Starts a stage, e.g. `stage("writing files", Some(22_656))`; `None` when the number of
/// steps is not known ahead.
pub(crate) fn stage(message: &'static str, len: Option<usize>) {
    if let Some(s) = sink() {
        let template = match len {
            Some(_) => "{spinner} {msg}: {human_pos}/{human_len}",
            None => "{spinner} {msg}: {human_pos}",
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            s.bar.set_style(style);
        }
        s.bar.set_message(message);
        match len {
            Some(n) => s.bar.set_length(n as u64),
            None => s.bar.unset_length(),
        }
        s.bar.set_position(0);
    }
}

/// Counts `n` steps of the current stage done.
pub(crate) fn advance(n: usize) {
    if let Some(s) = sink() {
        s.bar.inc(n as u64);
    }
}

/// Runs `f`, which prints, with the progress line out of the way.
pub(crate) fn suspend<R>(f: impl FnOnce() -> R) -> R {
    match SINK.get() {
        Some(s) => s.bar.suspend(f),
        None => f(),
    }
}

/// Clears the progress line for good, before the run prints its result.
pub(crate) fn clear() {
    if let Some(s) = SINK.get() {
        s.done.store(true, Ordering::Relaxed);
        s.bar.finish_and_clear();
    }
}
