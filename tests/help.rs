//! The command line's own documentation: `latgen --help` and `latgen <subcommand> --help`
//! are snapshots (`tests/cli/help/<command>.txt`, compared exactly; a missing one fails;
//! write them with `LATGEN_BLESS=1 cargo test --test help`), and the man page names every
//! subcommand, each of which has a page of its own (`latgen man --out DIR` writes them all).
//! One test per command: `help::<command>`, `help-layout::<command>` and `man::<command>`.
//! The `docs::` tests check the written documentation: the usage block of the book's page
//! of the command line (`docs/src/reference/cli.md`) and the README's list of commands
//! against the commands, the README's length, the relative links of the README,
//! CONTRIBUTING.md and the book, and the book's table of contents.

#[path = "suite/common/mod.rs"]
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
    let out = Command::new(common::bin())
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

/// `latgen [SUBCOMMAND] --help` is laid out like `-h`, one line per option, as every
/// command's help is: no value or option has a long text that switches clap to its long
/// layout.
fn help_is_short(sub: Option<&str>) {
    let args = |flag| sub.into_iter().chain([flag]).collect::<Vec<&str>>();
    assert_eq!(
        stdout_of(&args("--help")),
        stdout_of(&args("-h")),
        "`--help` of {sub:?} is not its short help"
    );
}

/// `latgen man --out DIR` writes the top-level page and the page of every command it
/// refers to, named as it refers to them, and nothing else.
fn man_out() {
    let tmp = common::scratch();
    let dir = tmp.path().join("man");
    let out = Command::new(common::bin())
        .args(["man", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files: Vec<String> = common::read_tree(&dir)
        .into_keys()
        .map(|p| p.display().to_string())
        .collect();
    let mut want: Vec<String> = subcommands()
        .iter()
        .map(|s| format!("latgen-{}.1", s.get_name()))
        .collect();
    want.push("latgen.1".into());
    want.sort();
    assert_eq!(files, want);
    let top = std::fs::read_to_string(dir.join("latgen.1")).unwrap();
    assert_eq!(
        top,
        top_page(),
        "latgen.1 is not the page `latgen man` prints"
    );
    for sub in subcommands() {
        let name = sub.get_name();
        let page = unroff(&std::fs::read_to_string(dir.join(format!("latgen-{name}.1"))).unwrap());
        assert!(
            page.contains(&format!(".TH latgen-{name} 1")),
            "latgen-{name}.1 is not titled latgen-{name}:\n{page}"
        );
        assert!(
            unroff(&top).contains(&format!("latgen-{name}(1)")),
            "latgen.1 does not refer to latgen-{name}(1)"
        );
    }
}

/// The page of the command line in the book.
const CLI_PAGE: &str = "docs/src/reference/cli.md";

/// The first code block under `## Usage` in the file at `path` (relative to the root).
fn usage_block(path: &str) -> String {
    let text = std::fs::read_to_string(common::root().join(path)).unwrap();
    let block = text
        .split_once("## Usage\n\n```\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .unwrap_or_else(|| panic!("{path} has no usage block"))
        .0;
    block.to_string()
}

/// The book's usage block: one entry per command, each naming every option the command
/// shows in its help (`--color`, which every command that prints diagnostics takes, is
/// said once below the block).
fn cli_page_usage() {
    let block = usage_block(CLI_PAGE);
    for sub in subcommands() {
        let name = sub.get_name();
        // An entry is its first line and the indented lines that go on with it.
        let mut entry = String::new();
        let mut lines = block.lines().skip_while(|l| {
            l.strip_prefix("latgen ")
                .is_none_or(|rest| rest.split_whitespace().next() != Some(name))
        });
        if let Some(first) = lines.next() {
            entry.push_str(first);
            for l in lines.take_while(|l| l.starts_with(' ')) {
                entry.push_str(l);
            }
        }
        assert!(
            !entry.is_empty(),
            "{CLI_PAGE}: the usage block lacks `latgen {name}`"
        );
        for arg in sub.get_arguments() {
            let (Some(long), false) = (arg.get_long(), arg.is_hide_set()) else {
                continue;
            };
            if long == "color" {
                continue;
            }
            let short = arg.get_short().map(|s| format!("-{s} "));
            assert!(
                entry.contains(&format!("--{long}")) || short.is_some_and(|s| entry.contains(&s)),
                "{CLI_PAGE}: the usage of `latgen {name}` lacks --{long}: {entry}"
            );
        }
    }
    let page = std::fs::read_to_string(common::root().join(CLI_PAGE)).unwrap();
    assert!(
        page.contains("`--color`"),
        "{CLI_PAGE} does not document --color"
    );
}

/// The README's usage block names every command.
fn readme_commands() {
    let block = usage_block("README.md");
    for sub in subcommands() {
        let name = sub.get_name();
        let named = block
            .match_indices(&format!("latgen {name}"))
            .any(|(at, m)| {
                block[at + m.len()..]
                    .chars()
                    .next()
                    .is_none_or(|c| !c.is_ascii_alphanumeric() && c != '-')
            });
        assert!(named, "the README's usage block lacks `latgen {name}`");
    }
}

/// The README is the front page: everything longer goes in the book.
fn readme_length() {
    let readme = std::fs::read_to_string(common::root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 200,
        "README.md has {lines} lines, more than 200: move the detail to docs/src/"
    );
}

/// The README, CONTRIBUTING.md and every page of the book, by path from the root.
fn documents() -> Vec<PathBuf> {
    let root = common::root();
    let mut docs = vec![PathBuf::from("README.md"), PathBuf::from("CONTRIBUTING.md")];
    for entry in walkdir::WalkDir::new(root.join("docs/src")).sort_by_file_name() {
        let path = entry.unwrap().into_path();
        if path.extension().is_some_and(|e| e == "md") {
            docs.push(path.strip_prefix(&root).unwrap().to_path_buf());
        }
    }
    docs
}

/// The lines of a Markdown text outside fenced code blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|l| {
            if l.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// The targets of a Markdown text's inline links, `[text](target)`.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    for line in prose(text) {
        for (at, _) in line.match_indices("](") {
            if let Some(end) = line[at + 2..].find(')') {
                targets.push(line[at + 2..at + 2 + end].to_string());
            }
        }
    }
    targets
}

/// The anchors GitHub gives a Markdown text's headings: lowercase, punctuation dropped,
/// spaces made hyphens.
fn anchors(text: &str) -> Vec<String> {
    prose(text)
        .into_iter()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|h| {
            h.trim_start_matches('#')
                .trim()
                .to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
                .map(|c| if c == ' ' { '-' } else { c })
                .collect()
        })
        .collect()
}

/// Every relative link of the README, CONTRIBUTING.md and the book points at a file that
/// exists, and its `#anchor`, if any, at a heading of it.
fn relative_links() {
    let root = common::root();
    for doc in documents() {
        let text = std::fs::read_to_string(root.join(&doc)).unwrap();
        for target in link_targets(&text) {
            if target.starts_with("https://") || target.starts_with("http://") {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let path = if file.is_empty() {
                root.join(&doc)
            } else {
                root.join(doc.parent().unwrap()).join(file)
            };
            assert!(
                path.exists(),
                "{}: the link `{target}` points at no file",
                doc.display()
            );
            if !anchor.is_empty() {
                let linked = std::fs::read_to_string(&path).unwrap();
                assert!(
                    anchors(&linked).iter().any(|a| a == anchor),
                    "{}: the link `{target}` points at no heading",
                    doc.display()
                );
            }
        }
    }
}

/// Every page of the book is in its table of contents, `docs/src/SUMMARY.md`.
fn summary_lists_every_page() {
    let src = common::root().join("docs/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    let listed = link_targets(&summary);
    for doc in documents() {
        let Ok(page) = doc.strip_prefix("docs/src") else {
            continue;
        };
        let page = page.to_str().unwrap();
        assert!(
            page == "SUMMARY.md" || listed.iter().any(|l| l == page),
            "docs/src/SUMMARY.md does not list {page}"
        );
    }
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
        Trial::test("help-layout::latgen", || {
            help_is_short(None);
            Ok(())
        }),
        Trial::test("man::out", || {
            man_out();
            Ok(())
        }),
        Trial::test("docs::cli-usage", || {
            cli_page_usage();
            Ok(())
        }),
        Trial::test("docs::readme-commands", || {
            readme_commands();
            Ok(())
        }),
        Trial::test("docs::readme-length", || {
            readme_length();
            Ok(())
        }),
        Trial::test("docs::relative-links", || {
            relative_links();
            Ok(())
        }),
        Trial::test("docs::summary", || {
            summary_lists_every_page();
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
        trials.push(Trial::test(format!("help-layout::{name}"), {
            let name = name.clone();
            move || {
                help_is_short(Some(&name));
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
