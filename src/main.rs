use clap::Parser;

// latgen allocates millions of small strings from several threads (templates, YAML, the
// routing model); jemalloc does that about 10% faster than glibc's allocator and far
// faster than musl's, which the static release binaries would otherwise get.
#[cfg(unix)]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    latgen::cli::run(latgen::cli::Cli::parse())
}
