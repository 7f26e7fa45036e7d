//! `latgen import --env NAME` keeps every declaration's `environments:` true to the
//! exports imported so far. The declarations are shared, so without it an app that one
//! environment runs and another does not would be rendered in both:
//! - an app declared already that this environment's export lacks no longer runs here (its
//!   list becomes the project's other environments, or loses this one);
//! - an app declared for other environments that this export has runs here too;
//! - a new app runs only here, unless the project declared no app before (the first
//!   environment's import, whose apps every environment runs until its own import says
//!   otherwise).
//!
//! Each change is an edit of the `environments:` line alone, so comments and the rest of
//! the declaration stay as written.

use std::path::PathBuf;

use crate::import::Imported;
use crate::input::Loaded;

/// What an environment's import changes in the declarations' `environments:`.
#[derive(Default)]
pub(crate) struct Membership {
    /// Declarations to rewrite: the file and its new text.
    pub edits: Vec<(PathBuf, String)>,
    /// Apps this environment no longer runs, as its export lacks them.
    pub left: Vec<String>,
    /// Apps declared for other environments that this one runs too.
    pub joined: Vec<String>,
    /// Apps declared for this environment alone that its export lacks: left as they are,
    /// for a person to remove.
    pub stale: Vec<String>,
    /// The `environments:` a new declaration gets, if any.
    pub new_apps: Option<Vec<String>>,
}

/// The membership changes of importing `imported` into environment `env`.
pub(crate) fn membership(loaded: &Loaded, imported: &Imported, env: &str) -> Membership {
    let all = &loaded.environments;
    let exported = |name: &str| imported.apps.iter().any(|a| a.name == name);
    let mut out = Membership {
        new_apps: (!loaded.decls.is_empty()).then(|| vec![env.to_string()]),
        ..Membership::default()
    };
    for d in &loaded.decls {
        let name = (d.decl.name.as_ref()).map_or(d.stem.clone(), |n| n.value.clone());
        let listed: Option<Vec<String>> = (d.decl.environments.as_ref())
            .map(|l| l.value.iter().map(|e| e.value.clone()).collect());
        let runs_here = listed.as_ref().is_none_or(|l| l.contains(&env.to_string()));
        let new_list: Vec<String> = match (exported(&name), runs_here) {
            (true, false) => {
                out.joined.push(name);
                let mut l = listed.unwrap_or_default();
                l.push(env.to_string());
                l
            }
            (false, true) => {
                let l: Vec<String> = (listed.unwrap_or_else(|| all.clone()).into_iter())
                    .filter(|e| e != env)
                    .collect();
                if l.is_empty() {
                    out.stale.push(name);
                    continue;
                }
                out.left.push(name);
                l
            }
            _ => continue,
        };
        // In the project's order of environments, each once.
        let ordered: Vec<String> = (all.iter())
            .filter(|e| new_list.contains(e))
            .cloned()
            .collect();
        if let Ok(text) = std::fs::read_to_string(&d.file) {
            out.edits
                .push((d.file.clone(), with_environments(&text, &ordered)));
        }
    }
    out
}

/// `text` (a declaration) with its top-level `environments:` set to `envs`: the line (and
/// a block list's items under it) replaced, or one added at the end.
pub(crate) fn with_environments(text: &str, envs: &[String]) -> String {
    let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let line = format!("environments: [{}]{eol}", envs.join(", "));
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let Some(i) = lines.iter().position(|l| l.starts_with("environments:")) else {
        let mut out = text.to_string();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push_str(eol);
        }
        out.push_str(&line);
        return out;
    };
    let value = lines[i]["environments:".len()..].trim();
    let value = value.split(" #").next().unwrap_or_default().trim();
    let mut end = i + 1;
    if value.is_empty() {
        // A block list: its items, indented or at the key's column, and blank lines among them.
        while end < lines.len() && {
            let l = lines[end];
            l.starts_with([' ', '\t', '-']) || l.trim().is_empty()
        } {
            end += 1;
        }
    } else if value.starts_with('[') && !value.contains(']') {
        // A flow list over several lines.
        while end < lines.len() && !lines[end - 1].contains(']') {
            end += 1;
        }
    }
    let mut out: String = lines[..i].concat();
    out.push_str(&line);
    out.push_str(&lines[end..].concat());
    out
}

#[cfg(test)]
mod tests {
    use super::with_environments;

    fn envs(e: &[&str]) -> Vec<String> {
        e.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_declaration_without_the_key_gets_it_at_the_end() {
        let text = "namespace: web\npaths: [/shop]\n";
        assert_eq!(
            with_environments(text, &envs(&["staging"])),
            "namespace: web\npaths: [/shop]\nenvironments: [staging]\n"
        );
    }

    #[test]
    fn a_flow_list_is_replaced_in_place() {
        let text = "namespace: web\nenvironments: [staging]  # not yet live\npaths: [/shop]\n";
        assert_eq!(
            with_environments(text, &envs(&["staging", "production"])),
            "namespace: web\nenvironments: [staging, production]\npaths: [/shop]\n"
        );
    }

    #[test]
    fn a_block_list_is_replaced_with_its_items_and_crlf_stays() {
        let text = "namespace: web\r\nenvironments:\r\n  - staging\r\n  - production\r\npaths: [/shop]\r\n";
        assert_eq!(
            with_environments(text, &envs(&["production"])),
            "namespace: web\r\nenvironments: [production]\r\npaths: [/shop]\r\n"
        );
    }
}
