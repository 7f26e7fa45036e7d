use clap::Parser;

// latgen allocates millions of small strings from several threads (templates, YAML, the
// routing model); jemalloc does that about 10% faster than glibc's allocator and far
// faster than musl's, which the static release binaries would otherwise get.
#[cfg(unix)]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    // A shell asking for completions (through the script `latgen completions SHELL`
    // prints): answered, and the process exits. Without the variable this returns at once.
    clap_complete::CompleteEnv::with_factory(latgen::cli::command)
        .var(latgen::commands::completions::COMPLETE_VAR)
        .complete();
    latgen::cli::run(latgen::cli::Cli::parse())
}
