//! The command line's own documentation: `latgen --help` and `latgen <subcommand> --help`
//! are snapshots (`tests/cli/help/<command>.txt`, compared exactly; a missing one fails;
//! write them with `LATGEN_BLESS=1 cargo test --test help`), and the man page names every
//! subcommand, each of which has a page of its own. One test per command: `help::<command>`
//! and `man::<command>`.

mod common;

use std::path::PathBuf;
use std::process::Command;

use clap::CommandFactory;
use libtest_mimic::Trial;

/// The subcommands as declared (clap's own `help` is added only when the command is built).
fn subcommands() -> Vec<clap::Command> {
    latgen::cli::Cli::command()
        .get_subcommands()
        .cloned()
        .collect()
}

fn help_snapshot(name: &str) -> PathBuf {
    common::root().join(format!("tests/cli/help/{name}.txt"))
}

/// Runs the binary with `args`; returns its stdout after checking that it succeeded
/// silently on stderr.
fn stdout_of(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_latgen"))
        .args(args)
        .env_remove("CLICOLOR_FORCE")
        .current_dir(common::root())
        .output()
        .expect("the latgen binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "latgen {args:?}: {stderr}");
    assert_eq!(stderr, "", "latgen {args:?} writes nothing on stderr");
    String::from_utf8(out.stdout).unwrap()
}

/// `latgen [SUBCOMMAND] --help`, exactly as committed.
fn help(sub: Option<&str>) {
    let mut args: Vec<&str> = sub.into_iter().collect();
    args.push("--help");
    let text = stdout_of(&args);
    common::assert_snapshot(&help_snapshot(sub.unwrap_or("latgen")), &text);
}

/// A man page's text with roff's escapes for `-` and `'` undone.
fn unroff(page: &str) -> String {
    page.replace("\\-", "-").replace("\\*(Aq", "'")
}

/// The top-level page, as `latgen man` prints it.
fn top_page() -> String {
    stdout_of(&["man"])
}

/// `latgen man`: the page of the whole command.
fn man_latgen() {
    let page = top_page();
    assert!(page.contains(".TH latgen 1"), "{page}");
    let about = latgen::cli::Cli::command().get_about().unwrap().to_string();
    assert!(
        unroff(&page).contains(&format!(".SH NAME\nlatgen - {about}\n")),
        "the NAME section of `latgen man`:\n{page}"
    );
}

/// The top-level page lists `sub` with its summary, and `sub` has a page of its own with
/// its name and summary.
fn man_sub(sub: &clap::Command) {
    let name = sub.get_name();
    let about = sub
        .get_about()
        .unwrap_or_else(|| panic!("`{name}` has no about text"))
        .to_string();
    let top = unroff(&top_page());
    let entry = format!("latgen-{name}(1)\n{about}\n");
    assert!(
        top.contains(&entry),
        "`latgen man` does not list `{name}` with its summary:\n{top}"
    );

    let mut page = Vec::new();
    clap_mangen::Man::new(sub.clone())
        .render(&mut page)
        .unwrap_or_else(|e| panic!("the man page of `{name}` does not render: {e}"));
    let page = unroff(&String::from_utf8(page).unwrap());
    assert!(
        page.contains(&format!(".TH {name} 1")),
        "the man page of `{name}` is not titled by its name:\n{page}"
    );
    assert!(
        page.contains(&format!(".SH NAME\n{name} - {about}\n")),
        "the man page of `{name}` does not name it with its summary:\n{page}"
    );
}

/// Every help snapshot belongs to a command that exists: a removed or renamed subcommand
/// leaves no stale file behind.
fn no_stale_help_snapshots() {
    let mut known: Vec<String> = subcommands()
        .iter()
        .map(|s| format!("{}.txt", s.get_name()))
        .collect();
    known.push("latgen.txt".into());
    let dir = common::root().join("tests/cli/help");
    let stale: Vec<String> = common::read_tree(&dir)
        .into_keys()
        .map(|p| p.display().to_string())
        .filter(|f| !known.contains(f))
        .collect();
    assert!(stale.is_empty(), "help snapshots of no command: {stale:?}");
}

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let mut trials = vec![
        Trial::test("help::latgen", || {
            help(None);
            Ok(())
        }),
        Trial::test("man::latgen", || {
            man_latgen();
            Ok(())
        }),
        Trial::test("help::no-stale-snapshots", || {
            no_stale_help_snapshots();
            Ok(())
        }),
    ];
    for sub in subcommands() {
        let name = sub.get_name().to_string();
        trials.push(Trial::test(format!("help::{name}"), {
            let name = name.clone();
            move || {
                help(Some(&name));
                Ok(())
            }
        }));
        trials.push(Trial::test(format!("man::{name}"), move || {
            man_sub(&sub);
            Ok(())
        }));
    }
    libtest_mimic::run(&args, trials).exit();
}
