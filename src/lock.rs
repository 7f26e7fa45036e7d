//! `latgen.lock`: which shared group each path-routed app is in. Committed, so that
//! assignments stay put across runs and machines: adding an app never moves another.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_saphyr::Spanned;

use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::model::Pos;

pub const LOCK_VERSION: u32 = 1;

#[derive(Debug, Default, Clone, PartialEq)]
pub struct Lock {
    /// App name → group number, with the line it is on.
    pub apps: BTreeMap<String, (u32, Pos)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LockFile {
    version: Spanned<u32>,
    #[serde(default)]
    apps: BTreeMap<String, Spanned<u32>>,
}

pub fn parse(file: &Path, text: &str, diags: &mut Diagnostics) -> Option<Lock> {
    let raw: LockFile = crate::load::parse_yaml(file, text, &["version", "apps"], diags)?;
    if raw.version.value != LOCK_VERSION {
        diags.push(
            Diagnostic::error(
                "invalid-lock",
                format!(
                    "lock file version {} is not supported (this latgen writes version {LOCK_VERSION})",
                    raw.version.value
                ),
            )
            .at(Span::new(file, Pos::of(&raw.version).line, Pos::of(&raw.version).column))
            .help("use the latgen version that wrote it, or delete the file to assign groups anew"),
        );
        return None;
    }
    let mut lock = Lock::default();
    for (name, group) in raw.apps {
        let pos = Pos::of(&group);
        if group.value == 0 {
            diags.push(
                Diagnostic::error(
                    "invalid-lock",
                    format!("app `{name}` is in group 0; groups start at 1"),
                )
                .at(Span::new(file, pos.line, pos.column))
                .help("remove the line so that render places the app anew"),
            );
            continue;
        }
        lock.apps.insert(name, (group.value, pos));
    }
    Some(lock)
}

/// The lock file's text: sorted, one app per line, so a change is a one-line diff.
pub fn serialize(assignments: &BTreeMap<String, u32>) -> String {
    let mut out = String::from(
        "# latgen.lock: the shared Lattice group of each path-routed app.\n\
         # Written by `latgen render`; commit it with apps/. Groups never change on their own:\n\
         # adding an app never moves another.\n",
    );
    out.push_str(&format!("version: {LOCK_VERSION}\n"));
    if assignments.is_empty() {
        out.push_str("apps: {}\n");
        return out;
    }
    out.push_str("apps:\n");
    for (name, group) in assignments {
        // Names are validated DNS-1123 labels, so they need no quoting.
        out.push_str(&format!("  {name}: {group}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let mut a = BTreeMap::new();
        a.insert("shop".to_string(), 2);
        a.insert("cart".to_string(), 1);
        let text = serialize(&a);
        let mut diags = Diagnostics::new();
        let lock = parse(Path::new("latgen.lock"), &text, &mut diags).unwrap();
        assert!(diags.is_empty());
        let back: BTreeMap<String, u32> = lock.apps.iter().map(|(k, v)| (k.clone(), v.0)).collect();
        assert_eq!(back, a);
        assert!(text.find("cart").unwrap() < text.find("shop").unwrap());
    }

    #[test]
    fn refuses_an_unknown_version() {
        let mut diags = Diagnostics::new();
        assert!(parse(Path::new("l"), "version: 9\napps: {}\n", &mut diags).is_none());
        assert_eq!(diags.iter().next().unwrap().code, "invalid-lock");
    }
}
