// latgen allocates millions of small strings from several threads (templates, YAML, the
// routing model); jemalloc does that about 10% faster than glibc's allocator and far
// faster than musl's, which the static release binaries would otherwise get.
#[cfg(unix)]
#[global_allocator]
static ALLOCATOR: Budgeted<tikv_jemallocator::Jemalloc> = Budgeted(tikv_jemallocator::Jemalloc);
#[cfg(not(unix))]
#[global_allocator]
static ALLOCATOR: Budgeted<std::alloc::System> = Budgeted(std::alloc::System);

/// jemalloc's settings, read before `main` (here rather than in the build's environment,
/// so that a `cargo install` gets them too; `_RJEM_MALLOC_CONF` still overrides them).
/// One arena: latgen runs on a few threads that each allocate many small strings, and more
/// arenas only raise the peak memory (render at 10,000 apps: 100 MB with the default of 4
/// per core, 93 MB with one, in the same time). Transparent huge pages (`thp:always`) were
/// measured and left out: see docs/src/design/performance.md.
#[cfg(unix)]
#[unsafe(export_name = "_rjem_malloc_conf")]
static MALLOC_CONF: &[u8; 10] = b"narenas:1\0";

/// The allocator, with the memory of each template render counted and capped
/// (`latgen::render::budget`): a custom template that builds gigabytes of strings is
/// stopped with a report instead of ending in an allocation failure.
struct Budgeted<A>(A);

use latgen::render::budget;
use std::alloc::{GlobalAlloc, Layout};

// SAFETY: every call goes to the inner allocator with the same arguments; the budget only
// counts sizes, and ends the process (never unwinds) when a template passes its cap.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Budgeted<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !budget::charge(layout.size()) {
            budget::exceeded();
        }
        unsafe { self.0.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !budget::charge(layout.size()) {
            budget::exceeded();
        }
        unsafe { self.0.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        budget::credit(layout.size());
        unsafe { self.0.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            if !budget::charge(new_size - layout.size()) {
                budget::exceeded();
            }
        } else {
            budget::credit(layout.size() - new_size);
        }
        unsafe { self.0.realloc(ptr, layout, new_size) }
    }
}

fn main() -> std::process::ExitCode {
    // Rust ignores SIGPIPE, so a closed pipe (`latgen plan | head -1`) makes the next print
    // panic. A command-line tool ends quietly there instead, as `cat` and `grep` do; the
    // output folder is written through a lock that a killed run leaves recoverable.
    #[cfg(unix)]
    // SAFETY: called first, before any thread starts; SIG_DFL is a valid action.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // A shell asking for completions (through the script `latgen completions SHELL`
    // prints): answered, and the process exits. Without the variable this returns at once.
    clap_complete::CompleteEnv::with_factory(latgen::cli::command)
        .var(latgen::commands::completions::COMPLETE_VAR)
        .complete();
    latgen::cli::run(latgen::cli::parse())
}
