use clap::Parser;

fn main() -> std::process::ExitCode {
    latgen::cli::run(latgen::cli::Cli::parse())
}
